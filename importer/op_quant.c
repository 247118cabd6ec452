/* op_quant.c — quantization, integer/quantized convolutions, ConvTranspose,
 * MaxUnpool, recurrent layers (RNN/GRU/LSTM) and DFT/STFT, all lowered onto
 * IR primitives. */
#include "importer_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define NSP_MAX (IR_MAX_RANK - 4) /* spatial axes; conv views add 4 leading axes */
#define PI 3.14159265358979323846

/* ---------- small helpers ---------- */

static ir_dtype dtype_of(ir_graph *g, ir_ref x) {
  return x < 0 ? IR_F32 : ir_node_get(g, x)->dtype;
}

static ir_shape shape_of(ir_graph *g, ir_ref x) {
  ir_shape s = {0};
  if (x >= 0) s = ir_node_get(g, x)->shape;
  return s;
}

/* A rank-0 constant of x's dtype. */
static ir_ref K(ir_graph *g, ir_ref x, double v) {
  if (x == IR_NONE) return IR_NONE;
  return ir_scalar(g, dtype_of(g, x), v);
}

static ir_ref add(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_ADD, a, b);
}
static ir_ref mul(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_MUL, a, b);
}
static ir_ref clampk(ir_graph *g, ir_ref x, double lo, double hi) {
  return ir_min(g, ir_binary(g, IR_MAX, x, K(g, x, lo)), K(g, x, hi));
}

/* Stacks `parts` (each of size 1 on `axis`) along `axis`: each one is
 * padded with zeros to the full extent and the pieces are added. */
static ir_ref stack(ir_graph *g, const ir_ref *parts, int count, int axis) {
  ir_ref acc = IR_NONE;
  for (int i = 0; i < count; i++) {
    if (parts[i] == IR_NONE) return IR_NONE;
    int64_t b[IR_MAX_RANK] = {0}, e[IR_MAX_RANK] = {0};
    b[axis] = i, e[axis] = count - 1 - i;
    ir_ref p = ir_view_pad(g, parts[i], b, e, 0.0);
    acc = i == 0 ? p : add(g, acc, p);
  }
  return acc;
}

/* Slice [start, start+len) of `axis`. */
static ir_ref take(ir_graph *g, ir_ref x, int axis, int64_t start, int64_t len) {
  if (x == IR_NONE) return IR_NONE;
  ir_shape s = shape_of(g, x);
  if (axis < 0 || axis >= s.rank) return ir_fail(g, "axis %d out of range for rank %d", axis, s.rank), IR_NONE;
  int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int i = 0; i < s.rank; i++) sp[i] = 1, ln[i] = s.d[i];
  st[axis] = start, ln[axis] = len;
  return ir_view_slice(g, x, st, sp, ln);
}

/* Pads (positive) or crops (negative) axis `axis` by b before and e after. */
static ir_ref pad_crop(ir_graph *g, ir_ref x, int axis, int64_t b, int64_t e) {
  if (x == IR_NONE) return IR_NONE;
  if (axis < 0 || axis >= shape_of(g, x).rank) return ir_fail(g, "axis %d out of range", axis), IR_NONE;
  int64_t pb[IR_MAX_RANK] = {0}, pe[IR_MAX_RANK] = {0};
  pb[axis] = b > 0 ? b : 0, pe[axis] = e > 0 ? e : 0;
  if (pb[axis] || pe[axis]) x = ir_view_pad(g, x, pb, pe, 0.0);
  if (b >= 0 && e >= 0) return x;
  ir_shape s = shape_of(g, x);
  int64_t cb = b < 0 ? -b : 0, ce = e < 0 ? -e : 0;
  return take(g, x, axis, cb, s.d[axis] - cb - ce);
}

/* A 1-D per-axis parameter reshaped to broadcast along `axis` of a rank-r
 * tensor; scalars and rank-0 tensors are returned unchanged. */
static ir_ref along(ir_graph *g, ir_ref v, int rank, int axis) {
  if (v == IR_NONE) return IR_NONE;
  ir_shape s = shape_of(g, v);
  if (s.rank != 1 || rank < 1) return v;
  ir_shape o = {.rank = rank};
  for (int i = 0; i < rank; i++) o.d[i] = i == axis ? s.d[0] : 1;
  if (s.d[0] == 1) o.d[axis] = 1;
  return ir_view_reshape(g, v, o);
}

/* ---------- rounding and quantization ---------- */

/* Reshapes a 1-D scale / zero point of more than one element to broadcast
 * along the `axis` attribute of x; scalars are left as they are. */
static int per_axis(imp_node *n, ir_ref x, ir_ref *s, ir_ref *zp) {
  int rank = shape_of(n->g, x).rank;
  if (ir_shape_numel(imp_shape(n, *s)) <= 1 && shape_of(n->g, *s).rank <= 1) {
    /* a [1] scale must not turn a scalar x into a [1] result */
    ir_shape sc = {0};
    if (rank == 0) {
      *s = ir_view_reshape(n->g, *s, sc);
      if (*zp != IR_NONE) *zp = ir_view_reshape(n->g, *zp, sc);
    }
    return 0;
  }
  int axis = imp_axis(n, imp_attr_i(n, "axis", 1), rank);
  if (axis < 0) return -1;
  *s = along(n->g, *s, rank, axis), *zp = along(n->g, *zp, rank, axis);
  return 0;
}

/* Round half to even of a float tensor whose magnitude fits int64:
 * floor through an int64 cast, then step up when the fraction is above
 * one half, or exactly one half with an odd floor. */
static ir_ref round_even(ir_graph *g, ir_ref v) {
  ir_ref ti = ir_cast(g, v, IR_I64);
  ir_ref t = ir_cast(g, ti, dtype_of(g, v));
  ir_ref below = ir_binary(g, IR_LT, v, t);
  ir_ref f = ir_where(g, below, add(g, t, K(g, v, -1)), t);
  ir_ref fi = ir_where(g, below, add(g, ti, K(g, ti, -1)), ti);
  ir_ref d = ir_sub(g, v, f);
  ir_ref half = K(g, v, 0.5);
  ir_ref odd = ir_binary(g, IR_NEQ, ir_binary(g, IR_MOD, fi, K(g, fi, 2)), K(g, fi, 0));
  ir_ref up = ir_binary(g, IR_OR, ir_binary(g, IR_LT, half, d), ir_binary(g, IR_AND, ir_eq(g, d, half), odd));
  return ir_where(g, up, add(g, f, K(g, v, 1)), f);
}

/* x / s rounded like an IEEE float32 division: computed in float64 and
 * rounded to float32 (then widened back to float64). */
static ir_ref div_f32(ir_graph *g, ir_ref x, ir_ref s) {
  ir_ref q = mul(g, ir_cast(g, x, IR_F64), ir_unary(g, IR_RECIP, ir_cast(g, s, IR_F64)));
  return ir_cast(g, ir_cast(g, q, IR_F32), IR_F64);
}

static bool qrange(ir_dtype t, double *lo, double *hi) {
  switch (t) {
  case IR_U8: *lo = 0, *hi = 255; return true;
  case IR_I8: *lo = -128, *hi = 127; return true;
  case IR_U16: *lo = 0, *hi = 65535; return true;
  case IR_I16: *lo = -32768, *hi = 32767; return true;
  case IR_I32: *lo = -2147483648.0, *hi = 2147483647.0; return true;
  default: return false;
  }
}

/* saturate(round_even(v) + zp) cast to `out`; v is float64, zp any
 * integer tensor (or IR_NONE for zero). */
static ir_ref requant(ir_graph *g, ir_ref v, ir_ref zp, ir_dtype out) {
  double lo = 0, hi = 0;
  qrange(out, &lo, &hi);
  v = clampk(g, v, -4e18, 4e18);
  ir_ref r = round_even(g, v);
  if (zp != IR_NONE) r = add(g, r, ir_cast(g, zp, IR_F64));
  return ir_cast(g, clampk(g, r, lo, hi), out);
}

static int lower_quantize(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), s = imp_req(n, 1), zp = imp_in(n, 2);
  if (ir_failed(g)) return -1;
  if (dtype_of(g, x) == IR_F16 || dtype_of(g, s) == IR_F16) return imp_fail(n, "float16 dtype not supported");
  if (imp_has_attr(n, "block_size") && imp_attr_i(n, "block_size", 0) != 0)
    return imp_fail(n, "blocked quantization (block_size) is not supported");
  ir_dtype out = zp != IR_NONE ? dtype_of(g, zp) : (ir_dtype)IR_U8;
  if (zp == IR_NONE && imp_has_attr(n, "output_dtype")) {
    int64_t od = imp_attr_i(n, "output_dtype", 2);
    if (od == 2) out = IR_U8;
    else if (od == 3) out = IR_I8;
    else if (od == 4) out = IR_U16;
    else if (od == 5) out = IR_I16;
    else return imp_fail(n, "output_dtype %lld is not supported", (long long)od);
  }
  double lo, hi;
  if (!qrange(out, &lo, &hi) || out == IR_I32) return imp_fail(n, "output type %s is not supported", ir_dtype_name(out));
  if (per_axis(n, x, &s, &zp)) return -1;
  return imp_set_out(n, 0, requant(g, div_f32(g, x, s), zp, out));
}

static int lower_dequantize(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), s = imp_req(n, 1), zp = imp_in(n, 2);
  if (ir_failed(g)) return -1;
  ir_dtype ft = dtype_of(g, s);
  if (ft == IR_F16) return imp_fail(n, "float16 dtype not supported");
  if (imp_has_attr(n, "block_size") && imp_attr_i(n, "block_size", 0) != 0)
    return imp_fail(n, "blocked quantization (block_size) is not supported");
  if (per_axis(n, x, &s, &zp)) return -1;
  ir_ref v = ir_cast(g, x, ft);
  if (zp != IR_NONE) v = ir_sub(g, v, ir_cast(g, zp, ft));
  return imp_set_out(n, 0, mul(g, v, s));
}

/* uint8 quantization with scale (max(0,x) - min(0,x)) / 255 and the zero
 * point that maps 0 exactly. */
static int lower_dynquant(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (ir_failed(g)) return -1;
  if (dtype_of(g, x) != IR_F32) return imp_fail(n, "input type %s is not supported (float32 only)", ir_dtype_name(dtype_of(g, x)));
  uint32_t all = 0;
  int rank = shape_of(g, x).rank;
  for (int i = 0; i < rank; i++) all |= 1u << i;
  ir_ref mx = ir_binary(g, IR_MAX, ir_max_reduce(g, x, all, false), K(g, x, 0));
  ir_ref mn = ir_min(g, ir_min_reduce(g, x, all, false), K(g, x, 0));
  ir_ref range = ir_sub(g, mx, mn);
  range = ir_where(g, ir_eq(g, range, K(g, x, 0)), K(g, x, 1), range);
  ir_ref scale = ir_cast(g, div_f32(g, range, K(g, x, 255)), IR_F32);
  ir_ref zpf = ir_sub(g, K(g, x, 0), ir_cast(g, div_f32(g, mn, scale), IR_F32));
  zpf = clampk(g, zpf, 0, 255);
  ir_ref zp = ir_cast(g, round_even(g, ir_cast(g, zpf, IR_F64)), IR_U8);
  ir_ref y = requant(g, div_f32(g, x, scale), zp, IR_U8);
  if (imp_set_out(n, 0, y)) return -1;
  if (imp_has_out(n, 1) && imp_set_out(n, 1, scale)) return -1;
  if (imp_has_out(n, 2) && imp_set_out(n, 2, zp)) return -1;
  return 0;
}

/* ---------- convolution core ---------- */

/* Geometry of a convolution over the last nsp axes; pads may be negative
 * (crop). */
typedef struct {
  int nsp;
  int64_t k[NSP_MAX], s[NSP_MAX], d[NSP_MAX], pb[NSP_MAX], pe[NSP_MAX];
  int64_t group;
} cgeom;

/* An optional INTS attribute with exactly `cnt` entries, else `def`. */
static int ints_attr(imp_node *n, const char *name, int cnt, int64_t *out, int64_t def) {
  int64_t v[2 * NSP_MAX + 2];
  int c = imp_attr_ints(n, name, v, 2 * NSP_MAX + 2);
  for (int i = 0; i < cnt; i++) out[i] = def;
  if (c < 0) return 0;
  if (c != cnt) return imp_fail(n, "attribute %s has %d values, expected %d", name, c, cnt);
  memcpy(out, v, sizeof(int64_t) * (size_t)cnt);
  return 0;
}

/* Conv attributes (strides, dilations, pads, auto_pad, group) for input
 * spatial extents `L` and kernel `k`. */
static int conv_geom(imp_node *n, cgeom *c, int nsp, const int64_t *L, const int64_t *k) {
  if (nsp < 1 || nsp > NSP_MAX) return imp_fail(n, "%d spatial axes are not supported", nsp);
  c->nsp = nsp;
  c->group = imp_attr_i(n, "group", 1);
  int64_t pads[2 * NSP_MAX];
  if (ints_attr(n, "strides", nsp, c->s, 1) || ints_attr(n, "dilations", nsp, c->d, 1) ||
      ints_attr(n, "pads", 2 * nsp, pads, 0))
    return -1;
  const char *ap = imp_attr_s(n, "auto_pad", "NOTSET");
  for (int i = 0; i < nsp; i++) {
    c->k[i] = k[i];
    if (c->s[i] < 1 || c->d[i] < 1 || k[i] < 1) return imp_fail(n, "kernel, strides and dilations must be positive");
    int64_t span;
    if (ir_mul_ov(k[i] - 1, c->d[i], &span) || ir_add_ov(span, 1, &span))
      return imp_fail(n, "kernel and dilations overflow on axis %d", i + 2);
    if (!strcmp(ap, "NOTSET")) {
      c->pb[i] = pads[i], c->pe[i] = pads[i + nsp];
      if (c->pb[i] < 0 || c->pe[i] < 0) return imp_fail(n, "negative pads are not supported");
    } else if (!strcmp(ap, "VALID")) {
      c->pb[i] = c->pe[i] = 0;
    } else if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
      int64_t out = L[i] / c->s[i] + (L[i] % c->s[i] != 0), total;
      if (ir_mul_ov(out > 0 ? out - 1 : 0, c->s[i], &total) || ir_add_ov(total, span, &total))
        return imp_fail(n, "strides and kernel overflow on axis %d", i + 2);
      total -= L[i];
      if (total < 0) total = 0;
      c->pb[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
      c->pe[i] = total - c->pb[i];
    } else {
      return imp_fail(n, "auto_pad=%s is not supported", ap);
    }
  }
  return 0;
}

/* Convolution of x [N, C, L...] with w [M, C/G, k...] (same dtype):
 * for every kernel tap, a strided slice of the padded input
 * [N, G, 1, C/G, O...] times the weight tap [1, G, M/G, C/G, 1...] is
 * accumulated, then summed over C/G. Returns [N, M, O...]. */
static ir_ref conv_core(imp_node *n, ir_ref x, ir_ref w, const cgeom *c) {
  ir_graph *g = n->g;
  if (x == IR_NONE || w == IR_NONE) return IR_NONE;
  ir_shape xs = shape_of(g, x), ws = shape_of(g, w);
  int nsp = c->nsp;
  int64_t G = c->group, N = xs.d[0], C = xs.d[1], M = ws.d[0];
  if (xs.rank != nsp + 2 || ws.rank != nsp + 2) return imp_fail(n, "X and W ranks must be %d", nsp + 2), IR_NONE;
  if (G < 1 || C % G || M % G || ws.d[1] != C / G)
    return imp_fail(n, "group=%lld does not fit C=%lld, M=%lld", (long long)G, (long long)C, (long long)M), IR_NONE;
  ir_shape xr = {.rank = nsp + 4, .d = {N, G, 1, C / G}};
  ir_shape wr = {.rank = nsp + 4, .d = {1, G, M / G, C / G}};
  int64_t out[NSP_MAX];
  for (int i = 0; i < nsp; i++) {
    xr.d[4 + i] = xs.d[2 + i], wr.d[4 + i] = c->k[i];
    int64_t room, span = (c->k[i] - 1) * c->d[i] + 1; /* checked by conv_geom */
    if (ir_add_ov(xs.d[2 + i], c->pb[i], &room) || ir_add_ov(room, c->pe[i], &room))
      return imp_fail(n, "pads overflow"), IR_NONE;
    room -= span;
    if (room < 0) return imp_fail(n, "kernel larger than the padded input"), IR_NONE;
    out[i] = room / c->s[i] + 1;
  }
  ir_ref xp = ir_view_reshape(g, x, xr);
  for (int i = 0; i < nsp; i++) xp = pad_crop(g, xp, 4 + i, c->pb[i], c->pe[i]);
  ir_ref w5 = ir_view_reshape(g, w, wr);
  int64_t taps = 1, cost;
  for (int i = 0; i < nsp; i++)
    if (ir_mul_ov(taps, c->k[i], &taps)) return imp_fail(n, "kernel too large"), IR_NONE;
  /* four nodes per tap, checked against the graph's budget before building */
  if (ir_mul_ov(taps, 4, &cost) || ir_reserve(g, cost)) return IR_NONE;
  ir_ref acc = IR_NONE;
  for (int64_t t = 0; t < taps; t++) {
    int64_t kidx[NSP_MAX], r = t;
    for (int i = nsp - 1; i >= 0; i--) kidx[i] = r % c->k[i], r /= c->k[i];
    int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK], ln[IR_MAX_RANK];
    int64_t wst[IR_MAX_RANK] = {0}, wln[IR_MAX_RANK];
    for (int i = 0; i < nsp + 4; i++) {
      int j = i - 4;
      sp[i] = j < 0 ? 1 : c->s[j];
      ln[i] = j < 0 ? xr.d[i] : out[j];
      st[i] = j < 0 ? 0 : kidx[j] * c->d[j];
      wst[i] = j < 0 ? 0 : kidx[j];
      wln[i] = j < 0 ? wr.d[i] : 1;
    }
    int64_t one[IR_MAX_RANK];
    for (int i = 0; i < IR_MAX_RANK; i++) one[i] = 1;
    ir_ref xt = ir_view_slice(g, xp, st, sp, ln);
    ir_ref wt = ir_view_slice(g, w5, wst, one, wln);
    ir_ref p = mul(g, xt, wt);
    acc = t == 0 ? p : add(g, acc, p);
  }
  ir_shape os = {.rank = nsp + 2, .d = {N, M}};
  for (int i = 0; i < nsp; i++) os.d[2 + i] = out[i];
  return ir_view_reshape(g, ir_reduce(g, IR_ADD, acc, 1u << 3), os);
}

/* Kernel extents of w [M, C/G, k...], checked against kernel_shape. */
static int kernel_of(imp_node *n, ir_ref w, int64_t *k, int *nsp) {
  ir_shape ws = shape_of(n->g, w);
  *nsp = ws.rank - 2;
  if (*nsp < 1 || *nsp > NSP_MAX) return imp_fail(n, "W rank %d is not supported", ws.rank);
  for (int i = 0; i < *nsp; i++) k[i] = ws.d[2 + i];
  if (imp_has_attr(n, "kernel_shape")) {
    int64_t ka[NSP_MAX];
    if (ints_attr(n, "kernel_shape", *nsp, ka, 1)) return -1;
    for (int i = 0; i < *nsp; i++)
      if (ka[i] != k[i]) return imp_fail(n, "kernel_shape disagrees with the shape of W");
  }
  return 0;
}

/* An integer tensor minus its zero point, as int32; the weight zero point
 * may be per output channel (axis 0). */
static ir_ref shift_i32(ir_graph *g, ir_ref x, ir_ref zp, int zp_axis) {
  ir_ref v = ir_cast(g, x, IR_I32);
  if (zp == IR_NONE) return v;
  return ir_sub(g, v, ir_cast(g, along(g, zp, shape_of(g, x).rank, zp_axis), IR_I32));
}

static int conv_prepare(imp_node *n, ir_ref x, ir_ref w, cgeom *c) {
  int64_t k[NSP_MAX];
  int nsp;
  if (ir_failed(n->g) || kernel_of(n, w, k, &nsp)) return -1;
  ir_shape xs = shape_of(n->g, x);
  if (xs.rank != nsp + 2) return imp_fail(n, "X rank %d differs from W rank %d", xs.rank, nsp + 2);
  return conv_geom(n, c, nsp, xs.d + 2, k);
}

static int lower_convinteger(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), w = imp_req(n, 1), xz = imp_in(n, 2), wz = imp_in(n, 3);
  cgeom c;
  if (ir_failed(g) || conv_prepare(n, x, w, &c)) return -1;
  return imp_set_out(n, 0, conv_core(n, shift_i32(g, x, xz, 1), shift_i32(g, w, wz, 0), &c));
}

/* The requantization multiplier a_scale * b_scale / y_scale, as float32
 * arithmetic would compute it, broadcastable as given. */
static ir_ref qmultiplier(ir_graph *g, ir_ref as, ir_ref bs, ir_ref ys) {
  ir_ref ab = mul(g, ir_cast(g, as, IR_F32), ir_cast(g, bs, IR_F32));
  return ir_cast(g, div_f32(g, ab, ys), IR_F32);
}

static int lower_qlinearconv(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), xs = imp_req(n, 1), xz = imp_req(n, 2), w = imp_req(n, 3), ws = imp_req(n, 4);
  ir_ref wz = imp_req(n, 5), ys = imp_req(n, 6), yz = imp_req(n, 7), b = imp_in(n, 8);
  cgeom c;
  if (ir_failed(g) || conv_prepare(n, x, w, &c)) return -1;
  ir_ref acc = conv_core(n, shift_i32(g, x, xz, 1), shift_i32(g, w, wz, 0), &c);
  int rank = shape_of(g, x).rank;
  if (b != IR_NONE) acc = add(g, acc, along(g, ir_cast(g, b, IR_I32), rank, 1));
  ir_ref m = qmultiplier(g, xs, along(g, ws, rank, 1), ys);
  ir_ref v = ir_cast(g, mul(g, ir_cast(g, acc, IR_F32), m), IR_F64);
  return imp_set_out(n, 0, requant(g, v, yz, dtype_of(g, yz)));
}

static int lower_qlinearmatmul(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref a = imp_req(n, 0), as = imp_req(n, 1), az = imp_req(n, 2), b = imp_req(n, 3), bs = imp_req(n, 4);
  ir_ref bz = imp_req(n, 5), ys = imp_req(n, 6), yz = imp_req(n, 7);
  if (ir_failed(g)) return -1;
  int ra = shape_of(g, a).rank, rb = shape_of(g, b).rank;
  /* a's zero point is per row (axis -2), b's per column (axis -1) */
  ir_ref av = shift_i32(g, a, shape_of(g, az).rank == 1 && shape_of(g, az).d[0] > 1 ? along(g, az, ra, ra - 2) : az, 0);
  ir_ref bv = shift_i32(g, b, bz, rb - 1);
  ir_ref acc = ir_matmul(g, av, bv);
  ir_ref asr = shape_of(g, as).rank == 1 && shape_of(g, as).d[0] > 1 ? along(g, as, 2, 0) : as;
  ir_ref m = qmultiplier(g, asr, bs, ys);
  ir_ref v = ir_cast(g, mul(g, ir_cast(g, acc, IR_F32), m), IR_F64);
  return imp_set_out(n, 0, requant(g, v, yz, dtype_of(g, yz)));
}

/* ---------- ConvTranspose ---------- */

/* Inserts s-1 zeros between the elements of `axis`: [.., L, ..] ->
 * [.., L, 1, ..] padded to [.., L, s, ..], merged to L*s and cut to
 * (L-1)*s+1. */
static ir_ref dilate_axis(ir_graph *g, ir_ref x, int axis, int64_t s) {
  if (x == IR_NONE || s == 1) return x;
  ir_shape xs = shape_of(g, x);
  int64_t L = xs.d[axis];
  ir_ref u = ir_view_unsqueeze(g, x, axis + 1);
  int64_t b[IR_MAX_RANK] = {0}, e[IR_MAX_RANK] = {0};
  e[axis + 1] = s - 1;
  u = ir_view_pad(g, u, b, e, 0.0);
  ir_shape m = xs;
  m.d[axis] = L * s;
  u = ir_view_reshape(g, u, m);
  return take(g, u, axis, 0, (L - 1) * s + 1);
}

/* ConvTranspose = Conv (stride 1) of the stride-dilated input, padded by
 * (k-1)*d - pads (+ output_padding at the end), with the kernel flipped
 * spatially and its in/out channels swapped per group. */
static int lower_convtranspose(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), w = imp_req(n, 1), b = imp_in(n, 2);
  if (ir_failed(g)) return -1;
  ir_dtype dt = dtype_of(g, x);
  if (!ir_dtype_is_float(dt) || dt == IR_F16) return imp_fail(n, "input type %s is not supported", ir_dtype_name(dt));
  int64_t k[NSP_MAX], L[NSP_MAX], op[NSP_MAX], os[NSP_MAX];
  int nsp;
  if (kernel_of(n, w, k, &nsp)) return -1;
  ir_shape xs = shape_of(g, x), ws = shape_of(g, w);
  if (xs.rank != nsp + 2) return imp_fail(n, "X rank %d differs from W rank %d", xs.rank, nsp + 2);
  for (int i = 0; i < nsp; i++) L[i] = xs.d[2 + i];
  cgeom c;
  if (conv_geom(n, &c, nsp, L, k) || ints_attr(n, "output_padding", nsp, op, 0)) return -1;
  const char *ap = imp_attr_s(n, "auto_pad", "NOTSET");
  bool has_os = imp_has_attr(n, "output_shape");
  bool same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
  if (has_os) {
    int64_t v[NSP_MAX + 2];
    int cnt = imp_attr_ints(n, "output_shape", v, NSP_MAX + 2);
    if (cnt == nsp + 2) memmove(v, v + 2, sizeof(int64_t) * (size_t)nsp);
    else if (cnt != nsp) return imp_fail(n, "output_shape has %d values, expected %d", cnt, nsp);
    memcpy(os, v, sizeof(int64_t) * (size_t)nsp);
  }
  for (int i = 0; i < nsp; i++) {
    if (!has_os && !same) continue;
    int64_t target, total, span = (k[i] - 1) * c.d[i] + 1; /* checked by conv_geom */
    if ((has_os ? (target = os[i], false) : ir_mul_ov(L[i], c.s[i], &target)) ||
        ir_mul_ov(c.s[i], L[i] - 1, &total) || ir_add_ov(total, op[i], &total) || ir_add_ov(total, span, &total) ||
        ir_sub_ov(total, target, &total))
      return imp_fail(n, "output size overflows on axis %d", i + 2);
    int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); /* floor */
    if (!strcmp(ap, "SAME_UPPER")) c.pb[i] = half, c.pe[i] = total - half;
    else c.pb[i] = total - half, c.pe[i] = half;
  }
  int64_t G = c.group, C = xs.d[1];
  if (G < 1 || C % G || ws.d[0] != C) return imp_fail(n, "group=%lld does not fit C=%lld", (long long)G, (long long)C);
  int64_t MG = ws.d[1], M = MG * G;
  /* w [C, M/G, k...] -> [G, C/G, M/G, k...] -> [G, M/G, C/G, k...] -> [M, C/G, k...], flipped */
  ir_shape w1 = {.rank = nsp + 3, .d = {G, C / G, MG}};
  ir_shape w2 = {.rank = nsp + 2, .d = {M, C / G}};
  int perm[IR_MAX_RANK] = {0, 2, 1};
  for (int i = 0; i < nsp; i++) w1.d[3 + i] = k[i], w2.d[2 + i] = k[i], perm[3 + i] = 3 + i;
  ir_ref wt = ir_view_reshape(g, ir_view_permute(g, ir_view_reshape(g, w, w1), perm), w2);
  int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int i = 0; i < nsp + 2; i++) sp[i] = 1, ln[i] = w2.d[i];
  for (int i = 0; i < nsp; i++) st[2 + i] = k[i] - 1, sp[2 + i] = -1;
  wt = ir_view_slice(g, wt, st, sp, ln);
  ir_ref xd = x;
  cgeom cc = c;
  for (int i = 0; i < nsp; i++) {
    /* bounds that keep the paddings below from overflowing; past them
     * the output would be empty anyway */
    int64_t lim, span = (k[i] - 1) * c.d[i] + 1;
    if (op[i] < 0 || ir_mul_ov(L[i], c.s[i], &lim) || ir_add_ov(lim, span, &lim) || op[i] > lim ||
        c.pb[i] < -lim || c.pe[i] < -lim || c.pb[i] > lim || c.pe[i] > lim)
      return imp_fail(n, "output_padding, pads or strides out of range on axis %d", i + 2);
    xd = dilate_axis(g, xd, 2 + i, c.s[i]);
    int64_t full = (k[i] - 1) * c.d[i];
    cc.s[i] = 1;
    cc.pb[i] = full - c.pb[i];
    cc.pe[i] = full - c.pe[i] + op[i];
  }
  ir_ref y = conv_core(n, xd, wt, &cc);
  if (b != IR_NONE) y = add(g, y, along(g, b, xs.rank, 1));
  return imp_set_out(n, 0, y);
}

/* ---------- MaxUnpool ---------- */

/* Indices are flat positions in the default output shape `dflt`; with an
 * explicit, larger output_shape each element keeps its coordinates, so
 * unravel against `dflt` and ravel against `out`. */
static ir_ref remap_indices(ir_graph *g, ir_ref idx, const ir_shape *dflt, const ir_shape *out) {
  if (ir_shape_eq(dflt, out)) return idx;
  ir_ref rem = idx, acc = IR_NONE;
  int64_t ostride = 1;
  for (int i = out->rank - 1; i >= 0; i--) {
    ir_ref dim = ir_scalar(g, IR_I64, (double)dflt->d[i]);
    ir_ref coord = ir_binary(g, IR_MOD, rem, dim);
    rem = ir_binary(g, IR_IDIV, rem, dim);
    ir_ref part = mul(g, coord, ir_scalar(g, IR_I64, (double)ostride));
    acc = acc == IR_NONE ? part : add(g, acc, part);
    ostride *= out->d[i];
  }
  return acc;
}

/* y[p] = sum over input positions j with I[j] == p of X[j], per (n, c)
 * plane: a compare of the indices against an iota of the flat output
 * position, reduced over the input positions. */
static int lower_maxunpool(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), idx = imp_req(n, 1);
  if (ir_failed(g)) return -1;
  ir_shape xs = shape_of(g, x);
  int nsp = xs.rank - 2;
  if (nsp < 1 || nsp > NSP_MAX) return imp_fail(n, "input rank %d is not supported", xs.rank);
  int64_t k[NSP_MAX], s[NSP_MAX], pads[2 * NSP_MAX];
  if (ints_attr(n, "kernel_shape", nsp, k, 1) || ints_attr(n, "strides", nsp, s, 1) ||
      ints_attr(n, "pads", 2 * nsp, pads, 0))
    return -1;
  ir_shape out = {.rank = xs.rank, .d = {xs.d[0], xs.d[1]}};
  for (int i = 0; i < nsp; i++) {
    int64_t o;
    if (xs.d[2 + i] < 1 || ir_mul_ov(xs.d[2 + i] - 1, s[i], &o) || ir_sub_ov(o, pads[i], &o) ||
        ir_sub_ov(o, pads[i + nsp], &o) || ir_add_ov(o, k[i], &o))
      return imp_fail(n, "output size overflows on axis %d", i + 2);
    out.d[2 + i] = o;
  }
  ir_shape dflt = out;
  if (imp_has_in(n, 2)) {
    int64_t v[IR_MAX_RANK];
    int cnt = imp_const_ints(n, 2, v, IR_MAX_RANK);
    if (cnt < 0) return -1;
    if (cnt != xs.rank) return imp_fail(n, "output_shape has %d values, expected %d", cnt, xs.rank);
    for (int i = 0; i < xs.rank; i++) out.d[i] = v[i];
  }
  int64_t NC, hin = 1, hout = 1;
  bool ov = ir_mul_ov(xs.d[0], xs.d[1], &NC);
  for (int i = 0; i < nsp; i++) ov |= ir_mul_ov(hin, xs.d[2 + i], &hin) || ir_mul_ov(hout, out.d[2 + i], &hout);
  if (ov || hout < 0) return imp_fail(n, "output_shape overflows");
  ir_shape r = {.rank = 3, .d = {NC, 1, hin}};
  ir_ref xr = ir_view_reshape(g, x, r);
  ir_ref ir = ir_view_reshape(g, remap_indices(g, ir_cast(g, idx, IR_I64), &dflt, &out), r);
  ir_shape ps = {.rank = 3, .d = {NC, hout, 1}};
  ir_ref pos = ir_index(g, ps, (int64_t[]){hout, 1, 0}, 0);
  ir_ref hit = ir_where(g, ir_eq(g, ir, pos), xr, K(g, x, 0));
  ir_ref y = ir_reduce(g, IR_ADD, hit, 1u << 2);
  return imp_set_out(n, 0, ir_view_reshape(g, y, out));
}

/* ---------- RNN / GRU / LSTM ---------- */

typedef struct {
  char name[24];
  double alpha, beta;
} actfn;

static ir_ref apply_act(ir_graph *g, const actfn *a, ir_ref x) {
  const char *s = a->name;
  if (!strcasecmp(s, "sigmoid")) return ir_sigmoid(g, x);
  if (!strcasecmp(s, "tanh")) return ir_tanh(g, x);
  if (!strcasecmp(s, "relu")) return ir_binary(g, IR_MAX, x, K(g, x, 0));
  if (!strcasecmp(s, "affine")) return add(g, mul(g, x, K(g, x, a->alpha)), K(g, x, a->beta));
  if (!strcasecmp(s, "leakyrelu"))
    return ir_where(g, ir_binary(g, IR_LT, x, K(g, x, 0)), mul(g, x, K(g, x, a->alpha)), x);
  if (!strcasecmp(s, "thresholdedrelu"))
    return ir_where(g, ir_binary(g, IR_LT, K(g, x, a->alpha), x), x, K(g, x, 0));
  if (!strcasecmp(s, "scaledtanh"))
    return mul(g, ir_tanh(g, mul(g, x, K(g, x, a->beta))), K(g, x, a->alpha));
  if (!strcasecmp(s, "hardsigmoid"))
    return clampk(g, add(g, mul(g, x, K(g, x, a->alpha)), K(g, x, a->beta)), 0, 1);
  if (!strcasecmp(s, "softsign"))
    return mul(g, x, ir_unary(g, IR_RECIP, add(g, ir_abs(g, x), K(g, x, 1))));
  if (!strcasecmp(s, "softplus")) return ir_log(g, add(g, ir_exp(g, x), K(g, x, 1)));
  if (!strcasecmp(s, "elu"))
    return ir_where(g, ir_binary(g, IR_LT, x, K(g, x, 0)),
                    mul(g, add(g, ir_exp(g, x), K(g, x, -1)), K(g, x, a->alpha)), x);
  return ir_fail(g, "activation %s is not supported", s), IR_NONE;
}

static void act_defaults(actfn *a) {
  const char *s = a->name;
  a->alpha = 0, a->beta = 0;
  if (!strcasecmp(s, "leakyrelu")) a->alpha = 0.01;
  else if (!strcasecmp(s, "hardsigmoid")) a->alpha = 0.2, a->beta = 0.5;
  else if (!strcasecmp(s, "elu") || !strcasecmp(s, "scaledtanh") || !strcasecmp(s, "affine") ||
           !strcasecmp(s, "thresholdedrelu"))
    a->alpha = 1.0, a->beta = !strcasecmp(s, "scaledtanh") ? 1.0 : 0.0;
}

/* Reads the `activations` attribute (nper per direction) into acts[]. */
static int read_acts(imp_node *n, int ndir, int nper, const char *const *defs, actfn *acts) {
  const Onnx__AttributeProto *at = NULL;
  for (size_t i = 0; i < n->proto->n_attribute; i++)
    if (!strcmp(n->proto->attribute[i]->name, "activations")) at = n->proto->attribute[i];
  for (int d = 0; d < ndir; d++)
    for (int j = 0; j < nper; j++) {
      actfn *a = &acts[d * nper + j];
      snprintf(a->name, sizeof a->name, "%s", defs[j]);
      act_defaults(a);
    }
  if (!at) return 0;
  if ((int)at->n_strings != ndir * nper)
    return imp_fail(n, "activations has %d entries, expected %d", (int)at->n_strings, ndir * nper);
  double al[16], be[16];
  int na = imp_attr_floats(n, "activation_alpha", al, 16);
  int nb = imp_attr_floats(n, "activation_beta", be, 16);
  for (int i = 0; i < ndir * nper; i++) {
    size_t len = at->strings[i].len < 23 ? at->strings[i].len : 23;
    memcpy(acts[i].name, at->strings[i].data, len);
    acts[i].name[len] = 0;
    act_defaults(&acts[i]);
    if (i < na) acts[i].alpha = al[i];
    if (i < nb) acts[i].beta = be[i];
  }
  return 0;
}

typedef enum { CELL_RNN, CELL_GRU, CELL_LSTM } cell_kind;

/* Tensors of one direction. */
typedef struct {
  ir_ref xw;   /* [T, B, G*H]: X W^T + Wb + (Rb except GRU's h gate) */
  ir_ref rt;   /* [H, G*H] */
  ir_ref rbh;  /* GRU: Rb of the h gate [H] */
  ir_ref p[3]; /* LSTM peepholes i, o, f [H] */
  ir_ref h, c; /* states [B, H] */
} dirdata;

/* x[..., gate*H : (gate+1)*H] of the last axis. */
static ir_ref gate(ir_graph *g, ir_ref x, int gi, int64_t H) {
  return take(g, x, shape_of(g, x).rank - 1, gi * H, H);
}

static ir_ref clip_gate(ir_graph *g, ir_ref x, double clip) {
  return clip > 0 ? clampk(g, x, -clip, clip) : x;
}

/* One time step of the cell; updates dd->h (and dd->c). */
static void cell_step(ir_graph *g, cell_kind kind, dirdata *dd, ir_ref xt, int64_t H,
                      const actfn *a, double clip, bool lbr, bool coupled) {
  ir_ref hr = ir_matmul(g, dd->h, dd->rt); /* [B, G*H] */
  if (kind == CELL_RNN) {
    dd->h = apply_act(g, &a[0], clip_gate(g, add(g, xt, hr), clip));
  } else if (kind == CELL_GRU) {
    ir_ref z = apply_act(g, &a[0], clip_gate(g, add(g, gate(g, xt, 0, H), gate(g, hr, 0, H)), clip));
    ir_ref r = apply_act(g, &a[0], clip_gate(g, add(g, gate(g, xt, 1, H), gate(g, hr, 1, H)), clip));
    ir_ref hh;
    if (lbr) {
      hh = mul(g, r, add(g, gate(g, hr, 2, H), dd->rbh));
    } else {
      ir_ref rh = take(g, dd->rt, 1, 2 * H, H);
      hh = add(g, ir_matmul(g, mul(g, r, dd->h), rh), dd->rbh);
    }
    ir_ref ht = apply_act(g, &a[1], clip_gate(g, add(g, gate(g, xt, 2, H), hh), clip));
    ir_ref one = K(g, z, 1);
    dd->h = add(g, mul(g, ir_sub(g, one, z), ht), mul(g, z, dd->h));
  } else {
    ir_ref s = add(g, xt, hr);
    ir_ref gi = gate(g, s, 0, H), go = gate(g, s, 1, H), gf = gate(g, s, 2, H), gc = gate(g, s, 3, H);
    if (dd->p[0] != IR_NONE) gi = add(g, gi, mul(g, dd->p[0], dd->c));
    if (dd->p[2] != IR_NONE) gf = add(g, gf, mul(g, dd->p[2], dd->c));
    ir_ref i = apply_act(g, &a[0], clip_gate(g, gi, clip));
    ir_ref f = coupled ? ir_sub(g, K(g, i, 1), i) : apply_act(g, &a[0], clip_gate(g, gf, clip));
    ir_ref ct = apply_act(g, &a[1], clip_gate(g, gc, clip));
    dd->c = add(g, mul(g, f, dd->c), mul(g, i, ct));
    if (dd->p[1] != IR_NONE) go = add(g, go, mul(g, dd->p[1], dd->c));
    ir_ref o = apply_act(g, &a[0], clip_gate(g, go, clip));
    dd->h = mul(g, o, apply_act(g, &a[2], dd->c));
  }
}

/* Row `d` of a [D, ...] input, as [...]. */
static ir_ref dir_row(ir_graph *g, ir_ref v, int d) {
  if (v == IR_NONE) return IR_NONE;
  return ir_view_squeeze(g, take(g, v, 0, d, 1), 0);
}

static int lower_recurrent(imp_node *n, cell_kind kind) {
  ir_graph *g = n->g;
  static const char *const defs[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  const int ngates = kind == CELL_RNN ? 1 : kind == CELL_GRU ? 3 : 4;
  const int nacts = kind == CELL_RNN ? 1 : kind == CELL_GRU ? 2 : 3;
  ir_ref x = imp_req(n, 0), W = imp_req(n, 1), R = imp_req(n, 2), B = imp_in(n, 3), sl = imp_in(n, 4);
  ir_ref h0 = imp_in(n, 5), c0 = kind == CELL_LSTM ? imp_in(n, 6) : IR_NONE;
  ir_ref P = kind == CELL_LSTM ? imp_in(n, 7) : IR_NONE;
  if (ir_failed(g)) return -1;
  ir_dtype dt = dtype_of(g, x);
  if (!ir_dtype_is_float(dt) || dt == IR_F16) return imp_fail(n, "input type %s is not supported", ir_dtype_name(dt));
  const char *dir = imp_attr_s(n, "direction", "forward");
  int ndir = !strcmp(dir, "bidirectional") ? 2 : 1;
  bool reverse0 = !strcmp(dir, "reverse");
  if (ndir == 1 && !reverse0 && strcmp(dir, "forward")) return imp_fail(n, "direction=%s is not supported", dir);
  int64_t layout = imp_attr_i(n, "layout", 0);
  double clip = imp_attr_f(n, "clip", 0);
  bool lbr = imp_attr_i(n, "linear_before_reset", 0) != 0;
  bool coupled = imp_attr_i(n, "input_forget", 0) != 0;
  actfn acts[6];
  if (read_acts(n, ndir, nacts, defs[kind], acts)) return -1;
  if (layout) {
    int perm3[3] = {1, 0, 2};
    x = ir_view_permute(g, x, perm3);
    if (h0 != IR_NONE) h0 = ir_view_permute(g, h0, perm3);
    if (c0 != IR_NONE) c0 = ir_view_permute(g, c0, perm3);
  }
  ir_shape xs = shape_of(g, x);
  int64_t T = xs.d[0], Bn = xs.d[1], H = shape_of(g, R).d[2];
  if (imp_has_attr(n, "hidden_size") && imp_attr_i(n, "hidden_size", H) != H)
    return imp_fail(n, "hidden_size disagrees with R");
  /* per-batch step mask from sequence_lens: step t is live when t < len[b] */
  ir_ref lens = sl != IR_NONE ? ir_view_reshape(g, ir_cast(g, sl, IR_I64), (ir_shape){.rank = 2, .d = {Bn, 1}}) : IR_NONE;
  int perm2[2] = {1, 0};
  ir_ref ys[2][256], yh[2], yc[2];
  if (T > 256) return imp_fail(n, "sequence length %lld is too long to unroll", (long long)T);
  ir_ref zero_state = ir_load(g, dt, (ir_shape){.rank = 2, .d = {Bn, H}}, 0.0);
  for (int d = 0; d < ndir; d++) {
    bool rev = reverse0 || d == 1;
    dirdata dd;
    ir_ref wd = dir_row(g, W, d), bd = dir_row(g, B, d);
    dd.rt = ir_view_permute(g, dir_row(g, R, d), perm2);
    dd.xw = ir_matmul(g, x, ir_view_permute(g, wd, perm2));
    dd.rbh = IR_NONE;
    if (bd != IR_NONE) {
      ir_ref wb = take(g, bd, 0, 0, ngates * H), rb = take(g, bd, 0, ngates * H, ngates * H);
      if (kind == CELL_GRU) {
        dd.rbh = take(g, rb, 0, 2 * H, H);
        rb = pad_crop(g, take(g, rb, 0, 0, 2 * H), 0, 0, H);
      }
      dd.xw = add(g, dd.xw, add(g, wb, rb));
    } else if (kind == CELL_GRU) {
      dd.rbh = ir_load(g, dt, (ir_shape){.rank = 1, .d = {H}}, 0.0);
    }
    ir_ref pd = dir_row(g, P, d);
    for (int j = 0; j < 3; j++) dd.p[j] = pd != IR_NONE ? take(g, pd, 0, j * H, H) : IR_NONE;
    dd.h = h0 != IR_NONE ? dir_row(g, h0, d) : zero_state;
    dd.c = c0 != IR_NONE ? dir_row(g, c0, d) : zero_state;
    for (int64_t step = 0; step < T; step++) {
      int64_t t = rev ? T - 1 - step : step;
      ir_ref xt = ir_view_squeeze(g, take(g, dd.xw, 0, t, 1), 0);
      ir_ref hp = dd.h, cp = dd.c;
      cell_step(g, kind, &dd, xt, H, &acts[d * nacts], clip, lbr, coupled);
      ir_ref out = dd.h;
      if (lens != IR_NONE) {
        ir_ref live = ir_binary(g, IR_LT, ir_scalar(g, IR_I64, (double)t), lens);
        dd.h = ir_where(g, live, dd.h, hp);
        if (kind == CELL_LSTM) dd.c = ir_where(g, live, dd.c, cp);
        out = ir_where(g, live, out, K(g, out, 0));
      }
      ys[d][t] = ir_view_unsqueeze(g, ir_view_unsqueeze(g, out, 0), 0); /* [1, 1, B, H] */
    }
    yh[d] = ir_view_unsqueeze(g, dd.h, 0);
    yc[d] = ir_view_unsqueeze(g, dd.c, 0);
    if (ir_failed(g)) return -1;
  }
  int perm4[4] = {2, 0, 1, 3};
  int perm3[3] = {1, 0, 2};
  if (imp_has_out(n, 0)) {
    ir_ref per_dir[2];
    for (int d = 0; d < ndir; d++) per_dir[d] = stack(g, ys[d], (int)T, 0);
    ir_ref y = ndir == 1 ? per_dir[0] : stack(g, per_dir, 2, 1); /* [T, D, B, H] */
    if (layout) y = ir_view_permute(g, y, perm4);                 /* [B, T, D, H] */
    if (imp_set_out(n, 0, y)) return -1;
  }
  ir_ref fh = ndir == 1 ? yh[0] : stack(g, yh, 2, 0);
  ir_ref fc = ndir == 1 ? yc[0] : stack(g, yc, 2, 0);
  if (layout) fh = ir_view_permute(g, fh, perm3), fc = ir_view_permute(g, fc, perm3);
  if (imp_has_out(n, 1) && imp_set_out(n, 1, fh)) return -1;
  if (kind == CELL_LSTM && imp_has_out(n, 2) && imp_set_out(n, 2, fc)) return -1;
  return 0;
}

static int lower_rnn(imp_node *n) {
  return lower_recurrent(n, CELL_RNN);
}
static int lower_gru(imp_node *n) {
  return lower_recurrent(n, CELL_GRU);
}
static int lower_lstm(imp_node *n) {
  return lower_recurrent(n, CELL_LSTM);
}

/* ---------- DFT / STFT ---------- */

/* cos or sin of 2*pi*j*k/L for j < L rows and k < nk columns, float64;
 * j*k is reduced mod L in integers first so the angle stays small. */
static ir_ref twiddle(ir_graph *g, int64_t L, int64_t nk, bool cosine) {
  ir_shape s = {.rank = 2, .d = {L, nk}};
  ir_ref jk = ir_binary(g, IR_MOD, mul(g, ir_iota(g, s, 0), ir_iota(g, s, 1)), ir_scalar(g, IR_I64, (double)L));
  ir_ref ang = mul(g, ir_cast(g, jk, IR_F64), ir_scalar(g, IR_F64, 2 * PI / (double)L));
  if (cosine) ang = add(g, ang, ir_scalar(g, IR_F64, PI / 2));
  return ir_unary(g, IR_SIN, ang);
}

/* DFT over the second-to-last axis of x [..., n, 1|2] (float64), after
 * zero-padding or cutting that axis to L; returns [..., nk, 2]. */
static ir_ref dft_last(ir_graph *g, ir_ref x, int64_t L, int64_t nk, bool inverse) {
  ir_shape s = shape_of(g, x);
  int ax = s.rank - 2;
  int64_t nin = s.d[ax];
  if (nin > L) x = take(g, x, ax, 0, L);
  else if (nin < L) x = pad_crop(g, x, ax, 0, L - nin);
  ir_ref xr = ir_view_squeeze(g, take(g, x, ax + 1, 0, 1), ax + 1);
  ir_ref xi = s.d[ax + 1] == 2 ? ir_view_squeeze(g, take(g, x, ax + 1, 1, 1), ax + 1) : IR_NONE;
  /* (xr + i xi) e^{-+i theta}: forward uses -sin, inverse +sin (and 1/L) */
  ir_ref cs = twiddle(g, L, nk, true), sn = twiddle(g, L, nk, false);
  if (!inverse) sn = ir_unary(g, IR_NEG, sn);
  ir_ref re = ir_matmul(g, xr, cs), im = ir_matmul(g, xr, sn);
  if (xi != IR_NONE) {
    re = ir_sub(g, re, ir_matmul(g, xi, sn));
    im = add(g, im, ir_matmul(g, xi, cs));
  }
  if (inverse) {
    ir_ref inv = ir_scalar(g, IR_F64, 1.0 / (double)L);
    re = mul(g, re, inv), im = mul(g, im, inv);
  }
  int r = shape_of(g, re).rank;
  ir_ref parts[2] = {ir_view_unsqueeze(g, re, r), ir_view_unsqueeze(g, im, r)};
  return stack(g, parts, 2, r);
}

/* [..., n, ..., c] with `axis` moved right before the last (complex) axis. */
static void axis_perm(int rank, int axis, int *perm) {
  int j = 0;
  for (int i = 0; i < rank - 1; i++)
    if (i != axis) perm[j++] = i;
  perm[j++] = axis;
  perm[j] = rank - 1;
}

static int lower_dft(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (ir_failed(g)) return -1;
  ir_dtype dt = dtype_of(g, x);
  if (!ir_dtype_is_float(dt) || dt == IR_F16) return imp_fail(n, "input type %s is not supported", ir_dtype_name(dt));
  ir_shape s = shape_of(g, x);
  if (s.rank < 2 || (s.d[s.rank - 1] != 1 && s.d[s.rank - 1] != 2))
    return imp_fail(n, "input must end with a dimension of 1 or 2");
  int64_t axis = imp_attr_i(n, "axis", 1);
  if (n->opset >= 20) {
    axis = -2;
    if (imp_has_in(n, 2)) {
      int64_t v[1];
      if (imp_const_ints(n, 2, v, 1) != 1) return imp_fail(n, "axis must be a constant scalar");
      axis = v[0];
    }
  }
  int ax = imp_axis(n, axis, s.rank);
  if (ax < 0) return -1;
  if (ax == s.rank - 1) return imp_fail(n, "axis cannot be the complex axis");
  int64_t L = s.d[ax];
  if (imp_has_in(n, 1)) {
    int64_t v[1];
    if (imp_const_ints(n, 1, v, 1) != 1) return imp_fail(n, "dft_length must be a constant scalar");
    L = v[0];
  }
  bool inverse = imp_attr_i(n, "inverse", 0) != 0, onesided = imp_attr_i(n, "onesided", 0) != 0;
  if (inverse && onesided) return imp_fail(n, "onesided inverse DFT is not supported");
  int64_t nk = onesided ? L / 2 + 1 : L;
  int perm[IR_MAX_RANK], back[IR_MAX_RANK];
  axis_perm(s.rank, ax, perm);
  for (int i = 0; i < s.rank; i++) back[perm[i]] = i;
  ir_ref xp = ir_view_permute(g, ir_cast(g, x, IR_F64), perm);
  ir_ref y = dft_last(g, xp, L, nk, inverse);
  return imp_set_out(n, 0, ir_cast(g, ir_view_permute(g, y, back), dt));
}

/* STFT: frames [B, F, fl, c] stacked from strided slices, times the
 * window, then a DFT over the frame axis. */
static int lower_stft(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), win = imp_in(n, 2);
  if (ir_failed(g)) return -1;
  ir_dtype dt = dtype_of(g, x);
  if (!ir_dtype_is_float(dt) || dt == IR_F16) return imp_fail(n, "input type %s is not supported", ir_dtype_name(dt));
  ir_shape s = shape_of(g, x);
  if (s.rank != 3) return imp_fail(n, "signal must be [batch, length, 1|2]");
  int64_t v[1], step, fl = -1;
  if (imp_const_ints(n, 1, v, 1) != 1) return imp_fail(n, "frame_step must be a constant scalar");
  step = v[0];
  if (imp_has_in(n, 3)) {
    if (imp_const_ints(n, 3, v, 1) != 1) return imp_fail(n, "frame_length must be a constant scalar");
    fl = v[0];
  }
  if (win != IR_NONE) {
    int64_t wl = shape_of(g, win).d[0];
    if (fl >= 0 && fl != wl) return imp_fail(n, "frame_length differs from the window length");
    fl = wl;
  }
  if (fl < 1 || step < 1 || fl > s.d[1]) return imp_fail(n, "frame_length or frame_step is invalid");
  int64_t F = (s.d[1] - fl) / step + 1;
  if (F > 4096) return imp_fail(n, "too many frames (%lld)", (long long)F);
  bool onesided = imp_attr_i(n, "onesided", 1) != 0;
  if (onesided && s.d[2] == 2) return imp_fail(n, "onesided STFT of a complex signal is not supported");
  ir_ref xd = ir_cast(g, x, IR_F64);
  ir_ref frames[4096];
  for (int64_t f = 0; f < F; f++) frames[f] = ir_view_unsqueeze(g, take(g, xd, 1, f * step, fl), 1);
  ir_ref fr = stack(g, frames, (int)F, 1); /* [B, F, fl, c] */
  if (win != IR_NONE)
    fr = mul(g, fr, ir_view_reshape(g, ir_cast(g, win, IR_F64), (ir_shape){.rank = 2, .d = {fl, 1}}));
  ir_ref y = dft_last(g, fr, fl, onesided ? fl / 2 + 1 : fl, false);
  return imp_set_out(n, 0, ir_cast(g, y, dt));
}

const imp_op_entry imp_ops_quant[] = {
    {"QuantizeLinear", lower_quantize, 0},
    {"DequantizeLinear", lower_dequantize, 0},
    {"DynamicQuantizeLinear", lower_dynquant, 0},
    {"ConvInteger", lower_convinteger, 0},
    {"QLinearConv", lower_qlinearconv, 0},
    {"QLinearMatMul", lower_qlinearmatmul, 0},
    {"ConvTranspose", lower_convtranspose, 0},
    {"MaxUnpool", lower_maxunpool, 0},
    {"RNN", lower_rnn, 0},
    {"GRU", lower_gru, 0},
    {"LSTM", lower_lstm, 0},
    {"DFT", lower_dft, 0},
    {"STFT", lower_stft, 0},
    {NULL, NULL, 0},
};
