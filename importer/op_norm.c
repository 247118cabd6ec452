/* op_norm.c — lowering of the normalisation op family: LayerNormalization,
 * BatchNormalization (inference and training mode), InstanceNormalization,
 * MeanVarianceNormalization and LpNormalization. Statistics are built from
 * primitives: mean via ir_mean, variance as the mean of squared deviations,
 * and 1/sqrt as RECIP(SQRT(.)). */
#include "importer_impl.h"

/* A required input: records an error when it is absent. */
static bool need_float(imp_node *n, ir_ref x) {
  if (x == IR_NONE) return false;
  if (!ir_dtype_is_float(imp_dtype(n, x)))
    return imp_fail(n, "input type %s is not supported (floating point only)", ir_dtype_name(imp_dtype(n, x))), false;
  return true;
}

static ir_ref konst(imp_node *n, ir_ref like, double v) {
  return ir_scalar(n->g, imp_dtype(n, like), v);
}

static ir_ref mul(imp_node *n, ir_ref a, ir_ref b) {
  return ir_binary(n->g, IR_MUL, a, b);
}

static ir_ref add(imp_node *n, ir_ref a, ir_ref b) {
  return ir_binary(n->g, IR_ADD, a, b);
}

/* Axes [from, rank) as a bitmask. */
static uint32_t axes_from(int from, int rank) {
  uint32_t m = 0;
  for (int i = from; i < rank; i++) m |= 1u << i;
  return m;
}

/* x - mean(x) over `axes` (kept), and the variance as the mean of its
 * squares; returns the centred tensor, stores mean and variance. */
static ir_ref centre(imp_node *n, ir_ref x, uint32_t axes, ir_ref *mean, ir_ref *var) {
  *mean = ir_mean(n->g, x, axes, true);
  ir_ref d = ir_sub(n->g, x, *mean);
  *var = ir_mean(n->g, mul(n, d, d), axes, true);
  return d;
}

/* 1 / sqrt(var + eps) */
static ir_ref inv_std(imp_node *n, ir_ref var, double eps) {
  return ir_unary(n->g, IR_RECIP, ir_unary(n->g, IR_SQRT, add(n, var, konst(n, var, eps))));
}

/* A per-channel parameter [C] of an (N, C, D1, ...) tensor of rank `rank`
 * reshaped to [C, 1, ..., 1] so that it broadcasts along axis 1. Params of
 * higher rank (BatchNormalization spatial=0: [C, D1, ...]) keep their
 * shape, aligned on the trailing axes. */
static ir_ref per_channel(imp_node *n, ir_ref p, int rank) {
  if (p == IR_NONE) return IR_NONE;
  const ir_shape *s = imp_shape(n, p);
  if (s->rank != 1) return p;
  int64_t d[IR_MAX_RANK];
  d[0] = s->d[0];
  for (int i = 1; i < rank - 1; i++) d[i] = 1;
  return ir_view_reshape(n->g, p, ir_shape_make(rank - 1, d));
}

/* Y = (X - mean) / sqrt(var + eps) * Scale + B over axes [axis, rank);
 * the optional outputs Mean and InvStdDev keep the reduced axes as 1.
 * stash_type=1 computes the statistics in float32, or in float64 for a
 * float64 input: ONNX's function body would cast it to float32 and lose
 * 1e-7 of its scale; onnxruntime, ONNX's reference implementation and
 * PyTorch normalise float64 in float64. Mean and InvStdDev are float32
 * (the schema's U) either way. */
static int lower_layer_norm(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), scale = imp_req(n, 1), bias = imp_in(n, 2);
  if (!need_float(n, x) || scale == IR_NONE) return -1;
  ir_dtype t = imp_dtype(n, x);
  int64_t stash = imp_attr_i(n, "stash_type", 1);
  if (stash != 1) return imp_fail(n, "stash_type=%lld is not supported (1 only)", (long long)stash);
  int rank = imp_shape(n, x)->rank;
  int axis = imp_axis(n, imp_attr_i(n, "axis", -1), rank);
  if (axis < 0) return -1;
  double eps = imp_attr_f(n, "epsilon", 1e-5);
  ir_ref xs = ir_cast(g, x, t == IR_F64 ? IR_F64 : IR_F32), mean, var;
  ir_ref d = centre(n, xs, axes_from(axis, rank), &mean, &var);
  ir_ref inv = inv_std(n, var, eps);
  ir_ref y = ir_cast(g, mul(n, d, inv), t);
  y = mul(n, y, scale);
  if (bias != IR_NONE) y = add(n, y, bias);
  if (imp_set_out(n, 0, y)) return -1;
  if (imp_has_out(n, 1) && imp_set_out(n, 1, ir_cast(g, mean, IR_F32))) return -1;
  return imp_has_out(n, 2) ? imp_set_out(n, 2, ir_cast(g, inv, IR_F32)) : 0;
}

/* training_mode=1 (opset 14+): Y from the batch's own statistics over
 * every axis but the channel (population variance), and the running
 * statistics updated: input * momentum + batch * (1 - momentum).
 * Deterministic, unlike Dropout's training mode. */
static int lower_batch_norm_training(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  const ir_shape *xs = imp_shape(n, x);
  int rank = xs->rank;
  if (rank < 2) return imp_fail(n, "input rank %d < 2", rank);
  ir_ref scale = per_channel(n, imp_req(n, 1), rank), bias = per_channel(n, imp_req(n, 2), rank);
  ir_ref in_mean = imp_req(n, 3), in_var = imp_req(n, 4);
  if (ir_failed(g)) return -1;
  double eps = imp_attr_f(n, "epsilon", 1e-5), momentum = imp_attr_f(n, "momentum", 0.9);
  ir_ref mean, var;
  ir_ref d = centre(n, x, axes_from(0, rank) & ~2u, &mean, &var);
  ir_ref y = add(n, mul(n, d, mul(n, inv_std(n, var, eps), scale)), bias);
  if (imp_set_out(n, 0, y)) return -1;
  ir_ref stat[2] = {mean, var}, in[2] = {in_mean, in_var};
  for (int i = 0; i < 2; i++) {
    if (!imp_has_out(n, 1 + i)) continue;
    /* the batch statistic [1, C, 1, ...] as the running one's shape [C] */
    ir_ref b = ir_view_reshape(g, stat[i], *imp_shape(n, in[i]));
    ir_ref r = add(n, mul(n, in[i], konst(n, in[i], momentum)), mul(n, b, konst(n, b, 1 - momentum)));
    if (imp_set_out(n, 1 + i, r)) return -1;
  }
  return 0;
}

/* Inference-mode BatchNormalization over the channel axis 1, with the
 * running mean and variance given as inputs. */
static int lower_batch_norm(imp_node *n) {
  ir_graph *g = n->g;
  if (n->opset >= 14 && imp_attr_i(n, "training_mode", 0)) return lower_batch_norm_training(n);
  if (n->opset < 14)
    for (int i = 1; i < imp_nout(n); i++)
      if (imp_has_out(n, i)) return imp_fail(n, "training outputs (output %d) are not supported", i);
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  int rank = imp_shape(n, x)->rank;
  if (rank < 2) return imp_fail(n, "input rank %d < 2", rank);
  ir_ref scale = per_channel(n, imp_req(n, 1), rank), bias = per_channel(n, imp_req(n, 2), rank);
  ir_ref mean = per_channel(n, imp_req(n, 3), rank), var = per_channel(n, imp_req(n, 4), rank);
  if (ir_failed(g)) return -1;
  double eps = imp_attr_f(n, "epsilon", 1e-5);
  ir_ref y = mul(n, ir_sub(g, x, mean), mul(n, inv_std(n, var, eps), scale));
  return imp_set_out(n, 0, add(n, y, bias));
}

/* Per (N, C) statistics over the spatial axes 2.., then per-channel
 * scale and bias. */
static int lower_instance_norm(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  int rank = imp_shape(n, x)->rank;
  if (rank < 3) return imp_fail(n, "input rank %d < 3", rank);
  ir_ref scale = per_channel(n, imp_req(n, 1), rank), bias = per_channel(n, imp_req(n, 2), rank);
  double eps = imp_attr_f(n, "epsilon", 1e-5);
  ir_ref mean, var;
  ir_ref d = centre(n, x, axes_from(2, rank), &mean, &var);
  ir_ref y = mul(n, d, mul(n, inv_std(n, var, eps), scale));
  return imp_set_out(n, 0, add(n, y, bias));
}

/* (X - mean) / (sqrt(var) + 1e-9) over `axes` (default [0, 2, 3]), the
 * epsilon placement of the ONNX function body. */
static int lower_mvn(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  int rank = imp_shape(n, x)->rank;
  int64_t axes[IR_MAX_RANK] = {0, 2, 3};
  int na = imp_attr_ints(n, "axes", axes, IR_MAX_RANK);
  if (na < 0) na = 3;
  if (na > IR_MAX_RANK) return imp_fail(n, "too many axes");
  uint32_t mask = 0;
  for (int i = 0; i < na; i++) {
    int a = imp_axis(n, axes[i], rank);
    if (a < 0) return -1;
    mask |= 1u << a;
  }
  ir_ref mean, var;
  ir_ref d = centre(n, x, mask, &mean, &var);
  ir_ref sd = add(n, ir_unary(g, IR_SQRT, var), konst(n, x, 1e-9));
  return imp_set_out(n, 0, mul(n, d, ir_unary(g, IR_RECIP, sd)));
}

/* X / ||X||_p along `axis`, p in {1, 2}; 0 where the norm is 0. */
static int lower_lp_norm(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (!need_float(n, x)) return -1;
  int rank = imp_shape(n, x)->rank;
  int axis = imp_axis(n, imp_attr_i(n, "axis", -1), rank);
  if (axis < 0) return -1;
  int64_t p = imp_attr_i(n, "p", 2);
  ir_ref norm;
  if (p == 1) norm = ir_sum(g, ir_abs(g, x), 1u << axis, true);
  else if (p == 2) norm = ir_unary(g, IR_SQRT, ir_sum(g, mul(n, x, x), 1u << axis, true));
  else return imp_fail(n, "p=%lld is not supported (1 or 2 only)", (long long)p);
  /* a vector of zeros stays zeros (0 / 0 would be NaN), as in onnxruntime;
   * a NaN still gives NaN */
  ir_ref zero = ir_scalar(g, imp_dtype(n, x), 0.0);
  return imp_set_out(n, 0, ir_where(g, ir_eq(g, norm, zero), zero, mul(n, x, ir_unary(g, IR_RECIP, norm))));
}

const imp_op_entry imp_ops_norm[] = {
    {"LayerNormalization", lower_layer_norm, IMP_SYM},
    {"BatchNormalization", lower_batch_norm, IMP_SYM},
    {"InstanceNormalization", lower_instance_norm, IMP_SYM},
    {"MeanVarianceNormalization", lower_mvn, IMP_SYM},
    {"LpNormalization", lower_lp_norm, IMP_SYM},
    {NULL, NULL, 0},
};
