/* sched_impl.h — private to scheduler/. */
#ifndef SCHED_IMPL_H
#define SCHED_IMPL_H

#include "scheduler.h"

#include <isl/ast_build.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <stdio.h>
#include <stdlib.h>

#define SCHED_ASSERT(c)                                                                    \
  do {                                                                                     \
    if (!(c)) {                                                                            \
      fprintf(stderr, "%s:%d: internal error: %s\n", __FILE__, __LINE__, #c);              \
      abort();                                                                             \
    }                                                                                      \
  } while (0)

/* A growing string: isl models are written as text (sched_isl.c). */
typedef struct {
  char *s;
  size_t n, cap;
} strbuf;
void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "{ TEXT}" read as a union map. */
isl_union_map *sched_read_umap(isl_ctx *ctx, const strbuf *b);
/* The value-based (must) dependences of the statements in `dom` executed
 * in the order `sched`, with the given accesses: isl's dataflow analysis. */
isl_union_map *sched_flow(__isl_keep isl_union_set *dom, __isl_take isl_union_map *sched,
                          __isl_take isl_union_map *reads, __isl_take isl_union_map *writes);

/* The isl results for a kernel model written as `key` (domains, schedule
 * and accesses): kernels with the same model — every layer of a
 * transformer — share one analysis and get copies of one loop nest.
 * sched_memo_get returns a copy of the AST (or NULL) and its dependence
 * count; sched_memo_put keeps a copy of `ast`. */
isl_ast_node *sched_memo_get(const sched_program *p, const char *key, int *ndeps);
void sched_memo_put(sched_program *p, const char *key, __isl_keep isl_ast_node *ast, int ndeps);
void sched_memo_free(sched_program *p);

/* The kernel's kept axes in axis order (the program's original loop order). */
void sched_outer_sorted(const sched_kernel *k, int *sorted);

/* Decides what is materialised and forms the kernels (fuse.c). */
char *sched_fuse(sched_program *p, const sched_options *opt, const char *live);
/* Values stored inside the padded copy that is their only reader
 * (interior.c): fills p->store and p->border_only. */
void sched_find_interiors(sched_program *p, const char *mat, const char *live);

/* Collapses consecutive outer loops of `k` that index every access
 * contiguously into one (collapse.c); sets k->extent for every kernel. */
void sched_collapse(const sched_program *p, sched_kernel *k);

/* Builds the isl model of `k` and its AST (sched_isl.c). */
int sched_kernel_build_ast(sched_program *p, sched_kernel *k, char *err, size_t errlen);

/* The arena plan (arena.c): the greedy placement of the temporaries (by
 * `bytes`, per buffer; largest first, each at the lowest 64-aligned offset
 * free over its lifetime), returning them in placement order (malloc'd);
 * and the plan when sizes are symbolic. */
int *sched_place_greedy(sched_program *p, const int64_t *bytes, int *count);
void sched_plan_arena_sym(sched_program *p);
/* Sizes for the heuristics: a symbolic value at the reference point (ir_dim_ref). */
int64_t sched_ref(const sched_program *p, int64_t d);

/* Symbolic extents in isl models (sched_isl.c): `d` as an isl affine
 * expression of the symbols' C names, or a parameter o2c_e<i> standing for
 * it when it is not affine; and the parameter list "[batch, seq] -> " of
 * kernel `k`'s extents ("" when all are static). */
void sched_dim_isl(sched_program *p, strbuf *b, int64_t d);
void sched_isl_params(sched_program *p, const sched_kernel *k, strbuf *b);
/* A build for the loop nest of `k`: its parameters are >= 1. */
isl_ast_build *sched_ast_build(sched_program *p, const sched_kernel *k);

/* A new buffer for node `r` (sched.c); pointers into p->bufs are invalid afterwards. */
int sched_add_buf(sched_program *p, sched_buf_kind kind, ir_ref r, int io_index);

/* Register-blocked matmul form: the decision and the packed weights
 * (gemm.c; its block, fetches and loop order in gemm_block.c,
 * gemm_fetch.c, gemm_order.c), the tiled isl model and its loop nest
 * (tile.c). */
void sched_gemm_plan(sched_program *p, sched_kernel *k);
/* Panel `pn` of panelled weight buffer `b` (K x nr floats). */
void sched_gemm_panel(const sched_program *p, const sched_buf *b, int64_t pn, void *panel);
int sched_gemm_build_ast(sched_program *p, sched_kernel *k, char *err, size_t errlen);

/* ---- the register-blocked form's decisions, for sched_gemm_plan ---- */

/* One buffer read of a stage's expression: the address is
 * offset + sum(coef[a] * i_a) over the space axes a. */
typedef struct {
  int buf;
  ir_ref view; /* the VIEW read through, or the node itself when read whole */
  bool whole;
  int64_t coef[IR_MAX_RANK];
  int64_t offset;
  bool masked;
} sched_gemm_read;

#define SCHED_GEMM_MAX_READS 32
/* Bytes ahead of the read that a single row's weight stream is fetched
 * (packed one-byte panels: gm->ahead; weights read as they lie:
 * sched_gemm_stream_read): the hardware prefetcher runs too close to
 * cover memory's latency at the rate one core consumes the codes */
#define SCHED_FETCH_AHEAD 8192

/* The buffer reads of a kernel's stages, as gemm.c's walk finds them. */
typedef struct {
  const sched_program *p;
  const sched_kernel *k;
  sched_gemm_read reads[SCHED_GEMM_MAX_READS];
  int nreads;
  int budget; /* visits left: a shared sub-expression is walked once per use */
  bool ok;    /* false: something this form does not handle */
} sched_gemm_walk;

static inline int64_t sched_min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* The register block (gemm_block.c): mr x nr from the target for M rows
 * (`m_static`: M is no symbol's reference value) and N columns; whether the model's weights stay in cache between calls;
 * a single row's partial accumulators. */
void sched_gemm_block_size(sched_gemm *gm, const sched_target *t, int64_t M, int64_t N, int nstages,
                           bool narrow, bool windowed, int ncols, int64_t K, bool cached, bool m_static);
bool sched_gemm_weights_cached(const sched_program *p);
int sched_gemm_acc_parts(const sched_gemm *gm, const sched_target *t, int nstages);
/* Fetches and k slices (gemm_fetch.c): the packed panels' slices of k,
 * the lines of the next panel each piece of a row block fetches, a single
 * row's weight streams, a convolution's weight in slices of k and, with
 * threads, its input's next slice. */
void sched_gemm_k_slices(sched_gemm *gm, const sched_target *t, int64_t M, int64_t K, int nstages);
int sched_gemm_spread_lines(const sched_program *p, const sched_gemm *gm, int64_t M, int64_t K);
void sched_gemm_stream_read(sched_program *p, sched_kernel *k, const sched_gemm_read *r,
                            bool packed);
void sched_gemm_conv_slices(sched_program *p, sched_kernel *k, const sched_gemm_walk *w);
void sched_gemm_rows_slices(const sched_program *p, sched_kernel *k, const sched_gemm_walk *w);
/* The loop order (gemm_order.c): row blocks or column panels outermost,
 * the row blocks outermost for the threads, the bytes of the column
 * reads (`once`: a buffer read at several offsets counted once), and
 * columns larger than L2 in chunks. */
void sched_gemm_outer_order(const sched_program *p, sched_kernel *k, const sched_gemm_walk *w,
                            int npack);
void sched_gemm_rows_for_threads(const sched_program *p, sched_kernel *k, const sched_gemm_walk *w,
                                 const bool *pack);
int64_t sched_gemm_column_bytes(const sched_program *p, const sched_gemm_walk *w, int n, bool once);
void sched_gemm_chunk_columns(const sched_program *p, sched_kernel *k, int64_t col_bytes);

/* The axis ids of a node's axes packed into a non-zero word (ids are
 * -1..11), to remember with which ids a shared node was already walked
 * (fuse.c, collapse.c). */
static inline uint64_t sched_ids_code(const int *ids, int rank) {
  uint64_t c = 1;
  for (int j = 0; j < rank; j++) c = c << 4 | (uint64_t)(ids[j] + 1);
  return c;
}

#endif
