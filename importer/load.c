/* load.c — reading a model: decode, graph inputs and initializers, node
 * order, dispatch to the op families, folding of constant values. */
#include "importer_impl.h"

#include <limits.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The memory limit for one value (tensor.c): RAM, or ONNX2C_MEM_LIMIT. */
size_t imp_mem_limit(void);

/* Constant sub-graphs up to this many elements are evaluated while lowering. */
#define FOLD_MAX_ELEMS (1 << 20)
#define FOLD_KEEP_NARROW 256 /* elements: smaller dequantized weights are folded */

typedef struct {
  const char *name;
  ir_ref ref;
  uint8_t half; /* IR_F16 or IR_BF16: an ONNX 16-bit float held as float32 (0: none) */
  bool forgotten; /* a sub-graph's value, out of scope */
  /* a value-dependent length (NonZero...): the shape is a bound along
   * dyn_axis, and `len` (a scalar int64) the valid entries there */
  bool dyn;
  int dyn_axis;
  ir_ref len;
} value;

struct imp_ctx {
  const char *path;
  char *dir;
  const imp_options *opt;
  ir_graph *g;
  value *values; /* open addressing, power-of-two capacity */
  size_t nvalues, cap;
  char nodeerr[768];
  bool node_failed;
  size_t const_bytes; /* constant data held by the graph so far */
  bool has_syms;      /* some graph input has a symbolic dimension (not pinned by --dim) */
  const Onnx__GraphProto *gp;
  int subgraph_depth; /* sub-graphs (If branches) being lowered inside each other */
  imp_seqs *seqs;     /* sequence values (seq_value.c) */
};

imp_seqs **imp_ctx_seqs(imp_ctx *c) {
  return &c->seqs;
}

ir_graph *imp_ctx_graph(imp_ctx *c) {
  return c->g;
}

/* Sub-graphs nest at most this deep: the lowering recurses once per level. */
#define MAX_SUBGRAPH_DEPTH 8

/* Counts `bytes` more constant data against the memory limit. */
static bool const_budget(imp_ctx *c, size_t bytes, char *err, size_t n) {
  c->const_bytes += bytes;
  if (c->const_bytes <= imp_mem_limit()) return true;
  snprintf(err, n, "the model's constants need more than the memory limit (%zu bytes; see --max-memory)",
           imp_mem_limit());
  return false;
}

static const imp_op_entry *const families[] = {
    imp_ops_elementwise, imp_ops_logic, imp_ops_reduce, imp_ops_matmul, imp_ops_shape,
    imp_ops_nn,          imp_ops_norm,  imp_ops_gather, imp_ops_misc,   imp_ops_loss,
    imp_ops_quant,       imp_ops_convint, imp_ops_recurrent, imp_ops_spectral, imp_ops_unary,
    imp_ops_resize,      imp_ops_scatter, imp_ops_einsum,    imp_ops_control,  imp_ops_linalg,
    imp_ops_nbits,
    imp_ops_sample, imp_ops_text,
    imp_ops_select,
    imp_ops_sequence,
    imp_ops_training,
};
#define TRAINING_DOMAIN "ai.onnx.preview.training"

/* `domain`: IMP_MS (com.microsoft), IMP_TRAINING or 0 (the default). */
static const imp_op_entry *find_op(const char *op, unsigned domain) {
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
static value *slot(imp_ctx *c, const char *name) {
  if (!c->cap) return NULL;
  for (size_t i = hash(name) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
    if (!c->values[i].name) return NULL;
    if (!strcmp(c->values[i].name, name)) return &c->values[i];
  }
}

static value *lookup(imp_ctx *c, const char *name) {
  value *v = slot(c, name);
  return v && !v->forgotten ? v : NULL;
}

static void define(imp_ctx *c, const char *name, ir_ref r) {
  value *v = slot(c, name);
  if (v) {
    *v = (value){.name = v->name, .ref = r};
    return;
  }
  if (2 * (c->nvalues + 1) > c->cap) {
    value *old = c->values;
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
  c->values[i] = (value){.name = name, .ref = r};
  c->nvalues++;
}

static void forget(imp_ctx *c, const char *name) {
  value *v = name ? lookup(c, name) : NULL;
  if (v) v->forgotten = true;
}

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

static void need_syms(imp_ctx *c, uint32_t mask);
static void need_inputs(imp_ctx *c, ir_ref r);

int imp_fail_sym(imp_node *n, int64_t d, const char *what) {
  if (!n->ctx->node_failed) need_syms(n->ctx, ir_dim_syms(d));
  const char *s = ir_dim_sym_name(ir_dim_first_sym(d));
  return imp_fail(n, "%s: op '%s' does not support symbolic dimensions yet; give '%s' a value with --dim %s=N", what,
                  n->proto->op_type ? n->proto->op_type : "?", s, s);
}

void imp_need_value(imp_node *n, ir_ref r) {
  if (!ir_is_const(n->g, r) && !n->ctx->node_failed) need_inputs(n->ctx, r);
}

/* In a model with symbols, no value from the file may look like one: values
 * in the tag range are refused, so a model cannot forge a symbol. */
static int check_plain(imp_ctx *c, ir_dtype t, const void *data, int64_t count, const char *what, char *err,
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
  if (!check_plain(n->ctx, IR_I64, &v, 1, "attribute", err, sizeof err)) return 0;
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
  value *v = lookup(n->ctx, n->proto->input[i]);
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
  define(n->ctx, n->proto->output[i], r);
  return 0;
}

ir_ref imp_out_ref(imp_node *n, int i) {
  value *v = imp_has_out(n, i) ? lookup(n->ctx, n->proto->output[i]) : NULL;
  return v ? v->ref : IR_NONE;
}

ir_ref imp_in_len(imp_node *n, int i, int *axis) {
  value *v = imp_has_in(n, i) ? lookup(n->ctx, n->proto->input[i]) : NULL;
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
  value *v = lookup(n->ctx, n->proto->output[i]);
  v->dyn = true, v->dyn_axis = axis, v->len = len;
  return 0;
}

/* ---- 16-bit floats ----
 * ONNX float16 and bfloat16 values are held as float32 in the graph, each
 * marked with its ONNX type, and computed in float32: graph inputs are
 * converted on load, graph outputs rounded on store, and a Cast (CastLike)
 * to a 16-bit type rounds there and back. Between other ops nothing is
 * rounded, as onnxruntime does on the CPU for ops without float16 kernels
 * (docs/DESIGN.md, "16-bit floats"). */

/* Converts a decoded float16/bfloat16 tensor to float32 in place; returns
 * its 16-bit type, or IR_F32 when it was not one. */
static ir_dtype widen_half(imp_tensor *x) {
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

static ir_dtype half_of_onnx(int64_t t) {
  int d = imp_dtype_from_onnx((int)t);
  return d == IR_F16 || d == IR_BF16 ? (ir_dtype)d : IR_F32;
}

static void set_half(imp_ctx *c, const char *name, ir_dtype h) {
  lookup(c, name)->half = h == IR_F32 ? 0 : (uint8_t)h;
}

ir_dtype imp_half_in(imp_node *n, int i) {
  value *v = imp_has_in(n, i) ? lookup(n->ctx, n->proto->input[i]) : NULL;
  return v && v->half ? (ir_dtype)v->half : IR_F32;
}

/* The 16-bit float type of a node's float outputs, or IR_F32: what a
 * `to`/`dtype` attribute or a tensor `value` attribute says when the node
 * has one, CastLike's second input, else its first 16-bit float input
 * (ONNX ops give their float outputs their inputs' float type). */
static ir_dtype node_half(imp_node *n) {
  const Onnx__AttributeProto *a;
  if ((a = imp_attr(n, "to")) || (a = imp_attr(n, "dtype"))) return half_of_onnx(a->i);
  if ((a = imp_attr(n, "value")) && a->t) return half_of_onnx(a->t->data_type);
  if (n->proto->op_type && !strcmp(n->proto->op_type, "CastLike")) return imp_half_in(n, 1);
  for (int i = 0; i < imp_nin(n); i++)
    if (imp_half_in(n, i) != IR_F32) return imp_half_in(n, i);
  return IR_F32;
}

/* Output `v` of node `n` gets the node's 16-bit type `h`: marked, and, for
 * a Cast or CastLike from another type, rounded to it. */
static void mark_half(imp_node *n, value *v, ir_dtype h) {
  const char *op = n->proto->op_type ? n->proto->op_type : "";
  if (h == IR_F32 || ir_node_get(n->g, v->ref)->dtype != IR_F32) return;
  v->half = (uint8_t)h;
  if ((!strcmp(op, "Cast") || !strcmp(op, "CastLike")) && imp_half_in(n, 0) != h)
    v->ref = ir_cast(n->g, ir_cast(n->g, v->ref, h), IR_F32);
}

ir_ref imp_tensor_const(imp_ctx *c, const Onnx__TensorProto *t, char *err, size_t errlen) {
  imp_tensor x;
  if (imp_tensor_from_proto(t, c->dir, &x, err, errlen)) return IR_NONE;
  widen_half(&x);
  if (!const_budget(c, x.bytes, err, errlen) ||
      check_plain(c, x.dtype, x.data, (int64_t)ir_shape_numel(&x.shape), x.name, err, errlen)) {
    imp_tensor_free(&x);
    return IR_NONE;
  }
  ir_ref r = x.map ? ir_const_mapped(c->g, x.name, x.dtype, x.shape, x.data, x.map, x.map_len)
                   : ir_const_take(c->g, x.name, x.dtype, x.shape, x.data);
  x.data = x.map = NULL; /* the graph owns it now */
  imp_tensor_free(&x);
  return r;
}

static int lower_nodes(imp_ctx *c, const Onnx__GraphProto *gp, int opset, char *err, size_t n);

/* The sub-graph's own names go out of scope after it (ONNX scoping): the
 * same body can be lowered again (a Loop unrolled), and the other branch
 * of an If may use the same names. */
static void forget_subgraph(imp_ctx *c, const Onnx__GraphProto *sub) {
  for (size_t i = 0; i < sub->n_input; i++) forget(c, sub->input[i]->name);
  for (size_t i = 0; i < sub->n_initializer; i++) forget(c, sub->initializer[i]->name);
  for (size_t i = 0; i < sub->n_node; i++)
    for (size_t k = 0; k < sub->node[i]->n_output; k++) forget(c, sub->node[i]->output[k]);
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
    if (lookup(c, name)) rc = (snprintf(err, sizeof err, "input '%s' hides a value of the same name", name), -1);
    else define(c, name, ins[i]);
  }
  for (size_t i = 0; i < sub->n_initializer && !rc; i++) {
    const char *name = sub->initializer[i]->name ? sub->initializer[i]->name : "";
    if (lookup(c, name)) rc = (snprintf(err, sizeof err, "initializer '%s' is already defined", name), -1);
    else {
      ir_ref r = imp_tensor_const(c, sub->initializer[i], err, sizeof err);
      if (r == IR_NONE) rc = -1;
      else define(c, name, r), set_half(c, name, half_of_onnx(sub->initializer[i]->data_type));
    }
  }
  c->subgraph_depth++;
  if (!rc) rc = lower_nodes(c, sub, n->opset, err, sizeof err);
  c->subgraph_depth--;
  for (int i = 0; i < nouts && !rc; i++) {
    value *v = sub->output[i]->name ? lookup(c, sub->output[i]->name) : NULL;
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

/* ---- the model ---- */

static int ctx_fail(imp_ctx *c, char *err, size_t n, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(err, n, "%s: %s", c->path, msg);
  return -1;
}

/* The value --dim gives symbol `param`: 1 (in *v), 0 when not given, -1
 * when the value is not a number >= 0. */
static int dim_value(imp_ctx *c, const char *param, int64_t *v) {
  size_t len = strlen(param);
  for (int i = 0; i < c->opt->ndims; i++) {
    const char *d = c->opt->dims[i];
    if (!strncmp(d, param, len) && d[len] == '=') {
      char *end;
      long long x = strtoll(d + len + 1, &end, 10);
      if (*end || x < 0 || end == d + len + 1) return -1;
      *v = x;
      return 1;
    }
  }
  return 0;
}

static bool is_initializer(const Onnx__GraphProto *gp, const char *name) {
  for (size_t i = 0; i < gp->n_initializer; i++)
    if (gp->initializer[i]->name && !strcmp(gp->initializer[i]->name, name)) return true;
  return false;
}

/* The symbol of dimension k of graph input `vi` (a tensor with a shape):
 * its dim_param, or for an unknown dimension (neither value nor name, common
 * in exports) the generated name INPUT_dimK; NULL for a number. */
static const char *dim_name(const Onnx__ValueInfoProto *vi, size_t k, char *buf, size_t n) {
  const Onnx__TensorShapeProto__Dimension *d = vi->type->tensor_type->shape->dim[k];
  if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) return NULL;
  if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param && d->dim_param[0])
    return d->dim_param;
  snprintf(buf, n, "%.100s_dim%zu", vi->name ? vi->name : "input", k);
  return buf;
}

static bool tensor_with_shape(const Onnx__ValueInfoProto *vi) {
  const Onnx__TypeProto *tp = vi->type;
  return tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type && tp->tensor_type->shape;
}

/* Does some graph input keep a symbolic dimension? (Decided before the
 * initializers are read: their values are checked against the tag range.) */
static bool model_has_syms(imp_ctx *c, const Onnx__GraphProto *gp) {
  for (size_t i = 0; i < gp->n_input; i++) {
    if (!tensor_with_shape(gp->input[i]) || (gp->input[i]->name && is_initializer(gp, gp->input[i]->name)))
      continue;
    for (size_t k = 0; k < gp->input[i]->type->tensor_type->shape->n_dim; k++) {
      char buf[128];
      int64_t v;
      const char *name = dim_name(gp->input[i], k, buf, sizeof buf);
      if (name && !dim_value(c, name, &v)) return true;
    }
  }
  return false;
}

/* ---- needs: what a specialisation would give (imp_needs) ---- */

/* The position of graph input `vi` among those that are not initializers
 * (the order in which run takes its -i tensors). */
static int input_position(const Onnx__GraphProto *gp, size_t i) {
  int pos = 0;
  for (size_t k = 0; k < i; k++) pos += gp->input[k]->name && !is_initializer(gp, gp->input[k]->name);
  return pos;
}

static void need_syms(imp_ctx *c, uint32_t mask) {
  imp_needs *nd = c->opt->needs;
  mask = ir_dim_base_syms(mask); /* a floor symbol is pinned through the inputs that decide it */
  for (int id = 0; nd && c->gp && id < IR_MAX_SYMS; id++) {
    if (!(mask >> id & 1)) continue;
    const char *name = ir_dim_sym_name(id);
    bool have = false;
    for (int j = 0; j < nd->nsyms; j++) have |= !strcmp(nd->sym[j].name, name);
    for (size_t i = 0; i < c->gp->n_input && !have && nd->nsyms < IR_MAX_SYMS; i++) {
      const Onnx__ValueInfoProto *vi = c->gp->input[i];
      if (!vi->name || is_initializer(c->gp, vi->name) || !tensor_with_shape(vi)) continue;
      int pos = input_position(c->gp, i);
      for (size_t k = 0; k < vi->type->tensor_type->shape->n_dim && !have; k++) {
        char buf[128];
        const char *dn = dim_name(vi, k, buf, sizeof buf);
        if (!dn || strcmp(dn, name)) continue;
        snprintf(nd->sym[nd->nsyms].name, sizeof nd->sym[0].name, "%s", name);
        nd->sym[nd->nsyms].input = pos;
        nd->sym[nd->nsyms++].axis = (int)k;
        have = true;
      }
    }
  }
}

/* Records the graph inputs that value `r` is computed from (a walk over
 * its sources with an explicit stack: no recursion depth from the model). */
static void need_inputs(imp_ctx *c, ir_ref r) {
  imp_needs *nd = c->opt->needs;
  int cnt = ir_graph_count(c->g);
  if (!nd || !c->gp || r < 0 || r >= cnt) return;
  char *seen = calloc((size_t)cnt, 1);
  ir_ref *stack = malloc((size_t)cnt * sizeof *stack);
  if (!seen || !stack) abort();
  int top = 0;
  stack[top++] = r;
  seen[r] = 1;
  while (top) {
    const ir_node *x = ir_node_get(c->g, stack[--top]);
    for (int k = 0; k < x->nsrc; k++)
      if (x->src[k] >= 0 && x->src[k] < cnt && !seen[x->src[k]] && !ir_node_get(c->g, x->src[k])->is_const)
        seen[x->src[k]] = 1, stack[top++] = x->src[k];
    if (x->op != IR_ALLOCATE || x->origin != IR_ORIGIN_INPUT || !x->name) continue;
    bool have = false;
    for (int j = 0; j < nd->ninputs; j++) have |= !strcmp(nd->in[j].name, x->name);
    for (size_t i = 0; i < c->gp->n_input && !have && nd->ninputs < IMP_MAX_NEEDS; i++)
      if (c->gp->input[i]->name && !strcmp(c->gp->input[i]->name, x->name)) {
        snprintf(nd->in[nd->ninputs].name, sizeof nd->in[0].name, "%s", x->name);
        nd->in[nd->ninputs++].input = input_position(c->gp, i);
        have = true;
      }
  }
  free(seen);
  free(stack);
}

/* Graph inputs fixed by --freeze become constants. */
static int add_frozen(imp_ctx *c, const Onnx__GraphProto *gp, char *err, size_t n) {
  for (int i = 0; i < c->opt->nfreeze; i++) {
    const char *spec = c->opt->freeze[i], *eq = strchr(spec, '='), *file = eq ? eq + 1 : spec;
    uint8_t *buf;
    size_t len;
    imp_tensor t;
    char e[512];
    if (imp_read_file(file, &buf, &len, err, n)) return -1;
    int rc = imp_tensor_decode(buf, len, NULL, &t, e, sizeof e);
    free(buf);
    if (rc) return snprintf(err, n, "%s: %s", file, e), -1;
    char name[256];
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - spec) : (int)strlen(t.name), eq ? spec : t.name);
    bool found = false;
    for (size_t k = 0; k < gp->n_input; k++) found |= gp->input[k]->name && !strcmp(gp->input[k]->name, name);
    if (found && check_plain(c, t.dtype, t.data, (int64_t)ir_shape_numel(&t.shape), spec, err, n)) {
      imp_tensor_free(&t);
      return -1;
    }
    ir_dtype h = widen_half(&t);
    ir_ref r = found ? ir_const(c->g, name, t.dtype, t.shape, t.data) : IR_NONE;
    imp_tensor_free(&t);
    if (!found) return ctx_fail(c, err, n, "--freeze %s: the graph has no input '%s'", spec, name);
    if (r == IR_NONE) return ctx_fail(c, err, n, "--freeze %s: unsupported tensor", spec);
    define(c, ir_strdup(c->g, name), r);
    set_half(c, name, h);
  }
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Graph input names are unique (sorted, then compared with the next). */
static int unique_inputs(imp_ctx *c, const Onnx__GraphProto *gp, char *err, size_t n) {
  const char **names = malloc((gp->n_input + 1) * sizeof *names);
  if (!names) return ctx_fail(c, err, n, "out of memory for %zu graph inputs", gp->n_input);
  for (size_t i = 0; i < gp->n_input; i++) {
    if (!gp->input[i]->name) return free(names), ctx_fail(c, err, n, "graph input %zu has no name", i);
    names[i] = gp->input[i]->name;
  }
  qsort(names, gp->n_input, sizeof *names, cmp_names);
  int rc = 0;
  for (size_t i = 0; i + 1 < gp->n_input && !rc; i++)
    if (!strcmp(names[i], names[i + 1]))
      rc = ctx_fail(c, err, n, "graph input '%s' is declared twice (value names must be unique)", names[i]);
  free(names);
  return rc;
}

/* A graph input that an initializer (or --freeze) already defines: the
 * declared element type and dimensions must be the tensor's. */
static int check_declared(imp_ctx *c, const Onnx__ValueInfoProto *vi, ir_ref r, char *err, size_t n) {
  const ir_node *x = ir_node_get(c->g, r);
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) return 0;
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  char want[200], have[200];
  ir_shape_str(&x->shape, have, sizeof have);
  if (tt->elem_type && imp_dtype_from_onnx(tt->elem_type) != (int)x->dtype)
    return ctx_fail(c, err, n, "graph input '%s' is declared with element type %d, its initializer is %s", vi->name,
                    tt->elem_type, ir_dtype_name(x->dtype));
  if (!tt->shape) return 0;
  bool same = tt->shape->n_dim == (size_t)x->shape.rank;
  for (size_t k = 0; same && k < tt->shape->n_dim; k++)
    if (tt->shape->dim[k]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      same = tt->shape->dim[k]->dim_value == x->shape.d[k];
  if (same) return 0;
  size_t w = 0;
  for (size_t k = 0; k < tt->shape->n_dim && w + 24 < sizeof want; k++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      w += (size_t)snprintf(want + w, sizeof want - w, "%s%lld", k ? "," : "[", (long long)d->dim_value);
    else w += (size_t)snprintf(want + w, sizeof want - w, "%s?", k ? "," : "[");
  }
  snprintf(want + w, sizeof want - w, "%s", tt->shape->n_dim ? "]" : "[]");
  return ctx_fail(c, err, n, "graph input '%s' is declared with another shape (%s) than its initializer %s", vi->name,
                  want, have);
}

/* A graph input of sequence or optional type, from the elements' shapes
 * that imp_options.values gives (run and verify take them from the input
 * files): a need when they are not given. */
static int add_value_input(imp_ctx *c, const Onnx__GraphProto *gp, size_t i, char *err, size_t n) {
  const Onnx__ValueInfoProto *vi = gp->input[i];
  size_t len = strlen(vi->name);
  const char *spec = NULL;
  for (int k = 0; k < c->opt->nvalues && !spec; k++)
    if (!strncmp(c->opt->values[k], vi->name, len) && c->opt->values[k][len] == '=') spec = c->opt->values[k] + len + 1;
  imp_needs *nd = c->opt->needs;
  if (!spec && nd && nd->nvalues < IMP_MAX_NEEDS) {
    snprintf(nd->value[nd->nvalues].name, sizeof nd->value[0].name, "%s", vi->name);
    nd->value[nd->nvalues++].input = input_position(gp, i);
  }
  if (!spec)
    return ctx_fail(c, err, n, "graph input '%s' is a sequence or optional: its elements' shapes must be given (--seq)",
                    vi->name);
  char e[512];
  imp_io_value *iv = c->opt->io ? &c->opt->io->in[input_position(gp, i)] : NULL;
  ir_ref r = imp_seq_input(c, gp, vi, spec, iv, e, sizeof e);
  if (r == IR_NONE) return ctx_fail(c, err, n, "graph input '%s': %s", vi->name, e);
  define(c, vi->name, r);
  return 0;
}

static int add_inputs(imp_ctx *c, const Onnx__GraphProto *gp, char *err, size_t n) {
  if (unique_inputs(c, gp, err, n)) return -1;
  imp_io *io = c->opt->io;
  for (size_t i = 0, pos = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = gp->input[i];
    value *known = lookup(c, vi->name);
    imp_io_value *iv = io && !is_initializer(gp, vi->name) && pos < (size_t)io->nin ? &io->in[pos++] : NULL;
    if (iv) iv->first = ir_input_count(c->g), iv->frozen = known != NULL;
    if (known) { /* an initializer listed as input (or frozen) */
      if (check_declared(c, vi, known->ref, err, n)) return -1;
      continue;
    }
    const Onnx__TypeProto *tp = vi->type;
    if (imp_io_kind_of(tp, NULL, NULL) != IMP_IO_TENSOR) {
      if (add_value_input(c, gp, i, err, n)) return -1;
      if (iv) iv->count = ir_input_count(c->g) - iv->first;
      continue;
    }
    if (iv) iv->count = 1;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
      return ctx_fail(c, err, n, "graph input '%s' is not a tensor", vi->name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    int dt = imp_dtype_from_onnx(tt->elem_type);
    if (dt < 0)
      return ctx_fail(c, err, n, "graph input '%s': element type %d is not supported", vi->name, tt->elem_type);
    if (!tt->shape) return ctx_fail(c, err, n, "graph input '%s' has no shape", vi->name);
    if (tt->shape->n_dim > IR_MAX_RANK) return ctx_fail(c, err, n, "graph input '%s': rank too high", vi->name);
    ir_shape s = {.rank = (int)tt->shape->n_dim};
    for (size_t k = 0; k < tt->shape->n_dim; k++) {
      const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
      char buf[128];
      const char *name = dim_name(vi, k, buf, sizeof buf);
      if (!name && d->dim_value >= 0) {
        s.d[k] = d->dim_value;
      } else if (name) {
        int given = dim_value(c, name, &s.d[k]);
        if (given < 0) return ctx_fail(c, err, n, "--dim %s: the value must be a whole number >= 0", name);
        if (!given && (s.d[k] = ir_dim_sym(name)) == IR_DIM_INVALID)
          return ctx_fail(c, err, n, "graph input '%s': more than %d symbolic dimensions", vi->name, IR_MAX_INPUT_SYMS);
      } else {
        return ctx_fail(c, err, n, "graph input '%s': negative dimension %lld", vi->name, (long long)d->dim_value);
      }
    }
    bool standin = false;
    for (int k = 0; k < c->opt->nstandins; k++) standin |= !strcmp(c->opt->standins[k], vi->name);
    ir_ref r;
    if (standin && ir_shape_is_static(&s) && ir_shape_numel(&s) <= FOLD_MAX_ELEMS) {
      void *zeros = calloc((size_t)ir_shape_numel(&s) + 1, ir_dtype_size((ir_dtype)dt));
      if (!zeros) abort();
      r = ir_const(c->g, vi->name, (ir_dtype)dt, s, zeros);
      free(zeros);
    } else {
      r = ir_input(c->g, vi->name, (ir_dtype)dt, s);
    }
    if (half_of_onnx(tt->elem_type) != IR_F32) r = ir_cast(c->g, r, IR_F32); /* converted on load */
    if (r == IR_NONE) return ctx_fail(c, err, n, "graph input '%s': %s", vi->name, ir_error(c->g));
    define(c, vi->name, r);
    set_half(c, vi->name, half_of_onnx(tt->elem_type));
  }
  return 0;
}

/* Does x convert a weight of one-byte integers to float (what
 * DequantizeLinear of an int8 weight is)? Walks at most *budget nodes. */
static bool widens_weight(const ir_graph *g, ir_ref r, int *budget) {
  const ir_node *x = ir_node_get(g, r);
  if (--*budget < 0 || x->op == IR_ALLOCATE) return false;
  if (x->op == IR_CAST && ir_dtype_is_float(x->dtype)) {
    const ir_node *s = ir_node_get(g, x->src[0]);
    while (s->op == IR_VIEW && !s->view.gather) s = ir_node_get(g, s->src[0]);
    if (s->op == IR_ALLOCATE && s->origin == IR_ORIGIN_WEIGHT && ir_dtype_size(s->dtype) == 1 &&
        !ir_dtype_is_float(s->dtype))
      return true;
  }
  for (int i = 0; i < x->nsrc; i++)
    if (widens_weight(g, x->src[i], budget)) return true;
  return false;
}

/* Replaces small constant values by their folded contents. A dequantized
 * weight is not folded (above a few hundred elements): it stays an
 * expression over the int8 weight, which the matmul kernels read and widen
 * in registers, instead of four times the bytes in float. */
static ir_ref fold(imp_ctx *c, ir_ref r) {
  const ir_node *x = ir_node_get(c->g, r);
  if (!x->is_const || x->op == IR_ALLOCATE || x->op == IR_LOAD || ir_shape_numel(&x->shape) > FOLD_MAX_ELEMS)
    return r;
  int budget = 64;
  if (ir_shape_numel(&x->shape) >= FOLD_KEEP_NARROW && widens_weight(c->g, r, &budget)) return r;
  void *data;
  if (ir_eval(c->g, r, &data)) return IR_NONE;
  ir_ref k = ir_const(c->g, "folded", x->dtype, x->shape, data);
  free(data);
  return k;
}

/* A weight holding a symbolic value (a dimension read by Shape), or 0. */
static int64_t sym_in_data(const ir_node *x) {
  if (x->op != IR_ALLOCATE || x->origin != IR_ORIGIN_WEIGHT || x->dtype != IR_I64) return 0;
  for (int64_t i = 0; i < ir_shape_numel(&x->shape); i++)
    if (ir_dim_is_sym(((const int64_t *)x->data)[i])) return ((const int64_t *)x->data)[i];
  return 0;
}

/* Refuses a symbolic input (shape, or values read from a shape) to an op
 * whose lowering does not handle symbolic dimensions: one check for every
 * op not marked IMP_SYM. */
static int check_symbolic(imp_node *n) {
  for (int i = 0; i < imp_nin(n); i++) {
    if (!imp_has_in(n, i)) continue;
    value *v = lookup(n->ctx, n->proto->input[i]);
    if (!v || imp_is_seq(v->ref)) continue; /* a sequence: its ops take symbolic tensors */
    const ir_node *x = ir_node_get(n->g, v->ref);
    char what[320], sh[200];
    int64_t d = sym_in_data(x);
    ir_shape_str(&x->shape, sh, sizeof sh);
    if (!ir_shape_is_static(&x->shape)) {
      snprintf(what, sizeof what, "input %d ('%s') has shape %s", i, n->proto->input[i], sh);
      return imp_fail_sym(n, ir_shape_numel(&x->shape), what);
    }
    if (d) {
      snprintf(what, sizeof what, "input %d ('%s') holds values that depend on a symbolic dimension", i, n->proto->input[i]);
      return imp_fail_sym(n, d, what);
    }
  }
  return 0;
}

/* The symbols the node's inputs depend on, as a bit set (for error hints
 * and the needs). */
static uint32_t node_syms(imp_ctx *c, const Onnx__NodeProto *np) {
  uint32_t m = 0;
  for (size_t i = 0; i < np->n_input; i++) {
    value *v = np->input[i][0] ? lookup(c, np->input[i]) : NULL;
    if (!v || v->ref < 0 || v->ref >= ir_graph_count(c->g)) continue;
    const ir_node *x = ir_node_get(c->g, v->ref);
    for (int k = 0; k < x->shape.rank; k++) m |= ir_dim_syms(x->shape.d[k]);
    m |= ir_dim_syms(sym_in_data(x));
  }
  return m;
}

static int lower_node(imp_ctx *c, const Onnx__NodeProto *np, int opset, char *err, size_t n) {
  const char *op = np->op_type ? np->op_type : "";
  const char *name = np->name && np->name[0] ? np->name : (np->n_output ? np->output[0] : "?");
  imp_node node = {c, c->g, np, opset};
  imp_lower_fn fn = NULL;
  const imp_op_entry *e = NULL;
  bool ms = np->domain && !strcmp(np->domain, "com.microsoft");
  bool training = np->domain && !strcmp(np->domain, TRAINING_DOMAIN);
  if (np->domain && np->domain[0] && strcmp(np->domain, "ai.onnx") && !ms && !training)
    snprintf(c->nodeerr, sizeof c->nodeerr, "domain '%s' is not supported", np->domain), c->node_failed = true;
  else if (!training && !ms && opset < 1) /* a model that imports the training domain only */
    snprintf(c->nodeerr, sizeof c->nodeerr, "the model imports no default-domain opset"), c->node_failed = true;
  else if (!(e = find_op(op, ms ? IMP_MS : training ? IMP_TRAINING : 0)))
    snprintf(c->nodeerr, sizeof c->nodeerr, "op '%s'%s is not supported", op, ms ? " of domain 'com.microsoft'" : ""),
        c->node_failed = true;
  else if (!np->n_output)
    snprintf(c->nodeerr, sizeof c->nodeerr, "the node has no outputs"), c->node_failed = true;
  else fn = e->lower;
  if (fn && c->has_syms && !(e->flags & IMP_SYM) && check_symbolic(&node)) fn = NULL;
  char label[256];
  snprintf(label, sizeof label, "%s '%s'", op, name);
  ir_set_label(c->g, label);
  /* Value names are unique in ONNX (SSA): redefining one is an error, not
   * "last wins", since nodes reading it would silently see either value. */
  for (int i = 0; fn && !c->node_failed && i < imp_nout(&node); i++) {
    if (!imp_has_out(&node, i)) continue;
    bool twice = lookup(c, np->output[i]) != NULL;
    for (int j = 0; j < i; j++) twice |= !strcmp(np->output[j], np->output[i]);
    if (twice) imp_fail(&node, "output '%s' is already defined (value names must be unique)", np->output[i]);
  }
  /* a value-dependent length reaching an op that does not read it itself:
   * another lowering, or the length passed on (or refused) after it */
  bool pass = fn && !c->node_failed && !(e->flags & IMP_DYN) && imp_any_in_len(&node);
  imp_lower_fn own = pass ? imp_dyn_lowering(&node) : NULL;
  if (own) fn = own, pass = false;
  if (fn && !c->node_failed) fn(&node);
  if (pass && !c->node_failed && !ir_failed(c->g)) imp_dyn_pass(&node, e->lower);
  ir_dtype half = fn && !c->node_failed ? node_half(&node) : IR_F32;
  for (int i = 0; !c->node_failed && !ir_failed(c->g) && i < imp_nout(&node); i++) {
    if (!imp_has_out(&node, i)) continue;
    value *v = lookup(c, np->output[i]);
    if (!v) {
      imp_fail(&node, "output %d ('%s') was not produced", i, np->output[i]);
      break;
    }
    if (imp_is_seq(v->ref)) continue; /* its tensors were checked as outputs of their nodes */
    mark_half(&node, v, half);
    /* Every output must have a valid shape that fits in memory: refused
     * here, before anything downstream sizes buffers or folds it. */
    const ir_node *x = ir_node_get(c->g, v->ref);
    uint64_t numel = 1;
    bool bad = false;
    for (int k = 0; k < x->shape.rank && !bad; k++) {
      int64_t d = x->shape.d[k];
      if (ir_dim_is_sym(d)) { /* sizes are checked at run time, with the symbols' values */
        char ds[128];
        ir_dim_str(d, ds, sizeof ds);
        if (!ir_dim_valid(d)) imp_fail(&node, "output '%s': its size overflows", np->output[i]), bad = true;
        else if (ir_dim_cmp(c->g, d, 0) & IR_CMP_LT)
          imp_fail(&node, "output '%s': dimension %d (%s) may be negative", np->output[i], k, ds), bad = true;
      } else if (x->shape.d[k] < 0) {
        imp_fail(&node, "output '%s' has a negative dimension %lld", np->output[i], (long long)x->shape.d[k]);
        bad = true;
      } else if (x->shape.d[k] && numel > (UINT64_MAX / 16) / (uint64_t)x->shape.d[k]) {
        imp_fail(&node, "output '%s': its size overflows", np->output[i]);
        bad = true;
      } else {
        numel *= (uint64_t)x->shape.d[k];
      }
    }
    if (bad) break;
    if (numel * ir_dtype_size(x->dtype) > imp_mem_limit()) {
      imp_fail(&node, "output '%s' needs %llu bytes, more than the memory limit (%zu bytes)", np->output[i],
               (unsigned long long)(numel * ir_dtype_size(x->dtype)), imp_mem_limit());
      break;
    }
    v->ref = fold(c, v->ref);
  }
  if (c->node_failed || ir_failed(c->g)) {
    const char *msg = c->node_failed ? c->nodeerr : ir_error(c->g);
    uint32_t syms = strstr(msg, "--dim") ? 0 : ir_dim_base_syms(node_syms(c, np));
    int k = -1;
    for (int b = 0; b < IR_MAX_SYMS && k < 0; b++)
      if (syms >> b & 1) k = b;
    need_syms(c, syms);
    char hint[200] = "";
    if (k >= 0)
      snprintf(hint, sizeof hint, " (the sizes depend on symbol '%s'; give it a value with --dim %s=N)",
               ir_dim_sym_name(k), ir_dim_sym_name(k));
    return snprintf(err, n, "%s: node '%s' (%s, opset %d): %s%s", c->path, name, op, opset, msg, hint), -1;
  }
  return 0;
}

/* A binary min-heap of node indices: among the nodes whose inputs are
 * ready, the one listed first in the file goes first, so a file in
 * topological order (as ONNX asks) is lowered exactly in its own order. */
static void heap_push(size_t *h, size_t *n, size_t v) {
  size_t i = (*n)++;
  for (; i && h[(i - 1) / 2] > v; i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
  h[i] = v;
}

static size_t heap_pop(size_t *h, size_t *n) {
  size_t top = h[0], v = h[--*n], i = 0;
  for (;;) {
    size_t k = 2 * i + 1;
    if (k >= *n) break;
    if (k + 1 < *n && h[k + 1] < h[k]) k++;
    if (h[k] >= v) break;
    h[i] = h[k], i = k;
  }
  h[i] = v;
  return top;
}

/* Lowers the nodes in dependency order (Kahn's algorithm over value names:
 * O(inputs log nodes), whatever the order of the file), and names what is
 * missing when some node never becomes ready (undefined input or cycle).
 * The producer of a name is looked up in a map from value names to the
 * first node that outputs it; a second producer fails in lower_node. */
static int lower_nodes(imp_ctx *c, const Onnx__GraphProto *gp, int opset, char *err, size_t n) {
  size_t nn = gp->n_node, nedges = 0;
  imp_ctx prod = {0}; /* value name -> producing node index (as ir_ref) */
  for (size_t i = nn; i-- > 0;)
    for (size_t k = 0; k < gp->node[i]->n_output; k++)
      if (gp->node[i]->output[k][0] && !lookup(c, gp->node[i]->output[k]))
        define(&prod, gp->node[i]->output[k], (ir_ref)i); /* reversed: the first producer wins */
  for (size_t i = 0; i < nn; i++) nedges += gp->node[i]->n_input;
  size_t *indeg = calloc(nn + 1, sizeof *indeg), *first = calloc(nn + 2, sizeof *first);
  size_t *edges = malloc((nedges + 1) * sizeof *edges), *heap = malloc((nn + 1) * sizeof *heap), nheap = 0;
  int rc = 0;
  if (!indeg || !first || !edges || !heap || (nn && nn > (size_t)INT32_MAX)) {
    rc = ctx_fail(c, err, n, "out of memory ordering %zu nodes", nn);
    goto done;
  }
  /* edges producer -> consumer, grouped by producer (counting sort) */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < nn; i++)
      for (size_t k = 0; k < gp->node[i]->n_input; k++) {
        const char *in = gp->node[i]->input[k];
        value *v = in[0] && !lookup(c, in) ? lookup(&prod, in) : NULL;
        if (!v) continue;
        if (pass == 0) first[v->ref + 1]++, indeg[i]++;
        else edges[first[v->ref]++] = i;
      }
    if (pass == 0)
      for (size_t i = 0; i < nn; i++) first[i + 1] += first[i];
    else
      for (size_t i = nn; i > 0; i--) first[i] = first[i - 1];
    if (pass == 1) first[0] = 0;
  }
  for (size_t i = 0; i < nn; i++)
    if (!indeg[i]) heap_push(heap, &nheap, i);
  size_t lowered = 0;
  while (nheap && !rc) {
    size_t i = heap_pop(heap, &nheap);
    const char *missing = NULL;
    for (size_t k = 0; k < gp->node[i]->n_input && !missing; k++)
      if (gp->node[i]->input[k][0] && !lookup(c, gp->node[i]->input[k])) missing = gp->node[i]->input[k];
    if (missing) continue; /* an input nobody produces: reported below */
    rc = lower_node(c, gp->node[i], opset, err, n);
    lowered++;
    for (size_t e = first[i]; e < first[i + 1] && !rc; e++)
      if (--indeg[edges[e]] == 0) heap_push(heap, &nheap, edges[e]);
  }
  if (!rc && lowered < nn) {
    /* the first node (in file order) that was not lowered, and its input
     * that is not defined: never produced, or produced inside a cycle */
    for (size_t i = 0; i < nn && !rc; i++)
      for (size_t k = 0; k < gp->node[i]->n_input && !rc; k++) {
        const Onnx__NodeProto *np = gp->node[i];
        if (!np->input[k][0] || lookup(c, np->input[k])) continue;
        rc = (snprintf(err, n, "%s: node '%s' (%s): input '%s' is never defined (or the graph has a cycle)", c->path,
                       np->name && np->name[0] ? np->name : "?", np->op_type ? np->op_type : "?", np->input[k]), -1);
      }
  }
done:
  free(prod.values);
  free(indeg);
  free(first);
  free(edges);
  free(heap);
  return rc;
}

/* Symbolic values the outputs need as data (a shape used as a tensor, a
 * graph output that is a shape): their values exist only at run time, which
 * the generated code does not compute. Refused, naming the node. */
static int check_sym_data(imp_ctx *c, char *err, size_t n) {
  char *live = ir_live_nodes(c->g);
  int rc = 0;
  for (int r = 0; r < ir_graph_count(c->g) && !rc; r++) {
    int64_t d = live[r] ? sym_in_data(ir_node_get(c->g, r)) : 0;
    if (!d) continue;
    const char *label = ir_node_get(c->g, r)->label, *s = ir_dim_sym_name(ir_dim_first_sym(d));
    need_syms(c, ir_dim_syms(d));
    rc = ctx_fail(c, err, n,
                  "%s: a value computed from symbolic dimension '%s' is used as data at run time, which is not "
                  "supported; give it a value with --dim %s=N",
                  label ? label : "a constant", s, s);
  }
  free(live);
  return rc;
}

static int import_model(imp_ctx *c, const Onnx__ModelProto *m, char *err, size_t n) {
  if (!m->graph) return ctx_fail(c, err, n, "the model has no graph");
  int64_t version = -1;
  bool training = false; /* a training-only model has no default opset: its other nodes are refused */
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    training |= o->domain && !strcmp(o->domain, TRAINING_DOMAIN) && o->version == 1;
    if (o->domain && o->domain[0] && strcmp(o->domain, "ai.onnx")) continue;
    if (version >= 0) return ctx_fail(c, err, n, "the model imports the default-domain opset twice");
    version = o->version < 0 ? 0 : o->version;
  }
  if (version < 0 && !m->n_opset_import) version = 1;
  if (version < 0 && training) version = 0;
  else if (version < 1) return ctx_fail(c, err, n, "the model imports no default-domain opset");
  if (version > 18) return ctx_fail(c, err, n, "opset %lld is newer than supported (up to 18)", (long long)version);
  int opset = (int)version;
  const Onnx__GraphProto *gp = m->graph;
  c->gp = gp;
  c->has_syms = model_has_syms(c, gp);
  for (size_t i = 0; i < gp->n_initializer; i++) {
    char e[512];
    ir_ref r = imp_tensor_const(c, gp->initializer[i], e, sizeof e);
    if (r == IR_NONE) return ctx_fail(c, err, n, "initializer %zu: %s", i, e);
    if (lookup(c, gp->initializer[i]->name ? gp->initializer[i]->name : ""))
      return ctx_fail(c, err, n, "initializer %zu: name '%s' is already defined (value names must be unique)", i,
                      gp->initializer[i]->name ? gp->initializer[i]->name : "");
    define(c, gp->initializer[i]->name ? gp->initializer[i]->name : "", r);
    set_half(c, gp->initializer[i]->name ? gp->initializer[i]->name : "", half_of_onnx(gp->initializer[i]->data_type));
    /* the graph holds its own copy: release the decoded bytes now, so a
     * large model is not held twice while the rest is lowered */
    Onnx__TensorProto *t = gp->initializer[i];
    if (t->has_raw_data && t->raw_data.data) {
      free(t->raw_data.data);
      t->raw_data.data = NULL;
      t->raw_data.len = 0;
    }
  }
  if (add_frozen(c, gp, err, n) || add_inputs(c, gp, err, n) || lower_nodes(c, gp, opset, err, n))
    return -1;
  for (size_t i = 0; i < gp->n_output; i++) {
    const char *name = gp->output[i]->name ? gp->output[i]->name : "";
    value *v = lookup(c, name);
    if (!v) return ctx_fail(c, err, n, "graph output '%s' is never produced", name);
    const Onnx__TypeProto *tp = gp->output[i]->type;
    imp_io_value *ov = c->opt->io && i < (size_t)c->opt->io->nout ? &c->opt->io->out[i] : NULL;
    if (ov) ov->first = ir_output_count(c->g), ov->count = 1, ov->present = true;
    if (imp_is_seq(v->ref) || imp_io_kind_of(tp, NULL, NULL) != IMP_IO_TENSOR) {
      char e[512];
      if (imp_seq_output(c, gp, name, v->ref, tp, ov, e, sizeof e)) return ctx_fail(c, err, n, "graph output '%s': %s", name, e);
      continue;
    }
    ir_dtype h = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type
                     ? half_of_onnx(tp->tensor_type->elem_type) : IR_F32;
    if (h == IR_F32 && v->half) h = (ir_dtype)v->half;
    bool store_half = h != IR_F32 && ir_node_get(c->g, v->ref)->dtype == IR_F32; /* converted on store */
    ir_mark_output(c->g, store_half ? ir_cast(c->g, v->ref, h) : v->ref, name);
  }
  for (size_t i = 0; i < gp->n_output; i++) { /* value-dependent shapes: their lengths come last */
    const char *name = gp->output[i]->name ? gp->output[i]->name : "";
    value *v = lookup(c, name);
    int k = 0; /* its entry output (sequences make several): the one of its name */
    while (v->dyn && k < ir_output_count(c->g) && strcmp(ir_output_name(c->g, k), name)) k++;
    if (v->dyn && ir_mark_output_len(c->g, k, v->dyn_axis, v->len))
      return ctx_fail(c, err, n, "graph output '%s': %s", gp->output[i]->name, ir_error(c->g));
  }
  if (!gp->n_output) return ctx_fail(c, err, n, "the graph has no outputs");
  return c->has_syms ? check_sym_data(c, err, n) : 0;
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
