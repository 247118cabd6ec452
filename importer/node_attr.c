/* node_attr.c — the node API's readers: attributes, inputs whose values
 * must be known at compile time (ints, dims, floats), axes, shapes and
 * dtypes. Split from load.c; the value table and the model stay there. */
#include "importer_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const Onnx__AttributeProto *imp_attr(const imp_node *n, const char *name) {
  for (size_t i = 0; i < n->proto->n_attribute; i++)
    if (n->proto->attribute[i]->name && !strcmp(n->proto->attribute[i]->name, name))
      return n->proto->attribute[i];
  return NULL;
}

bool imp_has_attr(const imp_node *n, const char *name) {
  return imp_attr(n, name) != NULL;
}

static const Onnx__AttributeProto *typed_attr(imp_node *n, const char *name, Onnx__AttributeProto__AttributeType t) {
  const Onnx__AttributeProto *a = imp_attr(n, name);
  if (a && a->has_type && a->type != t) {
    imp_fail(n, "attribute '%s' has the wrong type (%d, expected %d)", name, (int)a->type, (int)t);
    return NULL;
  }
  return a;
}

int64_t imp_attr_i(imp_node *n, const char *name, int64_t def) {
  const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  if (a && imp_check_value(n, a->i)) return def;
  return a ? a->i : def;
}

double imp_attr_f(imp_node *n, const char *name, double def) {
  const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  return a ? a->f : def;
}

const char *imp_attr_s(imp_node *n, const char *name, const char *def) {
  const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  if (!a) return def;
  return ir_strndup(n->g, (const char *)a->s.data, a->s.len);
}

int imp_attr_ints(imp_node *n, const char *name, int64_t *out, int max) {
  const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  if (!a) return -1;
  if (a->n_ints > (size_t)max) return imp_fail(n, "attribute '%s' has too many values (%zu)", name, a->n_ints);
  for (size_t i = 0; i < a->n_ints; i++)
    if (imp_check_value(n, out[i] = a->ints[i])) return -1;
  return (int)a->n_ints;
}

int imp_attr_ints_n(imp_node *n, const char *name, int cnt, int64_t *out, int64_t def) {
  int64_t v[2 * IR_MAX_RANK + 2];
  if (cnt < 0 || cnt > (int)(sizeof v / sizeof *v)) return imp_fail(n, "internal: %d values of '%s'", cnt, name);
  for (int i = 0; i < cnt; i++) out[i] = def;
  if (!imp_has_attr(n, name)) return 0;
  int c = imp_attr_ints(n, name, v, (int)(sizeof v / sizeof *v));
  if (c < 0) return -1; /* the wrong type or too many: recorded */
  if (c != cnt) return imp_fail(n, "attribute '%s' has %d values, expected %d", name, c, cnt);
  memcpy(out, v, sizeof *v * (size_t)cnt);
  return 0;
}

int imp_attr_floats(imp_node *n, const char *name, double *out, int max) {
  const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  if (!a) return -1;
  if (a->n_floats > (size_t)max) return imp_fail(n, "attribute '%s' has too many values (%zu)", name, a->n_floats);
  for (size_t i = 0; i < a->n_floats; i++) out[i] = a->floats[i];
  return (int)a->n_floats;
}

int imp_attr_len(imp_node *n, const char *name) {
  const Onnx__AttributeProto *a = imp_attr(n, name);
  size_t k = !a ? 0 : a->n_ints ? a->n_ints : a->n_floats;
  return !a ? -1 : k > INT_MAX ? INT_MAX : (int)k;
}

ir_ref imp_attr_tensor(imp_node *n, const char *name) {
  const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  if (!a || !a->t) return imp_fail(n, "attribute '%s' (a tensor) is missing", name), IR_NONE;
  char err[512];
  ir_ref r = imp_tensor_const(n->ctx, a->t, err, sizeof err);
  if (r == IR_NONE) imp_fail(n, "%s", err);
  return r;
}

const Onnx__GraphProto *imp_attr_graph(imp_node *n, const char *name) {
  const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
  if (!a || !a->g) return imp_fail(n, "attribute '%s' (a graph) is missing", name), NULL;
  return a->g;
}

static int const_values(imp_node *n, int i, void **data, ir_dtype *t, int max) {
  ir_ref r = imp_in(n, i);
  if (r == IR_NONE) return imp_fail(n, "input %d is missing", i);
  imp_need_value(n, r);
  if (!ir_is_const(n->g, r))
    return imp_fail(n, "input %d ('%s') must be a compile-time constant here", i, n->proto->input[i]);
  const ir_node *x = ir_node_get(n->g, r);
  *t = x->dtype;
  /* Checked before evaluating: a huge constant must not be computed first. */
  if (ir_shape_numel(&x->shape) > max) return imp_fail(n, "input %d has too many values", i);
  if (x->op == IR_ALLOCATE) {
    *data = NULL;
    return (int)ir_shape_numel(&x->shape);
  }
  if (ir_eval(n->g, r, data)) return -1;
  return (int)ir_shape_numel(&x->shape);
}

/* A symbolic value where a plain one is needed: an error naming the symbol. */
static int no_sym_value(imp_node *n, int i, int64_t v) {
  char what[160];
  snprintf(what, sizeof what, "input %d ('%s') depends on a symbolic dimension here", i, n->proto->input[i]);
  return imp_fail_sym(n, v, what);
}

/* The constant values of input i (at most `max`): their count, type and
 * bytes; *data is a converted copy to free, or NULL when src is the
 * weight's own. */
static int const_source(imp_node *n, int i, int max, void **data, ir_dtype *t, const void **src) {
  int cnt = const_values(n, i, data, t, max);
  if (cnt >= 0) *src = *data ? *data : ir_node_get(n->g, imp_in(n, i))->data;
  return cnt;
}

/* The constant input `i` as integers (`ints`) or as floats (`floats`); a
 * symbolic value is refused unless the caller reads dimensions (`dims`). */
static int const_read(imp_node *n, int i, int max, int64_t *ints, double *floats, bool dims) {
  void *data;
  ir_dtype t = IR_F32;
  const void *src;
  int cnt = const_source(n, i, max, &data, &t, &src);
  if (cnt < 0) return -1;
  int rc = cnt;
  for (int k = 0; k < cnt && rc >= 0; k++) {
    int64_t v = ints || t == IR_I64 ? ir_elem_i(t, src, k) : 0;
    if (ints) ints[k] = v;
    else floats[k] = ir_elem_f(t, src, k);
    if (imp_has_syms(n) && !dims && (ints || t == IR_I64) && ir_dim_is_sym(v)) rc = no_sym_value(n, i, v);
  }
  free(data);
  return rc;
}

int imp_const_ints(imp_node *n, int i, int64_t *out, int max) {
  return const_read(n, i, max, out, NULL, false);
}

int imp_const_dims(imp_node *n, int i, int64_t *out, int max) {
  return const_read(n, i, max, out, NULL, true);
}

int imp_const_floats(imp_node *n, int i, double *out, int max) {
  return const_read(n, i, max, NULL, out, false);
}

ir_ref imp_wrap_indices(imp_node *n, ir_ref idx, int64_t v) {
  ir_graph *g = n->g;
  if (idx == IR_NONE) return IR_NONE;
  ir_dtype t = imp_dtype(n, idx);
  if (t != IR_I32 && t != IR_I64)
    return imp_fail(n, "indices of type %s are not supported", ir_dtype_name(t)), IR_NONE;
  idx = ir_cast(g, idx, IR_I64);
  ir_ref neg = ir_binary(g, IR_LT, idx, ir_scalar(g, IR_I64, 0));
  ir_ref size = ir_load_int(g, IR_I64, ir_shape_make(0, NULL), v); /* exact, and may be symbolic */
  /* still out of range after wrapping: the index error, checked on this
   * component against its own axis (not only on a flat offset) */
  return ir_check_index(g, ir_where(g, neg, ir_binary(g, IR_ADD, idx, size), idx), v);
}

int imp_fits_within(imp_node *n, int64_t in, int64_t of, int axis) {
  if (!ir_dim_is_sym(in) && !ir_dim_is_sym(of))
    return in > of ? imp_fail(n, "indices larger than data on axis %d", axis) : 0;
  char why[96];
  snprintf(why, sizeof why, "the indices no larger than the data on axis %d", axis);
  return ir_assume_nonneg(n->g, ir_dim_sub(of, in), why);
}

int imp_axis(imp_node *n, int64_t axis, int rank) {
  if (axis < -rank || axis >= (rank ? rank : 1))
    return imp_fail(n, "axis %lld is out of range for rank %d", (long long)axis, rank);
  return (int)(axis < 0 ? axis + rank : axis);
}

/* Both tolerate IR_NONE (a failed input): the error is already recorded,
 * and the caller sees an empty shape until it checks. */
const ir_shape *imp_shape(imp_node *n, ir_ref r) {
  static const ir_shape none = {0};
  if (r < 0 || r >= ir_graph_count(n->g)) return imp_fail(n, "input is missing"), &none;
  return &ir_node_get(n->g, r)->shape;
}

ir_dtype imp_dtype(imp_node *n, ir_ref r) {
  if (r < 0 || r >= ir_graph_count(n->g)) return imp_fail(n, "input is missing"), IR_F32;
  return ir_node_get(n->g, r)->dtype;
}
