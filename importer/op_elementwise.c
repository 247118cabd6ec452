/* op_elementwise.c — element-wise math with numpy broadcasting. */
#include "importer_impl.h"

#include <math.h>

#define PI 3.14159265358979323846
#define HALF_PI 1.57079632679489661923

/* float16 is stored as raw bits by the code generator, so no arithmetic on it. */
static bool no_f16(imp_node *n, ir_ref x) {
  if (x != IR_NONE && imp_dtype(n, x) == IR_F16)
    return imp_fail(n, "float16 dtype not supported"), false;
  return x != IR_NONE;
}

static bool need_float(imp_node *n, ir_ref x) {
  if (!no_f16(n, x)) return false;
  if (!ir_dtype_is_float(imp_dtype(n, x)))
    return imp_fail(n, "input type %s is not supported (floating point only)", ir_dtype_name(imp_dtype(n, x))), false;
  return true;
}

/* The dtype of x; any dtype for IR_NONE, which later calls propagate anyway. */
static ir_dtype dt(ir_graph *g, ir_ref x) {
  return x < 0 ? IR_F32 : ir_node_get(g, x)->dtype;
}

/* A rank-0 constant of x's dtype. */
static ir_ref K(ir_graph *g, ir_ref x, double v) {
  if (x == IR_NONE) return IR_NONE;
  return ir_scalar(g, dt(g, x), v);
}

static ir_ref add(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_ADD, a, b);
}
static ir_ref mul(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_MUL, a, b);
}
static ir_ref max2(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_MAX, a, b);
}
static ir_ref lt(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_LT, a, b);
}
static ir_ref addk(ir_graph *g, ir_ref a, double v) {
  return add(g, a, K(g, a, v));
}
static ir_ref mulk(ir_graph *g, ir_ref a, double v) {
  return mul(g, a, K(g, a, v));
}
static ir_ref neg(ir_graph *g, ir_ref a) {
  return ir_unary(g, IR_NEG, a);
}

/* Evaluate f in float64 when x is float32, so that composite formulas
 * (trig identities, rational approximations) keep full float32 accuracy. */
static ir_ref wide(ir_graph *g, ir_ref x, ir_ref (*f)(ir_graph *, ir_ref)) {
  if (x == IR_NONE) return IR_NONE;
  if (dt(g, x) != IR_F32) return f(g, x);
  return ir_cast(g, f(g, ir_cast(g, x, IR_F64)), IR_F32);
}

static int binary(imp_node *n, ir_ref (*f)(ir_graph *, ir_ref, ir_ref)) {
  ir_ref a = imp_req(n, 0), b = imp_req(n, 1);
  if (!no_f16(n, a) || !no_f16(n, b)) return -1;
  return imp_set_out(n, 0, f(n->g, a, b));
}

static int lower_add(imp_node *n) {
  return binary(n, add);
}
static int lower_sub(imp_node *n) {
  return binary(n, ir_sub);
}
static int lower_mul(imp_node *n) {
  return binary(n, mul);
}
static int lower_div(imp_node *n) {
  return binary(n, ir_div);
}

static int lower_neg(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!no_f16(n, x)) return -1;
  return imp_set_out(n, 0, neg(n->g, x));
}

static int lower_abs(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!no_f16(n, x)) return -1;
  return imp_set_out(n, 0, ir_abs(n->g, x));
}

static int lower_relu(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!no_f16(n, x)) return -1;
  return imp_set_out(n, 0, max2(n->g, x, K(n->g, x, 0)));
}

/* sign(x) = -1, 1, or x itself (0 and NaN stay). */
static ir_ref sign(ir_graph *g, ir_ref x) {
  ir_ref pos = ir_where(g, lt(g, K(g, x, 0), x), K(g, x, 1), x);
  if (!ir_dtype_is_signed(dt(g, x))) return pos;
  return ir_where(g, lt(g, x, K(g, x, 0)), K(g, x, -1), pos);
}

static int lower_sign(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!no_f16(n, x)) return -1;
  return imp_set_out(n, 0, sign(n->g, x));
}

/* Largest magnitude below which a float of this dtype can have a fraction. */
static double frac_limit(ir_dtype t) {
  return t == IR_F64 ? 4503599627370496.0 : 8388608.0;
}

/* Truncation toward zero through int64; values that are already integral
 * (|x| >= 2^23 / 2^52), infinities and NaN are kept as they are. */
static ir_ref trunc_f(ir_graph *g, ir_ref x) {
  ir_ref t = ir_cast(g, ir_cast(g, x, IR_I64), dt(g, x));
  ir_ref small = lt(g, ir_abs(g, x), K(g, x, frac_limit(dt(g, x))));
  return ir_where(g, small, t, x);
}

static ir_ref floor_f(ir_graph *g, ir_ref x) {
  ir_ref t = trunc_f(g, x);
  return ir_where(g, lt(g, x, t), addk(g, t, -1), t);
}

static ir_ref ceil_f(ir_graph *g, ir_ref x) {
  ir_ref t = trunc_f(g, x);
  return ir_where(g, lt(g, t, x), addk(g, t, 1), t);
}

/* Round half to even: floor, then step up when the fraction is above one
 * half, or exactly one half and the floor is odd. */
static ir_ref round_f(ir_graph *g, ir_ref x) {
  ir_ref f = floor_f(g, x);
  ir_ref d = ir_sub(g, x, f);
  ir_ref half = K(g, x, 0.5);
  ir_ref odd = ir_binary(g, IR_NEQ, ir_binary(g, IR_MOD, f, K(g, x, 2)), K(g, x, 0));
  ir_ref up = ir_binary(g, IR_OR, lt(g, half, d), ir_binary(g, IR_AND, ir_eq(g, d, half), odd));
  return ir_where(g, up, addk(g, f, 1), f);
}

/* Rounding of integer tensors is the identity. */
static int rounding(imp_node *n, ir_ref (*f)(ir_graph *, ir_ref)) {
  ir_ref x = imp_req(n, 0);
  if (!no_f16(n, x)) return -1;
  if (!ir_dtype_is_float(imp_dtype(n, x))) return imp_set_out(n, 0, x);
  return imp_set_out(n, 0, f(n->g, x));
}

static int lower_floor(imp_node *n) {
  return rounding(n, floor_f);
}
static int lower_ceil(imp_node *n) {
  return rounding(n, ceil_f);
}
static int lower_round(imp_node *n) {
  return rounding(n, round_f);
}

static ir_ref cos_f(ir_graph *g, ir_ref x) {
  return ir_unary(g, IR_SIN, addk(g, x, HALF_PI));
}
static ir_ref sin_f(ir_graph *g, ir_ref x) {
  return ir_unary(g, IR_SIN, x);
}
static ir_ref tan_f(ir_graph *g, ir_ref x) {
  return ir_div(g, sin_f(g, x), cos_f(g, x));
}

/* erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7):
 * erf(|x|) = 1 - t(a1 + t(a2 + ... a5 t)) e^{-x^2}, t = 1 / (1 + p|x|). */
static ir_ref erf_f(ir_graph *g, ir_ref x) {
  static const double a[5] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  ir_ref ax = ir_abs(g, x);
  ir_ref t = ir_unary(g, IR_RECIP, addk(g, mulk(g, ax, 0.3275911), 1));
  ir_ref poly = K(g, x, a[4]);
  for (int i = 3; i >= 0; i--) poly = addk(g, mul(g, poly, t), a[i]);
  poly = mul(g, poly, t);
  ir_ref e = ir_exp(g, neg(g, mul(g, x, x)));
  ir_ref r = ir_sub(g, K(g, x, 1), mul(g, poly, e));
  return ir_where(g, lt(g, x, K(g, x, 0)), neg(g, r), r);
}

/* atan on [0, 1]: two half-angle steps atan(y) = 2 atan(y / (1 + sqrt(1 + y^2)))
 * bring y below tan(pi/16), where 9 terms of the Taylor series suffice. */
static ir_ref atan01(ir_graph *g, ir_ref y) {
  for (int i = 0; i < 2; i++) {
    ir_ref s = ir_unary(g, IR_SQRT, addk(g, mul(g, y, y), 1));
    y = ir_div(g, y, addk(g, s, 1));
  }
  ir_ref y2 = mul(g, y, y), poly = K(g, y, 1.0 / 17);
  for (int k = 7; k >= 0; k--) poly = addk(g, mul(g, poly, neg(g, y2)), 1.0 / (2 * k + 1));
  return mulk(g, mul(g, poly, y), 4);
}

/* atan(x) = sign(x) * (|x| <= 1 ? atan01(|x|) : pi/2 - atan01(1/|x|)). */
static ir_ref atan_f(ir_graph *g, ir_ref x) {
  ir_ref ax = ir_abs(g, x);
  ir_ref big = lt(g, K(g, x, 1), ax);
  ir_ref y = ir_where(g, big, ir_unary(g, IR_RECIP, ax), ax);
  ir_ref a = atan01(g, y);
  a = ir_where(g, big, ir_sub(g, K(g, x, HALF_PI), a), a);
  return ir_where(g, lt(g, x, K(g, x, 0)), neg(g, a), a);
}

/* asin(x) = atan(x / sqrt(1 - x^2)); |x| > 1 gives NaN through the sqrt. */
static ir_ref asin_f(ir_graph *g, ir_ref x) {
  ir_ref c = ir_unary(g, IR_SQRT, ir_sub(g, K(g, x, 1), mul(g, x, x)));
  return atan_f(g, ir_div(g, x, c));
}
static ir_ref acos_f(ir_graph *g, ir_ref x) {
  return ir_sub(g, K(g, x, HALF_PI), asin_f(g, x));
}
static ir_ref sinh_f(ir_graph *g, ir_ref x) {
  return mulk(g, ir_sub(g, ir_exp(g, x), ir_exp(g, neg(g, x))), 0.5);
}
static ir_ref cosh_f(ir_graph *g, ir_ref x) {
  return mulk(g, add(g, ir_exp(g, x), ir_exp(g, neg(g, x))), 0.5);
}
/* asinh(x) = sign(x) log(|x| + sqrt(x^2 + 1)) avoids cancellation for x < 0. */
static ir_ref asinh_f(ir_graph *g, ir_ref x) {
  ir_ref ax = ir_abs(g, x);
  ir_ref r = ir_log(g, add(g, ax, ir_unary(g, IR_SQRT, addk(g, mul(g, x, x), 1))));
  return ir_where(g, lt(g, x, K(g, x, 0)), neg(g, r), r);
}
static ir_ref acosh_f(ir_graph *g, ir_ref x) {
  return ir_log(g, add(g, x, ir_unary(g, IR_SQRT, addk(g, mul(g, x, x), -1))));
}
static ir_ref atanh_f(ir_graph *g, ir_ref x) {
  ir_ref q = ir_div(g, addk(g, x, 1), ir_sub(g, K(g, x, 1), x));
  return mulk(g, ir_log(g, q), 0.5);
}

/* softplus(x) = max(x, 0) + log(1 + exp(-|x|)), stable for large |x|. */
static ir_ref softplus_f(ir_graph *g, ir_ref x) {
  ir_ref e = ir_exp(g, neg(g, ir_abs(g, x)));
  return add(g, max2(g, x, K(g, x, 0)), ir_log(g, addk(g, e, 1)));
}
static ir_ref softsign_f(ir_graph *g, ir_ref x) {
  return ir_div(g, x, addk(g, ir_abs(g, x), 1));
}

#define FLOAT_UNARY(fname, expr)                                                                   \
  static int fname(imp_node *n) {                                                                  \
    ir_ref x = imp_req(n, 0);                                                                           \
    if (!need_float(n, x)) return -1;                                                              \
    ir_graph *g = n->g;                                                                            \
    (void)g;                                                                                       \
    return imp_set_out(n, 0, expr);                                                                \
  }

FLOAT_UNARY(lower_sqrt, ir_unary(g, IR_SQRT, x))
FLOAT_UNARY(lower_exp, ir_exp(g, x))
FLOAT_UNARY(lower_log, ir_log(g, x))
FLOAT_UNARY(lower_sigmoid, ir_sigmoid(g, x))
FLOAT_UNARY(lower_tanh, ir_tanh(g, x))
FLOAT_UNARY(lower_reciprocal, ir_unary(g, IR_RECIP, x))
FLOAT_UNARY(lower_sin, wide(g, x, sin_f))
FLOAT_UNARY(lower_cos, wide(g, x, cos_f))
FLOAT_UNARY(lower_tan, wide(g, x, tan_f))
FLOAT_UNARY(lower_erf, wide(g, x, erf_f))
FLOAT_UNARY(lower_atan, wide(g, x, atan_f))
FLOAT_UNARY(lower_asin, wide(g, x, asin_f))
FLOAT_UNARY(lower_acos, wide(g, x, acos_f))
FLOAT_UNARY(lower_sinh, wide(g, x, sinh_f))
FLOAT_UNARY(lower_cosh, wide(g, x, cosh_f))
FLOAT_UNARY(lower_asinh, wide(g, x, asinh_f))
FLOAT_UNARY(lower_acosh, wide(g, x, acosh_f))
FLOAT_UNARY(lower_atanh, wide(g, x, atanh_f))
FLOAT_UNARY(lower_softplus, wide(g, x, softplus_f))
FLOAT_UNARY(lower_softsign, softsign_f(g, x))

/* x < 0 ? neg : x */
static ir_ref neg_branch(ir_graph *g, ir_ref x, ir_ref negv) {
  return ir_where(g, lt(g, x, K(g, x, 0)), negv, x);
}

static int lower_leakyrelu(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  double alpha = imp_attr_f(n, "alpha", 0.01);
  return imp_set_out(n, 0, neg_branch(n->g, x, mulk(n->g, x, alpha)));
}

/* alpha * (exp(x) - 1), the negative branch of Elu. */
static ir_ref expm1_scaled(ir_graph *g, ir_ref x, double alpha) {
  return mulk(g, addk(g, ir_exp(g, x), -1), alpha);
}

static int lower_elu(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  double alpha = imp_attr_f(n, "alpha", 1.0);
  return imp_set_out(n, 0, neg_branch(n->g, x, expm1_scaled(n->g, x, alpha)));
}

static int lower_selu(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  double alpha = imp_attr_f(n, "alpha", 1.67326319217681884765625);
  double gamma = imp_attr_f(n, "gamma", 1.05070102214813232421875);
  ir_graph *g = n->g;
  ir_ref v = ir_where(g, ir_le(g, x, K(g, x, 0)), expm1_scaled(g, x, alpha), x);
  return imp_set_out(n, 0, mulk(g, v, gamma));
}

/* celu(x) = max(0, x) + min(0, alpha (exp(x / alpha) - 1)) */
static int lower_celu(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  double alpha = imp_attr_f(n, "alpha", 1.0);
  if (alpha == 0) return imp_fail(n, "Celu with alpha=0");
  ir_graph *g = n->g;
  ir_ref e = expm1_scaled(g, mulk(g, x, 1.0 / alpha), alpha);
  return imp_set_out(n, 0, neg_branch(g, x, e));
}

/* max(0, min(1, alpha x + beta)) */
static ir_ref hard_sigmoid(ir_graph *g, ir_ref x, double alpha, double beta) {
  ir_ref v = addk(g, mulk(g, x, alpha), beta);
  return max2(g, ir_min(g, v, K(g, x, 1)), K(g, x, 0));
}

static int lower_hardsigmoid(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  double alpha = imp_attr_f(n, "alpha", 0.2), beta = imp_attr_f(n, "beta", 0.5);
  return imp_set_out(n, 0, hard_sigmoid(n->g, x, alpha, beta));
}

static int lower_hardswish(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  return imp_set_out(n, 0, mul(n->g, x, hard_sigmoid(n->g, x, 1.0 / 6, 0.5)));
}

/* Before opset 7 PRelu had no broadcasting rule: a slope of C values
 * applies along axis 1, the channels (PyTorch's nn.PReLU(C) exports so at
 * opset 6; pytorch-converted/test_PReLU_*_multiparam). From opset 7 the
 * slope broadcasts to X as numpy does. */
static int lower_prelu(imp_node *n) {
  ir_ref x = imp_req(n, 0), slope = imp_req(n, 1);
  if (!no_f16(n, x) || !no_f16(n, slope)) return -1;
  ir_shape xs = imp_nshape(n, x), ss = imp_nshape(n, slope);
  if (n->opset < 7 && ss.rank == 1 && ss.d[0] > 1 && xs.rank >= 2 && xs.d[1] == ss.d[0])
    slope = imp_along(n->g, slope, xs.rank, 1);
  return imp_set_out(n, 0, neg_branch(n->g, x, mul(n->g, x, slope)));
}

/* Clip bounds are inputs 1 and 2 from opset 11, attributes before; an
 * absent bound (or an infinite attribute default) means no bound. */
static int lower_clip(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!no_f16(n, x)) return -1;
  ir_graph *g = n->g;
  ir_ref lo = IR_NONE, hi = IR_NONE;
  if (n->opset >= 11) {
    if (imp_has_in(n, 1)) lo = imp_req(n, 1);
    if (imp_has_in(n, 2)) hi = imp_req(n, 2);
    if (ir_failed(g)) return -1;
  } else {
    if (imp_has_attr(n, "min")) lo = K(g, x, imp_attr_f(n, "min", 0));
    if (imp_has_attr(n, "max")) hi = K(g, x, imp_attr_f(n, "max", 0));
  }
  if (lo != IR_NONE) x = max2(g, x, lo);
  if (hi != IR_NONE) x = ir_min(g, x, hi);
  return imp_set_out(n, 0, x);
}

/* Mod: fmod=1 truncates (C fmod / %); fmod=0 gives the result the sign of
 * the divisor, as numpy: add b when the remainder is non-zero and its sign
 * differs from b's. */
static int lower_mod(imp_node *n) {
  ir_ref a = imp_req(n, 0), b = imp_req(n, 1);
  if (!no_f16(n, a) || !no_f16(n, b)) return -1;
  ir_graph *g = n->g;
  ir_ref r = ir_binary(g, IR_MOD, a, b);
  if (imp_attr_i(n, "fmod", 0) || !ir_dtype_is_signed(imp_dtype(n, a)))
    return imp_set_out(n, 0, r);
  ir_ref z = K(g, a, 0);
  ir_ref differ = ir_binary(g, IR_NEQ, lt(g, r, z), lt(g, b, z));
  ir_ref fix = ir_binary(g, IR_AND, ir_binary(g, IR_NEQ, r, z), differ);
  return imp_set_out(n, 0, ir_where(g, fix, add(g, r, b), r));
}

/* The value of a constant scalar input, or NAN when it is not one. */
static double const_scalar(imp_node *n, ir_ref r, int i) {
  const ir_shape *s = imp_shape(n, r);
  if (!s || ir_shape_numel(s) != 1 || !ir_is_const(n->g, r)) return NAN;
  double v;
  return imp_const_floats(n, i, &v, 1) == 1 ? v : NAN;
}

/* Pow for floating a (b already of a's dtype): a^b by ir_pow in float64,
 * NaN for a negative base with a non-integral exponent. */
static ir_ref pow_f(ir_graph *g, ir_ref a, ir_ref b) {
  ir_dtype t = dt(g, a);
  if (t == IR_F32) a = ir_cast(g, a, IR_F64), b = ir_cast(g, b, IR_F64);
  ir_ref p = ir_pow(g, a, b);
  ir_ref frac = ir_binary(g, IR_NEQ, ir_binary(g, IR_MOD, b, K(g, b, 1)), K(g, b, 0));
  ir_ref bad = ir_binary(g, IR_AND, lt(g, a, K(g, a, 0)), frac);
  p = ir_where(g, bad, K(g, p, NAN), p);
  return t == IR_F32 ? ir_cast(g, p, IR_F32) : p;
}

/* Pow: the result has the base's dtype. Exponents 2 and 0.5 (constant
 * scalars) are exact MUL / SQRT; integer bases are computed in float64 and
 * rounded back. */
static int lower_pow(imp_node *n) {
  ir_ref a = imp_req(n, 0), b = imp_req(n, 1);
  if (!no_f16(n, a) || !no_f16(n, b)) return -1;
  ir_graph *g = n->g;
  ir_dtype ta = imp_dtype(n, a);
  double e = const_scalar(n, b, 1);
  if (ir_failed(g)) return -1;
  /* a one-element exponent of no higher rank does not change a's shape */
  bool keeps_shape = imp_shape(n, b)->rank <= imp_shape(n, a)->rank;
  if (keeps_shape && ir_dtype_is_float(ta) && e == 2) return imp_set_out(n, 0, mul(g, a, a));
  if (keeps_shape && ir_dtype_is_float(ta) && e == 0.5)
    return imp_set_out(n, 0, ir_unary(g, IR_SQRT, a));
  if (ir_dtype_is_float(ta)) return imp_set_out(n, 0, pow_f(g, a, ir_cast(g, b, ta)));
  ir_ref p = pow_f(g, ir_cast(g, a, IR_F64), ir_cast(g, b, IR_F64));
  return imp_set_out(n, 0, ir_cast(g, round_f(g, p), ta));
}

/* Sum / Min / Max / Mean fold their inputs pairwise with broadcasting. */
static ir_ref fold(imp_node *n, ir_ref (*f)(ir_graph *, ir_ref, ir_ref)) {
  if (imp_nin(n) < 1) return imp_fail(n, "needs at least one input"), IR_NONE;
  ir_ref acc = imp_req(n, 0);
  if (!no_f16(n, acc)) return IR_NONE;
  for (int i = 1; i < imp_nin(n); i++) {
    ir_ref x = imp_req(n, i);
    if (!no_f16(n, x)) return IR_NONE;
    acc = f(n->g, acc, x);
  }
  return acc;
}

static int lower_sum(imp_node *n) {
  return imp_set_out(n, 0, fold(n, add));
}
static int lower_max(imp_node *n) {
  return imp_set_out(n, 0, fold(n, max2));
}
static int lower_min(imp_node *n) {
  return imp_set_out(n, 0, fold(n, ir_min));
}
static int lower_mean(imp_node *n) {
  ir_ref s = fold(n, add);
  if (s == IR_NONE) return -1;
  if (!ir_dtype_is_float(imp_dtype(n, s))) return imp_fail(n, "Mean of an integer tensor");
  return imp_set_out(n, 0, mulk(n->g, s, 1.0 / imp_nin(n)));
}

const imp_op_entry imp_ops_elementwise[] = {
    {"Add", lower_add, IMP_SYM},
    {"Sub", lower_sub, IMP_SYM},
    {"Mul", lower_mul, IMP_SYM},
    {"Div", lower_div, IMP_SYM},
    {"Neg", lower_neg, IMP_SYM},
    {"Abs", lower_abs, IMP_SYM},
    {"Sign", lower_sign, IMP_SYM},
    {"Relu", lower_relu, IMP_SYM},
    {"Sqrt", lower_sqrt, IMP_SYM},
    {"Exp", lower_exp, IMP_SYM},
    {"Log", lower_log, IMP_SYM},
    {"Pow", lower_pow, IMP_SYM},
    {"Sigmoid", lower_sigmoid, IMP_SYM},
    {"Tanh", lower_tanh, IMP_SYM},
    {"Reciprocal", lower_reciprocal, IMP_SYM},
    {"Floor", lower_floor, IMP_SYM},
    {"Ceil", lower_ceil, IMP_SYM},
    {"Round", lower_round, IMP_SYM},
    {"Sin", lower_sin, IMP_SYM},
    {"Cos", lower_cos, IMP_SYM},
    {"Tan", lower_tan, IMP_SYM},
    {"Erf", lower_erf, IMP_SYM},
    {"Asin", lower_asin, IMP_SYM},
    {"Acos", lower_acos, IMP_SYM},
    {"Atan", lower_atan, IMP_SYM},
    {"Sinh", lower_sinh, IMP_SYM},
    {"Cosh", lower_cosh, IMP_SYM},
    {"Asinh", lower_asinh, IMP_SYM},
    {"Acosh", lower_acosh, IMP_SYM},
    {"Atanh", lower_atanh, IMP_SYM},
    {"LeakyRelu", lower_leakyrelu, IMP_SYM},
    {"Elu", lower_elu, IMP_SYM},
    {"Selu", lower_selu, IMP_SYM},
    {"Celu", lower_celu, IMP_SYM},
    {"HardSigmoid", lower_hardsigmoid, IMP_SYM},
    {"HardSwish", lower_hardswish, IMP_SYM},
    {"Softplus", lower_softplus, IMP_SYM},
    {"Softsign", lower_softsign, IMP_SYM},
    {"PRelu", lower_prelu, IMP_SYM},
    {"Clip", lower_clip, IMP_SYM},
    {"Mod", lower_mod, IMP_SYM},
    {"Sum", lower_sum, IMP_SYM},
    {"Mean", lower_mean, IMP_SYM},
    {"Max", lower_max, IMP_SYM},
    {"Min", lower_min, IMP_SYM},
    {NULL, NULL, 0},
};
