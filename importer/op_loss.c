/* op_loss.c — lowering of the loss op family.
 *
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss both pick, for each
 * element (n, d1..dk), the class-axis entry named by the target. The pick is
 * the one-hot reduction used by Gather: over the input's own iteration space
 * [N, C, d1..dk], EQ(iota over C, target[n, 1, d..]) selects one class and
 * a SUM over C gathers it. The class weight is picked the same way. */
#include "importer_impl.h"

#include <string.h>

typedef enum { RED_NONE, RED_SUM, RED_MEAN } reduction;

/* The reduction attribute (default "mean"); -1 with an error when unknown. */
static int get_reduction(imp_node *n) {
  const char *s = imp_attr_s(n, "reduction", "mean");
  if (!strcmp(s, "none")) return RED_NONE;
  if (!strcmp(s, "sum")) return RED_SUM;
  if (!strcmp(s, "mean")) return RED_MEAN;
  return imp_fail(n, "attribute reduction=%s is not supported", s);
}

/* Checks input x [N, C, d..] (float32/float64) against target [N, d..]
 * (int32/int64); returns false with an error otherwise. */
static bool check_shapes(imp_node *n, ir_ref x, ir_ref t) {
  ir_dtype xt = imp_dtype(n, x), tt = imp_dtype(n, t);
  if (xt != IR_F32 && xt != IR_F64)
    return imp_fail(n, "input type %s is not supported (float32/float64 only)", ir_dtype_name(xt)), false;
  if (tt != IR_I32 && tt != IR_I64)
    return imp_fail(n, "target type %s is not supported (int32/int64 only)", ir_dtype_name(tt)), false;
  const ir_shape *xs = imp_shape(n, x), *ts = imp_shape(n, t);
  if (xs->rank < 2) return imp_fail(n, "input must have rank >= 2 ([N, C, ...])"), false;
  if (ts->rank != xs->rank - 1) return imp_fail(n, "target rank must be input rank - 1"), false;
  for (int i = 0; i < ts->rank; i++)
    if (ts->d[i] != xs->d[i == 0 ? 0 : i + 1])
      return imp_fail(n, "target shape does not match input on axis %d", i), false;
  return true;
}

/* One-hot of the target over the class axis of `xs`: bool [N, C, d..]. */
static ir_ref class_hit(ir_graph *g, ir_ref t64, const ir_shape *xs) {
  return ir_eq(g, ir_iota(g, *xs, 1), ir_view_unsqueeze(g, t64, 1));
}

/* SUM over C of WHERE(hit, v, 0), keeping the class axis as size 1. */
static ir_ref pick(ir_graph *g, ir_ref hit, ir_ref v, ir_dtype t) {
  return ir_sum(g, ir_where(g, hit, v, ir_scalar(g, t, 0)), 1u << 1, true);
}

/* Weight of each element [N, 1, d..]: weight[target] (or 1) times the
 * ignore_index mask. Targets out of [0, C) select no class and weigh 0. */
static ir_ref elem_weight(imp_node *n, ir_ref hit, ir_ref t64, ir_ref w, ir_dtype t, int rank) {
  ir_graph *g = n->g;
  ir_ref wt;
  if (w != IR_NONE) {
    ir_shape ws = {.rank = rank};
    for (int i = 0; i < rank; i++) ws.d[i] = 1;
    ws.d[1] = imp_shape(n, w)->d[0];
    wt = pick(g, hit, ir_view_reshape(g, ir_cast(g, w, t), ws), t);
  } else {
    wt = pick(g, hit, ir_scalar(g, t, 1), t);
  }
  if (!imp_has_attr(n, "ignore_index")) return wt;
  int64_t ii = imp_attr_i(n, "ignore_index", 0);
  /* exact as an int64: a double would round ii (and past 2^63 not convert) */
  ir_ref keep = ir_binary(g, IR_NEQ, ir_view_unsqueeze(g, t64, 1), ir_load_int(g, IR_I64, ir_shape_make(0, NULL), ii));
  return ir_where(g, keep, wt, ir_scalar(g, t, 0));
}

/* The NLL of log-probabilities x [N, C, d..] against target t [N, d..]
 * with optional class weights w [C], reduced as asked. */
static ir_ref nll(imp_node *n, ir_ref x, ir_ref t, ir_ref w, int red) {
  ir_graph *g = n->g;
  const ir_shape xs = *imp_shape(n, x);
  ir_dtype dt = imp_dtype(n, x);
  if (w != IR_NONE) {
    const ir_shape *ws = imp_shape(n, w);
    if (ws->rank != 1 || ws->d[0] != xs.d[1])
      return imp_fail(n, "weight must have shape [C]"), IR_NONE;
    if (imp_dtype(n, w) != dt) return imp_fail(n, "weight dtype differs from input"), IR_NONE;
  }
  ir_ref t64 = ir_cast(g, t, IR_I64);
  ir_ref hit = class_hit(g, t64, &xs);
  ir_ref wt = elem_weight(n, hit, t64, w, dt, xs.rank);
  ir_ref loss = ir_unary(g, IR_NEG, ir_binary(g, IR_MUL, pick(g, hit, x, dt), wt));
  if (red == RED_NONE) return ir_squeeze_axes(g, loss, 1u << 1);
  uint32_t all = xs.rank >= 32 ? ~0u : (1u << xs.rank) - 1;
  ir_ref total = ir_sum(g, loss, all, false);
  if (red == RED_SUM) return total;
  return ir_div(g, total, ir_sum(g, wt, all, false));
}

static int lower_nll(imp_node *n) {
  ir_ref x = imp_req(n, 0), t = imp_req(n, 1);
  if (x == IR_NONE || t == IR_NONE) return -1;
  ir_ref w = imp_in(n, 2);
  int red = get_reduction(n);
  if (red < 0 || !check_shapes(n, x, t)) return -1;
  return imp_set_out(n, 0, nll(n, x, t, w, red));
}

/* log_softmax over the class axis: x - max - log(sum(exp(x - max))). */
static ir_ref log_softmax(ir_graph *g, ir_ref x) {
  ir_ref s = ir_sub(g, x, ir_max_reduce(g, x, 1u << 1, true));
  return ir_sub(g, s, ir_log(g, ir_sum(g, ir_exp(g, s), 1u << 1, true)));
}

static int lower_sce(imp_node *n) {
  ir_ref x = imp_req(n, 0), t = imp_req(n, 1);
  if (x == IR_NONE || t == IR_NONE) return -1;
  ir_ref w = imp_in(n, 2);
  int red = get_reduction(n);
  if (red < 0 || !check_shapes(n, x, t)) return -1;
  ir_ref lp = log_softmax(n->g, x);
  if (imp_set_out(n, 0, nll(n, lp, t, w, red)) < 0) return -1;
  return imp_set_out(n, 1, lp);
}

const imp_op_entry imp_ops_loss[] = {
    {"NegativeLogLikelihoodLoss", lower_nll, 0},
    {"SoftmaxCrossEntropyLoss", lower_sce, 0},
    {NULL, NULL, 0},
};
