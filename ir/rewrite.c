/* rewrite.c — the gather rewrite: a one-hot reduction becomes an indexed read.
 *
 * Matched (in the coordinates of the reduction's source, the "space"):
 *   R = ADD.reduce over one axis v (or MAX.reduce of an unsigned type) of
 *       WHERE(c, X, 0)  or  MUL(X, CAST(c))  or  MUL(CAST(c), X)
 *   c = NOT(NEQ(a, b)), one of a/b the iota along v (INDEX_COMPONENTS, or
 *       a constant arange, possibly CAST), the other e independent of v.
 * Every operand may be reached through pure broadcast views; `resolve`
 * follows them and records which space axis indexes each axis of the node
 * it arrives at. Since element-wise ops keep coordinates and views only
 * remap them, e is independent of v exactly when no axis of its resolved
 * node is indexed by v.
 * Replacement: an indexed VIEW of X's buffer with the reduction's shape;
 * its second source is e seen in that shape. */
#include "ir_impl.h"

#include <string.h>

typedef struct {
  ir_ref r;
  int ids[IR_MAX_RANK]; /* space axis indexing each axis of r, -1 for none */
} resolved;

static resolved resolve(const ir_graph *g, ir_ref r, const int *ids) {
  resolved x = {r, {0}};
  memcpy(x.ids, ids, sizeof x.ids);
  for (;;) {
    const ir_node *n = &g->nodes[x.r];
    int map[IR_MAX_RANK], next[IR_MAX_RANK];
    if (n->op != IR_VIEW || !ir_view_broadcast_map(&n->view, &g->nodes[n->src[0]].shape, map)) break;
    const ir_node *s = &g->nodes[n->src[0]];
    for (int j = 0; j < s->shape.rank; j++) next[j] = map[j] >= 0 ? x.ids[map[j]] : -1;
    memcpy(x.ids, next, sizeof next);
    x.r = n->src[0];
  }
  return x;
}

static resolved resolve_src(const ir_graph *g, const resolved *p, int k) {
  return resolve(g, g->nodes[p->r].src[k], p->ids);
}

static bool uses_axis(const ir_graph *g, const resolved *x, int v) {
  const ir_node *n = &g->nodes[x->r];
  for (int j = 0; j < n->shape.rank; j++)
    if (n->shape.d[j] != 1 && x->ids[j] == v) return true;
  return false;
}

/* Is `x` the index along space axis v (an iota, or a constant arange)? */
static bool is_iota(const ir_graph *g, resolved x, int v) {
  const ir_node *n = &g->nodes[x.r];
  while (n->op == IR_CAST && !ir_dtype_is_float(n->dtype) && !ir_dtype_is_float(g->nodes[n->src[0]].dtype)) {
    x = resolve_src(g, &x, 0);
    n = &g->nodes[x.r];
  }
  bool hit = false;
  if (n->op == IR_INDEX_COMPONENTS) {
    if (n->base != 0) return false;
    for (int j = 0; j < n->shape.rank; j++) {
      if (n->shape.d[j] == 1 || n->coef[j] == 0) continue;
      if (x.ids[j] != v || n->coef[j] != 1 || hit) return false;
      hit = true;
    }
    return hit;
  }
  if (n->op == IR_ALLOCATE && n->origin == IR_ORIGIN_WEIGHT && !ir_dtype_is_float(n->dtype)) {
    int axis = -1;
    for (int j = 0; j < n->shape.rank; j++)
      if (n->shape.d[j] != 1) {
        if (axis >= 0 || x.ids[j] != v) return false;
        axis = j;
      }
    if (axis < 0) return false;
    for (int64_t i = 0; i < n->shape.d[axis]; i++)
      if (ir_elem_i(n->dtype, n->data, i) != i) return false;
    return true;
  }
  return false;
}

/* c = NOT(NEQ(iota_v, e)): returns e, or a node of -1 when not matched. */
static resolved match_eq(const ir_graph *g, resolved c, int v) {
  resolved none = {-1, {0}};
  if (g->nodes[c.r].op != IR_NOT) return none;
  c = resolve_src(g, &c, 0);
  if (g->nodes[c.r].op != IR_NEQ) return none;
  resolved a = resolve_src(g, &c, 0), b = resolve_src(g, &c, 1);
  if (is_iota(g, a, v) && !uses_axis(g, &b, v)) return b;
  if (is_iota(g, b, v) && !uses_axis(g, &a, v)) return a;
  return none;
}

static bool is_zero(const ir_graph *g, resolved x) {
  const ir_node *n = &g->nodes[x.r];
  return n->op == IR_LOAD && (ir_dtype_is_float(n->dtype) ? n->fval == 0 : n->ival == 0);
}

/* Splits the reduced body into the condition and the data operand. */
static bool match_body(const ir_graph *g, resolved s, resolved *cond, resolved *data) {
  const ir_node *n = &g->nodes[s.r];
  if (n->op == IR_WHERE) {
    if (!is_zero(g, resolve_src(g, &s, 2))) return false;
    *cond = resolve_src(g, &s, 0);
    *data = resolve_src(g, &s, 1);
    return true;
  }
  if (n->op == IR_MUL) {
    for (int k = 0; k < 2; k++) {
      resolved m = resolve_src(g, &s, k);
      if (g->nodes[m.r].op != IR_CAST || g->nodes[g->nodes[m.r].src[0]].dtype != IR_BOOL) continue;
      *cond = resolve_src(g, &m, 0);
      *data = resolve_src(g, &s, 1 - k);
      return true;
    }
  }
  return false;
}

/* The address of `data` as a view over its buffer in space coordinates. */
static bool data_view(const ir_graph *g, resolved d, const ir_shape *space, ir_ref *buf, ir_view *out) {
  const ir_node *n = &g->nodes[d.r];
  ir_view v;
  if (n->op == IR_VIEW) {
    if (n->view.masked || n->view.gather) return false;
    v = n->view;
    *buf = n->src[0];
  } else {
    if (n->op == IR_LOAD || n->op == IR_INDEX_COMPONENTS) return false;
    v = ir_view_contiguous(&n->shape);
    *buf = d.r;
  }
  memset(out, 0, sizeof *out);
  out->shape = *space;
  out->offset = v.offset;
  for (int k = 0; k < space->rank; k++) out->hi[k] = space->d[k];
  for (int j = 0; j < n->shape.rank; j++) {
    if (n->shape.d[j] == 1) continue;
    if (d.ids[j] < 0) return false;
    out->stride[d.ids[j]] = ir_dim_add(out->stride[d.ids[j]], v.stride[j]);
  }
  return true;
}

/* `e` as a node of `shape` (the reduction's shape: axis v has size 1). */
static ir_ref index_in(ir_graph *g, resolved e, const ir_shape *shape) {
  const ir_node *n = &g->nodes[e.r];
  bool direct = ir_shape_eq(&n->shape, shape);
  for (int j = 0; direct && j < n->shape.rank; j++) direct = n->shape.d[j] == 1 || e.ids[j] == j;
  ir_ref idx = e.r;
  if (!direct) {
    ir_node x;
    memset(&x, 0, sizeof x);
    x.op = IR_VIEW;
    x.dtype = n->dtype;
    x.shape = *shape;
    x.nsrc = 1;
    x.src[0] = e.r;
    x.view = ir_view_contiguous(shape);
    memset(x.view.stride, 0, sizeof x.view.stride);
    int64_t cs[IR_MAX_RANK];
    ir_contiguous_strides(&n->shape, cs);
    for (int j = 0; j < n->shape.rank; j++)
      if (n->shape.d[j] != 1) x.view.stride[e.ids[j]] = ir_dim_add(x.view.stride[e.ids[j]], cs[j]);
    idx = ir_add_node(g, &x);
  }
  if (g->nodes[idx].dtype != IR_I64) idx = ir_cast(g, idx, IR_I64);
  return idx;
}

static bool rewrite_one(ir_graph *g, ir_ref r) {
  const ir_node *R = &g->nodes[r];
  if (!R->reduce) return false;
  bool unsigned_max = R->op == IR_MAX && !ir_dtype_is_signed(R->dtype) && !ir_dtype_is_float(R->dtype);
  if (R->op != IR_ADD && !unsigned_max) return false;
  ir_shape space = g->nodes[R->src[0]].shape, shape = R->shape;
  int v = -1;
  for (int k = 0; k < space.rank; k++)
    if (shape.d[k] != space.d[k]) {
      if (v >= 0) return false; /* exactly one reduced axis */
      v = k;
    }
  if (v < 0) return false;
  int ids[IR_MAX_RANK];
  for (int k = 0; k < IR_MAX_RANK; k++) ids[k] = k;
  resolved body = resolve(g, R->src[0], ids), cond, data;
  if (!match_body(g, body, &cond, &data)) return false;
  resolved e = match_eq(g, cond, v);
  if (e.r < 0) return false;
  ir_ref buf;
  ir_view view;
  if (!data_view(g, data, &space, &buf, &view)) return false;
  view.gather = true;
  view.gstrict = R->strict_index;
  view.gstride = view.stride[v];
  view.gbound = space.d[v];
  view.stride[v] = 0;
  view.shape = shape;
  view.hi[v] = 1;
  /* a strict read checks its index itself: an ir_check_index of the same
   * bound on it (Gather's) is dropped, so the read stays one operand */
  const ir_node *en = &g->nodes[e.r];
  if (view.gstrict && en->op == IR_ADD && !en->reduce && en->nsrc == 2) {
    const ir_node *cv = &g->nodes[en->src[1]];
    if (cv->op == IR_VIEW && cv->view.gather && cv->view.gstrict && cv->view.gstride == 0 &&
        cv->src[1] == en->src[0] && cv->view.gbound == view.gbound &&
        ir_shape_eq(&g->nodes[en->src[0]].shape, &en->shape))
      e.r = en->src[0];
  }
  ir_ref idx = index_in(g, e, &shape);
  ir_node x;
  memset(&x, 0, sizeof x);
  x.op = IR_VIEW;
  x.dtype = g->nodes[r].dtype;
  x.shape = shape;
  x.nsrc = 2;
  x.src[0] = buf;
  x.src[1] = idx;
  x.view = view;
  x.label = g->nodes[r].label;
  ir_ref gv = ir_add_node(g, &x);
  ir_replace_uses(g, r, gv);
  return true;
}

void ir_mark_index_strict(ir_graph *g, ir_ref r) {
  while (r >= 0 && r < g->nnodes && g->nodes[r].op == IR_VIEW && g->nodes[r].nsrc == 1) r = g->nodes[r].src[0];
  if (r >= 0 && r < g->nnodes && g->nodes[r].reduce) g->nodes[r].strict_index = true;
}

void ir_mark_nbits_row(ir_graph *g, ir_ref r, int bits) {
  if (r >= 0 && r < g->nnodes && g->nodes[r].reduce && bits > 0 && bits < 256) g->nodes[r].nbits_row = (uint8_t)bits;
}

ir_ref ir_check_index(ir_graph *g, ir_ref e, int64_t bound) {
  if (!ir_refs_ok(g, 1, &e)) return IR_NONE;
  if (g->nodes[e].dtype != IR_I64) return ir_fail(g, "internal: index check of a non-int64 value"), IR_NONE;
  int64_t zero = 0;
  ir_ref z = ir_const(g, "index_check", IR_I64, ir_shape_make(1, (int64_t[]){1}), &zero);
  if (z == IR_NONE) return IR_NONE;
  ir_node x;
  memset(&x, 0, sizeof x);
  x.op = IR_VIEW;
  x.dtype = IR_I64;
  x.shape = g->nodes[e].shape;
  x.nsrc = 2;
  x.src[0] = z;
  x.src[1] = e;
  x.view = ir_view_contiguous(&x.shape);
  memset(x.view.stride, 0, sizeof x.view.stride);
  x.view.gather = x.view.gstrict = true;
  x.view.gstride = 0;
  x.view.gbound = bound;
  x.label = g->label;
  return ir_binary(g, IR_ADD, e, ir_add_node(g, &x));
}

int ir_rewrite_gather(ir_graph *g) {
  if (g->failed) return 0;
  int n = g->nnodes, count = 0;
  for (int r = 0; r < n; r++) count += rewrite_one(g, r);
  if (count) ir_compact(g);
  return count;
}

/* How many elements `v` reads row-major and contiguously from its start
 * (ignoring broadcast); 0 when it does not. */
static int64_t in_order_elems(const ir_view *v) {
  int64_t expect = 1;
  for (int k = v->shape.rank - 1; k >= 0; k--) {
    if (v->shape.d[k] == 1 || v->stride[k] == 0) continue;
    if (v->stride[k] != expect) return 0;
    expect *= v->shape.d[k];
  }
  return expect;
}

/* Does `v` read its source as whole runs of at least IR_RUN_KEEP bytes,
 * in order, with one axis (its outermost moving one) stepping over the
 * rest of the source (a slice of the rows of each panel of a weight laid
 * out [panels, rows, ...]: a convolution band's kernel rows,
 * importer/conv_cols.c)? Such a view is read where it lies: a copy per
 * band would stream its rows once more for each band. */
#define IR_RUN_KEEP 4096
static bool reads_runs(const ir_view *v, size_t elem) {
  int outer = 0;
  while (outer < v->shape.rank && (v->shape.d[outer] == 1 || v->stride[outer] == 0)) outer++;
  if (outer == v->shape.rank) return false;
  ir_view run = *v;
  run.shape.d[outer] = 1;
  int64_t n = in_order_elems(&run);
  return n > 0 && v->stride[outer] > n && (uint64_t)n * elem >= IR_RUN_KEEP;
}

static bool repack_one(ir_graph *g, ir_ref r, const char *keep) {
  const ir_node *n = &g->nodes[r];
  if (n->op != IR_VIEW || n->view.gather || n->view.masked || (keep && keep[r])) return false;
  /* what is repacked is the view without its broadcast axes: when that has
   * a symbolic size, it cannot be evaluated now and stays a view */
  for (int k = 0; k < n->shape.rank; k++)
    if (n->view.stride[k] != 0 && ir_dim_is_sym(n->shape.d[k])) return false;
  if (in_order_elems(&n->view) || reads_runs(&n->view, ir_dtype_size(n->dtype))) return false;
  ir_ref wref = n->src[0];
  const ir_node *w = &g->nodes[wref];
  if (w->op != IR_ALLOCATE || w->origin != IR_ORIGIN_WEIGHT) return false;
  const char *wname = w->name;
  /* the compact shape: broadcast axes become 1 */
  ir_node c = *n;
  for (int k = 0; k < c.shape.rank; k++)
    if (c.view.stride[k] == 0) c.shape.d[k] = c.view.shape.d[k] = 1, c.view.hi[k] = 1;
  if (ir_shape_numel(&c.shape) > ir_shape_numel(&w->shape)) return false;
  c.label = NULL;
  ir_ref cv = ir_add_node(g, &c); /* invalidates n and w */
  void *data;
  if (ir_eval(g, cv, &data)) return false;
  ir_ref k = ir_const(g, wname, c.dtype, c.shape, data);
  free(data);
  n = &g->nodes[r];
  ir_node x = *n;
  x.src[0] = k;
  x.view = ir_view_contiguous(&c.shape);
  x.view.shape = n->shape;
  for (int i = 0; i < x.shape.rank; i++) {
    x.view.hi[i] = x.shape.d[i];
    if (c.shape.d[i] == 1) x.view.stride[i] = 0;
  }
  ir_ref nv = ir_add_node(g, &x);
  ir_replace_uses(g, r, nv);
  return true;
}

/* One weight at a time, compacting after each: the weight it replaces is
 * released at once when nothing else reads it, so a large model is never
 * held twice. */
int ir_rewrite_weight_layout(ir_graph *g, uint64_t in_place_bytes) {
  int count = 0;
  for (bool again = !g->failed; again;) {
    again = false;
    char *live = ir_live_nodes(g), *keep = in_place_bytes < UINT64_MAX ? ir_packed_operands(g, in_place_bytes) : NULL;
    for (int r = 0; r < g->nnodes && !again; r++)
      if (live[r] && repack_one(g, r, keep)) again = true, count++;
    free(live);
    free(keep);
    if (again) ir_compact(g);
  }
  return count;
}
