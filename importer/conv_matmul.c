/* conv_matmul.c — Conv as one matrix product (op_conv.c chooses): the
 * im2col form, and the rows unfolded along the row for a strided stem
 * over few channels. */
#include "importer_impl.h"

/* The convolution as one matrix product per group, W[M/G, C/G * taps] times
 * the input's columns [C/G * taps, O...] flattened: a 1x1 convolution
 * without stride or padding reads the input as it is; otherwise the windows
 * of the padded input are copied into those columns (im2col). Taken where
 * the windowed forms block badly: many taps for the channels they sum (a
 * 7x7 over 3 channels reads 49 taps per step of a 3-long sum, a chain of
 * 49 dependent FMAs per row; strided along long rows, imp_conv_row_unfold
 * below), or short output rows with a stride (the block's columns are
 * then the whole map, not one row of it). */
ir_ref imp_conv_matmul(ir_graph *g, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w, int64_t M,
                       int64_t vf) {
  const ir_shape *s = &ir_node_get(g, x5)->shape;
  int64_t N = s->d[0], G = s->d[1], cg = s->d[3], taps = imp_tap_count(w), cols = 1;
  for (int i = 0; i < w->nsp; i++) cols *= w->out[i];
  /* the input is read as it is only by one tap at stride 1 without
   * padding: the counts alone can agree otherwise (a 1-wide kernel at
   * stride 2 padded 1 on each side of 3 positions has 3 outputs, the first
   * and last wholly padding: they read x[0] and x[2]) */
  bool copy = taps > 1 || cols != ir_shape_numel(s) / (N * G * cg);
  for (int i = 0; i < w->nsp; i++) copy |= w->s[i] != 1 || w->pb[i] || w->pe[i] || w->extra[i];
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
  return flat ? imp_conv_bias_wide(g, y, b) : y;
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
ir_ref imp_conv_row_unfold(ir_graph *g, ir_ref x5, ir_ref wt, const imp_window *w, ir_shape wr) {
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
