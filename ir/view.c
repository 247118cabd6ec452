/* view.c — the shape tracker: views are metadata, composed onto their
 * source so that a chain of reshape/permute/slice/expand/pad is one VIEW.
 * When a reshape cannot be expressed as strides (or two pads disagree on
 * their value), the source is copied by a MOVE first. */
#include "ir_impl.h"

#include <string.h>

ir_view ir_view_contiguous(const ir_shape *s) {
  ir_view v;
  memset(&v, 0, sizeof v);
  v.shape = *s;
  ir_contiguous_strides(s, v.stride);
  for (int i = 0; i < s->rank; i++) v.hi[i] = s->d[i];
  return v;
}

bool ir_view_is_identity(const ir_view *v, const ir_shape *src) {
  if (v->masked || v->offset != 0 || !ir_shape_eq(&v->shape, src)) return false;
  int64_t st[IR_MAX_RANK];
  ir_contiguous_strides(src, st);
  for (int i = 0; i < src->rank; i++)
    if (src->d[i] > 1 && v->stride[i] != st[i]) return false;
  return true;
}

bool ir_view_broadcast_map(const ir_view *v, const ir_shape *src, int *view_axis) {
  if (v->masked || v->offset != 0 || v->gather) return false;
  int64_t st[IR_MAX_RANK];
  ir_contiguous_strides(src, st);
  int k = 0;
  for (int j = 0; j < src->rank; j++) {
    view_axis[j] = -1;
    if (src->d[j] == 1) continue;
    /* the next view axis that reads memory must be this source axis */
    while (k < v->shape.rank && (v->stride[k] == 0 || v->shape.d[k] == 1)) k++;
    if (k == v->shape.rank || v->shape.d[k] != src->d[j] || v->stride[k] != st[j]) return false;
    view_axis[j] = k++;
  }
  for (; k < v->shape.rank; k++)
    if (v->stride[k] != 0 && v->shape.d[k] != 1) return false;
  return true;
}

bool ir_view_axis_map(const ir_view *v, const ir_shape *src, int *view_axis) {
  if (v->masked || v->offset != 0 || v->gather) return false;
  int64_t st[IR_MAX_RANK];
  ir_contiguous_strides(src, st);
  uint32_t used = 0;
  for (int j = 0; j < src->rank; j++) {
    view_axis[j] = -1;
    if (src->d[j] == 1) continue;
    for (int k = 0; k < v->shape.rank && view_axis[j] < 0; k++)
      if (!(used & (1u << k)) && v->shape.d[k] == src->d[j] && v->stride[k] == st[j])
        view_axis[j] = k;
    if (view_axis[j] < 0) return false;
    used |= 1u << view_axis[j];
  }
  for (int k = 0; k < v->shape.rank; k++)
    if (!(used & (1u << k)) && v->stride[k] != 0 && v->shape.d[k] != 1) return false;
  return true;
}

static bool axis_masked(const ir_view *v, int i) {
  return v->masked && (v->lo[i] > 0 || v->hi[i] < v->shape.d[i]);
}

static void update_masked(ir_view *v) {
  v->masked = false;
  for (int i = 0; i < v->shape.rank; i++)
    if (v->lo[i] > 0 || v->hi[i] < v->shape.d[i]) v->masked = true;
}

/* The source and the view of `a` as seen from its base buffer. */
static ir_ref base_of(ir_graph *g, ir_ref a, ir_view *v) {
  const ir_node *n = &g->nodes[a];
  if (n->op == IR_VIEW && !n->view.gather) {
    *v = n->view;
    return n->src[0];
  }
  *v = ir_view_contiguous(&n->shape);
  return a;
}

/* INDEX_COMPONENTS whose coefficients are a multiple of the contiguous
 * strides is an affine function of the flat index, so any unmasked view
 * of it is again an INDEX_COMPONENTS. */
static bool index_scale(const ir_node *n, int64_t *scale) {
  int64_t st[IR_MAX_RANK];
  ir_contiguous_strides(&n->shape, st);
  bool found = false;
  for (int i = 0; i < n->shape.rank; i++) {
    if (n->shape.d[i] <= 1) continue;
    if (!found) {
      if (n->coef[i] % st[i]) return false;
      *scale = n->coef[i] / st[i];
      found = true;
    }
    if (n->coef[i] != *scale * st[i]) return false;
  }
  if (!found) *scale = 0;
  return true;
}

static ir_ref finish(ir_graph *g, ir_ref base, const ir_view *v) {
  const ir_node *b = &g->nodes[base];
  if (!v->masked && b->op == IR_LOAD) {
    ir_node n = *b;
    n.shape = v->shape;
    n.label = NULL;
    return ir_add_node(g, &n);
  }
  int64_t scale;
  if (!v->masked && b->op == IR_INDEX_COMPONENTS && index_scale(b, &scale)) {
    int64_t coef[IR_MAX_RANK];
    for (int i = 0; i < v->shape.rank; i++) coef[i] = scale * v->stride[i];
    return ir_index(g, v->shape, coef, b->base + scale * v->offset);
  }
  if (ir_view_is_identity(v, &b->shape)) return base;
  ir_node n;
  memset(&n, 0, sizeof n);
  n.op = IR_VIEW;
  n.dtype = b->dtype;
  n.shape = v->shape;
  n.nsrc = 1;
  n.src[0] = base;
  n.view = *v;
  return ir_add_node(g, &n);
}

ir_ref ir_view_permute(ir_graph *g, ir_ref a, const int *perm) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_view v, o;
  ir_ref base = base_of(g, a, &v);
  o = v;
  uint32_t seen = 0;
  for (int i = 0; i < v.shape.rank; i++) {
    int p = perm[i];
    if (p < 0 || p >= v.shape.rank || seen & (1u << p))
      return ir_fail(g, "invalid permutation"), IR_NONE;
    seen |= 1u << p;
    o.shape.d[i] = v.shape.d[p];
    o.stride[i] = v.stride[p];
    o.lo[i] = v.lo[p];
    o.hi[i] = v.hi[p];
  }
  return finish(g, base, &o);
}

ir_ref ir_view_expand(ir_graph *g, ir_ref a, ir_shape s) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_view v, o;
  ir_ref base = base_of(g, a, &v);
  memset(&o, 0, sizeof o);
  o.shape = s;
  o.offset = v.offset;
  o.pad_value = v.pad_value;
  if (s.rank < v.shape.rank) return ir_fail(g, "cannot broadcast to a lower rank"), IR_NONE;
  for (int i = 0; i < s.rank; i++) {
    int j = i - (s.rank - v.shape.rank);
    o.hi[i] = s.d[i];
    if (j < 0) continue;
    if (v.shape.d[j] == s.d[i]) {
      o.stride[i] = v.stride[j];
      o.lo[i] = v.lo[j];
      o.hi[i] = v.hi[j];
    } else if (v.shape.d[j] == 1) {
      if (v.lo[j] > 0 || v.hi[j] < 1) o.hi[i] = 0; /* broadcasting a padding element */
    } else {
      char x[128], y[128];
      ir_shape_str(&v.shape, x, sizeof x);
      ir_shape_str(&s, y, sizeof y);
      return ir_fail(g, "cannot broadcast %s to %s", x, y), IR_NONE;
    }
  }
  update_masked(&o);
  return finish(g, base, &o);
}

ir_ref ir_view_slice(ir_graph *g, ir_ref a, const int64_t *start, const int64_t *step,
                     const int64_t *len) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_view v, o;
  ir_ref base = base_of(g, a, &v);
  o = v;
  for (int i = 0; i < v.shape.rank; i++) {
    if (step[i] == 0 || len[i] < 0) return ir_fail(g, "invalid slice on axis %d", i), IR_NONE;
    if (len[i] > 0 &&
        (start[i] < 0 || start[i] >= v.shape.d[i] || start[i] + step[i] * (len[i] - 1) < 0 ||
         start[i] + step[i] * (len[i] - 1) >= v.shape.d[i]))
      return ir_fail(g, "slice out of range on axis %d", i), IR_NONE;
    o.shape.d[i] = len[i];
    o.offset += v.stride[i] * (len[i] ? start[i] : 0);
    o.stride[i] = v.stride[i] * step[i];
    /* valid i: lo <= start + step*i < hi, an interval since it is monotonic */
    int64_t lo = 0, hi = len[i];
    if (step[i] > 0) {
      int64_t s = step[i];
      int64_t l = v.lo[i] - start[i], h = v.hi[i] - start[i];
      lo = l <= 0 ? 0 : (l + s - 1) / s;
      hi = h <= 0 ? 0 : (h + s - 1) / s;
    } else {
      int64_t s = -step[i];
      int64_t l = start[i] - v.lo[i]; /* i <= l / s */
      int64_t h = start[i] - v.hi[i]; /* i > h / s */
      hi = l < 0 ? 0 : l / s + 1;
      lo = h < 0 ? 0 : h / s + 1;
    }
    o.lo[i] = lo < 0 ? 0 : lo > len[i] ? len[i] : lo;
    o.hi[i] = hi < o.lo[i] ? o.lo[i] : hi > len[i] ? len[i] : hi;
  }
  update_masked(&o);
  return finish(g, base, &o);
}

ir_ref ir_view_pad(ir_graph *g, ir_ref a, const int64_t *before, const int64_t *after,
                   double value) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_view v, o;
  ir_ref base = base_of(g, a, &v);
  if (v.masked && v.pad_value != value) {
    base = ir_move(g, a);
    v = ir_view_contiguous(&g->nodes[base].shape);
  }
  o = v;
  bool any = false;
  for (int i = 0; i < v.shape.rank; i++) {
    if (before[i] < 0 || after[i] < 0) return ir_fail(g, "negative padding"), IR_NONE;
    any |= before[i] || after[i];
    o.shape.d[i] = v.shape.d[i] + before[i] + after[i];
    o.offset -= v.stride[i] * before[i];
    o.lo[i] = v.lo[i] + before[i];
    o.hi[i] = v.hi[i] + before[i];
  }
  if (!any) return a;
  o.pad_value = value;
  update_masked(&o);
  return finish(g, base, &o);
}

/* Strides for `s` reading the same elements as `v` in row-major order, or
 * false when that is not expressible (see the file comment). */
static bool reshape_view(const ir_view *v, const ir_shape *s, ir_view *o) {
  memset(o, 0, sizeof *o);
  o->shape = *s;
  o->offset = v->offset;
  o->pad_value = v->pad_value;
  for (int j = 0; j < s->rank; j++) o->hi[j] = s->d[j];
  if (ir_shape_numel(s) == 0) return true;
  int old[IR_MAX_RANK], nold = 0;
  for (int i = 0; i < v->shape.rank; i++) {
    if (v->shape.d[i] != 1)
      old[nold++] = i;
    else if (axis_masked(v, i))
      return false;
  }
  int i = 0, j = 0;
  while (j < s->rank) {
    if (s->d[j] == 1) {
      j++;
      continue;
    }
    int i0 = i, j0 = j;
    int64_t po = v->shape.d[old[i]], pn = s->d[j];
    while (po != pn) {
      if (po < pn) {
        if (++i >= nold) return false;
        po *= v->shape.d[old[i]];
      } else {
        if (++j >= s->rank) return false;
        pn *= s->d[j];
      }
    }
    for (int k = i0; k < i; k++)
      if (v->stride[old[k]] != v->stride[old[k + 1]] * v->shape.d[old[k + 1]]) return false;
    bool masked = false;
    for (int k = i0; k <= i; k++) masked |= axis_masked(v, old[k]);
    if (masked) {
      int big = 0, at = -1;
      for (int m = j0; m <= j; m++)
        if (s->d[m] > 1) big++, at = m;
      if (i0 != i || big != 1) return false;
      o->lo[at] = v->lo[old[i]];
      o->hi[at] = v->hi[old[i]];
    }
    int64_t st = v->stride[old[i]];
    for (int m = j; m >= j0; m--) {
      o->stride[m] = s->d[m] == 1 ? 0 : st;
      st *= s->d[m];
    }
    i++;
    j++;
  }
  update_masked(o);
  return true;
}

ir_ref ir_view_reshape(ir_graph *g, ir_ref a, ir_shape s) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_view v, o;
  ir_ref base = base_of(g, a, &v);
  if (ir_shape_numel(&s) != ir_shape_numel(&v.shape)) {
    char x[128], y[128];
    ir_shape_str(&v.shape, x, sizeof x);
    ir_shape_str(&s, y, sizeof y);
    return ir_fail(g, "cannot reshape %s to %s", x, y), IR_NONE;
  }
  if (!reshape_view(&v, &s, &o)) {
    base = ir_move(g, a);
    v = ir_view_contiguous(&g->nodes[base].shape);
    reshape_view(&v, &s, &o);
  }
  return finish(g, base, &o);
}

ir_ref ir_view_unsqueeze(ir_graph *g, ir_ref a, int axis) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_shape s = g->nodes[a].shape;
  if (axis < 0 || axis > s.rank || s.rank >= IR_MAX_RANK)
    return ir_fail(g, "unsqueeze axis %d out of range", axis), IR_NONE;
  for (int i = s.rank; i > axis; i--) s.d[i] = s.d[i - 1];
  s.d[axis] = 1;
  s.rank++;
  return ir_view_reshape(g, a, s);
}

ir_ref ir_view_squeeze(ir_graph *g, ir_ref a, int axis) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_shape s = g->nodes[a].shape;
  if (axis < 0 || axis >= s.rank || s.d[axis] != 1)
    return ir_fail(g, "cannot squeeze axis %d", axis), IR_NONE;
  for (int i = axis; i + 1 < s.rank; i++) s.d[i] = s.d[i + 1];
  s.rank--;
  return ir_view_reshape(g, a, s);
}
