/* op_conv.c — Conv. Convolutions with channels to sum copy the padded
 * input once and take the register-blocked matmul form (scheduler/gemm.c):
 * per tap over an unmasked copy, windowed (a sum over c, kh, kw inside the
 * block), or as one product with an im2col copy of the windows
 * (ir_view_window). Depthwise ones combine taps (window.c). */
#include "importer_impl.h"

#include <string.h>

/* Adds the bias `*b` (M values; none when b is NULL) to `y` = [N, G, M/G,
 * 1..., positions] and takes it (*b = IR_NONE). The wide forms add it
 * before their output view: an activation after it then runs over the
 * wide rows too (ir/sink_region.c). */
static ir_ref conv_bias_wide(ir_graph *g, ir_ref y, ir_ref *b) {
  if (!b || *b == IR_NONE || y == IR_NONE || ir_failed(g)) return y;
  const ir_shape *ys = &ir_node_get(g, y)->shape;
  ir_shape bs = {.rank = ys->rank};
  for (int i = 0; i < bs.rank; i++) bs.d[i] = i == 1 || i == 2 ? ys->d[i] : 1;
  y = ir_binary(g, IR_ADD, y, ir_view_reshape(g, *b, bs));
  *b = IR_NONE;
  return y;
}

/* The convolution as one matrix product per group, W[M/G, C/G * taps] times
 * the input's columns [C/G * taps, O...] flattened: a 1x1 convolution
 * without stride or padding reads the input as it is; otherwise the windows
 * of the padded input are copied into those columns (im2col). Taken where
 * the windowed forms block badly: many taps for the channels they sum (a
 * 7x7 over 3 channels reads 49 taps per step of a 3-long sum, a chain of
 * 49 dependent FMAs per row; strided along long rows, conv_row_unfold
 * below), or short output rows with a stride (the block's columns are
 * then the whole map, not one row of it). */
static ir_ref conv_matmul(ir_graph *g, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w, int64_t M, int64_t vf) {
  const ir_shape *s = &ir_node_get(g, x5)->shape;
  int64_t N = s->d[0], G = s->d[1], cg = s->d[3], taps = imp_tap_count(w), cols = 1;
  for (int i = 0; i < w->nsp; i++) cols *= w->out[i];
  bool copy = taps > 1 || cols != ir_shape_numel(s) / (N * G * cg);
  /* The output positions as one axis for short rows, and for a 1x1
   * convolution that reads its input as it is when its rows are not whole
   * multiples of 32 columns (then the columns are: a 56-wide row was one
   * register block of 32 and one of 24, the 24-wide ones 51 % of the time
   * for 43 % of the columns; 64 -> 256 at 56x56, AVX-512: 0.68 -> 0.56 ms,
   * 1 thread, CPU time, loaded machine). The bias is added before the
   * output's reshape, and ir/sink_region.c moves an activation and a
   * residual Add there too, so they stay the kernel's epilogue (a sum with
   * a view, a Resize's, stays outside: a pass of its own). An im2col copy
   * too when its rows are not whole blocks and its columns few (at most
   * 2048: 8 KB apart): the DBNet-like 3x3/2 48 -> 96 at 40x40, 32 + 8
   * columns per row, 1562 -> 1207 k TSC cycles (AVX2 2647 -> 2501); at
   * 80x80 (6400 columns) the copy and the kernel were slower flat (Zen 5,
   * 1 thread, per-kernel rdtsc minima, loaded machine). */
  int64_t ow = w->out[w->nsp - 1];
  bool flat = ow < 32 || (ow % 32 && (!copy || cols <= 2048));
  /* Rows of several whole blocks of 32 (2-D im2col), on 16-float vectors:
   * the copy stores each block's columns together, [O0.., ow / 32, C/G,
   * k..., 32], so a block reads one contiguous run, not C/G * taps rows a
   * row apart (the DBNet-like 3x3/2, 16 -> 24 at 160x160: 2927 -> 2155 k
   * TSC cycles; AVX2's 6 x 16 blocks 5602 -> 8087, so not there; Zen 5,
   * 1 thread, per-kernel rdtsc minima, loaded machine) */
  int64_t strips = copy && w->nsp == 2 && vf >= 16 && !(ow % 32) && ir_node_get(g, x5)->dtype == IR_F32 ? ow / 32 : 1;
  ir_ref xc = x5;
  if (copy) {
    ir_ref win = ir_view_window(g, imp_pad_spatial(g, x5, w, 0.0), w->nsp, w->k, w->s, w->d, w->out);
    if (flat || w->nsp < 2) xc = ir_move(g, win);
    else {
      /* Columns stored [O0.., C/G, k..., O_last]: a register block (one
       * output row, 32 positions) then reads its C/G * taps rows a row
       * length apart inside one slab, not a whole map apart (the 7x7 stem's
       * columns: 147 rows 50 KB apart, a page each; 2.35 -> 2.08 ms,
       * 1 thread, CPU time, loaded machine). With strips, [O0.., strip,
       * C/G, k..., 32]: a block's columns one contiguous run. */
      int perm[IR_MAX_RANK], inv[IR_MAX_RANK], r = 0, rank = 4 + 2 * w->nsp + (strips > 1);
      if (strips > 1) {
        ir_shape ss = ir_node_get(g, win)->shape;
        ss.d[rank - 2] = strips, ss.d[rank - 1] = 32, ss.rank = rank;
        win = ir_view_reshape(g, win, ss);
      }
      for (int i = 0; i < 3; i++) perm[r++] = i;
      for (int i = 0; i + 1 < w->nsp; i++) perm[r++] = 4 + w->nsp + i;
      if (strips > 1) perm[r++] = rank - 2;
      for (int i = 3; i < 4 + w->nsp; i++) perm[r++] = i;
      perm[r++] = rank - 1;
      for (int i = 0; i < rank; i++) inv[perm[i]] = i;
      xc = ir_view_permute(g, ir_move(g, ir_view_permute(g, win, perm)), inv);
    }
  }
  ir_shape xs = {.rank = flat ? 5 : 4 + w->nsp + (strips > 1), .d = {N, G, 1, cg * taps, cols}};
  ir_shape ws = {.rank = xs.rank, .d = {1, G, M / G, cg * taps, 1}};
  for (int i = 0; i < w->nsp && !flat; i++) xs.d[4 + i] = w->out[i], ws.d[4 + i] = 1;
  if (strips > 1 && !flat) xs.d[3 + w->nsp] = strips, xs.d[4 + w->nsp] = 32, ws.d[4 + w->nsp] = 1;
  ir_ref xm = ir_view_reshape(g, xc, xs), wm = ir_view_reshape(g, wt, ws);
  ir_ref y = ir_reduce(g, IR_ADD, ir_binary(g, IR_MUL, xm, wm), 1u << 3);
  return flat ? conv_bias_wide(g, y, b) : y;
}

/* A 2-D convolution strided along its rows with many taps over few
 * channels (the 7x7/2 stem over RGB): the padded input's rows unfolded
 * along the row only, U [N, G, 1, C/G, Hp, k1, O1] with U[.., h, kw, ow] =
 * xp[.., h, ow * s1 + kw * d1], copied once; the product then reads U
 * through a window across rows (kh, oh: row oh * s0 + kh * d0) and sums
 * over (c, kh, kw) like the windowed forms, each step a unit-stride run
 * of an output row. im2col's columns repeat each unfolded row for every
 * output row whose window covers it (k0 / s0 times: the stem's 7.4 MB
 * against 2.2 MB). */
static ir_ref conv_row_unfold(ir_graph *g, ir_ref x5, ir_ref wt, const imp_window *w, ir_shape wr) {
  ir_ref xp = imp_pad_spatial(g, x5, w, 0.0);
  /* stored rows outermost, [N, G, 1, Hp, C/G, k1, O1]: the copy's
   * threaded loop then splits the rows as the product's does (each core
   * reads what it wrote), and an output row's window is one run */
  int rows_first[7] = {0, 1, 2, 4, 3, 5, 6};
  ir_ref u = ir_view_window(g, xp, 1, &w->k[1], &w->s[1], &w->d[1], &w->out[1]);
  u = ir_view_permute(g, ir_move(g, ir_view_permute(g, u, rows_first)), rows_first);
  int hp_last[7] = {0, 1, 2, 3, 5, 6, 4}; /* [N, G, 1, C/G, k1, O1, Hp] */
  int taps_first8[8] = {0, 1, 2, 3, 6, 4, 7, 5}; /* [.., k1, O1, k0, O0] -> [.., k0, k1, O0, O1] */
  ir_ref xw = ir_view_window(g, ir_view_permute(g, u, hp_last), 1, &w->k[0], &w->s[0], &w->d[0], &w->out[0]);
  xw = ir_view_permute(g, xw, taps_first8);
  ir_shape ws = {.rank = 8};
  for (int i = 0; i < 6; i++) ws.d[i] = wr.d[i];
  ws.d[6] = ws.d[7] = 1;
  return ir_reduce(g, IR_ADD, ir_binary(g, IR_MUL, xw, ir_view_reshape(g, wt, ws)), 7u << 3);
}

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
static ir_ref conv_taps(ir_graph *g, ir_ref x5, ir_ref wt, const imp_window *w, ir_shape wr) {
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
static ir_ref conv_taps_wide(ir_graph *g, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w0, ir_shape wr) {
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
  acc[0] = conv_bias_wide(g, acc[0], b);
  if (ir_failed(g)) return IR_NONE;
  /* [N, M, cols16] read back as [N, M, out_w, out_h] (strides 1, Lq), then transposed */
  int64_t one = 1, lqw = lh[1];
  ir_shape ys = {.rank = 3, .d = {s->d[0], s->d[1] * wr.d[2], cols16}};
  int perm[4] = {0, 1, 3, 2};
  ir_ref y = ir_view_window(g, ir_view_reshape(g, acc[0], ys), 1, &w.out[1], &lqw, &one, &w.out[0]);
  return ir_view_permute(g, y, perm);
}

/* The windowed forms: the product of a window view of the padded input
 * [N, G, 1, C/G, k..., positions] (a copy when padded, no im2col) and the
 * weight [1, G, M/G, C/G, k..., 1...], summed over the channels and the taps
 * at once. The register-blocked kernel (scheduler/gemm.c) loops over c, kh,
 * kw around its block, so each step is one vector load per nr columns and
 * one broadcast per row; the per-tap form kept nine products in one
 * expression, their inputs and nine weight pointers live across the rows
 * (3x3, 256 -> 256 at 3 x 80: accumulators and pointers spilled).
 *
 * Wide (2-D, stride 1): the positions are the padded rows flattened,
 * p = oh * Wp + ow, with the Wp - out_w columns of each row that wrap
 * around computed and never read: tap (kh, kw) is then the unit-stride
 * window at kh * Wp + kw of the flat padded input, so a block of columns
 * spans output rows (no partial tile per row, and short rows block as well
 * as long ones) and the output is a strided view of the wide result. Rows:
 * the output row alone is the columns (stride 1 along it, any stride across
 * rows). */
typedef enum { CONV_TAPS, CONV_MATMUL, CONV_WIDE, CONV_ROWS } conv_form;

static conv_form conv_choose(const imp_window *w, const ir_shape *xs, int64_t cg, int64_t mg) {
  int64_t taps = imp_tap_count(w);
  bool plain = true, unit = true;
  for (int i = 0; i < w->nsp; i++) {
    plain &= w->k[i] == 1 && w->s[i] == 1 && !w->pb[i] && !w->pe[i] && !w->extra[i];
    unit &= w->s[i] == 1;
  }
  if (mg < 8 || 4 + 2 * w->nsp > IR_MAX_RANK || !ir_shape_is_static(xs)) return CONV_TAPS;
  if (plain) return CONV_MATMUL;
  int64_t wp = w->in[w->nsp - 1] + w->pb[w->nsp - 1] + w->pe[w->nsp - 1];
  /* the wrapped columns are work thrown away: at most 1/4 of it */
  if (w->nsp == 2 && unit && cg >= 8 && taps <= 9 && 4 * (wp - w->out[1]) <= wp) return CONV_WIDE;
  /* a strided stem over few channels (3x3/2 over RGB): the stride phases
   * (one copy of the input) beat im2col's copy of 9 taps x 3 channels
   * (MobileNetV3-small's stem at 224x224: 0.175 -> 0.14 ms) */
  if (cg < 8 && taps <= 9 && w->out[w->nsp - 1] >= 32 && w->s[w->nsp - 1] > 1) return CONV_TAPS;
  if (taps > 9 || cg < 8 || w->out[w->nsp - 1] < 32) return CONV_MATMUL;
  /* 2-D and strided along the row: im2col's one matrix product beat the
   * stride phases' nine column vectors per step (CRNN's 3x3/2, 32 -> 64
   * at 12 x 80: 680 -> 405 k TSC cycles; the DBNet-like net 25.6 -> 24.8
   * ms; Zen 5, 1 thread, per-kernel rdtsc and CPU-time minima, loaded) */
  if (w->nsp == 2 && w->s[1] > 1) return CONV_MATMUL;
  return w->s[w->nsp - 1] == 1 ? CONV_ROWS : CONV_TAPS;
}

static int64_t round32(int64_t v) {
  return (v + 31) / 32 * 32;
}

/* The rows form's columns: a whole number of 32, or, on a target of
 * 16-float vectors (32 registers), a row of at most 5 vectors rounded to
 * one vector, which the scheduler takes as one block across (an 80-wide
 * row is 80 columns, not 96: 1/6 of the work was columns never read) */
static int64_t round_row(int64_t v, int64_t vf) {
  int64_t r = (v + vf - 1) / vf * vf;
  return vf >= 16 && r <= 5 * vf ? r : round32(v);
}

/* The wide form's columns, `cols` rounded up to whole register blocks (a
 * partial block came out as 16 + 8 + 4 + 1 wide vector code per row: 3x3,
 * 512 -> 512 at 7x7, 61 columns, 29 of them at a fraction of the speed).
 * With 16-float vectors and 32 registers (AVX-512) the scheduler takes, of
 * the blocks of 2, 3 and 4 vectors across and 3/4 of the registers in
 * accumulators (at most 12 rows) whose columns are whole, the one with the
 * fewest rows computed for the M rows (scheduler/gemm.c, wide_vectors):
 * the columns are rounded for the block that computes the least in all,
 * columns x rows (3x3, 128 -> 128 at 28x28, 811 columns: 816 for 8 x 48
 * against 832 for 12 x 32 or 6 x 64 and 132 rows; 16 -> 16 channels, as
 * the DBNet-like net's at 320x320: a multiple of 96 for 8 x 48, no padded
 * row, where 12 x 32 or 6 x 64 took 12 + 4 or 6 + 6 + 4). Else a multiple
 * of 32, which every other target's block width (8, 16, 32) divides.
 * `products` (if not NULL): columns x rows of that block, -1 when not
 * counted (other targets). */
static int64_t wide_cols(int64_t cols, int64_t M, int64_t vf, int regs, int64_t *products) {
  int64_t best = -1, best_work = 0;
  if (products) *products = -1; /* not counted */
  if (vf < 16 || regs < 32) return round32(cols);
  for (int64_t nv = 2; nv <= 4; nv++) {
    int64_t nr = nv * vf, c = (cols + nr - 1) / nr * nr, mr = regs * 3 / 4 / nv, work;
    mr = mr > 12 ? 12 : mr > M ? M : mr;
    if (mr < 1 || ir_mul_ov(c, (M + mr - 1) / mr * mr, &work)) continue;
    if (best < 0 || work < best_work) best = c, best_work = work;
  }
  if (best < 0) return round32(cols);
  if (products) *products = best_work;
  return best;
}

/* The right padding the wide form's rows leave out: all of it when it is
 * no wider than the left one (the next row's left padding serves), so
 * the row stride is in + pb + pe - shared_pad (conv_window). */
static int64_t shared_pad(const imp_window *w) {
  int last = w->nsp - 1;
  return w->pe[last] <= w->pb[last] && !w->extra[last] ? w->pe[last] : 0;
}

/* The wide form's row stride for window w. */
static int64_t wide_stride(const imp_window *w) {
  int last = w->nsp - 1;
  return w->in[last] + w->pb[last] + w->pe[last] - shared_pad(w);
}

/* The wide form's products for window w, columns x rows computed
 * (conv_window's count; -1 when not counted). */
static int64_t wide_products(const imp_window *w, int64_t M, int64_t vf, int regs) {
  int64_t products;
  wide_cols((w->out[0] - 1) * wide_stride(w) + w->out[w->nsp - 1], M, vf, regs, &products);
  return products;
}

/* The extra columns are never read. Their reads stay inside the padded
 * copy: zero rows (wide) or columns (rows form) are added at its end. The
 * wide form's padded rows share their padding when the right one is no
 * wider than the left (3x3, pads 1): the row stride is W + left pad, and a
 * tap past a row's end reads the next row's left padding (zeros, the last
 * row a zero row added below), so each row computes out_w + 1 columns, not
 * out_w + 2 (3x3, 128 -> 128 at 28x28: 811 columns, not 838). */
static ir_ref conv_window(ir_graph *g, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w0, ir_shape wr,
                          bool wide, int64_t vf, int regs) {
  imp_window w = *w0;
  int last = w.nsp - 1;
  int64_t drop = wide ? shared_pad(&w) : 0;
  w.pe[last] -= drop;
  int64_t one = 1, wp = w.in[last] + w.pb[last] + w.pe[last];
  int64_t cols = (w.out[0] - 1) * wp + w.out[last], cols32 = wide ? wide_cols(cols, wr.d[2], vf, regs, NULL) : round32(cols);
  if (wide)
    w.pe[0] += (cols32 - cols + drop + wp - 1) / wp;
  else
    w.pe[last] += round_row(w.out[last], vf) - w.out[last], w.out[last] = round_row(w.out[last], vf);
  ir_ref xp = imp_pad_spatial(g, x5, &w, 0.0), xw;
  ir_shape ws = {.rank = 4 + 2 * w.nsp};
  for (int i = 0; i < 4 + w.nsp; i++) ws.d[i] = wr.d[i];
  for (int i = 0; i < w.nsp; i++) ws.d[4 + w.nsp + i] = 1;
  const ir_shape xs5 = ir_node_get(g, x5)->shape, *s = &xs5; /* a copy: the graph grows below */
  if (wide) {
    int64_t hp = w.in[0] + w.pb[0] + w.pe[0], dh = w.d[0] * wp, rows = (hp - (w.k[0] - 1) * w.d[0]) * wp;
    ir_shape fs = {.rank = 5, .d = {s->d[0], s->d[1], 1, s->d[3], hp * wp}};
    if (ir_node_get(g, xp)->op == IR_VIEW && ir_node_get(g, xp)->view.masked) xp = ir_move(g, xp);
    xw = ir_view_window(g, ir_view_reshape(g, xp, fs), 1, &w.k[0], &one, &dh, &rows);
    xw = ir_view_window(g, xw, 1, &w.k[1], &one, &w.d[1], &cols32);
    ws.rank = 7, ws.d[6] = 1;
  } else {
    xw = ir_view_window(g, xp, w.nsp, w.k, w.s, w.d, w.out);
  }
  unsigned axes = 0;
  for (int i = 3; i < 4 + w.nsp; i++) axes |= 1u << i;
  ir_ref y = ir_reduce(g, IR_ADD, ir_binary(g, IR_MUL, xw, ir_view_reshape(g, wt, ws)), axes);
  if (ir_failed(g)) return IR_NONE;
  if (!wide) { /* the columns past out_w dropped */
    const ir_shape *ys = &ir_node_get(g, y)->shape;
    int64_t start[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK];
    for (int i = 0; i < ys->rank; i++) step[i] = 1, len[i] = ys->d[i];
    len[ys->rank - 1] = w0->out[last];
    return ir_view_slice(g, y, start, step, len);
  }
  /* [N, M, cols] read back as [N, M, out_w, out_h] (strides 1, Wp), then transposed */
  y = conv_bias_wide(g, y, b);
  ir_shape ys = {.rank = 3, .d = {s->d[0], s->d[1] * wr.d[2], cols32}};
  int perm[4] = {0, 1, 3, 2};
  y = ir_view_window(g, ir_view_reshape(g, y, ys), 1, &w.out[1], &wp, &one, &w.out[0]);
  return ir_view_permute(g, y, perm);
}

/* A 2-D convolution over few output rows (at most 6) with padded rows,
 * stride 1 or a stride across rows only: the kernel rows that read padding
 * are up to 2/9 of a 3x3's work at 3 output rows (1/9 for the first row of
 * a (2, 1)-strided one at 3 rows). Each border row is its own convolution
 * over the kernel rows that reach the input (a row of the rows form), the
 * rows between take the whole kernel without vertical padding (wide form
 * when `wide` and stride 1, else the rows form), and the bands are
 * concatenated ([N, M, out_h, out_w]; the bias stays with the caller).
 * IR_NONE when it does not apply. */
static ir_ref conv_bands(imp_node *n, ir_ref x5, ir_ref wt, const imp_window *w, ir_shape wr, int64_t vf, int regs,
                         bool wide) {
  ir_graph *g = n->g;
  int64_t s = w->s[0], k = w->k[0];
  if (w->nsp != 2 || w->d[0] != 1 || (!w->pb[0] && !w->pe[0]) || w->out[0] > 6 || w->out[1] < 32 || w->extra[0] ||
      k > w->in[0])
    return IR_NONE;
  /* kernel rows [a, b] of output row r read input rows top + a.. (top =
   * r * s - pb); a row that reads no input row (pads of a kernel's size)
   * keeps the padded form */
  int64_t padded = 0; /* kernel rows that read padding, over all output rows */
  for (int64_t r = 0; r < w->out[0]; r++) {
    int64_t top = r * s - w->pb[0], over = top + k - 1 - (w->in[0] - 1);
    if (top + k - 1 < 0 || top > w->in[0] - 1) return IR_NONE;
    padded += (top < 0 ? -top : 0) + (over > 0 ? over : 0);
  }
  /* strided: only when they are 1/9 of the work or more (64 -> 128 at
   * stride (2, 1) over 6 x 80, 1/18 of its taps, was 4 % slower in bands:
   * a second kernel of a short sum, a copy and the Concat), and only with
   * 16-float vectors, where a rows-form row is one register block across
   * (AVX2's 6 x 16 blocks over 96 columns ran the 2-row band 17 % slower
   * per row than the 3-row whole: 128 -> 256 at 3 x 80 4 % slower) */
  if (s > 1 && (vf < 16 || 9 * padded < w->out[0] * k)) return IR_NONE;
  const ir_shape xs = ir_node_get(g, x5)->shape, ws = ir_node_get(g, wt)->shape;
  ir_ref parts[6];
  int cnt = 0;
  for (int64_t r0 = 0; r0 < w->out[0] && !ir_failed(g);) {
    int64_t top = r0 * s - w->pb[0], a = top < 0 ? -top : 0, b = w->in[0] - 1 - top;
    if (b > k - 1) b = k - 1;
    int64_t r1 = r0 + 1; /* a border row alone; the full-kernel rows together */
    while (a == 0 && b == k - 1 && r1 < w->out[0] && r1 * s - w->pb[0] + k - 1 <= w->in[0] - 1) r1++;
    imp_window wb = *w;
    wb.k[0] = b - a + 1, wb.out[0] = r1 - r0, wb.in[0] = (r1 - r0 - 1) * s + b - a + 1, wb.pb[0] = wb.pe[0] = 0;
    int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK], ln[IR_MAX_RANK];
    for (int i = 0; i < xs.rank; i++) sp[i] = 1, ln[i] = xs.d[i];
    st[4] = top + a, ln[4] = wb.in[0];
    ir_ref xb = ir_view_slice(g, x5, st, sp, ln);
    int64_t wst[IR_MAX_RANK] = {0}, wsp[IR_MAX_RANK], wln[IR_MAX_RANK];
    for (int i = 0; i < ws.rank; i++) wsp[i] = 1, wln[i] = ws.d[i];
    wst[2] = a, wln[2] = wb.k[0];
    ir_shape wrb = wr;
    wrb.d[4] = wb.k[0];
    bool bw = wide && s == 1 && r1 - r0 > 1;
    ir_ref y = conv_window(g, xb, ir_view_slice(g, wt, wst, wsp, wln), NULL, &wb, wrb, bw, vf, regs);
    ir_shape ys = {.rank = 4, .d = {xs.d[0], ws.d[0], r1 - r0, w->out[1]}};
    parts[cnt++] = ir_view_reshape(g, y, ys);
    r0 = r1;
  }
  return ir_failed(g) ? IR_NONE : imp_concat(n, parts, cnt, 2);
}

/* A constant weight wt [M, C, kh, kw] as one constant [C, kh, kw, M]: the
 * output channels of every (c, kh, kw) step contiguous, read as the register
 * block's columns with unit stride. With `kh_outer`, [kh, C, kw, M]: the
 * kernel rows of a band (cols_band) are then a contiguous part of it, read
 * where they lie, where the other layout's bands each need a copy of their
 * rows (CRNN: 4.9 MB of weights, not 9.8). IR_NONE when wt is not a
 * constant. */
static ir_ref cols_weight(ir_graph *g, ir_ref wt, bool kh_outer) {
  if (ir_failed(g) || !ir_is_const(g, wt)) return IR_NONE;
  const ir_node *wn = ir_node_get(g, wt);
  ir_shape ws = wn->shape;
  ir_dtype dt = wn->dtype;
  int perm[4] = {1, 2, 3, 0};
  if (kh_outer) perm[0] = 2, perm[1] = 1;
  ir_shape ts = {.rank = 4, .d = {ws.d[perm[0]], ws.d[perm[1]], ws.d[3], ws.d[0]}};
  void *data;
  if (ir_eval(g, ir_move(g, ir_view_permute(g, wt, perm)), &data)) return IR_NONE;
  return ir_const_take(g, "conv_cols", dt, ts, data);
}

/* Output channels as the columns (2-D, one group, a constant weight): the
 * padded input is copied once with its channels innermost, [N, Hp, Wp, C],
 * and output rows r0..r1 over kernel rows a..b are the sum over (c, kh, kw)
 * of the input under the window, broadcast (a block's rows are output
 * positions along the row, any stride), times the weight's row of output
 * channels (the block's columns, contiguous in cols_weight's layout):
 * [N, r1 - r0, out_w, M], channels innermost. With `kh_outer` (the
 * weight [kh, C, kw, M]) the sum runs over (kh, c, kw). */
static ir_ref cols_band(ir_graph *g, ir_ref xh, ir_ref wc, const imp_window *w, int64_t r0, int64_t r1, int64_t a,
                        int64_t b, bool kh_outer) {
  const ir_shape xs = ir_node_get(g, xh)->shape, ws = ir_node_get(g, wc)->shape;
  int64_t kb = b - a + 1, rows = r1 - r0;
  int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int i = 0; i < xs.rank; i++) sp[i] = 1, ln[i] = xs.d[i];
  st[4] = r0 * w->s[0] + a * w->d[0], ln[4] = (rows - 1) * w->s[0] + (kb - 1) * w->d[0] + 1;
  int64_t k[2] = {kb, w->k[1]}, out[2] = {rows, w->out[1]};
  /* [N, 1, 1, C, kb, kw, rows, out_w] */
  ir_ref xw = ir_view_window(g, ir_view_slice(g, xh, st, sp, ln), 2, k, w->s, w->d, out);
  int px[8] = {0, 1, 6, 7, 3, 4, 5, 2}, kax = kh_outer ? 0 : 1;
  if (kh_outer) px[4] = 4, px[5] = 3;
  xw = ir_view_permute(g, xw, px); /* [N, 1, rows, out_w, C, kb, kw, 1] (kh_outer: kb, C) */
  int64_t wst[IR_MAX_RANK] = {0}, wsp[IR_MAX_RANK], wln[IR_MAX_RANK];
  for (int i = 0; i < ws.rank; i++) wsp[i] = 1, wln[i] = ws.d[i];
  wst[kax] = a, wln[kax] = kb;
  ir_shape w8 = {.rank = 8, .d = {1, 1, 1, 1, kax ? ws.d[0] : kb, kax ? kb : ws.d[1], ws.d[2], ws.d[3]}};
  ir_ref wv = ir_view_reshape(g, ir_view_slice(g, wc, wst, wsp, wln), w8);
  ir_ref y = ir_reduce(g, IR_ADD, ir_binary(g, IR_MUL, xw, wv), 7u << 4);
  ir_shape ys = {.rank = 4, .d = {xs.d[0], rows, w->out[1], ws.d[3]}};
  return ir_view_reshape(g, y, ys);
}

/* Output channels as the columns (cols_band), in bands of output rows.
 * The sum runs over (kh, c, kw) on targets of 32 vector registers or more
 * (`regs`), where the bands then share one weight (cols_weight): CRNN on
 * AVX-512, every conv_cols kernel 1-6 % faster, the model's kernels
 * 5.79-5.85 -> 5.68 M TSC cycles a run (Zen 5, 1 thread, rdtsc minima).
 * With 16 registers (AVX2) gcc kept an accumulator in memory across that
 * two-level loop (3x3/2, 32 -> 64 at 12 x 80: 662 -> 723 k cycles), so the
 * sum there stays (c, kh, kw) and each band keeps a copy of its rows. */
static ir_ref conv_cols(imp_node *n, ir_ref x5, ir_ref wt, const imp_window *w, int regs) {
  ir_graph *g = n->g;
  bool kh_outer = regs >= 32;
  ir_ref wc = cols_weight(g, wt, kh_outer);
  if (wc == IR_NONE || ir_failed(g)) return IR_NONE;
  int to_hwc[6] = {0, 1, 2, 4, 5, 3}, back[6] = {0, 1, 2, 5, 3, 4};
  ir_ref xh = ir_move(g, ir_view_permute(g, imp_pad_spatial(g, x5, w, 0.0), to_hwc));
  xh = ir_view_permute(g, xh, back); /* [N, 1, 1, C, Hp, Wp], channels innermost in memory */
  /* bands: the output rows whose kernel rows reach the padding take only
   * the kernel rows that read the input (as conv_bands) */
  ir_ref parts[8];
  int cnt = 0;
  int64_t k = w->k[0], s = w->s[0];
  bool bands = w->d[0] == 1 && w->out[0] <= 6;
  for (int64_t r0 = 0; r0 < w->out[0] && !ir_failed(g);) {
    int64_t a = 0, b = k - 1, r1 = w->out[0];
    if (bands) {
      int64_t top = r0 * s - w->pb[0];
      a = top < 0 ? -top : 0, b = w->in[0] - 1 - top < k - 1 ? w->in[0] - 1 - top : k - 1;
      if (a > b) a = 0, b = k - 1;
      for (r1 = r0 + 1; r1 < w->out[0]; r1++) {
        int64_t t1 = r1 * s - w->pb[0], a1 = t1 < 0 ? -t1 : 0, b1 = w->in[0] - 1 - t1 < k - 1 ? w->in[0] - 1 - t1 : k - 1;
        if (a1 > b1) a1 = 0, b1 = k - 1;
        if (a1 != a || b1 != b) break;
      }
    }
    parts[cnt++] = cols_band(g, xh, wc, w, r0, r1, a, b, kh_outer);
    r0 = r1;
  }
  if (ir_failed(g)) return IR_NONE;
  ir_ref y = cnt == 1 ? parts[0] : imp_concat(n, parts, cnt, 1);
  int to_chw[4] = {0, 3, 1, 2};
  return ir_view_permute(g, y, to_chw);
}

/* Output channels as the columns over the wide form's positions (2-D,
 * stride 1, one group, a constant weight), for a short map whose wide
 * columns round up to much more than its positions (3x3, 512 -> 512 at
 * 7x7 on AVX-512: 64 columns for 49 outputs, four vectors per output row
 * whatever the block). The rows of the register block are the padded rows
 * flattened, p = oh * Wp + ow (as the wide form's columns; 56 for 49), so a
 * block of rows spans output rows and tap (kh, kw) is the row p + kh * Wp +
 * kw of the padded input copied with its channels innermost, [N, Hp * Wp,
 * Cs], broadcast; the columns are the output channels, read from the weight
 * laid out at compile time as panels of two vectors, [M / nr, C, kh, kw,
 * nr] (one contiguous run per panel: the [C, kh, kw, M] rows of a 512-wide
 * weight are 2 KiB apart, and a panel's steps then fall into a few cache
 * sets). Cs is C plus a cache line when C floats are a multiple of four
 * lines, so the block's rows do not share cache sets either. The result
 * [N, P, M] is read through a strided view as [N, M, OH, OW]. The bias is
 * the sum's epilogue (*b taken). Where a panel is large against L2, the
 * scheduler cuts the sum into slices of channels and fetches the next one
 * (scheduler/gemm.c: conv_slices). IR_NONE when it does not apply. */
static ir_ref conv_wide_cols(imp_node *n, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w0,
                             int64_t vf) {
  ir_graph *g = n->g;
  if (ir_failed(g) || !ir_is_const(g, wt)) return IR_NONE;
  imp_window w = *w0;
  const ir_shape xs = ir_node_get(g, x5)->shape, ws = ir_node_get(g, wt)->shape;
  int64_t N = xs.d[0], C = xs.d[3], M = ws.d[0], nr = 2 * vf, k0 = w.k[0], k1 = w.k[1];
  int64_t wp = wide_stride(&w), P = w.out[0] * wp;
  w.pe[1] -= shared_pad(&w);
  /* rows the furthest tap of the last position reads */
  int64_t need = (P - 1 + (k0 - 1) * wp + k1 - 1) / wp + 1,
          hp = w.in[0] + w.pb[0] + w.pe[0] + w.extra[0];
  if (need > hp) w.extra[0] += need - hp, hp = need;
  int64_t line = 64 / (int64_t)sizeof(float), cs = C % (4 * line) ? C : C + line;
  /* the input [N, 1, 1, C, H, W] padded (and its channels), copied as [N, Hp, Wp, Cs] */
  int64_t cb[IR_MAX_RANK] = {0}, ce[IR_MAX_RANK] = {0};
  ce[3] = cs - C;
  ir_ref xp = ir_view_pad(g, imp_pad_spatial(g, x5, &w, 0.0), cb, ce, 0.0);
  int to_hwc[6] = {0, 1, 2, 4, 5, 3};
  ir_ref xh = ir_move(g, ir_view_permute(g, xp, to_hwc));
  ir_shape fs = {.rank = 3, .d = {N, hp * wp, cs}};
  int to_cp[3] = {0, 2, 1};
  ir_ref xf = ir_view_permute(g, ir_view_reshape(g, xh, fs), to_cp); /* [N, Cs, Hp * Wp] */
  int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK] = {1, 1, 1}, ln[IR_MAX_RANK] = {N, C, hp * wp};
  xf = ir_view_slice(g, xf, st, sp, ln);
  int64_t one = 1, dh = wp, rows = hp * wp - (k0 - 1) * wp;
  ir_ref xw = ir_view_window(g, xf, 1, &w.k[0], &one, &dh, &rows); /* [N, C, k0, rows] */
  xw = ir_view_window(g, xw, 1, &w.k[1], &one, &one, &P);          /* [N, C, k0, k1, P] */
  int px[5] = {0, 4, 1, 2, 3};
  xw = ir_view_permute(g, xw, px); /* [N, P, C, k0, k1] */
  ir_shape x7 = {.rank = 7, .d = {N, P, 1, C, k0, k1, 1}};
  xw = ir_view_reshape(g, xw, x7);
  /* the weight [M, C, k0, k1] as panels [M / nr, C, k0, k1, nr], read in
   * that order (a weight read out of order is laid out again as read:
   * ir_rewrite_weight_layout) */
  ir_shape w5 = {.rank = 5, .d = {M / nr, nr, C, k0, k1}};
  int pw[5] = {0, 2, 3, 4, 1};
  void *data;
  if (ir_eval(g, ir_move(g, ir_view_permute(g, ir_view_reshape(g, wt, w5), pw)), &data))
    return IR_NONE;
  ir_shape w7 = {.rank = 7, .d = {1, 1, M / nr, C, k0, k1, nr}};
  ir_ref wv = ir_const_take(g, "conv_wide_cols", ir_node_get(g, wt)->dtype, w7, data);
  /* [N, P, M / nr, 1, 1, 1, nr] */
  ir_ref y = ir_reduce(g, IR_ADD, ir_binary(g, IR_MUL, xw, wv), 7u << 3);
  ir_shape y4 = {.rank = 4, .d = {N, P, M / nr, nr}};
  y = ir_view_reshape(g, y, y4);
  if (b && *b != IR_NONE) {
    ir_shape bs = {.rank = 4, .d = {1, 1, M / nr, nr}};
    y = ir_binary(g, IR_ADD, y, ir_view_reshape(g, *b, bs));
    *b = IR_NONE;
  }
  ir_shape y3 = {.rank = 3, .d = {N, P, M}};
  int to_mp[3] = {0, 2, 1};
  y = ir_view_permute(g, ir_view_reshape(g, y, y3), to_mp); /* [N, M, P] */
  /* [N, M, P] read back as [N, M, out_w, out_h] (strides 1, Wp), then transposed */
  y = ir_view_window(g, y, 1, &w.out[1], &wp, &one, &w.out[0]);
  int perm[4] = {0, 1, 3, 2};
  return ir_failed(g) ? IR_NONE : ir_view_permute(g, y, perm);
}

/* Whether conv_wide_cols takes the convolution: 2-D, stride and dilation
 * 1, one group, a constant float weight, 2 to 9 taps over at least 8
 * channels, output channels in whole blocks of two vectors, on a target
 * of 16-float vectors and 32 registers (the wide form's blocks there are
 * 2 to 4 vectors of positions across), and the wide form computing at
 * least 1/16 more products than this one, whose blocks are 3/4 of the
 * registers in accumulators of two vectors across (12 rows) over the P
 * wide positions: 3x3, 512 -> 512 at 7x7, 64 columns x 516 rows against
 * 60 x 512 (+7.5 %); 256 -> 256 at 14x14, 224 x 264 against 216 x 256
 * (+6.9 %; the transposed reads of the result after it cost ~3 % of the
 * layer); 28x28 and 56x56 (+0 and +0.8 %) keep the wide form. */
static bool wide_cols_fits(ir_graph *g, const imp_window *w, const ir_shape *xs, ir_ref wt,
                           int64_t G, int64_t M, int64_t vf, int regs, int64_t wide_products) {
  if (w->nsp != 2 || G != 1 || vf < 16 || regs < 32 || !ir_shape_is_static(xs) ||
      !ir_is_const(g, wt) || ir_node_get(g, wt)->dtype != IR_F32 || M % (2 * vf))
    return false;
  for (int i = 0; i < 2; i++)
    if (w->s[i] != 1 || w->d[i] != 1) return false;
  int64_t taps = imp_tap_count(w), P = w->out[0] * wide_stride(w), mr = regs * 3 / 4 / 2, products;
  mr = mr > 12 ? 12 : mr;
  if (wide_products < 0 || ir_mul_ov((P + mr - 1) / mr * mr, M, &products) || products > INT64_MAX / 17 ||
      wide_products > INT64_MAX / 16)
    return false;
  return taps > 1 && taps <= 9 && xs->d[3] >= 8 && 16 * wide_products >= 17 * products;
}

/* Whether conv_cols takes the convolution: 2-D, one group, a constant
 * weight, 2 to 9 taps over at least 8 channels, output channels that
 * fill whole column blocks of two vectors, and few output rows (at most
 * 12) of at least 32 positions (a block's rows are positions along one
 * output row): there the other forms lose to short maps (the rows form's
 * blocks are one output row), kernel rows over the padding (bands) and,
 * strided, an im2col copy. */
static bool cols_fits(ir_graph *g, const imp_window *w, const ir_shape *xs, ir_ref wt, int64_t G, int64_t M, int vf) {
  if (w->nsp != 2 || G != 1 || !ir_shape_is_static(xs) || !ir_is_const(g, wt) || ir_node_get(g, wt)->dtype != IR_F32)
    return false;
  int64_t taps = imp_tap_count(w);
  return taps > 1 && taps <= 9 && xs->d[1] >= 8 && M % (2 * vf) == 0 && w->out[0] <= 12 && w->out[1] >= 32;
}

/* conv_row_unfold's case: 2-D, static, strided along the row with output
 * rows of at least 32 positions (the columns), more than 9 taps over fewer
 * than 8 channels (im2col's copy repeats each row k0 / s0 times). */
static bool row_unfold_fits(const imp_window *w, const ir_shape *xs, int64_t cg) {
  return w->nsp == 2 && ir_shape_is_static(xs) && w->s[1] > 1 && w->out[1] >= 32 && imp_tap_count(w) > 9 && cg < 8;
}

/* The convolution of x [N, C, L...] by wt [M, C/G, k...] (same type, float
 * or int32) as one of the forms above, [N, M, O...]; the node's kernel_shape,
 * strides, dilations, pads and group. Padding is with zeros: ConvInteger
 * passes its operands less their zero points. */
ir_ref imp_conv(imp_node *n, ir_ref x, ir_ref wt, ir_ref *b) {
  ir_graph *g = n->g;
  if (x == IR_NONE || wt == IR_NONE || ir_failed(g)) return IR_NONE;
  ir_shape xs = *imp_shape(n, x), ws = *imp_shape(n, wt);
  if (ws.rank != xs.rank) return imp_fail(n, "W rank %d differs from X rank %d", ws.rank, xs.rank), IR_NONE;
  int nsp = xs.rank - 2;
  int64_t k[IMP_MAX_SP];
  for (int i = 0; i < nsp && i < IMP_MAX_SP; i++) k[i] = ws.d[i + 2];
  if (imp_has_attr(n, "kernel_shape")) {
    int64_t ka[IMP_MAX_SP];
    if (imp_kernel_attr(n, nsp, ka)) return IR_NONE;
    for (int i = 0; i < nsp; i++)
      if (ka[i] != k[i]) return imp_fail(n, "kernel_shape disagrees with the shape of W"), IR_NONE;
  }
  imp_window w;
  if (imp_window_init(n, &w, &xs, k, false)) return IR_NONE;
  int64_t G = imp_attr_i(n, "group", 1), N = xs.d[0], C = xs.d[1], M = ws.d[0];
  if (G < 1 || C % G || M % G || ws.d[1] != C / G)
    return imp_fail(n, "group=%lld does not fit C=%lld, M=%lld, W channels=%lld", (long long)G, (long long)C,
                    (long long)M, (long long)ws.d[1]),
           IR_NONE;
  /* x -> [N, G, 1, C/G, spatial...] (padded); w -> [1, G, M/G, C/G, k...] */
  ir_shape xr = {.rank = xs.rank + 2, .d = {N, G, 1, C / G}};
  ir_shape wr = {.rank = xs.rank + 2, .d = {1, G, M / G, C / G}};
  for (int i = 0; i < nsp; i++) xr.d[4 + i] = xs.d[2 + i], wr.d[4 + i] = k[i];
  ir_ref x5 = ir_view_reshape(g, x, xr);
  ir_shape os = {.rank = xs.rank, .d = {N, M}};
  for (int i = 0; i < nsp; i++) os.d[2 + i] = w.out[i];
  conv_form f = conv_choose(&w, &xs, C / G, M / G);
  int64_t vf = imp_ctx_vector_floats(n->ctx);
  int regs = imp_ctx_vector_regs(n->ctx);
  ir_ref y = cols_fits(g, &w, &xs, wt, G, M, vf) ? conv_cols(n, x5, wt, &w, regs) : IR_NONE;
  if (y == IR_NONE && !ir_failed(g) && f == CONV_WIDE &&
      wide_cols_fits(g, &w, &xr, wt, G, M, vf, regs, wide_products(&w, M, vf, regs)))
    y = conv_wide_cols(n, x5, wt, b, &w, vf);
  if (y == IR_NONE && !ir_failed(g))
    y = f == CONV_TAPS ? conv_taps_wide(g, x5, wt, b, &w, wr)
        : f == CONV_WIDE || f == CONV_ROWS
            ? conv_bands(n, x5, wt, &w, wr, vf, regs, f == CONV_WIDE)
            : IR_NONE;
  if (y == IR_NONE && !ir_failed(g) && f == CONV_MATMUL && row_unfold_fits(&w, &xs, C / G))
    y = conv_row_unfold(g, x5, wt, &w, wr);
  if (y == IR_NONE && !ir_failed(g))
    y = f == CONV_MATMUL ? conv_matmul(g, x5, wt, b, &w, M, imp_ctx_vector_floats(n->ctx))
        : f == CONV_TAPS ? conv_taps(g, x5, wt, &w, wr)
                         : conv_window(g, x5, wt, b, &w, wr, f == CONV_WIDE, vf, regs);
  return ir_view_reshape(g, y, os);
}

/* Conv: imp_conv, then the bias. */
static int lower_conv(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), wt = imp_req(n, 1), b = imp_in(n, 2);
  if (x == IR_NONE || wt == IR_NONE || ir_failed(g)) return -1;
  ir_dtype dt = imp_dtype(n, x);
  if (!ir_dtype_is_float(dt)) return imp_fail(n, "input type %s is not supported (floating point only)", ir_dtype_name(dt));
  if (imp_dtype(n, wt) != dt) return imp_fail(n, "X and W have different types");
  int64_t M = imp_shape(n, wt)->d[0];
  if (b != IR_NONE && ir_shape_numel(imp_shape(n, b)) != M)
    return imp_fail(n, "bias B must have M=%lld elements", (long long)M);
  ir_ref y = imp_conv(n, x, wt, &b); /* a wide form takes the bias */
  if (y == IR_NONE) return -1;
  if (b != IR_NONE) {
    ir_shape bs = imp_unit_shape(imp_shape(n, x)->rank, 1, M);
    y = ir_binary(g, IR_ADD, y, ir_view_reshape(g, b, bs));
  }
  return imp_set_out(n, 0, y);
}

const imp_op_entry imp_ops_conv[] = {
    {"Conv", lower_conv, IMP_SYM},
    {NULL, NULL, 0},
};
