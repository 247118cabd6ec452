/* op_convint.c — ConvInteger and QLinearConv (int32 sums on Conv's
 * blocked forms, op_conv.c), ConvTranspose (blocks when the kernel is the
 * stride, else the one-dot-product window core below) and MaxUnpool. */
#include "importer_impl.h"

#include <string.h>

#define NSP_MAX (IR_MAX_RANK - 4) /* spatial axes; conv views add 4 leading axes */

/* ---------- convolution core ---------- */

/* Geometry of a convolution over the last nsp axes; pads may be negative
 * (crop). */
typedef struct {
  int nsp;
  int64_t k[NSP_MAX], s[NSP_MAX], d[NSP_MAX], pb[NSP_MAX], pe[NSP_MAX];
  int64_t group;
} cgeom;

/* Conv attributes (strides, dilations, pads, auto_pad, group) for input
 * spatial extents `L` and kernel `k`. */
static int conv_geom(imp_node *n, cgeom *c, int nsp, const int64_t *L, const int64_t *k) {
  if (nsp < 1 || nsp > NSP_MAX) return imp_fail(n, "%d spatial axes are not supported", nsp);
  c->nsp = nsp;
  c->group = imp_attr_i(n, "group", 1);
  int64_t pads[2 * NSP_MAX];
  if (imp_attr_ints_n(n, "strides", nsp, c->s, 1) || imp_attr_ints_n(n, "dilations", nsp, c->d, 1) ||
      imp_attr_ints_n(n, "pads", 2 * nsp, pads, 0))
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
    } else if (ir_dim_is_sym(L[i])) {
      return imp_fail_sym(n, L[i], "auto_pad SAME over a symbolic axis");
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
  ir_shape xs = imp_gshape(g, x), ws = imp_gshape(g, w);
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
    if (ir_dim_is_sym(xs.d[2 + i])) { /* a floor symbol where the stride does not divide */
      room = ir_dim_sub(ir_dim_add(xs.d[2 + i], c->pb[i] + c->pe[i]), span); /* pads are bounded by the callers */
      if ((ir_dim_cmp(g, room, 0) & IR_CMP_LT) && ir_assume_nonneg(g, room, "the window fits the padded input"))
        return IR_NONE;
      out[i] = ir_dim_floordiv(g, ir_dim_add(room, c->s[i]), c->s[i]);
      if (out[i] == IR_DIM_INVALID) return imp_fail_sym(n, xs.d[2 + i], "a window over a symbolic axis"), IR_NONE;
      continue;
    }
    if (ir_add_ov(xs.d[2 + i], c->pb[i], &room) || ir_add_ov(room, c->pe[i], &room))
      return imp_fail(n, "pads overflow"), IR_NONE;
    room -= span;
    if (room < 0) return imp_fail(n, "kernel larger than the padded input"), IR_NONE;
    out[i] = room / c->s[i] + 1;
  }
  ir_ref xp = ir_view_reshape(g, x, xr);
  for (int i = 0; i < nsp; i++) xp = imp_pad_crop(g, xp, 4 + i, c->pb[i], c->pe[i]);
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
    ir_ref p = imp_mul(g, xt, wt);
    acc = t == 0 ? p : imp_add(g, acc, p);
  }
  ir_shape os = {.rank = nsp + 2, .d = {N, M}};
  for (int i = 0; i < nsp; i++) os.d[2 + i] = out[i];
  return ir_view_reshape(g, ir_reduce(g, IR_ADD, acc, 1u << 3), os);
}

/* Kernel extents of w [M, C/G, k...], checked against kernel_shape. */
static int kernel_of(imp_node *n, ir_ref w, int64_t *k, int *nsp) {
  ir_shape ws = imp_gshape(n->g, w);
  *nsp = ws.rank - 2;
  if (*nsp < 1 || *nsp > NSP_MAX) return imp_fail(n, "W rank %d is not supported", ws.rank);
  for (int i = 0; i < *nsp; i++) k[i] = ws.d[2 + i];
  if (imp_has_attr(n, "kernel_shape")) {
    int64_t ka[NSP_MAX];
    if (imp_attr_ints_n(n, "kernel_shape", *nsp, ka, 1)) return -1;
    for (int i = 0; i < *nsp; i++)
      if (ka[i] != k[i]) return imp_fail(n, "kernel_shape disagrees with the shape of W");
  }
  return 0;
}
/* (x - x_zero_point) conv (w - w_zero_point) in int32 on Conv's blocked
 * forms: exact, and the zero padding is a zero of the shifted input. */
static int lower_convinteger(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), w = imp_req(n, 1), xz = imp_in(n, 2), wz = imp_in(n, 3);
  if (ir_failed(g) || imp_need_static(n, 1) || imp_need_static(n, 2) || imp_need_static(n, 3)) return -1;
  return imp_set_out(n, 0, imp_conv(n, imp_shift_i32(g, x, xz, 1), imp_shift_i32(g, w, wz, 0), NULL));
}

static int lower_qlinearconv(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), xs = imp_req(n, 1), xz = imp_req(n, 2), w = imp_req(n, 3), ws = imp_req(n, 4);
  ir_ref wz = imp_req(n, 5), ys = imp_req(n, 6), yz = imp_req(n, 7), b = imp_in(n, 8);
  if (ir_failed(g)) return -1;
  for (int i = 1; i < 9; i++) /* the weights, scales, zero points and bias */
    if (imp_need_static(n, i)) return -1;
  ir_ref acc = imp_conv(n, imp_shift_i32(g, x, xz, 1), imp_shift_i32(g, w, wz, 0), NULL);
  if (acc == IR_NONE) return -1;
  int rank = imp_gshape(g, x).rank;
  if (b != IR_NONE) acc = imp_add(g, acc, imp_along(g, ir_cast(g, b, IR_I32), rank, 1));
  ir_ref m = imp_qmultiplier(g, xs, imp_along(g, ws, rank, 1), ys);
  ir_ref v = ir_cast(g, imp_mul(g, ir_cast(g, acc, IR_F32), m), IR_F64);
  return imp_set_out(n, 0, imp_requant(g, v, yz, imp_gdtype(g, yz)));
}

/* ---------- ConvTranspose ---------- */

/* ConvTranspose whose kernel equals its stride on every axis (no pads,
 * dilation or output_padding: the 2x2/2 upsampling of a detector's head):
 * every input position writes its own k... block of the output, so it is
 * one matrix product per group, W[M/G * taps, C/G] times the input's
 * columns [C/G, positions] (the blocked matmul path), and the output the
 * [M, taps..., positions...] result with each tap axis moved after its
 * position axis (a view read by the next kernel). The general form below
 * multiplies the stride-dilated input, 3/4 zeros at stride 2, each tap
 * masked (the 2x2/2 ConvTranspose 16 -> 16 at 160x160: 23 % of the
 * DBNet-like detector of make_cnn.py). Returns IR_NONE when it does not apply. */
static ir_ref convtranspose_blocks(imp_node *n, ir_ref x, ir_ref w, const cgeom *c, const int64_t *op) {
  ir_graph *g = n->g;
  ir_shape xs = imp_gshape(g, x), ws = imp_gshape(g, w);
  int nsp = c->nsp;
  int64_t G = c->group, N = xs.d[0], C = xs.d[1], MG = ws.d[1], taps = 1, cols = 1;
  if (!ir_shape_is_static(&xs) || !ir_shape_is_static(&ws) || 2 * nsp + 3 > IR_MAX_RANK) return IR_NONE;
  int64_t out[NSP_MAX], mt;
  for (int i = 0; i < nsp; i++) { /* an overflow is left to the general form's checks */
    if (c->k[i] != c->s[i] || c->d[i] != 1 || c->pb[i] || c->pe[i] || op[i] ||
        ir_mul_ov(taps, c->k[i], &taps) || ir_mul_ov(cols, xs.d[2 + i], &cols) ||
        ir_mul_ov(xs.d[2 + i], c->k[i], &out[i]))
      return IR_NONE;
  }
  if (ir_mul_ov(MG, taps, &mt)) return IR_NONE;
  /* w [C, M/G, k...] -> [G, C/G, M/G * taps] -> [1, G, M/G, taps, C/G, 1]:
   * the output channels an axis of their own, so that a per-channel
   * operand after the shuffle (the bias, a BatchNormalization) is a
   * broadcast along it and moves in front of the shuffle (ir/sink.c) */
  ir_shape w3 = {.rank = 3, .d = {G, C / G, mt}};
  ir_shape w6 = {.rank = 6, .d = {1, G, MG, taps, C / G, 1}};
  ir_shape x6 = {.rank = 6, .d = {N, G, 1, 1, C / G, cols}};
  int p3[3] = {0, 2, 1};
  ir_ref wm = ir_view_reshape(g, ir_view_permute(g, ir_view_reshape(g, w, w3), p3), w6);
  ir_ref y = ir_reduce(g, IR_ADD, ir_binary(g, IR_MUL, ir_view_reshape(g, x, x6), wm), 1u << 4);
  /* [N, G * M/G, k..., L...] -> [N, M, L0, k0, L1, k1, ...] -> [N, M, L0 * k0, ...] */
  ir_shape ys = {.rank = 2 + 2 * nsp, .d = {N, G * MG}}, os = {.rank = 2 + nsp, .d = {N, G * MG}};
  int perm[IR_MAX_RANK] = {0, 1};
  for (int i = 0; i < nsp; i++) {
    ys.d[2 + i] = c->k[i], ys.d[2 + nsp + i] = xs.d[2 + i];
    perm[2 + 2 * i] = 2 + nsp + i, perm[3 + 2 * i] = 2 + i;
    os.d[2 + i] = out[i];
  }
  return ir_view_reshape(g, ir_view_permute(g, ir_view_reshape(g, y, ys), perm), os);
}

/* ConvTranspose = Conv (stride 1) of the stride-dilated input, padded by
 * (k-1)*d - pads (+ output_padding at the end), with the kernel flipped
 * spatially and its in/out channels swapped per group. */
static int lower_convtranspose(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), w = imp_req(n, 1), b = imp_in(n, 2);
  if (ir_failed(g)) return -1;
  ir_dtype dt = imp_gdtype(g, x);
  if (!ir_dtype_is_float(dt) || dt == IR_F16) return imp_fail(n, "input type %s is not supported", ir_dtype_name(dt));
  int64_t k[NSP_MAX], L[NSP_MAX], op[NSP_MAX], os[NSP_MAX];
  int nsp;
  if (kernel_of(n, w, k, &nsp)) return -1;
  ir_shape xs = imp_gshape(g, x), ws = imp_gshape(g, w);
  if (xs.rank != nsp + 2) return imp_fail(n, "X rank %d differs from W rank %d", xs.rank, nsp + 2);
  for (int i = 0; i < nsp; i++) L[i] = xs.d[2 + i];
  cgeom c;
  if (conv_geom(n, &c, nsp, L, k) || imp_attr_ints_n(n, "output_padding", nsp, op, 0)) return -1;
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
    if (ir_dim_is_sym(L[i])) return imp_fail_sym(n, L[i], "output_shape or auto_pad SAME over a symbolic axis");
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
  ir_ref y = convtranspose_blocks(n, x, w, &c, op);
  if (y != IR_NONE) {
    if (b != IR_NONE) y = imp_add(g, y, imp_along(g, b, xs.rank, 1));
    return imp_set_out(n, 0, y);
  }
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
    if (op[i] < 0 || ir_mul_ov(ir_dim_is_sym(L[i]) ? IR_DIM_SYM_MAX : L[i], c.s[i], &lim) || ir_add_ov(lim, span, &lim) || op[i] > lim ||
        c.pb[i] < -lim || c.pe[i] < -lim || c.pb[i] > lim || c.pe[i] > lim)
      return imp_fail(n, "output_padding, pads or strides out of range on axis %d", i + 2);
    xd = imp_dilate_axis(g, xd, 2 + i, c.s[i]);
    int64_t full = (k[i] - 1) * c.d[i];
    cc.s[i] = 1;
    cc.pb[i] = full - c.pb[i];
    cc.pe[i] = full - c.pe[i] + op[i];
  }
  y = conv_core(n, xd, wt, &cc);
  if (b != IR_NONE) y = imp_add(g, y, imp_along(g, b, xs.rank, 1));
  return imp_set_out(n, 0, y);
}

/* ---------- MaxUnpool ---------- */

/* y[p] = X[j] for the last input position j with I[j] == p (0 where none),
 * per (n, c) plane: a compare of the indices against an iota of the flat
 * output position, reduced over the input positions. The indices are flat
 * positions in the output as given by output_shape, as onnxruntime reads
 * them: MaxPool's indices of its input, whose shape output_shape restores
 * (ONNX's node test with_output_shape places them in the default shape
 * and pads its end; tests/node/unsupported.txt). (imp_last_hit:
 * overlapping windows, stride < kernel, pick the same maximum several
 * times, and their sum was that many times too large). */
static int lower_maxunpool(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), idx = imp_req(n, 1);
  if (ir_failed(g)) return -1;
  ir_shape xs = imp_gshape(g, x);
  int nsp = xs.rank - 2;
  if (nsp < 1 || nsp > NSP_MAX) return imp_fail(n, "input rank %d is not supported", xs.rank);
  int64_t k[NSP_MAX], s[NSP_MAX], pads[2 * NSP_MAX];
  if (imp_attr_ints_n(n, "kernel_shape", nsp, k, 1) || imp_attr_ints_n(n, "strides", nsp, s, 1) ||
      imp_attr_ints_n(n, "pads", 2 * nsp, pads, 0))
    return -1;
  ir_shape out = {.rank = xs.rank, .d = {xs.d[0], xs.d[1]}};
  for (int i = 0; i < nsp; i++) {
    int64_t o;
    if (xs.d[2 + i] < 1 || ir_mul_ov(xs.d[2 + i] - 1, s[i], &o) || ir_sub_ov(o, pads[i], &o) ||
        ir_sub_ov(o, pads[i + nsp], &o) || ir_add_ov(o, k[i], &o))
      return imp_fail(n, "output size overflows on axis %d", i + 2);
    out.d[2 + i] = o;
  }
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
  ir_ref ir = ir_view_reshape(g, ir_cast(g, idx, IR_I64), r);
  ir_shape ps = {.rank = 3, .d = {NC, hout, 1}};
  ir_ref pos = ir_index(g, ps, (int64_t[]){hout, 1, 0}, 0);
  ir_ref hit = ir_where(g, imp_last_hit(n, ir_eq(g, ir, pos), 2), xr, imp_k(g, x, 0));
  ir_ref y = ir_reduce(g, IR_ADD, hit, 1u << 2);
  return imp_set_out(n, 0, ir_view_reshape(g, y, out));
}


const imp_op_entry imp_ops_convint[] = {
    {"ConvInteger", lower_convinteger, IMP_SYM},
    {"QLinearConv", lower_qlinearconv, IMP_SYM},
    {"ConvTranspose", lower_convtranspose, IMP_SYM},
    {"MaxUnpool", lower_maxunpool, 0},
    {NULL, NULL, 0},
};
