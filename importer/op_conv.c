/* op_conv.c — Conv: the op, and the choice of its form. Convolutions
 * with channels to sum copy the padded input once and take the
 * register-blocked matmul form (scheduler/gemm.c): per tap over an
 * unmasked copy, windowed (a sum over c, kh, kw inside the block), or as
 * one product with an im2col copy of the windows (ir_view_window).
 * Depthwise ones combine taps (window.c). The forms: conv_matmul.c,
 * conv_taps.c, conv_window.c, conv_cols.c. */
#include "importer_impl.h"

/* The forms (conv_window.c describes the windowed ones: wide and rows). */
typedef enum { CONV_TAPS, CONV_MATMUL, CONV_WIDE, CONV_ROWS } conv_form;

static conv_form conv_choose(const imp_window *w, const ir_shape *xs, int64_t cg, int64_t mg) {
  int64_t taps = imp_tap_count(w);
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
  /* 2-D and strided along the row: im2col's one matrix product beat the
   * stride phases' nine column vectors per step (CRNN's 3x3/2, 32 -> 64
   * at 12 x 80: 680 -> 405 k TSC cycles; the DBNet-like net 25.6 -> 24.8
   * ms; Zen 5, 1 thread, per-kernel rdtsc and CPU-time minima, loaded) */
  if (w->nsp == 2 && w->s[1] > 1) return CONV_MATMUL;
  return w->s[w->nsp - 1] == 1 ? CONV_ROWS : CONV_TAPS;
}

/* What the forms over weight panels (conv_cols.c: wide_cols, im2col_cols)
 * need: 2-D, one group, static shapes, a constant float weight, output
 * channels in whole blocks of two vectors, a target of 16-float vectors and
 * 32 registers. Their block's rows (3/4 of the registers in accumulators of
 * two vectors across, at most 12), or 0 when it does not apply. */
static int64_t panel_rows(ir_graph *g, const imp_window *w, const ir_shape *xs, ir_ref wt, int64_t G, int64_t M,
                          int64_t vf, int regs) {
  if (w->nsp != 2 || G != 1 || vf < 16 || regs < 32 || !ir_shape_is_static(xs) || !ir_is_const(g, wt) ||
      ir_node_get(g, wt)->dtype != IR_F32 || M % (2 * vf))
    return 0;
  int64_t mr = (int64_t)regs * 3 / 4 / 2;
  return mr > 12 ? 12 : mr;
}

/* Whether imp_conv_wide_cols (or imp_conv_unfold_cols: unfold_pays) takes
 * the convolution: 2-D, stride and dilation 1, one group, a constant
 * float weight, 2 to 9 taps over at least 8
 * channels, output channels in whole blocks of two vectors, on a target
 * of 16-float vectors and 32 registers (the wide form's blocks there are
 * 2 to 4 vectors of positions across), and the wide form computing at
 * least 1/16 more products than this one, whose blocks are 3/4 of the
 * registers in accumulators of two vectors across (12 rows) over the P
 * wide positions: 3x3, 512 -> 512 at 7x7, 64 columns x 516 rows against
 * 60 x 512 (+7.5 %); 256 -> 256 at 14x14, 224 x 264 against 216 x 256
 * (+6.9 %; the transposed reads of the result after it cost ~3 % of the
 * layer); 28x28 and 56x56 (+0 and +0.8 %) keep the wide form. */
static bool wide_cols_fits(ir_graph *g, const imp_window *w, const ir_shape *xs, ir_ref wt,
                           int64_t G, int64_t M, int64_t vf, int regs, int64_t wide_products) {
  int64_t mr = panel_rows(g, w, xs, wt, G, M, vf, regs);
  if (!mr) return false;
  for (int i = 0; i < 2; i++)
    if (w->s[i] != 1 || w->d[i] != 1) return false;
  int64_t taps = imp_tap_count(w), P = w->out[0] * imp_conv_wide_stride(w), products;
  if (wide_products < 0 || ir_mul_ov((P + mr - 1) / mr * mr, M, &products) || products > INT64_MAX / 17 ||
      wide_products > INT64_MAX / 16)
    return false;
  return taps > 1 && taps <= 9 && xs->d[3] >= 8 && 16 * wide_products >= 17 * products;
}

/* Of the convolutions wide_cols_fits gives the panels, the ones whose
 * positions are better taken exactly (imp_conv_unfold_cols, a copy of the
 * input per kernel column) than as the wide form's rows: where the wrapped
 * columns are at least 1/9 of those rows (a 3x3 at 7x7: 56 rows for 49
 * outputs; at 14x14, 210 for 196, the copies cost what the rows save).
 * ResNet-18 on Zen 5, 1 thread, per-kernel rdtsc minima of interleaved
 * rounds: its three 3x3, 512 -> 512 layers at 7x7 -101 to -228 k TSC
 * cycles each (2.5-2.6 M, their copies +5 to +16 k); the 256 -> 256 ones at
 * 14x14 -24 to -57 k of 2.3 M, their copies +32 to +90 k. */
static bool unfold_pays(const imp_window *w) {
  int64_t wp = imp_conv_wide_stride(w);
  return w->k[1] <= IMP_CONV_MAX_UNFOLD && 9 * (wp - w->out[1]) >= wp;
}

/* Whether imp_conv_cols takes the convolution: 2-D, one group, a constant
 * weight, 2 to 9 taps over at least 8 channels, output channels that
 * fill whole column blocks of two vectors, and few output rows (at most
 * 12) of at least 32 positions (a block's rows are positions along one
 * output row): there the other forms lose to short maps (the rows form's
 * blocks are one output row), kernel rows over the padding (bands) and,
 * strided, an im2col copy. */
static bool cols_fits(ir_graph *g, const imp_window *w, const ir_shape *xs, ir_ref wt, int64_t G, int64_t M, int vf) {
  if (w->nsp != 2 || G != 1 || !ir_shape_is_static(xs) || !ir_is_const(g, wt) || ir_node_get(g, wt)->dtype != IR_F32)
    return false;
  int64_t taps = imp_tap_count(w);
  return taps > 1 && taps <= 9 && xs->d[1] >= 8 && M % (2 * vf) == 0 && w->out[0] <= 12 && w->out[1] >= 32;
}

/* Whether imp_conv_winograd takes the convolution: 3x3 at stride and
 * dilation 1, one group, static shapes, a constant float weight, not
 * --no-winograd (imp_ctx_winograd), at least 48 channels in and out,
 * more than 12 output rows and columns, and its 16 products at most
 * 1/1.9 of the direct form's 9 per output (the wrapped and odd tiles
 * waste some). Its transforms stream the 4x larger transformed tensors
 * through memory: that pays against the direct forms' products where
 * these are many per element moved (ResNet-18's 3x3 layers at 56x56 to
 * 14x14, 64 to 256 channels: -12 to -33 % a layer), and lost where
 * channels are few (the DBNet-like net's 16 -> 16 at 320x320: 5.0 ->
 * 14.2 M TSC cycles), the rows are few (the CRNN-like net's 128 -> 128
 * at 6 x 80, the direct cols form's case: +9 %) or the map small (7x7:
 * +20 %). Zen 5, per-kernel rdtsc minima. On two threads it pays too
 * when the VM is quiet (ResNet-18 -11 %, the 3x3 layer -35 %; it lost
 * 1-4 % in the VM's slow phases); docs/DESIGN.md, "Winograd's F(2x2,
 * 3x3)". */
static bool winograd_fits(imp_node *n, const imp_window *w, const ir_shape *xs, ir_ref wt, int64_t G, int64_t M) {
  ir_graph *g = n->g;
  if (!imp_ctx_winograd(n->ctx) || w->nsp != 2 || G != 1 || !ir_shape_is_static(xs) || !ir_is_const(g, wt) ||
      ir_node_get(g, wt)->dtype != IR_F32)
    return false;
  for (int i = 0; i < 2; i++)
    if (w->k[i] != 3 || w->s[i] != 1 || w->d[i] != 1 || w->extra[i] || w->out[i] <= 12) return false;
  int64_t th = (w->out[0] + 1) / 2, tw = (w->out[1] + 1) / 2, C = xs->d[1];
  if (C < 48 || M < 48 || w->out[0] > (1 << 24) || w->out[1] > (1 << 24)) return false;
  /* 9 OH OW >= 1.9 x 16 th (tw + 1), in tenths */
  return 90 * w->out[0] * w->out[1] >= 19 * 16 * th * (tw + 1);
}

/* Whether imp_conv_im2col_cols takes the convolution: im2col's case
 * (CONV_MATMUL), strided, at most 9 taps over at least 8 channels,
 * panel_rows' conditions, and im2col's columns (the P positions in blocks of two
 * vectors) at least 1/16 more than this form's rows (P in blocks of 12, 3/4
 * of the registers in accumulators of two vectors across). ResNet-18's
 * 3x3/2, 128 -> 256 to 14x14 (224 columns for 196 against 204 rows) and
 * 256 -> 512 to 7x7 (64 for 49 against 60) take it, as do the 1x1/2
 * ones to those maps; 64 -> 128 to 28x28 (800 against 792) keeps im2col,
 * 2 % faster there (docs/DESIGN.md). */
static bool im2col_cols_fits(ir_graph *g, const imp_window *w, const ir_shape *xs, ir_ref wt, int64_t G,
                             int64_t M, int64_t vf, int regs) {
  int64_t mr = panel_rows(g, w, xs, wt, G, M, vf, regs), nr = 2 * vf, P;
  if (!mr || w->s[1] < 2 || imp_tap_count(w) > 9 || xs->d[1] < 8 || ir_mul_ov(w->out[0], w->out[1], &P) ||
      P > INT64_MAX / 32)
    return false;
  return 16 * ((P + nr - 1) / nr * nr) >= 17 * ((P + mr - 1) / mr * mr);
}

/* imp_conv_row_unfold's case: 2-D, static, strided along the row with output
 * rows of at least 32 positions (the columns), more than 9 taps over fewer
 * than 8 channels (im2col's copy repeats each row k0 / s0 times). */
static bool row_unfold_fits(const imp_window *w, const ir_shape *xs, int64_t cg) {
  return w->nsp == 2 && ir_shape_is_static(xs) && w->s[1] > 1 && w->out[1] >= 32 && imp_tap_count(w) > 9 && cg < 8;
}

/* The convolution of x [N, C, L...] by wt [M, C/G, k...] (same type, float
 * or int32) as one of the forms above, [N, M, O...]; the node's kernel_shape,
 * strides, dilations, pads and group. Padding is with zeros: ConvInteger
 * passes its operands less their zero points. */
ir_ref imp_conv(imp_node *n, ir_ref x, ir_ref wt, ir_ref *b) {
  ir_graph *g = n->g;
  if (x == IR_NONE || wt == IR_NONE || ir_failed(g)) return IR_NONE;
  ir_shape xs = *imp_shape(n, x), ws = *imp_shape(n, wt);
  if (ws.rank != xs.rank) return imp_fail(n, "W rank %d differs from X rank %d", ws.rank, xs.rank), IR_NONE;
  int nsp = xs.rank - 2;
  int64_t k[IMP_MAX_SP];
  for (int i = 0; i < nsp && i < IMP_MAX_SP; i++) k[i] = ws.d[i + 2];
  if (imp_has_attr(n, "kernel_shape")) {
    int64_t ka[IMP_MAX_SP];
    if (imp_kernel_attr(n, nsp, ka)) return IR_NONE;
    for (int i = 0; i < nsp; i++)
      if (ka[i] != k[i]) return imp_fail(n, "kernel_shape disagrees with the shape of W"), IR_NONE;
  }
  imp_window w;
  if (imp_window_init(n, &w, &xs, k, false)) return IR_NONE;
  int64_t G = imp_attr_i(n, "group", 1), N = xs.d[0], C = xs.d[1], M = ws.d[0];
  if (G < 1 || C % G || M % G || ws.d[1] != C / G)
    return imp_fail(n, "group=%lld does not fit C=%lld, M=%lld, W channels=%lld", (long long)G, (long long)C,
                    (long long)M, (long long)ws.d[1]),
           IR_NONE;
  /* x -> [N, G, 1, C/G, spatial...] (padded); w -> [1, G, M/G, C/G, k...] */
  ir_shape xr = {.rank = xs.rank + 2, .d = {N, G, 1, C / G}};
  ir_shape wr = {.rank = xs.rank + 2, .d = {1, G, M / G, C / G}};
  for (int i = 0; i < nsp; i++) xr.d[4 + i] = xs.d[2 + i], wr.d[4 + i] = k[i];
  ir_ref x5 = ir_view_reshape(g, x, xr);
  ir_shape os = {.rank = xs.rank, .d = {N, M}};
  for (int i = 0; i < nsp; i++) os.d[2 + i] = w.out[i];
  conv_form f = conv_choose(&w, &xs, C / G, M / G);
  int64_t vf = imp_ctx_vector_floats(n->ctx);
  int regs = imp_ctx_vector_regs(n->ctx);
  ir_ref y = winograd_fits(n, &w, &xs, wt, G, M) ? imp_conv_winograd(n, x5, wt, b, &w) : IR_NONE;
  if (y == IR_NONE && !ir_failed(g) && cols_fits(g, &w, &xs, wt, G, M, vf)) y = imp_conv_cols(n, x5, wt, &w, regs, 2 * vf);
  if (y == IR_NONE && !ir_failed(g) && f == CONV_WIDE &&
      wide_cols_fits(g, &w, &xr, wt, G, M, vf, regs, imp_conv_wide_products(&w, M, vf, regs)))
    y = unfold_pays(&w) ? imp_conv_unfold_cols(n, x5, wt, b, &w, vf)
                        : imp_conv_wide_cols(n, x5, wt, b, &w, vf);
  if (y == IR_NONE && !ir_failed(g))
    y = f == CONV_TAPS ? imp_conv_taps_wide(g, x5, wt, b, &w, wr)
        : f == CONV_WIDE || f == CONV_ROWS
            ? imp_conv_bands(n, x5, wt, &w, wr, vf, regs, f == CONV_WIDE)
            : IR_NONE;
  if (y == IR_NONE && !ir_failed(g) && f == CONV_MATMUL && im2col_cols_fits(g, &w, &xs, wt, G, M, vf, regs))
    y = imp_conv_im2col_cols(n, x5, wt, b, &w, vf);
  if (y == IR_NONE && !ir_failed(g) && f == CONV_MATMUL && row_unfold_fits(&w, &xs, C / G))
    y = imp_conv_row_unfold(g, x5, wt, &w, wr);
  if (y == IR_NONE && !ir_failed(g))
    y = f == CONV_MATMUL ? imp_conv_matmul(g, x5, wt, b, &w, M, imp_ctx_vector_floats(n->ctx))
        : f == CONV_TAPS ? imp_conv_taps(g, x5, wt, &w, wr)
                         : imp_conv_window(g, x5, wt, b, &w, wr, f == CONV_WIDE, vf, regs);
  return ir_view_reshape(g, y, os);
}

/* Conv: imp_conv, then the bias. */
static int lower_conv(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), wt = imp_req(n, 1), b = imp_in(n, 2);
  if (x == IR_NONE || wt == IR_NONE || ir_failed(g)) return -1;
  ir_dtype dt = imp_dtype(n, x);
  if (!ir_dtype_is_float(dt)) return imp_fail(n, "input type %s is not supported (floating point only)", ir_dtype_name(dt));
  if (imp_dtype(n, wt) != dt) return imp_fail(n, "X and W have different types");
  int64_t M = imp_shape(n, wt)->d[0];
  if (b != IR_NONE && ir_shape_numel(imp_shape(n, b)) != M)
    return imp_fail(n, "bias B must have M=%lld elements", (long long)M);
  ir_ref y = imp_conv(n, x, wt, &b); /* a wide form takes the bias */
  if (y == IR_NONE) return -1;
  if (b != IR_NONE) {
    ir_shape bs = imp_unit_shape(imp_shape(n, x)->rank, 1, M);
    y = ir_binary(g, IR_ADD, y, ir_view_reshape(g, b, bs));
  }
  return imp_set_out(n, 0, y);
}

const imp_op_entry imp_ops_conv[] = {
    {"Conv", lower_conv, IMP_SYM},
    {NULL, NULL, 0},
};
