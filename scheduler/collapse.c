/* collapse.c — consecutive outer loops that run as one.
 *
 * Two loops next to each other in a kernel's outer band, over axes a then
 * b, can run as one loop over d_a * d_b when every address the kernel
 * computes depends on (i_a, i_b) only through i_a * d_b + i_b: that is, in
 * every access the coefficient of i_a is d_b times the coefficient of i_b
 * (both 0 when the access does not depend on them). The collapsed loop then
 * runs over axis b with the product as its extent, axis a leaves the loop
 * nest, and code generation indexes a with 0 and b with the collapsed
 * iterator — the addresses come out the same, no division, no modulo.
 * Chains collapse the same way (batch, sequence and an element-wise
 * kernel's [N, C, H, W] into one loop). A mask over a or b (a pad or a
 * slice) or a broadcast of only one of them (coefficients 0 and not 0)
 * keeps the loops apart, as does a transposed read.
 *
 * The walk mirrors codegen/render.c: every address rendered there is
 * checked here — the output's, each buffer read, each view (through
 * broadcasts and transposes of inline sources), the index of an indexed
 * read, INDEX_COMPONENTS. Register-blocked kernels keep their loops (their
 * tiles are their own band). */
#include "sched_impl.h"

#include <string.h>

/* One address the kernel computes: coef[a] elements per step of space
 * axis a; esize bytes per element (0: an index, not a memory access). */
typedef struct {
  int64_t coef[IR_MAX_RANK];
  int esize;
} addr;

typedef struct {
  const sched_program *p;
  const sched_kernel *k;
  addr *addrs;            /* the output's first */
  int naddrs, cap;
  uint32_t masked;        /* space axes under a mask */
  bool opaque;            /* an address the walk cannot follow: no collapse */
  bool gather;            /* an indexed read */
  uint64_t *seen;         /* per node: the axis ids it was walked with (0: not yet) */
} walk;

/* One address: element (i_j) of `shape` at `stride[j] * i_j`, axis j
 * indexed by space axis ids[j] (-1: constant 0). */
static void address(walk *w, const ir_shape *shape, const int64_t *stride, const int *ids, int esize) {
  if (w->naddrs == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 16;
    w->addrs = realloc(w->addrs, (size_t)w->cap * sizeof *w->addrs);
    SCHED_ASSERT(w->addrs);
  }
  addr *x = &w->addrs[w->naddrs++];
  memset(x, 0, sizeof *x);
  x->esize = esize;
  for (int j = 0; j < shape->rank; j++)
    if (ids[j] >= 0 && shape->d[j] != 1) x->coef[ids[j]] = ir_dim_add(x->coef[ids[j]], stride[j]);
}

/* A mask over space axis `a` keeps it out of every collapse. */
static void masked(walk *w, int a) {
  w->masked |= 1u << a;
}

/* Every address of the value of `r` at the element whose axis j is
 * indexed by space axis ids[j]. Inline expressions are at most 64 deep
 * (fuse.c), which bounds the recursion. */
static void walk_value(walk *w, ir_ref r, const int *ids, bool is_root) {
  const sched_program *p = w->p;
  const ir_node *n = ir_node_get(p->g, r);
  int64_t st[IR_MAX_RANK];
  if (!is_root && p->buf_of[r] >= 0) {
    (void)sched_node_layout(p, r, st);
    address(w, &n->shape, st, ids, (int)ir_dtype_size(n->dtype));
    return;
  }
  if (sched_stage_of(w->k, r) >= 0 || n->op == IR_LOAD) return; /* an accumulator, a literal */
  uint64_t code = sched_ids_code(ids, n->shape.rank);
  if (w->seen[r] == code) return; /* a shared node, already walked this way */
  w->seen[r] = code;
  if (n->op == IR_INDEX_COMPONENTS) {
    address(w, &n->shape, n->coef, ids, 0);
    return;
  }
  if (n->op != IR_VIEW) {
    for (int i = 0; i < n->nsrc; i++) walk_value(w, n->src[i], ids, false);
    return;
  }
  if (n->view.masked)
    for (int j = 0; j < n->shape.rank; j++)
      if (ids[j] >= 0 && (n->view.lo[j] != 0 || n->view.hi[j] != n->shape.d[j])) masked(w, ids[j]);
  const ir_node *src = ir_node_get(p->g, n->src[0]);
  if (src->op == IR_LOAD) return;
  if (p->buf_of[n->src[0]] < 0) { /* an inline source through a broadcast or transpose */
    int map[IR_MAX_RANK], sids[IR_MAX_RANK];
    if (!ir_view_axis_map(&n->view, &src->shape, map)) {
      w->opaque = true;
      return;
    }
    for (int j = 0; j < src->shape.rank; j++) sids[j] = map[j] >= 0 ? ids[map[j]] : -1;
    walk_value(w, n->src[0], sids, false);
    return;
  }
  /* an index not hoisted is computed here, at this element; a hoisted one
   * is walked with its statement (sched_collapse) */
  if (n->view.gather && sched_gather_of(w->k, r) < 0) walk_value(w, n->src[1], ids, false);
  w->gather |= n->view.gather;
  address(w, &n->shape, n->view.stride, ids, (int)ir_dtype_size(src->dtype));
}

static int64_t abs64(int64_t x) {
  return x < 0 ? -x : x;
}

/* A copy (no stage) whose every read strides a cache line or more along
 * the output's unit-stride axis — a transpose, like the rotated keys that
 * attention reads as Q·Kᵀ's columns, gathered from the key projection,
 * the RoPE tables and the rotated half — runs its innermost loop along the
 * axis that gives more of its accesses unit stride (the reads, vectorised;
 * the output then stored with a stride), when that axis is at least 16
 * long. A plain transpose (one read, one write) keeps the output's order.
 * So does a kernel with reads along the output's lines, unless its
 * innermost axis is shorter than one vector of the target: then the reads
 * across the lines (a convolution's result stored channels innermost, as
 * a residual Add over a 14-wide map reads it: 256 channels a position)
 * take an axis along which they are all unit stride, the others strided,
 * when the lines those strided accesses touch in one pass of that axis
 * fit in L1 (each line is touched again in the next passes). Zen 5, 1
 * thread, hot buffers, [C, W, W] + [W, W + 1, C] transposed: W 14, C 256
 * (32 KB a pass) 48.3 -> 14.5 us, C 128 14.1 -> 4.7; W 10, C 256 18.7 ->
 * 7.3; but W 7, C 512 (64 KB a pass) 14.2 -> 20.2, so not there. A read
 * that stays put along the output's innermost axis (a per-channel bias)
 * is neither along nor across. */
static void order_transposed(walk *w, sched_kernel *k, const sched_target *t) {
  int lanes = sched_target_lanes(t);
  int last = k->outer[k->nouter - 1], best = -1, best_unit = 0, last_unit = 0;
  if (k->nstages || k->ngathers || w->gather || w->opaque || w->naddrs < 2) return;
  bool along = false, across = false;
  for (int i = 0; i < w->naddrs; i++) {
    const addr *x = &w->addrs[i];
    if (!x->esize) continue;
    if (!ir_dim_valid(x->coef[last]) || ir_dim_is_sym(x->coef[last])) return;
    if (i && !x->coef[last]) continue; /* the same element all along the line (a bias) */
    if (i && abs64(x->coef[last]) * x->esize < 64) along = true; /* a read along the output's lines */
    else if (i) across = true;
    last_unit += x->coef[last] == 1;
  }
  if (along && (!across || ir_dim_is_sym(k->space.d[last]) || k->space.d[last] >= lanes)) return;
  for (int j = 0; j + 1 < k->nouter; j++) {
    int b = k->outer[j], unit = 0;
    bool ok = !ir_dim_is_sym(k->space.d[b]) && k->space.d[b] >= 16;
    for (int i = 1; i < w->naddrs && ok; i++) {
      const addr *x = &w->addrs[i];
      bool x_across = x->esize && abs64(x->coef[last]) * x->esize >= 64;
      ok = !x->esize || x->coef[b] == 1 || (!along && x->coef[b] == 0) || (along && !x_across);
      unit += x->esize && x->coef[b] == 1;
    }
    if (ok && along) { /* the strided accesses' lines of one pass of b, the output's too */
      int64_t strided = 0;
      for (int i = 0; i < w->naddrs; i++)
        strided += w->addrs[i].esize && w->addrs[i].coef[b] != 0 && w->addrs[i].coef[b] != 1;
      ok = t->l1d > 0 && (!strided || k->space.d[b] <= t->l1d / 64 / strided);
    }
    if (ok && (along || unit > last_unit) && unit > best_unit) best = j, best_unit = unit;
  }
  if (best < 0) return;
  int b = k->outer[best];
  for (int j = best; j + 1 < k->nouter; j++) k->outer[j] = k->outer[j + 1];
  k->outer[k->nouter - 1] = b;
}

void sched_collapse(const sched_program *p, sched_kernel *k) {
  for (int i = 0; i < IR_MAX_RANK; i++) k->extent[i] = i < k->space.rank ? k->space.d[i] : 1;
  k->collapsed = 0;
  if (k->gemm.on || k->nouter < 2) return;
  walk w = {.p = p, .k = k, .seen = calloc((size_t)ir_graph_count(p->g) + 1, sizeof(uint64_t))};
  SCHED_ASSERT(w.seen);
  const ir_node *root = ir_node_get(p->g, k->root);
  int ids[IR_MAX_RANK];
  int64_t st[IR_MAX_RANK];
  for (int j = 0; j < root->shape.rank; j++) ids[j] = k->root_axis[j];
  (void)sched_node_layout(p, k->root, st); /* inside a padded copy too (interior.c) */
  address(&w, &root->shape, st, ids, (int)ir_dtype_size(root->dtype)); /* the output */
  walk_value(&w, k->root, ids, true);
  for (int s = 0; s < k->nstages; s++) {
    for (int j = 0; j < IR_MAX_RANK; j++) ids[j] = j;
    walk_value(&w, ir_node_get(p->g, k->stages[s])->src[0], ids, false);
  }
  for (int h = 0; h < k->ngathers; h++)
    walk_value(&w, ir_node_get(p->g, k->gathers[h])->src[1], k->gather_ids[h], false);
  free(w.seen);
  order_transposed(&w, k, &p->opt.target);
  /* a and b collapse when every address has coef[a] = d_b * coef[b], no
   * mask over either */
  bool ok[IR_MAX_RANK] = {false};
  for (int i = 0; i + 1 < k->nouter; i++) {
    int a = k->outer[i], b = k->outer[i + 1];
    ok[i] = !w.opaque && !(w.masked >> a & 1) && !(w.masked >> b & 1);
    for (int j = 0; j < w.naddrs && ok[i]; j++) {
      int64_t want = ir_dim_mul(w.addrs[j].coef[b], k->space.d[b]);
      ok[i] = ir_dim_valid(w.addrs[j].coef[a]) && ir_dim_valid(want) && w.addrs[j].coef[a] == want;
    }
  }
  free(w.addrs);
  if (p->opt.no_collapse) return;
  /* fold each collapsible axis into the next loop; the product must not overflow */
  for (int i = 0; i + 1 < k->nouter; i++) {
    int a = k->outer[i], b = k->outer[i + 1];
    int64_t e = ir_dim_mul(k->extent[a], k->extent[b]);
    if (!ok[i] || !ir_dim_valid(e) || e == IR_DIM_INVALID) continue;
    k->extent[b] = e;
    k->collapsed |= 1u << a;
  }
  int n = 0;
  for (int i = 0; i < k->nouter; i++)
    if (!(k->collapsed >> k->outer[i] & 1)) k->outer[n++] = k->outer[i];
  k->nouter = n, n = 0;
  for (int i = 0; i < k->naxes; i++)
    if (!(k->collapsed >> k->axes[i] & 1)) k->axes[n++] = k->axes[i];
  k->naxes = n;
}
