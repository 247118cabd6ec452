/* op_logic.c — comparisons, boolean logic and Where, with numpy
 * broadcasting. Comparisons produce bool; And/Or/Xor/Not take bool. */
#include "importer_impl.h"

/* Both operands must have one dtype (ONNX guarantees it; say so if not). */
static bool same_dtype(imp_node *n, ir_ref a, ir_ref b) {
  if (a == IR_NONE || b == IR_NONE) return false;
  if (imp_dtype(n, a) != imp_dtype(n, b))
    return imp_fail(n, "operands have different types (%s, %s)", ir_dtype_name(imp_dtype(n, a)),
                    ir_dtype_name(imp_dtype(n, b))),
           false;
  return true;
}

static bool need_bool(imp_node *n, ir_ref a) {
  if (a == IR_NONE) return false;
  if (imp_dtype(n, a) != IR_BOOL)
    return imp_fail(n, "input type %s is not supported (bool only)", ir_dtype_name(imp_dtype(n, a))), false;
  return true;
}

/* a <= b that is false when either side is NaN: (a < b) or (a == b), where
 * a == b is not(a != b) and NaN != NaN is true. For integers the plain
 * not(b < a) is exact and cheaper. */
static ir_ref le(ir_graph *g, ir_ref a, ir_ref b) {
  if (!ir_dtype_is_float(ir_node_get(g, a)->dtype)) return ir_le(g, a, b);
  return ir_binary(g, IR_OR, ir_binary(g, IR_LT, a, b), ir_eq(g, a, b));
}

static ir_ref lt(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_LT, a, b);
}
static ir_ref gt(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_gt(g, a, b);
}
static ir_ref ge(ir_graph *g, ir_ref a, ir_ref b) {
  return le(g, b, a);
}

static int compare(imp_node *n, ir_ref (*f)(ir_graph *, ir_ref, ir_ref)) {
  ir_ref a = imp_req(n, 0), b = imp_req(n, 1);
  if (!same_dtype(n, a, b)) return -1;
  return imp_set_out(n, 0, f(n->g, a, b));
}

static int lower_equal(imp_node *n) {
  return compare(n, ir_eq);
}
static int lower_less(imp_node *n) {
  return compare(n, lt);
}
static int lower_greater(imp_node *n) {
  return compare(n, gt);
}
static int lower_less_equal(imp_node *n) {
  return compare(n, le);
}
static int lower_greater_equal(imp_node *n) {
  return compare(n, ge);
}

static int logic(imp_node *n, ir_op op) {
  ir_ref a = imp_req(n, 0), b = imp_req(n, 1);
  if (!need_bool(n, a) || !need_bool(n, b)) return -1;
  return imp_set_out(n, 0, ir_binary(n->g, op, a, b));
}

static int lower_and(imp_node *n) {
  return logic(n, IR_AND);
}
static int lower_or(imp_node *n) {
  return logic(n, IR_OR);
}
static int lower_xor(imp_node *n) {
  return logic(n, IR_XOR);
}

static int lower_not(imp_node *n) {
  ir_ref a = imp_req(n, 0);
  if (!need_bool(n, a)) return -1;
  return imp_set_out(n, 0, ir_unary(n->g, IR_NOT, a));
}

static int lower_where(imp_node *n) {
  ir_ref c = imp_req(n, 0), x = imp_req(n, 1), y = imp_req(n, 2);
  if (!need_bool(n, c) || !same_dtype(n, x, y)) return -1;
  return imp_set_out(n, 0, ir_where(n->g, c, x, y));
}

const imp_op_entry imp_ops_logic[] = {
    {"Equal", lower_equal, IMP_SYM},
    {"Less", lower_less, IMP_SYM},
    {"Greater", lower_greater, IMP_SYM},
    {"LessOrEqual", lower_less_equal, IMP_SYM},
    {"GreaterOrEqual", lower_greater_equal, IMP_SYM},
    {"Not", lower_not, IMP_SYM},
    {"And", lower_and, IMP_SYM},
    {"Or", lower_or, IMP_SYM},
    {"Xor", lower_xor, IMP_SYM},
    {"Where", lower_where, IMP_SYM},
    {NULL, NULL, 0},
};
