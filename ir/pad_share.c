/* pad_share.c — a value copied into a padded buffer is read from there by
 * its other readers too.
 *
 * A residual network's block output y = Relu(conv + x) feeds the next
 * block twice: the next convolution reads a padded copy of it, MOVE(pad(y)),
 * and the next residual Add reads y itself. So y was a kernel of its own
 * (a pass writing y) and the copy another (a pass reading y, writing the
 * padded buffer): a kernel does not compute an operand under a pad (the
 * scheduler inlines a view only as a broadcast or transpose). Now the pad
 * of zeros moves below y's element-wise ops when they give 0 on zeros
 * (Add, Mul, Max, Neg: Relu(0 + 0) = 0), onto the buffers y reads, so the
 * copy computes y itself, and y's other readers read the interior of the
 * copy (a strided view, the same elements): one pass writes the padded
 * buffer. Only for a pad of y in y's own axis order (no transposed copy:
 * its readers would read across), y not a graph output. */
#include "ir_impl.h"

#include <stdlib.h>

/* Readers of a shared value that are views, each composed onto the copy */
#define PAD_SHARE_MAX_VIEWS 8

/* Where `v` (a masked view of a contiguous value of shape `xs`) holds that
 * value whole, in order, inside a border: per axis of v, the start and
 * length of the value; false when v is anything else. */
static bool interior_of(const ir_view *v, const ir_shape *xs, int64_t *start, int64_t *len) {
  if (!v->masked || v->gather || !ir_shape_is_static(&v->shape) || !ir_shape_is_static(xs)) return false;
  int64_t st[IR_MAX_RANK], off = 0;
  ir_contiguous_strides(xs, st);
  int a = 0;
  for (int k = 0; k < v->shape.rank; k++) {
    start[k] = 0, len[k] = 1;
    if (v->shape.d[k] == 1) {
      if (v->lo[k] > 0 || v->hi[k] < 1) return false;
      continue;
    }
    while (a < xs->rank && xs->d[a] == 1) a++;
    if (a == xs->rank || v->stride[k] != st[a] || v->lo[k] < 0 || v->hi[k] > v->shape.d[k] ||
        v->hi[k] - v->lo[k] != xs->d[a])
      return false;
    start[k] = v->lo[k], len[k] = xs->d[a];
    off += v->lo[k] * st[a]; /* no overflow: within the static padded shape */
    a++;
  }
  while (a < xs->rank && xs->d[a] == 1) a++;
  return a == xs->rank && v->offset == -off;
}

/* Element-wise float ops that give 0 when every operand is 0: a pad of
 * zeros may move below them (Relu(0 + 0) = 0). */
static bool zero_keeping(const ir_node *n) {
  if (n->reduce || !ir_dtype_is_float(n->dtype)) return false;
  return n->op == IR_ADD || n->op == IR_MUL || n->op == IR_MAX || n->op == IR_NEG;
}

/* Whether view v reads its innermost axis of more than one element in
 * order (stride 1) or broadcast (stride 0). */
static bool along_rows(const ir_view *v) {
  for (int k = v->shape.rank - 1; k >= 0; k--)
    if (v->shape.d[k] > 1) return v->stride[k] == 0 || v->stride[k] == 1;
  return true;
}

/* x (of shape xs) with the zero pad `v` moved below it: each of its
 * zero-keeping ops over the padded shape, each leaf read through v (a
 * view composed with it, a zero constant refilled at the padded shape);
 * IR_NONE when some part cannot take it. `budget` bounds the nodes
 * visited (and so the recursion). */
static ir_ref pad_below(ir_graph *g, ir_ref x, const ir_view *v, const ir_shape *xs, int *budget) {
  const ir_node n = *ir_node_get(g, x);
  if (--*budget < 0 || !ir_shape_eq(&n.shape, xs)) return IR_NONE;
  ir_node c = n;
  c.shape = v->shape;
  if (n.op == IR_LOAD) {
    if (n.sym_value || !ir_dtype_is_float(n.dtype) || n.fval != 0.0) return IR_NONE;
    return ir_add_node(g, &c);
  }
  if (zero_keeping(&n)) {
    for (int k = 0; k < n.nsrc; k++)
      if ((c.src[k] = pad_below(g, n.src[k], v, xs, budget)) == IR_NONE) return IR_NONE;
    return ir_add_node(g, &c);
  }
  if (n.op == IR_VIEW) {
    /* a plain view of a buffer: the pad composed with it (not of a
     * constant: a kernel reads those only broadcast, never under a mask),
     * read along the copy's rows (a channels-innermost operand read into
     * a channels-outermost copy: every element a masked read across
     * lines, ResNet-18's 14 x 14 Add + Relu 37 k TSC cycles as a pass of
     * its own, 571 k in the copy) */
    if (n.view.gather || n.view.masked || ir_node_get(g, n.src[0])->op == IR_LOAD ||
        !ir_view_compose(v, xs, &n.view, &c.view) || !along_rows(&c.view))
      return IR_NONE;
    return ir_add_node(g, &c);
  }
  if (n.op == IR_INDEX_COMPONENTS) return IR_NONE;
  ir_node w = {.op = IR_VIEW, .dtype = n.dtype, .shape = v->shape, .nsrc = 1, .src = {x}, .view = *v,
               .label = n.label, .is_const = n.is_const};
  return ir_add_node(g, &w);
}

/* Gives the readers of x other than view `v` (read only by the copy `m`)
 * the interior of m; false (nothing changed) when one cannot take it. */
static bool share(ir_graph *g, ir_ref m, ir_ref v, ir_ref x, const char *live, int nold) {
  const ir_node *vn = ir_node_get(g, v);
  ir_shape xs = ir_node_get(g, x)->shape;
  int64_t start[IR_MAX_RANK], len[IR_MAX_RANK], step[IR_MAX_RANK];
  if (!interior_of(&vn->view, &xs, start, len)) return false;
  for (int k = 0; k < IR_MAX_RANK; k++) step[k] = 1;
  ir_ref s = ir_view_slice(g, m, start, step, len);
  if (s == IR_NONE) return false;
  s = ir_view_reshape(g, s, xs);
  if (s == IR_NONE || ir_node_get(g, s)->op != IR_VIEW || ir_node_get(g, s)->src[0] != m) return false;
  ir_view sv = ir_node_get(g, s)->view, composed[PAD_SHARE_MAX_VIEWS];
  int nviews = 0;
  /* every reader that is a view must compose with the interior first (the
   * nodes made here, from nold on, read m) */
  for (int i = 0; i < nold; i++) {
    const ir_node *r = ir_node_get(g, i);
    if (!live[i] || i == v || r->op != IR_VIEW || r->src[0] != x) continue;
    if (r->view.gather || nviews == PAD_SHARE_MAX_VIEWS || !ir_view_compose_steps(&r->view, &xs, &sv, &composed[nviews++]))
      return false;
  }
  nviews = 0;
  for (int i = 0; i < nold; i++) {
    ir_node *r = &g->nodes[i];
    if (!live[i] || i == v) continue;
    if (r->op == IR_VIEW && r->src[0] == x) {
      r->view = composed[nviews++], r->src[0] = m;
      continue;
    }
    for (int k = 0; k < r->nsrc; k++)
      if (r->src[k] == x) r->src[k] = s;
  }
  return true;
}

int ir_rewrite_pad_share(ir_graph *g) {
  int nold = ir_graph_count(g), count = 0;
  char *live = ir_live_nodes(g);
  int *uses = calloc((size_t)nold, sizeof *uses);
  bool *output = calloc((size_t)nold, sizeof *output);
  if (!live || !uses || !output) {
    free(live), free(uses), free(output);
    return ir_fail(g, "out of memory"), 0;
  }
  for (int i = 0; i < nold; i++) {
    const ir_node *n = ir_node_get(g, i);
    for (int k = 0; k < n->nsrc && live[i]; k++) uses[n->src[k]]++;
  }
  for (int i = 0; i < ir_output_count(g); i++) output[ir_output(g, i)] = true;
  for (int m = 0; m < nold; m++) {
    const ir_node *mn = ir_node_get(g, m);
    if (!live[m] || mn->op != IR_MOVE) continue;
    ir_ref v = mn->src[0];
    const ir_node *vn = ir_node_get(g, v);
    if (vn->op != IR_VIEW || uses[v] != 1 || output[v]) continue;
    ir_ref x = vn->src[0];
    ir_view pad = vn->view;
    if (!zero_keeping(ir_node_get(g, x)) || output[x] || pad.pad_value != 0.0 || pad.gather ||
        !ir_shape_is_static(&pad.shape) || !ir_shape_is_static(&ir_node_get(g, x)->shape))
      continue;
    int budget = 64;
    ir_shape xs = ir_node_get(g, x)->shape; /* a copy: pad_below adds nodes */
    ir_ref px = pad_below(g, x, &pad, &xs, &budget);
    if (px == IR_NONE) continue;
    /* x's other readers first (x is kept for them when they cannot) */
    if (uses[x] > 1 && !share(g, m, v, x, live, nold)) continue;
    g->nodes[m].src[0] = px;
    count++;
  }
  free(live), free(uses), free(output);
  if (ir_graph_count(g) != nold) ir_compact(g); /* the nodes made, used or not */
  return count;
}
