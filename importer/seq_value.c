/* seq_value.c — values of sequence and optional type, whose lengths (and
 * an optional's presence) are known at compile time: a store of tensor
 * lists named by handles (importer_impl.h), graph inputs made from the
 * elements' shapes the caller gives, graph outputs as their elements, and
 * the element-wise select of an If whose condition is known at run time. */
#include "importer_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds of the store: handles stay far from INT_MIN, and a loop that
 * builds a sequence per iteration (quadratic in items) stays small. */
#define MAX_SEQS (1 << 20)
#define MAX_ITEMS (1 << 24)
/* Elements of one sequence given on the command line. */
#define MAX_GIVEN 4096

struct imp_seqs {
  imp_seq *v;
  int n, cap;
  size_t items;
};

void imp_seqs_free(imp_seqs *s) {
  if (!s) return;
  for (int i = 0; i < s->n; i++) free(s->v[i].items);
  free(s->v);
  free(s);
}

/* The new entry's handle, or IR_NONE with `err` (the store's bounds). */
static ir_ref store_add(imp_seqs **sp, const ir_ref *items, int cnt, int elem_type, bool none, char *err,
                        size_t errlen) {
  if (!*sp && !(*sp = calloc(1, sizeof **sp))) abort();
  imp_seqs *s = *sp;
  if (s->n == MAX_SEQS || cnt < 0 || s->items + (size_t)cnt > MAX_ITEMS)
    return snprintf(err, errlen, "more than %d sequences or %d sequence elements in the model", MAX_SEQS, MAX_ITEMS),
           IR_NONE;
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 64;
    imp_seq *v = realloc(s->v, (size_t)cap * sizeof *v);
    if (!v) abort();
    s->v = v, s->cap = cap;
  }
  imp_seq *q = &s->v[s->n];
  *q = (imp_seq){.n = cnt, .elem_type = elem_type, .none = none};
  q->items = malloc((size_t)(cnt ? cnt : 1) * sizeof *q->items);
  if (!q->items) abort();
  if (cnt) memcpy(q->items, items, (size_t)cnt * sizeof *items);
  s->items += (size_t)cnt;
  return IMP_SEQ_BASE - s->n++;
}

static const imp_seq *store_get(imp_seqs *s, ir_ref r) {
  int k = IMP_SEQ_BASE - r;
  return imp_is_seq(r) && s && k < s->n ? &s->v[k] : NULL;
}

ir_ref imp_seq_new(imp_node *n, const ir_ref *items, int cnt, int elem_type, bool none) {
  char err[160];
  for (int i = 0; i < cnt; i++)
    if (items[i] < 0 || items[i] >= ir_graph_count(n->g))
      return imp_fail(n, "a sequence element is missing or is not a tensor"), IR_NONE;
  ir_ref r = store_add(imp_ctx_seqs(n->ctx), items, cnt, elem_type, none, err, sizeof err);
  if (r == IR_NONE) imp_fail(n, "%s", err);
  return r;
}

const imp_seq *imp_seq_of(imp_node *n, ir_ref r) {
  const imp_seq *q = store_get(*imp_ctx_seqs(n->ctx), r);
  if (!q && r != IR_NONE) imp_fail(n, "a sequence or optional is expected, not a tensor");
  return q;
}

/* One shape "[D,D,...]" at *p (advanced past it); -1 when malformed. */
static int parse_shape(const char **p, ir_shape *s) {
  const char *c = *p;
  *s = (ir_shape){0};
  if (*c++ != '[') return -1;
  while (*c != ']') {
    if (s->rank == IR_MAX_RANK || *c < '0' || *c > '9') return -1;
    char *end;
    long long d = strtoll(c, &end, 10);
    if (d < 0 || d > (1LL << 40)) return -1;
    s->d[s->rank++] = d;
    c = end;
    if (*c == ',') c++;
    else if (*c != ']') return -1;
  }
  *p = c + 1;
  return 0;
}

/* Is `name` one of the graph's declared inputs (outputs)? */
static bool declared(const Onnx__ValueInfoProto *const *v, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (v[i]->name && !strcmp(v[i]->name, name)) return true;
  return false;
}

ir_ref imp_seq_input(imp_ctx *c, const Onnx__GraphProto *gp, const Onnx__ValueInfoProto *vi, const char *spec,
                     imp_io_value *iv, char *err, size_t errlen) {
  ir_graph *g = imp_ctx_graph(c);
  bool of_seq;
  int et;
  imp_io_kind kind = imp_io_kind_of(vi->type, &of_seq, &et);
  int dt = imp_dtype_from_onnx(et);
  if (dt < 0 || dt == IR_F16 || dt == IR_BF16)
    return snprintf(err, errlen, "element type %d is not supported in a sequence or optional", et), IR_NONE;
  if (strlen(vi->name) > 1000) return snprintf(err, errlen, "the name is longer than 1000 bytes"), IR_NONE;
  if (iv) iv->present = strcmp(spec, "none") != 0;
  if (!strcmp(spec, "none")) {
    if (kind != IMP_IO_OPTIONAL) return snprintf(err, errlen, "'none' is given, but it is a sequence"), IR_NONE;
    return store_add(imp_ctx_seqs(c), NULL, 0, et, true, err, errlen);
  }
  ir_ref *items = malloc(MAX_GIVEN * sizeof *items);
  if (!items) abort();
  int cnt = 0;
  ir_ref r = IR_NONE;
  const char *p = spec;
  while (*p && cnt < MAX_GIVEN) {
    ir_shape s;
    char name[1100];
    int64_t bytes = (int64_t)ir_dtype_size((ir_dtype)dt);
    if (parse_shape(&p, &s) || (*p && *p++ != ',')) {
      snprintf(err, errlen, "'%.100s' is not a list of shapes such as [2,3],[4]", spec);
      goto done;
    }
    for (int k = 0; k < s.rank; k++)
      if (ir_mul_ov(bytes, s.d[k], &bytes) || (size_t)bytes > imp_mem_limit()) {
        snprintf(err, errlen, "element %d is larger than the memory limit", cnt);
        goto done;
      }
    if (kind == IMP_IO_OPTIONAL && !of_seq) snprintf(name, sizeof name, "%s", vi->name);
    else snprintf(name, sizeof name, "%.1000s[%d]", vi->name, cnt);
    if (strcmp(name, vi->name) && declared((const Onnx__ValueInfoProto *const *)gp->input, gp->n_input, name)) {
      snprintf(err, errlen, "its element %d would be named '%.200s', as another graph input is", cnt, name);
      goto done;
    }
    if ((items[cnt++] = ir_input(g, name, (ir_dtype)dt, s)) == IR_NONE) {
      snprintf(err, errlen, "%s", ir_error(g));
      goto done;
    }
  }
  if (*p) {
    snprintf(err, errlen, "more than %d elements", MAX_GIVEN);
    goto done;
  }
  char note[1200];
  if (kind == IMP_IO_OPTIONAL && !of_seq) {
    if (cnt != 1) snprintf(err, errlen, "an optional tensor is given %d shapes", cnt);
    else r = items[0];
    goto done;
  }
  snprintf(note, sizeof note, "%s input '%.500s': %d tensors, the inputs %.500s[K], K < %d",
           kind == IMP_IO_OPTIONAL ? "optional sequence" : "sequence", vi->name, cnt, vi->name, cnt);
  ir_add_note(g, note);
  r = store_add(imp_ctx_seqs(c), items, cnt, et, false, err, errlen);
done:
  free(items);
  return r;
}

int imp_seq_output(imp_ctx *c, const Onnx__GraphProto *gp, const char *name, ir_ref r, const Onnx__TypeProto *tp,
                   imp_io_value *io, char *err, size_t errlen) {
  ir_graph *g = imp_ctx_graph(c);
  const imp_seq *q = store_get(*imp_ctx_seqs(c), r);
  imp_io_kind kind = imp_io_kind_of(tp, NULL, NULL);
  if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) kind = q && q->none ? IMP_IO_OPTIONAL : q ? IMP_IO_SEQUENCE : kind;
  if (kind == IMP_IO_TENSOR && q) return snprintf(err, errlen, "it is a sequence or optional, the model declares a tensor"), -1;
  if (kind == IMP_IO_SEQUENCE && (!q || q->none))
    return snprintf(err, errlen, "it is %s, the model declares a sequence", q ? "an empty optional" : "a tensor"), -1;
  if (strlen(name) > 1000) return snprintf(err, errlen, "the name is longer than 1000 bytes"), -1;
  if (io) io->kind = kind, io->present = !q || !q->none, io->of_seq = q && !q->none, io->count = 0;
  if (!q) { /* an optional that holds a tensor */
    if (io) io->count = 1;
    return ir_mark_output(g, r, name) < 0 ? (snprintf(err, errlen, "%s", ir_error(g)), -1) : 0;
  }
  for (int k = 0; k < q->n; k++) {
    char el[1100];
    snprintf(el, sizeof el, "%.1000s[%d]", name, k);
    if (declared((const Onnx__ValueInfoProto *const *)gp->output, gp->n_output, el))
      return snprintf(err, errlen, "its element %d would be named '%.200s', as another graph output is", k, el), -1;
    if (ir_mark_output(g, q->items[k], el) < 0) return snprintf(err, errlen, "%s", ir_error(g)), -1;
  }
  if (io) io->count = q->n;
  char note[1200];
  if (q->none) snprintf(note, sizeof note, "optional output '%.1000s': empty, no output", name);
  else snprintf(note, sizeof note, "%s output '%.500s': %d tensors, the outputs %.500s[K], K < %d",
                kind == IMP_IO_OPTIONAL ? "optional sequence" : "sequence", name, q->n, name, q->n);
  ir_add_note(g, note);
  return 0;
}

ir_ref imp_seq_where(imp_node *n, ir_ref cond, ir_ref a, ir_ref b) {
  const imp_seq *qa = store_get(*imp_ctx_seqs(n->ctx), a), *qb = store_get(*imp_ctx_seqs(n->ctx), b);
  bool same = qa && qb && qa->none == qb->none && qa->n == qb->n;
  for (int k = 0; same && k < qa->n; k++)
    same = ir_shape_eq(imp_shape(n, qa->items[k]), imp_shape(n, qb->items[k])) &&
           imp_dtype(n, qa->items[k]) == imp_dtype(n, qb->items[k]);
  if (!same) { /* the structure depends on the condition: it must be known */
    int64_t v;
    if (imp_const_ints(n, 0, &v, 1) < 0) return IR_NONE;
    return imp_fail(n, "the branches give sequences of different lengths or shapes"), IR_NONE;
  }
  if (qa->none) return a;
  ir_ref *w = malloc((size_t)(qa->n ? qa->n : 1) * sizeof *w);
  if (!w) abort();
  for (int k = 0; k < qa->n; k++) w[k] = ir_where(n->g, cond, qa->items[k], qb->items[k]);
  ir_ref r = ir_failed(n->g) ? IR_NONE : imp_seq_new(n, w, qa->n, qa->elem_type, false);
  free(w);
  return r;
}
