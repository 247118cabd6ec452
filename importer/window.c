/* window.c — the geometry of sliding-window ops (convolution, pooling):
 * kernel, strides, dilations, pads and output extents over the spatial
 * axes, symbolic ones included; the padded input and its taps.
 *
 * A sliding window (o*stride + k*dilation along each spatial axis) is
 * affine in (o, k) but overlapping: strides express it, a per-axis mask
 * (padding) cannot. Pooling and depthwise convolutions therefore iterate
 * over the kernel taps: for each tap, one strided ir_view_slice of the
 * padded input addresses the element under that tap for every output
 * position, and the taps are combined element-wise (ADD or MAX). */
#include "importer_impl.h"

#include <string.h>

/* An optional INTS attribute with exactly `nsp` entries, else `def`. */
static int spatial_ints(imp_node *n, const char *name, int nsp, int64_t *out, int64_t def) {
  int64_t v[2 * IMP_MAX_SP];
  int c = imp_attr_ints(n, name, v, 2 * IMP_MAX_SP);
  for (int i = 0; i < nsp; i++) out[i] = def;
  if (c < 0) return 0;
  if (c != nsp) return imp_fail(n, "attribute %s has %d values, expected %d", name, c, nsp);
  memcpy(out, v, sizeof(int64_t) * (size_t)nsp);
  return 0;
}

/* A symbolic spatial extent L: out = floor((L + pads - span) / stride) + 1,
 * a polynomial when the division is exact (stride 1 always; then ceil_mode
 * changes nothing and SAME pads are (span - 1) split in two), else a floor
 * symbol (ir_dim_floordiv). A window larger than the padded input is
 * excluded by an assumption (room >= 0) that the entry checks. */
static int symbolic_extent(imp_node *n, imp_window *w, int i, const char *ap, const int64_t *pads, int64_t span,
                           bool ceil_mode) {
  int64_t L = w->in[i], room, q;
  if (!strcmp(ap, "NOTSET")) w->pb[i] = pads[i], w->pe[i] = pads[i + w->nsp];
  else if (!strcmp(ap, "VALID")) w->pb[i] = w->pe[i] = 0;
  else if ((!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) && w->s[i] == 1) {
    int64_t total = span - 1, small = total / 2;
    w->pb[i] = !strcmp(ap, "SAME_UPPER") ? small : total - small;
    w->pe[i] = total - w->pb[i];
  } else return imp_fail_sym(n, L, "a strided window with auto_pad on a symbolic axis");
  if (w->pb[i] < 0 || w->pe[i] < 0) return imp_fail(n, "negative pads are not supported");
  int64_t pads_sum;
  if (ir_add_ov(w->pb[i], w->pe[i], &pads_sum)) return imp_fail(n, "pads overflow on axis %d", i + 2);
  room = ir_dim_sub(ir_dim_add(L, pads_sum), span); /* IR_DIM_INVALID on overflow: refused below */
  if (!ir_dim_valid(room)) return imp_fail(n, "window sizes overflow on axis %d", i + 2);
  if ((ir_dim_cmp(n->g, room, 0) & IR_CMP_LT) && ir_assume_nonneg(n->g, room, "the window fits the padded input"))
    return -1;
  if (!ir_dim_div_exact(room, w->s[i], &q)) {
    /* floor(room / s) + 1 = floor((room + s) / s): a floor symbol, >= 1
     * as room >= 0; ceil_mode's rounding up is not followed symbolically */
    if (ceil_mode) return imp_fail_sym(n, L, "ceil_mode over a symbolic axis with a stride that does not divide it");
    int64_t o = ir_dim_floordiv(n->g, ir_dim_add(room, w->s[i]), w->s[i]);
    if (o == IR_DIM_INVALID)
      return imp_fail_sym(n, L, "the output size of a strided window over a symbolic axis is a floor division");
    q = ir_dim_sub(o, 1);
  }
  w->out[i] = ir_dim_add(q, 1);
  w->extra[i] = 0;
  return 0;
}

/* Output extents and paddings following the auto_pad / pads / ceil_mode
 * rules of the ONNX spec. */
int imp_window_init(imp_node *n, imp_window *w, const ir_shape *xs, const int64_t *kernel,
                       bool ceil_mode) {
  if (xs->rank < 3 || xs->rank - 2 > IMP_MAX_SP)
    return imp_fail(n, "input rank %d is not supported (need 3..%d)", xs->rank, IMP_MAX_SP + 2);
  int nsp = w->nsp = xs->rank - 2;
  for (int i = 0; i < nsp; i++) w->in[i] = xs->d[i + 2], w->k[i] = kernel[i], w->extra[i] = 0;
  if (spatial_ints(n, "strides", nsp, w->s, 1) || spatial_ints(n, "dilations", nsp, w->d, 1))
    return -1;
  int64_t pads[2 * IMP_MAX_SP] = {0};
  int c = imp_attr_ints(n, "pads", pads, 2 * IMP_MAX_SP);
  if (c >= 0 && c != 2 * nsp) return imp_fail(n, "attribute pads has %d values, expected %d", c, 2 * nsp);
  const char *ap = imp_attr_s(n, "auto_pad", "NOTSET");
  int64_t taps = 1;
  for (int i = 0; i < nsp; i++) {
    if (w->k[i] < 1 || w->s[i] < 1 || w->d[i] < 1)
      return imp_fail(n, "kernel, strides and dilations must be positive");
    /* every size below comes from attributes: checked (ir_*_ov) */
    int64_t span, L = w->in[i], room, t;
    if (ir_mul_ov(w->k[i] - 1, w->d[i], &span) || ir_add_ov(span, 1, &span) || ir_mul_ov(taps, w->k[i], &taps))
      return imp_fail(n, "kernel_shape and dilations overflow on axis %d", i + 2);
    if (ir_dim_is_sym(L)) {
      if (symbolic_extent(n, w, i, ap, pads, span, ceil_mode)) return -1;
      continue;
    }
    if (!strcmp(ap, "NOTSET")) {
      w->pb[i] = pads[i], w->pe[i] = pads[i + nsp];
      if (w->pb[i] < 0 || w->pe[i] < 0) return imp_fail(n, "negative pads are not supported");
      if (ir_add_ov(L, w->pb[i], &room) || ir_add_ov(room, w->pe[i], &room))
        return imp_fail(n, "pads overflow on axis %d", i + 2);
      room -= span;
      if (room < 0) return imp_fail(n, "kernel larger than the padded input on axis %d", i + 2);
      /* ceil(room / s) as room / s plus one when there is a remainder */
      w->out[i] = room / w->s[i] + (ceil_mode && room % w->s[i]) + 1;
      /* ceil_mode: a last window that starts in the end padding is dropped
       * ((out - 1) * s <= room fits, room < L + pb + pe) */
      if (ceil_mode && (w->out[i] - 1) * w->s[i] >= L + w->pb[i]) w->out[i]--;
    } else if (!strcmp(ap, "VALID")) {
      w->pb[i] = w->pe[i] = 0;
      if (L < span) return imp_fail(n, "kernel larger than the input on axis %d", i + 2);
      w->out[i] = (L - span) / w->s[i] + 1;
    } else if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
      w->out[i] = L / w->s[i] + (L % w->s[i] != 0);
      int64_t total;
      if (ir_mul_ov(w->out[i] > 0 ? w->out[i] - 1 : 0, w->s[i], &total) || ir_add_ov(total, span, &total))
        return imp_fail(n, "strides and kernel overflow on axis %d", i + 2);
      total -= L;
      if (total < 0) total = 0;
      int64_t small = total / 2;
      w->pb[i] = !strcmp(ap, "SAME_UPPER") ? small : total - small;
      w->pe[i] = total - w->pb[i];
    } else {
      return imp_fail(n, "auto_pad=%s is not supported", ap);
    }
    if (w->out[i] < 1) return imp_fail(n, "empty output on axis %d", i + 2);
    int64_t need;
    if (ir_mul_ov(w->out[i] - 1, w->s[i], &need) || ir_add_ov(need, span, &need) ||
        ir_add_ov(w->pb[i], w->pe[i], &t) || ir_add_ov(L, t, &t))
      return imp_fail(n, "window sizes overflow on axis %d", i + 2);
    if (need > t) w->extra[i] = need - t;
  }
  /* one tap makes at most 4 nodes (Conv: two slices, MUL, ADD): checked
   * against the graph's budget before any is built */
  if (ir_mul_ov(taps, 4, &taps) || ir_reserve(n->g, taps)) return -1;
  return 0;
}

/* Pads the spatial axes (the last nsp) of `x` by the window paddings. */
ir_ref imp_pad_spatial(ir_graph *g, ir_ref x, const imp_window *w, double value) {
  if (x == IR_NONE) return IR_NONE;
  const ir_shape *s = &ir_node_get(g, x)->shape;
  int64_t b[IR_MAX_RANK] = {0}, e[IR_MAX_RANK] = {0};
  int off = s->rank - w->nsp;
  for (int i = 0; i < w->nsp; i++) b[off + i] = w->pb[i], e[off + i] = w->pe[i] + w->extra[i];
  return ir_view_pad(g, x, b, e, value);
}

/* Decodes tap number t into per-axis kernel offsets (row-major). */
void imp_tap_index(const imp_window *w, int64_t t, int64_t *kidx) {
  for (int i = w->nsp - 1; i >= 0; i--) kidx[i] = t % w->k[i], t /= w->k[i];
}

int64_t imp_tap_count(const imp_window *w) {
  int64_t t = 1;
  for (int i = 0; i < w->nsp; i++) t *= w->k[i];
  return t;
}

/* The elements of padded `xp` under kernel tap `kidx` for every output
 * position: a strided slice of the last nsp axes. */
ir_ref imp_tap_slice(ir_graph *g, ir_ref xp, const imp_window *w, const int64_t *kidx) {
  if (xp == IR_NONE) return IR_NONE;
  const ir_shape *s = &ir_node_get(g, xp)->shape;
  int64_t start[IR_MAX_RANK], step[IR_MAX_RANK], len[IR_MAX_RANK];
  int off = s->rank - w->nsp;
  for (int i = 0; i < s->rank; i++) {
    int j = i - off;
    start[i] = j < 0 ? 0 : kidx[j] * w->d[j];
    step[i] = j < 0 ? 1 : w->s[j];
    len[i] = j < 0 ? s->d[i] : w->out[j];
  }
  return ir_view_slice(g, xp, start, step, len);
}

/* Combines the taps of padded `xp` with `op` (ADD or MAX). */
ir_ref imp_fold_taps(ir_graph *g, ir_ref xp, const imp_window *w, ir_op op) {
  int64_t kidx[IMP_MAX_SP] = {0};
  ir_ref acc = IR_NONE;
  for (int64_t t = 0; t < imp_tap_count(w); t++) {
    imp_tap_index(w, t, kidx);
    ir_ref v = imp_tap_slice(g, xp, w, kidx);
    acc = t == 0 ? v : ir_binary(g, op, acc, v);
  }
  return acc;
}

int imp_kernel_attr(imp_node *n, int nsp, int64_t *k) {
  int64_t v[IMP_MAX_SP + 1];
  int c = imp_attr_ints(n, "kernel_shape", v, IMP_MAX_SP + 1);
  if (c < 0) return imp_fail(n, "attribute kernel_shape is required");
  if (c != nsp) return imp_fail(n, "kernel_shape has %d values, expected %d", c, nsp);
  memcpy(k, v, sizeof(int64_t) * (size_t)nsp);
  return 0;
}

/* The input of a convolution (or pooling) as its taps read it. Read through the padded
 * view, every tap carries a mask, and gcc 12 vectorises none of those loops
 * (3x3, 64 -> 64 channels at 56x56: 6.8 GFLOP/s, against 88 unmasked); a
 * stride makes the output columns non-contiguous, which the register-blocked
 * form needs (scheduler/gemm.c). So the padded input is copied once, split
 * into s phases per spatial axis (padded position o*s + t is phase t % s at
 * o + t / s), keeping only the phases some tap reads: every tap is then an
 * unmasked window of one phase, unit-stride along the output's last axis.
 * The copy is one pass over the input against k (taps) x M reads of it. */

/* The phases of the padded view `xp` in one copy: phase (t...) is the
 * strided slice from t by s of the padded axes (masks stay per axis), the
 * phases stacked as a Concat is (each piece padded to its slot, summed).
 * The padded copy split by a second copy had cost two passes (a strided
 * 1-D conv front end: 12 % of it in the copies). Static 1-D only: with
 * four 2-D phases the masked reads made MobileNetV3-small's stride-2
 * depthwise copies slower than the two passes (2.3 -> 2.6 ms). */
static ir_ref phases_one_copy(ir_graph *g, ir_ref xp, const imp_window *w, const int64_t *used, const int64_t *lq) {
  const ir_shape xs = ir_node_get(g, xp)->shape; /* a copy: the graph grows below */
  int nsp = w->nsp, rank = 4 + 2 * nsp;
  ir_shape ps = {.rank = rank};
  for (int i = 0; i < 4; i++) ps.d[i] = xs.d[i];
  int64_t combos = 1;
  for (int i = 0; i < nsp; i++) ps.d[4 + i] = 1, ps.d[4 + nsp + i] = lq[i], combos *= used[i];
  ir_ref acc = IR_NONE;
  for (int64_t c = 0; c < combos && !ir_failed(g); c++) {
    int64_t start[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK], before[IR_MAX_RANK] = {0},
            after[IR_MAX_RANK] = {0}, r = c;
    for (int i = 0; i < xs.rank; i++) step[i] = 1, len[i] = xs.d[i];
    for (int i = nsp - 1; i >= 0; i--) {
      int64_t t = r % used[i];
      r /= used[i];
      start[4 + i] = t, step[4 + i] = w->s[i], len[4 + i] = lq[i];
      before[4 + i] = t, after[4 + i] = used[i] - 1 - t;
    }
    ir_ref piece = ir_view_reshape(g, ir_view_slice(g, xp, start, step, len), ps);
    ir_ref slot = ir_view_pad(g, piece, before, after, 0.0);
    acc = acc == IR_NONE ? slot : ir_binary(g, IR_ADD, acc, slot);
  }
  return ir_failed(g) ? IR_NONE : ir_move(g, acc);
}

imp_window_input imp_window_phases(ir_graph *g, ir_ref xr, const imp_window *w, double pad) {
  imp_window_input ci = {.ph = IR_NONE};
  const ir_shape *xs = &ir_node_get(g, xr)->shape;
  bool need = false;
  for (int i = 0; i < w->nsp; i++) need |= w->pb[i] || w->pe[i] || w->extra[i] || w->s[i] > 1;
  if (!need || 4 + 2 * w->nsp > IR_MAX_RANK) return ci;
  int64_t b[IR_MAX_RANK] = {0}, e[IR_MAX_RANK] = {0}, lq[IMP_MAX_SP], used[IMP_MAX_SP];
  ir_shape split = {.rank = 4 + 2 * w->nsp};
  int perm[IR_MAX_RANK];
  for (int i = 0; i < 4; i++) split.d[i] = xs->d[i], perm[i] = i;
  for (int i = 0; i < w->nsp; i++) {
    /* symbolic extents: lq a floor symbol, the end padding lq*s - lp in 0..s-1 */
    int64_t s = w->s[i], lp = ir_dim_add(w->in[i], w->pb[i] + w->pe[i] + w->extra[i]);
    lq[i] = ir_dim_floordiv(g, ir_dim_add(lp, s - 1), s);
    if (lq[i] == IR_DIM_INVALID) return ci;
    b[4 + i] = w->pb[i], e[4 + i] = ir_dim_add(ir_dim_sub(ir_dim_mul(lq[i], s), lp), w->pe[i] + w->extra[i]);
    split.d[4 + 2 * i] = lq[i], split.d[5 + 2 * i] = s;
    perm[4 + i] = 5 + 2 * i, perm[4 + w->nsp + i] = 4 + 2 * i;
    used[i] = 1;
    for (int64_t t = 0; t < w->k[i]; t++)
      if ((t * w->d[i]) % s + 1 > used[i]) used[i] = (t * w->d[i]) % s + 1;
    ci.s[i] = s;
  }
  bool strided = false;
  int64_t combos = 1;
  for (int i = 0; i < w->nsp; i++) strided |= w->s[i] > 1, combos *= used[i];
  if (strided && w->nsp == 1 && combos <= 16 && ir_shape_is_static(xs)) {
    ci.ph = phases_one_copy(g, ir_view_pad(g, xr, b, e, pad), w, used, lq);
    return ci;
  }
  ir_ref xp = ir_move(g, ir_view_pad(g, xr, b, e, pad));
  ir_ref v = ir_view_permute(g, ir_view_reshape(g, xp, split), perm);
  int64_t start[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK];
  for (int i = 0; i < split.rank; i++) step[i] = 1, len[i] = split.d[perm[i]];
  for (int i = 0; i < w->nsp; i++) len[4 + i] = used[i];
  ci.ph = strided ? ir_move(g, ir_view_slice(g, v, start, step, len)) : v;
  return ci;
}

/* The input under tap `kidx` for every output position: [N, G, 1, C/G, out...]. */
ir_ref imp_window_tap(ir_graph *g, const imp_window_input *ci, ir_ref xp, const imp_window *w,
                       const int64_t *kidx) {
  if (ci->ph == IR_NONE) return imp_tap_slice(g, xp, w, kidx);
  const ir_shape *s = &ir_node_get(g, ci->ph)->shape;
  int64_t start[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK];
  ir_shape os = {.rank = 4 + w->nsp};
  for (int i = 0; i < s->rank; i++) step[i] = 1, len[i] = s->d[i];
  for (int i = 0; i < 4; i++) os.d[i] = s->d[i];
  for (int i = 0; i < w->nsp; i++) {
    int64_t t = kidx[i] * w->d[i];
    start[4 + i] = t % ci->s[i], len[4 + i] = 1;
    start[4 + w->nsp + i] = t / ci->s[i], len[4 + w->nsp + i] = w->out[i];
    os.d[4 + i] = w->out[i];
  }
  return ir_view_reshape(g, ir_view_slice(g, ci->ph, start, step, len), os);
}
