/* op_training.c — the optimizer updates of the ai.onnx.preview.training
 * domain (Adagrad, Momentum, Adam): deterministic element-wise formulas
 * over n tensors at once, following the ONNX spec's reference code
 * step by step. R (learning rate) and T (update count) are run-time
 * scalars: the T > 0 cases are selects. */
#include "importer_impl.h"

#include <string.h>

/* Inputs R, T, then `groups` runs of n tensors (X, G, and the states),
 * outputs `groups` - 1 runs (X and the states): n, or -1 with an error. */
static int tensor_count(imp_node *n, int groups) {
  int k = imp_nin(n) - 2;
  if (k < groups || k % groups || imp_nout(n) != (groups - 1) * (k / groups))
    return imp_fail(n, "%d inputs and %d outputs do not make this update", imp_nin(n), imp_nout(n));
  return k / groups;
}

typedef struct {
  imp_node *n;
  ir_graph *g;
  ir_dtype t;
  ir_ref r, tf, tpos; /* R, T as a float, T > 0 */
} train;

static ir_ref k_(train *s, double v) {
  return ir_scalar(s->g, s->t, v);
}
static ir_ref mul(train *s, ir_ref a, ir_ref b) {
  return ir_binary(s->g, IR_MUL, a, b);
}
static ir_ref add(train *s, ir_ref a, ir_ref b) {
  return ir_binary(s->g, IR_ADD, a, b);
}

/* R, T and the float type of X (input 2); -1 with an error. */
static int setup(imp_node *n, train *s) {
  *s = (train){.n = n, .g = n->g};
  ir_ref r = imp_req(n, 0), t = imp_req(n, 1), x = imp_req(n, 2);
  if (r == IR_NONE || t == IR_NONE || x == IR_NONE) return -1;
  s->t = imp_dtype(n, x);
  if (!ir_dtype_is_float(s->t) || ir_shape_numel(imp_shape(n, r)) != 1 || ir_shape_numel(imp_shape(n, t)) != 1)
    return imp_fail(n, "R and T must be scalars and X a float tensor");
  s->r = ir_cast(n->g, r, s->t);
  s->tf = ir_cast(n->g, t, s->t);
  s->tpos = ir_gt(n->g, ir_cast(n->g, t, IR_I64), ir_scalar(n->g, IR_I64, 0));
  return ir_failed(n->g) ? -1 : 0;
}

/* norm_coefficient * X + G */
static ir_ref regularized(train *s, ir_ref x, ir_ref gr, double norm) {
  return add(s, mul(s, k_(s, norm), x), gr);
}

static int lower_adagrad(imp_node *n) {
  train s;
  int cnt = tensor_count(n, 3);
  if (cnt < 0 || setup(n, &s)) return -1;
  double decay = imp_attr_f(n, "decay_factor", 0), eps = imp_attr_f(n, "epsilon", 1e-6),
         norm = imp_attr_f(n, "norm_coefficient", 0);
  ir_ref r = ir_div(n->g, s.r, add(&s, k_(&s, 1), mul(&s, s.tf, k_(&s, decay))));
  for (int i = 0; i < cnt; i++) {
    ir_ref x = imp_req(n, 2 + i), g = imp_req(n, 2 + cnt + i), h = imp_req(n, 2 + 2 * cnt + i);
    ir_ref gr = regularized(&s, x, g, norm);
    ir_ref hn = add(&s, h, mul(&s, gr, gr));
    ir_ref hs = add(&s, ir_unary(n->g, IR_SQRT, hn), k_(&s, eps));
    if (imp_set_out(n, i, ir_sub(n->g, x, ir_div(n->g, mul(&s, r, gr), hs))) || imp_set_out(n, cnt + i, hn))
      return -1;
  }
  return 0;
}

static int lower_momentum(imp_node *n) {
  train s;
  int cnt = tensor_count(n, 3);
  if (cnt < 0 || setup(n, &s)) return -1;
  double alpha = imp_attr_f(n, "alpha", 0), beta = imp_attr_f(n, "beta", 0), norm = imp_attr_f(n, "norm_coefficient", 0);
  const char *mode = imp_attr_s(n, "mode", "");
  bool nesterov = !strcmp(mode, "nesterov");
  if (!nesterov && strcmp(mode, "standard")) return imp_fail(n, "mode '%s' is not 'standard' or 'nesterov'", mode);
  ir_ref b = ir_where(n->g, s.tpos, k_(&s, beta), k_(&s, 1));
  for (int i = 0; i < cnt; i++) {
    ir_ref x = imp_req(n, 2 + i), g = imp_req(n, 2 + cnt + i), v = imp_req(n, 2 + 2 * cnt + i);
    ir_ref gr = regularized(&s, x, g, norm);
    ir_ref vn = add(&s, mul(&s, k_(&s, alpha), v), mul(&s, b, gr));
    ir_ref step = nesterov ? add(&s, gr, mul(&s, k_(&s, alpha), vn)) : vn;
    if (imp_set_out(n, i, ir_sub(n->g, x, mul(&s, s.r, step))) || imp_set_out(n, cnt + i, vn)) return -1;
  }
  return 0;
}

static int lower_adam(imp_node *n) {
  train s;
  int cnt = tensor_count(n, 4);
  if (cnt < 0 || setup(n, &s)) return -1;
  double alpha = imp_attr_f(n, "alpha", 0.9), beta = imp_attr_f(n, "beta", 0.999), eps = imp_attr_f(n, "epsilon", 1e-6),
         norm = imp_attr_f(n, "norm_coefficient", 0), post = imp_attr_f(n, "norm_coefficient_post", 0);
  /* bias correction R * sqrt(1 - beta^T) / (1 - alpha^T), when T > 0 */
  ir_ref one = k_(&s, 1);
  ir_ref corr = ir_div(n->g, mul(&s, s.r, ir_unary(n->g, IR_SQRT, ir_sub(n->g, one, ir_pow(n->g, k_(&s, beta), s.tf)))),
                       ir_sub(n->g, one, ir_pow(n->g, k_(&s, alpha), s.tf)));
  ir_ref r = ir_where(n->g, s.tpos, corr, s.r);
  for (int i = 0; i < cnt; i++) {
    ir_ref x = imp_req(n, 2 + i), g = imp_req(n, 2 + cnt + i), v = imp_req(n, 2 + 2 * cnt + i),
           h = imp_req(n, 2 + 3 * cnt + i);
    ir_ref gr = regularized(&s, x, g, norm);
    ir_ref vn = add(&s, mul(&s, k_(&s, alpha), v), mul(&s, k_(&s, 1 - alpha), gr));
    ir_ref hn = add(&s, mul(&s, k_(&s, beta), h), mul(&s, k_(&s, 1 - beta), mul(&s, gr, gr)));
    ir_ref hs = add(&s, ir_unary(n->g, IR_SQRT, hn), k_(&s, eps));
    ir_ref xn = ir_sub(n->g, x, mul(&s, r, ir_div(n->g, vn, hs)));
    if (imp_set_out(n, i, mul(&s, k_(&s, 1 - post), xn)) || imp_set_out(n, cnt + i, vn) ||
        imp_set_out(n, 2 * cnt + i, hn))
      return -1;
  }
  return 0;
}

/* IMP_TRAINING: these live in the ai.onnx.preview.training domain. */
const imp_op_entry imp_ops_training[] = {
    {"Adagrad", lower_adagrad, IMP_TRAINING},
    {"Momentum", lower_momentum, IMP_TRAINING},
    {"Adam", lower_adam, IMP_TRAINING},
    {NULL, NULL, 0},
};
