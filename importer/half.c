/* half.c — ONNX float16 and bfloat16 values, held as float32. */
#include "load_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- 16-bit floats ----
 * ONNX float16 and bfloat16 values are held as float32 in the graph, each
 * marked with its ONNX type, and computed in float32: graph inputs are
 * converted on load, graph outputs rounded on store, a Cast (CastLike) to
 * bfloat16 rounds there and back, and float16 is rounded where onnxruntime
 * keeps it float16 (imp_ort_half_mode). Between other ops nothing is
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

static ir_ref round_half(ir_graph *g, ir_ref r, ir_dtype h) {
  return ir_cast(g, ir_cast(g, r, h), IR_F32);
}

/* Output `v` of node `n` (lowered in IMP_HALF_* `mode`) gets the node's
 * 16-bit type `h`: marked, and rounded to it by a Cast or CastLike from
 * another type: to bfloat16 always, to float16 only when a Cast reads it
 * (else onnxruntime drops the Cast with the one it inserts after it), and
 * by a node that onnxruntime runs in float16 and that computes. */
void imp_mark_half(imp_node *n, imp_value *v, ir_dtype h, unsigned mode) {
  const char *op = n->proto->op_type ? n->proto->op_type : "";
  if (h == IR_F32 || ir_node_get(n->g, v->ref)->dtype != IR_F32) return;
  v->half = (uint8_t)h;
  v->wide16 = h == IR_F16 && (mode & IMP_HALF_IN) && !(mode & IMP_HALF_ROUND_IN);
  v->f32run = (mode & IMP_HALF_IN) && !(mode & IMP_HALF_ROUND_IN);
  if ((!strcmp(op, "Cast") || !strcmp(op, "CastLike")) && imp_half_in(n, 0) != h) {
    v->f32run = false;
    v->wide16 = h == IR_F16 && !(mode & IMP_HALF_CAST_USER);
    if (!v->wide16) v->ref = round_half(n->g, v->ref, h);
  } else if (h == IR_F16 && (mode & IMP_HALF_ROUND_OUT)) {
    v->ref = round_half(n->g, v->ref, h);
  }
}

/* ---- where onnxruntime keeps float16 ----
 * Ops with a float16 kernel in onnxruntime-node 1.30's CPU provider
 * (x86-64), measured one at a time: one op on a float16 graph input, the
 * session saved with optimizedModelFilePath; listed when no Cast was
 * inserted before it. All but LayerNormalization and Shrink give exact
 * float16 results on float16 inputs (data movement, Max/Min/Clip/Round/
 * Sign, fmod), so only those two round their outputs. */
static const char *const kernels16[] = {
    "Concat",    "Slice",           "Reshape",  "Transpose", "Gather", "GatherElements", "GatherND",
    "Split",     "Expand",          "Flatten",  "Squeeze",   "Unsqueeze", "Identity",    "Clip",
    "Max",       "Min",             "Round",    "Sign",      "Shrink", "LayerNormalization", "Mod",
    "ScatterND", "ScatterElements", "Compress", "IsNaN",     "Shape",
};

/* 0: no float16 kernel; 1: one; 2: one that rounds its outputs. */
static int half_kernel(const Onnx__NodeProto *np) {
  const char *op = np->op_type ? np->op_type : "";
  for (size_t i = 0; i < sizeof kernels16 / sizeof kernels16[0]; i++)
    if (!strcmp(op, kernels16[i])) return !strcmp(op, "LayerNormalization") || !strcmp(op, "Shrink") ? 2 : 1;
  return 0;
}

static bool is_op(const Onnx__NodeProto *np, const char *op) {
  return np->op_type && !strcmp(np->op_type, op);
}

/* With `on`, the node's float16 inputs that may not be rounded are, while
 * it is lowered (onnxruntime runs it in float16); without, they are given
 * back their values. */
void imp_round_inputs(imp_node *n, bool on) {
  for (int i = 0; i < imp_nin(n); i++) {
    imp_value *v = imp_has_in(n, i) ? imp_ctx_lookup(n->ctx, n->proto->input[i]) : NULL;
    if (!v || imp_is_seq(v->ref) || v->ref == IR_NONE) continue;
    if (on && v->half == IR_F16 && v->wide16 && !v->rounding && ir_node_get(n->g, v->ref)->dtype == IR_F32)
      v->wide = v->ref, v->ref = round_half(n->g, v->ref, IR_F16), v->rounding = true;
    else if (!on && v->rounding)
      v->ref = v->wide, v->rounding = false;
  }
}

/* onnxruntime 1.30 runs a node in float16 when it has a float16 kernel,
 * unless the node is "isolated": some input comes from a node, every
 * float16 input from a node run in float32 or from an initializer, no
 * output is a graph output, and every consumer of its float16 outputs runs
 * in float32 (then it too runs in float32, saving the casts;
 * insert_cast_transformer.cc). */
unsigned imp_ort_half_mode(imp_ctx *c, imp_ctx *prod, const Onnx__GraphProto *gp, size_t i, const size_t *edges,
                           const size_t *first) {
  const Onnx__NodeProto *np = gp->node[i];
  unsigned mode = 0;
  bool from_node = false, from32 = true, graph_out = false, to32 = first[i + 1] > first[i];
  for (size_t k = 0; k < np->n_input; k++) {
    imp_value *v = np->input[k][0] ? imp_ctx_lookup(c, np->input[k]) : NULL;
    imp_value *p = v ? imp_ctx_lookup(prod, np->input[k]) : NULL;
    bool node_made = p && !is_op(gp->node[p->ref], "Constant"); /* onnxruntime makes Constants initializers */
    from_node |= node_made;
    if (!v || v->half != IR_F16) continue;
    mode |= IMP_HALF_IN;
    /* a float16 initializer onnxruntime 1.30 converts to float32 (measured) */
    from32 &= node_made ? v->f32run : !imp_is_seq(v->ref) && ir_is_const(c->g, v->ref);
  }
  if (is_op(np, "Cast") || is_op(np, "CastLike")) {
    for (size_t e = first[i]; e < first[i + 1]; e++)
      if (is_op(gp->node[edges[e]], "Cast") || is_op(gp->node[edges[e]], "CastLike")) mode |= IMP_HALF_CAST_USER;
    return mode;
  }
  int k16 = half_kernel(np);
  if (!(mode & IMP_HALF_IN) || !k16) return mode;
  for (size_t k = 0; k < np->n_output; k++) {
    imp_value *p = np->output[k][0] ? imp_ctx_lookup(prod, np->output[k]) : NULL;
    graph_out |= p && p->graph_out;
  }
  for (size_t e = first[i]; e < first[i + 1] && to32; e++) {
    const Onnx__NodeProto *u = gp->node[edges[e]];
    to32 = !half_kernel(u) && !is_op(u, "Cast") && !is_op(u, "CastLike");
  }
  if (gp->n_node > 1 && from_node && from32 && !graph_out && to32) return mode; /* isolated */
  return mode | IMP_HALF_ROUND_IN | (k16 == 2 ? IMP_HALF_ROUND_OUT : 0);
}
