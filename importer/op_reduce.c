/* op_reduce.c — lowering of the reduce op family: Reduce*, Softmax,
 * LogSoftmax, Hardmax, ArgMax/ArgMin and CumSum, all onto ADD/MUL/MAX
 * reductions plus element-wise primitives. */
#include "importer_impl.h"

typedef enum {
  R_SUM,
  R_MEAN,
  R_MAX,
  R_MIN,
  R_PROD,
  R_SUMSQ,
  R_L1,
  R_L2,
  R_LOGSUM,
  R_LOGSUMEXP
} reduce_kind;

static ir_ref konst(imp_node *n, ir_ref like, double v) {
  return ir_scalar(n->g, imp_dtype(n, like), v);
}

static bool need_float(imp_node *n, ir_ref x) {
  if (x != IR_NONE && !ir_dtype_is_float(imp_dtype(n, x)))
    return imp_fail(n, "input type %s is not supported (floating point only)",
                    ir_dtype_name(imp_dtype(n, x))),
           false;
  return x != IR_NONE;
}

static bool need_numeric(imp_node *n, ir_ref x) {
  if (x != IR_NONE && imp_dtype(n, x) == IR_BOOL)
    return imp_fail(n, "input type bool is not supported"), false;
  return x != IR_NONE;
}

static uint32_t all_axes(int rank) {
  return rank >= 32 ? 0xffffffffu : (1u << rank) - 1u;
}

/* Reads the reduced axes of a Reduce* node as a bitmask. They come from the
 * `axes` attribute, or from the optional input 1 since opset 13 (ReduceSum)
 * / 18 (the others). An empty list reduces everything, or nothing (*noop)
 * when noop_with_empty_axes is set. Returns -1 on error. */
static int reduce_axes(imp_node *n, int rank, bool axes_input, uint32_t *mask, bool *noop) {
  int64_t v[IR_MAX_RANK];
  int cnt = -1;
  *mask = 0;
  *noop = false;
  if (axes_input) {
    if (imp_has_in(n, 1)) {
      ir_ref a = imp_req(n, 1);
      if (a == IR_NONE) return -1;
      if (ir_shape_numel(imp_shape(n, a)) == 0)
        cnt = 0;
      else if ((cnt = imp_const_ints(n, 1, v, IR_MAX_RANK)) < 0) /* they decide the output shape */
        return -1;
    }
  } else {
    cnt = imp_attr_ints(n, "axes", v, IR_MAX_RANK);
  }
  if (cnt <= 0) {
    if (imp_attr_i(n, "noop_with_empty_axes", 0))
      *noop = true;
    else
      *mask = all_axes(rank);
    return 0;
  }
  for (int k = 0; k < cnt; k++) {
    int a = imp_axis(n, v[k], rank);
    if (a < 0) return -1;
    *mask |= 1u << a;
  }
  return 0;
}

/* log(sum(exp(x))) over `mask`, shifted by the maximum for stability. The
 * shift falls back to 0 where the maximum is not finite (all -inf rows). */
static ir_ref log_sum_exp(imp_node *n, ir_ref x, uint32_t mask) {
  ir_graph *g = n->g;
  ir_ref m = ir_max_reduce(g, x, mask, true);
  ir_ref inf_or_nan = ir_binary(g, IR_NEQ, ir_sub(g, m, m), konst(n, x, 0));
  ir_ref shift = ir_where(g, inf_or_nan, konst(n, x, 0), m);
  ir_ref s = ir_sum(g, ir_exp(g, ir_sub(g, x, shift)), mask, true);
  return ir_binary(g, IR_ADD, ir_log(g, s), shift);
}

/* The element-wise part applied before the reduction. */
static ir_ref reduce_pre(imp_node *n, reduce_kind k, ir_ref x) {
  switch (k) {
  case R_SUMSQ:
  case R_L2: return ir_binary(n->g, IR_MUL, x, x);
  case R_L1: return ir_abs(n->g, x);
  default: return x;
  }
}

/* The element-wise part applied after the reduction. */
static ir_ref reduce_post(imp_node *n, reduce_kind k, ir_ref x) {
  switch (k) {
  case R_L2: return ir_unary(n->g, IR_SQRT, x);
  case R_LOGSUM: return ir_log(n->g, x);
  default: return x;
  }
}

static ir_ref reduce_core(imp_node *n, reduce_kind k, ir_ref x, uint32_t mask) {
  ir_graph *g = n->g;
  switch (k) {
  case R_MEAN: return ir_mean(g, x, mask, true);
  case R_MAX: return ir_max_reduce(g, x, mask, true);
  case R_MIN: return ir_min_reduce(g, x, mask, true);
  case R_PROD: return ir_prod(g, x, mask, true);
  case R_LOGSUMEXP: return log_sum_exp(n, x, mask);
  default: return ir_sum(g, x, mask, true);
  }
}

static int lower_reduce(imp_node *n, reduce_kind k) {
  ir_ref x = imp_req(n, 0);
  if (!need_numeric(n, x)) return -1;
  if ((k == R_L2 || k == R_LOGSUM || k == R_LOGSUMEXP) && !need_float(n, x)) return -1;
  int rank = imp_shape(n, x)->rank;
  bool axes_input = n->opset >= (k == R_SUM ? 13 : 18);
  uint32_t mask;
  bool noop;
  if (reduce_axes(n, rank, axes_input, &mask, &noop)) return -1;
  bool keep = imp_attr_i(n, "keepdims", 1) != 0;
  if (noop || mask == 0) {
    /* a reduction over no axis: only the element-wise parts remain */
    if (k == R_LOGSUMEXP) return imp_set_out(n, 0, ir_move(n->g, x));
    return imp_set_out(n, 0, ir_move(n->g, reduce_post(n, k, reduce_pre(n, k, x))));
  }
  ir_ref r = reduce_post(n, k, reduce_core(n, k, reduce_pre(n, k, x), mask));
  if (!keep) r = ir_squeeze_axes(n->g, r, mask);
  return imp_set_out(n, 0, r);
}

#define REDUCE(fname, kind)                                                                        \
  static int fname(imp_node *n) {                                                                  \
    return lower_reduce(n, kind);                                                                  \
  }
REDUCE(lower_reduce_sum, R_SUM)
REDUCE(lower_reduce_mean, R_MEAN)
REDUCE(lower_reduce_max, R_MAX)
REDUCE(lower_reduce_min, R_MIN)
REDUCE(lower_reduce_prod, R_PROD)
REDUCE(lower_reduce_sum_square, R_SUMSQ)
REDUCE(lower_reduce_l1, R_L1)
REDUCE(lower_reduce_l2, R_L2)
REDUCE(lower_reduce_log_sum, R_LOGSUM)
REDUCE(lower_reduce_log_sum_exp, R_LOGSUMEXP)

/* Index (int64, `axis` kept with size 1) of the first or last maximum or
 * minimum of x along `axis`: positions equal to the extreme value keep their
 * iota index, the others a sentinel that loses the final min/max. A NaN
 * extreme selects the NaN positions, as numpy does. */
static ir_ref arg_extreme(imp_node *n, ir_ref x, int axis, bool is_max, bool last) {
  ir_graph *g = n->g;
  uint32_t ax = 1u << axis;
  ir_shape s = *imp_shape(n, x);
  ir_ref m = is_max ? ir_max_reduce(g, x, ax, true) : ir_min_reduce(g, x, ax, true);
  ir_ref hit = ir_eq(g, x, m);
  if (ir_dtype_is_float(imp_dtype(n, x))) {
    ir_ref nan_m = ir_binary(g, IR_NEQ, m, m), nan_x = ir_binary(g, IR_NEQ, x, x);
    hit = ir_binary(g, IR_OR, hit, ir_binary(g, IR_AND, nan_m, nan_x));
  }
  ir_ref idx = ir_iota(g, s, axis);
  if (last)
    return ir_max_reduce(
        g, ir_where(g, hit, idx, ir_load_int(g, IR_I64, ir_shape_make(0, NULL), -1)), ax, true);
  ir_ref none = ir_load_int(g, IR_I64, ir_shape_make(0, NULL), s.d[axis]);
  return ir_min_reduce(g, ir_where(g, hit, idx, none), ax, true);
}

static int lower_arg(imp_node *n, bool is_max) {
  ir_ref x = imp_req(n, 0);
  if (!need_numeric(n, x)) return -1;
  int rank = imp_shape(n, x)->rank;
  if (rank == 0) return imp_fail(n, "a rank-0 input is not supported");
  int axis = imp_axis(n, imp_attr_i(n, "axis", 0), rank);
  if (axis < 0) return -1;
  bool keep = imp_attr_i(n, "keepdims", 1) != 0;
  bool last = imp_attr_i(n, "select_last_index", 0) != 0;
  ir_ref r = arg_extreme(n, x, axis, is_max, last);
  if (!keep) r = ir_squeeze_axes(n->g, r, 1u << axis);
  return imp_set_out(n, 0, r);
}

static int lower_argmax(imp_node *n) {
  return lower_arg(n, true);
}
static int lower_argmin(imp_node *n) {
  return lower_arg(n, false);
}

typedef enum { SM_SOFT, SM_LOG, SM_HARD } softmax_kind;

/* One of the softmax family along a single axis. */
static ir_ref softmax_along(imp_node *n, softmax_kind k, ir_ref x, int axis) {
  ir_graph *g = n->g;
  uint32_t ax = 1u << axis;
  if (k == SM_SOFT) return ir_softmax(g, x, axis);
  if (k == SM_LOG) {
    ir_ref d = ir_sub(g, x, ir_max_reduce(g, x, ax, true));
    return ir_sub(g, d, ir_log(g, ir_sum(g, ir_exp(g, d), ax, true)));
  }
  ir_ref first = arg_extreme(n, x, axis, true, false);
  ir_ref hot = ir_eq(g, ir_iota(g, *imp_shape(n, x), axis), first);
  return ir_cast(g, hot, imp_dtype(n, x));
}

/* Softmax/LogSoftmax/Hardmax. Before opset 13 the input is coerced to 2-D
 * [prod(d[:axis]), prod(d[axis:])] and normalised over the second axis;
 * from 13 on, over `axis` alone. */
static int lower_softmax_family(imp_node *n, softmax_kind k) {
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  ir_shape s = *imp_shape(n, x);
  if (s.rank == 0) return imp_fail(n, "a rank-0 input is not supported");
  bool old = n->opset < 13;
  int axis = imp_axis(n, imp_attr_i(n, "axis", old ? 1 : -1), s.rank);
  if (axis < 0) return -1;
  if (!old) return imp_set_out(n, 0, softmax_along(n, k, x, axis));
  int64_t d[2] = {1, 1};
  for (int i = 0; i < s.rank; i++) d[i >= axis] = ir_dim_mul(d[i >= axis], s.d[i]);
  ir_ref flat = ir_view_reshape(n->g, x, ir_shape_make(2, d));
  return imp_set_out(n, 0, ir_view_reshape(n->g, softmax_along(n, k, flat, 1), s));
}

static int lower_softmax(imp_node *n) {
  return lower_softmax_family(n, SM_SOFT);
}
static int lower_log_softmax(imp_node *n) {
  return lower_softmax_family(n, SM_LOG);
}
static int lower_hardmax(imp_node *n) {
  return lower_softmax_family(n, SM_HARD);
}

/* Cumulative sum along `axis` as a masked sum: x viewed as [.., 1, n_j, ..]
 * against an [n_i, n_j] iota comparison, summed over j. */
static ir_ref cumsum_along(imp_node *n, ir_ref x, int axis, bool exclusive, bool reverse) {
  ir_graph *g = n->g;
  ir_shape s = *imp_shape(n, x), ms = {0};
  ms.rank = s.rank + 1;
  for (int i = 0; i < ms.rank; i++) ms.d[i] = 1;
  ms.d[axis] = ms.d[axis + 1] = s.d[axis];
  ir_ref i = ir_iota(g, ms, axis), j = ir_iota(g, ms, axis + 1);
  ir_ref keep;
  if (reverse)
    keep = exclusive ? ir_binary(g, IR_LT, i, j) : ir_le(g, i, j);
  else
    keep = exclusive ? ir_binary(g, IR_LT, j, i) : ir_le(g, j, i);
  ir_ref xj = ir_view_unsqueeze(g, x, axis);
  return ir_sum(g, ir_where(g, keep, xj, konst(n, x, 0)), 1u << (axis + 1), false);
}

/* CumSum. A constant axis gives one masked sum; an axis that is only known
 * at run time computes every axis and selects the matching one. */
static int lower_cumsum(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), a = imp_req(n, 1);
  if (!need_numeric(n, x) || a == IR_NONE || imp_need_static(n, 1)) return -1;
  int rank = imp_shape(n, x)->rank;
  if (rank == 0) return imp_fail(n, "a rank-0 input is not supported");
  if (ir_shape_numel(imp_shape(n, a)) != 1) return imp_fail(n, "axis must hold one value");
  bool excl = imp_attr_i(n, "exclusive", 0) != 0, rev = imp_attr_i(n, "reverse", 0) != 0;
  if (ir_is_const(g, a)) {
    int64_t v;
    if (imp_const_ints(n, 1, &v, 1) != 1) return -1;
    int axis = imp_axis(n, v, rank);
    if (axis < 0) return -1;
    return imp_set_out(n, 0, cumsum_along(n, x, axis, excl, rev));
  }
  ir_ref r = cumsum_along(n, x, rank - 1, excl, rev);
  for (int k = rank - 2; k >= 0; k--) {
    ir_ref sel =
        ir_binary(g, IR_OR, ir_eq(g, a, konst(n, a, k)), ir_eq(g, a, konst(n, a, k - rank)));
    r = ir_where(g, ir_view_reshape(g, sel, ir_shape_make(0, NULL)),
                 cumsum_along(n, x, k, excl, rev), r);
  }
  return imp_set_out(n, 0, r);
}

const imp_op_entry imp_ops_reduce[] = {
    {"ReduceSum", lower_reduce_sum, IMP_SYM},
    {"ReduceMean", lower_reduce_mean, IMP_SYM},
    {"ReduceMax", lower_reduce_max, IMP_SYM},
    {"ReduceMin", lower_reduce_min, IMP_SYM},
    {"ReduceProd", lower_reduce_prod, IMP_SYM},
    {"ReduceSumSquare", lower_reduce_sum_square, IMP_SYM},
    {"ReduceL1", lower_reduce_l1, IMP_SYM},
    {"ReduceL2", lower_reduce_l2, IMP_SYM},
    {"ReduceLogSum", lower_reduce_log_sum, IMP_SYM},
    {"ReduceLogSumExp", lower_reduce_log_sum_exp, IMP_SYM},
    {"Softmax", lower_softmax, IMP_SYM},
    {"LogSoftmax", lower_log_softmax, IMP_SYM},
    {"Hardmax", lower_hardmax, IMP_SYM},
    {"ArgMax", lower_argmax, IMP_SYM},
    {"ArgMin", lower_argmin, IMP_SYM},
    {"CumSum", lower_cumsum, IMP_SYM},
    {NULL, NULL, 0},
};
