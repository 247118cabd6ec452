/* lower_nodes.c — lowering a graph's nodes in dependency order: one
 * node through its op family, its outputs checked, small constants folded. */
#include "load_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Refuses a symbolic input (shape, or values read from a shape) to an op
 * whose lowering does not handle symbolic dimensions: one check for every
 * op not marked IMP_SYM. */
static int check_symbolic(imp_node *n) {
  for (int i = 0; i < imp_nin(n); i++)
    if (imp_need_static(n, i)) return -1;
  return 0;
}

/* The symbols the node's inputs depend on, as a bit set (for error hints
 * and the needs). */
static uint32_t node_syms(imp_ctx *c, const Onnx__NodeProto *np) {
  uint32_t m = 0;
  for (size_t i = 0; i < np->n_input; i++) {
    imp_value *v = np->input[i][0] ? imp_ctx_lookup(c, np->input[i]) : NULL;
    if (!v || v->ref < 0 || v->ref >= ir_graph_count(c->g)) continue;
    const ir_node *x = ir_node_get(c->g, v->ref);
    for (int k = 0; k < x->shape.rank; k++) m |= ir_dim_syms(x->shape.d[k]);
    m |= ir_dim_syms(imp_sym_in_data(x));
  }
  return m;
}

/* A refusal that names no symbol in a graph the symbolic build made
 * assumptions about (x[1:3] of a symbolic axis assumed to hold 3, so that
 * a later x[0:-2:-1] is empty) may hold only under them: it needs every
 * symbol (run and verify compile for the inputs; compile asks for them
 * all), and the hint names the last assumption. */
static void assumed_hint(imp_ctx *c, char *hint, size_t n) {
  int na = ir_assumption_count(c->g);
  if (na <= 0) return;
  for (int i = 0; i < ir_sym_count(c->g); i++) imp_ctx_need_syms(c, ir_dim_base_syms(1u << ir_sym(c->g, i)));
  char d[160];
  ir_dim_str(ir_assumption(c->g, na - 1, NULL), d, sizeof d);
  snprintf(hint, n, " (under the symbolic build's assumption %s >= 0%s)", d, na > 1 ? ", among others" : "");
}

static int lower_node(imp_ctx *c, const Onnx__NodeProto *np, int opset, char *err, size_t n) {
  const char *op = np->op_type ? np->op_type : "";
  const char *name = np->name && np->name[0] ? np->name : (np->n_output ? np->output[0] : "?");
  imp_node node = {c, c->g, np, opset};
  unsigned half_mode = c->half_mode; /* read before sub-graphs set it for their nodes */
  imp_lower_fn fn = NULL;
  const imp_op_entry *e = NULL;
  bool ms = np->domain && !strcmp(np->domain, "com.microsoft");
  bool training = np->domain && !strcmp(np->domain, TRAINING_DOMAIN);
  if (np->domain && np->domain[0] && strcmp(np->domain, "ai.onnx") && !ms && !training)
    snprintf(c->nodeerr, sizeof c->nodeerr, "domain '%s' is not supported", np->domain), c->node_failed = true;
  else if (!training && !ms && opset < 1) /* a model that imports the training domain only */
    snprintf(c->nodeerr, sizeof c->nodeerr, "the model imports no default-domain opset"), c->node_failed = true;
  else if (!(e = imp_find_op(op, ms ? IMP_MS : training ? IMP_TRAINING : 0)))
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
    bool twice = imp_ctx_lookup(c, np->output[i]) != NULL;
    for (int j = 0; j < i; j++) twice |= !strcmp(np->output[j], np->output[i]);
    if (twice) imp_fail(&node, "output '%s' is already defined (value names must be unique)", np->output[i]);
  }
  /* a value-dependent length reaching an op that does not read it itself:
   * another lowering, or the length passed on (or refused) after it */
  bool pass = fn && !c->node_failed && !(e->flags & IMP_DYN) && imp_any_in_len(&node);
  imp_lower_fn own = pass ? imp_dyn_lowering(&node) : NULL;
  if (own) fn = own, pass = false;
  ir_dtype narrow = IR_I64;
  if (fn && !c->node_failed && c->has_syms && imp_narrow_begin(&node, &narrow)) fn = NULL;
  imp_round_inputs(&node, fn && (half_mode & IMP_HALF_ROUND_IN));
  if (fn && !c->node_failed) fn(&node);
  if (pass && !c->node_failed && !ir_failed(c->g)) imp_dyn_pass(&node, e->lower);
  imp_round_inputs(&node, false);
  imp_narrow_restore(&node);
  ir_dtype half = fn && !c->node_failed ? imp_node_half(&node) : IR_F32;
  for (int i = 0; !c->node_failed && !ir_failed(c->g) && i < imp_nout(&node); i++) {
    if (!imp_has_out(&node, i)) continue;
    imp_value *v = imp_ctx_lookup(c, np->output[i]);
    if (!v) {
      imp_fail(&node, "output %d ('%s') was not produced", i, np->output[i]);
      break;
    }
    if (imp_is_seq(v->ref)) continue; /* its tensors were checked as outputs of their nodes */
    imp_mark_half(&node, v, half, half_mode);
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
    if (narrow != IR_I64 && v->ref != IR_NONE && (v->ref = imp_narrow_out(&node, v, narrow)) != IR_NONE)
      v->ref = fold(c, v->ref);
  }
  if (c->node_failed || ir_failed(c->g)) {
    const char *msg = c->node_failed ? c->nodeerr : ir_error(c->g);
    uint32_t syms = strstr(msg, "--dim") ? 0 : ir_dim_base_syms(node_syms(c, np));
    int k = -1;
    for (int b = 0; b < IR_MAX_SYMS && k < 0; b++)
      if (syms >> b & 1) k = b;
    imp_ctx_need_syms(c, syms);
    char hint[400] = "";
    if (k >= 0)
      snprintf(hint, sizeof hint, " (the sizes depend on symbol '%s'; give it a value with --dim %s=N)",
               ir_dim_sym_name(k), ir_dim_sym_name(k));
    else if (!strstr(msg, "--dim"))
      assumed_hint(c, hint, sizeof hint);
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
int imp_ctx_lower_nodes(imp_ctx *c, const Onnx__GraphProto *gp, int opset, char *err, size_t n) {
  size_t nn = gp->n_node, nedges = 0;
  imp_ctx prod = {0}; /* value name -> producing node index (as ir_ref) */
  for (size_t i = nn; i-- > 0;)
    for (size_t k = 0; k < gp->node[i]->n_output; k++)
      if (gp->node[i]->output[k][0] && !imp_ctx_lookup(c, gp->node[i]->output[k]))
        imp_ctx_define(&prod, gp->node[i]->output[k], (ir_ref)i); /* reversed: the first producer wins */
  for (size_t i = 0; i < nn; i++) nedges += gp->node[i]->n_input;
  for (size_t k = 0; k < gp->n_output; k++) {
    imp_value *v = gp->output[k]->name ? imp_ctx_lookup(&prod, gp->output[k]->name) : NULL;
    if (v) v->graph_out = true;
  }
  size_t *indeg = calloc(nn + 1, sizeof *indeg), *first = calloc(nn + 2, sizeof *first);
  size_t *edges = malloc((nedges + 1) * sizeof *edges), *heap = malloc((nn + 1) * sizeof *heap), nheap = 0;
  int rc = 0;
  if (!indeg || !first || !edges || !heap || (nn && nn > (size_t)INT32_MAX)) {
    rc = imp_ctx_fail(c, err, n, "out of memory ordering %zu nodes", nn);
    goto done;
  }
  /* edges producer -> consumer, grouped by producer (counting sort) */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < nn; i++)
      for (size_t k = 0; k < gp->node[i]->n_input; k++) {
        const char *in = gp->node[i]->input[k];
        imp_value *v = in[0] && !imp_ctx_lookup(c, in) ? imp_ctx_lookup(&prod, in) : NULL;
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
      if (gp->node[i]->input[k][0] && !imp_ctx_lookup(c, gp->node[i]->input[k])) missing = gp->node[i]->input[k];
    if (missing) continue; /* an input nobody produces: reported below */
    c->half_mode = imp_ort_half_mode(c, &prod, gp, i, edges, first);
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
        if (!np->input[k][0] || imp_ctx_lookup(c, np->input[k])) continue;
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
int imp_ctx_check_sym_data(imp_ctx *c, char *err, size_t n) {
  char *live = ir_live_nodes(c->g);
  int rc = 0;
  for (int r = 0; r < ir_graph_count(c->g) && !rc; r++) {
    int64_t d = live[r] ? imp_sym_in_data(ir_node_get(c->g, r)) : 0;
    if (!d) continue;
    const char *label = ir_node_get(c->g, r)->label, *s = ir_dim_sym_name(ir_dim_first_sym(d));
    imp_ctx_need_syms(c, ir_dim_syms(d));
    rc = imp_ctx_fail(c, err, n,
                  "%s: a value computed from symbolic dimension '%s' is used as data at run time, which is not "
                  "supported; give it a value with --dim %s=N",
                  label ? label : "a constant", s, s);
  }
  free(live);
  return rc;
}

