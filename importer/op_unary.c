/* op_unary.c — small elementwise ops: ThresholdedRelu, Shrink, IsInf, IsNaN,
 * BitShift, and LRN's windowed channel sum. */
#include "importer_impl.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- simple */

static int lower_thresholded_relu(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (!imp_need_float(n, x)) return -1;
  double alpha = imp_attr_f(n, "alpha", 1.0);
  return imp_set_out(n, 0, ir_where(g, ir_gt(g, x, imp_k(g, x, alpha)), x, imp_k(g, x, 0)));
}

static int lower_shrink(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  if (imp_dtype(n, x) == IR_F16 || imp_dtype(n, x) == IR_BOOL) return imp_fail(n, "dtype not supported");
  double l = imp_attr_f(n, "lambd", 0.5), b = imp_attr_f(n, "bias", 0.0);
  ir_ref lo = ir_binary(g, IR_LT, x, imp_k(g, x, -l)), hi = ir_gt(g, x, imp_k(g, x, l));
  ir_ref r = ir_where(g, hi, ir_sub(g, x, imp_k(g, x, b)), imp_k(g, x, 0));
  return imp_set_out(n, 0, ir_where(g, lo, ir_binary(g, IR_ADD, x, imp_k(g, x, b)), r));
}

static int lower_isinf(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (!imp_need_float(n, x)) return -1;
  bool pos = imp_attr_i(n, "detect_positive", 1) != 0, neg = imp_attr_i(n, "detect_negative", 1) != 0;
  ir_ref r = ir_load_int(g, IR_BOOL, imp_nshape(n, x), 0);
  if (pos) r = ir_binary(g, IR_OR, r, ir_eq(g, x, imp_k(g, x, INFINITY)));
  if (neg) r = ir_binary(g, IR_OR, r, ir_eq(g, x, imp_k(g, x, -INFINITY)));
  return imp_set_out(n, 0, r);
}

static int lower_isnan(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!imp_need_float(n, x)) return -1;
  return imp_set_out(n, 0, ir_binary(n->g, IR_NEQ, x, x));
}

/* x << s = x * 2^s and x >> s = x / 2^s, with 2^s assembled from the bits
 * of s (a product of WHERE(bit, 2^(2^b), 1)); shifts >= the width give 0. */
static int lower_bitshift(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), s = imp_req(n, 1);
  if (x == IR_NONE || s == IR_NONE) return -1;
  ir_dtype t = imp_dtype(n, x);
  if (t != IR_U8 && t != IR_U16 && t != IR_U32 && t != IR_U64)
    return imp_fail(n, "BitShift of %s is not supported (unsigned integers only)", ir_dtype_name(t));
  const char *dir = imp_attr_s(n, "direction", "");
  bool left = !strcmp(dir, "LEFT");
  if (!left && strcmp(dir, "RIGHT")) return imp_fail(n, "direction '%s' is not supported", dir);
  int width = (int)ir_dtype_size(t) * 8;
  ir_ref p = imp_k(g, s, 1);
  for (int b = 0; (1 << b) < width; b++) {
    ir_ref bit = ir_binary(g, IR_MOD, ir_binary(g, IR_IDIV, s, imp_k(g, s, (double)(1ull << b))), imp_k(g, s, 2));
    ir_ref f = ir_where(g, ir_binary(g, IR_NEQ, bit, imp_k(g, s, 0)), imp_k(g, s, ldexp(1.0, 1 << b)), imp_k(g, s, 1));
    p = ir_binary(g, IR_MUL, p, f);
  }
  ir_ref r = left ? ir_binary(g, IR_MUL, x, p) : ir_binary(g, IR_IDIV, x, p);
  ir_ref big = ir_ge(g, s, imp_k(g, s, width));
  return imp_set_out(n, 0, ir_where(g, big, imp_k(g, x, 0), r));
}

/* ------------------------------------------------------------------- LRN */

/* y = x / (bias + alpha/size * sum of x^2 over the channel window)^beta,
 * the window sum assembled from shifted (zero padded) views. */
static int lower_lrn(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (!imp_need_float(n, x)) return -1;
  ir_shape s = imp_nshape(n, x);
  int64_t size = imp_attr_i(n, "size", 0);
  double alpha = imp_attr_f(n, "alpha", 1e-4), beta = imp_attr_f(n, "beta", 0.75), bias = imp_attr_f(n, "bias", 1.0);
  if (s.rank < 2 || size < 1) return imp_fail(n, "needs rank >= 2 and size >= 1");
  if (ir_dim_is_sym(s.d[1])) return imp_fail_sym(n, s.d[1], "a symbolic channel axis");
  /* one slice and one ADD per tap: checked against the graph's budget first */
  if (size > INT64_MAX / 2 || ir_reserve(g, 2 * size)) return -1;
  int64_t C = s.d[1], before = (size - 1) / 2, after = size - 1 - before;
  ir_ref sq = ir_binary(g, IR_MUL, x, x);
  int64_t pb[IR_MAX_RANK] = {0}, pa[IR_MAX_RANK] = {0};
  pb[1] = before, pa[1] = after;
  ir_ref padded = ir_view_pad(g, sq, pb, pa, 0.0);
  int64_t st[IR_MAX_RANK], sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int i = 0; i < s.rank; i++) st[i] = 0, sp[i] = 1, ln[i] = s.d[i];
  ln[1] = C;
  ir_ref sum = IR_NONE;
  for (int64_t k = 0; k < size; k++) {
    st[1] = k;
    ir_ref v = ir_view_slice(g, padded, st, sp, ln);
    sum = sum == IR_NONE ? v : ir_binary(g, IR_ADD, sum, v);
  }
  ir_ref base = ir_binary(g, IR_ADD, ir_binary(g, IR_MUL, sum, imp_k(g, x, alpha / (double)size)), imp_k(g, x, bias));
  ir_ref den = ir_unary(g, IR_EXP2, ir_binary(g, IR_MUL, ir_unary(g, IR_LOG2, base), imp_k(g, x, beta)));
  return imp_set_out(n, 0, ir_div(g, x, den));
}


const imp_op_entry imp_ops_unary[] = {
    {"ThresholdedRelu", lower_thresholded_relu, IMP_SYM},
    {"Shrink", lower_shrink, IMP_SYM},
    {"IsInf", lower_isinf, IMP_SYM},
    {"IsNaN", lower_isnan, IMP_SYM},
    {"BitShift", lower_bitshift, IMP_SYM},
    {"LRN", lower_lrn, IMP_SYM},
    {NULL, NULL, 0},
};
