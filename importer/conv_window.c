/* conv_window.c — Conv's windowed forms (op_conv.c chooses), wide and
 * rows, and the bands of few padded output rows.
 *
 * The windowed forms: the product of a window view of the padded input
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
#include "importer_impl.h"

/* Adds the bias `*b` (M values; none when b is NULL) to `y` = [N, G, M/G,
 * 1..., positions] and takes it (*b = IR_NONE). The wide forms add it
 * before their output view: an activation after it then runs over the
 * wide rows too (ir/sink_region.c). */
ir_ref imp_conv_bias_wide(ir_graph *g, ir_ref y, ir_ref *b) {
  if (!b || *b == IR_NONE || y == IR_NONE || ir_failed(g)) return y;
  const ir_shape *ys = &ir_node_get(g, y)->shape;
  ir_shape bs = {.rank = ys->rank};
  for (int i = 0; i < bs.rank; i++) bs.d[i] = i == 1 || i == 2 ? ys->d[i] : 1;
  y = ir_binary(g, IR_ADD, y, ir_view_reshape(g, *b, bs));
  *b = IR_NONE;
  return y;
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
 * fewest rows computed for the M rows (scheduler/gemm_block.c, wide_vectors):
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
 * the row stride is in + pb + pe - shared pad (imp_conv_window). */
int64_t imp_conv_shared_pad(const imp_window *w) {
  int last = w->nsp - 1;
  return w->pe[last] <= w->pb[last] && !w->extra[last] ? w->pe[last] : 0;
}

/* The wide form's row stride for window w. */
int64_t imp_conv_wide_stride(const imp_window *w) {
  int last = w->nsp - 1;
  return w->in[last] + w->pb[last] + w->pe[last] - imp_conv_shared_pad(w);
}

/* The wide form's products for window w, columns x rows computed
 * (imp_conv_window's count; -1 when not counted). */
int64_t imp_conv_wide_products(const imp_window *w, int64_t M, int64_t vf, int regs) {
  int64_t products;
  wide_cols((w->out[0] - 1) * imp_conv_wide_stride(w) + w->out[w->nsp - 1], M, vf, regs, &products);
  return products;
}

/* The extra columns are never read. Their reads stay inside the padded
 * copy: zero rows (wide) or columns (rows form) are added at its end. The
 * wide form's padded rows share their padding when the right one is no
 * wider than the left (3x3, pads 1): the row stride is W + left pad, and a
 * tap past a row's end reads the next row's left padding (zeros, the last
 * row a zero row added below), so each row computes out_w + 1 columns, not
 * out_w + 2 (3x3, 128 -> 128 at 28x28: 811 columns, not 838). */
ir_ref imp_conv_window(ir_graph *g, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w0,
                       ir_shape wr, bool wide, int64_t vf, int regs) {
  imp_window w = *w0;
  int last = w.nsp - 1;
  int64_t drop = wide ? imp_conv_shared_pad(&w) : 0;
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
  y = imp_conv_bias_wide(g, y, b);
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
ir_ref imp_conv_bands(imp_node *n, ir_ref x5, ir_ref wt, const imp_window *w, ir_shape wr,
                      int64_t vf, int regs, bool wide) {
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
    ir_ref y = imp_conv_window(g, xb, ir_view_slice(g, wt, wst, wsp, wln), NULL, &wb, wrb, bw, vf, regs);
    ir_shape ys = {.rank = 4, .d = {xs.d[0], ws.d[0], r1 - r0, w->out[1]}};
    parts[cnt++] = ir_view_reshape(g, y, ys);
    r0 = r1;
  }
  return ir_failed(g) ? IR_NONE : imp_concat(n, parts, cnt, 2);
}
