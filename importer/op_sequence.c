/* op_sequence.c — sequence and optional ops, with lengths and presence
 * known at compile time (seq_value.c holds the values): each op builds a
 * new list of tensors from its inputs' lists, so no code is generated for
 * the sequences themselves, only for the tensors in them. Positions must
 * be compile-time constants (run and verify freeze the inputs they come
 * from). */
#include "importer_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More elements than this in one sequence are refused (SplitToSequence
 * into single rows of a long axis, an unrolled loop's inserts). */
#define MAX_SEQ_LEN 4096

/* Input `i` as a sequence (not an empty optional). */
static const imp_seq *seq_in(imp_node *n, int i) {
  ir_ref r = imp_in_value(n, i);
  if (r == IR_NONE) return imp_fail(n, "input %d is missing", i), NULL;
  const imp_seq *q = imp_seq_of(n, r);
  if (q && q->none) return imp_fail(n, "input %d is an empty optional, a sequence is expected", i), NULL;
  return q;
}

/* A scalar position from input `i`, wrapped into [0, n + extra) (extra 1:
 * an insertion point, which may be n); `def` when the input is absent. */
static int position(imp_node *n, int i, int len, int extra, int64_t def, int *out) {
  int64_t p = def;
  if (imp_has_in(n, i)) {
    ir_ref r = imp_in(n, i);
    if (r == IR_NONE) return -1;
    if (ir_shape_numel(imp_shape(n, r)) != 1) return imp_fail(n, "the position must have one element");
    if (imp_const_ints(n, i, &p, 1) != 1) return -1;
  }
  if (p < -(int64_t)len || p >= (int64_t)len + extra)
    return imp_fail(n, "position %lld is out of range for a sequence of %d", (long long)p, len);
  *out = (int)(p < 0 ? p + len : p);
  return 0;
}

/* The new list: `q` with `x` inserted at `at` (x IR_NONE: element `at` removed). */
static int set_edited(imp_node *n, const imp_seq *q, int at, ir_ref x, int elem_type) {
  if (x == IR_NONE ? q->n == 0 : q->n >= MAX_SEQ_LEN)
    return imp_fail(n, x == IR_NONE ? "the sequence is empty" : "a sequence of more than %d elements", MAX_SEQ_LEN);
  ir_ref *v = malloc((size_t)(q->n + 1) * sizeof *v);
  if (!v) abort();
  int k = 0;
  for (int j = 0; j <= q->n; j++) {
    if (j == at && x != IR_NONE) v[k++] = x;
    if (j < q->n && !(j == at && x == IR_NONE)) v[k++] = q->items[j];
  }
  ir_ref r = imp_seq_new(n, v, k, elem_type, false);
  free(v);
  return imp_set_out(n, 0, r);
}

/* The ONNX element type of tensor `r`, which must agree with `want` (0: any). */
static int elem_type_of(imp_node *n, ir_ref r, int want) {
  int t = imp_dtype_to_onnx(imp_dtype(n, r));
  if (t <= 0) return imp_fail(n, "a tensor of type %s is not supported in sequences", ir_dtype_name(imp_dtype(n, r)));
  if (want && t != want) return imp_fail(n, "element type %d does not match the sequence's %d", t, want);
  return t;
}

static int lower_sequence_empty(imp_node *n) {
  int t = (int)imp_attr_i(n, "dtype", 1);
  if (imp_dtype_from_onnx(t) < 0) return imp_fail(n, "dtype %d is not supported", t);
  return imp_set_out(n, 0, imp_seq_new(n, NULL, 0, t, false));
}

static int lower_sequence_construct(imp_node *n) {
  int cnt = imp_nin(n), t = 0;
  if (cnt < 1 || cnt > MAX_SEQ_LEN) return imp_fail(n, "%d inputs (1 to %d)", cnt, MAX_SEQ_LEN);
  ir_ref *v = malloc((size_t)cnt * sizeof *v);
  if (!v) abort();
  int rc = 0;
  for (int i = 0; i < cnt && !rc; i++) {
    v[i] = imp_req(n, i);
    rc = v[i] == IR_NONE ? -1 : (t = elem_type_of(n, v[i], t)) < 0;
  }
  if (!rc) rc = imp_set_out(n, 0, imp_seq_new(n, v, cnt, t, false));
  free(v);
  return rc;
}

static int lower_sequence_at(imp_node *n) {
  const imp_seq *q = seq_in(n, 0);
  int at = 0; /* set by position(); initialised for gcc -O3, which cannot see that */
  if (!imp_has_in(n, 1)) return imp_fail(n, "input 1 (the position) is missing");
  if (!q || position(n, 1, q->n, 0, 0, &at)) return -1;
  return imp_set_out(n, 0, q->items[at]);
}

static int lower_sequence_insert(imp_node *n) {
  const imp_seq *q = seq_in(n, 0);
  ir_ref x = imp_req(n, 1);
  int at = 0, t; /* at: as above */
  if (!q || x == IR_NONE || position(n, 2, q->n, 1, q->n, &at)) return -1;
  if ((t = elem_type_of(n, x, q->elem_type)) < 0) return -1;
  return set_edited(n, q, at, x, t);
}

static int lower_sequence_erase(imp_node *n) {
  const imp_seq *q = seq_in(n, 0);
  int at = 0; /* set by position(); initialised for gcc -O3, which cannot see that */
  if (!q || position(n, 1, q->n, 0, -1, &at)) return -1;
  return set_edited(n, q, at, IR_NONE, q->elem_type);
}

static int lower_sequence_length(imp_node *n) {
  const imp_seq *q = seq_in(n, 0);
  int64_t len = q ? q->n : 0;
  return q ? imp_set_out(n, 0, ir_const(n->g, "length", IR_I64, ir_shape_make(0, NULL), &len)) : -1;
}

/* SplitToSequence: pieces of a static axis, as views. */
static int lower_split_to_sequence(imp_node *n) {
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  const ir_shape s = imp_nshape(n, x); /* a copy: the slices below add nodes (the array moves) */
  int axis = imp_axis(n, imp_attr_i(n, "axis", 0), s.rank), t;
  if (axis < 0 || (t = elem_type_of(n, x, 0)) < 0) return -1;
  int64_t dim = s.d[axis], lens[MAX_SEQ_LEN], cnt = 0;
  if (ir_dim_is_sym(dim)) return imp_fail(n, "the split axis has a symbolic size");
  bool keep = true;
  if (!imp_has_in(n, 1)) { /* pieces of 1, squeezed unless keepdims */
    if (dim > MAX_SEQ_LEN) return imp_fail(n, "%lld pieces: at most %d", (long long)dim, MAX_SEQ_LEN);
    for (cnt = 0; cnt < dim; cnt++) lens[cnt] = 1;
    keep = imp_attr_i(n, "keepdims", 1) != 0;
  } else {
    ir_ref sp = imp_in(n, 1);
    if (sp == IR_NONE) return -1;
    int k = imp_const_ints(n, 1, lens, MAX_SEQ_LEN);
    if (k < 0) return -1;
    if (imp_shape(n, sp)->rank == 0) { /* one length: equal pieces, the last shorter */
      int64_t each = lens[0];
      if (each < 1) return imp_fail(n, "split %lld must be positive", (long long)each);
      if ((dim + each - 1) / each > MAX_SEQ_LEN) return imp_fail(n, "more than %d pieces", MAX_SEQ_LEN);
      for (int64_t at = 0; at < dim; at += each) lens[cnt++] = at + each <= dim ? each : dim - at;
    } else {
      int64_t sum = 0;
      for (cnt = 0; cnt < k; cnt++)
        if (lens[cnt] < 0 || ir_add_ov(sum, lens[cnt], &sum)) return imp_fail(n, "split has a negative length");
      if (sum != dim) return imp_fail(n, "split sums to %lld, the axis is %lld", (long long)sum, (long long)dim);
    }
  }
  ir_ref *v = malloc((size_t)(cnt ? cnt : 1) * sizeof *v);
  if (!v) abort();
  int64_t at = 0;
  for (int i = 0; i < cnt; i++) {
    int64_t st[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK];
    for (int k = 0; k < s.rank; k++) step[k] = 1, len[k] = s.d[k];
    st[axis] = at, len[axis] = lens[i], at += lens[i];
    v[i] = ir_view_slice(n->g, x, st, step, len);
    if (!keep) v[i] = ir_view_squeeze(n->g, v[i], axis);
  }
  int rc = ir_failed(n->g) ? -1 : imp_set_out(n, 0, imp_seq_new(n, v, (int)cnt, t, false));
  free(v);
  return rc;
}

static int lower_concat_from_sequence(imp_node *n) {
  const imp_seq *q = seq_in(n, 0);
  if (!q) return -1;
  if (!q->n) return imp_fail(n, "the sequence is empty");
  bool add = imp_attr_i(n, "new_axis", 0) != 0;
  int rank = imp_shape(n, q->items[0])->rank;
  int axis = imp_axis(n, imp_attr_i(n, "axis", 0), rank + add);
  if (axis < 0) return -1;
  ir_ref *v = malloc((size_t)q->n * sizeof *v);
  if (!v) abort();
  for (int i = 0; i < q->n; i++) v[i] = add ? ir_view_unsqueeze(n->g, q->items[i], axis) : q->items[i];
  int rc = imp_set_out(n, 0, imp_concat(n, v, q->n, axis));
  free(v);
  return rc;
}

/* SequenceMap: the body lowered once per element (unrolled), reading
 * element i of every sequence input and the tensor inputs whole. */
#define MAX_MAP_VALUES 64
static int lower_sequence_map(imp_node *n) {
  const Onnx__GraphProto *body = imp_attr_graph(n, "body");
  int nin = imp_nin(n), nout = imp_nout(n), len = -1, rc = 0;
  if (!body) return -1;
  if (nin < 1 || nin > MAX_MAP_VALUES || nout < 1 || nout > MAX_MAP_VALUES)
    return imp_fail(n, "%d inputs and %d outputs (1 to %d each)", nin, nout, MAX_MAP_VALUES);
  const imp_seq *seqs[MAX_MAP_VALUES] = {0};
  ir_ref ins[MAX_MAP_VALUES], outs[MAX_MAP_VALUES];
  for (int i = 0; i < nin; i++) {
    if ((ins[i] = imp_in_value(n, i)) == IR_NONE) return imp_fail(n, "input %d is missing", i);
    if (!imp_is_seq(ins[i])) continue;
    if (!(seqs[i] = seq_in(n, i))) return -1;
    if (len >= 0 && seqs[i]->n != len)
      return imp_fail(n, "the sequences differ in length (%d and %d)", len, seqs[i]->n);
    len = seqs[i]->n;
  }
  if (!seqs[0]) return imp_fail(n, "input 0 must be a sequence");
  ir_ref *res = malloc((size_t)nout * (size_t)(len ? len : 1) * sizeof *res);
  if (!res) abort();
  for (int e = 0; e < len && !rc; e++) {
    char what[64];
    for (int i = 0; i < nin; i++)
      if (seqs[i]) ins[i] = seqs[i]->items[e];
    snprintf(what, sizeof what, "body (element %d)", e);
    rc = imp_lower_subgraph(n, body, what, ins, nin, outs, nout);
    for (int k = 0; k < nout && !rc; k++) {
      if (imp_is_seq(outs[k])) rc = imp_fail(n, "output %d of the body is not a tensor", k);
      res[k * len + e] = outs[k];
    }
  }
  for (int k = 0; k < nout && !rc; k++) {
    int t = len ? elem_type_of(n, res[k * len], 0) : seqs[0]->elem_type;
    rc = t < 0 ? -1 : imp_set_out(n, k, imp_seq_new(n, res + k * len, len, t, false));
  }
  free(res);
  return rc;
}

/* Optional: its input (the optional holds it), or an empty optional of
 * the `type` attribute. */
static int lower_optional(imp_node *n) {
  if (imp_has_in(n, 0)) {
    ir_ref r = imp_in_value(n, 0);
    return r == IR_NONE ? -1 : imp_set_out(n, 0, r);
  }
  const Onnx__TypeProto *tp = NULL;
  for (size_t i = 0; i < n->proto->n_attribute; i++)
    if (n->proto->attribute[i]->name && !strcmp(n->proto->attribute[i]->name, "type")) tp = n->proto->attribute[i]->tp;
  if (!tp) return imp_fail(n, "an Optional without input needs the attribute 'type'");
  int et;
  imp_io_kind_of(tp, NULL, &et);
  return imp_set_out(n, 0, imp_seq_new(n, NULL, 0, et, true));
}

/* Input 0 as an optional: present (its value in *r) or not. */
static int optional_in(imp_node *n, ir_ref *r, bool *present) {
  *present = false;
  if (!imp_has_in(n, 0)) return 0; /* opset 18: no input is an empty optional */
  if ((*r = imp_in_value(n, 0)) == IR_NONE) return -1;
  const imp_seq *q = imp_is_seq(*r) ? imp_seq_of(n, *r) : NULL;
  *present = !q || !q->none;
  return 0;
}

static int lower_optional_has_element(imp_node *n) {
  ir_ref r;
  bool present;
  if (optional_in(n, &r, &present)) return -1;
  uint8_t b = present;
  return imp_set_out(n, 0, ir_const(n->g, "has_element", IR_BOOL, ir_shape_make(0, NULL), &b));
}

static int lower_optional_get_element(imp_node *n) {
  ir_ref r;
  bool present;
  if (optional_in(n, &r, &present)) return -1;
  if (!present) return imp_fail(n, "the optional is empty");
  return imp_set_out(n, 0, r);
}

const imp_op_entry imp_ops_sequence[] = {
    {"SequenceEmpty", lower_sequence_empty, 0},
    {"SequenceConstruct", lower_sequence_construct, IMP_SYM},
    {"SequenceAt", lower_sequence_at, IMP_SYM},
    {"SequenceInsert", lower_sequence_insert, IMP_SYM},
    {"SequenceErase", lower_sequence_erase, IMP_SYM},
    {"SequenceLength", lower_sequence_length, IMP_SYM},
    {"SplitToSequence", lower_split_to_sequence, 0},
    {"ConcatFromSequence", lower_concat_from_sequence, IMP_SYM},
    {"SequenceMap", lower_sequence_map, IMP_SYM},
    {"Optional", lower_optional, IMP_SYM},
    {"OptionalHasElement", lower_optional_has_element, IMP_SYM},
    {"OptionalGetElement", lower_optional_get_element, IMP_SYM},
    {NULL, NULL, 0},
};
