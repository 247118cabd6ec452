/* sink.c — element-wise ops moved below a strided view of a reduction.
 *
 * A windowed convolution computes more columns than it has outputs (the
 * wide form: p = oh * Wp + ow, the wrapped columns never read) and its
 * output is a strided view of that result. An element-wise op on the view
 * (the bias, a Relu) cannot join the reduction's kernel through that view,
 * so it was a pass of its own over the output (3x3, 64 -> 64 at 56x56: 3 %
 * of the layer, another 3 % for the padded copy reading its result). When
 * the op's other operands are constants or broadcasts that vary only along
 * axes the view keeps one to one (the channels), op(view(R), b) is
 * view(op(R, b')): the op runs on the reduction's own axes, becomes its
 * kernel's epilogue, and every reader of the op's result reads the same
 * elements through the composed view.
 *
 * The same through a copy that only reorders a reduction's elements, read
 * back as a plain reshape: the shuffle of a ConvTranspose whose kernel is
 * its stride ([M, taps, positions] -> [M, H*kh, W*kw]). op(u(MOVE(v(R))), b)
 * is u(MOVE(v(op(R, b')))) when v and u each read every element once: the
 * bias, a BatchNormalization and a Relu after the shuffle become the
 * matmul's epilogue instead of a pass over the shuffled result. */
#include "ir_impl.h"

static bool plain_view(const ir_node *n) {
  if (n->op != IR_VIEW || n->view.gather || n->view.masked || !ir_shape_is_static(&n->shape)) return false;
  for (int k = 0; k < n->shape.rank; k++)
    if (n->view.stride[k] < 0) return false;
  return true;
}

/* For each axis k of the view v over a contiguous `src`: the source axis it
 * indexes alone (element i of axis k is element i of that axis, whatever
 * the other axes), or -1. */
static void identity_axes(const ir_view *v, const ir_shape *src, int *axis) {
  int64_t st[IR_MAX_RANK];
  ir_contiguous_strides(src, st);
  for (int k = 0; k < v->shape.rank; k++) {
    axis[k] = -1;
    if (v->shape.d[k] < 2 || v->stride[k] == 0 || v->offset != 0) continue;
    for (int a = 0; a < src->rank && axis[k] < 0; a++) {
      if (st[a] != v->stride[k] || src->d[a] != v->shape.d[k]) continue;
      /* the lower axes never carry into a, the higher ones never change it */
      int64_t below = 0, wrap = st[a] * src->d[a];
      bool ok = true;
      for (int j = 0; j < v->shape.rank && ok; j++) {
        if (j == k || v->shape.d[j] < 2 || v->stride[j] == 0) continue;
        int64_t t;
        if (v->stride[j] >= st[a]) ok = v->stride[j] % wrap == 0;
        else ok = !ir_mul_ov(v->stride[j], v->shape.d[j] - 1, &t) && !ir_add_ov(below, t, &below);
      }
      if (ok && below < st[a]) axis[k] = a;
    }
  }
}

/* Operand `b` (of the view's shape) as a value of the reduction's shape
 * `rs`, or IR_NONE: a constant, or a broadcast varying only along axes
 * that map to a run of rs's axes, first[k]..last[k] (an axis of the view
 * that is several of rs's merged: a band's output channels computed as
 * panels, [M / nr, .., nr]; size-1 axes inside the run are skipped). */
ir_ref ir_sink_operand_over_runs(ir_graph *g, ir_ref b, const int *first, const int *last, const ir_shape *rs) {
  ir_node n = g->nodes[b];
  if (n.op == IR_LOAD && !n.sym_value) {
    n.shape = *rs;
    return ir_add_node(g, &n);
  }
  if (!plain_view(&n)) return IR_NONE;
  ir_view o = n.view;
  o.shape = *rs;
  for (int a = 0; a < rs->rank; a++) o.stride[a] = 0, o.lo[a] = 0, o.hi[a] = rs->d[a];
  for (int k = 0; k < n.shape.rank; k++) {
    if (n.shape.d[k] < 2 || n.view.stride[k] == 0) continue;
    if (first[k] < 0 || last[k] < first[k]) return IR_NONE;
    int64_t s = n.view.stride[k];
    for (int a = last[k]; a >= first[k]; a--) {
      if (rs->d[a] == 1) continue;
      o.stride[a] = s;
      if (ir_mul_ov(s, rs->d[a], &s)) return IR_NONE;
    }
  }
  n.shape = *rs, n.view = o, n.label = NULL;
  return ir_add_node(g, &n);
}

/* The same where each axis maps to one axis of rs (`axis`). */
ir_ref ir_sink_operand_over(ir_graph *g, ir_ref b, const int *axis, const ir_shape *rs) {
  return ir_sink_operand_over_runs(g, b, axis, axis, rs);
}

/* The view `u` (over a contiguous value of shape `es`) re-expressed over
 * the buffer that `v` reads that value from; false when an axis of u does
 * not move along one axis of es. With `steps`, an axis of u may step
 * several elements of that axis (a strided subsample: a stride-2 1x1
 * convolution's input read from a padded copy's interior); without, one
 * (a row of a wide result is then not an axis of it: pad_share keeps a
 * convolution's bias and Relu in its kernel). */
static bool compose(const ir_view *u, const ir_shape *es, const ir_view *v, bool steps, ir_view *out) {
  int64_t st[IR_MAX_RANK], f0 = u->offset, e0[IR_MAX_RANK] = {0}, span[IR_MAX_RANK] = {0};
  int64_t step[IR_MAX_RANK];
  int map[IR_MAX_RANK];
  ir_contiguous_strides(es, st);
  for (int k = 0; k < u->shape.rank; k++) {
    int64_t t;
    if (u->lo[k] >= u->hi[k] || ir_mul_ov(u->stride[k], u->lo[k], &t) || ir_add_ov(f0, t, &f0)) return false;
    map[k] = -1, step[k] = 1;
    if (u->hi[k] - u->lo[k] < 2 || u->stride[k] == 0) continue;
    /* the outermost axis whose stride divides u's: an exact match when
     * there is one (every axis outside it has a larger stride) */
    for (int a = 0; a < es->rank && map[k] < 0 && u->stride[k] > 0; a++)
      if (es->d[a] > 1 && u->stride[k] % st[a] == 0 && u->stride[k] / st[a] < es->d[a] &&
          (steps || u->stride[k] == st[a]))
        map[k] = a, step[k] = u->stride[k] / st[a];
    if (map[k] < 0 || ir_mul_ov(u->hi[k] - 1 - u->lo[k], step[k], &t) ||
        ir_add_ov(span[map[k]], t, &span[map[k]]))
      return false;
  }
  if (f0 < 0 || f0 >= ir_shape_numel(es)) return false;
  *out = *u;
  int64_t off = v->offset;
  for (int a = 0; a < es->rank; a++) {
    if (es->d[a] == 1) continue; /* stride 0 */
    e0[a] = f0 / st[a], f0 %= st[a];
    if (e0[a] + span[a] >= es->d[a]) return false;
    off += v->stride[a] * e0[a];
  }
  for (int k = 0; k < u->shape.rank; k++) {
    if (map[k] >= 0 && ir_mul_ov(v->stride[map[k]], step[k], &out->stride[k])) return false;
    if (map[k] < 0) out->stride[k] = 0;
    off -= out->stride[k] * u->lo[k];
  }
  out->offset = off;
  return true;
}

bool ir_view_compose(const ir_view *u, const ir_shape *es, const ir_view *v, ir_view *out) {
  return compose(u, es, v, false, out);
}

bool ir_view_compose_steps(const ir_view *u, const ir_shape *es, const ir_view *v, ir_view *out) {
  return compose(u, es, v, true, out);
}

/* A reduction over at least `min_axes` axes, or an element-wise op over one
 * (sunk here before), also read through views when `views`; at most 9 ops
 * or views above it. */
static bool over_sum(const ir_graph *g, ir_ref r, int min_axes, bool views, int depth) {
  const ir_node *n = &g->nodes[r];
  if (n->reduce) {
    const ir_shape *s = &g->nodes[n->src[0]].shape;
    int axes = 0;
    for (int k = 0; k < n->shape.rank && k < s->rank; k++) axes += s->d[k] != n->shape.d[k];
    return axes >= min_axes;
  }
  if (depth > 8) return false;
  if (views && n->op == IR_VIEW) return !n->view.gather && over_sum(g, n->src[0], min_axes, views, depth + 1);
  if (!ir_sinkable_op(g, n)) return false;
  for (int i = 0; i < n->nsrc; i++)
    if (ir_shape_eq(&g->nodes[n->src[i]].shape, &n->shape) && over_sum(g, n->src[i], min_axes, views, depth + 1))
      return true;
  return false;
}

/* A reduction, or an element-wise op over one. */
bool ir_sink_from_reduce(const ir_graph *g, ir_ref r) {
  return over_sum(g, r, 0, false, 0);
}

/* A convolution's windowed sum (a reduction over several axes), or an
 * element-wise op over one, read through views (a band's reshape, its
 * padded slot in a Concat): the output-channels-as-columns form
 * (importer/conv_cols.c) stores it channels innermost, read transposed. */
static bool conv_sum(const ir_graph *g, ir_ref r) {
  return over_sum(g, r, 2, true, 0);
}

/* Does the unmasked view `v` over a contiguous value of shape `src` read
 * each of its elements exactly once (a transpose of a reshape)? */
static bool permutes(const ir_view *v, const ir_shape *src) {
  if (v->offset != 0 || !ir_shape_is_static(src) || ir_shape_numel(&v->shape) != ir_shape_numel(src)) return false;
  uint32_t done = 0;
  int64_t expect = 1;
  for (;;) { /* the moving axes by increasing stride: a mixed radix of `src` */
    int k = -1;
    for (int j = 0; j < v->shape.rank; j++)
      if (v->shape.d[j] > 1 && !(done & (1u << j)) && (k < 0 || v->stride[j] < v->stride[k])) k = j;
    if (k < 0) return expect == ir_shape_numel(src);
    if (v->stride[k] != expect || ir_mul_ov(expect, v->shape.d[k], &expect)) return false;
    done |= 1u << k;
  }
}

/* `u` = VIEW u(MOVE(v(R))) with u and v permutations and the copy read only
 * through u: its reduction R (else IR_NONE) and, in `axis`, the axis of R
 * each axis of u moves along alone (-1: none). */
static ir_ref shuffled(const ir_graph *g, ir_ref u, int *axis) {
  const ir_node *un = &g->nodes[u], *mn = &g->nodes[un->src[0]];
  if (!plain_view(un) || mn->op != IR_MOVE || !ir_shape_is_static(&mn->shape) ||
      !permutes(&un->view, &mn->shape))
    return IR_NONE;
  const ir_node *vn = &g->nodes[mn->src[0]];
  if (!plain_view(vn) || !ir_shape_eq(&vn->shape, &mn->shape)) return IR_NONE;
  ir_ref r = vn->src[0];
  const ir_shape *rs = &g->nodes[r].shape;
  if (!permutes(&vn->view, rs) || !ir_sink_from_reduce(g, r) || ir_uses_of(g, un->src[0]) != 1 || ir_uses_of(g, u) != 1)
    return IR_NONE;
  int ua[IR_MAX_RANK], va[IR_MAX_RANK];
  identity_axes(&un->view, &mn->shape, ua);
  identity_axes(&vn->view, rs, va);
  for (int k = 0; k < un->shape.rank; k++) axis[k] = ua[k] < 0 ? -1 : va[ua[k]];
  return r;
}

/* op(u(MOVE(v(R))), b...) -> u(MOVE(v(op(R, b'...)))): `s` is the operand
 * read through the shuffle, R its reduction. A reader that is a view reads
 * the new copy through its view composed with u. */
static bool sink_shuffle(ir_graph *g, ir_ref e, ir_ref s, ir_ref r, const int *axis) {
  ir_ref chain[3] = {s, g->nodes[s].src[0], g->nodes[g->nodes[s].src[0]].src[0]}; /* u, MOVE, v */
  ir_shape es = g->nodes[e].shape, rs = g->nodes[r].shape;
  ir_view composed[64];
  ir_ref users[64];
  int nu = 0;
  /* u a plain reshape: the flat index into e is the one into the copy */
  ir_view flat = ir_view_contiguous(&es);
  bool in_order = true;
  for (int k = 0; k < es.rank; k++) in_order &= es.d[k] == 1 || g->nodes[s].view.stride[k] == flat.stride[k];
  for (ir_ref u = 0; u < g->nnodes; u++) {
    const ir_node *un = &g->nodes[u];
    if (un->op != IR_VIEW || un->src[0] != e) continue;
    if (nu == 64 || un->view.gather) return false;
    composed[nu] = un->view;
    if (!in_order && !ir_view_compose(&un->view, &es, &g->nodes[s].view, &composed[nu])) return false;
    users[nu++] = u;
  }
  ir_node x = g->nodes[e];
  for (int i = 0; i < x.nsrc; i++) {
    x.src[i] = x.src[i] == s ? r : ir_sink_operand_over(g, x.src[i], axis, &rs);
    if (x.src[i] == IR_NONE) return false; /* nodes added so far are dropped by ir_compact */
  }
  x.shape = rs;
  ir_ref made[3], below = ir_add_node(g, &x);
  for (int k = 2; k >= 0; k--) {
    ir_node c = g->nodes[chain[k]];
    c.dtype = x.dtype, c.src[0] = below;
    below = made[k] = ir_add_node(g, &c);
  }
  for (int j = 0; j < nu; j++) {
    ir_node *un = &g->nodes[users[j]];
    un->src[0] = made[1], un->view = composed[j];
  }
  ir_replace_uses(g, e, made[0]);
  return true;
}

static bool sink_one(ir_graph *g, ir_ref e) {
  const ir_node *n = &g->nodes[e];
  if (!ir_sinkable_op(g, n) || !ir_shape_is_static(&n->shape)) return false;
  for (int i = 0; i < n->nsrc; i++) {
    int axis[IR_MAX_RANK];
    ir_ref r = shuffled(g, n->src[i], axis);
    if (r != IR_NONE) return sink_shuffle(g, e, n->src[i], r, axis);
  }
  for (int i = 0; i < g->noutputs; i++)
    if (g->outputs[i] == e) return false;
  /* the one view of a reduction among the operands */
  ir_ref vref = IR_NONE;
  for (int i = 0; i < n->nsrc; i++) {
    const ir_node *s = &g->nodes[n->src[i]];
    if (!plain_view(s) || s->view.offset != 0 || !(ir_sink_from_reduce(g, s->src[0]) || conv_sum(g, s->src[0])))
      continue;
    if (vref != IR_NONE && vref != n->src[i]) return false;
    vref = n->src[i];
  }
  if (vref == IR_NONE) return false;
  ir_view v = g->nodes[vref].view;
  ir_ref r = g->nodes[vref].src[0];
  ir_shape rs = g->nodes[r].shape;
  /* only where the view drops columns (a window): a plain reshape would
   * move epilogues of matmuls that fuse as they are */
  bool drops = ir_shape_is_static(&rs) && ir_shape_numel(&rs) > ir_shape_numel(&n->shape) &&
               ir_shape_numel(&rs) / 2 <= ir_shape_numel(&n->shape) && ir_sink_from_reduce(g, r);
  /* or a convolution's sum stored channels innermost, read transposed:
   * the op then runs in the sum's order, not as a transposing pass */
  bool transposes = false;
  if (!drops && ir_shape_is_static(&rs) && permutes(&v, &rs) && conv_sum(g, r)) {
    ir_view flat = ir_view_contiguous(&v.shape);
    for (int k = 0; k < v.shape.rank; k++) transposes |= v.shape.d[k] > 1 && v.stride[k] != flat.stride[k];
  }
  if (!drops && !transposes) return false;
  /* every reader must read the result through a view that composes */
  ir_view composed[64];
  ir_ref users[64];
  int nu = 0;
  for (ir_ref u = 0; u < g->nnodes; u++) {
    const ir_node *un = &g->nodes[u];
    for (int i = 0; i < un->nsrc; i++) {
      if (un->src[i] != e) continue;
      if (nu == 64) return false;
      users[nu] = u;
      if (un->op == IR_VIEW &&
          (un->view.gather || !ir_view_compose(&un->view, &n->shape, &v, &composed[nu])))
        return false;
      nu++;
      break;
    }
  }
  if (!nu) return false;
  int axis[IR_MAX_RANK];
  identity_axes(&v, &rs, axis);
  ir_node x = *n;
  for (int i = 0; i < x.nsrc; i++) {
    x.src[i] = x.src[i] == vref ? r : ir_sink_operand_over(g, x.src[i], axis, &rs);
    if (x.src[i] == IR_NONE) return false; /* nodes added so far are dropped by ir_compact */
  }
  x.shape = rs;
  ir_ref ex = ir_add_node(g, &x);
  v.shape = g->nodes[e].shape; /* unchanged; the view now reads the op's result */
  ir_node vn = g->nodes[vref];
  vn.dtype = x.dtype, vn.src[0] = ex, vn.view = v;
  ir_ref nv = ir_add_node(g, &vn);
  for (int j = 0; j < nu; j++) {
    ir_node *un = &g->nodes[users[j]];
    if (un->op == IR_VIEW) {
      un->src[0] = ex, un->view = composed[j];
    } else {
      for (int i = 0; i < un->nsrc; i++)
        if (un->src[i] == e) un->src[i] = nv;
    }
  }
  return true;
}

int ir_rewrite_sink_views(ir_graph *g) {
  int count = 0;
  for (bool again = !g->failed; again;) {
    again = false;
    int n = g->nnodes, c = 0;
    for (ir_ref r = 0; r < n; r++) c += sink_one(g, r);
    if (c || g->nnodes != n) ir_compact(g);
    count += c, again = c > 0;
  }
  return count;
}
