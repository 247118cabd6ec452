/* load.c — reading a model: the lowering context (its value table and op
 * table), initializers, graph outputs. Graph inputs are in graph_inputs.c,
 * the node loop in lower_nodes.c, the node API in node_api.c, 16-bit floats
 * in half.c. */
#include "load_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

imp_seqs **imp_ctx_seqs(imp_ctx *c) {
  return &c->seqs;
}

ir_graph *imp_ctx_graph(imp_ctx *c) {
  return c->g;
}

int imp_ctx_vector_floats(const imp_ctx *c) {
  return c->opt->vector_floats > 0 ? c->opt->vector_floats : 16;
}

int imp_ctx_vector_regs(const imp_ctx *c) {
  return c->opt->vector_regs > 0 ? c->opt->vector_regs : 32;
}

bool imp_ctx_winograd(const imp_ctx *c) {
  return !c->opt->no_winograd;
}

/* Counts `bytes` more constant data against the memory limit. */
static bool imp_ctx_budget(imp_ctx *c, size_t bytes, char *err, size_t n) {
  c->const_bytes += bytes;
  if (c->const_bytes <= imp_mem_limit()) return true;
  snprintf(err, n, "the model's constants need more than the memory limit (%zu bytes; see --max-memory)",
           imp_mem_limit());
  return false;
}

static const imp_op_entry *const families[] = {
    imp_ops_elementwise, imp_ops_logic, imp_ops_reduce, imp_ops_matmul, imp_ops_shape,
    imp_ops_conv,        imp_ops_pool,  imp_ops_norm,  imp_ops_gather, imp_ops_misc,   imp_ops_loss,
    imp_ops_quant,       imp_ops_convint, imp_ops_recurrent, imp_ops_spectral, imp_ops_unary,
    imp_ops_resize,      imp_ops_scatter, imp_ops_einsum,    imp_ops_control,  imp_ops_linalg,
    imp_ops_nbits,
    imp_ops_sample, imp_ops_text,
    imp_ops_select,
    imp_ops_sequence,
    imp_ops_training,
    imp_ops_col2im,
};

/* `domain`: IMP_MS (com.microsoft), IMP_TRAINING or 0 (the default). */
const imp_op_entry *imp_find_op(const char *op, unsigned domain) {
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (const imp_op_entry *e = families[f]; e->op; e++)
      if (!strcmp(e->op, op) && (e->flags & (IMP_MS | IMP_TRAINING)) == domain) return e;
  return NULL;
}

const char *const *imp_supported_ops(void) {
  static const char *list[512];
  if (!list[0]) {
    size_t k = 0;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
      for (const imp_op_entry *e = families[f]; e->op && k + 1 < 512; e++) list[k++] = e->op;
  }
  return list;
}

static uint64_t hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The entry of `name`, also when it is forgotten (a sub-graph's value
 * after the sub-graph: the entry stays, so probe chains stay whole). */
static imp_value *ctx_slot(imp_ctx *c, const char *name) {
  if (!c->cap) return NULL;
  for (size_t i = hash(name) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
    if (!c->values[i].name) return NULL;
    if (!strcmp(c->values[i].name, name)) return &c->values[i];
  }
}

imp_value *imp_ctx_lookup(imp_ctx *c, const char *name) {
  imp_value *v = ctx_slot(c, name);
  return v && !v->forgotten ? v : NULL;
}

void imp_ctx_define(imp_ctx *c, const char *name, ir_ref r) {
  imp_value *v = ctx_slot(c, name);
  if (v) {
    *v = (imp_value){.name = v->name, .ref = r};
    return;
  }
  if (2 * (c->nvalues + 1) > c->cap) {
    imp_value *old = c->values;
    size_t oldcap = c->cap;
    c->cap = c->cap ? 2 * c->cap : 256;
    c->values = calloc(c->cap, sizeof *c->values);
    if (!c->values) abort();
    for (size_t i = 0; i < oldcap; i++) {
      if (!old[i].name) continue;
      size_t k = hash(old[i].name) & (c->cap - 1);
      while (c->values[k].name) k = (k + 1) & (c->cap - 1);
      c->values[k] = old[i];
    }
    free(old);
  }
  size_t i = hash(name) & (c->cap - 1);
  while (c->values[i].name) i = (i + 1) & (c->cap - 1);
  c->values[i] = (imp_value){.name = name, .ref = r};
  c->nvalues++;
}

void imp_ctx_forget(imp_ctx *c, const char *name) {
  imp_value *v = name ? imp_ctx_lookup(c, name) : NULL;
  if (v) v->forgotten = true;
}

ir_ref imp_tensor_const(imp_ctx *c, const Onnx__TensorProto *t, char *err, size_t errlen) {
  imp_tensor x;
  if (imp_tensor_from_proto(t, c->dir, &x, err, errlen)) return IR_NONE;
  imp_widen_half(&x);
  if (!imp_ctx_budget(c, x.bytes, err, errlen) ||
      imp_ctx_check_plain(c, x.dtype, x.data, (int64_t)ir_shape_numel(&x.shape), x.name, err, errlen)) {
    imp_tensor_free(&x);
    return IR_NONE;
  }
  ir_ref r = x.map ? ir_const_mapped(c->g, x.name, x.dtype, x.shape, x.data, x.map, x.map_len)
                   : ir_const_take(c->g, x.name, x.dtype, x.shape, x.data);
  x.data = x.map = NULL; /* the graph owns it now */
  imp_tensor_free(&x);
  return r;
}

/* ---- the model ---- */

int imp_ctx_fail(imp_ctx *c, char *err, size_t n, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(err, n, "%s: %s", c->path, msg);
  return -1;
}

static int import_model(imp_ctx *c, const Onnx__ModelProto *m, char *err, size_t n) {
  if (!m->graph) return imp_ctx_fail(c, err, n, "the model has no graph");
  int64_t version = -1;
  bool training = false; /* a training-only model has no default opset: its other nodes are refused */
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    training |= o->domain && !strcmp(o->domain, TRAINING_DOMAIN) && o->version == 1;
    if (o->domain && o->domain[0] && strcmp(o->domain, "ai.onnx")) continue;
    if (version >= 0) return imp_ctx_fail(c, err, n, "the model imports the default-domain opset twice");
    version = o->version < 0 ? 0 : o->version;
  }
  if (version < 0 && !m->n_opset_import) version = 1;
  if (version < 0 && training) version = 0;
  else if (version < 1) return imp_ctx_fail(c, err, n, "the model imports no default-domain opset");
  if (version > 18) return imp_ctx_fail(c, err, n, "opset %lld is newer than supported (up to 18)", (long long)version);
  int opset = (int)version;
  const Onnx__GraphProto *gp = m->graph;
  c->gp = gp;
  c->has_syms = imp_ctx_model_has_syms(c, gp);
  for (size_t i = 0; i < gp->n_initializer; i++) {
    char e[512];
    ir_ref r = imp_tensor_const(c, gp->initializer[i], e, sizeof e);
    if (r == IR_NONE) return imp_ctx_fail(c, err, n, "initializer %zu: %s", i, e);
    if (imp_ctx_lookup(c, gp->initializer[i]->name ? gp->initializer[i]->name : ""))
      return imp_ctx_fail(c, err, n, "initializer %zu: name '%s' is already defined (value names must be unique)", i,
                      gp->initializer[i]->name ? gp->initializer[i]->name : "");
    imp_ctx_define(c, gp->initializer[i]->name ? gp->initializer[i]->name : "", r);
    imp_ctx_set_half(c, gp->initializer[i]->name ? gp->initializer[i]->name : "", imp_half_of_onnx(gp->initializer[i]->data_type));
    /* the graph holds its own copy: release the decoded bytes now, so a
     * large model is not held twice while the rest is lowered */
    Onnx__TensorProto *t = gp->initializer[i];
    if (t->has_raw_data && t->raw_data.data) {
      free(t->raw_data.data);
      t->raw_data.data = NULL;
      t->raw_data.len = 0;
    }
  }
  if (imp_ctx_add_frozen(c, gp, err, n) || imp_ctx_add_inputs(c, gp, err, n) || imp_ctx_lower_nodes(c, gp, opset, err, n))
    return -1;
  for (size_t i = 0; i < gp->n_output; i++) {
    const char *name = gp->output[i]->name ? gp->output[i]->name : "";
    imp_value *v = imp_ctx_lookup(c, name);
    if (!v) return imp_ctx_fail(c, err, n, "graph output '%s' is never produced", name);
    const Onnx__TypeProto *tp = gp->output[i]->type;
    imp_io_value *ov = c->opt->io && i < (size_t)c->opt->io->nout ? &c->opt->io->out[i] : NULL;
    if (ov) ov->first = ir_output_count(c->g), ov->count = 1, ov->present = true;
    if (imp_is_seq(v->ref) || imp_io_kind_of(tp, NULL, NULL) != IMP_IO_TENSOR) {
      char e[512];
      if (imp_seq_output(c, gp, name, v->ref, tp, ov, e, sizeof e)) return imp_ctx_fail(c, err, n, "graph output '%s': %s", name, e);
      continue;
    }
    ir_dtype h = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type
                     ? imp_half_of_onnx(tp->tensor_type->elem_type) : IR_F32;
    if (h == IR_F32 && v->half) h = (ir_dtype)v->half;
    bool store_half = h != IR_F32 && ir_node_get(c->g, v->ref)->dtype == IR_F32; /* converted on store */
    ir_mark_output(c->g, store_half ? ir_cast(c->g, v->ref, h) : v->ref, name);
  }
  for (size_t i = 0; i < gp->n_output; i++) { /* value-dependent shapes: their lengths come last */
    const char *name = gp->output[i]->name ? gp->output[i]->name : "";
    imp_value *v = imp_ctx_lookup(c, name);
    int k = 0; /* its entry output (sequences make several): the one of its name */
    while (v->dyn && k < ir_output_count(c->g) && strcmp(ir_output_name(c->g, k), name)) k++;
    if (v->dyn && ir_mark_output_len(c->g, k, v->dyn_axis, v->len))
      return imp_ctx_fail(c, err, n, "graph output '%s': %s", gp->output[i]->name, ir_error(c->g));
  }
  if (!gp->n_output) return imp_ctx_fail(c, err, n, "the graph has no outputs");
  return c->has_syms ? imp_ctx_check_sym_data(c, err, n) : 0;
}

int imp_load(const char *path, const imp_options *o, ir_graph **out, char *err, size_t errlen) {
  static const imp_options none = {0};
  imp_ctx c = {.path = path, .opt = o ? o : &none};
  *out = NULL;
  if (c.opt->needs) memset(c.opt->needs, 0, sizeof *c.opt->needs);
  Onnx__ModelProto *m = imp_read_model(path, err, errlen);
  if (!m) return -1;
  if (c.opt->io && imp_io_declare(m->graph, c.opt->io, err, errlen)) {
    onnx__model_proto__free_unpacked(m, NULL);
    return -1;
  }
  c.dir = strdup(path);
  char *slash = strrchr(c.dir, '/');
  if (slash) *slash = 0;
  else strcpy(c.dir, ".");
  c.g = ir_graph_new();
  ir_set_budget(c.g, imp_mem_limit()); /* while the model is built; the passes after are proportional */
  int rc = import_model(&c, m, err, errlen);
  ir_set_budget(c.g, 0);
  onnx__model_proto__free_unpacked(m, NULL);
  imp_seqs_free(c.seqs);
  free(c.values);
  free(c.dir);
  if (rc) {
    ir_graph_free(c.g);
    return -1;
  }
  *out = c.g;
  return 0;
}

