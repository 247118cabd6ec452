/* fuse.c — deciding what is materialised, and so what each kernel fuses.
 *
 * Every node that is not materialised is computed inline by the one kernel
 * whose root needs it. Rules, applied until nothing changes:
 *  - inputs, weights, outputs and MOVEs are materialised (with --no-fuse,
 *    every compute node too);
 *  - a node needed by two kernels is materialised (no recomputation across
 *    kernels; inside one kernel an element-wise node may be used twice);
 *  - a view is inline only when it is a broadcast or transpose of an inline source
 *    (else its source is materialised and read at computed addresses);
 *  - reductions fused into one kernel ("stages") reduce the same source
 *    shape over the same axes, and every use of a stage must read it at the
 *    kernel's current outer position: checked by tracing which axis of the
 *    iteration space indexes each axis of the stage (trace_ok). */
#include "sched_impl.h"

#include <string.h>

typedef struct {
  sched_program *p;
  char *mat;      /* materialised */
  int *owner;     /* kernel root that computes an inline node */
  uint64_t *seen; /* trace_ok: the axis ids a node was checked with ... */
  uint32_t *seen_in, kernel_no; /* ... in the kernel numbered seen_in[node] (else not yet) */
  /* this pass's inline reductions of each kernel root, in order: the first
   * (-1: none) and the next after each; built once a pass, so that shaping
   * a kernel does not walk the whole graph (a chain of 300000 nodes in
   * 1500 kernels took 1.7 s here, 16 s under ASan) */
  int *stage_first, *stage_next;
  bool changed;
  bool restart; /* a conflict made this pass's ownership stale */
} fuse_ctx;

static bool is_free(const ir_node *x) {
  return x->op == IR_LOAD || x->op == IR_INDEX_COMPONENTS || x->op == IR_VIEW;
}

static void materialise(fuse_ctx *f, ir_ref r) {
  if (!f->mat[r]) f->mat[r] = 1, f->changed = true;
}

/* Inline expressions deeper than this are cut (materialised): it bounds
 * the recursion of every walk over a kernel's expression (here, trace_ok,
 * codegen's rendering), whatever the depth of the graph. */
#define MAX_INLINE_DEPTH 64

/* Does the inline value `x`, broadcast to `space`, read memory per element?
 * A reduction is an accumulator of this very kernel (a stage: free to
 * reuse) only when the broadcast goes back exactly onto its own iteration
 * space, as in a softmax or a norm; otherwise it counts as memory (it will
 * be another kernel's buffer). Unknown depth counts as memory. */
static bool reads_memory(fuse_ctx *f, ir_ref x, const ir_shape *space, int depth) {
  const ir_node *n = ir_node_get(f->p->g, x);
  if (f->mat[x] || n->op == IR_ALLOCATE || depth > 16) return true;
  if (n->reduce) return !ir_shape_eq(&ir_node_get(f->p->g, n->src[0])->shape, space);
  if (n->op == IR_VIEW)
    return !n->view.gather && n->op == IR_VIEW && ir_node_get(f->p->g, n->src[0])->op != IR_LOAD;
  for (int i = 0; i < n->nsrc; i++)
    if (reads_memory(f, n->src[i], space, depth + 1)) return true;
  return false;
}

/* Would inlining `s` under the broadcast view `v` recompute a value that
 * reads memory for each of many broadcast elements (e.g. a normalised row
 * re-derived for every output column of the matmul reading it)? Values made
 * only of this kernel's accumulators and constants stay inline: that is what
 * keeps a softmax or a layer norm in one kernel. */
static bool recomputes(fuse_ctx *f, const ir_node *v, ir_ref s) {
  const ir_node *sn = ir_node_get(f->p->g, s);
  if (sn->op == IR_VIEW || sn->op == IR_INDEX_COMPONENTS) return false;
  int64_t a = sched_ref(f->p, ir_shape_numel(&v->shape)),
          b = sched_ref(f->p, ir_shape_numel(&sn->shape));
  int map[IR_MAX_RANK];
  bool in_place =
      sn->shape.rank == v->shape.rank && ir_view_axis_map(&v->view, &sn->shape, map);
  for (int j = 0; in_place && j < sn->shape.rank; j++) in_place = map[j] < 0 || map[j] == j;
  if (b <= 0 || a / b < 4) return false;
  return !in_place || reads_memory(f, s, &v->shape, 0);
}

/* Claims the inline expression below `x` for kernel `root`. */
static void own(fuse_ctx *f, ir_ref root, ir_ref x, int depth, bool index) {
  const ir_node *n = ir_node_get(f->p->g, x);
  for (int i = 0; i < n->nsrc; i++) {
    ir_ref s = n->src[i];
    const ir_node *sn = ir_node_get(f->p->g, s);
    if (f->mat[s]) continue;
    if (depth >= MAX_INLINE_DEPTH && sn->op != IR_LOAD && sn->op != IR_INDEX_COMPONENTS) {
      materialise(f, s);
      continue;
    }
    if (n->op == IR_VIEW && i == 0 && sn->op != IR_LOAD) {
      int map[IR_MAX_RANK];
      /* a gather's index is computed once per outer iteration anyway (hoisted) */
      if (!ir_view_axis_map(&n->view, &sn->shape, map) || (!index && recomputes(f, n, s))) {
        materialise(f, s);
        /* another kernel already claimed s inline, and what lies below it:
         * stale now (kept, resnet18's /2/Add stayed a kernel of its own,
         * its Relu a second pass over 200704 floats) */
        if (f->owner[s] >= 0) {
          f->restart = true;
          return;
        }
        continue;
      }
    }
    if (!is_free(sn)) {
      if (f->owner[s] >= 0 && f->owner[s] != root) {
        /* needed by two kernels: the other one claimed what lies below s too,
         * so this pass's ownership is stale from here on */
        materialise(f, s);
        f->restart = true;
        return;
      }
      if (f->owner[s] == root) continue; /* already walked */
      f->owner[s] = root;
    }
    own(f, root, s, depth + 1, n->op == IR_VIEW && n->view.gather && i == 1);
    if (f->restart) return;
  }
}

static int stage_index(const ir_ref *stages, int n, ir_ref r) {
  for (int i = 0; i < n; i++)
    if (stages[i] == r) return i;
  return -1;
}

/* Does every stage below `x` get read at the kernel's current outer
 * position? `ids[j]` is the axis of the iteration space that indexes axis
 * j of `x` (-1: constant 0). Materialises a stage read elsewhere. */
static bool trace_ok(fuse_ctx *f, const sched_kernel *k, ir_ref x, const int *ids, bool top) {
  const ir_node *n = ir_node_get(f->p->g, x);
  if (top && n->reduce) return true; /* a root stage: its update is traced as a stage */
  if (!top) {
    if (f->mat[x]) return true;
    uint64_t code = sched_ids_code(ids, n->shape.rank);
    if (f->seen_in[x] == f->kernel_no && f->seen[x] == code)
      return true; /* a shared node, already checked this way */
    f->seen[x] = code;
    f->seen_in[x] = f->kernel_no;
    if (stage_index(k->stages, k->nstages, x) >= 0) {
      for (int j = 0; j < n->shape.rank; j++)
        if (n->shape.d[j] > 1 && ids[j] != j) return materialise(f, x), false;
      return true;
    }
  }
  if (n->op == IR_VIEW && n->view.gather) /* the index is an operand in this view's coordinates */
    return trace_ok(f, k, n->src[1], ids, false);
  if (n->op == IR_VIEW) {
    const ir_node *s = ir_node_get(f->p->g, n->src[0]);
    if (f->mat[n->src[0]] || s->op == IR_LOAD) return true;
    int map[IR_MAX_RANK], sids[IR_MAX_RANK];
    for (int j = 0; j < IR_MAX_RANK; j++) sids[j] = -1;
    if (!ir_view_axis_map(&n->view, &s->shape, map)) return materialise(f, n->src[0]), false;
    for (int j = 0; j < s->shape.rank; j++) sids[j] = map[j] >= 0 ? ids[map[j]] : -1;
    return trace_ok(f, k, n->src[0], sids, false);
  }
  bool ok = true;
  for (int i = 0; i < n->nsrc && ok; i++) ok = trace_ok(f, k, n->src[i], ids, false);
  return ok;
}

/* The space axes the value of inline node `x` depends on (a bit set). */
static uint32_t deps_of(fuse_ctx *f, const sched_kernel *k, ir_ref x, const int *ids) {
  const ir_node *n = ir_node_get(f->p->g, x);
  uint32_t d = 0;
  bool buffer = f->mat[x] || stage_index(k->stages, k->nstages, x) >= 0;
  if (buffer || n->op == IR_INDEX_COMPONENTS ||
      (n->op == IR_VIEW && (f->mat[n->src[0]] || n->view.gather))) {
    for (int j = 0; j < n->shape.rank; j++) {
      bool varies = n->shape.d[j] != 1;
      if (!buffer && n->op == IR_INDEX_COMPONENTS) varies &= n->coef[j] != 0;
      if (!buffer && n->op == IR_VIEW)
        varies &= n->view.stride[j] != 0 || n->view.lo[j] != 0 || n->view.hi[j] != n->shape.d[j];
      if (varies && ids[j] >= 0) d |= 1u << ids[j];
    }
    if (!buffer && n->op == IR_VIEW && n->view.gather) d |= deps_of(f, k, n->src[1], ids);
    return d;
  }
  if (n->op == IR_VIEW) {
    const ir_node *s = ir_node_get(f->p->g, n->src[0]);
    int map[IR_MAX_RANK], sids[IR_MAX_RANK];
    for (int j = 0; j < IR_MAX_RANK; j++) sids[j] = -1;
    if (s->op == IR_LOAD || !ir_view_axis_map(&n->view, &s->shape, map)) return 0;
    for (int j = 0; j < s->shape.rank; j++) sids[j] = map[j] >= 0 ? ids[map[j]] : -1;
    return deps_of(f, k, n->src[0], sids);
  }
  for (int i = 0; i < n->nsrc; i++) d |= deps_of(f, k, n->src[i], ids);
  return d;
}

/* Collects the inline gather views below `x` (with the space axis of each
 * of their axes); false when one is reached in two different ways. */
static bool find_gathers(fuse_ctx *f, sched_kernel *k, ir_ref x, const int *ids, bool top) {
  const ir_node *n = ir_node_get(f->p->g, x);
  if (!top && (f->mat[x] || stage_index(k->stages, k->nstages, x) >= 0)) return true;
  if (top && n->reduce) return true;
  if (n->op == IR_VIEW && n->view.gather) {
    for (int i = 0; i < k->ngathers; i++)
      if (k->gathers[i] == x)
        return !memcmp(k->gather_ids[i], ids, (size_t)n->shape.rank * sizeof ids[0]);
    /* the gathers its index reads first: the index statements run in
     * this order (sched_isl.c, phase X<i>), and GatherND's flat index adds
     * its components' checked indices (before, g0 read g1 unset) */
    if (!find_gathers(f, k, n->src[1], ids, false)) return false;
    if (k->ngathers == SCHED_MAX_STAGES) return false;
    k->gathers[k->ngathers] = x;
    for (int j = 0; j < IR_MAX_RANK; j++)
      k->gather_ids[k->ngathers][j] = j < n->shape.rank ? ids[j] : -1;
    k->ngathers++;
    return true;
  }
  if (n->op == IR_VIEW) {
    const ir_node *s = ir_node_get(f->p->g, n->src[0]);
    int map[IR_MAX_RANK], sids[IR_MAX_RANK];
    for (int j = 0; j < IR_MAX_RANK; j++) sids[j] = -1;
    if (f->mat[n->src[0]] || s->op == IR_LOAD || !ir_view_axis_map(&n->view, &s->shape, map))
      return true;
    for (int j = 0; j < s->shape.rank; j++) sids[j] = map[j] >= 0 ? ids[map[j]] : -1;
    return find_gathers(f, k, n->src[0], sids, false);
  }
  for (int i = 0; i < n->nsrc; i++)
    if (!find_gathers(f, k, n->src[i], ids, false)) return false;
  return true;
}

/* Does the inline value `x` read one of the kernel's stages? (Walks at
 * most the inline depth, which fusion bounds.) */
static bool reads_stage(fuse_ctx *f, const sched_kernel *k, ir_ref x) {
  if (stage_index(k->stages, k->nstages, x) >= 0) return true;
  if (f->mat[x]) return false;
  const ir_node *n = ir_node_get(f->p->g, x);
  for (int i = 0; i < n->nsrc; i++)
    if (reads_stage(f, k, n->src[i])) return true;
  return false;
}

/* Hoists the indices of the kernel's gathers to the outer loops: with no
 * reduction stage the outer axes become those the indices depend on (the
 * others, e.g. the embedding dimension, run inside in order); with stages,
 * only indices that depend on the stages' outer axes alone are hoisted. */
static void hoist_gathers(fuse_ctx *f, sched_kernel *k) {
  int ids[IR_MAX_RANK];
  bool ok = true;
  k->ngathers = 0;
  for (int i = 0; i < k->nstages && ok; i++) {
    for (int j = 0; j < IR_MAX_RANK; j++) ids[j] = j;
    ok = find_gathers(f, k, ir_node_get(f->p->g, k->stages[i])->src[0], ids, false);
  }
  for (int j = 0; j < IR_MAX_RANK; j++)
    ids[j] = j < ir_node_get(f->p->g, k->root)->shape.rank ? k->root_axis[j] : -1;
  if (ok) ok = find_gathers(f, k, k->root, ids, true);
  uint32_t deps = 0, outer = 0;
  /* an index computed from a stage is not known before the stage's loop:
   * it stays in the final statement (a hoisted read came first) */
  for (int i = 0; ok && i < k->ngathers; i++) {
    ir_ref e = ir_node_get(f->p->g, k->gathers[i])->src[1];
    deps |= deps_of(f, k, e, k->gather_ids[i]);
    ok = !reads_stage(f, k, e);
  }
  for (int i = 0; i < k->nouter; i++) outer |= 1u << k->outer[i];
  /* an index along the output's unit-stride axis (a Resize's columns)
   * stays where it is read: hoisted, that axis would run outermost and
   * every store stride a row (the seg net's 2x bilinear Resizes to 512 x
   * 512: a fifth of its time) */
  const ir_node *root = ir_node_get(f->p->g, k->root);
  int last = -1;
  for (int i = root->shape.rank - 1; i >= 0 && last < 0; i--)
    if (root->shape.d[i] != 1) last = k->root_axis[i];
  uint32_t all = 0;
  for (int i = 0; i < k->naxes; i++) all |= 1u << k->axes[i];
  if (!k->nstages && last >= 0 && (deps & (1u << last)) && (all & ~deps)) ok = false;
  if (!ok || !k->ngathers || (k->nstages && (deps & ~outer))) {
    k->ngathers = 0;
    return;
  }
  if (!k->nstages) {
    k->nouter = k->nred = 0;
    for (int i = 0; i < k->naxes; i++)
      if (deps & (1u << k->axes[i]))
        k->outer[k->nouter++] = k->axes[i];
      else
        k->red[k->nred++] = k->axes[i];
  }
}

/* Adds the bytes of every buffer the inline value `x` reads to weight[a]
 * of each space axis a its address depends on. */
static void weigh_reads(fuse_ctx *f, const sched_kernel *k, ir_ref x, const int *ids, bool top,
                        double *weight) {
  const ir_node *n = ir_node_get(f->p->g, x);
  if (!top && stage_index(k->stages, k->nstages, x) >= 0) return;
  ir_ref buf = !top && f->mat[x] ? x : n->op == IR_VIEW && f->mat[n->src[0]] ? n->src[0] : -1;
  if (buf >= 0) {
    const ir_node *b = ir_node_get(f->p->g, buf);
    double bytes =
        (double)sched_ref(f->p, ir_shape_numel(&b->shape)) * (double)ir_dtype_size(b->dtype);
    uint32_t d = deps_of(f, k, x, ids);
    for (int a = 0; a < IR_MAX_RANK; a++)
      if (d & (1u << a)) weight[a] += bytes;
    if (n->op == IR_VIEW && n->view.gather) weigh_reads(f, k, n->src[1], ids, false, weight);
    return;
  }
  if (n->op == IR_VIEW) {
    const ir_node *s = ir_node_get(f->p->g, n->src[0]);
    int map[IR_MAX_RANK], sids[IR_MAX_RANK];
    for (int j = 0; j < IR_MAX_RANK; j++) sids[j] = -1;
    if (s->op == IR_LOAD || !ir_view_axis_map(&n->view, &s->shape, map)) return;
    for (int j = 0; j < s->shape.rank; j++) sids[j] = map[j] >= 0 ? ids[map[j]] : -1;
    weigh_reads(f, k, n->src[0], sids, false, weight);
    return;
  }
  for (int i = 0; i < n->nsrc; i++) weigh_reads(f, k, n->src[i], ids, false, weight);
}

/* Orders the outer axes of a reduction kernel by the bytes of the operands
 * they index, largest first: the loop over the rows of the biggest operand
 * (a weight matrix) runs outermost, so each row is reused from cache by the
 * loops inside instead of being streamed once per row of the small operand.
 * Outer axes write distinct outputs and read only inputs: any order is legal. */
static void order_outer(fuse_ctx *f, sched_kernel *k) {
  if (!k->nstages || k->nouter < 2) return;
  double weight[IR_MAX_RANK] = {0};
  int ids[IR_MAX_RANK];
  for (int i = 0; i < k->nstages; i++) {
    for (int j = 0; j < IR_MAX_RANK; j++) ids[j] = j;
    weigh_reads(f, k, ir_node_get(f->p->g, k->stages[i])->src[0], ids, false, weight);
  }
  for (int i = 1; i < k->nouter; i++)
    for (int j = i; j > 0 && weight[k->outer[j]] > weight[k->outer[j - 1]]; j--) {
      int t = k->outer[j];
      k->outer[j] = k->outer[j - 1];
      k->outer[j - 1] = t;
    }
}

/* Axes of `s` with size != 1. */
static int nonone(const ir_shape *s, int64_t *d) {
  int n = 0;
  for (int i = 0; i < s->rank; i++)
    if (s->d[i] != 1) d[n++] = s->d[i];
  return n;
}

/* Appends stage r; too many: the earliest (deepest) stage gets its own
 * kernel (false). */
static bool add_stage(fuse_ctx *f, sched_kernel *k, ir_ref r) {
  if (k->nstages == SCHED_MAX_STAGES) return materialise(f, k->stages[0]), false;
  k->stages[k->nstages++] = r;
  return true;
}

/* Fills the kernel's stages, space and final form; false (with something
 * materialised) when the group is not valid yet. */
static bool shape_kernel(fuse_ctx *f, sched_kernel *k) {
  ir_graph *g = f->p->g;
  const ir_node *root = ir_node_get(g, k->root);
  k->nstages = 0;
  /* the owned reductions in order, then the root's own */
  for (int r = f->stage_first[k->root]; r >= 0; r = f->stage_next[r])
    if (!add_stage(f, k, r)) return false;
  if (root->reduce && !add_stage(f, k, k->root)) return false;
  k->space = root->shape;
  k->naxes = k->nouter = k->nred = 0;
  k->final_full = true;
  for (int i = 0; i < root->shape.rank; i++) k->root_axis[i] = root->shape.d[i] == 1 ? -1 : i;
  if (k->nstages) {
    const ir_node *s0 = ir_node_get(g, k->stages[0]);
    k->space = ir_node_get(g, s0->src[0])->shape;
    for (int i = 1; i < k->nstages; i++) {
      const ir_node *si = ir_node_get(g, k->stages[i]);
      /* stages of another space: the earliest (deepest) one gets its own kernel */
      if (!ir_shape_eq(&ir_node_get(g, si->src[0])->shape, &k->space) ||
          !ir_shape_eq(&si->shape, &s0->shape))
        return materialise(f, k->stages[0]), false;
    }
    if (!ir_shape_eq(&root->shape, &k->space)) {
      /* final over the outer axes: root's non-1 axes are the kept axes in order */
      int64_t a[IR_MAX_RANK], b[IR_MAX_RANK];
      int na = nonone(&root->shape, a), nb = nonone(&s0->shape, b);
      bool same = na == nb;
      for (int i = 0; same && i < na; i++) same = a[i] == b[i];
      if (!same) {
        for (int i = 0; i < k->nstages; i++)
          if (k->stages[i] != k->root) materialise(f, k->stages[i]);
        return false;
      }
      k->final_full = false;
      int j = 0;
      for (int i = 0; i < root->shape.rank; i++) {
        if (root->shape.d[i] == 1) continue;
        while (s0->shape.d[j] == 1) j++;
        k->root_axis[i] = j++;
      }
    }
  }
  const ir_node *s0 = k->nstages ? ir_node_get(g, k->stages[0]) : NULL;
  for (int i = 0; i < k->space.rank; i++) {
    if (k->space.d[i] == 1) continue;
    k->axes[k->naxes++] = i;
    if (s0 && s0->shape.d[i] == 1)
      k->red[k->nred++] = i;
    else
      k->outer[k->nouter++] = i;
  }
  int ids[IR_MAX_RANK];
  if (++f->kernel_no == 0) { /* forgets what trace_ok saw in the kernel before */
    memset(f->seen_in, 0, ((size_t)ir_graph_count(g) + 1) * sizeof *f->seen_in);
    f->kernel_no = 1;
  }
  for (int i = 0; i < k->nstages; i++) {
    for (int j = 0; j < k->space.rank; j++) ids[j] = j;
    if (!trace_ok(f, k, ir_node_get(g, k->stages[i])->src[0], ids, false)) return false;
  }
  for (int j = 0; j < root->shape.rank; j++) ids[j] = k->root_axis[j];
  if (!trace_ok(f, k, k->root, ids, true)) return false;
  hoist_gathers(f, k);
  order_outer(f, k);
  return true;
}

int sched_stage_of(const sched_kernel *k, ir_ref r) {
  return stage_index(k->stages, k->nstages, r);
}

int sched_gather_of(const sched_kernel *k, ir_ref r) {
  return stage_index(k->gathers, k->ngathers, r);
}

/* Decides the materialised set (returned, malloc'd, a flag per node) and
 * fills p->kernels with their roots, stages and spaces. */
char *sched_fuse(sched_program *p, const sched_options *opt, const char *live) {
  ir_graph *g = p->g;
  int n = ir_graph_count(g);
  fuse_ctx f = {p,
                calloc((size_t)n + 1, 1),
                malloc(((size_t)n + 1) * sizeof(int)),
                calloc((size_t)n + 1, sizeof(uint64_t)),
                calloc((size_t)n + 1, sizeof(uint32_t)),
                0,
                malloc(((size_t)n + 1) * sizeof(int)),
                malloc(((size_t)n + 1) * sizeof(int)),
                false,
                false};
  SCHED_ASSERT(f.mat && f.owner && f.seen && f.seen_in && f.stage_first && f.stage_next);
  int capk = 0; /* p->kernels' room: it grows by half, not by one (ASan's realloc copies) */
  /* an output that reshapes a value in place is written by that value's kernel */
  for (int i = 0; i < ir_output_count(g); i++)
    f.mat[p->out_alias[i] != IR_NONE ? p->out_alias[i] : ir_output(g, i)] = 1;
  for (int r = 0; r < n; r++) {
    const ir_node *x = ir_node_get(g, r);
    if (!live[r]) continue;
    if (x->op == IR_ALLOCATE || x->op == IR_MOVE) f.mat[r] = 1;
    if (opt->no_fuse && !is_free(x)) f.mat[r] = 1;
  }
  do {
    f.changed = false;
    for (int r = 0; r < n; r++) f.owner[r] = -1;
    /* consumers first: a node materialised while claiming is claimed later in the same pass */
    f.restart = false;
    for (int r = n - 1; r >= 0 && !f.restart; r--)
      if (live[r] && f.mat[r] && ir_node_get(g, r)->op != IR_ALLOCATE) own(&f, r, r, 0, false);
    if (f.changed) continue;
    for (int r = 0; r < n; r++) f.stage_first[r] = -1;
    for (int r = n - 1; r >= 0; r--) /* chained backwards: each list comes out in order */
      if (ir_node_get(g, r)->reduce && !f.mat[r] && f.owner[r] > r) {
        f.stage_next[r] = f.stage_first[f.owner[r]];
        f.stage_first[f.owner[r]] = r;
      }
    p->nkernels = 0;
    for (int r = 0; r < n && !f.changed; r++) {
      if (!live[r] || !f.mat[r] || ir_node_get(g, r)->op == IR_ALLOCATE) continue;
      if (p->nkernels == capk) {
        capk = capk < 16 ? 16 : capk + capk / 2;
        sched_kernel *grown = realloc(p->kernels, (size_t)capk * sizeof *p->kernels);
        SCHED_ASSERT(grown);
        p->kernels = grown;
      }
      sched_kernel *k = &p->kernels[p->nkernels++];
      memset(k, 0, sizeof *k);
      k->root = r;
      /* an invalid group always materialises something, so this terminates */
      SCHED_ASSERT(shape_kernel(&f, k) || f.changed);
    }
  } while (f.changed);
  free(f.owner);
  free(f.seen);
  free(f.seen_in);
  free(f.stage_first);
  free(f.stage_next);
  return f.mat;
}
