/* op_misc.c — casts, constants, ranges, one-hot encodings and the static
 * shape queries (Shape, Size), all lowered onto IR leaves and primitives. */
#include "importer_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *onnx_type_name(int64_t t) {
  static const char *names[] = {"UNDEFINED", "FLOAT",  "UINT8",     "INT8",       "UINT16", "INT16",
                                "INT32",     "INT64",  "STRING",    "BOOL",       "FLOAT16", "DOUBLE",
                                "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
  return t >= 0 && t < (int64_t)(sizeof names / sizeof names[0]) ? names[t] : "an unknown type";
}

/* An ONNX data type (attribute `to`, `dtype`) as an ir dtype the runtime
 * handles; float16 and bfloat16 are computed as float32 (rounded after the
 * node, half.c); strings and the rest are refused. */
static int dtype_attr(imp_node *n, const char *attr, int64_t t) {
  int d = imp_dtype_from_onnx((int)t);
  if (d == IR_F16 || d == IR_BF16) return IR_F32;
  if (d < 0)
    return imp_fail(n, "attribute %s=%lld (%s) is not supported", attr, (long long)t, onnx_type_name(t));
  return d;
}


/* A few values read from shapes that hold symbols, cast to another type
 * (torch's x.std(dim): the count n - 1 as a float): each element becomes a
 * LOAD of its value, which the generated code computes from the symbols.
 * 1 when it set the output, 0 when x is no such constant, -1 on error. */
#define CAST_SYM_MAX 16
static int cast_sym_values(imp_node *n, ir_ref x, ir_dtype t) {
  ir_graph *g = n->g;
  int64_t sym = imp_sym_value(n, x);
  if (!sym || t == IR_I64) return 0;
  const ir_node *xn = ir_node_get(g, x);
  const ir_shape xs = xn->shape; /* copies: the graph grows below */
  const int64_t *v = xn->data;
  int64_t cnt = ir_shape_numel(&xs);
  if (cnt > CAST_SYM_MAX) return imp_fail_sym(n, sym, "a cast of more than 16 values read from a shape");
  ir_ref parts[CAST_SYM_MAX];
  ir_shape one = ir_shape_make(1, (int64_t[]){1});
  for (int64_t i = 0; i < cnt; i++) parts[i] = ir_load_int(g, IR_I64, one, v[i]);
  ir_ref r = ir_cast(g, ir_view_reshape(g, imp_stack(g, parts, (int)cnt, 0), xs), t);
  return imp_set_out(n, 0, r) ? -1 : 1;
}

static int lower_cast(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!imp_has_attr(n, "to")) return imp_fail(n, "attribute 'to' is missing");
  int t = dtype_attr(n, "to", imp_attr_i(n, "to", 0));
  if (t < 0 || x == IR_NONE) return -1;
  int k = imp_narrow_cast(n, x, (ir_dtype)t);
  if (!k) k = cast_sym_values(n, x, (ir_dtype)t);
  return k ? (k < 0 ? -1 : 0) : imp_set_out(n, 0, ir_cast(n->g, x, (ir_dtype)t));
}

static int lower_cast_like(imp_node *n) {
  ir_ref x = imp_req(n, 0), like = imp_req(n, 1);
  if (x == IR_NONE || like == IR_NONE) return -1;
  return imp_set_out(n, 0, ir_cast(n->g, x, imp_dtype(n, like)));
}

static int lower_identity(imp_node *n) { /* also of a sequence or optional */
  ir_ref r = imp_in_value(n, 0);
  return r == IR_NONE ? imp_fail(n, "input 0 is missing") : imp_set_out(n, 0, r);
}

/* A scalar LOAD of dtype t holding v, exact for 64-bit integers. */
static ir_ref scalar_of(ir_graph *g, ir_dtype t, double f, int64_t i) {
  ir_shape s = {0};
  return ir_dtype_is_float(t) ? ir_load(g, t, s, f) : ir_load_int(g, t, s, i);
}

/* ceil((limit - start) / delta) clamped at 0, in exact integer arithmetic. */
static int64_t range_count_int(int64_t start, int64_t limit, int64_t delta) {
  int64_t diff;
  if (__builtin_sub_overflow(limit, start, &diff)) return -1; /* the caller reports it */
  if (delta == -1 && diff == INT64_MIN) return -1;            /* diff / delta overflows */
  int64_t q = diff / delta;
  if (q * delta != diff && (diff < 0) == (delta < 0)) q++;
  return q > 0 ? q : 0;
}

/* The element count of an integer Range whose start or limit is symbolic
 * (Range(0, seq) of a raw export): delta must be +-1, so the count is exact. */
static int range_count_sym(imp_node *n, const int64_t *v, int64_t *cnt) {
  if (v[2] != 1 && v[2] != -1) return imp_fail_sym(n, ir_dim_is_sym(v[1]) ? v[1] : v[0], "Range with a delta other than 1 or -1");
  int64_t c = v[2] > 0 ? ir_dim_sub(v[1], v[0]) : ir_dim_sub(v[0], v[1]);
  unsigned k = ir_dim_cmp(n->g, c, 0);
  if (!(k & IR_CMP_GT)) c = 0;
  else if ((k & IR_CMP_LT) && ir_assume_nonneg(n->g, c, NULL)) return -1;
  *cnt = c;
  return 0;
}

/* The symbolic dimension a float scalar input holds when it is a
 * dimension read from a shape and cast (cast_sym_values: a CAST of views
 * of one symbolic LOAD), else 0: torch.arange(T) of a float dtype exports
 * Range(0.0, Cast(Gather(Shape(x))), 1.0). */
static int64_t float_sym_dim(imp_node *n, int i) {
  ir_graph *g = n->g;
  ir_ref r = imp_in(n, i);
  if (r == IR_NONE || !imp_has_syms(n)) return 0;
  const ir_node *x = ir_node_get(g, r);
  if (x->op != IR_CAST || !ir_dtype_is_float(x->dtype) || ir_shape_numel(&x->shape) != 1) return 0;
  x = ir_node_get(g, x->src[0]);
  while (x->op == IR_VIEW && ir_shape_numel(&x->shape) == 1) x = ir_node_get(g, x->src[0]);
  return x->op == IR_LOAD && x->sym_value && ir_shape_numel(&x->shape) == 1 ? x->ival : 0;
}

/* A float Range to a symbolic limit T (float_sym_dim): from a whole start
 * by 1 or -1, so its count is T - start (or start - T) and its values
 * whole numbers, exact in float32 while T <= 2^24, which the generated
 * code checks. Fills v with the integer start, limit and delta. */
static int float_range_sym(imp_node *n, int64_t lim, const double *f, int64_t *v) {
  if ((f[2] != 1 && f[2] != -1) || f[0] != floor(f[0]) || fabs(f[0]) > 0x1p24)
    return imp_fail_sym(n, lim, "a float Range to a symbolic limit other than from a whole start by 1 or -1");
  v[0] = (int64_t)f[0], v[1] = lim, v[2] = (int64_t)f[2];
  return ir_assume_nonneg(n->g, ir_dim_sub(INT64_C(1) << 24, lim), "a float Range's limit within float32's whole numbers (2^24)");
}

/* Range: start + delta * iota over the element count (symbolic when start
 * or limit is). */
static int lower_range(imp_node *n) {
  ir_ref s0 = imp_req(n, 0);
  if (s0 == IR_NONE) return -1;
  ir_dtype t = imp_dtype(n, s0);
  double f[3];
  int64_t v[3], flim = ir_dtype_is_float(t) ? float_sym_dim(n, 1) : 0;
  bool sym = false;
  for (int i = 0; i < 3; i++) {
    if (i == 1 && flim) continue;
    if (imp_const_dims(n, i, &v[i], 1) != 1) return ir_failed(n->g) ? -1 : imp_fail(n, "input %d must be a scalar", i);
    sym |= ir_dim_is_sym(v[i]) && imp_has_syms(n);
    if (!sym && imp_const_floats(n, i, &f[i], 1) != 1)
      return ir_failed(n->g) ? -1 : imp_fail(n, "input %d must be a scalar", i);
  }
  if (sym && (ir_dtype_is_float(t) || ir_dim_is_sym(v[2])))
    return imp_fail_sym(n, ir_dim_is_sym(v[2]) ? v[2] : v[1], "Range of symbolic floats or with a symbolic delta");
  if (!sym && !flim && f[2] == 0) return imp_fail(n, "delta must not be zero");
  int64_t cnt = 0;
  if (flim) {
    if (float_range_sym(n, flim, f, v) || range_count_sym(n, v, &cnt)) return -1;
  } else if (sym) {
    if (range_count_sym(n, v, &cnt)) return -1;
    f[0] = f[2] = 0;
  } else if (ir_dtype_is_float(t)) {
    double c = ceil((f[1] - f[0]) / f[2]);
    if (c != c || c > 1e15) return imp_fail(n, "the number of elements is not finite or too large");
    cnt = c > 0 ? (int64_t)c : 0;
  } else {
    if (v[2] == 0) return imp_fail(n, "delta is 0");
    cnt = range_count_int(v[0], v[1], v[2]);
    if (cnt < 0) return imp_fail(n, "limit - start overflows");
  }
  ir_graph *g = n->g;
  ir_shape s = {.rank = 1, .d = {cnt}};
  ir_ref k = ir_cast(g, ir_iota(g, s, 0), t);
  ir_ref r = ir_binary(g, IR_MUL, k, scalar_of(g, t, f[2], v[2]));
  return imp_set_out(n, 0, ir_binary(g, IR_ADD, r, scalar_of(g, t, f[0], v[0])));
}

/* Inference only: Dropout is the identity; the mask keeps every element.
 * A training_mode input that is (or may be) true with a non-zero ratio
 * would need random numbers, which are refused. */
static int lower_dropout(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  if (imp_has_in(n, 2)) {
    int64_t train = 0;
    double ratio = 0.5;
    if (imp_const_ints(n, 2, &train, 1) != 1) return -1;
    if (imp_has_in(n, 1) && imp_const_floats(n, 1, &ratio, 1) != 1) return -1;
    if (train && ratio != 0) return imp_fail(n, "training_mode=true (random dropout) is not supported");
  }
  if (imp_set_out(n, 0, x)) return -1;
  if (!imp_has_out(n, 1)) return 0;
  ir_dtype mt = n->opset >= 10 ? IR_BOOL : imp_dtype(n, x);
  return imp_set_out(n, 1, ir_load(n->g, mt, *imp_shape(n, x), 1));
}

/* value_floats / value_ints: a 1-D constant of the listed values. */
static ir_ref const_list(imp_node *n, const Onnx__AttributeProto *a, bool floats) {
  size_t cnt = floats ? a->n_floats : a->n_ints;
  ir_dtype t = floats ? IR_F32 : IR_I64;
  void *buf = calloc(cnt ? cnt : 1, ir_dtype_size(t));
  if (!buf) return imp_fail(n, "out of memory"), IR_NONE;
  for (size_t i = 0; i < cnt; i++)
    if (floats) ((float *)buf)[i] = a->floats[i];
    else ((int64_t *)buf)[i] = a->ints[i];
  ir_shape s = {.rank = 1, .d = {(int64_t)cnt}};
  ir_ref r = ir_const(n->g, n->proto->output[0], t, s, buf);
  free(buf);
  return r;
}

static int lower_constant(imp_node *n) {
  static const char *refused[] = {"sparse_value", "value_string", "value_strings"};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
    if (imp_has_attr(n, refused[i])) return imp_fail(n, "attribute '%s' is not supported", refused[i]);
  const Onnx__AttributeProto *a;
  ir_shape s0 = {0};
  if (imp_has_attr(n, "value")) return imp_set_out(n, 0, imp_attr_tensor(n, "value"));
  if (imp_has_attr(n, "value_float")) {
    float v = (float)imp_attr_f(n, "value_float", 0);
    return imp_set_out(n, 0, ir_const(n->g, n->proto->output[0], IR_F32, s0, &v));
  }
  if (imp_has_attr(n, "value_int")) {
    int64_t v = imp_attr_i(n, "value_int", 0);
    return imp_set_out(n, 0, ir_const(n->g, n->proto->output[0], IR_I64, s0, &v));
  }
  if ((a = imp_attr(n, "value_floats"))) return imp_set_out(n, 0, const_list(n, a, true));
  if ((a = imp_attr(n, "value_ints"))) return imp_set_out(n, 0, const_list(n, a, false));
  return imp_fail(n, "no value attribute");
}

/* ConstantOfShape: a LOAD of the one-element `value` tensor (float 0 by
 * default) broadcast to the shape given by the constant input. */
static int lower_constant_of_shape(imp_node *n) {
  int64_t dims[IR_MAX_RANK];
  int rank = imp_const_dims(n, 0, dims, IR_MAX_RANK);
  if (rank < 0) return -1;
  ir_shape s = ir_shape_make(rank, dims);
  if (!imp_has_attr(n, "value")) return imp_set_out(n, 0, ir_load(n->g, IR_F32, s, 0));
  ir_ref v = imp_attr_tensor(n, "value");
  if (v == IR_NONE) return -1;
  const ir_node *x = ir_node_get(n->g, v);
  if (ir_shape_numel(&x->shape) != 1) return imp_fail(n, "attribute 'value' must have one element");
  if (ir_dtype_is_float(x->dtype)) return imp_set_out(n, 0, ir_load(n->g, x->dtype, s, ir_elem_f(x->dtype, x->data, 0)));
  return imp_set_out(n, 0, ir_load_int(n->g, x->dtype, s, ir_elem_i(x->dtype, x->data, 0)));
}

/* EyeLike: ones where column - row == k, built from an index expression. */
static int lower_eye_like(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  const ir_shape s = imp_nshape(n, x); /* a copy: ir_scalar below may grow the graph first */
  if (s.rank != 2) return imp_fail(n, "input must be 2-D (rank %d given)", s.rank);
  int t = imp_has_attr(n, "dtype") ? dtype_attr(n, "dtype", imp_attr_i(n, "dtype", 0)) : (int)imp_dtype(n, x);
  if (t < 0) return -1;
  int64_t k = imp_attr_i(n, "k", 0), coef[2] = {-1, 1};
  /* past either edge the result is all zeros: clamped (to the size, or to
   * the largest a symbol may take), so -k cannot overflow */
  int64_t rows = ir_dim_is_sym(s.d[0]) ? IR_DIM_SYM_MAX : s.d[0];
  int64_t cols = ir_dim_is_sym(s.d[1]) ? IR_DIM_SYM_MAX : s.d[1];
  k = k < -rows ? -rows : k > cols ? cols : k;
  ir_graph *g = n->g;
  ir_ref diag = ir_eq(g, ir_index(g, s, coef, -k), ir_scalar(g, IR_I64, 0));
  return imp_set_out(n, 0, ir_cast(g, diag, (ir_dtype)t));
}

/* Element `i` of a 1-D tensor as a rank-0 view. */
static ir_ref element(ir_graph *g, ir_ref v, int64_t i) {
  int64_t start = i, step = 1, len = 1;
  ir_shape s0 = {0};
  return ir_view_reshape(g, ir_view_slice(g, v, &start, &step, &len), s0);
}

/* OneHot: compare an iota along the new axis with the (wrapped) indices
 * and select the on / off values. The depth must be a constant. */
static int lower_one_hot(imp_node *n) {
  ir_ref idx = imp_req(n, 0), vals = imp_req(n, 2);
  double depthf;
  if (idx == IR_NONE || vals == IR_NONE || imp_need_static(n, 1) || imp_need_static(n, 2)) return -1;
  if (imp_const_floats(n, 1, &depthf, 1) != 1) return ir_failed(n->g) ? -1 : imp_fail(n, "depth must be a scalar");
  int64_t depth = (int64_t)depthf;
  if (depth < 1) return imp_fail(n, "depth %lld must be positive", (long long)depth);
  const ir_shape *vs = imp_shape(n, vals);
  if (vs->rank != 1 || vs->d[0] != 2) return imp_fail(n, "values must be a 1-D tensor of 2 elements");
  ir_shape is = *imp_shape(n, idx);
  if (is.rank + 1 > IR_MAX_RANK) return imp_fail(n, "indices rank %d is too high", is.rank);
  int axis = imp_axis(n, imp_attr_i(n, "axis", -1), is.rank + 1);
  if (axis < 0) return -1;
  ir_shape os = {.rank = is.rank + 1};
  for (int i = 0, j = 0; i < os.rank; i++) os.d[i] = i == axis ? depth : is.d[j++];
  ir_graph *g = n->g;
  ir_ref i64 = ir_cast(g, idx, IR_I64), zero = ir_scalar(g, IR_I64, 0);
  ir_ref wrapped = ir_where(g, ir_binary(g, IR_LT, i64, zero),
                            ir_binary(g, IR_ADD, i64, ir_load_int(g, IR_I64, (ir_shape){0}, depth)), i64);
  ir_ref hot = ir_eq(g, ir_iota(g, os, axis), ir_view_unsqueeze(g, wrapped, axis));
  return imp_set_out(n, 0, ir_where(g, hot, element(g, vals, 1), element(g, vals, 0)));
}

/* Shape: the input's static dims in [start, end) (opset 15 attributes,
 * negative values count from the end, both clamped to [0, rank]). */
static int lower_shape(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = *imp_shape(n, x);
  int64_t r = s.rank, lo = imp_attr_i(n, "start", 0), hi = imp_attr_i(n, "end", r);
  if (lo < 0) lo += r;
  if (hi < 0) hi += r;
  lo = lo < 0 ? 0 : lo > r ? r : lo;
  hi = hi < 0 ? 0 : hi > r ? r : hi;
  int64_t len = hi > lo ? hi - lo : 0;
  ir_shape os = {.rank = 1, .d = {len}};
  return imp_set_out(n, 0, ir_const(n->g, n->proto->output[0], IR_I64, os, s.d + lo));
}

static int lower_size(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  int64_t numel = ir_shape_numel(imp_shape(n, x));
  ir_shape s0 = {0};
  return imp_set_out(n, 0, ir_const(n->g, n->proto->output[0], IR_I64, s0, &numel));
}

const imp_op_entry imp_ops_misc[] = {
    {"Cast", lower_cast, IMP_SYM},
    {"CastLike", lower_cast_like, IMP_SYM},
    {"Range", lower_range, IMP_SYM},
    {"Identity", lower_identity, IMP_SYM},
    {"Dropout", lower_dropout, IMP_SYM},
    {"Constant", lower_constant, IMP_SYM},
    {"ConstantOfShape", lower_constant_of_shape, IMP_SYM},
    {"EyeLike", lower_eye_like, IMP_SYM},
    {"OneHot", lower_one_hot, IMP_SYM},
    {"Shape", lower_shape, IMP_SYM},
    {"Size", lower_size, IMP_SYM},
    {NULL, NULL, 0},
};
