/* conv_winograd.c — a 3x3 convolution at stride 1 as Winograd's minimal
 * filtering F(2x2, 3x3) (Lavin and Gray, "Fast Algorithms for
 * Convolutional Neural Networks", 2015): each 2x2 tile of the output is
 * A^T [(G g G^T) . (B^T d B)] A over the 4x4 tile d of the input under it,
 * so the products are 16 matrix products [M, C] x [C, tiles], one per
 * element of the 4x4 transformed tile: 16 products per 4 outputs and
 * input channel, against 36 directly (2.25x fewer). The transforms are
 * additions: B^T and A^T hold only 0 and +-1, and G g G^T is done at
 * compile time. op_conv.c chooses it. */
#include "importer_impl.h"

#include <stdlib.h>

/* B^T (input tile -> transformed tile) and G (3 kernel taps -> 4) of F(2, 3). */
static const int wino_bt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
static const double wino_g[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
/* A^T (transformed product -> 2 outputs) */
static const int wino_at[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

/* The weight wt [M, C, 3, 3] (a constant) as U [16, M, C]: U[4i + j] =
 * (G g G^T)[i][j] for every (m, c), summed in double. IR_NONE when wt is
 * not a constant. */
static ir_ref wino_weight(ir_graph *g, ir_ref wt) {
  if (ir_failed(g) || !ir_is_const(g, wt)) return IR_NONE;
  ir_shape ws = ir_node_get(g, wt)->shape;
  int64_t M = ws.d[0], C = ws.d[1], mc;
  if (ir_mul_ov(M, C, &mc) || mc > INT64_MAX / 64) return ir_fail(g, "Winograd weight too large"), IR_NONE;
  void *raw;
  if (ir_eval(g, wt, &raw)) return IR_NONE;
  float *u = malloc(sizeof(float) * 16 * (size_t)mc);
  if (!u) return free(raw), ir_fail(g, "out of memory (Winograd weight of %lld floats)", (long long)(16 * mc)), IR_NONE;
  const float *w = raw;
  for (int64_t p = 0; p < mc; p++) {
    const float *k = w + 9 * p;
    double t[4][3]; /* G g */
    for (int i = 0; i < 4; i++)
      for (int b = 0; b < 3; b++) t[i][b] = wino_g[i][0] * k[b] + wino_g[i][1] * k[3 + b] + wino_g[i][2] * k[6 + b];
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++)
        u[(4 * i + j) * mc + p] = (float)(t[i][0] * wino_g[j][0] + t[i][1] * wino_g[j][1] + t[i][2] * wino_g[j][2]);
  }
  free(raw);
  return ir_const_take(g, "conv_winograd", IR_F32, (ir_shape){.rank = 5, .d = {1, 16, M, C, 1}}, u);
}

/* The sum of `n` terms as a balanced tree (its depth bounds inlining). */
static ir_ref sum_tree(ir_graph *g, const ir_ref *t, int n) {
  if (n == 1) return t[0];
  return ir_binary(g, IR_ADD, sum_tree(g, t, n / 2), sum_tree(g, t + n / 2, n - n / 2));
}

/* Term t [N, X, 1, T] as part `at` of `parts` along axis 2, times `sign`
 * (+-1): where the other parts are it reads -0 when added and +0 when
 * subtracted, so that it adds -0 there, which gcc folds away. */
static ir_ref placed_term(ir_graph *g, ir_ref t, int at, int parts, int sign) {
  int64_t be[4] = {0, 0, at, 0}, af[4] = {0, 0, parts - 1 - at, 0};
  t = ir_view_pad(g, t, be, af, sign > 0 ? -0.0 : 0.0);
  return sign > 0 ? t : ir_unary(g, IR_NEG, t);
}

/* Y = (L (x) L) src: part r1 * rows + r2 of [.., rows * rows, T] (axis 2)
 * sums src[p][q] [.., 1, T] times L[r1][p] L[r2][q] (0 or +-1; L is rows
 * x 4), as a sum of masked views (placed_term). */
static ir_ref kron_sum(ir_graph *g, const int *L, int rows, ir_ref src[4][4]) {
  ir_ref terms[64];
  int nt = 0;
  for (int r1 = 0; r1 < rows; r1++)
    for (int r2 = 0; r2 < rows; r2++)
      for (int p = 0; p < 4; p++)
        for (int q = 0; q < 4; q++) {
          int sg = L[4 * r1 + p] * L[4 * r2 + q];
          if (sg) terms[nt++] = placed_term(g, src[p][q], r1 * rows + r2, rows * rows, sg);
        }
  return sum_tree(g, terms, nt);
}

/* The convolution of x5 [N, 1, 1, C, H, W] by the constant wt [M, C, 3, 3]
 * (stride and dilation 1, any padding) as F(2x2, 3x3): [N, M, OH, OW]; the
 * bias (*b, taken) is added by the output transform. */
ir_ref imp_conv_winograd(imp_node *n, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w0) {
  ir_graph *g = n->g;
  ir_ref u = wino_weight(g, wt);
  if (u == IR_NONE || ir_failed(g)) return IR_NONE;
  const ir_shape xs = ir_node_get(g, x5)->shape;
  int64_t N = xs.d[0], C = xs.d[3], M = ir_node_get(g, wt)->shape.d[0];
  imp_window w = *w0;
  /* th x tw tiles of 2x2 outputs, each over a 4x4 window of the padded
   * input at (2 ty, 2 tx). The padded input is copied once as its four
   * stride phases P[pa][pb][y][x] = xp[2y + pa][2x + pb], (th + 2) x W1
   * each, W1 = tw + 1: window element (a, b) of tile (ty, tx) is then
   * P[a % 2][b % 2] at flat position (ty + a / 2) W1 + tx + b / 2, so
   * for all tiles one unit-stride run of th W1 positions, if each row of
   * tiles takes one more, wrapped, tile (tx = tw: computed, never read;
   * 1 / W1 more work, as the wide convolutions' wrapped columns). The last
   * wrapped tile's window reaches one past the last row of P: one more
   * row of zeros. */
  int64_t th = (w.out[0] + 1) / 2, tw = (w.out[1] + 1) / 2, W1 = tw + 1, T = th * W1, L = (th + 2) * W1;
  w.pe[0] += 2 * (th + 2) - (w.out[0] + 2), w.pe[1] += 2 * W1 - (w.out[1] + 2);
  ir_ref xp = imp_pad_spatial(g, x5, &w, 0.0); /* [N, 1, 1, C, 2 (th + 2), 2 W1] */
  int phases_first[6] = {0, 1, 3, 5, 2, 4};   /* [N, C, 2, 2, th + 2, W1] */
  ir_ref ph = ir_view_reshape(g, xp, (ir_shape){.rank = 6, .d = {N, C, th + 2, 2, W1, 2}});
  ph = ir_view_reshape(g, ir_move(g, ir_view_permute(g, ph, phases_first)),
                       (ir_shape){.rank = 5, .d = {N, C, 2, 2, L}});
  /* V = B^T d B, [N, C, 16, T]: element 4i + j sums the four d[a][b] with
   * B^T[i][a] B^T[j][b] != 0 (+-1), a Concat of 16 parts as a sum of
   * masked views (a Concat of computed parts would make each a kernel);
   * the codegen cuts the loop over the 16 into one piece per part
   * (codegen/emit.c, split_loop), where the other parts' views read their
   * pad value (placed_term). */
  ir_ref d[4][4]; /* d[a][b] of every tile: [N, C, 1, T] */
  for (int a = 0; a < 4; a++)
    for (int c = 0; c < 4; c++) {
      int64_t st[5] = {0, 0, a % 2, c % 2, a / 2 * W1 + c / 2}, sp[5] = {1, 1, 1, 1, 1}, ln[5] = {N, C, 1, 1, T};
      d[a][c] = ir_view_reshape(g, ir_view_slice(g, ph, st, sp, ln), (ir_shape){.rank = 4, .d = {N, C, 1, T}});
    }
  int k_first[4] = {0, 2, 1, 3};
  ir_ref v = ir_view_permute(g, kron_sum(g, &wino_bt[0][0], 4, d), k_first); /* [N, 16, C, T] */
  v = ir_view_reshape(g, v, (ir_shape){.rank = 5, .d = {N, 16, 1, C, T}});
  /* the 16 products, [N, 16, M, 1, T], on the register-blocked path */
  ir_ref m = ir_reduce(g, IR_ADD, ir_binary(g, IR_MUL, v, u), 1u << 3);
  int m_first[4] = {0, 2, 1, 3};
  m = ir_view_permute(g, ir_view_reshape(g, m, (ir_shape){.rank = 4, .d = {N, 16, M, T}}), m_first);
  /* Y = A^T m A + bias, [N, M, 4, T]: output (a, c) of a tile sums the nine
   * m[4i + j] with A^T[a][i] A^T[c][j] != 0, the same way */
  ir_ref mij[4][4]; /* m[4i + j]: [N, M, 1, T] */
  for (int i = 0; i < 16; i++) {
    int64_t st[4] = {0, 0, i, 0}, sp[4] = {1, 1, 1, 1}, ln[4] = {N, M, 1, T};
    mij[i / 4][i % 4] = ir_view_slice(g, m, st, sp, ln);
  }
  ir_ref y = kron_sum(g, &wino_at[0][0], 2, mij);
  if (b && *b != IR_NONE) {
    y = ir_binary(g, IR_ADD, y, ir_view_reshape(g, *b, (ir_shape){.rank = 4, .d = {1, M, 1, 1}}));
    *b = IR_NONE;
  }
  /* [N, M, 2, 2, th, W1] -> [N, M, th, 2, tw, 2] (the wrapped tiles left
   * out): the tiles' outputs in place, a copy */
  y = ir_view_reshape(g, y, (ir_shape){.rank = 6, .d = {N, M, 2, 2, th, W1}});
  int64_t st6[6] = {0}, sp6[6] = {1, 1, 1, 1, 1, 1}, ln6[6] = {N, M, 2, 2, th, tw};
  int tiles_out[6] = {0, 1, 4, 2, 5, 3};
  y = ir_view_permute(g, ir_view_slice(g, y, st6, sp6, ln6), tiles_out);
  y = ir_view_reshape(g, y, (ir_shape){.rank = 4, .d = {N, M, 2 * th, 2 * tw}});
  int64_t st[4] = {0}, sp[4] = {1, 1, 1, 1}, ln[4] = {N, M, w.out[0], w.out[1]};
  return ir_view_slice(g, y, st, sp, ln);
}
