/* sched.c — materialisation, kernel formation and the pipeline of the
 * scheduler. A node gets a buffer when it must exist in memory: graph
 * inputs, weights and outputs, reductions, MOVEs, the source of a view,
 * and compute nodes read by more than one consumer. Every other node is
 * computed inline by the kernel of the buffer that needs it. */
#include "sched_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return -1;
}

static bool is_compute(const ir_node *n) {
  return n->op != IR_ALLOCATE && n->op != IR_LOAD && n->op != IR_VIEW &&
         n->op != IR_INDEX_COMPONENTS;
}

/* Outputs must be written by a kernel into their own buffer. */
static void separate_outputs(ir_graph *g) {
  for (int i = 0; i < ir_output_count(g); i++) {
    ir_ref r = ir_output(g, i);
    bool dup = false;
    for (int j = 0; j < i; j++) dup |= ir_output(g, j) == r;
    if (ir_node_get(g, r)->op == IR_ALLOCATE || dup) {
      ir_set_output(g, i, ir_move(g, r));
    }
  }
}

static int add_buf(sched_program *p, sched_buf_kind kind, ir_ref r, int io_index) {
  const ir_node *n = ir_node_get(p->g, r);
  p->bufs = realloc(p->bufs, (size_t)(p->nbufs + 1) * sizeof *p->bufs);
  SCHED_ASSERT(p->bufs);
  sched_buf *b = &p->bufs[p->nbufs];
  memset(b, 0, sizeof *b);
  b->kind = kind;
  b->node = r;
  b->dtype = n->dtype;
  b->numel = ir_shape_numel(&n->shape);
  b->io_index = io_index;
  b->first = b->last = -1;
  p->buf_of[r] = p->nbufs;
  return p->nbufs++;
}

static void choose_buffers(sched_program *p, const sched_options *opt, const char *live) {
  ir_graph *g = p->g;
  int n = ir_graph_count(g);
  int *uses = calloc((size_t)n, sizeof *uses);
  SCHED_ASSERT(uses);
  for (int r = 0; r < n; r++)
    if (live[r])
      for (int k = 0; k < ir_node_get(g, r)->nsrc; k++) uses[ir_node_get(g, r)->src[k]]++;
  for (int i = 0; i < ir_output_count(g); i++) add_buf(p, SCHED_BUF_OUTPUT, ir_output(g, i), i);
  for (int r = 0; r < n; r++) {
    if (!live[r] || p->buf_of[r] >= 0) continue;
    const ir_node *x = ir_node_get(g, r);
    bool need = false;
    if (x->op == IR_ALLOCATE) {
      add_buf(p, x->origin == IR_ORIGIN_INPUT ? SCHED_BUF_INPUT : SCHED_BUF_WEIGHT, r, x->io_index);
      continue;
    }
    need |= x->reduce || x->op == IR_MOVE;
    need |= is_compute(x) && (uses[r] > 1 || opt->no_fuse);
    if (need) add_buf(p, SCHED_BUF_TEMP, r, -1);
  }
  /* the source of a view is read at computed addresses: it must be in memory */
  for (int r = 0; r < n; r++) {
    const ir_node *x = ir_node_get(g, r);
    if (!live[r] || x->op != IR_VIEW) continue;
    ir_ref s = x->src[0];
    if (p->buf_of[s] < 0 && ir_node_get(g, s)->op != IR_LOAD) add_buf(p, SCHED_BUF_TEMP, s, -1);
  }
  free(uses);
}

static void note_arg(sched_kernel *k, int buf) {
  for (int i = 0; i < k->nargs; i++)
    if (k->args[i] == buf) return;
  k->args = realloc(k->args, (size_t)(k->nargs + 1) * sizeof *k->args);
  SCHED_ASSERT(k->args);
  k->args[k->nargs++] = buf;
}

/* Buffers read by the inline expression of `r`. */
static void collect_args(sched_program *p, sched_kernel *k, ir_ref r, bool is_root) {
  if (!is_root && p->buf_of[r] >= 0) {
    note_arg(k, p->buf_of[r]);
    return;
  }
  const ir_node *x = ir_node_get(p->g, r);
  for (int i = 0; i < x->nsrc; i++) collect_args(p, k, x->src[i], false);
}

static void form_kernels(sched_program *p) {
  int n = ir_graph_count(p->g);
  for (int r = 0; r < n; r++) {
    int b = p->buf_of[r];
    if (b < 0 || p->bufs[b].kind == SCHED_BUF_INPUT || p->bufs[b].kind == SCHED_BUF_WEIGHT)
      continue;
    p->kernels = realloc(p->kernels, (size_t)(p->nkernels + 1) * sizeof *p->kernels);
    SCHED_ASSERT(p->kernels);
    sched_kernel *k = &p->kernels[p->nkernels];
    memset(k, 0, sizeof *k);
    const ir_node *x = ir_node_get(p->g, r);
    k->root = r;
    k->out_buf = b;
    note_arg(k, b);
    collect_args(p, k, r, true);
    k->space = x->reduce ? ir_node_get(p->g, x->src[0])->shape : x->shape;
    for (int i = 0; i < k->space.rank; i++)
      if (k->space.d[i] != 1) k->axes[k->naxes++] = i;
    for (int i = 0; i < k->nargs; i++) {
      sched_buf *a = &p->bufs[k->args[i]];
      if (a->first < 0) a->first = p->nkernels;
      a->last = p->nkernels;
    }
    p->nkernels++;
  }
}

static int64_t align64(int64_t x) {
  return (x + 63) & ~(int64_t)63;
}

/* Greedy best-fit by size: biggest buffers first, each at the lowest offset
 * free during its whole lifetime. */
static void plan_arena(sched_program *p) {
  int *order = malloc((size_t)p->nbufs * sizeof *order), m = 0;
  SCHED_ASSERT(order || !p->nbufs);
  for (int i = 0; i < p->nbufs; i++)
    if (p->bufs[i].kind == SCHED_BUF_TEMP) order[m++] = i;
  for (int i = 1; i < m; i++)
    for (int j = i; j > 0; j--) {
      sched_buf *a = &p->bufs[order[j - 1]], *b = &p->bufs[order[j]];
      if ((size_t)a->numel * ir_dtype_size(a->dtype) >= (size_t)b->numel * ir_dtype_size(b->dtype)) break;
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  p->arena_size = p->arena_naive = 0;
  for (int i = 0; i < m; i++) {
    sched_buf *b = &p->bufs[order[i]];
    int64_t size = align64(b->numel * (int64_t)ir_dtype_size(b->dtype));
    p->arena_naive += size;
    int64_t off = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (int j = 0; j < i; j++) {
        sched_buf *o = &p->bufs[order[j]];
        int64_t osize = align64(o->numel * (int64_t)ir_dtype_size(o->dtype));
        bool live_overlap = !(o->last < b->first || b->last < o->first);
        if (live_overlap && off < o->offset + osize && o->offset < off + size) {
          off = o->offset + osize;
          moved = true;
        }
      }
    }
    b->offset = off;
    if (off + size > p->arena_size) p->arena_size = off + size;
  }
  free(order);
}

static void place_weights(sched_program *p) {
  int64_t off = 0;
  for (int i = 0; i < p->nbufs; i++) {
    sched_buf *b = &p->bufs[i];
    if (b->kind != SCHED_BUF_WEIGHT) continue;
    b->offset = off;
    off = align64(off + b->numel * (int64_t)ir_dtype_size(b->dtype));
  }
  p->weights_size = off;
}

int sched_build(ir_graph *g, const sched_options *opt, sched_program **out, char *err, size_t errlen) {
  static const sched_options defaults = {0};
  if (!opt) opt = &defaults;
  *out = NULL;
  if (ir_verify(g)) return fail(err, errlen, "%s", ir_error(g));
  separate_outputs(g);
  if (ir_failed(g)) return fail(err, errlen, "%s", ir_error(g));
  sched_program *p = calloc(1, sizeof *p);
  SCHED_ASSERT(p);
  p->g = g;
  int n = ir_graph_count(g);
  p->buf_of = malloc((size_t)n * sizeof *p->buf_of);
  SCHED_ASSERT(p->buf_of || !n);
  for (int i = 0; i < n; i++) p->buf_of[i] = -1;
  char *live = ir_live_nodes(g);
  choose_buffers(p, opt, live);
  free(live);
  form_kernels(p);
  plan_arena(p);
  place_weights(p);
  p->ctx = isl_ctx_alloc();
  SCHED_ASSERT(p->ctx);
  for (int i = 0; i < p->nkernels; i++)
    if (sched_kernel_build_ast(p, &p->kernels[i], err, errlen)) {
      sched_free(p);
      return -1;
    }
  *out = p;
  return 0;
}

void sched_free(sched_program *p) {
  if (!p) return;
  for (int i = 0; i < p->nkernels; i++) {
    isl_ast_node_free(p->kernels[i].ast);
    free(p->kernels[i].args);
  }
  free(p->kernels);
  free(p->bufs);
  free(p->buf_of);
  if (p->ctx) isl_ctx_free(p->ctx);
  free(p);
}
