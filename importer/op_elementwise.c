/* op_elementwise.c — element-wise math with numpy broadcasting. */
#include "importer_impl.h"

#include <math.h>

static ir_ref in(imp_node *n, int i) {
  ir_ref r = imp_in(n, i);
  if (r == IR_NONE && !ir_failed(n->g)) imp_fail(n, "input %d is missing", i);
  return r;
}

static bool need_float(imp_node *n, ir_ref x) {
  if (x != IR_NONE && !ir_dtype_is_float(imp_dtype(n, x)))
    return imp_fail(n, "input type %s is not supported (floating point only)", ir_dtype_name(imp_dtype(n, x))), false;
  return x != IR_NONE;
}

static ir_ref scalar_like(imp_node *n, ir_ref x, double v) {
  return ir_scalar(n->g, imp_dtype(n, x), v);
}

static int binary(imp_node *n, ir_ref (*f)(ir_graph *, ir_ref, ir_ref)) {
  return imp_set_out(n, 0, f(n->g, in(n, 0), in(n, 1)));
}

static ir_ref add(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_ADD, a, b);
}
static ir_ref mul(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_MUL, a, b);
}

static int lower_add(imp_node *n) {
  return binary(n, add);
}
static int lower_sub(imp_node *n) {
  return binary(n, ir_sub);
}
static int lower_mul(imp_node *n) {
  return binary(n, mul);
}
static int lower_div(imp_node *n) {
  return binary(n, ir_div);
}

static int lower_neg(imp_node *n) {
  return imp_set_out(n, 0, ir_unary(n->g, IR_NEG, in(n, 0)));
}

static int lower_abs(imp_node *n) {
  return imp_set_out(n, 0, ir_abs(n->g, in(n, 0)));
}

static int lower_relu(imp_node *n) {
  ir_ref x = in(n, 0);
  if (x == IR_NONE) return -1;
  return imp_set_out(n, 0, ir_binary(n->g, IR_MAX, x, scalar_like(n, x, 0)));
}

#define FLOAT_UNARY(fname, expr)                                                                   \
  static int fname(imp_node *n) {                                                                  \
    ir_ref x = in(n, 0);                                                                           \
    if (!need_float(n, x)) return -1;                                                              \
    ir_graph *g = n->g;                                                                            \
    (void)g;                                                                                       \
    return imp_set_out(n, 0, expr);                                                                \
  }

FLOAT_UNARY(lower_sqrt, ir_unary(g, IR_SQRT, x))
FLOAT_UNARY(lower_exp, ir_exp(g, x))
FLOAT_UNARY(lower_log, ir_log(g, x))
FLOAT_UNARY(lower_sigmoid, ir_sigmoid(g, x))
FLOAT_UNARY(lower_tanh, ir_tanh(g, x))
FLOAT_UNARY(lower_reciprocal, ir_unary(g, IR_RECIP, x))

const imp_op_entry imp_ops_elementwise[] = {
    {"Add", lower_add},         {"Sub", lower_sub},   {"Mul", lower_mul},
    {"Div", lower_div},         {"Neg", lower_neg},   {"Abs", lower_abs},
    {"Relu", lower_relu},       {"Sqrt", lower_sqrt}, {"Exp", lower_exp},
    {"Log", lower_log},         {"Sigmoid", lower_sigmoid}, {"Tanh", lower_tanh},
    {"Reciprocal", lower_reciprocal}, {NULL, NULL},
};
