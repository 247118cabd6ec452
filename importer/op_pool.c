/* op_pool.c — MaxPool (with its argmax indices), AveragePool, LpPool,
 * GlobalAveragePool, GlobalMaxPool, GlobalLpPool: taps combined element-wise over the
 * padded input (window.c). */
#include "importer_impl.h"

#include <string.h>

/* Argmax indices of MaxPool: the flat input index under each tap,
 * row-major (storage_order 0) or with the spatial axes column-major (1).
 * The first tap equal to the maximum `y` wins: taps are visited last to
 * first so that each step reads the previous choice once (a chain, not a
 * DAG that re-reads both branches). */
static ir_ref pool_indices(imp_node *n, ir_ref xp, ir_ref y, const imp_window *w, const ir_shape *xs,
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
  int64_t coef[IR_MAX_RANK], kidx[IMP_MAX_SP] = {0};
  for (int i = 0; i < rank; i++) coef[i] = i < 2 ? st[i] : st[i] * w->s[i - 2];
  ir_ref idx = IR_NONE;
  for (int64_t t = imp_tap_count(w) - 1; t >= 0; t--) {
    imp_tap_index(w, t, kidx);
    int64_t base = 0;
    for (int i = 0; i < w->nsp; i++) base += (kidx[i] * w->d[i] - w->pb[i]) * st[2 + i];
    ir_ref vi = ir_index(g, os, coef, base);
    idx = idx == IR_NONE ? vi : ir_where(g, ir_eq(g, imp_tap_slice(g, xp, w, kidx), y), vi, idx);
  }
  return idx;
}

/* A 2-D max over a window strided along its rows, as two passes: the
 * kernel rows combined first, each a strided row of the padded view read
 * in place, [N, C, out0, Wp] copied once (unit-stride along the row; the
 * padding a mask on the view, no copy of its own), then the kernel columns,
 * strided slices of that copy's rows. The phase copy's form made two
 * copies of the whole input (padded, then split into stride phases) before
 * its k0 * k1 - 1 maxes per output; this one reads the input once and
 * computes k0 - 1 maxes per padded column and k1 - 1 per output (ResNet-18's
 * 3x3/2 over 64 x 112 x 112: bench/README.md). IR_NONE when it does not
 * apply. `pad` is the type's lowest value. */
static ir_ref pool_separable(ir_graph *g, ir_ref x, const imp_window *w, double pad) {
  const ir_shape xs = ir_node_get(g, x)->shape;
  if (w->nsp != 2 || xs.rank != 4 || !ir_shape_is_static(&xs) || w->k[0] < 2 || w->k[1] < 2 || w->s[1] < 2)
    return IR_NONE;
  ir_ref xp = imp_pad_spatial(g, x, w, pad), rows = IR_NONE;
  if (xp == IR_NONE || ir_failed(g)) return IR_NONE;
  ir_shape ps = ir_node_get(g, xp)->shape;
  int64_t start[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK];
  for (int i = 0; i < 4; i++) step[i] = 1, len[i] = ps.d[i];
  step[2] = w->s[0], len[2] = w->out[0];
  for (int64_t kh = 0; kh < w->k[0]; kh++) {
    start[2] = kh * w->d[0];
    ir_ref v = ir_view_slice(g, xp, start, step, len);
    rows = kh == 0 ? v : ir_binary(g, IR_MAX, rows, v);
  }
  rows = ir_move(g, rows); /* stored: each column tap reads it, not 3 masked rows again */
  for (int i = 0; i < 4; i++) start[i] = 0, step[i] = 1, len[i] = ps.d[i];
  len[2] = w->out[0], step[3] = w->s[1], len[3] = w->out[1];
  ir_ref acc = IR_NONE;
  for (int64_t kw = 0; kw < w->k[1]; kw++) {
    start[3] = kw * w->d[1];
    ir_ref v = ir_view_slice(g, rows, start, step, len);
    acc = kw == 0 ? v : ir_binary(g, IR_MAX, acc, v);
  }
  /* a node of its own: a residual Add reading the pooled value had claimed
   * the max chain (scheduler/fuse.c, own) and left its last tap a pass
   * over the output by itself */
  return ir_failed(g) ? IR_NONE : ir_move(g, acc);
}

/* The taps of a pooling window combined with `op` (ADD or MAX). Padded or
 * strided, the input is copied once into stride phases (imp_window_phases, padded
 * with `pad`) so that every tap is an unmasked unit-stride read: through the
 * masked view no tap loop vectorised (ResNet-18's 3x3/2 MaxPool over
 * 64 x 112 x 112 was 15 % of the model). */
static ir_ref pool_taps(ir_graph *g, ir_ref x, const imp_window *w, ir_op op, double pad) {
  const ir_shape xs0 = ir_node_get(g, x)->shape, *xs = &xs0; /* a copy: the graph grows below */
  imp_window_input ci = {.ph = IR_NONE};
  ir_shape r = {.rank = 4 + w->nsp, .d = {xs->d[0], xs->d[1], 1, 1}};
  if (4 + 2 * w->nsp <= IR_MAX_RANK && ir_shape_is_static(xs)) {
    for (int i = 0; i < w->nsp; i++) r.d[4 + i] = xs->d[2 + i];
    ci = imp_window_phases(g, ir_view_reshape(g, x, r), w, pad);
  }
  if (ci.ph == IR_NONE || ir_failed(g)) return imp_fold_taps(g, imp_pad_spatial(g, x, w, pad), w, op);
  ir_shape os = {.rank = 2 + w->nsp, .d = {xs->d[0], xs->d[1]}};
  for (int i = 0; i < w->nsp; i++) os.d[2 + i] = w->out[i];
  int64_t kidx[IMP_MAX_SP] = {0};
  ir_ref acc = IR_NONE;
  for (int64_t t = 0; t < imp_tap_count(w); t++) {
    imp_tap_index(w, t, kidx);
    ir_ref v = ir_view_reshape(g, imp_window_tap(g, &ci, IR_NONE, w, kidx), os);
    acc = t == 0 ? v : ir_binary(g, op, acc, v);
  }
  return acc;
}

/* The window of a MaxPool or AveragePool over input `xs`: kernel_shape,
 * strides, pads, ceil_mode. */
static int pool_window(imp_node *n, const ir_shape *xs, imp_window *w) {
  int64_t k[IMP_MAX_SP];
  if (xs->rank < 3) return imp_fail(n, "input rank %d is not supported", xs->rank);
  return imp_kernel_attr(n, xs->rank - 2, k) || imp_window_init(n, w, xs, k, imp_attr_i(n, "ceil_mode", 0)) ? -1 : 0;
}

static int lower_maxpool(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE || ir_failed(g)) return -1;
  ir_shape xs = *imp_shape(n, x);
  ir_dtype dt = imp_dtype(n, x);
  if (dt == IR_BOOL) return imp_fail(n, "bool input is not supported");
  imp_window w;
  if (pool_window(n, &xs, &w)) return -1;
  int64_t order = imp_attr_i(n, "storage_order", 0);
  if (order != 0 && order != 1) return imp_fail(n, "storage_order=%lld is not supported", (long long)order);
  ir_ref y = pool_separable(g, x, &w, ir_dtype_lowest(dt));
  if (y == IR_NONE && !ir_failed(g)) y = pool_taps(g, x, &w, IR_MAX, ir_dtype_lowest(dt));
  if (imp_set_out(n, 0, y)) return -1;
  if (!imp_has_out(n, 1)) return 0;
  if (!ir_shape_is_static(&xs)) return imp_fail_sym(n, ir_shape_numel(&xs), "MaxPool indices of a symbolic input");
  ir_ref xp = imp_pad_spatial(g, x, &w, ir_dtype_lowest(dt));
  return imp_set_out(n, 1, pool_indices(n, xp, y, &w, &xs, order));
}

/* The floating-point input of AveragePool or LpPool and its window. */
static int float_window(imp_node *n, ir_ref *x, imp_window *w) {
  *x = imp_req(n, 0);
  if (*x == IR_NONE || ir_failed(n->g)) return -1;
  ir_shape xs = *imp_shape(n, *x);
  ir_dtype dt = imp_dtype(n, *x);
  if (!ir_dtype_is_float(dt)) return imp_fail(n, "input type %s is not supported (floating point only)", ir_dtype_name(dt));
  return pool_window(n, &xs, w);
}

/* AveragePool: sum of the taps over the 0-padded input, divided by the
 * number of counted elements under each window (all explicit pads with
 * count_include_pad, only real input elements without). */
static int lower_averagepool(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x;
  imp_window w;
  if (float_window(n, &x, &w)) return -1;
  ir_dtype dt = imp_dtype(n, x);
  bool include = imp_attr_i(n, "count_include_pad", 0) != 0;
  ir_ref sum = pool_taps(g, x, &w, IR_ADD, 0.0);
  bool uniform = true;
  for (int i = 0; i < w.nsp; i++)
    uniform &= w.extra[i] == 0 && (include || (w.pb[i] == 0 && w.pe[i] == 0));
  if (uniform) return imp_set_out(n, 0, ir_binary(g, IR_MUL, sum, ir_scalar(g, dt, 1.0 / (double)imp_tap_count(&w))));
  /* counts: ones over the counted region, zero-padded to the window extent */
  ir_shape cs = {.rank = w.nsp};
  int64_t b[IR_MAX_RANK], e[IR_MAX_RANK];
  for (int i = 0; i < w.nsp; i++) {
    cs.d[i] = ir_dim_add(w.in[i], include ? w.pb[i] + w.pe[i] : 0);
    b[i] = include ? 0 : w.pb[i];
    e[i] = w.extra[i] + (include ? 0 : w.pe[i]);
  }
  ir_ref ones = ir_view_pad(g, ir_load(g, dt, cs, 1.0), b, e, 0.0);
  imp_window wc = w;
  for (int i = 0; i < w.nsp; i++) wc.pb[i] = wc.pe[i] = wc.extra[i] = 0;
  ir_ref cnt = imp_fold_taps(g, ones, &wc, IR_ADD);
  return imp_set_out(n, 0, ir_div(g, sum, cnt));
}

/* |x|^p and s^(1/p) of LpPool: p = 1 and 2 without pow (|x|, x·x, sqrt). */
static ir_ref lp_power(ir_graph *g, ir_ref x, ir_dtype dt, int64_t p) {
  return p == 1 ? ir_abs(g, x) : p == 2 ? ir_binary(g, IR_MUL, x, x) : ir_pow(g, ir_abs(g, x), ir_scalar(g, dt, (double)p));
}
static ir_ref lp_root(ir_graph *g, ir_ref s, ir_dtype dt, int64_t p) {
  return p == 1 ? s : p == 2 ? ir_unary(g, IR_SQRT, s) : ir_pow(g, s, ir_scalar(g, dt, 1.0 / (double)p));
}

/* The norm exponent p of LpPool / GlobalLpPool (default 2), or 0. */
static int64_t lp_exponent(imp_node *n) {
  int64_t p = imp_attr_i(n, "p", 2);
  if (p < 1 || p > 64) return imp_fail(n, "p=%lld is not supported (1 to 64)", (long long)p), 0;
  return p;
}

/* LpPool: (sum of |x|^p over the window)^(1/p); the padding adds 0. */
static int lower_lppool(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x;
  imp_window w;
  int64_t p = lp_exponent(n);
  if (!p || float_window(n, &x, &w)) return -1;
  ir_dtype dt = imp_dtype(n, x);
  return imp_set_out(n, 0, lp_root(g, pool_taps(g, lp_power(g, x, dt, p), &w, IR_ADD, 0.0), dt, p));
}

enum { GLOBAL_AVG, GLOBAL_MAX, GLOBAL_LP };

/* GlobalAveragePool, GlobalMaxPool, GlobalLpPool: a reduction over the
 * spatial axes. */
static int lower_global(imp_node *n, int kind) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE || ir_failed(g)) return -1;
  const ir_shape *s = imp_shape(n, x);
  if (s->rank < 3) return imp_fail(n, "input rank %d is not supported", s->rank);
  ir_dtype dt = imp_dtype(n, x);
  if (kind != GLOBAL_MAX && !ir_dtype_is_float(dt))
    return imp_fail(n, "input type %s is not supported (floating point only)", ir_dtype_name(dt));
  int64_t p = kind == GLOBAL_LP ? lp_exponent(n) : 1;
  if (!p) return -1;
  uint32_t axes = 0;
  for (int i = 2; i < s->rank; i++) axes |= 1u << i;
  if (kind == GLOBAL_LP) return imp_set_out(n, 0, lp_root(g, ir_sum(g, lp_power(g, x, dt, p), axes, true), dt, p));
  return imp_set_out(n, 0, kind == GLOBAL_MAX ? ir_max_reduce(g, x, axes, true) : ir_mean(g, x, axes, true));
}

static int lower_globalaveragepool(imp_node *n) {
  return lower_global(n, GLOBAL_AVG);
}
static int lower_globalmaxpool(imp_node *n) {
  return lower_global(n, GLOBAL_MAX);
}
static int lower_globallppool(imp_node *n) {
  return lower_global(n, GLOBAL_LP);
}

const imp_op_entry imp_ops_pool[] = {
    {"MaxPool", lower_maxpool, IMP_SYM},
    {"AveragePool", lower_averagepool, IMP_SYM},
    {"GlobalAveragePool", lower_globalaveragepool, IMP_SYM},
    {"GlobalMaxPool", lower_globalmaxpool, IMP_SYM},
    {"LpPool", lower_lppool, IMP_SYM},
    {"GlobalLpPool", lower_globallppool, IMP_SYM},
    {NULL, NULL, 0},
};
