/* narrow.c — int32 values that hold symbolic dimensions, held as int64.
 *
 * paddle2onnx casts every Shape to int32 before it slices, concatenates and
 * casts it back for Reshape. A symbolic dimension is a tag in the int64
 * range (ir.h) that no int32 can hold, so such a value stays int64 in the
 * graph and its imp_value is marked `narrow` with its ONNX type: a Cast to
 * int32 of a value with symbols keeps it (the entry checks that each
 * polynomial fits int32, as onnxruntime's cast would not wrap), a Cast back
 * to int64 is the value itself, and the ops that compute shapes (below)
 * take it with their other int32 inputs widened; an output that still holds
 * symbols stays marked, one that no longer does is cast back to its ONNX
 * type. Any other op given such a value is refused, with the --dim hint. */
#include "load_impl.h"

#include <stdio.h>
#include <string.h>

int64_t imp_sym_in_data(const ir_node *x) {
  if (x->op != IR_ALLOCATE || x->origin != IR_ORIGIN_WEIGHT || x->dtype != IR_I64) return 0;
  for (int64_t i = 0; i < ir_shape_numel(&x->shape); i++)
    if (ir_dim_is_sym(((const int64_t *)x->data)[i])) return ((const int64_t *)x->data)[i];
  return 0;
}

/* The ops that take a narrow value, and which inputs give their outputs'
 * type (bit k: input k); the others (indices, axes, shapes) are read as
 * integers whatever their width. Cast is lowered by imp_narrow_cast. */
#define ALL (~0u)
static const struct {
  const char *op;
  unsigned data;
} narrow_ops[] = {
    {"Add", ALL},    {"Sub", ALL},       {"Mul", ALL},          {"Div", ALL},          {"Mod", ALL},
    {"Max", ALL},    {"Min", ALL},       {"Sum", ALL},          {"Neg", ALL},          {"Abs", ALL},
    {"Clip", ALL},   {"Concat", ALL},    {"Range", ALL},        {"Equal", ALL},        {"Less", ALL},
    {"Greater", ALL}, {"LessOrEqual", ALL}, {"GreaterOrEqual", ALL}, {"Where", 6u},   {"Slice", 1u},
    {"Gather", 1u},  {"Squeeze", 1u},    {"Unsqueeze", 1u},     {"Reshape", 1u},       {"Flatten", 1u},
    {"Identity", 1u}, {"Expand", 1u},    {"Tile", 1u},          {"Transpose", 1u},     {"Split", 1u},
    {"ReduceMax", 1u}, {"ReduceMin", 1u}, {"ReduceProd", 1u},   {"ReduceSum", 1u},     {"Shape", 0u},
    {"Size", 0u},    {"ConstantOfShape", 0u}, {"Cast", 0u},
};

static imp_value *in_value(imp_node *n, int i) {
  return imp_has_in(n, i) ? imp_ctx_lookup(n->ctx, n->proto->input[i]) : NULL;
}

int imp_narrow_begin(imp_node *n, ir_dtype *t) {
  *t = IR_I64;
  const char *op = n->proto->op_type ? n->proto->op_type : "";
  int k = -1;
  for (int i = 0; i < (int)(sizeof narrow_ops / sizeof narrow_ops[0]) && k < 0; i++)
    if (!strcmp(op, narrow_ops[i].op)) k = i;
  for (int i = 0; i < imp_nin(n); i++) {
    imp_value *v = in_value(n, i);
    if (!v || !v->narrow) continue;
    int64_t d = imp_sym_in_data(ir_node_get(n->g, v->ref));
    char what[320];
    snprintf(what, sizeof what, "input %d ('%s') holds symbolic values as %s", i, n->proto->input[i],
             ir_dtype_name((ir_dtype)v->narrow));
    if (k < 0) return imp_fail_sym(n, d, what);
    if (i < 32 && (narrow_ops[k].data >> i & 1)) {
      if (*t != IR_I64 && *t != (ir_dtype)v->narrow) return imp_fail_sym(n, d, what);
      *t = (ir_dtype)v->narrow;
    }
  }
  if (*t == IR_I64) return 0;
  for (int i = 0; i < imp_nin(n) && i < 32; i++) {
    imp_value *v = in_value(n, i);
    if (!v || v->narrow || v->narrowed || !(narrow_ops[k].data >> i & 1) || imp_is_seq(v->ref) ||
        ir_node_get(n->g, v->ref)->dtype != *t)
      continue;
    v->unwidened = v->ref, v->narrowed = true;
    v->ref = ir_cast(n->g, v->ref, IR_I64);
  }
  return 0;
}

void imp_narrow_restore(imp_node *n) {
  for (int i = 0; i < imp_nin(n); i++) {
    imp_value *v = in_value(n, i);
    if (v && v->narrowed) v->ref = v->unwidened, v->narrowed = false;
  }
}

/* Every symbolic value of weight x fits int32 (an assumption the entry
 * checks where the symbols' bounds do not prove it: N*N past N = 46340),
 * since onnxruntime's int32 arithmetic would wrap where ours does not. */
static int fits_i32(imp_node *n, const ir_node *x) {
  char why[300];
  const char *name = n->proto->name && n->proto->name[0] ? n->proto->name : n->proto->output[0];
  snprintf(why, sizeof why, "a dimension held as int32 fits it (node '%s')", name);
  for (int64_t i = 0; i < ir_shape_numel(&x->shape); i++) {
    int64_t d = ((const int64_t *)x->data)[i];
    if (ir_dim_is_sym(d) && (ir_assume_nonneg(n->g, ir_dim_sub(INT32_MAX, d), why) ||
                             ir_assume_nonneg(n->g, ir_dim_add(d, -(int64_t)INT32_MIN), why)))
      return -1;
  }
  return 0;
}

ir_ref imp_narrow_out(imp_node *n, imp_value *v, ir_dtype t) {
  const ir_node *x = ir_node_get(n->g, v->ref);
  if (t == IR_I64 || x->dtype != IR_I64) return v->ref;
  if (imp_sym_in_data(x)) {
    v->narrow = (uint8_t)t;
    return fits_i32(n, x) ? IR_NONE : v->ref;
  }
  return ir_cast(n->g, v->ref, t);
}

int imp_narrow_cast(imp_node *n, ir_ref x, ir_dtype t) {
  imp_value *v = in_value(n, 0);
  const ir_node *xn = ir_node_get(n->g, x);
  if (!v || (!v->narrow && (xn->dtype != IR_I64 || !imp_sym_in_data(xn)))) return 0;
  if (t != IR_I32 && t != IR_I64) return 0; /* the Cast fails on the symbol, as before */
  if ((t == IR_I32 && !v->narrow && fits_i32(n, xn)) || imp_set_out(n, 0, x)) return -1;
  if (t == IR_I32) imp_ctx_lookup(n->ctx, n->proto->output[0])->narrow = IR_I32;
  return 1;
}
