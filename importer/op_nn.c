/* op_nn.c — convolution and pooling.
 *
 * A sliding window (o*stride + k*dilation along each spatial axis) is
 * affine in (o, k) but overlapping: strides express it, a per-axis mask
 * (padding) cannot. Pooling and depthwise convolutions therefore iterate
 * over the kernel taps: for each tap, one strided ir_view_slice of the
 * padded input addresses the element under that tap for every output
 * position, and the taps are combined element-wise (ADD or MAX).
 * Convolutions with channels to sum copy the padded input once and take
 * the register-blocked matmul form (scheduler/gemm.c): per tap over an
 * unmasked copy, or as one product with an im2col copy of the windows
 * (ir_view_window). */
#include "importer_impl.h"

#include <string.h>

#define MAX_SP (IR_MAX_RANK - 4) /* spatial axes; conv views add 4 leading axes */

/* The geometry of a windowed op over the spatial axes of an [N, C, ...]
 * input: kernel, strides, dilations, pads (begin/end, plus the extra end
 * padding ceil_mode needs) and the output extent. */
typedef struct {
  int nsp;
  int64_t in[MAX_SP], k[MAX_SP], s[MAX_SP], d[MAX_SP];
  int64_t pb[MAX_SP], pe[MAX_SP], extra[MAX_SP], out[MAX_SP];
} window;

/* An optional INTS attribute with exactly `nsp` entries, else `def`. */
static int spatial_ints(imp_node *n, const char *name, int nsp, int64_t *out, int64_t def) {
  int64_t v[2 * MAX_SP];
  int c = imp_attr_ints(n, name, v, 2 * MAX_SP);
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
static int symbolic_extent(imp_node *n, window *w, int i, const char *ap, const int64_t *pads, int64_t span,
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
static int window_init(imp_node *n, window *w, const ir_shape *xs, const int64_t *kernel,
                       bool ceil_mode) {
  if (xs->rank < 3 || xs->rank - 2 > MAX_SP)
    return imp_fail(n, "input rank %d is not supported (need 3..%d)", xs->rank, MAX_SP + 2);
  int nsp = w->nsp = xs->rank - 2;
  for (int i = 0; i < nsp; i++) w->in[i] = xs->d[i + 2], w->k[i] = kernel[i], w->extra[i] = 0;
  if (spatial_ints(n, "strides", nsp, w->s, 1) || spatial_ints(n, "dilations", nsp, w->d, 1))
    return -1;
  int64_t pads[2 * MAX_SP] = {0};
  int c = imp_attr_ints(n, "pads", pads, 2 * MAX_SP);
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
static ir_ref pad_spatial(ir_graph *g, ir_ref x, const window *w, double value) {
  if (x == IR_NONE) return IR_NONE;
  const ir_shape *s = &ir_node_get(g, x)->shape;
  int64_t b[IR_MAX_RANK] = {0}, e[IR_MAX_RANK] = {0};
  int off = s->rank - w->nsp;
  for (int i = 0; i < w->nsp; i++) b[off + i] = w->pb[i], e[off + i] = w->pe[i] + w->extra[i];
  return ir_view_pad(g, x, b, e, value);
}

/* Decodes tap number t into per-axis kernel offsets (row-major). */
static void tap_index(const window *w, int64_t t, int64_t *kidx) {
  for (int i = w->nsp - 1; i >= 0; i--) kidx[i] = t % w->k[i], t /= w->k[i];
}

static int64_t tap_count(const window *w) {
  int64_t t = 1;
  for (int i = 0; i < w->nsp; i++) t *= w->k[i];
  return t;
}

/* The elements of padded `xp` under kernel tap `kidx` for every output
 * position: a strided slice of the last nsp axes. */
static ir_ref tap_slice(ir_graph *g, ir_ref xp, const window *w, const int64_t *kidx) {
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
static ir_ref fold_taps(ir_graph *g, ir_ref xp, const window *w, ir_op op) {
  int64_t kidx[MAX_SP] = {0};
  ir_ref acc = IR_NONE;
  for (int64_t t = 0; t < tap_count(w); t++) {
    tap_index(w, t, kidx);
    ir_ref v = tap_slice(g, xp, w, kidx);
    acc = t == 0 ? v : ir_binary(g, op, acc, v);
  }
  return acc;
}

static int kernel_attr(imp_node *n, int nsp, int64_t *k) {
  int64_t v[MAX_SP + 1];
  int c = imp_attr_ints(n, "kernel_shape", v, MAX_SP + 1);
  if (c < 0) return imp_fail(n, "attribute kernel_shape is required");
  if (c != nsp) return imp_fail(n, "kernel_shape has %d values, expected %d", c, nsp);
  memcpy(k, v, sizeof(int64_t) * (size_t)nsp);
  return 0;
}

/* The input of a convolution as its taps read it. Read through the padded
 * view, every tap carries a mask, and gcc 12 vectorises none of those loops
 * (3x3, 64 -> 64 channels at 56x56: 6.8 GFLOP/s, against 88 unmasked); a
 * stride makes the output columns non-contiguous, which the register-blocked
 * form needs (scheduler/gemm.c). So the padded input is copied once, split
 * into s phases per spatial axis (padded position o*s + t is phase t % s at
 * o + t / s), keeping only the phases some tap reads: every tap is then an
 * unmasked window of one phase, unit-stride along the output's last axis.
 * The copy is one pass over the input against k (taps) x M reads of it. */
typedef struct {
  ir_ref ph; /* [N, G, 1, C/G, phases..., Lq...]; IR_NONE: read `xp` through masks */
  int64_t s[MAX_SP];
} conv_input;

/* The phases of the padded view `xp` in one copy: phase (t...) is the
 * strided slice from t by s of the padded axes (masks stay per axis), the
 * phases stacked as a Concat is (each piece padded to its slot, summed).
 * The padded copy split by a second copy had cost two passes (a strided
 * 1-D conv front end: 12 % of it in the copies). Static 1-D only: with
 * four 2-D phases the masked reads made MobileNetV3-small's stride-2
 * depthwise copies slower than the two passes (2.3 -> 2.6 ms). */
static ir_ref phases_one_copy(ir_graph *g, ir_ref xp, const window *w, const int64_t *used, const int64_t *lq) {
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

static conv_input conv_phases(ir_graph *g, ir_ref xr, const window *w, double pad) {
  conv_input ci = {.ph = IR_NONE};
  const ir_shape *xs = &ir_node_get(g, xr)->shape;
  bool need = false;
  for (int i = 0; i < w->nsp; i++) need |= w->pb[i] || w->pe[i] || w->extra[i] || w->s[i] > 1;
  if (!need || 4 + 2 * w->nsp > IR_MAX_RANK) return ci;
  int64_t b[IR_MAX_RANK] = {0}, e[IR_MAX_RANK] = {0}, lq[MAX_SP], used[MAX_SP];
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
static ir_ref conv_tap(ir_graph *g, const conv_input *ci, ir_ref xp, const window *w,
                       const int64_t *kidx) {
  if (ci->ph == IR_NONE) return tap_slice(g, xp, w, kidx);
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

/* The convolution as one matrix product per group, W[M/G, C/G * taps] times
 * the input's columns [C/G * taps, O...] flattened: a 1x1 convolution
 * without stride or padding reads the input as it is; otherwise the windows
 * of the padded input are copied into those columns (im2col). Taken where
 * the windowed forms block badly: many taps for the channels they sum (the
 * 7x7 stem over 3 channels reads 49 taps per step of a 3-long sum, a chain
 * of 49 dependent FMAs per row), or short output rows with a stride (the
 * block's columns are then the whole map, not one row of it). */
static ir_ref conv_matmul(ir_graph *g, ir_ref x5, ir_ref wt, const window *w, int64_t M) {
  const ir_shape *s = &ir_node_get(g, x5)->shape;
  int64_t N = s->d[0], G = s->d[1], cg = s->d[3], taps = tap_count(w), cols = 1;
  for (int i = 0; i < w->nsp; i++) cols *= w->out[i];
  /* the output positions as one axis only for short rows: a reshape that
   * splits an axis keeps the epilogue (bias, Relu, residual) out of the
   * kernel, which costs a pass over the output */
  bool flat = w->out[w->nsp - 1] < 32;
  ir_ref xc = x5;
  if (taps > 1 || cols != ir_shape_numel(s) / (N * G * cg)) {
    ir_ref win = ir_view_window(g, pad_spatial(g, x5, w, 0.0), w->nsp, w->k, w->s, w->d, w->out);
    if (flat || w->nsp < 2) xc = ir_move(g, win);
    else {
      /* Columns stored [O0.., C/G, k..., O_last]: a register block (one
       * output row, 32 positions) then reads its C/G * taps rows a row
       * length apart inside one slab, not a whole map apart (the 7x7 stem's
       * columns: 147 rows 50 KB apart, a page each; 2.35 -> 2.08 ms,
       * 1 thread, CPU time, loaded machine). */
      int perm[IR_MAX_RANK], inv[IR_MAX_RANK], r = 0, rank = 4 + 2 * w->nsp;
      for (int i = 0; i < 3; i++) perm[r++] = i;
      for (int i = 0; i + 1 < w->nsp; i++) perm[r++] = 4 + w->nsp + i;
      for (int i = 3; i < 4 + w->nsp; i++) perm[r++] = i;
      perm[r++] = rank - 1;
      for (int i = 0; i < rank; i++) inv[perm[i]] = i;
      xc = ir_view_permute(g, ir_move(g, ir_view_permute(g, win, perm)), inv);
    }
  }
  ir_shape xs = {.rank = flat ? 5 : 4 + w->nsp, .d = {N, G, 1, cg * taps, cols}};
  ir_shape ws = {.rank = xs.rank, .d = {1, G, M / G, cg * taps, 1}};
  for (int i = 0; i < w->nsp && !flat; i++) xs.d[4 + i] = w->out[i], ws.d[4 + i] = 1;
  ir_ref xm = ir_view_reshape(g, xc, xs), wm = ir_view_reshape(g, wt, ws);
  return ir_reduce(g, IR_ADD, ir_binary(g, IR_MUL, xm, wm), 1u << 3);
}

/* The per-tap form: the input window [N, G, 1, C/G, O...] times the weight
 * tap [1, G, M/G, C/G, 1...] (wt reshaped to `wr`), accumulated over the
 * taps, then summed over C/G. */
static ir_ref conv_taps(ir_graph *g, ir_ref x5, ir_ref wt, const window *w, ir_shape wr) {
  conv_input ci = ir_failed(g) ? (conv_input){.ph = IR_NONE} : conv_phases(g, x5, w, 0.0);
  ir_ref xp = ci.ph == IR_NONE ? pad_spatial(g, x5, w, 0.0) : IR_NONE;
  ir_ref w5 = ir_view_reshape(g, wt, wr);
  /* Without a channel sum (depthwise) each output is a chain of one FMA per
   * tap, latency-bound: 4 interleaved chains, added at the end (the
   * MobileNetV3-small-like net of make_cnn.py: 2.6 -> 2.25 ms). With a
   * channel sum the rows of a register block are independent chains already. */
  ir_ref acc[4] = {IR_NONE, IR_NONE, IR_NONE, IR_NONE};
  int chains = wr.d[3] == 1 && tap_count(w) > 4 ? 4 : 1;
  int64_t kidx[MAX_SP] = {0};
  for (int64_t t = 0; t < tap_count(w) && !ir_failed(g); t++) {
    tap_index(w, t, kidx);
    int64_t start[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK];
    for (int i = 0; i < wr.rank; i++) step[i] = 1, len[i] = i < 4 ? wr.d[i] : 1;
    for (int i = 0; i < w->nsp; i++) start[4 + i] = kidx[i];
    ir_ref wtap = ir_view_slice(g, w5, start, step, len);
    ir_ref prod = ir_binary(g, IR_MUL, conv_tap(g, &ci, xp, w, kidx), wtap);
    ir_ref *a = &acc[t % chains];
    *a = *a == IR_NONE ? prod : ir_binary(g, IR_ADD, *a, prod);
  }
  for (int j = 1; j < chains; j++) acc[0] = ir_binary(g, IR_ADD, acc[0], acc[j]);
  return ir_reduce(g, IR_ADD, acc[0], 1u << 3);
}

/* The per-tap form over flattened rows, for depthwise convolutions (no
 * channel sum) over short 2-D rows: each phase plane of the padded copy
 * read as one axis, p = oh * Lq + ow (Lq the phase's row length), so tap
 * (kh, kw) is the unit-stride run at dh * Lq + dw of its phase and every
 * loop is as long as the whole map, not one row: a 7- or 14-wide row came
 * out of gcc as 4-wide and scalar code. The Lq - out_w wrapped columns of
 * each row are computed and never read (at most as many as the outputs),
 * zero rows added to the padded copy keep the reads inside it, and the
 * output is a strided view of the wide result. IR_NONE when it does not
 * apply. */
static ir_ref conv_taps_wide(ir_graph *g, ir_ref x5, ir_ref wt, const window *w0, ir_shape wr) {
  /* shapes copied: node pointers move as the graph grows */
  const ir_shape xs = ir_node_get(g, x5)->shape, *s = &xs;
  /* fewer than 8 channels (a test's single map): too little work to pay
   * for the epilogue's kernel of its own */
  if (w0->nsp != 2 || wr.d[3] != 1 || w0->out[1] >= 64 || !ir_shape_is_static(s) || s->d[1] < 8) return IR_NONE;
  window w = *w0;
  int64_t lq[2], lh[2], dmax[2];
  for (int i = 0; i < 2; i++) { /* small: every extent is static and already checked */
    int64_t lp = w.in[i] + w.pb[i] + w.pe[i] + w.extra[i];
    lq[i] = (lp + w.s[i] - 1) / w.s[i], dmax[i] = (w.k[i] - 1) * w.d[i] / w.s[i];
  }
  int64_t cols = (w.out[0] - 1) * lq[1] + w.out[1], cols16 = (cols + 15) / 16 * 16;
  if (cols16 > 2 * w.out[0] * w.out[1]) return IR_NONE;
  /* rows of the phase plane the furthest tap reads, past the ones there are */
  int64_t rows = (dmax[0] * lq[1] + dmax[1] + cols16 + lq[1] - 1) / lq[1];
  if (rows > lq[0]) w.extra[0] += (rows - lq[0]) * w.s[0];
  w.extra[0] += w.s[0] == 1 && !w.pb[0] && !w.pe[0] && !w.extra[0] && !w.pb[1] && !w.pe[1] && !w.extra[1];
  conv_input ci = conv_phases(g, x5, &w, 0.0);
  if (ci.ph == IR_NONE || ir_failed(g)) return IR_NONE;
  const ir_shape ps = ir_node_get(g, ci.ph)->shape;
  lh[0] = ps.d[6], lh[1] = ps.d[7];
  ir_shape fs = {.rank = 7, .d = {s->d[0], s->d[1], 1, 1, ps.d[4], ps.d[5], lh[0] * lh[1]}};
  ir_ref flat = ir_view_reshape(g, ci.ph, fs), w5 = ir_view_reshape(g, wt, wr);
  ir_ref acc[4] = {IR_NONE, IR_NONE, IR_NONE, IR_NONE};
  int chains = tap_count(&w) > 4 ? 4 : 1;
  int64_t kidx[MAX_SP] = {0};
  ir_shape ts = {.rank = 5, .d = {s->d[0], s->d[1], 1, 1, cols16}};
  for (int64_t t = 0; t < tap_count(&w) && !ir_failed(g); t++) {
    tap_index(&w, t, kidx);
    int64_t start[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK];
    for (int i = 0; i < 7; i++) step[i] = 1, len[i] = fs.d[i];
    int64_t th = kidx[0] * w.d[0], tw = kidx[1] * w.d[1];
    start[4] = th % w.s[0], start[5] = tw % w.s[1], len[4] = len[5] = 1;
    start[6] = th / w.s[0] * lh[1] + tw / w.s[1], len[6] = cols16;
    ir_ref xt = ir_view_reshape(g, ir_view_slice(g, flat, start, step, len), ts);
    int64_t ws0[IR_MAX_RANK] = {0}, wst[IR_MAX_RANK], wl[IR_MAX_RANK];
    for (int i = 0; i < wr.rank; i++) wst[i] = 1, wl[i] = i < 4 ? wr.d[i] : 1;
    ws0[4] = kidx[0], ws0[5] = kidx[1];
    ir_shape w1 = {.rank = 5, .d = {1, wr.d[1], wr.d[2], 1, 1}};
    ir_ref wtap = ir_view_reshape(g, ir_view_slice(g, w5, ws0, wst, wl), w1);
    ir_ref prod = ir_binary(g, IR_MUL, xt, wtap);
    ir_ref *a = &acc[t % chains];
    *a = *a == IR_NONE ? prod : ir_binary(g, IR_ADD, *a, prod);
  }
  for (int j = 1; j < chains; j++) acc[0] = ir_binary(g, IR_ADD, acc[0], acc[j]);
  if (ir_failed(g)) return IR_NONE;
  /* [N, M, cols16] read back as [N, M, out_w, out_h] (strides 1, Lq), then transposed */
  int64_t one = 1, lqw = lh[1];
  ir_shape ys = {.rank = 3, .d = {s->d[0], s->d[1] * wr.d[2], cols16}};
  int perm[4] = {0, 1, 3, 2};
  ir_ref y = ir_view_window(g, ir_view_reshape(g, acc[0], ys), 1, &w.out[1], &lqw, &one, &w.out[0]);
  return ir_view_permute(g, y, perm);
}

/* The windowed forms: the product of a window view of the padded input
 * [N, G, 1, C/G, k..., positions] (a copy when padded, no im2col) and the
 * weight [1, G, M/G, C/G, k..., 1...], summed over the channels and the taps
 * at once. The register-blocked kernel (scheduler/gemm.c) loops over c, kh,
 * kw around its block, so each step is one vector load per nr columns and
 * one broadcast per row; the per-tap form kept nine products in one
 * expression, their inputs and nine weight pointers live across the rows
 * (3x3, 256 -> 256 at 3 x 80: accumulators and pointers spilled).
 *
 * Wide (2-D, stride 1): the positions are the padded rows flattened,
 * p = oh * Wp + ow, with the Wp - out_w columns of each row that wrap
 * around computed and never read: tap (kh, kw) is then the unit-stride
 * window at kh * Wp + kw of the flat padded input, so a block of columns
 * spans output rows (no partial tile per row, and short rows block as well
 * as long ones) and the output is a strided view of the wide result. Rows:
 * the output row alone is the columns (stride 1 along it, any stride across
 * rows). */
typedef enum { CONV_TAPS, CONV_MATMUL, CONV_WIDE, CONV_ROWS } conv_form;

static conv_form conv_choose(const window *w, const ir_shape *xs, int64_t cg, int64_t mg) {
  int64_t taps = tap_count(w);
  bool plain = true, unit = true;
  for (int i = 0; i < w->nsp; i++) {
    plain &= w->k[i] == 1 && w->s[i] == 1 && !w->pb[i] && !w->pe[i] && !w->extra[i];
    unit &= w->s[i] == 1;
  }
  if (mg < 8 || 4 + 2 * w->nsp > IR_MAX_RANK || !ir_shape_is_static(xs)) return CONV_TAPS;
  if (plain) return CONV_MATMUL;
  int64_t wp = w->in[w->nsp - 1] + w->pb[w->nsp - 1] + w->pe[w->nsp - 1];
  /* the wrapped columns are work thrown away: at most 1/4 of it */
  if (w->nsp == 2 && unit && cg >= 8 && taps <= 9 && 4 * (wp - w->out[1]) <= wp) return CONV_WIDE;
  /* a strided stem over few channels (3x3/2 over RGB): the stride phases
   * (one copy of the input) beat im2col's copy of 9 taps x 3 channels
   * (MobileNetV3-small's stem at 224x224: 0.175 -> 0.14 ms) */
  if (cg < 8 && taps <= 9 && w->out[w->nsp - 1] >= 32 && w->s[w->nsp - 1] > 1) return CONV_TAPS;
  if (taps > 9 || cg < 8 || w->out[w->nsp - 1] < 32) return CONV_MATMUL;
  return w->s[w->nsp - 1] == 1 ? CONV_ROWS : CONV_TAPS;
}

static int64_t round32(int64_t v) {
  return (v + 31) / 32 * 32;
}

/* The columns are computed in whole multiples of 32 (every register block
 * width of the targets, 8, 16 and 32, divides it) and the extra ones are
 * never read: a partial block came out as 16 + 8 + 4 + 1 wide vector code
 * per row (3x3, 512 -> 512 at 7x7, 61 columns: 29 of them ran at a fraction
 * of the speed). Their reads stay inside the padded copy: zero rows (wide)
 * or columns (rows form) are added at its end. */
static ir_ref conv_window(ir_graph *g, ir_ref x5, ir_ref wt, const window *w0, ir_shape wr,
                          bool wide) {
  window w = *w0;
  int last = w.nsp - 1;
  int64_t one = 1, wp = w.in[last] + w.pb[last] + w.pe[last];
  int64_t cols = (w.out[0] - 1) * wp + w.out[last], cols32 = round32(cols);
  if (wide)
    w.pe[0] += (cols32 - cols + wp - 1) / wp;
  else
    w.pe[last] += round32(w.out[last]) - w.out[last], w.out[last] = round32(w.out[last]);
  ir_ref xp = pad_spatial(g, x5, &w, 0.0), xw;
  ir_shape ws = {.rank = 4 + 2 * w.nsp};
  for (int i = 0; i < 4 + w.nsp; i++) ws.d[i] = wr.d[i];
  for (int i = 0; i < w.nsp; i++) ws.d[4 + w.nsp + i] = 1;
  const ir_shape xs5 = ir_node_get(g, x5)->shape, *s = &xs5; /* a copy: the graph grows below */
  if (wide) {
    int64_t hp = w.in[0] + w.pb[0] + w.pe[0], dh = w.d[0] * wp, rows = (hp - (w.k[0] - 1) * w.d[0]) * wp;
    ir_shape fs = {.rank = 5, .d = {s->d[0], s->d[1], 1, s->d[3], hp * wp}};
    if (ir_node_get(g, xp)->op == IR_VIEW && ir_node_get(g, xp)->view.masked) xp = ir_move(g, xp);
    xw = ir_view_window(g, ir_view_reshape(g, xp, fs), 1, &w.k[0], &one, &dh, &rows);
    xw = ir_view_window(g, xw, 1, &w.k[1], &one, &w.d[1], &cols32);
    ws.rank = 7, ws.d[6] = 1;
  } else {
    xw = ir_view_window(g, xp, w.nsp, w.k, w.s, w.d, w.out);
  }
  unsigned axes = 0;
  for (int i = 3; i < 4 + w.nsp; i++) axes |= 1u << i;
  ir_ref y = ir_reduce(g, IR_ADD, ir_binary(g, IR_MUL, xw, ir_view_reshape(g, wt, ws)), axes);
  if (ir_failed(g)) return IR_NONE;
  if (!wide) { /* the columns past out_w dropped */
    const ir_shape *ys = &ir_node_get(g, y)->shape;
    int64_t start[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK];
    for (int i = 0; i < ys->rank; i++) step[i] = 1, len[i] = ys->d[i];
    len[ys->rank - 1] = w0->out[last];
    return ir_view_slice(g, y, start, step, len);
  }
  /* [N, M, cols] read back as [N, M, out_w, out_h] (strides 1, Wp), then transposed */
  ir_shape ys = {.rank = 3, .d = {s->d[0], s->d[1] * wr.d[2], cols32}};
  int perm[4] = {0, 1, 3, 2};
  y = ir_view_window(g, ir_view_reshape(g, y, ys), 1, &w.out[1], &wp, &one, &w.out[0]);
  return ir_view_permute(g, y, perm);
}

/* Conv: one of the forms above, then the bias. */
static int lower_conv(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), wt = imp_req(n, 1), b = imp_in(n, 2);
  if (x == IR_NONE || wt == IR_NONE || ir_failed(g)) return -1;
  ir_dtype dt = imp_dtype(n, x);
  if (!ir_dtype_is_float(dt)) return imp_fail(n, "input type %s is not supported (floating point only)", ir_dtype_name(dt));
  if (imp_dtype(n, wt) != dt) return imp_fail(n, "X and W have different types");
  ir_shape xs = *imp_shape(n, x), ws = *imp_shape(n, wt);
  if (ws.rank != xs.rank) return imp_fail(n, "W rank %d differs from X rank %d", ws.rank, xs.rank);
  int nsp = xs.rank - 2;
  int64_t k[MAX_SP];
  for (int i = 0; i < nsp && i < MAX_SP; i++) k[i] = ws.d[i + 2];
  if (imp_has_attr(n, "kernel_shape")) {
    int64_t ka[MAX_SP];
    if (kernel_attr(n, nsp, ka)) return -1;
    for (int i = 0; i < nsp; i++)
      if (ka[i] != k[i]) return imp_fail(n, "kernel_shape disagrees with the shape of W");
  }
  window w;
  if (window_init(n, &w, &xs, k, false)) return -1;
  int64_t G = imp_attr_i(n, "group", 1), N = xs.d[0], C = xs.d[1], M = ws.d[0];
  if (G < 1 || C % G || M % G || ws.d[1] != C / G)
    return imp_fail(n, "group=%lld does not fit C=%lld, M=%lld, W channels=%lld", (long long)G,
                    (long long)C, (long long)M, (long long)ws.d[1]);
  /* x -> [N, G, 1, C/G, spatial...] (padded); w -> [1, G, M/G, C/G, k...] */
  ir_shape xr = {.rank = xs.rank + 2, .d = {N, G, 1, C / G}};
  ir_shape wr = {.rank = xs.rank + 2, .d = {1, G, M / G, C / G}};
  for (int i = 0; i < nsp; i++) xr.d[4 + i] = xs.d[2 + i], wr.d[4 + i] = k[i];
  ir_ref x5 = ir_view_reshape(g, x, xr);
  ir_shape os = {.rank = xs.rank, .d = {N, M}};
  for (int i = 0; i < nsp; i++) os.d[2 + i] = w.out[i];
  conv_form f = conv_choose(&w, &xs, C / G, M / G);
  ir_ref y = f == CONV_TAPS ? conv_taps_wide(g, x5, wt, &w, wr) : IR_NONE;
  if (y == IR_NONE && !ir_failed(g))
    y = f == CONV_MATMUL ? conv_matmul(g, x5, wt, &w, M)
        : f == CONV_TAPS ? conv_taps(g, x5, wt, &w, wr)
                         : conv_window(g, x5, wt, &w, wr, f == CONV_WIDE);
  y = ir_view_reshape(g, y, os);
  if (b != IR_NONE) {
    ir_shape bs = {.rank = xs.rank, .d = {1, M}};
    for (int i = 0; i < nsp; i++) bs.d[2 + i] = 1;
    if (ir_shape_numel(imp_shape(n, b)) != M) return imp_fail(n, "bias B must have M=%lld elements", (long long)M);
    y = ir_binary(g, IR_ADD, y, ir_view_reshape(g, b, bs));
  }
  return imp_set_out(n, 0, y);
}

/* Argmax indices of MaxPool: the flat input index under each tap,
 * row-major (storage_order 0) or with the spatial axes column-major (1).
 * The first tap equal to the maximum `y` wins: taps are visited last to
 * first so that each step reads the previous choice once (a chain, not a
 * DAG that re-reads both branches). */
static ir_ref pool_indices(imp_node *n, ir_ref xp, ir_ref y, const window *w, const ir_shape *xs,
                           int64_t order) {
  ir_graph *g = n->g;
  int rank = xs->rank;
  int64_t st[IR_MAX_RANK];
  ir_contiguous_strides(xs, st);
  if (order == 1) {
    int64_t s = 1;
    for (int i = 0; i < w->nsp; i++) st[2 + i] = s, s *= w->in[i];
  }
  ir_shape os = *xs;
  for (int i = 0; i < w->nsp; i++) os.d[2 + i] = w->out[i];
  int64_t coef[IR_MAX_RANK], kidx[MAX_SP] = {0};
  for (int i = 0; i < rank; i++) coef[i] = i < 2 ? st[i] : st[i] * w->s[i - 2];
  ir_ref idx = IR_NONE;
  for (int64_t t = tap_count(w) - 1; t >= 0; t--) {
    tap_index(w, t, kidx);
    int64_t base = 0;
    for (int i = 0; i < w->nsp; i++) base += (kidx[i] * w->d[i] - w->pb[i]) * st[2 + i];
    ir_ref vi = ir_index(g, os, coef, base);
    idx = idx == IR_NONE ? vi : ir_where(g, ir_eq(g, tap_slice(g, xp, w, kidx), y), vi, idx);
  }
  return idx;
}

/* The taps of a pooling window combined with `op` (ADD or MAX). Padded or
 * strided, the input is copied once into stride phases (conv_phases, padded
 * with `pad`) so that every tap is an unmasked unit-stride read: through the
 * masked view no tap loop vectorised (ResNet-18's 3x3/2 MaxPool over
 * 64 x 112 x 112 was 15 % of the model). */
static ir_ref pool_taps(ir_graph *g, ir_ref x, const window *w, ir_op op, double pad) {
  const ir_shape *xs = &ir_node_get(g, x)->shape;
  conv_input ci = {.ph = IR_NONE};
  ir_shape r = {.rank = 4 + w->nsp, .d = {xs->d[0], xs->d[1], 1, 1}};
  if (4 + 2 * w->nsp <= IR_MAX_RANK && ir_shape_is_static(xs)) {
    for (int i = 0; i < w->nsp; i++) r.d[4 + i] = xs->d[2 + i];
    ci = conv_phases(g, ir_view_reshape(g, x, r), w, pad);
  }
  if (ci.ph == IR_NONE || ir_failed(g)) return fold_taps(g, pad_spatial(g, x, w, pad), w, op);
  ir_shape os = {.rank = 2 + w->nsp, .d = {xs->d[0], xs->d[1]}};
  for (int i = 0; i < w->nsp; i++) os.d[2 + i] = w->out[i];
  int64_t kidx[MAX_SP] = {0};
  ir_ref acc = IR_NONE;
  for (int64_t t = 0; t < tap_count(w); t++) {
    tap_index(w, t, kidx);
    ir_ref v = ir_view_reshape(g, conv_tap(g, &ci, IR_NONE, w, kidx), os);
    acc = t == 0 ? v : ir_binary(g, op, acc, v);
  }
  return acc;
}

static int lower_maxpool(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE || ir_failed(g)) return -1;
  ir_shape xs = *imp_shape(n, x);
  ir_dtype dt = imp_dtype(n, x);
  if (dt == IR_BOOL) return imp_fail(n, "bool input is not supported");
  int64_t k[MAX_SP];
  window w;
  if (xs.rank < 3) return imp_fail(n, "input rank %d is not supported", xs.rank);
  if (kernel_attr(n, xs.rank - 2, k) || window_init(n, &w, &xs, k, imp_attr_i(n, "ceil_mode", 0)))
    return -1;
  int64_t order = imp_attr_i(n, "storage_order", 0);
  if (order != 0 && order != 1) return imp_fail(n, "storage_order=%lld is not supported", (long long)order);
  ir_ref y = pool_taps(g, x, &w, IR_MAX, ir_dtype_lowest(dt));
  if (imp_set_out(n, 0, y)) return -1;
  if (!imp_has_out(n, 1)) return 0;
  if (!ir_shape_is_static(&xs)) return imp_fail_sym(n, ir_shape_numel(&xs), "MaxPool indices of a symbolic input");
  ir_ref xp = pad_spatial(g, x, &w, ir_dtype_lowest(dt));
  return imp_set_out(n, 1, pool_indices(n, xp, y, &w, &xs, order));
}

/* AveragePool: sum of the taps over the 0-padded input, divided by the
 * number of counted elements under each window (all explicit pads with
 * count_include_pad, only real input elements without). */
static int lower_averagepool(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE || ir_failed(g)) return -1;
  ir_shape xs = *imp_shape(n, x);
  ir_dtype dt = imp_dtype(n, x);
  if (!ir_dtype_is_float(dt)) return imp_fail(n, "input type %s is not supported (floating point only)", ir_dtype_name(dt));
  int64_t k[MAX_SP];
  window w;
  if (xs.rank < 3) return imp_fail(n, "input rank %d is not supported", xs.rank);
  if (kernel_attr(n, xs.rank - 2, k) || window_init(n, &w, &xs, k, imp_attr_i(n, "ceil_mode", 0)))
    return -1;
  bool include = imp_attr_i(n, "count_include_pad", 0) != 0;
  ir_ref sum = pool_taps(g, x, &w, IR_ADD, 0.0);
  bool uniform = true;
  for (int i = 0; i < w.nsp; i++)
    uniform &= w.extra[i] == 0 && (include || (w.pb[i] == 0 && w.pe[i] == 0));
  if (uniform) return imp_set_out(n, 0, ir_binary(g, IR_MUL, sum, ir_scalar(g, dt, 1.0 / (double)tap_count(&w))));
  /* counts: ones over the counted region, zero-padded to the window extent */
  ir_shape cs = {.rank = w.nsp};
  int64_t b[IR_MAX_RANK], e[IR_MAX_RANK];
  for (int i = 0; i < w.nsp; i++) {
    cs.d[i] = ir_dim_add(w.in[i], include ? w.pb[i] + w.pe[i] : 0);
    b[i] = include ? 0 : w.pb[i];
    e[i] = w.extra[i] + (include ? 0 : w.pe[i]);
  }
  ir_ref ones = ir_view_pad(g, ir_load(g, dt, cs, 1.0), b, e, 0.0);
  window wc = w;
  for (int i = 0; i < w.nsp; i++) wc.pb[i] = wc.pe[i] = wc.extra[i] = 0;
  ir_ref cnt = fold_taps(g, ones, &wc, IR_ADD);
  return imp_set_out(n, 0, ir_div(g, sum, cnt));
}

static int lower_global(imp_node *n, bool max) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE || ir_failed(n->g)) return -1;
  const ir_shape *s = imp_shape(n, x);
  if (s->rank < 3) return imp_fail(n, "input rank %d is not supported", s->rank);
  ir_dtype dt = imp_dtype(n, x);
  if (!max && !ir_dtype_is_float(dt)) return imp_fail(n, "input type %s is not supported (floating point only)", ir_dtype_name(dt));
  uint32_t axes = 0;
  for (int i = 2; i < s->rank; i++) axes |= 1u << i;
  return imp_set_out(n, 0, max ? ir_max_reduce(n->g, x, axes, true) : ir_mean(n->g, x, axes, true));
}

static int lower_globalaveragepool(imp_node *n) {
  return lower_global(n, false);
}
static int lower_globalmaxpool(imp_node *n) {
  return lower_global(n, true);
}

const imp_op_entry imp_ops_nn[] = {
    {"Conv", lower_conv, IMP_SYM},
    {"MaxPool", lower_maxpool, IMP_SYM},
    {"AveragePool", lower_averagepool, IMP_SYM},
    {"GlobalAveragePool", lower_globalaveragepool, IMP_SYM},
    {"GlobalMaxPool", lower_globalmaxpool, IMP_SYM},
    {NULL, NULL, 0},
};
