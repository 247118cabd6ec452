/* resize_sym.c — bilinear Resize of [N, C, H, W] with H or W symbolic and
 * a whole scale on each: the two inputs and weights of every output row
 * and column are computed by the generated code, in float32 as
 * onnxruntime's UpsampleBilinear computes them, instead of the tables the
 * static form (op_resize.c: resize_bilinear) builds at compile time. */
#include "importer_impl.h"

#include <string.h>

/* Along axis `axis` (H = 2 or W = 3) of length L resized by k to k * L:
 * v = (o + 0.5) / k - 0.5 (half_pixel; pytorch_half_pixel, whose output
 * is longer than 1 here) or o / k (asymmetric), clamped to [0, L - 1];
 * i1 = min((int64)v, L - 1), i2 = min(i1 + 1, L - 1), d1 = |v - i1|,
 * d2 = |v - i2|, both 0.5 where i1 == i2. The indices come out as
 * [.., k * L, 1, ..] of rank 5 (for the one-hot pick), the weights as
 * [.., k * L, ..] of rank 4. */
static void axis_sym(ir_graph *g, bool half, int axis, int64_t L, int64_t k, ir_ref *i1, ir_ref *i2, ir_ref *d1,
                     ir_ref *d2) {
  ir_shape s0 = {0};
  ir_ref o = ir_cast(g, ir_iota(g, imp_unit_shape(4, axis, ir_dim_mul(L, k)), axis), IR_F32);
  ir_ref kf = ir_scalar(g, IR_F32, (double)k), half_f = ir_scalar(g, IR_F32, 0.5);
  ir_ref last = ir_load_int(g, IR_I64, s0, ir_dim_sub(L, 1));
  ir_ref v = ir_cast(g, imp_div_f32(g, half ? ir_binary(g, IR_ADD, o, half_f) : o, kf), IR_F32);
  if (half) v = ir_sub(g, v, half_f);
  v = ir_binary(g, IR_MAX, ir_min(g, v, ir_cast(g, last, IR_F32)), ir_scalar(g, IR_F32, 0));
  ir_ref a = ir_min(g, ir_cast(g, v, IR_I64), last);
  ir_ref b = ir_min(g, ir_binary(g, IR_ADD, a, ir_scalar(g, IR_I64, 1)), last);
  ir_ref same = ir_eq(g, a, b);
  *d1 = ir_where(g, same, half_f, ir_abs(g, ir_sub(g, v, ir_cast(g, a, IR_F32))));
  *d2 = ir_where(g, same, half_f, ir_abs(g, ir_sub(g, v, ir_cast(g, b, IR_F32))));
  *i1 = ir_view_unsqueeze(g, a, axis + 1);
  *i2 = ir_view_unsqueeze(g, b, axis + 1);
}

/* x read at the indices idx ([.., out, 1, ..], rank 5) along `axis` of
 * length `in`: a one-hot select, which the gather rewrite makes a read. */
static ir_ref pick_rt(imp_node *n, ir_ref x, int axis, ir_ref idx, int64_t in) {
  ir_graph *g = n->g;
  ir_ref xv = ir_view_unsqueeze(g, x, axis), iota = ir_iota(g, imp_unit_shape(5, axis + 1, in), axis + 1);
  return ir_view_squeeze(g, imp_select_sum(n, ir_eq(g, iota, idx), xv, axis + 1), axis + 1);
}

int imp_resize_bilinear_sym(imp_node *n, ir_ref x, const char *ctm, const double *scale) {
  ir_graph *g = n->g;
  ir_shape s = imp_gshape(g, x);
  bool half = !strcmp(ctm, "half_pixel") || !strcmp(ctm, "pytorch_half_pixel");
  if (!half && strcmp(ctm, "asymmetric"))
    return imp_fail_sym(n, ir_dim_is_sym(s.d[2]) ? s.d[2] : s.d[3], "a linear resize of a symbolic axis in this mode");
  int64_t k[2];
  for (int a = 2; a < 4; a++) {
    k[a - 2] = (int64_t)scale[a];
    if (!(scale[a] >= 1 && scale[a] <= 64) || (double)k[a - 2] != scale[a])
      return imp_fail_sym(n, ir_dim_is_sym(s.d[a]) ? s.d[a] : s.d[5 - a],
                          "a linear resize of a symbolic axis by other than a whole scale");
  }
  ir_ref iy1, iy2, dy1, dy2, ix1, ix2, dx1, dx2;
  axis_sym(g, half, 2, s.d[2], k[0], &iy1, &iy2, &dy1, &dy2);
  axis_sym(g, half, 3, s.d[3], k[1], &ix1, &ix2, &dx1, &dx2);
  /* the rows read materialised (MOVE), as in the static form */
  ir_ref r1 = ir_move(g, pick_rt(n, x, 2, iy1, s.d[2])), r2 = ir_move(g, pick_rt(n, x, 2, iy2, s.d[2]));
  ir_ref X11 = pick_rt(n, r1, 3, ix1, s.d[3]), X21 = pick_rt(n, r1, 3, ix2, s.d[3]);
  ir_ref X12 = pick_rt(n, r2, 3, ix1, s.d[3]), X22 = pick_rt(n, r2, 3, ix2, s.d[3]);
  /* onnxruntime's order: ((dx2 dy2) X11 + (dx1 dy2) X21) + (dx2 dy1) X12 + (dx1 dy1) X22 */
  ir_ref t11 = ir_binary(g, IR_MUL, ir_binary(g, IR_MUL, dx2, dy2), X11);
  ir_ref t21 = ir_binary(g, IR_MUL, ir_binary(g, IR_MUL, dx1, dy2), X21);
  ir_ref t12 = ir_binary(g, IR_MUL, ir_binary(g, IR_MUL, dx2, dy1), X12);
  ir_ref t22 = ir_binary(g, IR_MUL, ir_binary(g, IR_MUL, dx1, dy1), X22);
  return imp_set_out(n, 0, ir_binary(g, IR_ADD, ir_binary(g, IR_ADD, ir_binary(g, IR_ADD, t11, t21), t12), t22));
}
