/* half.c — ONNX float16 and bfloat16 values, held as float32. */
#include "load_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- 16-bit floats ----
 * ONNX float16 and bfloat16 values are held as float32 in the graph, each
 * marked with its ONNX type, and computed in float32: graph inputs are
 * converted on load, graph outputs rounded on store, and a Cast (CastLike)
 * to a 16-bit type rounds there and back. Between other ops nothing is
 * rounded, as onnxruntime does on the CPU for ops without float16 kernels
 * (docs/DESIGN.md, "16-bit floats"). */

/* Converts a decoded float16/bfloat16 tensor to float32 in place; returns
 * its 16-bit type, or IR_F32 when it was not one. */
ir_dtype imp_widen_half(imp_tensor *x) {
  ir_dtype h = x->dtype;
  if (h != IR_F16 && h != IR_BF16) return IR_F32;
  int64_t N = (int64_t)ir_shape_numel(&x->shape);
  float *f = malloc(N ? (size_t)N * sizeof *f : 1);
  if (!f) abort();
  for (int64_t i = 0; i < N; i++) f[i] = (float)ir_elem_f(h, x->data, i);
  imp_tensor_free_data(x);
  x->data = f;
  x->dtype = IR_F32;
  x->bytes = (size_t)N * sizeof *f;
  return h;
}

ir_dtype imp_half_of_onnx(int64_t t) {
  int d = imp_dtype_from_onnx((int)t);
  return d == IR_F16 || d == IR_BF16 ? (ir_dtype)d : IR_F32;
}

void imp_ctx_set_half(imp_ctx *c, const char *name, ir_dtype h) {
  imp_ctx_lookup(c, name)->half = h == IR_F32 ? 0 : (uint8_t)h;
}

ir_dtype imp_half_in(imp_node *n, int i) {
  imp_value *v = imp_has_in(n, i) ? imp_ctx_lookup(n->ctx, n->proto->input[i]) : NULL;
  return v && v->half ? (ir_dtype)v->half : IR_F32;
}

/* The 16-bit float type of a node's float outputs, or IR_F32: what a
 * `to`/`dtype` attribute or a tensor `value` attribute says when the node
 * has one, CastLike's second input, else its first 16-bit float input
 * (ONNX ops give their float outputs their inputs' float type). */
ir_dtype imp_node_half(imp_node *n) {
  const Onnx__AttributeProto *a;
  if ((a = imp_attr(n, "to")) || (a = imp_attr(n, "dtype"))) return imp_half_of_onnx(a->i);
  if ((a = imp_attr(n, "value")) && a->t) return imp_half_of_onnx(a->t->data_type);
  if (n->proto->op_type && !strcmp(n->proto->op_type, "CastLike")) return imp_half_in(n, 1);
  for (int i = 0; i < imp_nin(n); i++)
    if (imp_half_in(n, i) != IR_F32) return imp_half_in(n, i);
  return IR_F32;
}

/* Output `v` of node `n` gets the node's 16-bit type `h`: marked, and, for
 * a Cast or CastLike from another type, rounded to it. */
void imp_mark_half(imp_node *n, imp_value *v, ir_dtype h) {
  const char *op = n->proto->op_type ? n->proto->op_type : "";
  if (h == IR_F32 || ir_node_get(n->g, v->ref)->dtype != IR_F32) return;
  v->half = (uint8_t)h;
  if ((!strcmp(op, "Cast") || !strcmp(op, "CastLike")) && imp_half_in(n, 0) != h)
    v->ref = ir_cast(n->g, ir_cast(n->g, v->ref, h), IR_F32);
}

