/* lower_util.c — IR-building helpers shared by several op families:
 * stacking, slicing and padding along one axis, per-axis parameters, the
 * quantization rounding, one-hot selection. */
#include "importer_impl.h"

#include <math.h>

ir_ref imp_clamp(ir_graph *g, ir_ref x, double lo, double hi) {
  return ir_min(g, ir_binary(g, IR_MAX, x, imp_k(g, x, lo)), imp_k(g, x, hi));
}

/* Stacks `parts` (each of size 1 on `axis`) along `axis`: each one is
 * padded with zeros to the full extent and the pieces are added. */
ir_ref imp_stack(ir_graph *g, const ir_ref *parts, int count, int axis) {
  ir_ref acc = IR_NONE;
  for (int i = 0; i < count; i++) {
    if (parts[i] == IR_NONE) return IR_NONE;
    int64_t b[IR_MAX_RANK] = {0}, e[IR_MAX_RANK] = {0};
    b[axis] = i, e[axis] = count - 1 - i;
    ir_ref p = ir_view_pad(g, parts[i], b, e, 0.0);
    acc = i == 0 ? p : imp_add(g, acc, p);
  }
  return acc;
}

/* Slice [start, start+len) of `axis`. */
ir_ref imp_take(ir_graph *g, ir_ref x, int axis, int64_t start, int64_t len) {
  if (x == IR_NONE) return IR_NONE;
  ir_shape s = imp_gshape(g, x);
  if (axis < 0 || axis >= s.rank) return ir_fail(g, "axis %d out of range for rank %d", axis, s.rank), IR_NONE;
  int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int i = 0; i < s.rank; i++) sp[i] = 1, ln[i] = s.d[i];
  st[axis] = start, ln[axis] = len;
  return ir_view_slice(g, x, st, sp, ln);
}

/* Inserts s-1 zeros between the elements of `axis`: [.., L, ..] ->
 * [.., L, 1, ..] padded to [.., L, s, ..], merged to L*s and cut to
 * (L-1)*s+1. */
ir_ref imp_dilate_axis(ir_graph *g, ir_ref x, int axis, int64_t s) {
  if (x == IR_NONE || s == 1) return x;
  ir_shape xs = imp_gshape(g, x);
  int64_t L = xs.d[axis]; /* may be symbolic */
  ir_ref u = ir_view_unsqueeze(g, x, axis + 1);
  int64_t b[IR_MAX_RANK] = {0}, e[IR_MAX_RANK] = {0};
  e[axis + 1] = s - 1;
  u = ir_view_pad(g, u, b, e, 0.0);
  ir_shape m = xs;
  m.d[axis] = ir_dim_mul(L, s);
  u = ir_view_reshape(g, u, m);
  return imp_take(g, u, axis, 0, ir_dim_add(ir_dim_mul(ir_dim_sub(L, 1), s), 1));
}

/* Pads (positive) or crops (negative) axis `axis` by b before and e after. */
ir_ref imp_pad_crop(ir_graph *g, ir_ref x, int axis, int64_t b, int64_t e) {
  if (x == IR_NONE) return IR_NONE;
  if (axis < 0 || axis >= imp_gshape(g, x).rank) return ir_fail(g, "axis %d out of range", axis), IR_NONE;
  int64_t pb[IR_MAX_RANK] = {0}, pe[IR_MAX_RANK] = {0};
  pb[axis] = b > 0 ? b : 0, pe[axis] = e > 0 ? e : 0;
  if (pb[axis] || pe[axis]) x = ir_view_pad(g, x, pb, pe, 0.0);
  if (b >= 0 && e >= 0) return x;
  ir_shape s = imp_gshape(g, x);
  int64_t cb = b < 0 ? -b : 0, ce = e < 0 ? -e : 0;
  return imp_take(g, x, axis, cb, ir_dim_sub(ir_dim_sub(s.d[axis], cb), ce)); /* may be symbolic */
}

/* A 1-D per-axis parameter reshaped to broadcast along `axis` of a rank-r
 * tensor; scalars and rank-0 tensors are returned unchanged. */
ir_ref imp_along(ir_graph *g, ir_ref v, int rank, int axis) {
  if (v == IR_NONE) return IR_NONE;
  ir_shape s = imp_gshape(g, v);
  if (s.rank != 1 || rank < 1) return v;
  ir_shape o = {.rank = rank};
  for (int i = 0; i < rank; i++) o.d[i] = i == axis ? s.d[0] : 1;
  if (s.d[0] == 1) o.d[axis] = 1;
  return ir_view_reshape(g, v, o);
}

/* Round half to even of a float tensor whose magnitude fits int64:
 * floor through an int64 cast, then step up when the fraction is above
 * one half, or exactly one half with an odd floor. */
ir_ref imp_round_even(ir_graph *g, ir_ref v) {
  ir_ref ti = ir_cast(g, v, IR_I64);
  ir_ref t = ir_cast(g, ti, imp_gdtype(g, v));
  ir_ref below = ir_binary(g, IR_LT, v, t);
  ir_ref f = ir_where(g, below, imp_add(g, t, imp_k(g, v, -1)), t);
  ir_ref fi = ir_where(g, below, imp_add(g, ti, imp_k(g, ti, -1)), ti);
  ir_ref d = ir_sub(g, v, f);
  ir_ref half = imp_k(g, v, 0.5);
  ir_ref odd = ir_binary(g, IR_NEQ, ir_binary(g, IR_MOD, fi, imp_k(g, fi, 2)), imp_k(g, fi, 0));
  ir_ref up = ir_binary(g, IR_OR, ir_binary(g, IR_LT, half, d), ir_binary(g, IR_AND, ir_eq(g, d, half), odd));
  return ir_where(g, up, imp_add(g, f, imp_k(g, v, 1)), f);
}

/* x / s rounded like an IEEE float32 division: computed in float64 and
 * rounded to float32 (then widened back to float64). */
ir_ref imp_div_f32(ir_graph *g, ir_ref x, ir_ref s) {
  ir_ref q = imp_mul(g, ir_cast(g, x, IR_F64), ir_unary(g, IR_RECIP, ir_cast(g, s, IR_F64)));
  return ir_cast(g, ir_cast(g, q, IR_F32), IR_F64);
}

bool imp_qrange(ir_dtype t, double *lo, double *hi) {
  switch (t) {
  case IR_U8: *lo = 0, *hi = 255; return true;
  case IR_I8: *lo = -128, *hi = 127; return true;
  case IR_U16: *lo = 0, *hi = 65535; return true;
  case IR_I16: *lo = -32768, *hi = 32767; return true;
  case IR_I32: *lo = -2147483648.0, *hi = 2147483647.0; return true;
  default: return false;
  }
}

/* v clamped to [lo, hi] by two selects (NaN passes): gcc vectorises
 * those, and not the max helper's short-circuit compare in a longer
 * expression. */
static ir_ref clamp_sel(ir_graph *g, ir_ref v, double lo, double hi) {
  v = ir_where(g, ir_binary(g, IR_LT, v, imp_k(g, v, lo)), imp_k(g, v, lo), v);
  return ir_where(g, ir_binary(g, IR_LT, imp_k(g, v, hi), v), imp_k(g, v, hi), v);
}

/* A float64 tensor with |v| < 2^51 rounded half to even by adding and
 * subtracting 1.5 * 2^52 (the sum's ulp is 1, the rounding IEEE's
 * default); NaN gives 0. It leaves contraction alone (imp_requant marks
 * the graph): callers whose ties need not fall as onnxruntime's may keep
 * their FMAs. */
ir_ref imp_round_even_f64(ir_graph *g, ir_ref v) {
  const double magic = 6755399441055744.0; /* 1.5 * 2^52 */
  ir_ref r = imp_add(g, imp_add(g, v, imp_k(g, v, magic)), imp_k(g, v, -magic));
  return ir_where(g, ir_binary(g, IR_NEQ, v, v), imp_k(g, v, 0), r);
}

/* saturate(round_half_even(v) + zp) cast to `out`; v is float64, zp any
 * integer tensor (or IR_NONE for zero). Every output range lies within
 * +-2^32, so v is clamped to +-2^40 first (the same saturation), and there
 * adding and subtracting 1.5 * 2^52 rounds it to an integer half to even
 * (the sum's ulp is 1, the rounding IEEE's default): a few vector
 * instructions, where imp_round_even's int64 floor and parity left gcc
 * scalar code with branches (DynamicQuantizeLinear + shift of 1M floats:
 * 13 ms, a third of a quantized conv net's time). NaN gives 0 + zp, as the
 * floor form did. */
ir_ref imp_requant(ir_graph *g, ir_ref v, ir_ref zp, ir_dtype out) {
  double lo = 0, hi = 0;
  imp_qrange(out, &lo, &hi);
  if (!ir_is_const(g, v)) ir_mark_rounds_computed(g);
  ir_ref r = imp_round_even_f64(g, clamp_sel(g, v, -0x1p40, 0x1p40));
  if (zp != IR_NONE) r = imp_add(g, r, ir_cast(g, zp, IR_F64));
  return ir_cast(g, clamp_sel(g, r, lo, hi), out);
}


/* An integer tensor minus its zero point, as int32; the weight zero point
 * may be per output channel (axis 0). */
ir_ref imp_shift_i32(ir_graph *g, ir_ref x, ir_ref zp, int zp_axis) {
  ir_ref v = ir_cast(g, x, IR_I32);
  if (zp == IR_NONE) return v;
  return ir_sub(g, v, ir_cast(g, imp_along(g, zp, imp_gshape(g, x).rank, zp_axis), IR_I32));
}

/* The requantization multiplier a_scale * b_scale / y_scale, as float32
 * arithmetic would compute it, broadcastable as given. */
ir_ref imp_qmultiplier(ir_graph *g, ir_ref as, ir_ref bs, ir_ref ys) {
  ir_ref ab = imp_mul(g, ir_cast(g, as, IR_F32), ir_cast(g, bs, IR_F32));
  return ir_cast(g, imp_div_f32(g, ab, ys), IR_F32);
}


/* float16 is stored as raw bits by the code generator: no arithmetic. */
bool imp_need_float(imp_node *n, ir_ref x) {
  if (x == IR_NONE) return false;
  ir_dtype t = imp_dtype(n, x);
  if (t != IR_F32 && t != IR_F64)
    return imp_fail(n, "input type %s is not supported (float32/float64 only)", ir_dtype_name(t)), false;
  return true;
}

/* Shape of `rank` ones with `len` at `axis`. */
ir_shape imp_unit_shape(int rank, int axis, int64_t len) {
  ir_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.d[i] = i == axis ? len : 1;
  return s;
}

/* Permutation of `rank` axes moving `axis` to the end. */
void imp_perm_to_last(int rank, int axis, int *perm) {
  int k = 0;
  for (int i = 0; i < rank; i++)
    if (i != axis) perm[k++] = i;
  perm[k] = axis;
}

/* ------------------------------------------------------- one-hot select */

/* hit where it is the last (highest position along `axis`) of the hits
 * of its line: where several inputs name one output, onnxruntime writes
 * them in order and the last stays (scatters under reduction none,
 * MaxUnpool); a sum of them is no order at all. */
ir_ref imp_last_hit(imp_node *n, ir_ref hit, int axis) {
  ir_graph *g = n->g;
  if (ir_failed(g)) return IR_NONE;
  ir_shape hs = ir_node_get(g, hit)->shape; /* a copy: new nodes move the graph */
  ir_ref j = ir_iota(g, imp_unit_shape(hs.rank, axis, hs.d[axis]), axis);
  ir_ref last = ir_max_reduce(g, ir_where(g, hit, j, imp_k(g, j, -1)), 1u << axis, true);
  return ir_binary(g, IR_AND, hit, ir_eq(g, j, last));
}

/* SUM over `axis` (kept) of WHERE(hit, v, 0); bool values are reduced
 * with MAX over a byte copy (an OR). */
ir_ref imp_select_sum(imp_node *n, ir_ref hit, ir_ref v, int axis) {
  ir_graph *g = n->g;
  bool is_bool = imp_gdtype(g, v) == IR_BOOL;
  if (is_bool) v = ir_cast(g, v, IR_U8);
  ir_ref picked = ir_where(g, hit, v, imp_k(g, v, 0));
  if (!is_bool) return ir_sum(g, picked, 1u << axis, true);
  return ir_binary(g, IR_NEQ, ir_max_reduce(g, picked, 1u << axis, true), ir_scalar(g, IR_U8, 0));
}
