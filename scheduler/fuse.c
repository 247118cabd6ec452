/* fuse.c — deciding what is materialised, and so what each kernel fuses.
 *
 * Every node that is not materialised is computed inline by the one kernel
 * whose root needs it. Rules, applied until nothing changes:
 *  - inputs, weights, outputs and MOVEs are materialised (with --no-fuse,
 *    every compute node too);
 *  - a node needed by two kernels is materialised (no recomputation across
 *    kernels; inside one kernel an element-wise node may be used twice);
 *  - a view is inline only when it is a pure broadcast of an inline source
 *    (else its source is materialised and read at computed addresses);
 *  - reductions fused into one kernel ("stages") reduce the same source
 *    shape over the same axes, and every use of a stage must read it at the
 *    kernel's current outer position: checked by tracing which axis of the
 *    iteration space indexes each axis of the stage (trace_ok). */
#include "sched_impl.h"

#include <string.h>

typedef struct {
  sched_program *p;
  char *mat;   /* materialised */
  int *owner;  /* kernel root that computes an inline node */
  uint64_t *seen; /* trace_ok: the axis ids a node was checked with (0: not yet) */
  bool changed;
} fuse_ctx;

/* The axis ids of a node packed into a non-zero word (ids are -1..11). */
static uint64_t ids_code(const int *ids, int rank) {
  uint64_t c = 1;
  for (int j = 0; j < rank; j++) c = c << 4 | (uint64_t)(ids[j] + 1);
  return c;
}

static bool is_free(const ir_node *x) {
  return x->op == IR_LOAD || x->op == IR_INDEX_COMPONENTS || x->op == IR_VIEW;
}

static void materialise(fuse_ctx *f, ir_ref r) {
  if (!f->mat[r]) f->mat[r] = 1, f->changed = true;
}

/* Claims the inline expression below `x` for kernel `root`. */
static void own(fuse_ctx *f, ir_ref root, ir_ref x) {
  const ir_node *n = ir_node_get(f->p->g, x);
  for (int i = 0; i < n->nsrc; i++) {
    ir_ref s = n->src[i];
    const ir_node *sn = ir_node_get(f->p->g, s);
    if (f->mat[s]) continue;
    if (n->op == IR_VIEW && i == 0 && sn->op != IR_LOAD) {
      int map[IR_MAX_RANK];
      if (!ir_view_broadcast_map(&n->view, &sn->shape, map)) {
        materialise(f, s);
        continue;
      }
    }
    if (!is_free(sn)) {
      if (f->owner[s] >= 0 && f->owner[s] != root) {
        materialise(f, s);
        continue;
      }
      if (f->owner[s] == root) continue; /* already walked */
      f->owner[s] = root;
    }
    own(f, root, s);
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
    uint64_t code = ids_code(ids, n->shape.rank);
    if (f->seen[x] == code) return true; /* a shared node, already checked this way */
    f->seen[x] = code;
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
    if (!ir_view_broadcast_map(&n->view, &s->shape, map)) return materialise(f, n->src[0]), false;
    for (int j = 0; j < s->shape.rank; j++) sids[j] = map[j] >= 0 ? ids[map[j]] : -1;
    return trace_ok(f, k, n->src[0], sids, false);
  }
  bool ok = true;
  for (int i = 0; i < n->nsrc && ok; i++) ok = trace_ok(f, k, n->src[i], ids, false);
  return ok;
}

/* Axes of `s` with size != 1. */
static int nonone(const ir_shape *s, int64_t *d) {
  int n = 0;
  for (int i = 0; i < s->rank; i++)
    if (s->d[i] != 1) d[n++] = s->d[i];
  return n;
}

/* Fills the kernel's stages, space and final form; false (with something
 * materialised) when the group is not valid yet. */
static bool shape_kernel(fuse_ctx *f, sched_kernel *k) {
  ir_graph *g = f->p->g;
  const ir_node *root = ir_node_get(g, k->root);
  k->nstages = 0;
  for (int r = 0; r <= k->root; r++) {
    const ir_node *x = ir_node_get(g, r);
    if (!x->reduce || (r != k->root && (f->mat[r] || f->owner[r] != k->root))) continue;
    if (k->nstages == SCHED_MAX_STAGES) return materialise(f, r), false;
    k->stages[k->nstages++] = r;
  }
  k->space = root->shape;
  k->naxes = k->nouter = k->nred = 0;
  k->final_full = true;
  for (int i = 0; i < root->shape.rank; i++) k->root_axis[i] = root->shape.d[i] == 1 ? -1 : i;
  if (k->nstages) {
    const ir_node *s0 = ir_node_get(g, k->stages[0]);
    k->space = ir_node_get(g, s0->src[0])->shape;
    for (int i = 1; i < k->nstages; i++) {
      const ir_node *si = ir_node_get(g, k->stages[i]);
      if (!ir_shape_eq(&ir_node_get(g, si->src[0])->shape, &k->space) || !ir_shape_eq(&si->shape, &s0->shape)) {
        if (k->stages[i] != k->root) return materialise(f, k->stages[i]), false;
        return materialise(f, k->stages[0]), false;
      }
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
    if (s0 && s0->shape.d[i] == 1) k->red[k->nred++] = i;
    else k->outer[k->nouter++] = i;
  }
  int ids[IR_MAX_RANK];
  memset(f->seen, 0, (size_t)ir_graph_count(g) * sizeof *f->seen);
  for (int i = 0; i < k->nstages; i++) {
    for (int j = 0; j < k->space.rank; j++) ids[j] = j;
    if (!trace_ok(f, k, ir_node_get(g, k->stages[i])->src[0], ids, false)) return false;
  }
  for (int j = 0; j < root->shape.rank; j++) ids[j] = k->root_axis[j];
  return trace_ok(f, k, k->root, ids, true);
}

int sched_stage_of(const sched_kernel *k, ir_ref r) {
  return stage_index(k->stages, k->nstages, r);
}

/* Decides the materialised set (returned, malloc'd, a flag per node) and
 * fills p->kernels with their roots, stages and spaces. */
char *sched_fuse(sched_program *p, const sched_options *opt, const char *live) {
  ir_graph *g = p->g;
  int n = ir_graph_count(g);
  fuse_ctx f = {p, calloc((size_t)n + 1, 1), malloc(((size_t)n + 1) * sizeof(int)),
                calloc((size_t)n + 1, sizeof(uint64_t)), false};
  SCHED_ASSERT(f.mat && f.owner && f.seen);
  for (int i = 0; i < ir_output_count(g); i++) f.mat[ir_output(g, i)] = 1;
  for (int r = 0; r < n; r++) {
    const ir_node *x = ir_node_get(g, r);
    if (!live[r]) continue;
    if (x->op == IR_ALLOCATE || x->op == IR_MOVE) f.mat[r] = 1;
    if (opt->no_fuse && !is_free(x)) f.mat[r] = 1;
  }
  do {
    f.changed = false;
    for (int r = 0; r < n; r++) f.owner[r] = -1;
    for (int r = 0; r < n; r++)
      if (live[r] && f.mat[r] && ir_node_get(g, r)->op != IR_ALLOCATE) own(&f, r, r);
    if (f.changed) continue;
    p->nkernels = 0;
    for (int r = 0; r < n && !f.changed; r++) {
      if (!live[r] || !f.mat[r] || ir_node_get(g, r)->op == IR_ALLOCATE) continue;
      p->kernels = realloc(p->kernels, (size_t)(p->nkernels + 1) * sizeof *p->kernels);
      SCHED_ASSERT(p->kernels);
      sched_kernel *k = &p->kernels[p->nkernels++];
      memset(k, 0, sizeof *k);
      k->root = r;
      shape_kernel(&f, k);
    }
  } while (f.changed);
  free(f.owner);
  free(f.seen);
  return f.mat;
}
