/* sink_region.c — element-wise work moved in front of the view that selects its
 * input.
 *
 * A convolution over flattened padded rows (importer/conv_window.c, the wide
 * forms) computes a wide result P whose wrapped columns are never read; the
 * output is a strided view V of P. An activation after it (Relu, HardSwish,
 * Sigmoid, ...) was a kernel of its own over V: a pass over the output in
 * 7- or 14-element rows, which gcc vectorises badly. Element-wise f gives
 * f(P)[view(i)] = f(P[view(i)]) for every unmasked view, so f is computed
 * over P instead (fused into the kernel that makes P, over its long rows)
 * and the consumers read the same view of f(P). */
#include "ir_impl.h"

#include <stdlib.h>
#include <string.h>

/* Ops that may move onto the wide result (here and in sink.c): element-wise,
 * and harmless on the values nobody reads (no integer division, which traps
 * on a zero, no conversion to an integer type, undefined out of range). */
bool ir_sinkable_op(const ir_graph *g, const ir_node *n) {
  if (n->reduce) return false;
  switch (n->op) {
  case IR_NEG: case IR_RECIP: case IR_SQRT: case IR_EXP2: case IR_LOG2: case IR_SIN: case IR_NOT:
  case IR_ADD: case IR_MUL: case IR_MAX: case IR_AND: case IR_OR: case IR_XOR: case IR_LT:
  case IR_NEQ: case IR_WHERE:
    return true;
  case IR_CAST:
    return ir_dtype_is_float(n->dtype) && ir_dtype_is_float(ir_node_get(g, n->src[0])->dtype);
  default:
    return false;
  }
}

/* A view that selects part of a single-use computed value: unmasked, not
 * indexed, static, and P at most twice as large as V (the wasted work);
 * or reads all of it in place as another shape (a 1x1 convolution over
 * its positions flattened, [N, M, H*W] read as [N, M, H, W]: an epilogue
 * after that split is a pass of its own, the kernel's loops cannot follow
 * it). */
static bool selecting(const ir_graph *g, ir_ref v, const int *uses) {
  const ir_node *n = ir_node_get(g, v);
  if (n->op != IR_VIEW || n->view.masked || n->view.gather) return false;
  ir_ref p = n->src[0];
  const ir_node *pn = ir_node_get(g, p);
  if (pn->op == IR_ALLOCATE || pn->op == IR_LOAD || pn->op == IR_VIEW || pn->op == IR_INDEX_COMPONENTS ||
      uses[p] != 1 || !ir_shape_is_static(&n->shape) || !ir_shape_is_static(&pn->shape))
    return false;
  int64_t nv = ir_shape_numel(&n->shape), np = ir_shape_numel(&pn->shape);
  return (np > nv && np / 2 <= nv) || ir_view_is_split_reshape(&n->view, &pn->shape);
}

/* May `s`, an operand of region member `n` that is no member of a region,
 * come along into region `r`? Constants always (refilled at P's shape);
 * when the region's view is an in-place reshape, also a computed or
 * stored value of n's own shape (a residual added after the convolution),
 * read as P's shape through a reshape of its own. Not a view: its reshape
 * might need a copy. */
static bool operand_ok(const ir_graph *g, ir_ref s, const ir_node *n, ir_ref r) {
  const ir_node *sn = ir_node_get(g, s), *v = ir_node_get(g, r);
  if (sn->op == IR_LOAD) return true;
  return sn->op != IR_VIEW && sn->op != IR_INDEX_COMPONENTS && ir_shape_eq(&sn->shape, &n->shape) &&
         ir_view_is_split_reshape(&v->view, &ir_node_get(g, v->src[0])->shape);
}

/* The copy of region member `r` over P's shape: sources mapped by `to`,
 * constants (LOAD nodes, broadcast) refilled at P's shape. */
static ir_ref clone_over(ir_graph *g, ir_ref r, const ir_ref *to, const ir_shape *ps) {
  ir_node n = *ir_node_get(g, r);
  n.shape = *ps;
  n.label = ir_node_get(g, r)->label;
  for (int k = 0; k < n.nsrc; k++) {
    ir_ref s = n.src[k];
    const ir_node *sn = ir_node_get(g, s);
    if (sn->op == IR_LOAD) {
      ir_node c = *sn;
      c.shape = *ps;
      n.src[k] = ir_add_node(g, &c);
    } else {
      n.src[k] = to[s] != IR_NONE ? to[s] : ir_view_reshape(g, s, *ps); /* an operand from outside */
    }
    if (n.src[k] == IR_NONE) return IR_NONE;
  }
  return ir_add_node(g, &n);
}

int ir_rewrite_sink_regions(ir_graph *g) {
  int nold = ir_graph_count(g), count = 0;
  int *uses = calloc((size_t)nold, sizeof *uses), *reg = malloc((size_t)nold * sizeof *reg);
  ir_ref *to = malloc((size_t)nold * sizeof *to), *view_of = malloc((size_t)nold * sizeof *view_of);
  bool *outside = calloc((size_t)nold, sizeof *outside);
  if (!uses || !reg || !to || !view_of || !outside) {
    free(uses), free(reg), free(to), free(view_of), free(outside);
    return ir_fail(g, "out of memory"), 0;
  }
  char *live = ir_live_nodes(g);
  if (!live) {
    free(uses), free(reg), free(to), free(view_of), free(outside);
    return ir_fail(g, "out of memory"), 0;
  }
  /* uses by live nodes: a composed view leaves its intermediate views dead */
  for (int i = 0; i < nold; i++) {
    const ir_node *n = ir_node_get(g, i);
    for (int k = 0; k < n->nsrc && live[i]; k++) uses[n->src[k]]++;
  }
  free(live);
  for (int i = 0; i < ir_output_count(g); i++) uses[ir_output(g, i)]++;
  /* one sweep in topological order: a view starts a region (reg = its
   * own ref); a sinkable node whose computed sources all lie in one
   * region joins it (constants are refilled) */
  for (int i = 0; i < nold; i++) {
    const ir_node *n = ir_node_get(g, i);
    reg[i] = -1, to[i] = IR_NONE, view_of[i] = IR_NONE;
    if (selecting(g, i, uses)) {
      reg[i] = i;
      continue;
    }
    if (!ir_sinkable_op(g, n)) continue;
    int r = -1;
    bool ok = true;
    for (int k = 0; k < n->nsrc && ok; k++) {
      ir_ref s = n->src[k];
      if (reg[s] < 0) continue;
      ok = r < 0 || reg[s] == r;
      r = reg[s];
    }
    for (int k = 0; k < n->nsrc && ok && r >= 0; k++)
      ok = reg[n->src[k]] >= 0 || operand_ok(g, n->src[k], n, r);
    if (ok && r >= 0) reg[i] = r;
  }
  /* members read from outside their region (or graph outputs) get a view */
  for (int i = 0; i < nold; i++) {
    const ir_node *n = ir_node_get(g, i);
    for (int k = 0; k < n->nsrc; k++)
      if (reg[n->src[k]] >= 0 && reg[n->src[k]] != reg[i]) outside[n->src[k]] = true;
  }
  for (int i = 0; i < ir_output_count(g); i++)
    if (reg[ir_output(g, i)] >= 0) outside[ir_output(g, i)] = true;
  for (int i = 0; i < nold && !ir_failed(g); i++) {
    int r = reg[i];
    if (r < 0 || r == i) continue;
    const ir_node *v = ir_node_get(g, r);
    if (to[r] == IR_NONE) to[r] = v->src[0];
    ir_shape ps = ir_node_get(g, v->src[0])->shape;
    to[i] = clone_over(g, i, to, &ps);
    if (to[i] == IR_NONE || !outside[i]) continue;
    ir_node w = *ir_node_get(g, r);
    w.dtype = ir_node_get(g, i)->dtype;
    w.src[0] = to[i];
    w.label = ir_node_get(g, i)->label;
    view_of[i] = ir_add_node(g, &w);
    count++;
  }
  if (count && !ir_failed(g)) {
    for (int i = 0; i < nold; i++) {
      ir_node *n = &g->nodes[i];
      for (int k = 0; k < n->nsrc; k++) {
        ir_ref s = n->src[k];
        if (view_of[s] == IR_NONE) continue;
        /* a view reads its source's flat buffer, which an in-place reshape
         * leaves as it is: it reads the new value directly (a view of the
         * reshape would be a copy of its own) */
        bool flat = n->op == IR_VIEW && k == 0 &&
                    ir_view_is_split_reshape(&ir_node_get(g, reg[s])->view, &ir_node_get(g, to[s])->shape);
        /* another view (the next convolution's padded copy) reads the new
         * value through its own view composed with the region's: a view
         * of a view was a copy of its own (3x3 + Relu at 56x56: the output
         * copied out of the wide rows, then into the padded copy) */
        ir_view composed;
        if (!flat && n->op == IR_VIEW && k == 0 && !n->view.gather &&
            ir_view_compose(&n->view, &ir_node_get(g, s)->shape, &ir_node_get(g, reg[s])->view, &composed))
          n->src[k] = to[s], n->view = composed;
        else
          n->src[k] = flat ? to[s] : view_of[s];
      }
    }
    for (int i = 0; i < ir_output_count(g); i++)
      if (view_of[ir_output(g, i)] != IR_NONE) ir_set_output(g, i, view_of[ir_output(g, i)]);
    ir_compact(g);
  }
  free(uses), free(reg), free(to), free(view_of), free(outside);
  return count;
}
