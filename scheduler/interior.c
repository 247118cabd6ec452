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

/* The storage of `y` inside the buffer of copy `m` = MOVE(v), v a masked
 * view of y: for each axis of y, the copy's stride of the copy axis that
 * steps it by one; false when that is no affine map onto the copy's
 * interior, or when y's elements would leave the copy or meet. */
static bool interior_store(const ir_graph *g, ir_ref y, ir_ref v, ir_ref m, sched_store *out) {
  const ir_node *yn = ir_node_get(g, y), *vn = ir_node_get(g, v), *mn = ir_node_get(g, m);
  const ir_view *w = &vn->view;
  const ir_shape *ys = &yn->shape, *ps = &mn->shape;
  if (!ir_shape_is_static(ys) || !ir_shape_is_static(ps) || !ir_shape_eq(&vn->shape, ps) || w->gather ||
      !w->masked || yn->dtype != mn->dtype || !ir_dtype_is_float(yn->dtype))
    return false;
  int64_t sty[IR_MAX_RANK], stp[IR_MAX_RANK], s[IR_MAX_RANK], span[IR_MAX_RANK] = {0}, y0[IR_MAX_RANK];
  int to[IR_MAX_RANK];
  int64_t mult[IR_MAX_RANK];
  ir_contiguous_strides(ys, sty);
  ir_contiguous_strides(ps, stp);
  for (int a = 0; a < ys->rank; a++) s[a] = -1;
  int64_t f0 = w->offset, p0 = 0, t;
  for (int k = 0; k < ps->rank; k++) {
    int64_t lo = w->lo[k] > 0 ? w->lo[k] : 0, hi = w->hi[k] < ps->d[k] ? w->hi[k] : ps->d[k];
    if (lo >= hi || ir_mul_ov(lo, w->stride[k], &t) || ir_add_ov(f0, t, &f0) || ir_mul_ov(lo, stp[k], &t) ||
        ir_add_ov(p0, t, &p0))
      return false;
    to[k] = -1;
    if (hi - lo < 2) continue;
    /* the outermost axis of y whose stride divides the view's (a row of a
     * wide result is rows x row stride along its one flat axis) */
    for (int a = 0; a < ys->rank && to[k] < 0 && w->stride[k] > 0; a++)
      if (ys->d[a] > 1 && w->stride[k] % sty[a] == 0 && w->stride[k] / sty[a] < ys->d[a])
        to[k] = a, mult[k] = w->stride[k] / sty[a];
    if (to[k] < 0) return false;
    if (mult[k] == 1) {
      if (s[to[k]] >= 0 && s[to[k]] != stp[k]) return false;
      s[to[k]] = stp[k];
    }
    if (ir_mul_ov(hi - 1 - lo, mult[k], &t) || ir_add_ov(span[to[k]], t, &span[to[k]])) return false;
  }
  int64_t ny = ir_shape_numel(ys), np = ir_shape_numel(ps);
  if (f0 < 0 || f0 >= ny) return false;
  /* every step along a copy axis moves the stored element as far as the
   * copy's own stride, and never carries into the next axis of y */
  for (int k = 0; k < ps->rank; k++)
    if (to[k] >= 0 && (s[to[k]] < 0 || ir_mul_ov(mult[k], s[to[k]], &t) || t != stp[k])) return false;
  int64_t off = p0, last = 0;
  for (int a = 0; a < ys->rank; a++) {
    if (ys->d[a] == 1) { /* stride 0 */
      s[a] = 0;
      continue;
    }
    y0[a] = f0 / sty[a], f0 %= sty[a];
    if (s[a] < 0 || y0[a] + span[a] >= ys->d[a] || ir_mul_ov(y0[a], s[a], &t) || ir_add_ov(off, -t, &off) ||
        ir_mul_ov(ys->d[a] - 1, s[a], &t) || ir_add_ov(last, t, &last))
      return false;
  }
  if (off < 0 || ir_add_ov(off, last, &last) || last >= np) return false;
  /* injective: axes by decreasing stride, each past all the ones below */
  int inner = -1;
  for (int a = 0; a < ys->rank; a++) {
    if (ys->d[a] == 1) continue;
    int64_t below = 0;
    for (int b = 0; b < ys->rank; b++)
      if (b != a && ys->d[b] > 1 && s[b] <= s[a]) below += (ys->d[b] - 1) * s[b]; /* <= last: no overflow */
    if (below >= s[a]) return false;
    inner = a;
  }
  /* a register block stores its columns, y's innermost axis, as vectors */
  if (inner < 0 || s[inner] != 1) return false;
  out->on = true, out->offset = off;
  memcpy(out->stride, s, sizeof out->stride);
  return true;
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
    if (interior_store(g, y, v, m, &p->store[y])) p->store[y].in = m, p->border_only[m] = true;
  }
  free(uses);
}
