/* resize_sym.c — bilinear Resize of [N, C, H, W] with H or W symbolic (by
 * whole scales, or to sizes read from shapes: a segmentation head resized
 * back to its input's H x W): the two inputs and weights of every output
 * row and column are computed by the generated code, in float32 as
 * onnxruntime's UpsampleBilinear computes them, instead of the tables the
 * static form (op_resize.c: resize_bilinear) builds at compile time. */
#include "importer_impl.h"

#include <string.h>

typedef enum { CT_HALF, CT_PYTORCH_HALF, CT_ASYMMETRIC, CT_ALIGN } coord_mode;

/* A float32 scalar of a (possibly symbolic) dimension, computed at run time. */
static ir_ref dim_f32(ir_graph *g, int64_t d) {
  ir_shape s0 = {0};
  return ir_cast(g, ir_load_int(g, IR_I64, s0, d), IR_F32);
}

/* Along axis `axis` (H = 2 or W = 3) of length L resized to `out` with the
 * float32 scale `sc` (k, or out / L as onnxruntime divides them), its
 * source coordinate v: (o + 0.5) / sc - 0.5 (half_pixel; pytorch_half_pixel
 * but 0 when out is 1), o / sc (asymmetric) or o * (L - 1) / (out - 1)
 * (align_corners, 0 when out is 1), clamped to [0, L - 1]; i1 = min((int64)
 * v, L - 1), i2 = min(i1 + 1, L - 1), d1 = |v - i1|, d2 = |v - i2|, both 0.5
 * where i1 == i2. The indices come out as [.., out, 1, ..] of rank 5 (for
 * the one-hot pick), the weights as [.., out, ..] of rank 4. */
static void axis_sym(ir_graph *g, coord_mode cm, int axis, int64_t L, int64_t out, ir_ref sc, ir_ref *i1, ir_ref *i2,
                     ir_ref *d1, ir_ref *d2) {
  ir_shape s0 = {0};
  ir_ref o = ir_cast(g, ir_iota(g, imp_unit_shape(4, axis, out), axis), IR_F32);
  ir_ref half = ir_scalar(g, IR_F32, 0.5), zero = ir_scalar(g, IR_F32, 0);
  ir_ref last = ir_load_int(g, IR_I64, s0, ir_dim_sub(L, 1)), lastf = ir_cast(g, last, IR_F32);
  ir_ref v;
  if (cm == CT_ALIGN)
    v = ir_cast(g, imp_div_f32(g, ir_binary(g, IR_MUL, o, lastf), dim_f32(g, ir_dim_sub(out, 1))), IR_F32);
  else if (cm == CT_ASYMMETRIC)
    v = ir_cast(g, imp_div_f32(g, o, sc), IR_F32);
  else
    v = ir_sub(g, ir_cast(g, imp_div_f32(g, ir_binary(g, IR_ADD, o, half), sc), IR_F32), half);
  if (cm == CT_ALIGN || cm == CT_PYTORCH_HALF) /* out == 1: coordinate 0 */
    v = ir_where(g, ir_gt(g, ir_load_int(g, IR_I64, s0, out), ir_scalar(g, IR_I64, 1)), v, zero);
  v = ir_binary(g, IR_MAX, ir_min(g, v, lastf), zero);
  ir_ref a = ir_min(g, ir_cast(g, v, IR_I64), last);
  ir_ref b = ir_min(g, ir_binary(g, IR_ADD, a, ir_scalar(g, IR_I64, 1)), last);
  ir_ref same = ir_eq(g, a, b);
  *d1 = ir_where(g, same, half, ir_abs(g, ir_sub(g, v, ir_cast(g, a, IR_F32))));
  *d2 = ir_where(g, same, half, ir_abs(g, ir_sub(g, v, ir_cast(g, b, IR_F32))));
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

int imp_resize_bilinear_sym(imp_node *n, ir_ref x, const char *ctm, const double *scale, const int64_t *osz) {
  ir_graph *g = n->g;
  ir_shape s = imp_gshape(g, x);
  int64_t sym = ir_dim_is_sym(s.d[2]) ? s.d[2] : s.d[3];
  coord_mode cm = !strcmp(ctm, "half_pixel")           ? CT_HALF
                  : !strcmp(ctm, "pytorch_half_pixel") ? CT_PYTORCH_HALF
                  : !strcmp(ctm, "asymmetric")         ? CT_ASYMMETRIC
                  : !strcmp(ctm, "align_corners")      ? CT_ALIGN
                                                       : -1;
  if ((int)cm < 0) return imp_fail_sym(n, sym, "a linear resize of a symbolic axis in this mode");
  ir_ref sc[2];
  for (int a = 2; a < 4; a++) {
    if (scale[a] == 0) { /* to a size: the scale out / L as onnxruntime takes it, in float32 */
      sc[a - 2] = ir_cast(g, imp_div_f32(g, dim_f32(g, osz[a]), dim_f32(g, s.d[a])), IR_F32);
      continue;
    }
    if (!ir_dim_is_sym(s.d[a])) { /* a static axis: the scale as resize_bilinear takes it */
      float f = (double)(float)scale[a] == scale[a] ? (float)scale[a] : (float)osz[a] / (float)s.d[a];
      sc[a - 2] = ir_scalar(g, IR_F32, f);
      continue;
    }
    int64_t k = (int64_t)scale[a];
    if (!(scale[a] >= 1 && scale[a] <= 64) || (double)k != scale[a])
      return imp_fail_sym(n, sym, "a linear resize of a symbolic axis by other than a whole scale");
    sc[a - 2] = ir_scalar(g, IR_F32, (double)k);
  }
  ir_ref iy1, iy2, dy1, dy2, ix1, ix2, dx1, dx2;
  axis_sym(g, cm, 2, s.d[2], osz[2], sc[0], &iy1, &iy2, &dy1, &dy2);
  axis_sym(g, cm, 3, s.d[3], osz[3], sc[1], &ix1, &ix2, &dx1, &dx2);
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
