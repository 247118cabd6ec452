/* sink_concat.c — an element-wise op after a Concat of reductions moved into
 * each part.
 *
 * A convolution of a few output rows is computed in bands (importer/
 * conv_window.c, conv_bands: the border rows over the kernel rows that
 * reach the input, the rows between over the whole kernel), and the bands
 * are a Concat: ADD of masked views that tile the output. The bias and the
 * Relu after it were applied to the Concat, in a pass of their own that
 * read every band (CRNN's 6 x 80 and 3 x 80 layers: 7-11 k TSC cycles a
 * layer at 1 thread, 45-52 k at 2, where half of each band was written by
 * the other core). op(concat(R_1..R_n), b) is concat(op(R_1, b_1), ..,
 * op(R_n, b_n)) element by element, when every element of the Concat is
 * one part's (the masks tile it, the other parts give their pad 0 there)
 * and b is a constant or a broadcast each part reads at its own elements
 * (checked element by element). Each op then runs as its band's epilogue,
 * and the Concat is data movement only, which the padded copy after it
 * can take in place (scheduler/interior.c).
 *
 * Only ADD, MUL and MAX: Concat computes x + 0, which turns a part's -0
 * into +0, so the op may now see -0 where it saw +0; these three give
 * results that compare equal either way (a sign of zero at most). */
#include "ir_impl.h"

#include <stdlib.h>

#define CONCAT_MAX_PARTS 8
/* element-by-element checks: at most this many elements */
#define CONCAT_MAX_ELEMS (1 << 24)

typedef struct {
  int n;
  ir_ref view[CONCAT_MAX_PARTS];
} concat_parts;

/* The box of the concat's elements that part view `v` holds. */
static int64_t part_box(const ir_view *v, int64_t *lo, int64_t *hi) {
  int64_t vol = 1;
  for (int k = 0; k < v->shape.rank; k++) {
    lo[k] = v->lo[k] > 0 ? v->lo[k] : 0;
    hi[k] = v->hi[k] < v->shape.d[k] ? v->hi[k] : v->shape.d[k];
    if (hi[k] <= lo[k]) return 0;
    vol *= hi[k] - lo[k]; /* at most the shape's element count */
  }
  return vol;
}

/* Collects the parts of concat `r` (an ADD tree of masked views of
 * reductions, each node read once) of shape `s`; false when it is not one. */
static bool collect(const ir_graph *g, ir_ref r, const ir_shape *s, concat_parts *c, int depth) {
  const ir_node *n = &g->nodes[r];
  if (!ir_shape_eq(&n->shape, s) || ir_uses_of(g, r) != 1) return false;
  if (n->op == IR_ADD && !n->reduce && n->nsrc == 2 && depth < CONCAT_MAX_PARTS)
    return collect(g, n->src[0], s, c, depth + 1) && collect(g, n->src[1], s, c, depth + 1);
  if (n->op != IR_VIEW || !n->view.masked || n->view.gather || n->view.pad_value != 0 || c->n == CONCAT_MAX_PARTS)
    return false;
  const ir_node *src = &g->nodes[n->src[0]];
  if (!ir_shape_is_static(&src->shape) || src->dtype != n->dtype || !ir_sink_from_reduce(g, n->src[0])) return false;
  for (int k = 0; k < n->shape.rank; k++)
    if (n->view.stride[k] < 0) return false;
  c->view[c->n++] = r;
  return true;
}

/* Whether the parts' boxes tile shape `s`: disjoint, volumes summing to it. */
static bool tiles(const ir_graph *g, const concat_parts *c, const ir_shape *s) {
  int64_t lo[CONCAT_MAX_PARTS][IR_MAX_RANK], hi[CONCAT_MAX_PARTS][IR_MAX_RANK], sum = 0;
  for (int i = 0; i < c->n; i++) sum += part_box(&g->nodes[c->view[i]].view, lo[i], hi[i]);
  for (int i = 0; i < c->n; i++)
    for (int j = 0; j < i; j++) {
      bool apart = false;
      for (int k = 0; k < s->rank; k++) apart |= hi[i][k] <= lo[j][k] || hi[j][k] <= lo[i][k];
      if (!apart) return false;
    }
  return sum == ir_shape_numel(s);
}

/* Whether operand view `b` (of the concat's shape) and `bp` (its form over
 * part view v's source) read the same element at every element the part
 * holds. */
static bool same_reads(const ir_view *b, const ir_view *bp, const ir_view *v, const ir_shape *rs) {
  int64_t lo[IR_MAX_RANK], hi[IR_MAX_RANK], at[IR_MAX_RANK], st[IR_MAX_RANK];
  int rank = v->shape.rank;
  if (part_box(v, lo, hi) == 0) return true;
  ir_contiguous_strides(rs, st);
  for (int k = 0; k < rank; k++) at[k] = lo[k];
  for (;;) {
    int64_t f = v->offset, want = b->offset, got = bp->offset, t;
    for (int k = 0; k < rank; k++)
      if (ir_mul_ov(v->stride[k], at[k], &t) || ir_add_ov(f, t, &f) || ir_mul_ov(b->stride[k], at[k], &t) ||
          ir_add_ov(want, t, &want))
        return false;
    if (f < 0 || f >= ir_shape_numel(rs)) return false;
    for (int a = 0; a < rs->rank; a++) {
      if (rs->d[a] == 1) continue; /* stride 0 */
      if (ir_mul_ov(bp->stride[a], f / st[a], &t) || ir_add_ov(got, t, &got)) return false;
      f %= st[a];
    }
    if (got != want) return false;
    int k = rank - 1;
    for (; k >= 0 && ++at[k] == hi[k]; k--) at[k] = lo[k];
    if (k < 0) return true;
  }
}

static bool sink_concat_one(ir_graph *g, ir_ref e) {
  const ir_node *n = &g->nodes[e];
  if ((n->op != IR_ADD && n->op != IR_MUL && n->op != IR_MAX) || n->reduce || !ir_dtype_is_float(n->dtype) ||
      !ir_shape_is_static(&n->shape) || ir_shape_numel(&n->shape) > CONCAT_MAX_ELEMS)
    return false;
  for (int i = 0; i < g->noutputs; i++)
    if (g->outputs[i] == e) return false;
  concat_parts c = {0};
  int which = -1;
  for (int i = 0; i < n->nsrc; i++) {
    const ir_node *s = &g->nodes[n->src[i]];
    if (s->op != IR_ADD || s->reduce || which >= 0) continue;
    concat_parts t = {0};
    if (collect(g, n->src[i], &n->shape, &t, 0) && t.n >= 2 && tiles(g, &t, &n->shape)) which = i, c = t;
  }
  if (which < 0) return false;
  ir_ref concat = n->src[which], parts[CONCAT_MAX_PARTS] = {0};
  for (int p = 0; p < c.n; p++) {
    ir_node v = g->nodes[c.view[p]];
    ir_ref r = v.src[0];
    ir_shape rs = g->nodes[r].shape;
    int64_t st[IR_MAX_RANK];
    int first[IR_MAX_RANK], last[IR_MAX_RANK];
    ir_contiguous_strides(&rs, st);
    /* the source axes each axis steps one to one: one, or a run of them
     * (a band's output channels computed as panels, [M / nr, 1, 1, 1, nr]
     * for the Concat's M); -1 where none */
    for (int k = 0; k < v.shape.rank; k++)
      if (v.view.stride[k] <= 0 || !ir_view_axis_run(&v.view, k, &rs, st, &first[k], &last[k]))
        first[k] = last[k] = -1;
    ir_node x = g->nodes[e];
    for (int i = 0; i < x.nsrc; i++) {
      ir_ref b = x.src[i];
      if (i == which) {
        x.src[i] = r;
        continue;
      }
      x.src[i] = ir_sink_operand_over_runs(g, b, first, last, &rs);
      if (x.src[i] == IR_NONE) return false; /* nodes added so far are dropped by ir_compact */
      if (g->nodes[b].op == IR_VIEW && !same_reads(&g->nodes[b].view, &g->nodes[x.src[i]].view, &v.view, &rs))
        return false;
    }
    x.shape = rs;
    v.src[0] = ir_add_node(g, &x);
    parts[p] = ir_add_node(g, &v);
  }
  ir_ref acc = parts[0];
  for (int p = 1; p < c.n; p++) {
    ir_node a = g->nodes[concat];
    a.src[0] = acc, a.src[1] = parts[p];
    acc = ir_add_node(g, &a);
  }
  ir_replace_uses(g, e, acc);
  return true;
}

int ir_rewrite_sink_concats(ir_graph *g) {
  int count = 0;
  for (bool again = !g->failed; again;) {
    int n = g->nnodes, c = 0;
    for (ir_ref r = 0; r < n && !g->failed; r++) c += sink_concat_one(g, r);
    if (c || g->nnodes != n) ir_compact(g);
    count += c, again = c > 0 && !g->failed;
  }
  return count;
}
