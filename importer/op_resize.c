/* op_resize.c — resampling: Resize and Upsample (per-axis taps, at most
 * four per output), DepthToSpace and SpaceToDepth. */
#include "importer_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ depth <-> space */

/* Symbolic N, H and W pass through (H*b, W*b); C must divide by b^2 as a
 * polynomial. */
static int lower_depth_to_space(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = imp_nshape(n, x);
  int64_t b = imp_attr_i(n, "blocksize", 0);
  const char *mode = imp_attr_s(n, "mode", "DCR");
  int64_t bb, C;
  if (s.rank != 4 || b < 1 || ir_mul_ov(b, b, &bb))
    return imp_fail(n, "needs rank 4 and C divisible by blocksize^2");
  if (!ir_dim_div_exact(s.d[1], bb, &C)) {
    if (ir_dim_is_sym(s.d[1])) return imp_fail_sym(n, s.d[1], "a symbolic channel count not known to divide by blocksize^2");
    return imp_fail(n, "needs rank 4 and C divisible by blocksize^2");
  }
  int64_t N = s.d[0], H = s.d[2], W = s.d[3], Hb = ir_dim_mul(H, b), Wb = ir_dim_mul(W, b);
  if (Hb == IR_DIM_INVALID || Wb == IR_DIM_INVALID) return imp_fail(n, "output size overflows");
  bool crd = !strcmp(mode, "CRD");
  if (!crd && strcmp(mode, "DCR")) return imp_fail(n, "mode '%s' is not supported", mode);
  int64_t d6[6] = {N, b, b, C, H, W}, c6[6] = {N, C, b, b, H, W};
  int pd[6] = {0, 3, 4, 1, 5, 2}, pc[6] = {0, 1, 4, 2, 5, 3};
  ir_ref r = ir_view_reshape(g, x, ir_shape_make(6, crd ? c6 : d6));
  r = ir_view_permute(g, r, crd ? pc : pd);
  int64_t o[4] = {N, C, Hb, Wb};
  return imp_set_out(n, 0, ir_view_reshape(g, r, ir_shape_make(4, o)));
}

/* H / b, exact as a polynomial: a symbolic H that is not (h, not 2 * k)
 * is refused, since the reshape to [.., H / b, b, ..] needs the product
 * back. */
static int64_t space_blocks(imp_node *n, int64_t L, int64_t b) {
  int64_t q;
  if (ir_dim_div_exact(L, b, &q)) return q;
  if (ir_dim_is_sym(L)) imp_fail_sym(n, L, "a symbolic axis not known to divide by blocksize");
  else imp_fail(n, "needs rank 4 and H, W divisible by blocksize");
  return IR_DIM_INVALID;
}

static int lower_space_to_depth(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = imp_nshape(n, x);
  int64_t b = imp_attr_i(n, "blocksize", 0), bb;
  if (s.rank != 4 || b < 1 || ir_mul_ov(b, b, &bb)) return imp_fail(n, "needs rank 4 and H, W divisible by blocksize");
  int64_t N = s.d[0], C = s.d[1], H = space_blocks(n, s.d[2], b), W = space_blocks(n, s.d[3], b);
  int64_t Cbb = ir_dim_mul(C, bb);
  if (H == IR_DIM_INVALID || W == IR_DIM_INVALID || Cbb == IR_DIM_INVALID)
    return imp_fail(n, "needs rank 4 and H, W divisible by blocksize");
  int64_t d6[6] = {N, C, H, b, W, b};
  int p[6] = {0, 3, 5, 1, 2, 4};
  ir_ref r = ir_view_permute(g, ir_view_reshape(g, x, ir_shape_make(6, d6)), p);
  int64_t o[4] = {N, Cbb, H, W};
  return imp_set_out(n, 0, ir_view_reshape(g, r, ir_shape_make(4, o)));
}

/* ---------------------------------------------------------------- Resize */

/* the nearest modes as resize_sym.c takes them (importer_impl.h) */
typedef enum {
  NN_ROUND_FLOOR = IMP_NN_ROUND_FLOOR,
  NN_ROUND_CEIL = IMP_NN_ROUND_CEIL,
  NN_FLOOR = IMP_NN_FLOOR,
  NN_CEIL = IMP_NN_CEIL
} nn_mode;
typedef enum { M_NEAREST, M_LINEAR, M_CUBIC } rs_mode;

typedef struct {
  rs_mode mode;
  nn_mode nn;
  const char *ctm;
  double cubic_a;
  bool exclude_outside;
} resize_opts;

/* Source coordinate of output coordinate x along one axis, in float32 as
 * onnxruntime computes it (upsamplebase.h): `scale` as onnxruntime holds
 * it (float32; out / in in float32 for sizes), and align_corners,
 * pytorch_half_pixel and tf_crop_and_resize divided by the output's own
 * length, as the spec's text and PyTorch have it. The ONNX reference
 * divides by the real-valued in x scale instead, so two node tests with a
 * fractional output width expect other values (docs/DESIGN.md, "Resize
 * as onnxruntime computes it"); double arithmetic put x / scale on the
 * other side of a whole number where float32 lands on it (3 / 0.6f).
 * Sets *outside when tf_crop_and_resize maps x outside the input. */
static double src_coord(const resize_opts *o, int64_t x64, int64_t in, int64_t out, float scale, float r0, float r1,
                        bool *outside) {
  float x = (float)x64, lo = (float)in, lr = (float)out, xo;
  *outside = false;
  if (!strcmp(o->ctm, "align_corners")) xo = out == 1 ? 0 : x * (lo - 1) / (lr - 1);
  else if (!strcmp(o->ctm, "asymmetric")) xo = x / scale;
  else if (!strcmp(o->ctm, "tf_crop_and_resize")) {
    xo = out > 1 ? r0 * (lo - 1) + x * (r1 - r0) * (lo - 1) / (lr - 1) : (float)(0.5 * (r0 + r1) * (lo - 1));
    *outside = xo < 0 || xo > lo - 1;
  } else if (!strcmp(o->ctm, "pytorch_half_pixel")) xo = out > 1 ? (x + 0.5f) / scale - 0.5f : 0;
  else if (!strcmp(o->ctm, "tf_half_pixel_for_nn")) xo = (x + 0.5f) / scale;
  else if (!strcmp(o->ctm, "half_pixel_symmetric")) {
    float adj = lr / (scale * lo), center = lo / 2;
    xo = (float)(center * (1 - adj) + (x + 0.5) / scale - 0.5); /* onnxruntime: this sum in double */
  } else xo = (x + 0.5f) / scale - 0.5f; /* half_pixel */
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
  float sc = imp_resize_scale_f32(scale, in, out);
  for (int64_t x = 0; x < out; x++) {
    for (int k = 0; k < *ntaps; k++) idx[k][x] = 0, w[k][x] = 0;
    double xo = src_coord(o, x, in, out, sc, (float)r0, (float)r1, &outside[x]);
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


/* out[o] = SUM_k w[k][o] * x[..., idx[k][o], ...] along `axis`: per tap, a
 * one-hot select over the input axis (the gather rewrite makes it an
 * indexed read); nearest has one tap of weight 1 and no MUL, which keeps
 * any dtype and non-finite values exact. */
static ir_ref apply_axis(imp_node *n, ir_ref x, int axis, int64_t *idx[4], double *w[4], int ntaps, int64_t in,
                         int64_t out) {
  ir_graph *g = n->g;
  int rank = imp_nshape(n, x).rank + 1;
  ir_shape os = imp_unit_shape(rank, axis, out);
  ir_ref xv = ir_view_unsqueeze(g, x, axis), iota = ir_iota(g, imp_unit_shape(rank, axis + 1, in), axis + 1);
  ir_dtype t = imp_gdtype(g, x);
  ir_ref sum = IR_NONE;
  void *buf = malloc((size_t)out * 8);
  if (!buf) return imp_fail(n, "out of memory for %lld resize weights", (long long)out), IR_NONE;
  for (int k = 0; k < ntaps; k++) {
    ir_ref ik = ir_const(g, "resize_index", IR_I64, os, idx[k]);
    ir_ref tap = ir_view_squeeze(g, imp_select_sum(n, ir_eq(g, iota, ik), xv, axis + 1), axis + 1);
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

/* Each element of axis a repeated k[a] times (k[a] = 1: left alone):
 * unsqueeze, expand, merge, all axes in one view, so at most one copy. */
static ir_ref repeat_axes(ir_graph *g, ir_ref x, const int64_t *k) {
  ir_shape s = imp_gshape(g, x), e = {.rank = 0}, m = s;
  bool any = false; /* the callers keep rank + repeated axes <= IR_MAX_RANK */
  for (int a = 0; a < s.rank; a++) {
    e.d[e.rank++] = s.d[a];
    if (k[a] != 1) x = ir_view_unsqueeze(g, x, e.rank), e.d[e.rank++] = k[a], m.d[a] = ir_dim_mul(s.d[a], k[a]);
    any |= k[a] != 1;
  }
  return any ? ir_view_reshape(g, ir_view_expand(g, x, e), m) : x;
}

/* Does output x read input x / k with weight 1 (nearest by a whole scale),
 * whatever the modes that made the taps? */
static int64_t taps_repeat(int64_t in, int64_t out, int64_t *idx[4], double *w[4], int ntaps) {
  if (ntaps != 1 || out % in) return 0;
  int64_t k = out / in;
  for (int64_t x = 0; x < out; x++)
    if (idx[0][x] != x / k || w[0][x] != 1.0) return 0;
  return k;
}

/* Separable resampling: each resized axis is a constant weight matrix
 * applied by broadcast MUL + SUM; crop extrapolation is a final WHERE. */
/* A symbolic axis: nearest with a whole scale k, where output i reads
 * input floor(i / k) (asymmetric + floor, or the half-pixel modes with
 * rounding, whose source coordinate q + (r + 0.5)/k - 0.5 never ties), is
 * each element repeated k times: unsqueeze, expand, merge. Anything else
 * on a symbolic axis is refused (run pins the symbol). */
static bool repeat_ok(const resize_opts *o, double scale, bool crop) {
  int64_t k = (int64_t)scale;
  bool half = !strcmp(o->ctm, "half_pixel") || !strcmp(o->ctm, "pytorch_half_pixel");
  return o->mode == M_NEAREST && !crop && scale >= 1 && (double)k == scale && k <= 64 &&
         ((!strcmp(o->ctm, "asymmetric") && o->nn == NN_FLOOR) ||
          (half && (o->nn == NN_ROUND_FLOOR || o->nn == NN_ROUND_CEIL)));
}

static ir_ref nearest_repeat(imp_node *n, ir_ref x, int a, const resize_opts *o, double scale, bool crop) {
  ir_graph *g = n->g;
  ir_shape s = imp_nshape(n, x);
  int64_t k = (int64_t)scale;
  bool ok = repeat_ok(o, scale, crop);
  if (k == 1 && !crop) return x;
  if (!ok) return imp_fail_sym(n, s.d[a], "a resize other than nearest by a whole scale on a symbolic axis"), IR_NONE;
  int64_t ks[IR_MAX_RANK];
  for (int i = 0; i < s.rank; i++) ks[i] = i == a ? k : 1;
  return repeat_axes(g, x, ks);
}

/* ---- 2-D bilinear as onnxruntime computes it ----
 * onnxruntime's CPU Resize (linear, [N, C, H, W] resized along H and W)
 * computes each output as four products summed in order,
 *   ((dx2 dy2) X11 + (dx1 dy2) X21) + (dx2 dy1) X12 + (dx1 dy1) X22,
 * with float32 coordinates and weights (upsample.h, UpsampleBilinear).
 * The separable form (rows, then columns) rounds differently: one float32
 * ulp, which a DynamicQuantizeLinear after it turns into a whole step
 * where x / scale lands on a tie (seg_int8: 3 of 8.4M codes). So this case
 * is lowered in the same order. */

/* Per output along one axis: the two inputs (i1, i2) and the distances to
 * them (d1, d2; 0.5 each when they are the same input), clamped. */
static void ort_axis(const resize_opts *o, int64_t in, int64_t out, float scale, int64_t *i1, int64_t *i2,
                     float *d1, float *d2) {
  for (int64_t x = 0; x < out; x++) {
    bool outside;
    float v = (float)src_coord(o, x, in, out, scale, 0, 1, &outside);
    v = v < 0 ? 0 : v > (float)(in - 1) ? (float)(in - 1) : v;
    i1[x] = (int64_t)v < in - 1 ? (int64_t)v : in - 1;
    i2[x] = i1[x] + 1 < in - 1 ? i1[x] + 1 : in - 1;
    d1[x] = fabsf(v - (float)i1[x]), d2[x] = fabsf(v - (float)i2[x]);
    if (i1[x] == i2[x]) d1[x] = d2[x] = 0.5f;
  }
}

/* x read at idx[o] along `axis` (one tap of weight 1: an indexed read). */
static ir_ref pick(imp_node *n, ir_ref x, int axis, int64_t *idx, int64_t in, int64_t out) {
  double one[1] = {1};
  double *w[4] = {one};
  int64_t *ix[4] = {idx};
  return apply_axis(n, x, axis, ix, w, 1, in, out);
}

static ir_ref weights(ir_graph *g, const float *d, int rank, int axis, int64_t out) {
  return ir_const(g, "resize_w", IR_F32, imp_unit_shape(rank, axis, out), d);
}

/* Is this the case onnxruntime computes with UpsampleBilinear (static
 * shapes: resize_bilinear; H or W symbolic: imp_resize_bilinear_sym)? */
static bool ort_bilinear(const resize_opts *o, const ir_shape *s, const double *scale, bool crop, bool sym) {
  bool ctm = !strcmp(o->ctm, "half_pixel") || !strcmp(o->ctm, "pytorch_half_pixel") || !strcmp(o->ctm, "asymmetric") ||
             !strcmp(o->ctm, "align_corners");
  if (o->mode != M_LINEAR || s->rank != 4 || crop || o->exclude_outside || !ctm) return false;
  if (scale[0] != 1 || scale[1] != 1) return false;
  if (sym) return ir_dim_is_sym(s->d[2]) || ir_dim_is_sym(s->d[3]) || scale[2] == 0 || scale[3] == 0;
  if (scale[2] == 0 || scale[3] == 0) return false; /* a symbolic size */
  for (int a = 0; a < 4; a++)
    if (ir_dim_is_sym(s->d[a])) return false;
  return true;
}

static int resize_bilinear(imp_node *n, ir_ref x, const resize_opts *o, const double *scale, const int64_t *osz) {
  ir_graph *g = n->g;
  ir_shape s = imp_nshape(n, x);
  int64_t H = s.d[2], W = s.d[3], OH = osz[2], OW = osz[3], bytes;
  if (OH < 1 || OW < 1 || H < 1 || W < 1) return imp_fail(n, "empty resize");
  if (ir_mul_ov(OH + OW, 2 * 16, &bytes) || (uint64_t)bytes > imp_mem_limit())
    return imp_fail(n, "resizing to %lld x %lld needs more than the memory limit (%zu bytes; see --max-memory)",
                    (long long)OH, (long long)OW, imp_mem_limit());
  int64_t *iy1 = malloc((size_t)OH * 8), *iy2 = malloc((size_t)OH * 8);
  int64_t *ix1 = malloc((size_t)OW * 8), *ix2 = malloc((size_t)OW * 8);
  float *dy1 = malloc((size_t)OH * 4), *dy2 = malloc((size_t)OH * 4);
  float *dx1 = malloc((size_t)OW * 4), *dx2 = malloc((size_t)OW * 4);
  int rc = -1;
  if (!iy1 || !iy2 || !ix1 || !ix2 || !dy1 || !dy2 || !dx1 || !dx2) {
    imp_fail(n, "out of memory resizing to %lld x %lld", (long long)OH, (long long)OW);
    goto done;
  }
  ort_axis(o, H, OH, imp_resize_scale_f32(scale[2], H, OH), iy1, iy2, dy1, dy2);
  ort_axis(o, W, OW, imp_resize_scale_f32(scale[3], W, OW), ix1, ix2, dx1, dx2);
  /* the rows read materialised (MOVE): a pick of a pick is not made an
   * indexed read, and stays a one-hot sum over W (4.3 GFLOP for one
   * 256 -> 512 resize of 16 channels, against 0.02) */
  ir_ref r1 = pick(n, x, 2, iy1, H, OH), r2 = pick(n, x, 2, iy2, H, OH);
  if (r1 == IR_NONE || r2 == IR_NONE) goto done;
  r1 = ir_move(g, r1), r2 = ir_move(g, r2);
  ir_ref X11 = pick(n, r1, 3, ix1, W, OW), X21 = pick(n, r1, 3, ix2, W, OW);
  ir_ref X12 = pick(n, r2, 3, ix1, W, OW), X22 = pick(n, r2, 3, ix2, W, OW);
  if (X11 == IR_NONE || X21 == IR_NONE || X12 == IR_NONE || X22 == IR_NONE) goto done;
  ir_ref wx1 = weights(g, dx1, 4, 3, OW), wx2 = weights(g, dx2, 4, 3, OW);
  ir_ref wy1 = weights(g, dy1, 4, 2, OH), wy2 = weights(g, dy2, 4, 2, OH);
  ir_ref t11 = ir_binary(g, IR_MUL, ir_binary(g, IR_MUL, wx2, wy2), X11);
  ir_ref t21 = ir_binary(g, IR_MUL, ir_binary(g, IR_MUL, wx1, wy2), X21);
  ir_ref t12 = ir_binary(g, IR_MUL, ir_binary(g, IR_MUL, wx2, wy1), X12);
  ir_ref t22 = ir_binary(g, IR_MUL, ir_binary(g, IR_MUL, wx1, wy1), X22);
  rc = imp_set_out(n, 0, ir_binary(g, IR_ADD, ir_binary(g, IR_ADD, ir_binary(g, IR_ADD, t11, t21), t12), t22));
done:
  free(iy1), free(iy2), free(ix1), free(ix2), free(dy1), free(dy2), free(dx1), free(dx2);
  return rc;
}

static int resize_common(imp_node *n, ir_ref x, const resize_opts *o, const double *scale, const int64_t *osz,
                         const double *roi) {
  ir_graph *g = n->g;
  ir_shape s = imp_nshape(n, x);
  int r = s.rank;
  if (r + 1 > IR_MAX_RANK) return imp_fail(n, "rank too high");
  if (o->mode != M_NEAREST && !imp_need_float(n, x)) return -1;
  if (imp_dtype(n, x) == IR_F16) return imp_fail(n, "float16 dtype not supported");
  bool crop = !strcmp(o->ctm, "tf_crop_and_resize");
  if (imp_dtype(n, x) == IR_F32 && ort_bilinear(o, &s, scale, crop, false)) return resize_bilinear(n, x, o, scale, osz);
  if (imp_dtype(n, x) == IR_F32 && ort_bilinear(o, &s, scale, crop, true))
    return imp_resize_bilinear_sym(n, x, o->ctm, scale, osz);
  if (o->mode == M_NEAREST && !crop) { /* a size read from a shape, or a symbolic axis no repeat does */
    bool rt = false;
    for (int a = 0; a < r; a++)
      rt |= scale[a] == 0 || (ir_dim_is_sym(s.d[a]) && scale[a] != 1 && !repeat_ok(o, scale[a], crop));
    if (rt) return imp_resize_nearest_sym(n, x, o->ctm, (int)o->nn, scale, osz);
  }
  ir_ref mask = IR_NONE, y = x;
  int64_t rep[IR_MAX_RANK] = {0}; /* static axes resized by a repeat, applied at the end */
  int nrep = 0;
  for (int a = 0; a < r; a++) rep[a] = 1;
  for (int a = 0; a < r; a++) {
    int64_t in = s.d[a], out = osz[a];
    if (ir_dim_is_sym(out) && !ir_dim_is_sym(in)) return imp_fail_sym(n, out, "a resize to a symbolic size in this mode");
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
      /* a repeat is a view; the one-hot sum over the input axis costs
       * in x out per row (the 2x nearest upsampling of a detector's FPN
       * at 160x160: 31 % of the DBNet-like net of make_cnn.py) */
      int64_t k = any_out ? 0 : taps_repeat(in, out, idx, w, ntaps);
      if (k > 1 && r + ++nrep <= IR_MAX_RANK) rep[a] = k;
      else if (any_out || (k != 1 && !taps_identity(in, out, idx, w, ntaps)))
        y = apply_axis(n, y, a, idx, w, ntaps, in, out);
      if (crop && any_out) {
        ir_ref m = ir_const(g, "resize_out", IR_BOOL, imp_unit_shape(r, a, out), outside);
        mask = mask == IR_NONE ? m : ir_binary(g, IR_OR, mask, m);
      }
    }
    for (int k = 0; k < 4; k++) free(idx[k]), free(w[k]);
    free(outside);
    if (!ok) return imp_fail(n, "out of memory resizing axis %d to %lld", a, (long long)out);
  }
  y = repeat_axes(g, y, rep);
  if (mask != IR_NONE) y = ir_where(g, mask, imp_k(g, y, imp_attr_f(n, "extrapolation_value", 0.0)), y);
  return imp_set_out(n, 0, y == x ? ir_move(g, x) : y);
}

/* floor(scale * d), multiplied in float32 as onnxruntime does (10 x 0.7f
 * is 7 there and in PyTorch, 6 in exact arithmetic); for a symbolic d
 * (where only a whole scale is kept, see nearest_repeat) the product, else
 * d itself as a placeholder. */
static int64_t sym_size(int64_t d, double scale) {
  if (!ir_dim_is_sym(d)) {
    /* a product past int64 (or NaN) must not reach the cast: that is UB */
    float p = (float)scale * (float)d;
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
  ir_shape s = imp_nshape(n, x);
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
    nz = imp_const_dims(n, 3, zv, IR_MAX_RANK); /* sizes read from a shape may be symbolic */
    if (nz < 0) return imp_fail(n, "sizes must be a compile-time constant");
  }
  int cnt = ns >= 0 ? ns : nz;
  if (cnt != na) return imp_fail(n, "scales/sizes have %d values for %d axes", cnt, na);
  for (int i = 0; i < na; i++) {
    int a = (int)axes[i];
    if (ns >= 0) {
      if (sv[i] <= 0) return imp_fail(n, "non-positive scale");
      scale[a] = (double)(float)sv[i], osz[a] = sym_size(s.d[a], scale[a]);
    } else if (ir_dim_is_sym(s.d[a]) || ir_dim_is_sym(zv[i])) {
      /* scale 0: out / L at run time (resize_sym.c, bilinear only) */
      if (zv[i] != s.d[a]) osz[a] = zv[i], scale[a] = 0;
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
  ir_shape s = imp_nshape(n, x);
  resize_opts o;
  if (!parse_resize_opts(n, &o, true)) return -1;
  double sv[IR_MAX_RANK];
  int ns = n->opset >= 9 ? imp_const_floats(n, 1, sv, IR_MAX_RANK) : imp_attr_floats(n, "scales", sv, IR_MAX_RANK);
  if (ns != s.rank) return imp_fail(n, "scales must be a compile-time constant with one value per axis");
  int64_t osz[IR_MAX_RANK];
  for (int i = 0; i < s.rank; i++) sv[i] = (double)(float)sv[i], osz[i] = sym_size(s.d[i], sv[i]);
  return resize_common(n, x, &o, sv, osz, NULL);
}


const imp_op_entry imp_ops_resize[] = {
    {"DepthToSpace", lower_depth_to_space, IMP_SYM},
    {"SpaceToDepth", lower_space_to_depth, IMP_SYM},
    {"Resize", lower_resize, IMP_SYM},
    {"Upsample", lower_upsample, IMP_SYM},
    {NULL, NULL, 0},
};
