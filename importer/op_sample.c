/* op_sample.c — sampling an image at computed positions: GridSample and
 * RoiAlign. Every tap is a gather from the image's flattened spatial axes
 * (the one-hot reduction that ir_rewrite_gather turns into an indexed
 * read, which reads 0 for an index outside the image: a position the zeros
 * padding leaves out gets index -1). Both follow onnxruntime's CPU kernels
 * (grid_sample.cc, roialign.cc), the reference of the tests, including the
 * order of the float operations. */
#include "importer_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECT, PAD_NONE /* always inside */ } pad_mode;

static ir_ref ki(ir_graph *g, int64_t v) {
  return ir_scalar(g, IR_I64, (double)v);
}
static ir_ref kf(ir_graph *g, ir_ref like, double v) {
  return imp_k(g, like, v);
}
static ir_ref lt(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_LT, a, b);
}
static ir_ref sub(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_sub(g, a, b);
}

/* floor(x) of a float tensor as int64 (the cast truncates and saturates). */
static ir_ref floor_i(ir_graph *g, ir_ref x) {
  ir_ref t = ir_cast(g, x, IR_I64);
  ir_ref back = ir_cast(g, t, imp_gdtype(g, x));
  return ir_where(g, lt(g, x, back), imp_add(g, t, ki(g, -1)), t);
}

/* x rounded half to even, as int64 (std::nearbyint). */
static ir_ref round_i(ir_graph *g, ir_ref x) {
  ir_ref f = floor_i(g, x);
  ir_ref d = sub(g, x, ir_cast(g, f, imp_gdtype(g, x))), half = kf(g, x, 0.5);
  ir_ref odd = ir_binary(g, IR_NEQ, ir_binary(g, IR_MOD, f, ki(g, 2)), ki(g, 0));
  ir_ref up = ir_binary(g, IR_OR, lt(g, half, d), ir_binary(g, IR_AND, ir_eq(g, d, half), odd));
  return ir_where(g, up, imp_add(g, f, ki(g, 1)), f);
}

/* Integer position i on an axis of `len` as the padding reads it; for
 * zeros, *valid says whether it lies inside. Reflection mirrors about the
 * borders (pixel centres 0 and len-1 with align_corners, else the edges
 * -0.5 and len-0.5), with period `per`. */
static ir_ref pad_index(imp_node *n, ir_ref i, int64_t len, pad_mode pm, bool align, ir_ref *valid) {
  ir_graph *g = n->g;
  if (pm == PAD_NONE) return i;
  if (pm == PAD_ZEROS) {
    *valid = ir_binary(g, IR_AND, ir_ge(g, i, ki(g, 0)), lt(g, i, ki(g, len)));
    return i;
  }
  if (pm == PAD_BORDER) return ir_min(g, ir_binary(g, IR_MAX, i, ki(g, 0)), ki(g, len - 1));
  int64_t per;
  if (ir_mul_ov(2, align ? len - 1 : len, &per)) return imp_fail(n, "axis of %lld is too long", (long long)len), IR_NONE;
  if (per == 0) return imp_mul(g, i, ki(g, 0)); /* one pixel with align_corners: always it */
  ir_ref m = ir_binary(g, IR_MOD, i, ki(g, per));
  m = ir_where(g, lt(g, m, ki(g, 0)), imp_add(g, m, ki(g, per)), m);
  return ir_where(g, lt(g, ki(g, len - 1), m), sub(g, ki(g, align ? per : per - 1), m), m);
}

/* The image [B, C, H, W] as [B?, C, 1.., V = H*W] and where to read it. */
typedef struct {
  imp_node *n;
  ir_ref img;   /* viewed for the gather: the V axis last */
  int vax;      /* that axis */
  int64_t D, H, W, V; /* D: 1 but for a volume (5-D GridSample) */
  pad_mode pm;
  bool align;
} sampler;

/* The image at integer positions (iy, ix) (int64, of the sample shape,
 * rank vax): a tensor of the sample shape with the channel axis filled.
 * `base` (or IR_NONE) is added to the flat index (RoiAlign's batch). */
static ir_ref tap3(sampler *s, ir_ref iz, ir_ref iy, ir_ref ix, ir_ref base) {
  ir_graph *g = s->n->g;
  ir_ref vz = IR_NONE, vy = IR_NONE, vx = IR_NONE;
  iy = pad_index(s->n, iy, s->H, s->pm, s->align, &vy);
  ix = pad_index(s->n, ix, s->W, s->pm, s->align, &vx);
  ir_ref e = imp_add(g, imp_mul(g, iy, ki(g, s->W)), ix);
  ir_ref valid = s->pm == PAD_ZEROS ? ir_binary(g, IR_AND, vy, vx) : IR_NONE;
  if (iz != IR_NONE) { /* a volume: depth, then row, then column */
    iz = pad_index(s->n, iz, s->D, s->pm, s->align, &vz);
    e = imp_add(g, imp_mul(g, iz, ki(g, s->H * s->W)), e);
    if (s->pm == PAD_ZEROS) valid = ir_binary(g, IR_AND, valid, vz);
  }
  if (s->pm == PAD_ZEROS) e = ir_where(g, valid, e, ki(g, -1));
  if (base != IR_NONE) e = imp_add(g, e, base);
  ir_ref hit = ir_eq(g, ir_iota(g, imp_unit_shape(s->vax + 1, s->vax, s->V), s->vax), ir_view_unsqueeze(g, e, s->vax));
  return ir_squeeze_axes(g, imp_select_sum(s->n, hit, s->img, s->vax), 1u << s->vax);
}

static ir_ref tap(sampler *s, ir_ref iy, ir_ref ix, ir_ref base) {
  return tap3(s, IR_NONE, iy, ix, base);
}

/* ------------------------------------------------------------ GridSample */

/* Keys' cubic convolution weights (a = -0.75) at distance t in [0, 1) of
 * the second of four taps (GsGetCubicCoeffs). */
static void cubic_coeffs(ir_graph *g, ir_ref t, ir_ref *c) {
  const double a = -0.75;
  ir_ref one = kf(g, t, 1), t1 = imp_add(g, t, one), u = sub(g, one, t), u1 = sub(g, kf(g, t, 2), t);
  /* ((a*s - 5a)*s + 8a)*s - 4a for s = t+1 and s = 2-t */
  ir_ref s[2] = {t1, u1};
  for (int k = 0; k < 2; k++) {
    ir_ref p = sub(g, imp_mul(g, kf(g, t, a), s[k]), kf(g, t, 5 * a));
    p = imp_add(g, imp_mul(g, p, s[k]), kf(g, t, 8 * a));
    c[k ? 3 : 0] = sub(g, imp_mul(g, p, s[k]), kf(g, t, 4 * a));
  }
  /* ((a+2)*s - (a+3))*s*s + 1 for s = t and s = 1-t */
  ir_ref m[2] = {t, u};
  for (int k = 0; k < 2; k++) {
    ir_ref p = sub(g, imp_mul(g, kf(g, t, a + 2), m[k]), kf(g, t, a + 3));
    c[k + 1] = imp_add(g, imp_mul(g, imp_mul(g, p, m[k]), m[k]), one);
  }
}

/* grid value in [-1, 1] -> position in pixels (GsDenormalize). */
static ir_ref denorm(ir_graph *g, ir_ref v, int64_t len, bool align) {
  ir_ref v1 = imp_add(g, v, kf(g, v, 1));
  if (align) return imp_mul(g, imp_mul(g, v1, kf(g, v, 0.5)), kf(g, v, (double)(len - 1)));
  return imp_mul(g, sub(g, imp_mul(g, v1, kf(g, v, (double)len)), kf(g, v, 1)), kf(g, v, 0.5));
}

/* X [N, C, D, H, W] at grid [N, Do, Ho, Wo, 3] (x, y, z): nearest or
 * trilinear (onnxruntime has no cubic for volumes), the padding per axis
 * as for images. */
static int grid_sample_3d(imp_node *n, sampler *s, ir_ref x, ir_ref grid, int interp) {
  ir_graph *g = n->g;
  ir_shape xs = imp_nshape(n, x), gs = imp_nshape(n, grid);
  if (interp == 3) return imp_fail(n, "cubic mode is not supported on 5-D inputs");
  s->img = ir_view_reshape(g, x, (ir_shape){.rank = 6, .d = {xs.d[0], xs.d[1], 1, 1, 1, s->V}});
  ir_shape ps = {.rank = 5, .d = {gs.d[0], 1, gs.d[1], gs.d[2], gs.d[3]}}; /* a sample's shape */
  ir_dtype t = imp_dtype(n, x);
  ir_ref f[3]; /* z, y, x */
  int64_t len[3] = {s->D, s->H, s->W};
  for (int k = 0; k < 3; k++)
    f[k] = denorm(g, ir_view_reshape(g, imp_take(g, grid, 4, 2 - k, 1), ps), len[k], s->align);
  if (interp == 0) return imp_set_out(n, 0, tap3(s, round_i(g, f[0]), round_i(g, f[1]), round_i(g, f[2]), IR_NONE));
  ir_ref i1[3], i2[3], d1[3], d2[3];
  for (int k = 0; k < 3; k++) {
    i1[k] = floor_i(g, f[k]), i2[k] = imp_add(g, i1[k], ki(g, 1));
    d1[k] = sub(g, f[k], ir_cast(g, i1[k], t)), d2[k] = sub(g, ir_cast(g, i2[k], t), f[k]);
  }
  ir_ref acc = IR_NONE;
  for (int z = 0; z < 2; z++) {
    ir_ref plane = IR_NONE;
    for (int y = 0; y < 2; y++) {
      ir_ref iz = z ? i2[0] : i1[0], iy = y ? i2[1] : i1[1];
      ir_ref row = imp_add(g, imp_mul(g, d2[2], tap3(s, iz, iy, i1[2], IR_NONE)), imp_mul(g, d1[2], tap3(s, iz, iy, i2[2], IR_NONE)));
      row = imp_mul(g, y ? d1[1] : d2[1], row);
      plane = y ? imp_add(g, plane, row) : row;
    }
    plane = imp_mul(g, z ? d1[0] : d2[0], plane);
    acc = z ? imp_add(g, acc, plane) : plane;
  }
  return imp_set_out(n, 0, acc);
}

static int lower_grid_sample(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), grid = imp_req(n, 1);
  if (x == IR_NONE || grid == IR_NONE || !imp_need_float(n, x) || !imp_need_float(n, grid)) return -1;
  ir_shape xs = imp_nshape(n, x), gs = imp_nshape(n, grid);
  bool vol = xs.rank == 5;
  if (xs.rank != 4 && !vol)
    return imp_fail(n, "only 4-D (N, C, H, W) and 5-D (N, C, D, H, W) inputs are supported, got rank %d", xs.rank);
  if (gs.rank != xs.rank || gs.d[0] != xs.d[0] || gs.d[xs.rank - 1] != xs.rank - 2)
    return imp_fail(n, "grid must have shape (N, %s, %d) with X's N", vol ? "D_out, H_out, W_out" : "H_out, W_out",
                    xs.rank - 2);
  const char *mode = imp_attr_s(n, "mode", n->opset >= 20 ? "linear" : "bilinear");
  const char *pad = imp_attr_s(n, "padding_mode", "zeros");
  int interp = !strcmp(mode, "bilinear") || !strcmp(mode, "linear") ? 1
               : !strcmp(mode, "nearest")                           ? 0
               : !strcmp(mode, "bicubic") || !strcmp(mode, "cubic") ? 3
                                                                    : -1;
  if (interp < 0) return imp_fail(n, "mode '%s' is not supported", mode);
  sampler s = {.n = n, .vax = xs.rank, .D = vol ? xs.d[2] : 1, .H = xs.d[xs.rank - 2], .W = xs.d[xs.rank - 1],
               .align = imp_attr_i(n, "align_corners", 0) != 0};
  if (!strcmp(pad, "zeros")) s.pm = PAD_ZEROS;
  else if (!strcmp(pad, "border")) s.pm = PAD_BORDER;
  else if (!strcmp(pad, "reflection")) s.pm = PAD_REFLECT;
  else return imp_fail(n, "padding_mode '%s' is not supported", pad);
  if (ir_mul_ov(s.H, s.W, &s.V) || ir_mul_ov(s.V, s.D, &s.V)) return imp_fail(n, "image too large");
  ir_dtype t = imp_dtype(n, x);
  if (imp_dtype(n, grid) != t) grid = ir_cast(g, grid, t);
  if (vol) return grid_sample_3d(n, &s, x, grid, interp);
  s.img = ir_view_reshape(g, x, (ir_shape){.rank = 5, .d = {xs.d[0], xs.d[1], 1, 1, s.V}});
  ir_shape ps = {.rank = 4, .d = {gs.d[0], 1, gs.d[1], gs.d[2]}}; /* a sample's shape */
  ir_ref fx = denorm(g, ir_view_reshape(g, imp_take(g, grid, 3, 0, 1), ps), s.W, s.align);
  ir_ref fy = denorm(g, ir_view_reshape(g, imp_take(g, grid, 3, 1, 1), ps), s.H, s.align);
  if (interp == 0) return imp_set_out(n, 0, tap(&s, round_i(g, fy), round_i(g, fx), IR_NONE));
  ir_ref x1 = floor_i(g, fx), y1 = floor_i(g, fy);
  ir_ref dx1 = sub(g, fx, ir_cast(g, x1, t)), dy1 = sub(g, fy, ir_cast(g, y1, t));
  if (interp == 1) {
    ir_ref x2 = imp_add(g, x1, ki(g, 1)), y2 = imp_add(g, y1, ki(g, 1));
    ir_ref dx2 = sub(g, ir_cast(g, x2, t), fx), dy2 = sub(g, ir_cast(g, y2, t), fy);
    ir_ref r1 = imp_add(g, imp_mul(g, dx2, tap(&s, y1, x1, IR_NONE)), imp_mul(g, dx1, tap(&s, y1, x2, IR_NONE)));
    ir_ref r2 = imp_add(g, imp_mul(g, dx2, tap(&s, y2, x1, IR_NONE)), imp_mul(g, dx1, tap(&s, y2, x2, IR_NONE)));
    return imp_set_out(n, 0, imp_add(g, imp_mul(g, dy2, r1), imp_mul(g, dy1, r2)));
  }
  ir_ref cx[4], cy[4], acc = IR_NONE;
  cubic_coeffs(g, dx1, cx);
  cubic_coeffs(g, dy1, cy);
  for (int h = 0; h < 4; h++) {
    ir_ref iy = imp_add(g, y1, ki(g, h - 1)), row = IR_NONE;
    for (int w = 0; w < 4; w++) {
      ir_ref p = imp_mul(g, cx[w], tap(&s, iy, imp_add(g, x1, ki(g, w - 1)), IR_NONE));
      row = w ? imp_add(g, row, p) : p;
    }
    acc = h ? imp_add(g, acc, imp_mul(g, cy[h], row)) : imp_mul(g, cy[h], row);
  }
  return imp_set_out(n, 0, acc);
}

/* -------------------------------------------------------------- RoiAlign */

/* The sample positions along one axis of every bin, as onnxruntime's
 * PreCalcForBilinearInterpolate computes them: start + p*bin + (i+.5)*bin/G
 * for G samples per bin (`gf`: a constant, or per roi when adaptive), of
 * shape `ps` (p iota on axis pa, i iota on axis ia, ps.d[ia] samples at
 * most), and in/out of range: outside [-1, len] the sample weighs 0. Sets
 * *lo, *hi (int64) and the fraction *l. */
static ir_ref roi_axis(ir_graph *g, ir_ref start, ir_ref bin, ir_shape ps, int pa, int ia, ir_ref gf, int64_t len,
                       ir_ref *lo, ir_ref *hi, ir_ref *l) {
  ir_dtype t = imp_gdtype(g, start);
  ir_ref p = ir_cast(g, ir_iota(g, imp_unit_shape(ps.rank, pa, ps.d[pa]), pa), t);
  ir_ref i = imp_add(g, ir_cast(g, ir_iota(g, imp_unit_shape(ps.rank, ia, ps.d[ia]), ia), t), kf(g, start, 0.5));
  ir_ref v = imp_add(g, imp_add(g, start, imp_mul(g, p, bin)), ir_div(g, imp_mul(g, i, bin), gf));
  ir_ref out = ir_binary(g, IR_OR, lt(g, v, kf(g, v, -1)), lt(g, kf(g, v, (double)len), v));
  v = ir_binary(g, IR_MAX, v, kf(g, v, 0));
  ir_ref low = ir_cast(g, v, IR_I64), edge = ir_ge(g, low, ki(g, len - 1));
  *lo = ir_where(g, edge, ki(g, len - 1), low);
  *hi = ir_where(g, edge, ki(g, len - 1), imp_add(g, low, ki(g, 1)));
  v = ir_where(g, edge, kf(g, v, (double)(len - 1)), v);
  *l = sub(g, v, ir_cast(g, *lo, t));
  return out;
}

/* sampling_ratio 0 (adaptive): ceil(extent / bins) samples per bin along
 * an axis, per roi (int64, [R,1,1,1,1,1]; 0 for an empty or inverted roi),
 * as onnxruntime counts them. At most `max` (a roi larger than the image
 * by more than a bin needs more: the index error at run time, never a
 * read past the samples computed). */
static ir_ref adaptive_count(ir_graph *g, ir_ref extent, int64_t bins, int64_t max) {
  ir_ref q = ir_div(g, extent, kf(g, extent, (double)bins));
  ir_ref c = ir_binary(g, IR_MAX, ir_unary(g, IR_NEG, floor_i(g, ir_unary(g, IR_NEG, q))), ki(g, 0));
  ir_ref last = ir_check_index(g, ir_binary(g, IR_MAX, imp_add(g, c, ki(g, -1)), ki(g, 0)), max);
  return ir_where(g, lt(g, ki(g, 0), c), imp_add(g, last, ki(g, 1)), c);
}

/* Constant rois (adaptive sampling): *gh, *gw raised to what the largest
 * roi needs, plus one (its count is computed in the rois' type at run
 * time), so that a roi larger than the image is computed, not refused at
 * run time. A count past 2^20 (or not finite) is left to that check. */
static int roi_const_counts(imp_node *n, ir_ref rois, int64_t R, double scale, int64_t PH,
                            int64_t PW, int64_t *gh, int64_t *gw) {
  if (!ir_is_const(n->g, rois)) return 0;
  void *v;
  if (ir_eval(n->g, rois, &v)) return imp_fail(n, "rois: %s", ir_error(n->g));
  ir_dtype t = imp_dtype(n, rois);
  for (int64_t i = 0; i < R; i++) {
    double h = (ir_elem_f(t, v, 4 * i + 3) - ir_elem_f(t, v, 4 * i + 1)) * scale / (double)PH;
    double w = (ir_elem_f(t, v, 4 * i + 2) - ir_elem_f(t, v, 4 * i)) * scale / (double)PW;
    if (h > 0 && h < (1 << 20) && ceil(h) + 1 > (double)*gh) *gh = (int64_t)ceil(h) + 1;
    if (w > 0 && w < (1 << 20) && ceil(w) + 1 > (double)*gw) *gw = (int64_t)ceil(w) + 1;
  }
  free(v);
  return 0;
}

static int lower_roi_align(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), rois = imp_req(n, 1), bidx = imp_req(n, 2);
  if (x == IR_NONE || rois == IR_NONE || bidx == IR_NONE || !imp_need_float(n, x)) return -1;
  ir_shape xs = imp_nshape(n, x), rs = imp_nshape(n, rois), bs = imp_nshape(n, bidx);
  if (xs.rank != 4) return imp_fail(n, "X must be 4-D (N, C, H, W)");
  if (rs.rank != 2 || rs.d[1] != 4 || bs.rank != 1 || bs.d[0] != rs.d[0])
    return imp_fail(n, "rois must be (num_rois, 4) and batch_indices (num_rois)");
  const char *mode = imp_attr_s(n, "mode", "avg");
  const char *ctm = imp_attr_s(n, "coordinate_transformation_mode", n->opset >= 16 ? "half_pixel" : "output_half_pixel");
  bool is_max = !strcmp(mode, "max"), half = !strcmp(ctm, "half_pixel");
  if (!is_max && strcmp(mode, "avg")) return imp_fail(n, "mode '%s' is not supported", mode);
  if (!half && strcmp(ctm, "output_half_pixel")) return imp_fail(n, "coordinate_transformation_mode '%s' is not supported", ctm);
  int64_t PH = imp_attr_i(n, "output_height", 1), PW = imp_attr_i(n, "output_width", 1);
  int64_t G = imp_attr_i(n, "sampling_ratio", 0), R = rs.d[0], C = xs.d[1], H = xs.d[2], W = xs.d[3], HW, CHW;
  if (PH < 1 || PW < 1 || PH > (1 << 20) || PW > (1 << 20)) return imp_fail(n, "output_height/width must be in 1..2^20");
  if (G < 0 || G > 1024) return imp_fail(n, "sampling_ratio %lld is not supported (0..1024)", (long long)G);
  if (ir_mul_ov(H, W, &HW) || ir_mul_ov(C, HW, &CHW) || H < 1 || W < 1) return imp_fail(n, "X's size is not supported");
  /* adaptive: as many samples as a roi the size of the image needs, plus one */
  int64_t GH = G ? G : (H + PH - 1) / PH + 1, GW = G ? G : (W + PW - 1) / PW + 1, cnt, grid;
  double scale = imp_attr_f(n, "spatial_scale", 1.0);
  if (!G && roi_const_counts(n, rois, R, scale, PH, PW, &GH, &GW)) return -1;
  if (ir_mul_ov(R, C, &cnt) || ir_mul_ov(cnt, PH * PW, &cnt) || ir_mul_ov(GH, GW, &grid) ||
      ir_mul_ov(cnt, grid, &cnt) || cnt > (INT64_C(1) << 40))
    return imp_fail(n, "the sample count (%lld rois x %lld channels x bins x samples) overflows 2^40", (long long)R,
                    (long long)C);
  ir_dtype t = imp_dtype(n, x);
  if (imp_dtype(n, rois) != t) rois = ir_cast(g, rois, t);
  /* samples: [R, 1, PH, PW, GH, GW]; the channel axis comes from the gather */
  ir_shape ps = {.rank = 6, .d = {R, 1, PH, PW, GH, GW}}, col = {.rank = 6, .d = {R, 1, 1, 1, 1, 1}};
  ir_ref r[4];
  for (int k = 0; k < 4; k++) {
    r[k] = imp_mul(g, ir_view_reshape(g, imp_take(g, rois, 1, k, 1), col), kf(g, rois, scale));
    if (half) r[k] = sub(g, r[k], kf(g, rois, 0.5));
  }
  ir_ref rw = sub(g, r[2], r[0]), rh = sub(g, r[3], r[1]);
  if (!half) rw = ir_binary(g, IR_MAX, rw, kf(g, rw, 1)), rh = ir_binary(g, IR_MAX, rh, kf(g, rh, 1));
  ir_ref gh = G ? IR_NONE : adaptive_count(g, rh, PH, GH), gw = G ? IR_NONE : adaptive_count(g, rw, PW, GW);
  /* the divisor of a position: at least 1, so that an empty roi's (unused) positions stay finite */
  ir_ref gfh = G ? kf(g, rh, (double)G) : ir_cast(g, ir_binary(g, IR_MAX, gh, ki(g, 1)), t);
  ir_ref gfw = G ? kf(g, rw, (double)G) : ir_cast(g, ir_binary(g, IR_MAX, gw, ki(g, 1)), t);
  ir_ref ylo, yhi, ly, xlo, xhi, lx;
  ir_ref out_y = roi_axis(g, r[1], ir_div(g, rh, kf(g, rh, (double)PH)), ps, 2, 4, gfh, H, &ylo, &yhi, &ly);
  ir_ref out_x = roi_axis(g, r[0], ir_div(g, rw, kf(g, rw, (double)PW)), ps, 3, 5, gfw, W, &xlo, &xhi, &lx);
  ir_ref keep = ir_cast(g, ir_unary(g, IR_NOT, ir_binary(g, IR_OR, out_y, out_x)), t);
  ir_ref one = kf(g, ly, 1), hy = sub(g, one, ly), hx = sub(g, one, lx);
  /* image row of (batch, channel): [R, C, 1, 1, 1, 1] */
  ir_ref b = ir_view_reshape(g, ir_check_index(g, bidx, xs.d[0]), col);
  ir_ref base = imp_add(g, imp_mul(g, b, ki(g, CHW)),
                        imp_mul(g, ir_iota(g, (ir_shape){.rank = 6, .d = {1, C, 1, 1, 1, 1}}, 1), ki(g, HW)));
  sampler s = {.n = n, .vax = 6, .H = H, .W = W, .pm = PAD_NONE};
  if (ir_mul_ov(xs.d[0], CHW, &s.V)) return imp_fail(n, "X's size is not supported");
  s.img = ir_view_reshape(g, x, (ir_shape){.rank = 7, .d = {1, 1, 1, 1, 1, 1, s.V}});
  ir_ref v[4] = {imp_mul(g, imp_mul(g, hy, hx), tap(&s, ylo, xlo, base)),
                 imp_mul(g, imp_mul(g, hy, lx), tap(&s, ylo, xhi, base)),
                 imp_mul(g, imp_mul(g, ly, hx), tap(&s, yhi, xlo, base)),
                 imp_mul(g, imp_mul(g, ly, lx), tap(&s, yhi, xhi, base))};
  uint32_t axes = 1u << 4 | 1u << 5;
  ir_ref m = is_max ? ir_binary(g, IR_MAX, ir_binary(g, IR_MAX, ir_binary(g, IR_MAX, v[0], v[1]), v[2]), v[3])
                    : imp_add(g, imp_add(g, imp_add(g, v[0], v[1]), v[2]), v[3]);
  m = imp_mul(g, m, keep);
  if (G) /* every sample of the grid counts */
    return imp_set_out(n, 0, is_max ? ir_max_reduce(g, m, axes, false)
                                    : ir_div(g, ir_sum(g, m, axes, false), kf(g, m, (double)(G * G))));
  /* adaptive: samples past a roi's own counts are not taken; none gives 0 */
  ir_ref used = ir_binary(g, IR_AND, lt(g, ir_iota(g, imp_unit_shape(6, 4, GH), 4), gh),
                          lt(g, ir_iota(g, imp_unit_shape(6, 5, GW), 5), gw));
  ir_ref count = imp_mul(g, gh, gw);
  if (is_max) {
    ir_ref y = ir_max_reduce(g, ir_where(g, used, m, ir_scalar(g, t, ir_dtype_lowest(t))), axes, false);
    ir_ref any = ir_view_reshape(g, lt(g, ki(g, 0), count), (ir_shape){.rank = 4, .d = {R, 1, 1, 1}});
    return imp_set_out(n, 0, ir_where(g, any, y, ir_scalar(g, t, 0)));
  }
  ir_ref cf = ir_cast(g, ir_binary(g, IR_MAX, count, ki(g, 1)), t);
  return imp_set_out(n, 0, ir_div(g, ir_sum(g, ir_where(g, used, m, ir_scalar(g, t, 0)), axes, false),
                                 ir_view_reshape(g, cf, (ir_shape){.rank = 4, .d = {R, 1, 1, 1}})));
}

const imp_op_entry imp_ops_sample[] = {
    {"GridSample", lower_grid_sample, 0},
    {"RoiAlign", lower_roi_align, 0},
    {NULL, NULL, 0},
};
