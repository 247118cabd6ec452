/* op_extra.c — lowering of the extra op family: resampling (Resize,
 * Upsample, DepthToSpace, SpaceToDepth), small activations and tests
 * (ThresholdedRelu, Shrink, IsInf, IsNaN, BitShift), LRN, the signal
 * windows, and the data-dependent selections (ReverseSequence, the Scatter
 * family, TopK) written as one-hot compares of an iota with an index
 * reduced by SUM/MAX, plus Einsum as broadcast MUL + SUM. */
#include "importer_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

static ir_ref in(imp_node *n, int i) {
  ir_ref r = imp_in(n, i);
  if (r == IR_NONE && !ir_failed(n->g)) imp_fail(n, "input %d is missing", i);
  return r;
}

static ir_dtype dt(ir_graph *g, ir_ref x) {
  return x < 0 ? IR_F32 : ir_node_get(g, x)->dtype;
}

static ir_ref K(ir_graph *g, ir_ref x, double v) {
  if (x == IR_NONE) return IR_NONE;
  return ir_scalar(g, dt(g, x), v);
}

static ir_shape shape_of(imp_node *n, ir_ref r) {
  return *imp_shape(n, r);
}

/* float16 is stored as raw bits by the code generator: no arithmetic. */
static bool need_float(imp_node *n, ir_ref x) {
  if (x == IR_NONE) return false;
  ir_dtype t = imp_dtype(n, x);
  if (t != IR_F32 && t != IR_F64)
    return imp_fail(n, "input type %s is not supported (float32/float64 only)", ir_dtype_name(t)), false;
  return true;
}

/* Shape of `rank` ones with `len` at `axis`. */
static ir_shape unit_shape(int rank, int axis, int64_t len) {
  ir_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.d[i] = i == axis ? len : 1;
  return s;
}

/* Permutation of `rank` axes moving `axis` to the end. */
__attribute__((unused)) static void perm_to_last(int rank, int axis, int *perm) {
  int k = 0;
  for (int i = 0; i < rank; i++)
    if (i != axis) perm[k++] = i;
  perm[k] = axis;
}

/* Indices as int64, negative values wrapped by adding `v`. */
__attribute__((unused)) static ir_ref wrap_indices(imp_node *n, ir_ref idx, int64_t v) {
  ir_graph *g = n->g;
  if (idx == IR_NONE) return IR_NONE;
  ir_dtype t = imp_dtype(n, idx);
  if (t != IR_I32 && t != IR_I64)
    return imp_fail(n, "indices of type %s are not supported", ir_dtype_name(t)), IR_NONE;
  idx = ir_cast(g, idx, IR_I64);
  ir_ref neg = ir_binary(g, IR_LT, idx, ir_scalar(g, IR_I64, 0));
  return ir_where(g, neg, ir_binary(g, IR_ADD, idx, ir_scalar(g, IR_I64, (double)v)), idx);
}

/* ---------------------------------------------------------------- simple */

static int lower_thresholded_relu(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = in(n, 0);
  if (!need_float(n, x)) return -1;
  double alpha = imp_attr_f(n, "alpha", 1.0);
  return imp_set_out(n, 0, ir_where(g, ir_gt(g, x, K(g, x, alpha)), x, K(g, x, 0)));
}

static int lower_shrink(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = in(n, 0);
  if (x == IR_NONE) return -1;
  if (imp_dtype(n, x) == IR_F16 || imp_dtype(n, x) == IR_BOOL) return imp_fail(n, "dtype not supported");
  double l = imp_attr_f(n, "lambd", 0.5), b = imp_attr_f(n, "bias", 0.0);
  ir_ref lo = ir_binary(g, IR_LT, x, K(g, x, -l)), hi = ir_gt(g, x, K(g, x, l));
  ir_ref r = ir_where(g, hi, ir_sub(g, x, K(g, x, b)), K(g, x, 0));
  return imp_set_out(n, 0, ir_where(g, lo, ir_binary(g, IR_ADD, x, K(g, x, b)), r));
}

static int lower_isinf(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = in(n, 0);
  if (!need_float(n, x)) return -1;
  bool pos = imp_attr_i(n, "detect_positive", 1) != 0, neg = imp_attr_i(n, "detect_negative", 1) != 0;
  ir_ref r = ir_load_int(g, IR_BOOL, shape_of(n, x), 0);
  if (pos) r = ir_binary(g, IR_OR, r, ir_eq(g, x, K(g, x, INFINITY)));
  if (neg) r = ir_binary(g, IR_OR, r, ir_eq(g, x, K(g, x, -INFINITY)));
  return imp_set_out(n, 0, r);
}

static int lower_isnan(imp_node *n) {
  ir_ref x = in(n, 0);
  if (!need_float(n, x)) return -1;
  return imp_set_out(n, 0, ir_binary(n->g, IR_NEQ, x, x));
}

/* x << s = x * 2^s and x >> s = x / 2^s, with 2^s assembled from the bits
 * of s (a product of WHERE(bit, 2^(2^b), 1)); shifts >= the width give 0. */
static int lower_bitshift(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = in(n, 0), s = in(n, 1);
  if (x == IR_NONE || s == IR_NONE) return -1;
  ir_dtype t = imp_dtype(n, x);
  if (t != IR_U8 && t != IR_U16 && t != IR_U32 && t != IR_U64)
    return imp_fail(n, "BitShift of %s is not supported (unsigned integers only)", ir_dtype_name(t));
  const char *dir = imp_attr_s(n, "direction", "");
  bool left = !strcmp(dir, "LEFT");
  if (!left && strcmp(dir, "RIGHT")) return imp_fail(n, "direction '%s' is not supported", dir);
  int width = (int)ir_dtype_size(t) * 8;
  ir_ref p = K(g, s, 1);
  for (int b = 0; (1 << b) < width; b++) {
    ir_ref bit = ir_binary(g, IR_MOD, ir_binary(g, IR_IDIV, s, K(g, s, (double)(1ull << b))), K(g, s, 2));
    ir_ref f = ir_where(g, ir_binary(g, IR_NEQ, bit, K(g, s, 0)), K(g, s, ldexp(1.0, 1 << b)), K(g, s, 1));
    p = ir_binary(g, IR_MUL, p, f);
  }
  ir_ref r = left ? ir_binary(g, IR_MUL, x, p) : ir_binary(g, IR_IDIV, x, p);
  ir_ref big = ir_ge(g, s, K(g, s, width));
  return imp_set_out(n, 0, ir_where(g, big, K(g, x, 0), r));
}

/* ------------------------------------------------------ depth <-> space */

static int lower_depth_to_space(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = in(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = shape_of(n, x);
  int64_t b = imp_attr_i(n, "blocksize", 0);
  const char *mode = imp_attr_s(n, "mode", "DCR");
  if (s.rank != 4 || b < 1 || s.d[1] % (b * b)) return imp_fail(n, "needs rank 4 and C divisible by blocksize^2");
  int64_t N = s.d[0], C = s.d[1] / (b * b), H = s.d[2], W = s.d[3];
  bool crd = !strcmp(mode, "CRD");
  if (!crd && strcmp(mode, "DCR")) return imp_fail(n, "mode '%s' is not supported", mode);
  int64_t d6[6] = {N, b, b, C, H, W}, c6[6] = {N, C, b, b, H, W};
  int pd[6] = {0, 3, 4, 1, 5, 2}, pc[6] = {0, 1, 4, 2, 5, 3};
  ir_ref r = ir_view_reshape(g, x, ir_shape_make(6, crd ? c6 : d6));
  r = ir_view_permute(g, r, crd ? pc : pd);
  int64_t o[4] = {N, C, H * b, W * b};
  return imp_set_out(n, 0, ir_view_reshape(g, r, ir_shape_make(4, o)));
}

static int lower_space_to_depth(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = in(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = shape_of(n, x);
  int64_t b = imp_attr_i(n, "blocksize", 0);
  if (s.rank != 4 || b < 1 || s.d[2] % b || s.d[3] % b) return imp_fail(n, "needs rank 4 and H, W divisible by blocksize");
  int64_t N = s.d[0], C = s.d[1], H = s.d[2] / b, W = s.d[3] / b;
  int64_t d6[6] = {N, C, H, b, W, b};
  int p[6] = {0, 3, 5, 1, 2, 4};
  ir_ref r = ir_view_permute(g, ir_view_reshape(g, x, ir_shape_make(6, d6)), p);
  int64_t o[4] = {N, C * b * b, H, W};
  return imp_set_out(n, 0, ir_view_reshape(g, r, ir_shape_make(4, o)));
}

/* ------------------------------------------------------------------- LRN */

/* y = x / (bias + alpha/size * sum of x^2 over the channel window)^beta,
 * the window sum assembled from shifted (zero padded) views. */
static int lower_lrn(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = in(n, 0);
  if (!need_float(n, x)) return -1;
  ir_shape s = shape_of(n, x);
  int64_t size = imp_attr_i(n, "size", 0);
  double alpha = imp_attr_f(n, "alpha", 1e-4), beta = imp_attr_f(n, "beta", 0.75), bias = imp_attr_f(n, "bias", 1.0);
  if (s.rank < 2 || size < 1) return imp_fail(n, "needs rank >= 2 and size >= 1");
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
  ir_ref base = ir_binary(g, IR_ADD, ir_binary(g, IR_MUL, sum, K(g, x, alpha / (double)size)), K(g, x, bias));
  ir_ref den = ir_unary(g, IR_EXP2, ir_binary(g, IR_MUL, ir_unary(g, IR_LOG2, base), K(g, x, beta)));
  return imp_set_out(n, 0, ir_div(g, x, den));
}

/* --------------------------------------------------------------- windows */

static ir_dtype onnx_dtype(int64_t t, bool *ok) {
  *ok = true;
  switch (t) {
  case 1: return IR_F32;
  case 2: return IR_U8;
  case 3: return IR_I8;
  case 4: return IR_U16;
  case 5: return IR_I16;
  case 6: return IR_I32;
  case 7: return IR_I64;
  case 11: return IR_F64;
  case 12: return IR_U32;
  case 13: return IR_U64;
  default: *ok = false; return IR_F32;
  }
}

/* w[k] = a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N), N = size (periodic)
 * or size - 1 (symmetric), computed in float64 from an iota. */
static int window(imp_node *n, double a0, double a1, double a2) {
  ir_graph *g = n->g;
  int64_t size;
  if (imp_const_ints(n, 0, &size, 1) != 1) return imp_fail(n, "size must be a compile-time constant scalar");
  if (size < 0) return imp_fail(n, "negative size");
  bool ok;
  ir_dtype ot = onnx_dtype(imp_attr_i(n, "output_datatype", 1), &ok);
  if (!ok) return imp_fail(n, "output_datatype not supported");
  bool periodic = imp_attr_i(n, "periodic", 1) != 0;
  double N = periodic ? (double)size : (double)(size - 1);
  ir_shape s = ir_shape_make(1, &size);
  ir_ref k = ir_cast(g, ir_iota(g, s, 0), IR_F64);
  ir_ref ang = ir_binary(g, IR_MUL, k, ir_scalar(g, IR_F64, N > 0 ? 2 * PI / N : 0));
  /* cos(t) = sin(t + pi/2) */
  ir_ref c1 = ir_unary(g, IR_SIN, ir_binary(g, IR_ADD, ang, ir_scalar(g, IR_F64, PI / 2)));
  ir_ref c2 = ir_unary(g, IR_SIN, ir_binary(g, IR_ADD, ir_binary(g, IR_MUL, ang, ir_scalar(g, IR_F64, 2)),
                                             ir_scalar(g, IR_F64, PI / 2)));
  ir_ref w = ir_binary(g, IR_ADD, ir_scalar(g, IR_F64, a0), ir_binary(g, IR_MUL, c1, ir_scalar(g, IR_F64, -a1)));
  if (a2 != 0) w = ir_binary(g, IR_ADD, w, ir_binary(g, IR_MUL, c2, ir_scalar(g, IR_F64, a2)));
  return imp_set_out(n, 0, ir_cast(g, w, ot));
}

static int lower_hann(imp_node *n) {
  return window(n, 0.5, 0.5, 0);
}
static int lower_hamming(imp_node *n) {
  return window(n, 25.0 / 46.0, 21.0 / 46.0, 0);
}
static int lower_blackman(imp_node *n) {
  return window(n, 0.42, 0.5, 0.08);
}

/* ---------------------------------------------------------------- Resize */

typedef enum { NN_ROUND_FLOOR, NN_ROUND_CEIL, NN_FLOOR, NN_CEIL } nn_mode;
typedef enum { M_NEAREST, M_LINEAR, M_CUBIC } rs_mode;

typedef struct {
  rs_mode mode;
  nn_mode nn;
  const char *ctm;
  double cubic_a;
  bool exclude_outside;
} resize_opts;

/* Source coordinate of output coordinate x along one axis (the ONNX
 * reference: output_width is the real-valued scale * input_width); sets
 * *outside when tf_crop_and_resize maps it outside the input. */
static double src_coord(const resize_opts *o, double x, int64_t in, double scale, double r0, double r1,
                        bool *outside) {
  double ow = scale * (double)in, xo;
  *outside = false;
  if (!strcmp(o->ctm, "align_corners")) xo = ow == 1 ? 0 : x * (double)(in - 1) / (ow - 1);
  else if (!strcmp(o->ctm, "asymmetric")) xo = x / scale;
  else if (!strcmp(o->ctm, "tf_crop_and_resize")) {
    xo = ow == 1 ? (r1 - r0) * (double)(in - 1) / 2 : x * (r1 - r0) * (double)(in - 1) / (ow - 1);
    xo += r0 * (double)(in - 1);
    *outside = xo < 0 || xo > (double)(in - 1);
  } else if (!strcmp(o->ctm, "pytorch_half_pixel")) xo = ow == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  else if (!strcmp(o->ctm, "tf_half_pixel_for_nn")) xo = (x + 0.5) / scale;
  else if (!strcmp(o->ctm, "half_pixel_symmetric")) {
    double adj = floor(ow) / ow, center = (double)in / 2;
    xo = center * (1 - adj) + (x + 0.5) / scale - 0.5;
  } else xo = (x + 0.5) / scale - 0.5; /* half_pixel */
  return xo;
}

/* Interpolation coefficients for the fraction `r` in (0, 1]; returns n. */
static int coeffs(const resize_opts *o, double r, double *c) {
  if (o->mode == M_NEAREST) {
    bool integral = r == 1;
    bool up = integral ? true
              : o->nn == NN_ROUND_FLOOR ? r > 0.5
              : o->nn == NN_ROUND_CEIL  ? r >= 0.5
                                        : o->nn == NN_CEIL;
    c[0] = up ? 0 : 1, c[1] = up ? 1 : 0;
    return 2;
  }
  if (o->mode == M_LINEAR) {
    c[0] = 1 - r, c[1] = r;
    return 2;
  }
  double A = o->cubic_a, s = 1 - r;
  c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
  c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
  c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
  c[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
  return 4;
}

/* The n positions of the edge-padded input (pad ceil(n/2)) closest to xp,
 * ties to the smaller, in increasing order (they are contiguous). */
static int64_t first_neighbor(double xp, int nc, int64_t len) {
  int64_t lo = INT64_MAX, pick[4];
  for (int k = 0; k < nc; k++) {
    int64_t best = -1;
    for (int64_t i = 0; i < len; i++) {
      bool used = false;
      for (int j = 0; j < k; j++) used |= pick[j] == i;
      if (!used && (best < 0 || fabs(xp - (double)i) < fabs(xp - (double)best))) best = i;
    }
    pick[k] = best;
    if (best < lo) lo = best;
  }
  return lo;
}

/* Weights W[out][in] of the 1-D resampling of one axis, and the outputs
 * that fall outside the crop (tf_crop_and_resize). */
static void axis_weights(const resize_opts *o, int64_t in, int64_t out, double scale, double r0, double r1,
                         double *w, bool *outside) {
  memset(w, 0, sizeof(double) * (size_t)(in * out));
  for (int64_t x = 0; x < out; x++) {
    double xo = src_coord(o, (double)x, in, scale, r0, r1, &outside[x]);
    if (outside[x]) continue;
    double fl = floor(xo), r = xo == fl ? 1 : xo - fl, c[4];
    int nc = coeffs(o, r, c), pad = (nc + 1) / 2;
    int64_t s = first_neighbor(xo + pad, nc, in + 2 * pad);
    double tot = 0;
    for (int k = 0; k < nc; k++) {
      int64_t idx = s + k - pad;
      if (o->exclude_outside && (idx < 0 || idx >= in)) c[k] = 0;
      tot += c[k];
    }
    for (int k = 0; k < nc; k++) {
      int64_t idx = s + k - pad;
      idx = idx < 0 ? 0 : idx >= in ? in - 1 : idx;
      w[x * in + idx] += o->exclude_outside ? c[k] / tot : c[k];
    }
  }
}

/* out = SUM_v W[o, v] * x[..., v, ...] along `axis` (a one-hot select for
 * nearest, which keeps any dtype and non-finite values exact). */
static ir_ref apply_axis(imp_node *n, ir_ref x, int axis, const double *w, int64_t in, int64_t out, bool nearest) {
  ir_graph *g = n->g;
  ir_shape s = shape_of(n, x);
  int rank = s.rank + 1;
  ir_shape ws = {.rank = rank};
  for (int i = 0; i < rank; i++) ws.d[i] = i == axis ? out : i == axis + 1 ? in : 1;
  ir_ref xv = ir_view_unsqueeze(g, x, axis);
  int64_t cnt = in * out;
  ir_ref r;
  if (nearest) {
    bool *hit = malloc((size_t)cnt);
    for (int64_t i = 0; i < cnt; i++) hit[i] = w[i] != 0;
    ir_ref h = ir_const(g, "resize_hit", IR_BOOL, ws, hit);
    free(hit);
    r = ir_where(g, h, xv, K(g, x, 0));
  } else {
    ir_dtype t = dt(g, x);
    void *buf = malloc((size_t)cnt * ir_dtype_size(t));
    for (int64_t i = 0; i < cnt; i++) ir_elem_set_f(t, buf, i, w[i]);
    ir_ref c = ir_const(g, "resize_w", t, ws, buf);
    free(buf);
    r = ir_binary(g, IR_MUL, xv, c);
  }
  return ir_sum(g, r, 1u << (axis + 1), false);
}

static bool parse_resize_opts(imp_node *n, resize_opts *o, bool legacy) {
  const char *mode = imp_attr_s(n, "mode", "nearest");
  if (!strcmp(mode, "nearest")) o->mode = M_NEAREST;
  else if (!strcmp(mode, "linear") || !strcmp(mode, "bilinear")) o->mode = M_LINEAR;
  else if (!strcmp(mode, "cubic") && !legacy) o->mode = M_CUBIC;
  else return imp_fail(n, "mode '%s' is not supported", mode), false;
  o->cubic_a = imp_attr_f(n, "cubic_coeff_a", -0.75);
  o->exclude_outside = imp_attr_i(n, "exclude_outside", 0) != 0;
  if (legacy) {
    o->ctm = "asymmetric", o->nn = NN_FLOOR;
    return true;
  }
  o->ctm = imp_attr_s(n, "coordinate_transformation_mode", "half_pixel");
  static const char *ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                               "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  bool known = false;
  for (size_t i = 0; i < sizeof ctms / sizeof *ctms; i++) known |= !strcmp(o->ctm, ctms[i]);
  if (!known) return imp_fail(n, "coordinate_transformation_mode '%s' is not supported", o->ctm), false;
  const char *nm = imp_attr_s(n, "nearest_mode", "round_prefer_floor");
  if (!strcmp(nm, "round_prefer_floor")) o->nn = NN_ROUND_FLOOR;
  else if (!strcmp(nm, "round_prefer_ceil")) o->nn = NN_ROUND_CEIL;
  else if (!strcmp(nm, "floor")) o->nn = NN_FLOOR;
  else if (!strcmp(nm, "ceil")) o->nn = NN_CEIL;
  else return imp_fail(n, "nearest_mode '%s' is not supported", nm), false;
  if (imp_attr_i(n, "antialias", 0)) return imp_fail(n, "antialias=1 is not supported"), false;
  const char *kp = imp_attr_s(n, "keep_aspect_ratio_policy", "stretch");
  if (strcmp(kp, "stretch")) return imp_fail(n, "keep_aspect_ratio_policy '%s' is not supported", kp), false;
  return true;
}

/* Separable resampling: each resized axis is a constant weight matrix
 * applied by broadcast MUL + SUM; crop extrapolation is a final WHERE. */
static int resize_common(imp_node *n, ir_ref x, const resize_opts *o, const double *scale, const int64_t *osz,
                         const double *roi) {
  ir_graph *g = n->g;
  ir_shape s = shape_of(n, x);
  int r = s.rank;
  if (r + 1 > IR_MAX_RANK) return imp_fail(n, "rank too high");
  if (o->mode != M_NEAREST && !need_float(n, x)) return -1;
  if (imp_dtype(n, x) == IR_F16) return imp_fail(n, "float16 dtype not supported");
  bool crop = !strcmp(o->ctm, "tf_crop_and_resize");
  ir_ref mask = IR_NONE, y = x;
  for (int a = 0; a < r; a++) {
    int64_t in = s.d[a], out = osz[a];
    if (out < 1 || in < 1) return imp_fail(n, "empty resize on axis %d", a);
    double *w = malloc(sizeof(double) * (size_t)(in * out));
    bool *outside = malloc((size_t)out), identity = in == out, any_out = false;
    axis_weights(o, in, out, scale[a], roi ? roi[a] : 0, roi ? roi[r + a] : 1, w, outside);
    for (int64_t i = 0; i < out; i++) {
      any_out |= outside[i];
      for (int64_t j = 0; identity && j < in; j++) identity = w[i * in + j] == (i == j ? 1.0 : 0.0);
    }
    if (!identity || any_out) y = apply_axis(n, y, a, w, in, out, o->mode == M_NEAREST);
    if (crop && any_out) {
      ir_ref m = ir_const(g, "resize_out", IR_BOOL, unit_shape(r, a, out), outside);
      mask = mask == IR_NONE ? m : ir_binary(g, IR_OR, mask, m);
    }
    free(w);
    free(outside);
  }
  if (mask != IR_NONE) y = ir_where(g, mask, K(g, y, imp_attr_f(n, "extrapolation_value", 0.0)), y);
  return imp_set_out(n, 0, y == x ? ir_move(g, x) : y);
}

/* Resize-10 (X, scales); Resize-11+ (X, roi, scales, sizes) with optional
 * axes (opset 18); scales, sizes and roi must be compile-time constants. */
static int lower_resize(imp_node *n) {
  ir_ref x = in(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = shape_of(n, x);
  int r = s.rank;
  resize_opts o;
  bool legacy = n->opset < 11;
  if (!parse_resize_opts(n, &o, legacy)) return -1;
  int64_t axes[IR_MAX_RANK];
  int na = imp_attr_ints(n, "axes", axes, IR_MAX_RANK);
  if (na < 0) {
    na = r;
    for (int i = 0; i < r; i++) axes[i] = i;
  }
  for (int i = 0; i < na; i++)
    if ((axes[i] = imp_axis(n, axes[i], r)) < 0) return -1;
  double scale[IR_MAX_RANK], roi[2 * IR_MAX_RANK], sv[IR_MAX_RANK], rv[2 * IR_MAX_RANK];
  int64_t osz[IR_MAX_RANK], zv[IR_MAX_RANK];
  for (int i = 0; i < r; i++) scale[i] = 1, osz[i] = s.d[i], roi[i] = 0, roi[r + i] = 1;
  int si = legacy ? 1 : 2;
  bool has_scales = imp_has_in(n, si) && !ir_failed(n->g);
  int ns = has_scales ? imp_const_floats(n, si, sv, IR_MAX_RANK) : -1;
  if (has_scales && ns < 0) return imp_fail(n, "scales must be a compile-time constant");
  if (ns == 0) ns = -1;
  int nz = -1;
  if (ns < 0) {
    if (legacy || !imp_has_in(n, 3)) return imp_fail(n, "neither scales nor sizes given");
    nz = imp_const_ints(n, 3, zv, IR_MAX_RANK);
    if (nz < 0) return imp_fail(n, "sizes must be a compile-time constant");
  }
  int cnt = ns >= 0 ? ns : nz;
  if (cnt != na) return imp_fail(n, "scales/sizes have %d values for %d axes", cnt, na);
  for (int i = 0; i < na; i++) {
    int a = (int)axes[i];
    if (ns >= 0) {
      if (sv[i] <= 0) return imp_fail(n, "non-positive scale");
      scale[a] = (double)(float)sv[i], osz[a] = (int64_t)(scale[a] * (double)s.d[a]);
    } else {
      osz[a] = zv[i], scale[a] = (double)zv[i] / (double)s.d[a];
    }
  }
  if (!legacy && !strcmp(o.ctm, "tf_crop_and_resize")) {
    int nr = imp_has_in(n, 1) ? imp_const_floats(n, 1, rv, 2 * IR_MAX_RANK) : -1;
    if (nr != 2 * na) return imp_fail(n, "roi must be a compile-time constant of %d values", 2 * na);
    for (int i = 0; i < na; i++) roi[axes[i]] = rv[i], roi[r + axes[i]] = rv[na + i];
  }
  return resize_common(n, x, &o, scale, osz, roi);
}

/* Upsample (deprecated): scales attribute (opset 7) or input (opset 9). */
static int lower_upsample(imp_node *n) {
  ir_ref x = in(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = shape_of(n, x);
  resize_opts o;
  if (!parse_resize_opts(n, &o, true)) return -1;
  double sv[IR_MAX_RANK];
  int ns = n->opset >= 9 ? imp_const_floats(n, 1, sv, IR_MAX_RANK) : imp_attr_floats(n, "scales", sv, IR_MAX_RANK);
  if (ns != s.rank) return imp_fail(n, "scales must be a compile-time constant with one value per axis");
  int64_t osz[IR_MAX_RANK];
  for (int i = 0; i < s.rank; i++) sv[i] = (double)(float)sv[i], osz[i] = (int64_t)(sv[i] * (double)s.d[i]);
  return resize_common(n, x, &o, sv, osz, NULL);
}

const imp_op_entry imp_ops_extra[] = {
    {"ThresholdedRelu", lower_thresholded_relu},
    {"Shrink", lower_shrink},
    {"IsInf", lower_isinf},
    {"IsNaN", lower_isnan},
    {"BitShift", lower_bitshift},
    {"DepthToSpace", lower_depth_to_space},
    {"SpaceToDepth", lower_space_to_depth},
    {"LRN", lower_lrn},
    {"HannWindow", lower_hann},
    {"HammingWindow", lower_hamming},
    {"BlackmanWindow", lower_blackman},
    {"Resize", lower_resize},
    {"Upsample", lower_upsample},
    {NULL, NULL},
};
