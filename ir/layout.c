/* layout.c — computed matmul operands laid out for the matmul that reads them.
 *
 * The register-blocked matmul form (scheduler/gemm.c) loads nr consecutive
 * columns of its B operand per step of the sum; weights are repacked at
 * compile time, but a computed operand must already be contiguous along the
 * output's innermost axis n. Attention's scores Q.K^T read the keys K[j, d]
 * as B[d][j]: unit stride along the sum d, stride D along the columns j.
 * This rewrite gives such an operand a transposed copy, MOVE(permute(X))
 * with the axis feeding n innermost — a pass over S x D values that buys the
 * blocked form for an S x S x D product. When X is itself a MOVE read only
 * here (the key heads repeated for grouped-query attention), the copy
 * replaces it, so no value is copied twice. Only for several output rows:
 * with one row (a decode step) the dot products already stream the keys. */
#include "ir_impl.h"

#include <stdlib.h>
#include <string.h>

/* The one axis `r` (a sum) reduces, or -1. */
static int reduced_axis(const ir_graph *g, const ir_node *r) {
  const ir_shape *in = &g->nodes[r->src[0]].shape;
  int k = -1;
  for (int a = 0; a < in->rank; a++)
    if (in->d[a] != 1 && r->shape.d[a] == 1) {
      if (k >= 0) return -1;
      k = a;
    }
  return k;
}

/* a < b for extents, symbolic ones included: a properly divides b. */
static bool extent_below(int64_t a, int64_t b) {
  int64_t q;
  if (!ir_dim_is_sym(a) && !ir_dim_is_sym(b)) return a < b;
  return a != b && ir_dim_div_exact(b, a, &q);
}

static bool divides(int64_t a, int64_t b) {
  int64_t q;
  return ir_dim_is_sym(a) || ir_dim_is_sym(b) ? ir_dim_div_exact(b, a, &q) : b % a == 0;
}

/* The run of xs's axes *lo..*hi that axis a of `v` steps one to one (one
 * axis, or several merged by a reshape), over xs's contiguous layout (its
 * strides `st`); false when there is none. Size-1 axes inside a run are
 * part of it. sink_concat.c uses it too (a band's channels as panels). */
bool ir_view_axis_run(const ir_view *v, int a, const ir_shape *xs, const int64_t *st, int *lo, int *hi) {
  *lo = *hi = -1;
  for (int p = xs->rank - 1; p >= 0 && *hi < 0; p--)
    if (xs->d[p] > 1 && st[p] == v->stride[a] && divides(xs->d[p], v->shape.d[a])) *hi = p;
  if (*hi < 0) return false;
  int64_t extent = xs->d[*hi];
  *lo = *hi;
  while (extent_below(extent, v->shape.d[a]) && *lo > 0) extent = ir_dim_mul(extent, xs->d[--*lo]);
  if (extent == v->shape.d[a]) return true;
  *lo = *hi = -1;
  return false;
}

/* The run of x's axes lo[a]..hi[a] that view axis a of `v` reads, for
 * every axis that moves; lo[a] = -1 for broadcast and size-1 axes. False
 * when `v` is not such a plain reading of x's contiguous layout. */
static bool axis_runs(const ir_view *v, const ir_shape *xs, int *lo, int *hi) {
  int64_t st[IR_MAX_RANK];
  ir_contiguous_strides(xs, st);
  uint32_t used = 0;
  if (v->masked || v->gather || v->offset) return false;
  for (int a = 0; a < v->shape.rank; a++) {
    lo[a] = hi[a] = -1;
    if (v->shape.d[a] == 1 || v->stride[a] == 0) continue;
    if (!ir_view_axis_run(v, a, xs, st, &lo[a], &hi[a])) return false;
    for (int p = lo[a]; p <= hi[a]; p++) {
      if (used & (1u << p)) return false;
      used |= 1u << p;
    }
  }
  return true;
}

/* The readers of `x`, graph outputs included (sink.c uses it too). */
int ir_uses_of(const ir_graph *g, ir_ref x) {
  int n = 0;
  for (int r = 0; r < g->nnodes; r++)
    for (int i = 0; i < g->nodes[r].nsrc; i++) n += g->nodes[r].src[i] == x;
  for (int i = 0; i < g->noutputs; i++) n += g->outputs[i] == x;
  return n;
}

static bool depends_on(const ir_node *v, int a) {
  return v->op != IR_VIEW ? v->shape.d[a] != 1 : v->view.stride[a] != 0 && v->shape.d[a] != 1;
}

/* Rewrites operand `which` of the product under sum `r` if it is a view of
 * a computed buffer read with unit stride along k but not along n. */
static bool relayout(ir_graph *g, ir_ref r, int which) {
  const ir_node *s = &g->nodes[r];
  ir_ref mr = s->src[0];
  const ir_node *mul = &g->nodes[mr];
  int k = reduced_axis(g, s), n = -1;
  for (int a = s->shape.rank - 1; a >= 0 && n < 0; a--)
    if (s->shape.d[a] != 1) n = a;
  if (k < 0 || n < 0 || mul->op != IR_MUL) return false;
  ir_ref yr = mul->src[which];
  const ir_node *y = &g->nodes[yr], *other = &g->nodes[mul->src[1 - which]];
  if (y->op != IR_VIEW || !ir_shape_eq(&y->shape, &mul->shape) ||
      !ir_shape_eq(&other->shape, &mul->shape) || depends_on(other, n))
    return false;
  ir_ref xr = y->src[0];
  const ir_node *x = &g->nodes[xr];
  if (x->op == IR_ALLOCATE && x->origin == IR_ORIGIN_WEIGHT)
    return false; /* packed at compile time */
  if (x->op == IR_LOAD || x->op == IR_INDEX_COMPONENTS) return false;
  if (y->view.stride[k] != 1 || y->view.stride[n] == 1 || !depends_on(y, n)) return false;
  /* several rows: an axis the other operand runs over and y does not */
  bool rows = false;
  for (int a = 0; a < s->shape.rank; a++)
    rows |= a != k && ir_dim_ref(g, other->shape.d[a]) >= 4 && depends_on(other, a) &&
            !depends_on(y, a);
  int lo[IR_MAX_RANK], hi[IR_MAX_RANK];
  if (!rows || !axis_runs(&y->view, &x->shape, lo, hi)) return false;
  /* T = MOVE(permute(X)) with the run of X's axes for n innermost */
  int perm[IR_MAX_RANK], pos[IR_MAX_RANK], np = 0;
  for (int p = 0; p < x->shape.rank; p++)
    if (p < lo[n] || p > hi[n]) perm[np++] = p;
  for (int p = lo[n]; p <= hi[n]; p++) perm[np++] = p;
  for (int i = 0; i < np; i++) pos[perm[i]] = i;
  ir_ref base = x->op == IR_MOVE && ir_uses_of(g, xr) == 1 ? x->src[0] : xr;
  ir_view yv = y->view; /* node pointers are invalid once nodes are added */
  const char *label = g->label;
  g->label = s->label; /* the copy is named after the matmul it serves */
  ir_ref t = ir_move(g, ir_view_permute(g, base, perm));
  g->label = label;
  if (t == IR_NONE) return false;
  /* y read again, from T */
  int64_t tst[IR_MAX_RANK];
  ir_contiguous_strides(&g->nodes[t].shape, tst);
  ir_node nv = g->nodes[yr];
  nv.src[0] = t;
  nv.view = yv;
  for (int a = 0; a < nv.shape.rank; a++) nv.view.stride[a] = hi[a] < 0 ? 0 : tst[pos[hi[a]]];
  ir_ref ny = ir_add_node(g, &nv);
  g->nodes[mr].src[which] = ny;
  return true;
}

/* Weight views a register-blocked matmul will read into panels as they
 * are (scheduler/gemm.c packs any strides along n and k): the operand of
 * a float sum over one axis k that moves along k and the sum's innermost
 * output axis n only, of a weight of `min_bytes` bytes or more.
 * Copying such a weight to its transpose first would hold a second copy of
 * every projection of a large model (4.4 GB for the 1.1B LLaMA). Smaller
 * ones are still copied: if the kernel does not take the blocked form (an
 * operand it cannot block, such as a gather), it then reads them with unit
 * stride. */
char *ir_packed_operands(const ir_graph *g, uint64_t min_bytes) {
  char *mark = calloc((size_t)g->nnodes + 1, 1);
  IR_ASSERT(mark);
  for (int r = 0; r < g->nnodes; r++) {
    const ir_node *s = &g->nodes[r];
    if (s->op != IR_ADD || !s->reduce || !ir_dtype_is_float(s->dtype)) continue;
    const ir_node *mul = &g->nodes[s->src[0]];
    int k = reduced_axis(g, s), n = -1;
    for (int a = s->shape.rank - 1; a >= 0 && n < 0; a--)
      if (s->shape.d[a] != 1) n = a;
    if (k < 0 || n < 0 || mul->op != IR_MUL) continue;
    for (int which = 0; which < 2; which++) {
      ir_ref yr = mul->src[which];
      const ir_node *y = &g->nodes[yr], *x = y->op == IR_VIEW ? &g->nodes[y->src[0]] : NULL;
      if (!x || x->op != IR_ALLOCATE || x->origin != IR_ORIGIN_WEIGHT || y->view.masked || y->view.gather ||
          ir_dim_is_sym(y->shape.d[k]) || ir_dim_is_sym(y->shape.d[n]) ||
          (uint64_t)ir_shape_numel(&x->shape) * ir_dtype_size(x->dtype) < min_bytes)
        continue;
      bool only_nk = depends_on(y, n) && depends_on(y, k);
      for (int a = 0; a < y->shape.rank && only_nk; a++) only_nk = a == n || a == k || !depends_on(y, a);
      mark[yr] |= only_nk;
    }
  }
  return mark;
}

int ir_rewrite_matmul_operands(ir_graph *g) {
  if (g->failed) return 0;
  int count = 0, n = g->nnodes;
  char *live = ir_live_nodes(g);
  for (int r = 0; r < n; r++) {
    const ir_node *s = &g->nodes[r];
    if (!live[r] || s->op != IR_ADD || !s->reduce || !ir_dtype_is_float(s->dtype)) continue;
    for (int which = 0; which < 2; which++) count += relayout(g, r, which);
  }
  free(live);
  if (count) ir_compact(g);
  return count;
}
