/* resize_sym.c — Resize over symbolic axes where no view does it: the
 * bilinear [N, C, H, W] case with H or W symbolic (by whole scales, or to
 * sizes read from shapes: a segmentation head resized back to its input's
 * H x W), and nearest to sizes read from shapes (an FPN's upsampling to
 * the next map's H x W). The inputs (and weights) of every output position
 * are computed by the generated code, in float32 as onnxruntime's
 * UpsampleBilinear / UpsampleNearest compute them, instead of the tables
 * the static forms (op_resize.c) build at compile time. */
#include "importer_impl.h"

#include <string.h>

typedef enum { CT_HALF, CT_PYTORCH_HALF, CT_ASYMMETRIC, CT_ALIGN, CT_TF_HALF_NN } coord_mode;

static int coord_mode_of(const char *ctm) {
  return !strcmp(ctm, "half_pixel")             ? CT_HALF
         : !strcmp(ctm, "pytorch_half_pixel")   ? CT_PYTORCH_HALF
         : !strcmp(ctm, "asymmetric")           ? CT_ASYMMETRIC
         : !strcmp(ctm, "align_corners")        ? CT_ALIGN
         : !strcmp(ctm, "tf_half_pixel_for_nn") ? CT_TF_HALF_NN
                                                : -1;
}

float imp_resize_scale_f32(double scale, int64_t in, int64_t out) {
  return (double)(float)scale == scale ? (float)scale : (float)out / (float)in;
}

/* A float32 scalar of a (possibly symbolic) dimension, computed at run time. */
static ir_ref dim_f32(ir_graph *g, int64_t d) {
  ir_shape s0 = {0};
  return ir_cast(g, ir_load_int(g, IR_I64, s0, d), IR_F32);
}

/* The float32 scale of axis `a` (length L, resized to out) as onnxruntime
 * holds it: out / L divided at run time for a size read from a shape
 * (scale 0); the given scale on a static axis, or out / in where that
 * double is no float (sizes); a whole k on a symbolic axis, whose size k L
 * is the only polynomial one (anything else refused). IR_NONE on error. */
static ir_ref axis_scale(imp_node *n, double scale, int64_t L, int64_t out) {
  ir_graph *g = n->g;
  if (scale == 0) return ir_cast(g, imp_div_f32(g, dim_f32(g, out), dim_f32(g, L)), IR_F32);
  if (!ir_dim_is_sym(L)) return ir_scalar(g, IR_F32, imp_resize_scale_f32(scale, L, out));
  if (!(scale >= 1 && scale <= 64) || (double)(int64_t)scale != scale)
    return imp_fail_sym(n, L, "a resize of a symbolic axis by other than a whole scale"), IR_NONE;
  return ir_scalar(g, IR_F32, scale);
}

/* Along axis `axis` (H = 2 or W = 3) of length L resized to `out` with the
 * float32 scale `sc` (k, or out / L as onnxruntime divides them), its
 * source coordinate v: (o + 0.5) / sc - 0.5 (half_pixel; pytorch_half_pixel
 * but 0 when out is 1), o / sc (asymmetric) or o * (L - 1) / (out - 1)
 * (align_corners, 0 when out is 1), clamped to [0, L - 1]; i1 = min((int64)
 * v, L - 1), i2 = min(i1 + 1, L - 1), d1 = |v - i1|, d2 = |v - i2|, both 0.5
 * where i1 == i2. The indices come out as [.., out, 1, ..] of rank 5 (for
 * the one-hot pick), the weights as [.., out, ..] of rank 4. */
/* The source coordinate of each output o along `axis` (over [.., out, ..]
 * of rank `rank`), as onnxruntime's get_original_coordinate in float32. */
static ir_ref source_coord(ir_graph *g, coord_mode cm, int rank, int axis, int64_t L, int64_t out, ir_ref sc) {
  ir_shape s0 = {0};
  ir_ref o = ir_cast(g, ir_iota(g, imp_unit_shape(rank, axis, out), axis), IR_F32);
  ir_ref half = ir_scalar(g, IR_F32, 0.5);
  ir_ref v;
  if (cm == CT_ALIGN)
    v = ir_cast(g, imp_div_f32(g, ir_binary(g, IR_MUL, o, dim_f32(g, ir_dim_sub(L, 1))), dim_f32(g, ir_dim_sub(out, 1))),
                IR_F32);
  else if (cm == CT_ASYMMETRIC)
    v = ir_cast(g, imp_div_f32(g, o, sc), IR_F32);
  else if (cm == CT_TF_HALF_NN)
    v = ir_cast(g, imp_div_f32(g, ir_binary(g, IR_ADD, o, half), sc), IR_F32);
  else
    v = ir_sub(g, ir_cast(g, imp_div_f32(g, ir_binary(g, IR_ADD, o, half), sc), IR_F32), half);
  if (cm == CT_ALIGN || cm == CT_PYTORCH_HALF) /* out == 1: coordinate 0 */
    v = ir_where(g, ir_gt(g, ir_load_int(g, IR_I64, s0, out), ir_scalar(g, IR_I64, 1)), v, ir_scalar(g, IR_F32, 0));
  return v;
}

static void axis_sym(ir_graph *g, coord_mode cm, int axis, int64_t L, int64_t out, ir_ref sc, ir_ref *i1, ir_ref *i2,
                     ir_ref *d1, ir_ref *d2) {
  ir_shape s0 = {0};
  ir_ref half = ir_scalar(g, IR_F32, 0.5), zero = ir_scalar(g, IR_F32, 0);
  ir_ref last = ir_load_int(g, IR_I64, s0, ir_dim_sub(L, 1)), lastf = ir_cast(g, last, IR_F32);
  ir_ref v = source_coord(g, cm, 4, axis, L, out, sc);
  v = ir_binary(g, IR_MAX, ir_min(g, v, lastf), zero);
  ir_ref a = ir_min(g, ir_cast(g, v, IR_I64), last);
  ir_ref b = ir_min(g, ir_binary(g, IR_ADD, a, ir_scalar(g, IR_I64, 1)), last);
  ir_ref same = ir_eq(g, a, b);
  *d1 = ir_where(g, same, half, ir_abs(g, ir_sub(g, v, ir_cast(g, a, IR_F32))));
  *d2 = ir_where(g, same, half, ir_abs(g, ir_sub(g, v, ir_cast(g, b, IR_F32))));
  *i1 = ir_view_unsqueeze(g, a, axis + 1);
  *i2 = ir_view_unsqueeze(g, b, axis + 1);
}

/* x (of rank r) read at the indices idx ([.., out, 1, ..], rank r + 1)
 * along `axis` of length `in`: a one-hot select, which the gather rewrite
 * makes a read. */
static ir_ref pick_rt(imp_node *n, ir_ref x, int axis, ir_ref idx, int64_t in) {
  ir_graph *g = n->g;
  int r = imp_gshape(g, x).rank;
  ir_ref xv = ir_view_unsqueeze(g, x, axis), iota = ir_iota(g, imp_unit_shape(r + 1, axis + 1, in), axis + 1);
  return ir_view_squeeze(g, imp_select_sum(n, ir_eq(g, iota, idx), xv, axis + 1), axis + 1);
}

int imp_resize_bilinear_sym(imp_node *n, ir_ref x, const char *ctm, const double *scale, const int64_t *osz) {
  ir_graph *g = n->g;
  ir_shape s = imp_gshape(g, x);
  int64_t sym = ir_dim_is_sym(s.d[2]) ? s.d[2] : s.d[3];
  int cm = coord_mode_of(ctm);
  if (cm < 0 || cm == CT_TF_HALF_NN) return imp_fail_sym(n, sym, "a linear resize of a symbolic axis in this mode");
  ir_ref sc[2] = {axis_scale(n, scale[2], s.d[2], osz[2]), axis_scale(n, scale[3], s.d[3], osz[3])};
  if (sc[0] == IR_NONE || sc[1] == IR_NONE) return -1;
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

/* The input index onnxruntime's get_nearest_pixel gives for coordinate v
 * (int64 over v's shape): floor, ceil, round half away from zero
 * (round_prefer_ceil, as std::round), or that but floor at an exact
 * half (round_prefer_floor); from the truncation t and the fraction
 * v - t, which is exact. */
static ir_ref nearest_index(ir_graph *g, ir_ref v, int nn) {
  ir_ref t = ir_cast(g, v, IR_I64), tf = ir_cast(g, t, IR_F32), fr = ir_sub(g, v, tf);
  ir_ref one = ir_scalar(g, IR_I64, 1), half = ir_scalar(g, IR_F32, 0.5);
  ir_ref fl = ir_where(g, ir_binary(g, IR_LT, v, tf), ir_sub(g, t, one), t);
  if (nn == IMP_NN_FLOOR) return fl;
  if (nn == IMP_NN_CEIL) return ir_where(g, ir_binary(g, IR_LT, tf, v), ir_binary(g, IR_ADD, t, one), t);
  ir_ref rd = ir_where(g, ir_ge(g, fr, half), ir_binary(g, IR_ADD, t, one),
                       ir_where(g, ir_le(g, fr, ir_scalar(g, IR_F32, -0.5)), ir_sub(g, t, one), t));
  if (nn == IMP_NN_ROUND_CEIL) return rd;
  return ir_where(g, ir_eq(g, v, ir_binary(g, IR_ADD, tf, half)), fl, rd);
}

int imp_resize_nearest_sym(imp_node *n, ir_ref x, const char *ctm, int nn, const double *scale, const int64_t *osz) {
  ir_graph *g = n->g;
  ir_shape s = imp_gshape(g, x);
  int cm = coord_mode_of(ctm), r = s.rank, last_axis = -1;
  int64_t sym = 0;
  for (int a = 0; a < r; a++) {
    if (scale[a] != 1 || osz[a] != s.d[a]) last_axis = a;
    if (!sym && (ir_dim_is_sym(s.d[a]) || ir_dim_is_sym(osz[a]))) sym = ir_dim_is_sym(s.d[a]) ? s.d[a] : osz[a];
  }
  if (cm < 0) return imp_fail_sym(n, sym, "a nearest resize of a symbolic axis in this mode");
  ir_ref y = x;
  ir_shape s0 = {0};
  for (int a = 0; a <= last_axis; a++) {
    if (scale[a] == 1 && osz[a] == s.d[a]) continue;
    ir_ref sc = axis_scale(n, scale[a], s.d[a], osz[a]);
    if (sc == IR_NONE) return -1;
    ir_ref last = ir_load_int(g, IR_I64, s0, ir_dim_sub(s.d[a], 1));
    ir_ref i = nearest_index(g, source_coord(g, cm, r, a, s.d[a], osz[a], sc), nn);
    i = ir_binary(g, IR_MAX, ir_min(g, i, last), ir_scalar(g, IR_I64, 0));
    y = pick_rt(n, y, a, ir_view_unsqueeze(g, i, a + 1), s.d[a]);
    if (a < last_axis) y = ir_move(g, y); /* a pick of a pick is not made an indexed read */
  }
  return imp_set_out(n, 0, y);
}
