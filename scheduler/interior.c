/* interior.c — a value stored inside the padded copy that reads it.
 *
 * A convolution reads its input padded: a copy MOVE(pad(y)) of the
 * previous layer's result y, which y's kernel wrote to a buffer of its own
 * just before (3x3, 64 -> 64 at 56x56: a pass of 35 k TSC cycles per layer
 * at 1 thread, 66-111 k at 2, where the copy reads lines the other core
 * wrote). When the copy is y's only reader, y's kernel writes the copy's
 * interior itself: y is stored inside the copy's buffer (an offset and a
 * stride per axis of y), and the copy's own kernel writes only its border
 * (codegen: cg_render_stmt), after y's kernel. Elements y holds outside the
 * interior (the wrapped columns of a wide convolution, its rows rounded up
 * to whole register blocks) land on the border, injectively, and the
 * border kernel overwrites them. */
#include "sched_impl.h"

#include <string.h>

/* Checked element by element: at most this many in y and in the copy
 * (the compile-time cost stays linear and small). */
#define INTERIOR_MAX_ELEMS (1 << 26)

/* Steps index `at` to the next element of a box of shape `d` (rank
 * `rank`), in order; false past the last. */
static bool next_index(int64_t *at, const int64_t *d, int rank) {
  for (int k = rank - 1; k >= 0; k--) {
    if (++at[k] < d[k]) return true;
    at[k] = 0;
  }
  return false;
}

/* Per axis of y (shape ys), its stride inside a copy of shape ps that
 * reads y through view w (strides into y per copy axis): the stride of
 * the copy axis that moves along it (the one of largest view stride
 * dividing the axis's), scaled; false unless y's innermost axis gets 1 (a
 * register block stores its columns as vectors). */
static bool storage_strides(const ir_view *w, const ir_shape *ys, const ir_shape *ps, int64_t *s) {
  int64_t sty[IR_MAX_RANK], stp[IR_MAX_RANK];
  ir_contiguous_strides(ys, sty);
  ir_contiguous_strides(ps, stp);
  int inner = -1;
  for (int a = 0; a < ys->rank; a++) {
    s[a] = 0;
    if (ys->d[a] == 1) continue;
    int best = -1;
    for (int k = 0; k < ps->rank; k++)
      if (ps->d[k] > 1 && w->stride[k] > 0 && sty[a] % w->stride[k] == 0 && (best < 0 || w->stride[k] > w->stride[best]))
        best = k;
    if (best < 0 || ir_mul_ov(stp[best], sty[a] / w->stride[best], &s[a])) return false;
    inner = a;
  }
  return inner >= 0 && s[inner] == 1;
}

/* The values a copy m = MOVE(v) stores: the value x its masked view v
 * reads (a part with no view of its own), or the parts of x when x is a
 * Concat, x = ADD(masked view(y_1), .., masked view(y_n)), the parts
 * tiling x (a convolution's row bands, ir/sink_concat.c; the FPN maps a
 * detector's head joins): each y_i stored at the places of the elements of
 * x it gives, so the parts' kernels write the copy's interior and x's
 * kernel, a pass that only moved them, is dropped. */
#define INTERIOR_MAX_PARTS 8

typedef struct {
  int n;
  ir_ref view[INTERIOR_MAX_PARTS], y[INTERIOR_MAX_PARTS]; /* view IR_NONE: y is x */
  sched_store st[INTERIOR_MAX_PARTS];
} interior_parts;

/* The parts of x: an ADD tree (x's kernel, the rest inline), each node read once, of
 * masked views (pad 0) of values with a buffer of their own read only
 * there; false when x is anything else. */
static bool collect_parts(const sched_program *p, ir_ref x, const ir_shape *es, const char *mat, const int *uses,
                          interior_parts *c, int depth) {
  const ir_node *n = ir_node_get(p->g, x);
  if (!ir_shape_eq(&n->shape, es) || uses[x] != 1) return false;
  if (n->op == IR_ADD && !n->reduce && (depth == 0) == (mat[x] != 0) && n->nsrc == 2 && depth < INTERIOR_MAX_PARTS)
    return collect_parts(p, n->src[0], es, mat, uses, c, depth + 1) &&
           collect_parts(p, n->src[1], es, mat, uses, c, depth + 1);
  if (n->op != IR_VIEW || !n->view.masked || n->view.gather || n->view.pad_value != 0 || c->n == INTERIOR_MAX_PARTS)
    return false;
  ir_ref y = n->src[0];
  const ir_node *yn = ir_node_get(p->g, y);
  if (!mat[y] || uses[y] != 1 || p->border_only[y] || p->store[y].on || yn->op == IR_ALLOCATE ||
      yn->op == IR_LOAD || yn->op == IR_VIEW || yn->op == IR_INDEX_COMPONENTS || !ir_shape_is_static(&yn->shape) ||
      yn->dtype != n->dtype)
    return false;
  c->view[c->n] = x, c->y[c->n++] = y;
  return true;
}

/* Flat element `f` of a contiguous value of shape s (strides st) as the
 * place sum(i_a * to[a]) + base; false on overflow. */
static bool place_of(int64_t f, const ir_shape *s, const int64_t *st, const int64_t *to, int64_t base, int64_t *q) {
  int64_t t;
  *q = base;
  for (int a = 0; a < s->rank; a++) {
    if (s->d[a] == 1) continue; /* stride 0 */
    if (ir_mul_ov(f / st[a], to[a], &t) || ir_add_ov(*q, t, q)) return false;
    f %= st[a];
  }
  return true;
}

/* Stores the parts of x inside copy m = MOVE(v), v a masked view of x.
 * Per axis of a part y, the stride of the copy axis that moves along it
 * (storage_strides, through v composed with y's view); the offset that puts
 * the first interior element y gives where it reads. Taken only when exact,
 * checked element by element: every interior element of the copy is in
 * exactly one part's box and is the stored element of that part it reads,
 * and the parts' elements all land inside the copy, no two on one element
 * (elements a part holds outside the interior, a wide result's wrapped
 * column or its rows rounded up to whole blocks, land on the border, which
 * the copy's kernel then writes). */
static bool interior_exact(const ir_graph *g, ir_ref m, ir_ref v, interior_parts *c) {
  const ir_node *mn = ir_node_get(g, m), *vn = ir_node_get(g, v), *xn = ir_node_get(g, vn->src[0]);
  const ir_view *u = &vn->view;
  const ir_shape *ps = &mn->shape, *es = &xn->shape;
  if (!ir_shape_is_static(ps) || !ir_shape_is_static(es) || !ir_shape_eq(&vn->shape, ps) || u->gather ||
      !u->masked || ir_shape_numel(ps) > INTERIOR_MAX_ELEMS || ir_shape_numel(es) > INTERIOR_MAX_ELEMS)
    return false;
  int64_t stp[IR_MAX_RANK], ste[IR_MAX_RANK], sty[INTERIOR_MAX_PARTS][IR_MAX_RANK], lo[IR_MAX_RANK],
      ext[IR_MAX_RANK], at[IR_MAX_RANK] = {0}, t, np = ir_shape_numel(ps);
  bool found[INTERIOR_MAX_PARTS] = {false}, ok = true;
  ir_contiguous_strides(ps, stp);
  ir_contiguous_strides(es, ste);
  for (int i = 0; i < c->n; i++) {
    const ir_node *yn = ir_node_get(g, c->y[i]);
    ir_view w = *u;
    if (yn->dtype != mn->dtype || !ir_dtype_is_float(yn->dtype) || ir_shape_numel(&yn->shape) > INTERIOR_MAX_ELEMS ||
        (c->view[i] != IR_NONE && !ir_view_compose(u, es, &ir_node_get(g, c->view[i])->view, &w)) ||
        !storage_strides(&w, &yn->shape, ps, c->st[i].stride))
      return false;
    ir_contiguous_strides(&yn->shape, sty[i]);
  }
  for (int k = 0; k < ps->rank; k++) {
    lo[k] = u->lo[k] > 0 ? u->lo[k] : 0;
    ext[k] = (u->hi[k] < ps->d[k] ? u->hi[k] : ps->d[k]) - lo[k];
    if (ext[k] < 1) return false;
  }
  while (ok) { /* every interior element: one part's, the stored element it reads */
    int64_t f = u->offset, pos = 0, e[IR_MAX_RANK];
    for (int k = 0; k < ps->rank && ok; k++)
      ok = !ir_mul_ov(lo[k] + at[k], u->stride[k], &t) && !ir_add_ov(f, t, &f), pos += (lo[k] + at[k]) * stp[k];
    ok = ok && f >= 0 && f < ir_shape_numel(es);
    int64_t gy = f, q;
    for (int a = 0; a < es->rank; a++) { /* f as an index of x */
      e[a] = es->d[a] == 1 ? 0 : f / ste[a];
      if (es->d[a] > 1) f %= ste[a];
    }
    int owner = c->view[0] == IR_NONE ? 0 : -1;
    for (int i = 0; i < c->n && ok && c->view[i] != IR_NONE; i++) {
      const ir_view *pv = &ir_node_get(g, c->view[i])->view;
      bool in = true;
      for (int a = 0; a < es->rank; a++) in &= e[a] >= pv->lo[a] && e[a] < pv->hi[a];
      if (in) ok = owner < 0, owner = i;
    }
    ok = ok && owner >= 0;
    if (ok) {
      const ir_shape *ys = &ir_node_get(g, c->y[owner])->shape;
      if (c->view[owner] != IR_NONE) { /* the element of y_i that x's element e is */
        const ir_view *pv = &ir_node_get(g, c->view[owner])->view;
        gy = pv->offset;
        for (int a = 0; a < es->rank && ok; a++) ok = !ir_mul_ov(e[a], pv->stride[a], &t) && !ir_add_ov(gy, t, &gy);
      }
      ok = ok && gy >= 0 && gy < ir_shape_numel(ys) && place_of(gy, ys, sty[owner], c->st[owner].stride, 0, &q);
      if (ok && !found[owner]) found[owner] = true, c->st[owner].offset = pos - q;
      ok = ok && c->st[owner].offset + q == pos;
    }
    if (!next_index(at, ext, ps->rank)) break;
  }
  for (int i = 0; i < c->n; i++) ok &= found[i];
  unsigned char *hit = ok ? calloc((size_t)np / 8 + 1, 1) : NULL;
  if (!hit) return false;
  for (int i = 0; i < c->n && ok; i++) { /* every part's element: inside, and alone */
    const ir_shape *ys = &ir_node_get(g, c->y[i])->shape;
    for (int a = 0; a < IR_MAX_RANK; a++) at[a] = 0;
    do {
      int64_t q = c->st[i].offset;
      for (int a = 0; a < ys->rank && ok; a++) ok = !ir_mul_ov(at[a], c->st[i].stride[a], &t) && !ir_add_ov(q, t, &q);
      ok = ok && q >= 0 && q < np && !(hit[q / 8] >> (q % 8) & 1);
      if (ok) hit[q / 8] |= (unsigned char)(1u << (q % 8));
    } while (ok && next_index(at, ys->d, ys->rank));
  }
  free(hit);
  for (int i = 0; i < c->n && ok; i++) c->st[i].on = true, c->st[i].in = m;
  return ok;
}

/* Removes the kernel of root r (before buffers and arguments exist). */
static void drop_kernel(sched_program *p, ir_ref r) {
  for (int i = 0; i < p->nkernels; i++)
    if (p->kernels[i].root == r) {
      memmove(&p->kernels[i], &p->kernels[i + 1], (size_t)(p->nkernels - i - 1) * sizeof *p->kernels);
      p->nkernels--;
      return;
    }
}

void sched_find_interiors(sched_program *p, const char *mat, const char *live) {
  const ir_graph *g = p->g;
  int n = ir_graph_count(g), no = ir_output_count(g);
  int *uses = calloc((size_t)n + 1, sizeof *uses);
  p->store = calloc((size_t)n + 1, sizeof *p->store);
  p->border_only = calloc((size_t)n + 1, sizeof *p->border_only);
  SCHED_ASSERT(uses && p->store && p->border_only);
  for (int r = 0; r < n; r++) {
    const ir_node *x = ir_node_get(g, r);
    for (int k = 0; k < x->nsrc && live[r]; k++) uses[x->src[k]]++;
  }
  for (int i = 0; i < no; i++) {
    uses[ir_output(g, i)] += n; /* an output is never stored inside another */
    if (p->out_alias[i] != IR_NONE) uses[p->out_alias[i]] += n;
  }
  for (ir_ref m = 0; m < n; m++) {
    const ir_node *mn = ir_node_get(g, m);
    if (!live[m] || !mat[m] || mn->op != IR_MOVE || uses[m] > n || p->store[m].on) continue;
    ir_ref v = mn->src[0], y = ir_node_get(g, v)->src[0];
    const ir_node *vn = ir_node_get(g, v), *yn = ir_node_get(g, y);
    if (vn->op != IR_VIEW || uses[v] != 1 || !mat[y] || uses[y] != 1 || p->border_only[y] ||
        yn->op == IR_ALLOCATE || yn->op == IR_LOAD || yn->op == IR_VIEW || yn->op == IR_INDEX_COMPONENTS)
      continue;
    interior_parts lone = {.n = 1, .view = {IR_NONE}, .y = {y}}, parts = {0};
    if (!interior_exact(g, m, v, &lone)) continue;
    p->store[y] = lone.st[0], p->border_only[m] = true;
    if (collect_parts(p, y, &yn->shape, mat, uses, &parts, 0) && parts.n >= 2 && interior_exact(g, m, v, &parts)) {
      for (int i = 0; i < parts.n; i++) p->store[parts.y[i]] = parts.st[i];
      drop_kernel(p, y); /* the parts wrote y's elements where y is stored */
    }
  }
  free(uses);
}

int64_t sched_node_layout(const sched_program *p, ir_ref r, int64_t *st) {
  const sched_store *s = p->store ? &p->store[r] : NULL;
  if (s && s->on) {
    memcpy(st, s->stride, sizeof s->stride);
    return s->offset;
  }
  ir_contiguous_strides(&ir_node_get(p->g, r)->shape, st);
  return 0;
}
