/* graph_inputs.c — the graph's inputs: symbols for their dimensions
 * (--dim), --freeze, sequence inputs, and the needs a specialisation would
 * give. */
#include "load_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
bool imp_ctx_model_has_syms(imp_ctx *c, const Onnx__GraphProto *gp) {
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

void imp_ctx_need_syms(imp_ctx *c, uint32_t mask) {
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
void imp_ctx_need_inputs(imp_ctx *c, ir_ref r) {
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
int imp_ctx_add_frozen(imp_ctx *c, const Onnx__GraphProto *gp, char *err, size_t n) {
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
    if (found && imp_ctx_check_plain(c, t.dtype, t.data, (int64_t)ir_shape_numel(&t.shape), spec, err, n)) {
      imp_tensor_free(&t);
      return -1;
    }
    ir_dtype h = imp_widen_half(&t);
    ir_ref r = found ? ir_const(c->g, name, t.dtype, t.shape, t.data) : IR_NONE;
    imp_tensor_free(&t);
    if (!found) return imp_ctx_fail(c, err, n, "--freeze %s: the graph has no input '%s'", spec, name);
    if (r == IR_NONE) return imp_ctx_fail(c, err, n, "--freeze %s: unsupported tensor", spec);
    imp_ctx_define(c, ir_strdup(c->g, name), r);
    imp_ctx_set_half(c, name, h);
  }
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Graph input names are unique (sorted, then compared with the next). */
static int unique_inputs(imp_ctx *c, const Onnx__GraphProto *gp, char *err, size_t n) {
  const char **names = malloc((gp->n_input + 1) * sizeof *names);
  if (!names) return imp_ctx_fail(c, err, n, "out of memory for %zu graph inputs", gp->n_input);
  for (size_t i = 0; i < gp->n_input; i++) {
    if (!gp->input[i]->name) return free(names), imp_ctx_fail(c, err, n, "graph input %zu has no name", i);
    names[i] = gp->input[i]->name;
  }
  qsort(names, gp->n_input, sizeof *names, cmp_names);
  int rc = 0;
  for (size_t i = 0; i + 1 < gp->n_input && !rc; i++)
    if (!strcmp(names[i], names[i + 1]))
      rc = imp_ctx_fail(c, err, n, "graph input '%s' is declared twice (value names must be unique)", names[i]);
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
    return imp_ctx_fail(c, err, n, "graph input '%s' is declared with element type %d, its initializer is %s", vi->name,
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
  return imp_ctx_fail(c, err, n, "graph input '%s' is declared with another shape (%s) than its initializer %s", vi->name,
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
    return imp_ctx_fail(c, err, n, "graph input '%s' is a sequence or optional: its elements' shapes must be given (--seq)",
                    vi->name);
  char e[512];
  imp_io_value *iv = c->opt->io ? &c->opt->io->in[input_position(gp, i)] : NULL;
  ir_ref r = imp_seq_input(c, gp, vi, spec, iv, e, sizeof e);
  if (r == IR_NONE) return imp_ctx_fail(c, err, n, "graph input '%s': %s", vi->name, e);
  imp_ctx_define(c, vi->name, r);
  return 0;
}

int imp_ctx_add_inputs(imp_ctx *c, const Onnx__GraphProto *gp, char *err, size_t n) {
  if (unique_inputs(c, gp, err, n)) return -1;
  imp_io *io = c->opt->io;
  for (size_t i = 0, pos = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = gp->input[i];
    imp_value *known = imp_ctx_lookup(c, vi->name);
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
      return imp_ctx_fail(c, err, n, "graph input '%s' is not a tensor", vi->name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    int dt = imp_dtype_from_onnx(tt->elem_type);
    if (dt < 0)
      return imp_ctx_fail(c, err, n, "graph input '%s': element type %d is not supported", vi->name, tt->elem_type);
    if (!tt->shape) return imp_ctx_fail(c, err, n, "graph input '%s' has no shape", vi->name);
    if (tt->shape->n_dim > IR_MAX_RANK) return imp_ctx_fail(c, err, n, "graph input '%s': rank too high", vi->name);
    ir_shape s = {.rank = (int)tt->shape->n_dim};
    for (size_t k = 0; k < tt->shape->n_dim; k++) {
      const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
      char buf[128];
      const char *name = dim_name(vi, k, buf, sizeof buf);
      if (!name && d->dim_value >= 0) {
        s.d[k] = d->dim_value;
      } else if (name) {
        int given = dim_value(c, name, &s.d[k]);
        if (given < 0) return imp_ctx_fail(c, err, n, "--dim %s: the value must be a whole number >= 0", name);
        if (!given && (s.d[k] = ir_dim_sym(name)) == IR_DIM_INVALID)
          return imp_ctx_fail(c, err, n, "graph input '%s': more than %d symbolic dimensions", vi->name, IR_MAX_INPUT_SYMS);
      } else {
        return imp_ctx_fail(c, err, n, "graph input '%s': negative dimension %lld", vi->name, (long long)d->dim_value);
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
    if (imp_half_of_onnx(tt->elem_type) != IR_F32) r = ir_cast(c->g, r, IR_F32); /* converted on load */
    if (r == IR_NONE) return imp_ctx_fail(c, err, n, "graph input '%s': %s", vi->name, ir_error(c->g));
    imp_ctx_define(c, vi->name, r);
    imp_ctx_set_half(c, vi->name, imp_half_of_onnx(tt->elem_type));
  }
  return 0;
}

