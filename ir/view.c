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

bool ir_view_is_split_reshape(const ir_view *v, const ir_shape *src) {
  const ir_shape *s = &v->shape;
  if (v->masked || v->gather || v->offset || !ir_shape_is_static(s) || !ir_shape_is_static(src) ||
      ir_shape_numel(s) != ir_shape_numel(src))
    return false;
  int64_t st[IR_MAX_RANK];
  ir_contiguous_strides(s, st);
  for (int i = 0; i < s->rank; i++)
    if (s->d[i] != 1 && v->stride[i] != st[i]) return false;
  for (int a = 0, b = 0;;) { /* the axes other than 1, side by side */
    while (a < s->rank && s->d[a] == 1) a++;
    while (b < src->rank && src->d[b] == 1) b++;
    if (a == s->rank || b == src->rank) return a != s->rank || b != src->rank;
    if (s->d[a++] != src->d[b++]) return true;
  }
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

/* A broadcast map is an axis map that keeps the source axes in order. */
bool ir_view_broadcast_map(const ir_view *v, const ir_shape *src, int *view_axis) {
  if (!ir_view_axis_map(v, src, view_axis)) return false;
  for (int j = 0, last = -1; j < src->rank; j++) {
    if (view_axis[j] < 0) continue;
    if (view_axis[j] < last) return false;
    last = view_axis[j];
  }
  return true;
}

/* Every view keeps 0 <= lo and hi <= d on each axis, and lo <= hi where
 * the bounds are static or the order is decidable; symbolic bounds may
 * cross for small values of the symbols (slice_mask): the mask is then
 * empty, which lo <= i < hi says as it is. So an axis reads its whole
 * extent exactly when lo == 0 and hi == d (for symbolic bounds: when they
 * are the same polynomials; otherwise the mask stays, which is correct,
 * only slower). */
static bool axis_masked(const ir_view *v, int i) {
  return v->masked && (v->lo[i] != 0 || v->hi[i] != v->shape.d[i]);
}

static void update_masked(ir_view *v) {
  v->masked = false;
  for (int i = 0; i < v->shape.rank; i++)
    if (v->lo[i] != 0 || v->hi[i] != v->shape.d[i]) v->masked = true;
}

/* max / min of two dimensions when the graph can decide which is larger. */
static bool dim_max(ir_graph *g, int64_t a, int64_t b, int64_t *out) {
  unsigned c = ir_dim_cmp(g, a, b);
  if (!(c & IR_CMP_LT)) return *out = a, true;
  if (!(c & IR_CMP_GT)) return *out = b, true;
  return false;
}

static bool dim_min(ir_graph *g, int64_t a, int64_t b, int64_t *out) {
  unsigned c = ir_dim_cmp(g, a, b);
  if (!(c & IR_CMP_GT)) return *out = a, true;
  if (!(c & IR_CMP_LT)) return *out = b, true;
  return false;
}

/* The mask of a slice of length `len`: the source's bounds less the start
 * (lo, hi), clamped to 0 <= lo and hi <= len, which keep the reads inside
 * the source and must be decided, and to lo <= len, lo <= hi where the
 * graph can decide them. Where it cannot, on a symbolic len (a Pad of 2
 * before a 3-tap window over t: the first tap reads x from i = min(2, t);
 * the window's right pad: x up to t - 2, below lo = 0 at t = 1), the
 * bounds are kept as they are: for the symbols' small values they cross,
 * the mask is empty, and lo <= i < hi still selects exactly the valid
 * elements. (An assumption len >= lo here refused lengths the window
 * holds: t = 1 in that example.) A static len's bounds are read as numbers
 * elsewhere (a broadcast of one element): there they must be decided. */
static bool mask_bounds(ir_graph *g, int64_t lo, int64_t hi, int64_t len, int64_t *olo, int64_t *ohi) {
  if (!dim_max(g, lo, 0, &lo) || !dim_min(g, hi, len, &hi)) return false;
  bool cross = ir_dim_is_sym(len);
  if (!dim_min(g, lo, len, olo)) {
    if (!cross) return false;
    *olo = lo;
  }
  if (!dim_max(g, hi, *olo, ohi)) {
    if (!cross) return false;
    *ohi = hi;
  }
  return true;
}

/* a >= 0 for every value of the symbols. */
static bool nonneg(ir_graph *g, int64_t a) {
  return !(ir_dim_cmp(g, a, 0) & IR_CMP_LT);
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
    if (n->shape.d[i] == 0 || n->shape.d[i] == 1) continue;
    if (!found) {
      if (!ir_dim_div_exact(n->coef[i], st[i], scale)) return false;
      found = true;
    }
    if (n->coef[i] != ir_dim_mul(*scale, st[i])) return false;
  }
  if (!found) *scale = 0;
  return true;
}

static ir_ref finish(ir_graph *g, ir_ref base, const ir_view *v) {
  /* a view is a node too: its size is checked as a primitive's (a model's
   * ConvTranspose strides near 2^62 once made a dilated view of 2^65
   * elements, and its strides overflowed) */
  if (!ir_shape_ok(g, &v->shape)) return IR_NONE;
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
    for (int i = 0; i < v->shape.rank; i++) coef[i] = ir_dim_mul(scale, v->stride[i]);
    return ir_index(g, v->shape, coef, ir_dim_add(b->base, ir_dim_mul(scale, v->offset)));
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
    if (ir_dim_same(g, v.shape.d[j], s.d[i])) { /* equal, or assumed equal */
      o.stride[i] = v.stride[j];
      o.lo[i] = v.lo[j];
      o.hi[i] = v.hi[j] == v.shape.d[j] ? s.d[i] : v.hi[j];
    } else if (v.shape.d[j] == 1) {
      if (v.lo[j] != 0 || v.hi[j] != 1) o.hi[i] = 0; /* broadcasting a padding element */
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

/* Is the read start + step*i, 0 <= i < len, inside [0, d) for every value
 * of the symbols? (A length that may be 0 is checked as if it were not.) */
static bool slice_in_range(ir_graph *g, int64_t d, int64_t start, int64_t step, int64_t len) {
  int64_t last = ir_dim_add(start, ir_dim_mul(step, ir_dim_sub(len, 1)));
  return nonneg(g, start) && nonneg(g, last) && nonneg(g, ir_dim_sub(ir_dim_sub(d, start), 1)) &&
         nonneg(g, ir_dim_sub(ir_dim_sub(d, last), 1));
}

/* The valid interval of a sliced axis: lo <= start + step*i < hi, an
 * interval since it is monotonic. Symbolic bounds need a positive step
 * (a step > 1 gives floor symbols) and decidable clamps. */
static bool slice_mask(ir_graph *g, const ir_view *v, int i, int64_t start, int64_t step,
                       int64_t len, int64_t *olo, int64_t *ohi) {
  if (v->lo[i] == 0 && v->hi[i] == v->shape.d[i]) {
    *olo = 0, *ohi = len; /* an in-range slice of a whole axis reads only valid elements */
    return true;
  }
  if (ir_dim_is_sym(v->lo[i]) || ir_dim_is_sym(v->hi[i]) || ir_dim_is_sym(start) ||
      ir_dim_is_sym(len)) {
    if (step > 1) { /* i >= ceil((lo - start) / step), i < ceil((hi - start) / step): floor symbols */
      int64_t l = ir_dim_floordiv(g, ir_dim_add(ir_dim_sub(v->lo[i], start), step - 1), step);
      int64_t h = ir_dim_floordiv(g, ir_dim_add(ir_dim_sub(v->hi[i], start), step - 1), step);
      return l != IR_DIM_INVALID && h != IR_DIM_INVALID && mask_bounds(g, l, h, len, olo, ohi);
    }
    if (step != 1) return false;
    return mask_bounds(g, ir_dim_sub(v->lo[i], start), ir_dim_sub(v->hi[i], start), len, olo, ohi);
  }
  int64_t lo = 0, hi = len;
  if (step > 0) {
    int64_t s = step;
    int64_t l = v->lo[i] - start, h = v->hi[i] - start;
    lo = l <= 0 ? 0 : (l + s - 1) / s;
    hi = h <= 0 ? 0 : (h + s - 1) / s;
  } else {
    int64_t s = -step;
    int64_t l = start - v->lo[i]; /* i <= l / s */
    int64_t h = start - v->hi[i]; /* i > h / s */
    hi = l < 0 ? 0 : l / s + 1;
    lo = h < 0 ? 0 : h / s + 1;
  }
  *olo = lo < 0 ? 0 : lo > len ? len : lo;
  *ohi = hi < *olo ? *olo : hi > len ? len : hi;
  return true;
}

ir_ref ir_view_slice(ir_graph *g, ir_ref a, const int64_t *start, const int64_t *step,
                     const int64_t *len) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_view v, o;
  ir_ref base = base_of(g, a, &v);
  o = v;
  for (int i = 0; i < v.shape.rank; i++) {
    bool sym = ir_dim_is_sym(start[i]) || ir_dim_is_sym(len[i]) || ir_dim_is_sym(v.shape.d[i]);
    /* one element (or none) is read whatever the step: take 1, so a step
     * near INT64_MAX or INT64_MIN (ONNX allows them) is no overflow */
    int64_t st = !ir_dim_is_sym(len[i]) && len[i] <= 1 && step[i] ? 1 : step[i];
    if (step[i] == 0 || ir_dim_is_sym(step[i]) ||
        (ir_dim_is_sym(len[i]) ? !nonneg(g, len[i]) : len[i] < 0))
      return ir_fail(g, "invalid slice on axis %d", i), IR_NONE;
    if (sym && !slice_in_range(g, v.shape.d[i], start[i], st, len[i]))
      return ir_fail(g,
                     "slice out of range on axis %d (not provable for all values of the symbols)",
                     i),
             IR_NONE;
    int64_t last = 0;
    if (!sym && len[i] > 0 &&
        (start[i] < 0 || start[i] >= v.shape.d[i] || ir_mul_ov(st, len[i] - 1, &last) ||
         ir_add_ov(start[i], last, &last) || last < 0 || last >= v.shape.d[i]))
      return ir_fail(g, "slice out of range on axis %d", i), IR_NONE;
    o.shape.d[i] = len[i];
    if (len[i]) o.offset = ir_dim_add(o.offset, ir_dim_mul(v.stride[i], start[i]));
    o.stride[i] = ir_dim_mul(v.stride[i], st);
    if (!slice_mask(g, &v, i, start[i], st, len[i], &o.lo[i], &o.hi[i]))
      return ir_fail(g, "cannot slice padded axis %d with symbolic bounds", i), IR_NONE;
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
    if (!nonneg(g, before[i]) || !nonneg(g, after[i]))
      return ir_fail(g, "negative padding"), IR_NONE;
    any |= before[i] || after[i];
    o.shape.d[i] = ir_dim_add(ir_dim_add(v.shape.d[i], before[i]), after[i]);
    o.offset = ir_dim_sub(o.offset, ir_dim_mul(v.stride[i], before[i]));
    o.lo[i] = ir_dim_add(v.lo[i], before[i]);
    o.hi[i] = ir_dim_add(v.hi[i], before[i]);
  }
  if (!any) return a;
  o.pad_value = value;
  update_masked(&o);
  return finish(g, base, &o);
}

/* Sliding windows over the last `nsp` axes of `a`: the result is
 * [leading axes of a, win[0..nsp), out[0..nsp)], element (.., k.., o..)
 * reading a[.., o*step + k*dil ..]. Windows overlap, which strides express
 * but a mask cannot: a masked (padded) `a` is copied first. Static sizes
 * only; every window must lie inside `a`. */
ir_ref ir_view_window(ir_graph *g, ir_ref a, int nsp, const int64_t *win, const int64_t *step,
                      const int64_t *dil, const int64_t *out) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_view v;
  ir_ref base = base_of(g, a, &v);
  int lead = v.shape.rank - nsp;
  if (nsp < 1 || lead < 0 || lead + 2 * nsp > IR_MAX_RANK || !ir_shape_is_static(&v.shape))
    return ir_fail(g, "invalid window view"), IR_NONE;
  if (v.masked) {
    base = ir_move(g, a);
    v = ir_view_contiguous(&g->nodes[base].shape);
  }
  ir_view o = v;
  o.shape.rank = lead + 2 * nsp;
  for (int i = 0; i < nsp; i++) {
    int64_t last, extent = v.shape.d[lead + i], sk, so;
    if (win[i] < 1 || out[i] < 1 || step[i] < 1 || dil[i] < 1 ||
        __builtin_mul_overflow(win[i] - 1, dil[i], &sk) ||
        __builtin_mul_overflow(out[i] - 1, step[i], &so) || __builtin_add_overflow(sk, so, &last) ||
        last >= extent)
      return ir_fail(g, "window out of range on axis %d", lead + i), IR_NONE;
    int64_t st = v.stride[lead + i];
    o.shape.d[lead + i] = win[i], o.stride[lead + i] = ir_dim_mul(st, dil[i]);
    o.shape.d[lead + nsp + i] = out[i], o.stride[lead + nsp + i] = ir_dim_mul(st, step[i]);
  }
  for (int i = lead; i < o.shape.rank; i++) o.lo[i] = 0, o.hi[i] = o.shape.d[i];
  return finish(g, base, &o);
}

/* Strides for `s` reading the same elements as `v` in row-major order, or
 * false when that is not expressible (see the file comment). */
/* Does `v` read its source contiguously in row-major order from 0? */
static bool is_contiguous(const ir_view *v) {
  int64_t st[IR_MAX_RANK];
  ir_contiguous_strides(&v->shape, st);
  if (v->masked || v->offset != 0 || v->gather) return false;
  for (int i = 0; i < v->shape.rank; i++)
    if (v->shape.d[i] != 1 && v->stride[i] != st[i]) return false;
  return true;
}

/* Which group to grow while matching old and new extents: the smaller one
 * (static), or the one whose product divides the other's (symbolic);
 * -1 when neither divides (not expressible as strides). */
static int grow_old(int64_t po, int64_t pn) {
  int64_t q;
  if (!ir_dim_is_sym(po) && !ir_dim_is_sym(pn)) return po < pn;
  if (ir_dim_div_exact(pn, po, &q)) return 1;
  if (ir_dim_div_exact(po, pn, &q)) return 0;
  return -1;
}

static bool reshape_view(const ir_view *v, const ir_shape *s, ir_view *o) {
  memset(o, 0, sizeof *o);
  o->shape = *s;
  o->offset = v->offset;
  o->pad_value = v->pad_value;
  for (int j = 0; j < s->rank; j++) o->hi[j] = s->d[j];
  if (ir_shape_numel(s) == 0) return true;
  if ((!ir_shape_is_static(s) || !ir_shape_is_static(&v->shape)) && is_contiguous(v)) {
    ir_contiguous_strides(s, o->stride);
    return true;
  }
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
      int grow = grow_old(po, pn);
      if (grow < 0) return false;
      if (grow) {
        if (++i >= nold) return false;
        po = ir_dim_mul(po, v->shape.d[old[i]]);
      } else {
        if (++j >= s->rank) return false;
        pn = ir_dim_mul(pn, s->d[j]);
      }
    }
    for (int k = i0; k < i; k++)
      if (v->stride[old[k]] != ir_dim_mul(v->stride[old[k + 1]], v->shape.d[old[k + 1]]))
        return false;
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
      st = ir_dim_mul(st, s->d[m]);
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

/* A reshape that merges a repeated (stride 0) axis into the axis before it
 * is no strided view, so ir_view_reshape copies the repeat first:
 * grouped-query attention's keys and values, [B, G, T, D] expanded to
 * [B, G, R, T, D] and reshaped to [B, G·R, T, D], written R times over (the
 * 1.1B LLaMA: 1 MB a layer for each of keys and values, from 128 KB). A
 * matmul reading the copy can read its source instead (builder.c). */
static bool unrepeat_at(const ir_view *vb, const ir_shape *ms, const ir_view *v, int h, ir_view *o,
                        int *axis) {
  int64_t st[IR_MAX_RANK], merged = ir_dim_mul(ms->d[h], ms->d[h + 1]);
  ir_contiguous_strides(ms, st);
  uint32_t used = 0;
  int n = 0;
  *axis = -1;
  for (int k = 0; k < vb->shape.rank; k++) {
    int64_t d = vb->shape.d[k];
    if (*axis < 0 && d == merged && vb->stride[k] == st[h + 1]) {
      /* G·R read as (G, R): the source's strides, R's 0 */
      *axis = k;
      o->shape.d[n] = ms->d[h];
      o->stride[n++] = v->stride[h];
      o->shape.d[n] = ms->d[h + 1];
      o->stride[n++] = 0;
      used |= 3u << h;
      continue;
    }
    int j = 0;
    while (j < ms->rank && (j == h || j == h + 1 || (used & (1u << j)) || ms->d[j] != d ||
                            (d != 1 && vb->stride[k] != st[j])))
      j++;
    if (j == ms->rank) return false;
    used |= 1u << j;
    o->shape.d[n] = d;
    o->stride[n++] = v->stride[j];
  }
  for (int j = 0; j < ms->rank; j++)
    if (ms->d[j] != 1 && !(used & (1u << j))) return false;
  o->shape.rank = n;
  for (int i = 0; i < n; i++) o->hi[i] = o->shape.d[i];
  return *axis >= 0;
}

bool ir_view_unrepeat(ir_graph *g, ir_ref b, ir_ref *bs, int *axis) {
  ir_view vb;
  ir_ref m = base_of(g, b, &vb);
  const ir_node *mn = &g->nodes[m];
  if (mn->op != IR_MOVE || vb.masked || vb.gather || vb.offset != 0) return false;
  const ir_node *vn = &g->nodes[mn->src[0]];
  if (vn->op != IR_VIEW || vn->view.gather || vn->view.masked || vb.shape.rank >= IR_MAX_RANK)
    return false;
  /* the copy has its source view's shape: an axis h + 1 repeated (stride
   * 0) that b reads merged with axis h, every other axis read as it is */
  for (int h = 0; h + 1 < mn->shape.rank; h++) {
    ir_view o;
    memset(&o, 0, sizeof o);
    o.offset = vn->view.offset;
    if (vn->view.stride[h + 1] != 0 || mn->shape.d[h] <= 1 || mn->shape.d[h + 1] <= 1 ||
        ir_dim_is_sym(mn->shape.d[h + 1]) || !unrepeat_at(&vb, &mn->shape, &vn->view, h, &o, axis))
      continue;
    *bs = finish(g, vn->src[0], &o);
    return *bs != IR_NONE;
  }
  return false;
}
