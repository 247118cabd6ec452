/* conv_taps.c — Conv per tap (op_conv.c chooses): the taps accumulated,
 * over the stride phases of the input (window.c), and over flattened
 * rows for depthwise convolutions of short rows. */
#include "importer_impl.h"

/* A constant weight w5 [1, G, M/G, C/G, k...] as one constant with its taps
 * first, [k..., 1, G, M/G, C/G], read back as w5's shape: every tap is then
 * a contiguous slice of one buffer and the blocked kernel reads all taps'
 * weights from one pointer at constant offsets. Sliced from w5 itself, each
 * tap became a weight of its own (ir_rewrite_weight_layout), one pointer
 * per tap: gcc kept the 9 x rows tap addresses on the stack and reloaded
 * one before every broadcast (the DBNet-like detector's 3x3/2 layers).
 * w5 unchanged when it is not a constant. */
static ir_ref taps_first(ir_graph *g, ir_ref w5, const imp_window *w) {
  /* not for a few taps: the audio front end's 3-tap layers were 4 % (AVX2
   * 7 %) slower with it (idle machine, CPU-time minima) */
  if (ir_failed(g) || !ir_is_const(g, w5) || imp_tap_count(w) <= 4) return w5;
  const ir_node *wn = ir_node_get(g, w5);
  ir_shape ws = wn->shape, ts = {.rank = ws.rank};
  ir_dtype dt = wn->dtype;
  int perm[IR_MAX_RANK], back[IR_MAX_RANK];
  for (int i = 0; i < ws.rank; i++) {
    perm[i] = i < w->nsp ? 4 + i : i - w->nsp;
    back[perm[i]] = i;
    ts.d[i] = ws.d[perm[i]];
  }
  void *data;
  if (ir_eval(g, ir_move(g, ir_view_permute(g, w5, perm)), &data)) return IR_NONE;
  return ir_view_permute(g, ir_const_take(g, "conv_taps", dt, ts, data), back);
}

/* The per-tap form: the input window [N, G, 1, C/G, O...] times the weight
 * tap [1, G, M/G, C/G, 1...] (wt reshaped to `wr`), accumulated over the
 * taps, then summed over C/G. */
ir_ref imp_conv_taps(ir_graph *g, ir_ref x5, ir_ref wt, const imp_window *w, ir_shape wr) {
  imp_window_input ci = ir_failed(g) ? (imp_window_input){.ph = IR_NONE} : imp_window_phases(g, x5, w, 0.0);
  ir_ref xp = ci.ph == IR_NONE ? imp_pad_spatial(g, x5, w, 0.0) : IR_NONE;
  ir_ref w5 = taps_first(g, ir_view_reshape(g, wt, wr), w);
  /* Without a channel sum (depthwise) each output is a chain of one FMA per
   * tap, latency-bound: 4 interleaved chains, added at the end (the
   * MobileNetV3-small-like net of make_cnn.py: 2.6 -> 2.25 ms). With a
   * channel sum the rows of a register block are independent chains already. */
  ir_ref acc[4] = {IR_NONE, IR_NONE, IR_NONE, IR_NONE};
  int chains = wr.d[3] == 1 && imp_tap_count(w) > 4 ? 4 : 1;
  int64_t kidx[IMP_MAX_SP] = {0};
  for (int64_t t = 0; t < imp_tap_count(w) && !ir_failed(g); t++) {
    imp_tap_index(w, t, kidx);
    int64_t start[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK];
    for (int i = 0; i < wr.rank; i++) step[i] = 1, len[i] = i < 4 ? wr.d[i] : 1;
    for (int i = 0; i < w->nsp; i++) start[4 + i] = kidx[i];
    ir_ref wtap = ir_view_slice(g, w5, start, step, len);
    ir_ref prod = ir_binary(g, IR_MUL, imp_window_tap(g, &ci, xp, w, kidx), wtap);
    ir_ref *a = &acc[t % chains];
    *a = *a == IR_NONE ? prod : ir_binary(g, IR_ADD, *a, prod);
  }
  for (int j = 1; j < chains; j++) acc[0] = ir_binary(g, IR_ADD, acc[0], acc[j]);
  return ir_reduce(g, IR_ADD, acc[0], 1u << 3);
}

/* The per-tap form over flattened rows, for depthwise convolutions (no
 * channel sum) over short 2-D rows: each phase plane of the padded copy
 * read as one axis, p = oh * Lq + ow (Lq the phase's row length), so tap
 * (kh, kw) is the unit-stride run at dh * Lq + dw of its phase and every
 * loop is as long as the whole map, not one row: a 7- or 14-wide row came
 * out of gcc as 4-wide and scalar code. The Lq - out_w wrapped columns of
 * each row are computed and never read (at most as many as the outputs),
 * zero rows added to the padded copy keep the reads inside it, and the
 * output is a strided view of the wide result. IR_NONE when it does not
 * apply. */
ir_ref imp_conv_taps_wide(ir_graph *g, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w0,
                          ir_shape wr) {
  /* shapes copied: node pointers move as the graph grows */
  const ir_shape xs = ir_node_get(g, x5)->shape, *s = &xs;
  /* fewer than 8 channels (a test's single map): too little work to pay
   * for the epilogue's kernel of its own */
  if (w0->nsp != 2 || wr.d[3] != 1 || w0->out[1] >= 64 || !ir_shape_is_static(s) || s->d[1] < 8) return IR_NONE;
  imp_window w = *w0;
  int64_t lq[2], lh[2], dmax[2];
  for (int i = 0; i < 2; i++) { /* small: every extent is static and already checked */
    int64_t lp = w.in[i] + w.pb[i] + w.pe[i] + w.extra[i];
    lq[i] = (lp + w.s[i] - 1) / w.s[i], dmax[i] = (w.k[i] - 1) * w.d[i] / w.s[i];
  }
  int64_t cols = (w.out[0] - 1) * lq[1] + w.out[1], cols16 = (cols + 15) / 16 * 16;
  if (cols16 > 2 * w.out[0] * w.out[1]) return IR_NONE;
  /* rows of the phase plane the furthest tap reads, past the ones there are */
  int64_t rows = (dmax[0] * lq[1] + dmax[1] + cols16 + lq[1] - 1) / lq[1];
  if (rows > lq[0]) w.extra[0] += (rows - lq[0]) * w.s[0];
  w.extra[0] += w.s[0] == 1 && !w.pb[0] && !w.pe[0] && !w.extra[0] && !w.pb[1] && !w.pe[1] && !w.extra[1];
  imp_window_input ci = imp_window_phases(g, x5, &w, 0.0);
  if (ci.ph == IR_NONE || ir_failed(g)) return IR_NONE;
  const ir_shape ps = ir_node_get(g, ci.ph)->shape;
  lh[0] = ps.d[6], lh[1] = ps.d[7];
  ir_shape fs = {.rank = 7, .d = {s->d[0], s->d[1], 1, 1, ps.d[4], ps.d[5], lh[0] * lh[1]}};
  ir_ref flat = ir_view_reshape(g, ci.ph, fs), w5 = ir_view_reshape(g, wt, wr);
  ir_ref acc[4] = {IR_NONE, IR_NONE, IR_NONE, IR_NONE};
  int chains = imp_tap_count(&w) > 4 ? 4 : 1;
  int64_t kidx[IMP_MAX_SP] = {0};
  ir_shape ts = {.rank = 5, .d = {s->d[0], s->d[1], 1, 1, cols16}};
  for (int64_t t = 0; t < imp_tap_count(&w) && !ir_failed(g); t++) {
    imp_tap_index(&w, t, kidx);
    int64_t start[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK];
    for (int i = 0; i < 7; i++) step[i] = 1, len[i] = fs.d[i];
    int64_t th = kidx[0] * w.d[0], tw = kidx[1] * w.d[1];
    start[4] = th % w.s[0], start[5] = tw % w.s[1], len[4] = len[5] = 1;
    start[6] = th / w.s[0] * lh[1] + tw / w.s[1], len[6] = cols16;
    ir_ref xt = ir_view_reshape(g, ir_view_slice(g, flat, start, step, len), ts);
    int64_t ws0[IR_MAX_RANK] = {0}, wst[IR_MAX_RANK], wl[IR_MAX_RANK];
    for (int i = 0; i < wr.rank; i++) wst[i] = 1, wl[i] = i < 4 ? wr.d[i] : 1;
    ws0[4] = kidx[0], ws0[5] = kidx[1];
    ir_shape w1 = {.rank = 5, .d = {1, wr.d[1], wr.d[2], 1, 1}};
    ir_ref wtap = ir_view_reshape(g, ir_view_slice(g, w5, ws0, wst, wl), w1);
    ir_ref prod = ir_binary(g, IR_MUL, xt, wtap);
    ir_ref *a = &acc[t % chains];
    *a = *a == IR_NONE ? prod : ir_binary(g, IR_ADD, *a, prod);
  }
  for (int j = 1; j < chains; j++) acc[0] = ir_binary(g, IR_ADD, acc[0], acc[j]);
  acc[0] = imp_conv_bias_wide(g, acc[0], b);
  if (ir_failed(g)) return IR_NONE;
  /* [N, M, cols16] read back as [N, M, out_w, out_h] (strides 1, Lq), then transposed */
  int64_t one = 1, lqw = lh[1];
  ir_shape ys = {.rank = 3, .d = {s->d[0], s->d[1] * wr.d[2], cols16}};
  int perm[4] = {0, 1, 3, 2};
  ir_ref y = ir_view_window(g, ir_view_reshape(g, acc[0], ys), 1, &w.out[1], &lqw, &one, &w.out[0]);
  return ir_view_permute(g, y, perm);
}
