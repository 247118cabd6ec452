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

/* Outputs must be written by a kernel into their own buffer. */
static void separate_outputs(ir_graph *g) {
  for (int i = 0; i < ir_output_count(g); i++) {
    ir_ref r = ir_output(g, i);
    bool dup = false;
    for (int j = 0; j < i; j++) dup |= ir_output(g, j) == r;
    if (ir_node_get(g, r)->op == IR_ALLOCATE || dup) ir_set_output(g, i, ir_move(g, r));
  }
}

/* Output i as a reshape of a value X nothing else reads (a 1x1
 * convolution over its positions flattened, [N, M, H*W] read as [N, M, H,
 * W]): X's kernel writes the output's buffer, the same elements in the
 * same order, instead of a buffer of its own and a copy. `uses` counts
 * each node's live readers and the outputs. */
static ir_ref output_alias(const ir_graph *g, int i, const int *uses) {
  ir_ref o = ir_output(g, i);
  const ir_node *v = ir_node_get(g, o);
  if (v->op != IR_VIEW || v->nsrc != 1) return IR_NONE;
  ir_ref x = v->src[0];
  const ir_node *xn = ir_node_get(g, x);
  if (xn->op == IR_ALLOCATE || xn->op == IR_LOAD || xn->op == IR_VIEW || xn->op == IR_INDEX_COMPONENTS ||
      uses[x] != 1 || uses[o] != 1 || xn->dtype != v->dtype || !ir_view_is_split_reshape(&v->view, &xn->shape))
    return IR_NONE;
  return x;
}

static void find_output_aliases(sched_program *p, const char *live) {
  const ir_graph *g = p->g;
  int n = ir_graph_count(g), no = ir_output_count(g);
  int *uses = calloc((size_t)n + 1, sizeof *uses);
  p->out_alias = malloc(((size_t)no + 1) * sizeof *p->out_alias);
  SCHED_ASSERT(uses && p->out_alias);
  for (int r = 0; r < n; r++) {
    const ir_node *x = ir_node_get(g, r);
    for (int k = 0; k < x->nsrc && live[r]; k++) uses[x->src[k]]++;
  }
  for (int i = 0; i < no; i++) uses[ir_output(g, i)]++;
  for (int i = 0; i < no; i++) p->out_alias[i] = output_alias(g, i, uses);
  free(uses);
}

int sched_add_buf(sched_program *p, sched_buf_kind kind, ir_ref r, int io_index) {
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
  if (p->buf_of[r] < 0) p->buf_of[r] = p->nbufs; /* a packed copy does not stand for its node */
  return p->nbufs++;
}

/* Buffers for the materialised nodes: outputs first (their slots), then the rest. */
static void make_buffers(sched_program *p, const char *mat, const char *live) {
  ir_graph *g = p->g;
  for (int i = 0; i < ir_output_count(g); i++) {
    int b = sched_add_buf(p, SCHED_BUF_OUTPUT, ir_output(g, i), i);
    if (p->out_alias[i] != IR_NONE) p->buf_of[p->out_alias[i]] = b;
  }
  for (int r = 0; r < ir_graph_count(g); r++) {
    if (!live[r] || !mat[r] || p->buf_of[r] >= 0 || p->store[r].on) continue;
    const ir_node *x = ir_node_get(g, r);
    if (x->op == IR_ALLOCATE)
      sched_add_buf(p, x->origin == IR_ORIGIN_INPUT ? SCHED_BUF_INPUT : SCHED_BUF_WEIGHT, r,
                    x->io_index);
    else
      sched_add_buf(p, SCHED_BUF_TEMP, r, -1);
  }
  for (int r = 0; r < ir_graph_count(g); r++)
    if (p->store[r].on) p->buf_of[r] = p->buf_of[p->store[r].in];
}

static void note_arg(sched_kernel *k, int buf) {
  for (int i = 0; i < k->nargs; i++)
    if (k->args[i] == buf) return;
  k->args = realloc(k->args, (size_t)(k->nargs + 1) * sizeof *k->args);
  SCHED_ASSERT(k->args);
  k->args[k->nargs++] = buf;
}

/* Buffers read by the inline expression of `r` (a view the kernel reads
 * from a packed copy: that copy). */
static void collect_args(sched_program *p, sched_kernel *k, ir_ref r, bool is_root) {
  int packed = sched_gemm_packed_buf(k, r);
  if (packed >= 0) {
    note_arg(k, packed);
    return;
  }
  if (!is_root && p->buf_of[r] >= 0) {
    note_arg(k, p->buf_of[r]);
    return;
  }
  const ir_node *x = ir_node_get(p->g, r);
  for (int i = 0; i < x->nsrc; i++) collect_args(p, k, x->src[i], false);
}

static void kernel_args(sched_program *p) {
  for (int i = 0; i < p->nkernels; i++) {
    sched_kernel *k = &p->kernels[i];
    k->out_buf = p->buf_of[k->root];
    note_arg(k, k->out_buf);
    collect_args(p, k, k->root, true);
    for (int a = 0; a < k->nargs; a++) {
      sched_buf *b = &p->bufs[k->args[a]];
      if (b->first < 0) b->first = i;
      b->last = i;
    }
  }
  /* a weight no kernel reads (all its readers take a packed copy) is not stored */
  for (int b = 0; b < p->nbufs; b++)
    p->bufs[b].unused = p->bufs[b].kind == SCHED_BUF_WEIGHT && p->bufs[b].first < 0;
}

int64_t sched_buf_nchunks(const sched_program *p, int b) {
  const sched_buf *x = &p->bufs[b];
  if (x->pack) return x->pack->K ? (x->pack->N + x->pack->nr - 1) / x->pack->nr : 0;
  return x->numel > 0;
}

size_t sched_buf_scratch_bytes(const sched_program *p, int b) {
  const sched_pack *pk = p->bufs[b].pack;
  return pk ? (size_t)(pk->K * pk->nr) * ir_dtype_size(p->bufs[b].dtype) : 0;
}

const void *sched_buf_chunk(const sched_program *p, int b, int64_t i, void *scratch, size_t *bytes) {
  const sched_buf *x = &p->bufs[b];
  if (x->pack) {
    sched_gemm_panel(p, x, i, scratch);
    *bytes = sched_buf_scratch_bytes(p, b);
    return scratch;
  }
  *bytes = (size_t)x->numel * ir_dtype_size(x->dtype);
  return x->packed ? x->packed : ir_node_get(p->g, x->node)->data;
}

void sched_buf_done(const sched_program *p, int b) {
  if (!p->bufs[b].packed) ir_const_drop_pages(p->g, ir_node_get(p->g, p->bufs[b].node)->data);
}

/* Streams the stored bytes of weight buffer `b` (chunk by chunk) into `f`
 * with `ctx`. */
static void stream_buf(const sched_program *p, int b, void (*f)(void *ctx, const void *data, size_t n), void *ctx) {
  size_t sb = sched_buf_scratch_bytes(p, b);
  void *scratch = sb ? malloc(sb) : NULL;
  SCHED_ASSERT(scratch || !sb);
  int64_t nc = sched_buf_nchunks(p, b);
  for (int64_t i = 0; i < nc; i++) {
    size_t n;
    const void *d = sched_buf_chunk(p, b, i, scratch, &n);
    f(ctx, d, n);
  }
  free(scratch);
  sched_buf_done(p, b);
}

static int64_t align64(int64_t x) {
  return (x + 63) & ~(int64_t)63;
}

/* Greedy best-fit by size: biggest buffers first, each at the lowest offset
 * free during its whole lifetime (arena.c). */
static void plan_arena(sched_program *p) {
  int64_t *bytes = calloc((size_t)p->nbufs + 1, sizeof *bytes);
  SCHED_ASSERT(bytes);
  for (int i = 0; i < p->nbufs; i++)
    bytes[i] = p->bufs[i].numel * (int64_t)ir_dtype_size(p->bufs[i].dtype);
  int m;
  free(sched_place_greedy(p, bytes, &m));
  free(bytes);
}

/* Constant bool tensors (masks) are stored as 32-bit 0/1: kernels read
 * them next to float data, and compilers vectorise such loops badly or not
 * at all when one load is a byte (gcc 12 picks 8-byte vectors). Every
 * reader takes the element as a value, so the width is invisible to it. */
static void widen_bool_weights(sched_program *p) {
  for (int i = 0; i < p->nbufs; i++) {
    sched_buf *b = &p->bufs[i];
    if (b->kind != SCHED_BUF_WEIGHT || b->dtype != IR_BOOL || b->packed || b->pack) continue;
    const uint8_t *src = ir_node_get(p->g, b->node)->data;
    uint32_t *w = malloc((size_t)(b->numel ? b->numel : 1) * sizeof *w);
    SCHED_ASSERT(w);
    for (int64_t j = 0; j < b->numel; j++) w[j] = src[j] != 0;
    b->packed = w;
    b->dtype = IR_U32;
  }
}

/* FNV-1a over 8-byte words (weights are hundreds of megabytes), fed in
 * chunks (a chunk's tail that is not a whole word is hashed bytewise). */
static void hash_chunk(void *ctx, const void *data, size_t n) {
  uint64_t *h = ctx, w;
  const unsigned char *b = data;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) memcpy(&w, b + i, 8), *h = (*h ^ w) * 1099511628211ull;
  for (; i < n; i++) *h = (*h ^ b[i]) * 1099511628211ull;
}

/* Do weight buffers a and b store the same bytes? (Both streamed: their
 * chunks need not line up.) */
static bool same_bytes(const sched_program *p, int a, int b) {
  int x[2] = {a, b};
  void *scratch[2];
  const unsigned char *d[2] = {NULL, NULL};
  size_t left[2] = {0, 0};
  int64_t next[2] = {0, 0}, nc[2];
  for (int s = 0; s < 2; s++) {
    size_t sb = sched_buf_scratch_bytes(p, x[s]);
    scratch[s] = sb ? malloc(sb) : NULL;
    SCHED_ASSERT(scratch[s] || !sb);
    nc[s] = sched_buf_nchunks(p, x[s]);
  }
  bool same = true;
  for (;;) {
    for (int s = 0; s < 2; s++)
      while (!left[s] && next[s] < nc[s]) d[s] = sched_buf_chunk(p, x[s], next[s]++, scratch[s], &left[s]);
    if (!left[0] || !left[1]) {
      same = !left[0] && !left[1];
      break;
    }
    size_t m = left[0] < left[1] ? left[0] : left[1];
    if (memcmp(d[0], d[1], m)) {
      same = false;
      break;
    }
    for (int s = 0; s < 2; s++) d[s] += m, left[s] -= m;
  }
  free(scratch[0]), free(scratch[1]);
  return same;
}

/* Weights at 64-aligned offsets of one blob; byte-identical weights share
 * one place (tied embeddings: once the MatMul's W^T is repacked to the
 * layout it reads, it is the embedding table itself). */
static void place_weights(sched_program *p) {
  int64_t off = 0;
  uint64_t *hash = calloc((size_t)p->nbufs + 1, sizeof *hash);
  SCHED_ASSERT(hash);
  for (int i = 0; i < p->nbufs; i++) {
    sched_buf *b = &p->bufs[i];
    if (b->kind != SCHED_BUF_WEIGHT || b->unused) continue;
    size_t bytes = (size_t)b->numel * ir_dtype_size(b->dtype);
    hash[i] = 1469598103934665603ull;
    stream_buf(p, i, hash_chunk, &hash[i]);
    b->shared = false;
    for (int j = 0; j < i && !b->shared; j++) {
      const sched_buf *o = &p->bufs[j];
      if (o->kind == SCHED_BUF_WEIGHT && !o->shared && !o->unused && hash[j] == hash[i] &&
          (size_t)o->numel * ir_dtype_size(o->dtype) == bytes && same_bytes(p, i, j)) {
        b->offset = o->offset;
        b->shared = true;
      }
    }
    if (b->shared) continue;
    b->offset = off;
    off = align64(off + (int64_t)bytes);
  }
  free(hash);
  p->weights_size = off;
}

/* Whether the inline value `x` computes a transcendental (exp2, log2, sin)
 * from its buffers: worth a store and a load to compute once. */
static bool costly(const sched_program *p, const sched_kernel *k, ir_ref x, int depth) {
  const ir_node *n = ir_node_get(p->g, x);
  if (p->buf_of[x] >= 0 || sched_stage_of(k, x) >= 0 || n->op == IR_VIEW || depth > 16) return false;
  if (n->op == IR_EXP2 || n->op == IR_LOG2 || n->op == IR_SIN) return true;
  for (int i = 0; i < n->nsrc; i++)
    if (costly(p, k, n->src[i], depth + 1)) return true;
  return false;
}

/* Whether the kernel's root reaches `x` through inline element-wise nodes
 * of the kernel's space (no view, stage or buffer between): it then reads
 * x at the element it stores. */
static bool reaches(const sched_program *p, const sched_kernel *k, ir_ref r, ir_ref x, int depth) {
  if (r == x) return true;
  const ir_node *n = ir_node_get(p->g, r);
  if (depth > 16 || (depth && p->buf_of[r] >= 0) || sched_stage_of(k, r) >= 0 || n->op == IR_VIEW ||
      !ir_shape_eq(&n->shape, &k->space))
    return false;
  for (int i = 0; i < n->nsrc; i++)
    if (reaches(p, k, n->src[i], x, depth + 1)) return true;
  return false;
}

/* A softmax's kernel sums exp(x - max) in one stage and its final
 * statement, over the same axes, computes exp(x - max) again for each
 * element (twice the exp work of the kernel). When the final statement
 * runs over the stage's whole space and reads the summand at its own
 * element, the stage's loop stores the summand into the output there and
 * the final statement reads it back (codegen: cg_render_stmt); the output
 * is a buffer of its own, never one the kernel reads (their lifetimes
 * overlap at this kernel, arena.c). Only for a summand that computes a
 * transcendental: a plain one costs less than its store and load. */
static void stash_summand(sched_program *p, sched_kernel *k) {
  const ir_node *root = ir_node_get(p->g, k->root);
  k->stash = 0;
  if (k->gemm.on || !k->final_full || !ir_dtype_is_float(root->dtype)) return;
  for (int i = k->nstages - 1; i >= 0; i--) {
    const ir_node *s = ir_node_get(p->g, k->stages[i]);
    ir_ref x = s->src[0];
    const ir_node *e = ir_node_get(p->g, x);
    if (s->op != IR_ADD || e->dtype != root->dtype || !ir_shape_eq(&e->shape, &k->space) ||
        !costly(p, k, x, 0) || !reaches(p, k, k->root, x, 0))
      continue;
    k->stash = i + 1;
    return;
  }
}

int sched_build(ir_graph *g, const sched_options *opt, sched_program **out, char *err,
                size_t errlen) {
  static const sched_options defaults = {0};
  if (!opt) opt = &defaults;
  *out = NULL;
  if (ir_verify(g)) return fail(err, errlen, "%s", ir_error(g));
  separate_outputs(g);
  if (ir_failed(g)) return fail(err, errlen, "%s", ir_error(g));
  sched_program *p = calloc(1, sizeof *p);
  SCHED_ASSERT(p);
  p->g = g;
  p->opt = *opt;
  if (!p->opt.target.name[0]) SCHED_ASSERT(!sched_target_get("native", &p->opt.target, NULL, 0));
  p->symbolic = ir_sym_count(g) > 0;
  int n = ir_graph_count(g);
  p->buf_of = malloc((size_t)n * sizeof *p->buf_of);
  SCHED_ASSERT(p->buf_of || !n);
  for (int i = 0; i < n; i++) p->buf_of[i] = -1;
  char *live = ir_live_nodes(g);
  SCHED_ASSERT(live);
  find_output_aliases(p, live);
  char *mat = sched_fuse(p, opt, live);
  sched_find_interiors(p, mat, live);
  make_buffers(p, mat, live);
  free(mat);
  free(live);
  if (!opt->no_tile)
    for (int i = 0; i < p->nkernels; i++) sched_gemm_plan(p, &p->kernels[i]);
  for (int i = 0; i < p->nkernels; i++) stash_summand(p, &p->kernels[i]);
  widen_bool_weights(p);
  kernel_args(p);
  if (p->symbolic)
    sched_plan_arena_sym(p);
  else
    plan_arena(p);
  place_weights(p);
  p->ctx = isl_ctx_alloc();
  SCHED_ASSERT(p->ctx);
  for (int i = 0; i < p->nkernels; i++) sched_collapse(p, &p->kernels[i]);
  for (int i = 0; i < p->nkernels; i++)
    if ((p->kernels[i].gemm.on ? sched_gemm_build_ast : sched_kernel_build_ast)(p, &p->kernels[i],
                                                                                err, errlen)) {
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
  for (int i = 0; i < p->nbufs; i++) free(p->bufs[i].packed), free(p->bufs[i].pack), free(p->bufs[i].below);
  free(p->plan);
  free(p->ext);
  free(p->bufs);
  free(p->buf_of);
  free(p->out_alias);
  free(p->store);
  free(p->border_only);
  sched_memo_free(p);
  if (p->ctx) isl_ctx_free(p->ctx);
  free(p);
}

/* Is `r` an ADD of type dt computed inline in kernel k (not a buffer, stage
 * or packed weight), its operands of its own shape? */
static bool inline_add(const sched_program *p, const sched_kernel *k, ir_ref r, ir_dtype dt) {
  const ir_node *n = ir_node_get(p->g, r);
  if (n->op != IR_ADD || n->dtype != dt || n->nsrc != 2 || p->buf_of[r] >= 0 || sched_stage_of(k, r) >= 0 ||
      sched_gemm_packed_buf(k, r) >= 0)
    return false;
  for (int i = 0; i < 2; i++)
    if (!ir_shape_eq(&ir_node_get(p->g, n->src[i])->shape, &n->shape)) return false;
  return true;
}

int sched_stage_terms(const sched_program *p, const sched_kernel *k, int stage, ir_ref *terms) {
  const ir_node *st = ir_node_get(p->g, k->stages[stage]);
  ir_ref stack[SCHED_SUM_TERMS_MAX], r = st->src[0];
  ir_dtype dt = st->dtype;
  int sp = 0, n = 0;
  if (st->op != IR_ADD || (dt != IR_F32 && dt != IR_F64) || !inline_add(p, k, r, dt)) return 0;
  stack[sp++] = r;
  while (sp) {
    ir_ref x = stack[--sp];
    if (!inline_add(p, k, x, dt)) {
      if (n == SCHED_SUM_TERMS_MAX) return 0;
      terms[n++] = x;
      continue;
    }
    if (sp + 2 > SCHED_SUM_TERMS_MAX) return 0;
    const ir_node *a = ir_node_get(p->g, x);
    stack[sp++] = a->src[1], stack[sp++] = a->src[0];
  }
  return n;
}
