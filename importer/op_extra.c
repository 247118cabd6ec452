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
static void perm_to_last(int rank, int axis, int *perm) {
  int k = 0;
  for (int i = 0; i < rank; i++)
    if (i != axis) perm[k++] = i;
  perm[k] = axis;
}

/* ---------------------------------------------------------------- simple */

static int lower_thresholded_relu(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  double alpha = imp_attr_f(n, "alpha", 1.0);
  return imp_set_out(n, 0, ir_where(g, ir_gt(g, x, K(g, x, alpha)), x, K(g, x, 0)));
}

static int lower_shrink(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  if (imp_dtype(n, x) == IR_F16 || imp_dtype(n, x) == IR_BOOL) return imp_fail(n, "dtype not supported");
  double l = imp_attr_f(n, "lambd", 0.5), b = imp_attr_f(n, "bias", 0.0);
  ir_ref lo = ir_binary(g, IR_LT, x, K(g, x, -l)), hi = ir_gt(g, x, K(g, x, l));
  ir_ref r = ir_where(g, hi, ir_sub(g, x, K(g, x, b)), K(g, x, 0));
  return imp_set_out(n, 0, ir_where(g, lo, ir_binary(g, IR_ADD, x, K(g, x, b)), r));
}

static int lower_isinf(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  bool pos = imp_attr_i(n, "detect_positive", 1) != 0, neg = imp_attr_i(n, "detect_negative", 1) != 0;
  ir_ref r = ir_load_int(g, IR_BOOL, shape_of(n, x), 0);
  if (pos) r = ir_binary(g, IR_OR, r, ir_eq(g, x, K(g, x, INFINITY)));
  if (neg) r = ir_binary(g, IR_OR, r, ir_eq(g, x, K(g, x, -INFINITY)));
  return imp_set_out(n, 0, r);
}

static int lower_isnan(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
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
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = shape_of(n, x);
  int64_t b = imp_attr_i(n, "blocksize", 0);
  const char *mode = imp_attr_s(n, "mode", "DCR");
  int64_t bb, Hb, Wb;
  if (s.rank != 4 || b < 1 || ir_mul_ov(b, b, &bb) || s.d[1] % bb)
    return imp_fail(n, "needs rank 4 and C divisible by blocksize^2");
  int64_t N = s.d[0], C = s.d[1] / bb, H = s.d[2], W = s.d[3];
  if (ir_mul_ov(H, b, &Hb) || ir_mul_ov(W, b, &Wb)) return imp_fail(n, "output size overflows");
  bool crd = !strcmp(mode, "CRD");
  if (!crd && strcmp(mode, "DCR")) return imp_fail(n, "mode '%s' is not supported", mode);
  int64_t d6[6] = {N, b, b, C, H, W}, c6[6] = {N, C, b, b, H, W};
  int pd[6] = {0, 3, 4, 1, 5, 2}, pc[6] = {0, 1, 4, 2, 5, 3};
  ir_ref r = ir_view_reshape(g, x, ir_shape_make(6, crd ? c6 : d6));
  r = ir_view_permute(g, r, crd ? pc : pd);
  int64_t o[4] = {N, C, Hb, Wb};
  return imp_set_out(n, 0, ir_view_reshape(g, r, ir_shape_make(4, o)));
}

static int lower_space_to_depth(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
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
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  ir_shape s = shape_of(n, x);
  int64_t size = imp_attr_i(n, "size", 0);
  double alpha = imp_attr_f(n, "alpha", 1e-4), beta = imp_attr_f(n, "beta", 0.75), bias = imp_attr_f(n, "bias", 1.0);
  if (s.rank < 2 || size < 1) return imp_fail(n, "needs rank >= 2 and size >= 1");
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
  /* the nc nearest lie within nc of xp: only a window of 2nc+2 positions
   * is searched (all of [0, len) made resizing O(in * out) at compile time) */
  double c = !(xp >= 0) ? 0 : xp > (double)len ? (double)len : floor(xp); /* NaN: 0 */
  int64_t w0 = (int64_t)c - nc, span = 2 * nc + 2;
  if (w0 > len - span) w0 = len - span;
  if (w0 < 0) w0 = 0;
  int64_t w1 = w0 + span < len ? w0 + span : len;
  for (int k = 0; k < nc; k++) {
    int64_t best = -1;
    for (int64_t i = w0; i < w1; i++) {
      bool used = false;
      for (int j = 0; j < k; j++) used |= pick[j] == i;
      if (!used && (best < 0 || fabs(xp - (double)i) < fabs(xp - (double)best))) best = i;
    }
    pick[k] = best;
    if (best < lo) lo = best;
  }
  return lo;
}

/* The 1-D resampling of one axis as at most 4 taps per output: output x
 * reads input idx[k][x] with weight w[k][x] (k < *ntaps), and the outputs
 * that fall outside the crop (tf_crop_and_resize). O(out) memory: a dense
 * in x out matrix took 8 GiB at compile time for a 4096 -> 262144 upsample. */
static void axis_taps(const resize_opts *o, int64_t in, int64_t out, double scale, double r0, double r1,
                      int64_t *idx[4], double *w[4], int *ntaps, bool *outside) {
  *ntaps = o->mode == M_NEAREST ? 1 : o->mode == M_LINEAR ? 2 : 4;
  for (int64_t x = 0; x < out; x++) {
    for (int k = 0; k < *ntaps; k++) idx[k][x] = 0, w[k][x] = 0;
    double xo = src_coord(o, (double)x, in, scale, r0, r1, &outside[x]);
    if (outside[x]) continue;
    double fl = floor(xo), r = xo == fl ? 1 : xo - fl, c[4];
    int nc = coeffs(o, r, c), pad = (nc + 1) / 2;
    int64_t s = first_neighbor(xo + pad, nc, in + 2 * pad);
    double tot = 0;
    for (int k = 0; k < nc; k++) {
      int64_t i = s + k - pad;
      if (o->exclude_outside && (i < 0 || i >= in)) c[k] = 0;
      tot += c[k];
    }
    for (int k = 0, t = 0; k < nc; k++) {
      int64_t i = s + k - pad;
      i = i < 0 ? 0 : i >= in ? in - 1 : i;
      double v = o->exclude_outside ? c[k] / tot : c[k];
      if (o->mode == M_NEAREST) { /* one tap: the input with weight 1 */
        if (v != 0) idx[0][x] = i, w[0][x] = v;
        continue;
      }
      idx[t][x] = i, w[t][x] = v, t++;
    }
  }
}

/* Is the resampling the identity (every output reads its own input with
 * weight 1, nothing else)? */
static bool taps_identity(int64_t in, int64_t out, int64_t *idx[4], double *w[4], int ntaps) {
  if (in != out) return false;
  for (int64_t x = 0; x < out; x++) {
    double self = 0;
    for (int k = 0; k < ntaps; k++) {
      if (idx[k][x] == x) self += w[k][x];
      else if (w[k][x] != 0) return false;
    }
    if (self != 1.0) return false;
  }
  return true;
}

static ir_ref select_sum(imp_node *n, ir_ref hit, ir_ref v, int axis);

/* out[o] = SUM_k w[k][o] * x[..., idx[k][o], ...] along `axis`: per tap, a
 * one-hot select over the input axis (the gather rewrite makes it an
 * indexed read); nearest has one tap of weight 1 and no MUL, which keeps
 * any dtype and non-finite values exact. */
static ir_ref apply_axis(imp_node *n, ir_ref x, int axis, int64_t *idx[4], double *w[4], int ntaps, int64_t in,
                         int64_t out) {
  ir_graph *g = n->g;
  int rank = shape_of(n, x).rank + 1;
  ir_shape os = unit_shape(rank, axis, out);
  ir_ref xv = ir_view_unsqueeze(g, x, axis), iota = ir_iota(g, unit_shape(rank, axis + 1, in), axis + 1);
  ir_dtype t = dt(g, x);
  ir_ref sum = IR_NONE;
  void *buf = malloc((size_t)out * 8);
  if (!buf) return imp_fail(n, "out of memory for %lld resize weights", (long long)out), IR_NONE;
  for (int k = 0; k < ntaps; k++) {
    ir_ref ik = ir_const(g, "resize_index", IR_I64, os, idx[k]);
    ir_ref tap = ir_view_squeeze(g, select_sum(n, ir_eq(g, iota, ik), xv, axis + 1), axis + 1);
    if (ntaps > 1) {
      for (int64_t i = 0; i < out; i++) ir_elem_set_f(t, buf, i, w[k][i]);
      tap = ir_binary(g, IR_MUL, tap, ir_view_squeeze(g, ir_const(g, "resize_w", t, os, buf), axis + 1));
    }
    sum = k == 0 ? tap : ir_binary(g, IR_ADD, sum, tap);
  }
  free(buf);
  return sum;
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
/* A symbolic axis: nearest with a whole scale k, where output i reads
 * input floor(i / k) (asymmetric + floor, or the half-pixel modes with
 * rounding, whose source coordinate q + (r + 0.5)/k - 0.5 never ties), is
 * each element repeated k times: unsqueeze, expand, merge. Anything else
 * on a symbolic axis is refused (run pins the symbol). */
static ir_ref nearest_repeat(imp_node *n, ir_ref x, int a, const resize_opts *o, double scale, bool crop) {
  ir_graph *g = n->g;
  ir_shape s = shape_of(n, x);
  int64_t k = (int64_t)scale;
  bool half = !strcmp(o->ctm, "half_pixel") || !strcmp(o->ctm, "pytorch_half_pixel");
  bool ok = o->mode == M_NEAREST && !crop && scale >= 1 && (double)k == scale && k <= 64 &&
            ((!strcmp(o->ctm, "asymmetric") && o->nn == NN_FLOOR) ||
             (half && (o->nn == NN_ROUND_FLOOR || o->nn == NN_ROUND_CEIL)));
  if (k == 1 && !crop) return x;
  if (!ok) return imp_fail_sym(n, s.d[a], "a resize other than nearest by a whole scale on a symbolic axis"), IR_NONE;
  ir_shape e = {.rank = s.rank + 1}, m = s;
  for (int i = 0, j = 0; i < e.rank; i++) e.d[i] = i == a + 1 ? k : s.d[j++];
  m.d[a] = ir_dim_mul(s.d[a], k);
  return ir_view_reshape(g, ir_view_expand(g, ir_view_unsqueeze(g, x, a + 1), e), m);
}

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
    if (ir_dim_is_sym(in)) {
      if ((y = nearest_repeat(n, y, a, o, scale[a], crop)) == IR_NONE) return -1;
      continue;
    }
    if (out < 1 || in < 1) return imp_fail(n, "empty resize on axis %d", a);
    /* the tables (4 indices and weights and a flag per output) are counted
     * against the memory limit before they are allocated */
    int64_t bytes;
    if (ir_mul_ov(out, 4 * 16 + 1, &bytes) || (uint64_t)bytes > imp_mem_limit())
      return imp_fail(n, "resizing axis %d to %lld needs more than the memory limit (%zu bytes; see --max-memory)",
                      a, (long long)out, imp_mem_limit());
    int64_t *idx[4] = {0};
    double *w[4] = {0};
    bool *outside = malloc((size_t)out), ok = outside != NULL, any_out = false;
    for (int k = 0; k < 4; k++) {
      ok &= (idx[k] = malloc((size_t)out * sizeof **idx)) != NULL;
      ok &= (w[k] = malloc((size_t)out * sizeof **w)) != NULL;
    }
    int ntaps = 0;
    if (ok) {
      axis_taps(o, in, out, scale[a], roi ? roi[a] : 0, roi ? roi[r + a] : 1, idx, w, &ntaps, outside);
      for (int64_t i = 0; i < out; i++) any_out |= outside[i];
      if (!taps_identity(in, out, idx, w, ntaps) || any_out) y = apply_axis(n, y, a, idx, w, ntaps, in, out);
      if (crop && any_out) {
        ir_ref m = ir_const(g, "resize_out", IR_BOOL, unit_shape(r, a, out), outside);
        mask = mask == IR_NONE ? m : ir_binary(g, IR_OR, mask, m);
      }
    }
    for (int k = 0; k < 4; k++) free(idx[k]), free(w[k]);
    free(outside);
    if (!ok) return imp_fail(n, "out of memory resizing axis %d to %lld", a, (long long)out);
  }
  if (mask != IR_NONE) y = ir_where(g, mask, K(g, y, imp_attr_f(n, "extrapolation_value", 0.0)), y);
  return imp_set_out(n, 0, y == x ? ir_move(g, x) : y);
}

/* floor(scale * d); for a symbolic d (where only a whole scale is kept,
 * see nearest_repeat) the product, else d itself as a placeholder. */
static int64_t sym_size(int64_t d, double scale) {
  if (!ir_dim_is_sym(d)) {
    /* a product past int64 (or NaN) must not reach the cast: that is UB */
    double p = scale * (double)d;
    if (!(p >= 0)) return 0;
    return p < 0x1p62 ? (int64_t)p : INT64_MAX;
  }
  return scale >= 1 && scale <= 64 && (double)(int64_t)scale == scale ? ir_dim_mul(d, (int64_t)scale) : d;
}

/* Resize-10 (X, scales); Resize-11+ (X, roi, scales, sizes) with optional
 * axes (opset 18); scales, sizes and roi must be compile-time constants. */
static int lower_resize(imp_node *n) {
  ir_ref x = imp_req(n, 0);
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
      scale[a] = (double)(float)sv[i], osz[a] = sym_size(s.d[a], scale[a]);
    } else if (ir_dim_is_sym(s.d[a])) {
      return imp_fail_sym(n, s.d[a], "resize sizes for a symbolic axis");
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
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = shape_of(n, x);
  resize_opts o;
  if (!parse_resize_opts(n, &o, true)) return -1;
  double sv[IR_MAX_RANK];
  int ns = n->opset >= 9 ? imp_const_floats(n, 1, sv, IR_MAX_RANK) : imp_attr_floats(n, "scales", sv, IR_MAX_RANK);
  if (ns != s.rank) return imp_fail(n, "scales must be a compile-time constant with one value per axis");
  int64_t osz[IR_MAX_RANK];
  for (int i = 0; i < s.rank; i++) sv[i] = (double)(float)sv[i], osz[i] = sym_size(s.d[i], sv[i]);
  return resize_common(n, x, &o, sv, osz, NULL);
}

/* ------------------------------------------------------- one-hot select */

/* SUM over `axis` (kept) of WHERE(hit, v, 0); bool values are reduced
 * with MAX over a byte copy (an OR). */
static ir_ref select_sum(imp_node *n, ir_ref hit, ir_ref v, int axis) {
  ir_graph *g = n->g;
  bool is_bool = dt(g, v) == IR_BOOL;
  if (is_bool) v = ir_cast(g, v, IR_U8);
  ir_ref picked = ir_where(g, hit, v, K(g, v, 0));
  if (!is_bool) return ir_sum(g, picked, 1u << axis, true);
  return ir_binary(g, IR_NEQ, ir_max_reduce(g, picked, 1u << axis, true), ir_scalar(g, IR_U8, 0));
}

/* Moves `axis` of x last and puts a unit axis in its place:
 * [.., N@axis, ..] -> [.., 1@axis, .., N]. */
static ir_ref axis_to_last(ir_graph *g, ir_ref x, int rank, int axis) {
  int perm[IR_MAX_RANK];
  perm_to_last(rank, axis, perm);
  return ir_view_unsqueeze(g, ir_view_permute(g, x, perm), axis);
}

/* ReverseSequence: out[t, b] = x[t < L_b ? L_b - 1 - t : t, b], the source
 * time picked by a one-hot over a trailing axis. */
static int lower_reverse_sequence(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), lens = imp_req(n, 1);
  if (x == IR_NONE || lens == IR_NONE) return -1;
  ir_shape s = shape_of(n, x);
  int r = s.rank;
  if (r < 2 || r + 1 > IR_MAX_RANK) return imp_fail(n, "input rank must be >= 2");
  if (imp_dtype(n, x) == IR_F16) return imp_fail(n, "float16 dtype not supported");
  int ta = imp_axis(n, imp_attr_i(n, "time_axis", 0), r), ba = imp_axis(n, imp_attr_i(n, "batch_axis", 1), r);
  if (ta < 0 || ba < 0 || ta == ba) return imp_fail(n, "invalid time_axis / batch_axis");
  int64_t T = s.d[ta], B = s.d[ba];
  ir_dtype lt = imp_dtype(n, lens);
  if (lt != IR_I32 && lt != IR_I64) return imp_fail(n, "sequence_lens of type %s not supported", ir_dtype_name(lt));
  ir_ref L = ir_view_reshape(g, ir_cast(g, lens, IR_I64), unit_shape(r, ba, B));
  ir_ref t = ir_iota(g, unit_shape(r, ta, T), ta);
  ir_ref rev = ir_sub(g, ir_binary(g, IR_ADD, L, ir_scalar(g, IR_I64, -1)), t);
  ir_ref src = ir_view_unsqueeze(g, ir_where(g, ir_binary(g, IR_LT, t, L), rev, t), r);
  ir_ref hit = ir_eq(g, ir_iota(g, unit_shape(r + 1, r, T), r), src);
  ir_ref out = select_sum(n, hit, axis_to_last(g, x, r, ta), r);
  return imp_set_out(n, 0, ir_view_squeeze(g, out, r));
}

/* ---------------------------------------------------------------- Scatter */

typedef enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } reduction;

static bool parse_reduction(imp_node *n, reduction *red) {
  const char *s = imp_attr_s(n, "reduction", "none");
  static const char *names[] = {"none", "add", "mul", "max", "min"};
  for (int i = 0; i < 5; i++)
    if (!strcmp(s, names[i])) return *red = (reduction)i, true;
  return imp_fail(n, "reduction '%s' is not supported", s), false;
}

/* Combines data (unit at `axis`) with the updates hit along `axis`:
 * none replaces hit elements by the (single) update, the others fold all
 * hitting updates into the data element. */
static ir_ref scatter_combine(imp_node *n, ir_ref data, ir_ref hit, ir_ref upd, int axis, reduction red) {
  ir_graph *g = n->g;
  uint32_t ax = 1u << axis;
  ir_dtype t = dt(g, data);
  if (t == IR_F16) return imp_fail(n, "float16 dtype not supported"), IR_NONE;
  if (t == IR_BOOL && red != RED_NONE) return imp_fail(n, "bool data needs reduction none"), IR_NONE;
  ir_ref any = ir_binary(g, IR_NEQ, ir_max_reduce(g, ir_cast(g, hit, IR_U8), ax, true), ir_scalar(g, IR_U8, 0));
  switch (red) {
  case RED_NONE: return ir_where(g, any, select_sum(n, hit, upd, axis), data);
  case RED_ADD: return ir_binary(g, IR_ADD, data, select_sum(n, hit, upd, axis));
  case RED_MUL: return ir_binary(g, IR_MUL, data, ir_prod(g, ir_where(g, hit, upd, K(g, upd, 1)), ax, true));
  case RED_MAX: {
    ir_ref m = ir_max_reduce(g, ir_where(g, hit, upd, K(g, upd, ir_dtype_lowest(t))), ax, true);
    return ir_where(g, any, ir_binary(g, IR_MAX, data, m), data);
  }
  case RED_MIN: {
    ir_ref m = ir_min_reduce(g, ir_where(g, hit, upd, K(g, upd, ir_dtype_highest(t))), ax, true);
    return ir_where(g, any, ir_min(g, data, m), data);
  }
  }
  return IR_NONE;
}

/* Iteration space D ++ [J], J the indices' extent along the axis; indices
 * and updates are padded to D on the other axes (index -1: no hit). */
static int lower_scatter_elements(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref data = imp_req(n, 0), idx = imp_req(n, 1), upd = imp_req(n, 2);
  if (data == IR_NONE || idx == IR_NONE || upd == IR_NONE) return -1;
  ir_shape ds = shape_of(n, data), is = shape_of(n, idx);
  int r = ds.rank;
  if (r < 1 || is.rank != r || !ir_shape_eq(&is, imp_shape(n, upd)))
    return imp_fail(n, "data, indices and updates must have the same rank");
  if (r + 1 > IR_MAX_RANK) return imp_fail(n, "rank too high");
  int a = imp_axis(n, imp_attr_i(n, "axis", 0), r);
  reduction red = RED_NONE;
  if (a < 0 || !parse_reduction(n, &red)) return -1;
  int64_t pb[IR_MAX_RANK] = {0}, pa[IR_MAX_RANK] = {0};
  for (int i = 0; i < r; i++) {
    if (i != a && is.d[i] > ds.d[i]) return imp_fail(n, "indices larger than data on axis %d", i);
    pa[i] = i == a ? 0 : ds.d[i] - is.d[i];
  }
  ir_ref w = ir_view_pad(g, imp_wrap_indices(n, idx, ds.d[a]), pb, pa, -1.0);
  ir_ref u = ir_view_pad(g, upd, pb, pa, 0.0);
  ir_ref hit = ir_eq(g, ir_iota(g, unit_shape(r + 1, a, ds.d[a]), a), axis_to_last(g, w, r, a));
  ir_ref out = scatter_combine(n, ir_view_unsqueeze(g, data, r), hit, axis_to_last(g, u, r, a), r, red);
  return imp_set_out(n, 0, ir_view_squeeze(g, out, r));
}

/* The k indexed axes of data become one axis of V = their product and the
 * index tuples flat offsets into it; iteration space [V, M] ++ D[k:] with
 * M the number of index tuples, reduced over M. */
static int lower_scatter_nd(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref data = imp_req(n, 0), idx = imp_req(n, 1), upd = imp_req(n, 2);
  if (data == IR_NONE || idx == IR_NONE || upd == IR_NONE) return -1;
  ir_shape ds = shape_of(n, data), is = shape_of(n, idx);
  int r = ds.rank, q = is.rank;
  reduction red = RED_NONE;
  if (!parse_reduction(n, &red)) return -1;
  if (q < 1) return imp_fail(n, "indices must have rank >= 1");
  int k = (int)is.d[q - 1];
  if (k < 1 || k > r) return imp_fail(n, "index tuples of length %d do not fit rank %d", k, r);
  int rank = 2 + r - k;
  if (rank > IR_MAX_RANK) return imp_fail(n, "rank too high");
  int64_t M = 1, V = 1;
  for (int i = 0; i < q - 1; i++) M *= is.d[i];
  int64_t st[IR_MAX_RANK], sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int i = 0; i < q; i++) st[i] = 0, sp[i] = 1, ln[i] = is.d[i];
  ln[q - 1] = 1;
  ir_ref flat = IR_NONE;
  for (int m = k - 1; m >= 0; m--) {
    st[q - 1] = m;
    ir_ref c = imp_wrap_indices(n, ir_view_slice(g, idx, st, sp, ln), ds.d[m]);
    c = ir_binary(g, IR_MUL, c, ir_scalar(g, IR_I64, (double)V));
    flat = flat == IR_NONE ? c : ir_binary(g, IR_ADD, flat, c);
    V *= ds.d[m];
  }
  ir_shape dv = {.rank = rank}, fv = {.rank = rank}, uv = {.rank = rank};
  for (int i = 0; i < rank; i++) {
    int64_t rest = i >= 2 ? ds.d[k + i - 2] : 1;
    dv.d[i] = i == 0 ? V : rest;
    fv.d[i] = i == 1 ? M : 1;
    uv.d[i] = i == 0 ? 1 : i == 1 ? M : rest;
  }
  if (ir_shape_numel(imp_shape(n, upd)) != ir_shape_numel(&uv)) return imp_fail(n, "updates have the wrong shape");
  ir_ref hit = ir_eq(g, ir_iota(g, unit_shape(rank, 0, V), 0), ir_view_reshape(g, flat, fv));
  ir_ref out = scatter_combine(n, ir_view_reshape(g, data, dv), hit, ir_view_reshape(g, upd, uv), 1, red);
  return imp_set_out(n, 0, ir_view_reshape(g, out, ds));
}

/* ------------------------------------------------------------------- TopK */

/* rank_i = #{j : x_j before x_i} with "before" = larger (smaller) value,
 * ties by lower index; output slot r takes the element of rank r. */
static int lower_topk(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = shape_of(n, x);
  int r = s.rank;
  if (r < 1 || r + 1 > IR_MAX_RANK) return imp_fail(n, "input rank must be >= 1");
  ir_dtype t = imp_dtype(n, x);
  if (t == IR_F16 || t == IR_BOOL) return imp_fail(n, "dtype %s not supported", ir_dtype_name(t));
  int a = imp_axis(n, imp_attr_i(n, "axis", -1), r);
  if (a < 0) return -1;
  int64_t kk;
  if (n->opset < 10) kk = imp_attr_i(n, "k", -1);
  else if (imp_const_ints(n, 1, &kk, 1) != 1) return imp_fail(n, "k must be a compile-time constant");
  int64_t N = s.d[a];
  if (kk < 0 || (!ir_dim_is_sym(N) && kk > N)) return imp_fail(n, "k=%lld out of range", (long long)kk);
  if (ir_dim_is_sym(N) && ir_assume_nonneg(g, ir_dim_sub(N, kk), "TopK's k fits the axis")) return -1;
  bool largest = imp_attr_i(n, "largest", 1) != 0;
  ir_ref xi = ir_view_unsqueeze(g, x, r), xj = axis_to_last(g, x, r, a);
  ir_ref ii = ir_iota(g, unit_shape(r + 1, a, N), a), jj = ir_iota(g, unit_shape(r + 1, r, N), r);
  ir_ref better = largest ? ir_gt(g, xj, xi) : ir_binary(g, IR_LT, xj, xi);
  ir_ref tie = ir_binary(g, IR_AND, ir_eq(g, xj, xi), ir_binary(g, IR_LT, jj, ii));
  ir_ref before = ir_cast(g, ir_binary(g, IR_OR, better, tie), IR_I64);
  ir_ref rank = ir_sum(g, before, 1u << r, false);
  ir_ref slot = ir_iota(g, unit_shape(r + 1, a, kk), a);
  ir_ref hit = ir_eq(g, slot, axis_to_last(g, rank, r, a));
  ir_ref vals = ir_view_squeeze(g, select_sum(n, hit, xj, r), r);
  ir_ref idxs = ir_view_squeeze(g, select_sum(n, hit, jj, r), r);
  if (imp_set_out(n, 0, vals) < 0) return -1;
  return imp_has_out(n, 1) ? imp_set_out(n, 1, idxs) : 0;
}

/* ----------------------------------------------------------------- Einsum */

#define EIN_LABELS 64
#define EIN_ELL 52

/* Label code of a subscript letter: 'A'..'Z' -> 0..25, 'a'..'z' -> 26..51
 * (ASCII order, as the implicit output sorts them). */
static int ein_code(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + c - 'a';
  return -1;
}

/* Parses one term into at most `cap` label codes; "..." (at most once, as
 * in ONNX) expands to the `nell` trailing ellipsis codes of the `maxell` in
 * the equation (-1 rank: nell = maxell). Returns the label count, or -1 for
 * a malformed term or one with more labels than `cap` (every write into
 * `codes` is checked against it: the term comes from the model). */
static int ein_term(const char *p, size_t len, int rank, int maxell, int *codes, int cap, int *nell_out) {
  int letters = 0, ells = 0;
  for (size_t i = 0; i < len; i++)
    if (p[i] == '.') {
      if (i + 2 >= len || p[i + 1] != '.' || p[i + 2] != '.') return -1;
      ells++, i += 2;
    } else if (ein_code(p[i]) >= 0) letters++;
    else return -1;
  if (ells > 1) return -1;
  int nell = ells ? (rank >= 0 ? rank - letters : maxell) : 0;
  if (nell < 0 || nell > IR_MAX_RANK || (rank >= 0 && !ells && letters != rank)) return -1;
  if (letters + nell > cap) return -1;
  if (nell_out) *nell_out = nell;
  int k = 0;
  for (size_t i = 0; i < len; i++) {
    if (p[i] == '.') {
      for (int e = 0; e < nell; e++) codes[k++] = EIN_ELL + maxell - nell + e;
      i += 2;
    } else codes[k++] = ein_code(p[i]);
  }
  return k;
}

/* Removes repeated labels of one operand by taking the diagonal:
 * WHERE(iota_p == iota_q, x, 0) summed over q. */
static ir_ref ein_diagonal(imp_node *n, ir_ref x, int *codes, int *cnt) {
  ir_graph *g = n->g;
  for (int p = 0; p < *cnt; p++)
    for (int q = p + 1; q < *cnt; q++) {
      if (codes[p] != codes[q]) continue;
      ir_shape s = shape_of(n, x);
      if (s.d[p] != s.d[q]) return imp_fail(n, "repeated label with different sizes"), IR_NONE;
      ir_shape u = unit_shape(s.rank, p, s.d[p]);
      u.d[q] = s.d[q];
      ir_ref hit = ir_eq(g, ir_iota(g, u, p), ir_iota(g, u, q));
      x = ir_view_squeeze(g, select_sum(n, hit, x, q), q);
      for (int k = q; k + 1 < *cnt; k++) codes[k] = codes[k + 1];
      (*cnt)--, q--;
      if (x == IR_NONE) return IR_NONE;
    }
  return x;
}

/* Einsum: every operand is diagonalised, permuted to the global label
 * order (output labels first) and broadcast; their product is summed over
 * the contracted labels. */
static int lower_einsum(imp_node *n) {
  ir_graph *g = n->g;
  const char *eq0 = imp_attr_s(n, "equation", "");
  char eq[256];
  size_t el = 0;
  for (const char *c = eq0; *c && el + 1 < sizeof eq; c++)
    if (*c != ' ') eq[el++] = *c;
  eq[el] = 0;
  int nin = imp_nin(n);
  if (nin < 1 || nin > 16) return imp_fail(n, "unsupported operand count %d", nin);
  const char *arrow = strstr(eq, "->");
  size_t lhs_len = arrow ? (size_t)(arrow - eq) : el;
  ir_ref ops[16];
  int codes[16][IR_MAX_RANK + 4], cnt[16], maxell = 0, nell[16];
  const char *p = eq;
  for (int i = 0; i < nin; i++) {
    const char *end = memchr(p, ',', lhs_len - (size_t)(p - eq));
    size_t len = end ? (size_t)(end - p) : lhs_len - (size_t)(p - eq);
    if ((i + 1 < nin) != (end != NULL)) return imp_fail(n, "equation '%s' does not match %d inputs", eq0, nin);
    if ((ops[i] = imp_req(n, i)) == IR_NONE) return -1;
    int rank = shape_of(n, ops[i]).rank;
    if (len > IR_MAX_RANK + 3) return imp_fail(n, "term too long");
    if ((cnt[i] = ein_term(p, len, rank, 0, codes[i], IR_MAX_RANK + 4, &nell[i])) < 0)
      return imp_fail(n, "cannot parse term %d of '%s'", i, eq0);
    if (nell[i] > maxell) maxell = nell[i];
    p = end ? end + 1 : p + len;
  }
  /* re-parse with the common ellipsis count so codes are right-aligned */
  p = eq;
  for (int i = 0; i < nin; i++) {
    const char *end = memchr(p, ',', lhs_len - (size_t)(p - eq));
    size_t len = end ? (size_t)(end - p) : lhs_len - (size_t)(p - eq);
    ein_term(p, len, shape_of(n, ops[i]).rank, maxell, codes[i], IR_MAX_RANK + 4, NULL);
    p = end ? end + 1 : p + len;
  }
  int out[EIN_LABELS], nout = 0, seen[EIN_LABELS] = {0};
  for (int i = 0; i < nin; i++)
    for (int k = 0; k < cnt[i]; k++) seen[codes[i][k]]++;
  if (arrow) {
    const char *o = arrow + 2;
    if (strlen(o) > IR_MAX_RANK + 3) return imp_fail(n, "output term too long");
    if ((nout = ein_term(o, strlen(o), -1, maxell, out, EIN_LABELS, NULL)) < 0) return imp_fail(n, "cannot parse output of '%s'", eq0);
  } else {
    for (int e = 0; e < maxell; e++) out[nout++] = EIN_ELL + e;
    for (int c = 0; c < EIN_ELL; c++)
      if (seen[c] == 1) out[nout++] = c;
  }
  /* global order: output labels, then the contracted ones */
  int pos[EIN_LABELS], R = 0;
  int64_t size[EIN_LABELS];
  for (int c = 0; c < EIN_LABELS; c++) pos[c] = -1, size[c] = 1;
  for (int k = 0; k < nout; k++) {
    if (pos[out[k]] >= 0 || !seen[out[k]]) return imp_fail(n, "bad output label in '%s'", eq0);
    pos[out[k]] = R++;
  }
  for (int i = 0; i < nin; i++)
    for (int k = 0; k < cnt[i]; k++)
      if (pos[codes[i][k]] < 0) pos[codes[i][k]] = R++;
  if (R > IR_MAX_RANK) return imp_fail(n, "too many labels (%d)", R);
  ir_ref prod = IR_NONE;
  for (int i = 0; i < nin; i++) {
    if (imp_dtype(n, ops[i]) == IR_F16) return imp_fail(n, "float16 dtype not supported");
    ir_ref x = ein_diagonal(n, ops[i], codes[i], &cnt[i]);
    if (x == IR_NONE) return -1;
    ir_shape s = shape_of(n, x);
    int perm[IR_MAX_RANK], c = 0;
    for (int gp = 0; gp < R; gp++)
      for (int k = 0; k < cnt[i]; k++)
        if (pos[codes[i][k]] == gp) perm[c++] = k;
    ir_shape full = {.rank = R};
    for (int gp = 0; gp < R; gp++) full.d[gp] = 1;
    for (int k = 0; k < cnt[i]; k++) {
      full.d[pos[codes[i][k]]] = s.d[k];
      if (s.d[k] != 1) {
        if (size[codes[i][k]] != 1 && size[codes[i][k]] != s.d[k]) return imp_fail(n, "label sizes differ");
        size[codes[i][k]] = s.d[k];
      }
    }
    x = ir_view_reshape(g, ir_view_permute(g, x, perm), full);
    prod = prod == IR_NONE ? x : ir_binary(g, IR_MUL, prod, x);
  }
  uint32_t axes = 0;
  for (int k = nout; k < R; k++) axes |= 1u << k;
  ir_ref r = axes ? ir_sum(g, prod, axes, false) : prod;
  /* output labels of size 1 in every operand but broadcast elsewhere */
  ir_shape os = {.rank = nout};
  for (int k = 0; k < nout; k++) os.d[k] = size[out[k]];
  r = ir_view_expand(g, r, os);
  return imp_set_out(n, 0, nin == 1 && !axes ? ir_move(g, r) : r);
}

const imp_op_entry imp_ops_extra[] = {
    {"ThresholdedRelu", lower_thresholded_relu, 0},
    {"Shrink", lower_shrink, 0},
    {"IsInf", lower_isinf, 0},
    {"IsNaN", lower_isnan, 0},
    {"BitShift", lower_bitshift, 0},
    {"DepthToSpace", lower_depth_to_space, 0},
    {"SpaceToDepth", lower_space_to_depth, 0},
    {"LRN", lower_lrn, 0},
    {"HannWindow", lower_hann, 0},
    {"HammingWindow", lower_hamming, 0},
    {"BlackmanWindow", lower_blackman, 0},
    {"Resize", lower_resize, IMP_SYM},
    {"Upsample", lower_upsample, IMP_SYM},
    {"ReverseSequence", lower_reverse_sequence, 0},
    {"ScatterElements", lower_scatter_elements, 0},
    {"Scatter", lower_scatter_elements, 0},
    {"ScatterND", lower_scatter_nd, 0},
    {"TopK", lower_topk, IMP_SYM},
    {"Einsum", lower_einsum, 0},
    {NULL, NULL, 0},
};
