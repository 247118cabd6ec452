/* node_api.c — what the op families call on the node they lower: its
 * inputs and outputs, failures, the needs a failure records, and the
 * lowering of a sub-graph (If, Loop, Scan bodies). */
#include "load_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sub-graphs nest at most this deep: the lowering recurses once per level. */
#define MAX_SUBGRAPH_DEPTH 8

/* ---- node API for the op families ---- */

int imp_fail(imp_node *n, const char *fmt, ...) {
  if (n->ctx->node_failed) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(n->ctx->nodeerr, sizeof n->ctx->nodeerr, fmt, ap);
  va_end(ap);
  n->ctx->node_failed = true;
  return -1;
}

void imp_ctx_need_syms(imp_ctx *c, uint32_t mask);
void imp_ctx_need_inputs(imp_ctx *c, ir_ref r);

int imp_fail_sym(imp_node *n, int64_t d, const char *what) {
  if (!n->ctx->node_failed) imp_ctx_need_syms(n->ctx, ir_dim_syms(d));
  const char *s = ir_dim_sym_name(ir_dim_first_sym(d));
  return imp_fail(n, "%s: op '%s' does not support symbolic dimensions yet; give '%s' a value with --dim %s=N", what,
                  n->proto->op_type ? n->proto->op_type : "?", s, s);
}

int64_t imp_sym_value(imp_node *n, ir_ref r) {
  return r >= 0 && r < ir_graph_count(n->g) ? imp_sym_in_data(ir_node_get(n->g, r)) : 0;
}

int imp_need_static(imp_node *n, int i) {
  if (!n->ctx->has_syms || !imp_has_in(n, i)) return 0;
  imp_value *v = imp_ctx_lookup(n->ctx, n->proto->input[i]);
  if (!v || imp_is_seq(v->ref)) return 0; /* a sequence: its ops take symbolic tensors */
  const ir_node *x = ir_node_get(n->g, v->ref);
  char what[320], sh[200];
  int64_t d = imp_sym_in_data(x);
  ir_shape_str(&x->shape, sh, sizeof sh);
  if (!ir_shape_is_static(&x->shape)) {
    snprintf(what, sizeof what, "input %d ('%s') has shape %s", i, n->proto->input[i], sh);
    return imp_fail_sym(n, ir_shape_numel(&x->shape), what);
  }
  if (d) {
    snprintf(what, sizeof what, "input %d ('%s') holds values that depend on a symbolic dimension", i, n->proto->input[i]);
    return imp_fail_sym(n, d, what);
  }
  return 0;
}

void imp_need_value(imp_node *n, ir_ref r) {
  if (!ir_is_const(n->g, r) && !n->ctx->node_failed) imp_ctx_need_inputs(n->ctx, r);
}

/* In a model with symbols, no value from the file may look like one: values
 * in the tag range are refused, so a model cannot forge a symbol. */
int imp_ctx_check_plain(imp_ctx *c, ir_dtype t, const void *data, int64_t count, const char *what, char *err,
                       size_t n) {
  if (!c->has_syms || (t != IR_I64 && t != IR_U64)) return 0;
  for (int64_t i = 0; i < count; i++) {
    int64_t v = ir_elem_i(t, data, i);
    if (ir_dim_is_sym(v))
      return snprintf(err, n, "%s: the value %lld is in the range reserved for symbolic dimensions", what,
                      (long long)v), -1;
  }
  return 0;
}

int imp_check_value(imp_node *n, int64_t v) {
  char err[256];
  if (!imp_ctx_check_plain(n->ctx, IR_I64, &v, 1, "attribute", err, sizeof err)) return 0;
  return imp_fail(n, "%s", err);
}

bool imp_has_syms(const imp_node *n) {
  return n->ctx->has_syms;
}

int imp_nin(const imp_node *n) {
  return (int)n->proto->n_input;
}

bool imp_has_in(const imp_node *n, int i) {
  return i >= 0 && (size_t)i < n->proto->n_input && n->proto->input[i][0];
}

ir_ref imp_in_value(imp_node *n, int i) {
  if (!imp_has_in(n, i)) return IR_NONE;
  imp_value *v = imp_ctx_lookup(n->ctx, n->proto->input[i]);
  if (!v) return imp_fail(n, "input '%s' is not defined", n->proto->input[i]), IR_NONE;
  return v->ref;
}

ir_ref imp_in(imp_node *n, int i) {
  ir_ref r = imp_in_value(n, i);
  if (imp_is_seq(r))
    return imp_fail(n, "input %d ('%s') is a sequence or optional, a tensor is expected", i, n->proto->input[i]), IR_NONE;
  return r;
}

ir_ref imp_req(imp_node *n, int i) {
  ir_ref r = imp_in(n, i);
  if (r == IR_NONE && !ir_failed(n->g)) imp_fail(n, "input %d is missing", i);
  return r;
}

int imp_nout(const imp_node *n) {
  return (int)n->proto->n_output;
}

bool imp_has_out(const imp_node *n, int i) {
  return i >= 0 && (size_t)i < n->proto->n_output && n->proto->output[i][0];
}

int imp_set_out(imp_node *n, int i, ir_ref r) {
  if (r == IR_NONE || ir_failed(n->g)) return -1;
  if (!imp_has_out(n, i)) return 0;
  imp_ctx_define(n->ctx, n->proto->output[i], r);
  return 0;
}

ir_ref imp_out_ref(imp_node *n, int i) {
  imp_value *v = imp_has_out(n, i) ? imp_ctx_lookup(n->ctx, n->proto->output[i]) : NULL;
  return v ? v->ref : IR_NONE;
}

ir_ref imp_in_len(imp_node *n, int i, int *axis) {
  imp_value *v = imp_has_in(n, i) ? imp_ctx_lookup(n->ctx, n->proto->input[i]) : NULL;
  if (!v || !v->dyn) return IR_NONE;
  if (axis) *axis = v->dyn_axis;
  return v->len;
}

bool imp_any_in_len(imp_node *n) {
  for (int i = 0; i < imp_nin(n); i++)
    if (imp_in_len(n, i, NULL) != IR_NONE) return true;
  return false;
}

int imp_set_out_len(imp_node *n, int i, ir_ref r, int axis, ir_ref len) {
  if (len == IR_NONE || !imp_has_out(n, i)) return imp_set_out(n, i, r);
  if (r == IR_NONE || ir_failed(n->g)) return -1;
  if (ir_is_const(n->g, len)) { /* the values are known: the shape is static */
    void *data;
    if (ir_eval(n->g, len, &data)) return -1;
    int64_t l = ir_elem_i(IR_I64, data, 0);
    free(data);
    ir_shape s = ir_node_get(n->g, r)->shape;
    int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK], ln[IR_MAX_RANK];
    for (int k = 0; k < s.rank; k++) sp[k] = 1, ln[k] = k == axis ? l : s.d[k];
    if (l < 0 || ir_dim_is_sym(s.d[axis]) || l > s.d[axis]) return imp_fail(n, "internal: length %lld out of range", (long long)l);
    return imp_set_out(n, i, ir_view_slice(n->g, r, st, sp, ln));
  }
  if (imp_set_out(n, i, r)) return -1;
  imp_value *v = imp_ctx_lookup(n->ctx, n->proto->output[i]);
  v->dyn = true, v->dyn_axis = axis, v->len = len;
  return 0;
}

/* The sub-graph's own names go out of scope after it (ONNX scoping): the
 * same body can be lowered again (a Loop unrolled), and the other branch
 * of an If may use the same names. */
static void forget_subgraph(imp_ctx *c, const Onnx__GraphProto *sub) {
  for (size_t i = 0; i < sub->n_input; i++) imp_ctx_forget(c, sub->input[i]->name);
  for (size_t i = 0; i < sub->n_initializer; i++) imp_ctx_forget(c, sub->initializer[i]->name);
  for (size_t i = 0; i < sub->n_node; i++)
    for (size_t k = 0; k < sub->node[i]->n_output; k++) imp_ctx_forget(c, sub->node[i]->output[k]);
}

int imp_lower_subgraph(imp_node *n, const Onnx__GraphProto *sub, const char *what, const ir_ref *ins, int nins,
                       ir_ref *outs, int nouts) {
  imp_ctx *c = n->ctx;
  char err[1024] = "";
  if ((int)sub->n_input != nins) return imp_fail(n, "%s has %zu inputs, %d expected", what, sub->n_input, nins);
  if ((int)sub->n_output != nouts) return imp_fail(n, "%s has %zu outputs, %d expected", what, sub->n_output, nouts);
  if (c->subgraph_depth >= MAX_SUBGRAPH_DEPTH)
    return imp_fail(n, "%s: sub-graphs nest more than %d deep", what, MAX_SUBGRAPH_DEPTH);
  int rc = 0;
  for (int i = 0; i < nins && !rc; i++) {
    const char *name = sub->input[i]->name ? sub->input[i]->name : "";
    if (imp_ctx_lookup(c, name)) rc = (snprintf(err, sizeof err, "input '%s' hides a value of the same name", name), -1);
    else imp_ctx_define(c, name, ins[i]);
  }
  for (size_t i = 0; i < sub->n_initializer && !rc; i++) {
    const char *name = sub->initializer[i]->name ? sub->initializer[i]->name : "";
    if (imp_ctx_lookup(c, name)) rc = (snprintf(err, sizeof err, "initializer '%s' is already defined", name), -1);
    else {
      ir_ref r = imp_tensor_const(c, sub->initializer[i], err, sizeof err);
      if (r == IR_NONE) rc = -1;
      else imp_ctx_define(c, name, r), imp_ctx_set_half(c, name, imp_half_of_onnx(sub->initializer[i]->data_type));
    }
  }
  c->subgraph_depth++;
  if (!rc) rc = imp_ctx_lower_nodes(c, sub, n->opset, err, sizeof err);
  c->subgraph_depth--;
  for (int i = 0; i < nouts && !rc; i++) {
    imp_value *v = sub->output[i]->name ? imp_ctx_lookup(c, sub->output[i]->name) : NULL;
    if (!v) rc = (snprintf(err, sizeof err, "output '%s' is never produced", sub->output[i]->name ? sub->output[i]->name : ""), -1);
    else if (v->dyn)
      rc = (snprintf(err, sizeof err, "output '%s' has a length known only at run time: not supported as a sub-graph's output",
                     sub->output[i]->name), -1);
    else outs[i] = v->ref;
  }
  forget_subgraph(c, sub);
  if (!rc) return 0;
  c->node_failed = false; /* the inner node's message, with its name, goes into this node's */
  const char *msg = strncmp(err, c->path, strlen(c->path)) ? err : err + strlen(c->path) + (err[strlen(c->path)] == ':' ? 2 : 0);
  return imp_fail(n, "%s: %s", what, msg);
}

