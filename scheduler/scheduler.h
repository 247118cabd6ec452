/* sched.h — from a primitive graph to kernels with isl loop nests and an
 * arena plan.
 *
 * The scheduler decides which nodes are materialised in memory (buffers),
 * groups the rest into the kernels that compute those buffers, builds an
 * isl model of each kernel (one domain per statement, a schedule) and asks
 * isl for the loop nest (an isl_ast_node). Temporaries are packed into one
 * arena by lifetime. */
#ifndef SCHEDULER_H
#define SCHEDULER_H

#include "ir.h"

#include <isl/ast.h>
#include <isl/ctx.h>

typedef enum { SCHED_BUF_INPUT, SCHED_BUF_OUTPUT, SCHED_BUF_WEIGHT, SCHED_BUF_TEMP } sched_buf_kind;

/* A weight read in panels [ceil(N/nr)][K][nr] (gemm.c): element (n, k)
 * of the panelled view is source[offset + cn*n + ck*k]. The panels are
 * made when the weights are written, one at a time, not held. */
typedef struct {
  int64_t N, K, nr, offset, cn, ck;
} sched_pack;

typedef struct {
  sched_buf_kind kind;
  ir_ref node;     /* the node whose value this buffer holds */
  ir_dtype dtype;
  int64_t numel;   /* may be symbolic (an ir_dim polynomial) */
  int io_index;    /* INPUT / OUTPUT: position in the graph's list */
  int64_t offset;  /* TEMP: byte offset in the arena; WEIGHT: in the weights blob */
  int first, last; /* kernels that write first / read last (lifetime) */
  bool shared;     /* WEIGHT: same bytes as an earlier weight, stored there */
  bool unused;     /* WEIGHT: no kernel reads it (replaced by a packed copy) */
  void *packed;    /* WEIGHT: data owned by the program, stored instead of the node's:
                    * bools widened to 32 bits (sched.c) */
  sched_pack *pack; /* WEIGHT: stored as panels of its node's data (gemm.c), or NULL */
  /* TEMP, in a program with symbolic sizes: the offset is computed at run
   * time, as the highest end (rounded up to 64) of the `below` buffers —
   * those whose lifetimes overlap and which are placed lower at the
   * reference point (arena.c); `plan` is its position in p->plan. */
  int *below, nbelow;
  int plan;
} sched_buf;

/* The statements of a kernel. A kernel computes its root over an
 * iteration space; it may contain reduction stages (all over the same
 * axes) whose results live in scalar accumulators inside the loops over the
 * kept ("outer") axes:
 *   for o: { acc0 = init; for r: acc0 = acc0 (+) f0(o, r); ...
 *            accK = ...;  for r: out = g(o, r, acc0..accK) }   (final over all axes)
 *   or     { ...;                out = g(o, acc0..accK) }         (final over outer axes)
 * A kernel without stages is one element-wise statement. */
/* The mark above the reduction loop of a register-blocked kernel's AST. */
#define SCHED_MARK_REDUCTION "reduction"
/* above the band [k slice, m tile] of a register-blocked kernel sliced
 * along k: the slices carry the partial sums, so no loop below is threaded */
#define SCHED_MARK_KSLICES "kslices"

/* LOAD and SAVE move a register block from and to its slot in the
 * partial sums between slices of k (sched_gemm.kc) */
typedef enum {
  SCHED_STMT_INDEX,
  SCHED_STMT_INIT,
  SCHED_STMT_UPDATE,
  SCHED_STMT_FINAL,
  SCHED_STMT_LOAD,
  SCHED_STMT_SAVE
} sched_stmt_kind;

#define SCHED_MAX_STAGES 8
#define SCHED_MAX_PACKED (2 * SCHED_MAX_STAGES)
#define SCHED_KPIECE 16 /* k steps per prefetch of the next panel (sched_gemm.pf_lines) */

/* The register-blocked matmul form of a reduction kernel (gemm.c, tile.c).
 * The outer axes m (rows) and n (columns) are strip-mined by mr x nr; inside
 * each tile every stage accumulates an mr x nr block acc<i>[mr][nr] over
 * the one reduced axis k, the mr rows unrolled and the nr columns left to
 * the vectoriser; the final statement stores the block through the fused
 * epilogue. Weights read along (n, k) are repacked at compile time into
 * panels [ceil(N / nr)][K][nr] (zero-padded), so the block's columns are
 * one contiguous load per k. */
typedef struct {
  bool on;
  int m, n, k;   /* space axes; m = -1 when no axis can be unrolled (mr = 1) */
  int mr, nr;
  bool prefetch; /* fetch the next column panel's weights during this one (codegen) */
  /* > 0: row blocks of a variable index run their k loop in pieces of
   * SCHED_KPIECE steps, and each piece fetches this many 64-byte lines of
   * the next panel (of each packed weight): the fetch of a panel is spread
   * over all its row blocks (gemm_fetch.c) */
  int pf_lines;
  int ahead;     /* elements of the packed weights fetched ahead of the k loop (0: none) */
  /* k sliced into pieces of kc (0: not sliced): per column panel, slice by
   * slice over all row blocks; between slices each block waits in
   * part<i>[mtiles][mr][nr] */
  int kc, mtiles;
  bool rows_outer; /* row blocks outside column panels: the rows are an unpacked weight */
  bool cols_conv;  /* the columns are a convolution's weight (2-vector blocks) */
  bool cols_outer; /* column panels outside the other kept axes: such a weight larger than a quarter of L2 */
  /* > 0: the tile band starts with chunks of `chunk` iterations of space
   * axis `chunk_axis` (of column tiles when it is n), row blocks inside a
   * chunk: columns larger than L2, read in pieces that stay there (gemm_order.c) */
  int chunk, chunk_axis;
  int npacked;
  ir_ref packed_view[SCHED_MAX_PACKED]; /* views read from a packed copy ... */
  int packed_buf[SCHED_MAX_PACKED];     /* ... in this buffer */
  /* A single row's weights read as they lie (not packed: MatMulNBits'
   * codes and scales), each k step a short contiguous run: buffer, address
   * offset + sum(coef[a] * i_a) over the space axes, and how many k steps
   * ahead codegen fetches it (gemm_fetch.c) */
  int nstream;
  int stream_buf[SCHED_MAX_STAGES];
  int64_t stream_off[SCHED_MAX_STAGES], stream_coef[SCHED_MAX_STAGES][IR_MAX_RANK];
  int stream_ahead[SCHED_MAX_STAGES];
  /* fetched at every this many k steps, one line (> 1: the run of one step
   * is shorter than the target's fetch_page) */
  int stream_every[SCHED_MAX_STAGES];
  /* > 0 (with k slices, m >= 0): the stream is instead the next slice of
   * the column panel, fetched while the row blocks pass the current one:
   * this many lines per k step in every row block (gemm_fetch.c: sched_gemm_conv_slices) */
  int stream_spread;
  /* > 0 (with stream_spread, compiled for threads): the rows' input is
   * fetched too, its next slice of kc channels at each of `rows_count`
   * positions rows_base + rows_stride x q of buffer `rows_buf`, this many
   * positions per k step in every row block (gemm_fetch.c: sched_gemm_rows_slices) */
  int rows_spread, rows_buf;
  int64_t rows_base, rows_stride, rows_count;
  /* partial accumulators per element of the block (1: one): a step that
   * adds several products (MatMulNBits' codes of a word) adds them in turn
   * to `parts` sums, added at the end, so that a block of few vectors (one
   * row) still has the target's FMA chains in flight (codegen) */
  int parts;
} sched_gemm;

typedef struct {
  ir_ref root;      /* the materialised node this kernel computes */
  int out_buf;      /* buffer it writes */
  int *args;        /* buffers it reads or writes, out_buf first */
  int nargs;
  ir_shape space;   /* iteration space: the stages' source shape, else the root's shape */
  int axes[IR_MAX_RANK]; /* domain dimensions: axes of `space` with size != 1 */
  int naxes;
  int outer[IR_MAX_RANK], nouter; /* kept axes (all axes when there is no stage) */
  int red[IR_MAX_RANK], nred;     /* reduced axes */
  ir_ref stages[SCHED_MAX_STAGES]; /* reductions computed in accumulators, in order */
  int nstages;
  /* Indexed reads whose index depends only on the outer axes: statement
   * X<i> computes and checks index i once per outer iteration (into g<i>),
   * before everything else; gather_ids maps the view's axes to space axes. */
  ir_ref gathers[SCHED_MAX_STAGES];
  int gather_ids[SCHED_MAX_STAGES][IR_MAX_RANK];
  int ngathers;
  bool final_full;  /* the final statement runs over all axes (else over outer) */
  /* 1 + the sum stage whose summand (an exp: a softmax's) the final
   * statement reads back from the output, where that stage's loop stores
   * it, instead of computing it again; 0: none (sched.c, stash_summand) */
  int stash;
  int root_axis[IR_MAX_RANK]; /* root axis -> axis of `space`, -1 for size-1 axes */
  sched_gemm gemm;
  /* Loop collapse (collapse.c): the axes in `collapsed` run folded into
   * the next outer loop, which runs over `extent` (the product of its
   * group; space.d elsewhere); they are gone from `axes` and `outer`, and
   * code generation indexes them with 0. */
  uint32_t collapsed;
  int64_t extent[IR_MAX_RANK];
  int ndeps;         /* dependence relations found by isl (all respected) */
  isl_ast_node *ast; /* owned */
} sched_kernel;

/* The CPU the generated code is tuned for (target.c). The register block
 * of a matmul must fit its register file: accumulators + the loaded
 * columns + one broadcast <= vector_regs. */
typedef struct {
  char name[32];       /* as asked: native, x86-64-v4, x86-64-v3, x86-64-v2, aarch64, generic */
  char isa[32];        /* what it is (native: the host's level) */
  int vector_bits;     /* one vector register */
  int vector_regs;     /* vector registers the compiler can allocate */
  bool fma;
  /* a vector FMA's latency in cycles and the pipes that issue one each
   * cycle (without FMA: the add's): a sum keeps the pipes busy only with
   * latency x pipes independent chains in flight (gemm_block.c: the partial
   * accumulators of a one-row block) */
  int fma_latency, fma_pipes;
  int64_t l1d, l2, l3; /* data cache bytes per level (native: the host's) */
  int cores;           /* 0: unknown */
  /* > 0: a one-row kernel's weight stream is fetched ahead one line per
   * this many bytes, the page the hardware prefetchers stream within once
   * a line of it is asked for (they do not cross a 4 KiB page); 0: every
   * line (gemm_fetch.c: sched_gemm_stream_read) */
  int64_t fetch_page;
  char cflags[160];    /* C compiler flags that build the generated code for it */
  /* 512-bit vpdpbusd (AVX512_VNNI with AVX512BW; native only: no preset
   * implies it): a one-row 4-bit MatMulNBits is printed with integer dot
   * products beside the float form (codegen/nbits_dot.c) */
  bool dot_u8s8;
} sched_target;

/* Fills `t` for target `name` (native detects the host); -1 with `err` for
 * an unknown name. */
int sched_target_get(const char *name, sched_target *t, char *err, size_t errlen);
/* Floats per vector register. */
int sched_target_lanes(const sched_target *t);
/* Independent FMA chains that keep the target's FMA pipes busy. */
int sched_target_chains(const sched_target *t);
/* One line: name, ISA, registers, FMA, caches, cores. */
void sched_target_describe(const sched_target *t, char *buf, size_t n);

typedef struct {
  bool no_fuse; /* one primitive per kernel (debugging) */
  bool no_tile; /* keep matmuls as one dot product per output (no register blocks) */
  bool no_kslice; /* register blocks sum over all of k at once */
  bool no_collapse; /* every axis its own loop (collapse.c; for comparisons) */
  /* testing: tiled kernels store their blocks before summing them, an order
   * the legality check must refuse */
  bool tile_misorder;
  sched_target target; /* empty name: native */
  int threads;         /* the generated code's thread pool (0, 1: none) */
} sched_options;

typedef struct sched_memo sched_memo; /* isl results by model text (sched_isl.c) */

/* Where a value lies inside another node's buffer (interior.c): element
 * i of it at offset + sum(stride[a] * i_a). */
typedef struct {
  bool on;
  ir_ref in; /* the copy whose buffer holds it */
  int64_t offset, stride[IR_MAX_RANK];
} sched_store;

typedef struct sched_program {
  ir_graph *g;
  isl_ctx *ctx;
  sched_buf *bufs;
  int nbufs;
  int *buf_of; /* node -> buffer index, or -1 when computed inline */
  /* per output: the node whose kernel writes the output's buffer in place
   * when the output is only a reshape of it (IR_NONE: the output's own) */
  ir_ref *out_alias;
  /* per node: stored inside the padded copy that reads it (its kernel
   * writes the copy's interior); and the copies so written, whose own
   * kernel writes only their border (interior.c). NULL: none. */
  sched_store *store;
  bool *border_only;
  sched_kernel *kernels;
  int nkernels;
  int64_t arena_size;   /* bytes, 64-aligned (symbolic: at the reference point) */
  int64_t arena_naive;  /* sum of all temporaries, for comparison */
  int64_t weights_size; /* bytes */
  sched_memo *memo;
  int nmemo;
  sched_options opt;
  /* symbolic dimensions: the temporaries in the order their offsets are
   * computed at run time, and the non-affine extents that the isl models
   * name by a parameter o2c_e<i> (e.g. batch*seq) */
  bool symbolic;
  int *plan, nplan;
  int64_t *ext;
  int next;
} sched_program;

/* Schedules `g` (which may be rewritten in place: outputs that are inputs
 * or weights get a MOVE). On failure returns -1 with `err` filled. */
int sched_build(ir_graph *g, const sched_options *opt, sched_program **out, char *err, size_t errlen);
void sched_free(sched_program *p);
/* Which statement a user node of a kernel's AST names, and its stage. */
sched_stmt_kind sched_stmt_of(const char *name, int *stage);
/* The stage index of `r` in `k`, or -1. */
int sched_stage_of(const sched_kernel *k, ir_ref r);
/* The stored bytes of weight buffer `b`, in sched_buf_nchunks chunks: a
 * panelled weight one panel per chunk, made into `scratch` (at least
 * sched_buf_scratch_bytes); any other one chunk, its data. `*bytes` is
 * the chunk's length. Streaming a 4.4 GB model holds one panel. */
int64_t sched_buf_nchunks(const sched_program *p, int b);
size_t sched_buf_scratch_bytes(const sched_program *p, int b);
const void *sched_buf_chunk(const sched_program *p, int b, int64_t i, void *scratch, size_t *bytes);
/* Done streaming buffer `b`: the pages of a mapped source go back
 * (ir_const_drop_pages). */
void sched_buf_done(const sched_program *p, int b);
/* The packed buffer kernel `k` reads view `r` from, or -1. */
int sched_gemm_packed_buf(const sched_kernel *k, ir_ref r);
/* The products a float sum stage `stage` of kernel `k` adds at each step,
 * when its summand is a sum computed inline (ADDs of its type, not
 * buffers, stages or packed weights, of one shape): left to right into
 * `terms` (SCHED_SUM_TERMS_MAX at most; an explicit stack, no recursion),
 * how many; 0 when the stage is no such sum or has more. A register block
 * adds them to its accumulator one FMA each (codegen), and the tile
 * schedule counts them in a step (tile.c). */
enum { SCHED_SUM_TERMS_MAX = 32 };
int sched_stage_terms(const sched_program *p, const sched_kernel *k, int stage, ir_ref *terms);
/* The hoisted-index number of gather view `r` in `k`, or -1. */
int sched_gather_of(const sched_kernel *k, ir_ref r);
/* The isl name of non-affine extent `i` of the program ("o2c_e3"), which
 * generated code defines as a local from the symbols. */
#define SCHED_EXT_PREFIX "o2c_e"
/* Per kernel: the ONNX nodes it fuses, its loop nest, FLOPs, bytes read
 * and written, its arena offset and size; totals (--report FILE.json,
 * report.c). The table: one line per kernel (-v). */
int sched_report_json(const sched_program *p, void *file);
/* One kernel's float operations and compulsory bytes (read and written), as
 * the report counts them; symbolic sizes as polynomials. */
void sched_kernel_cost(const sched_program *p, const sched_kernel *k, int64_t *flops,
                       int64_t *bytes);
void sched_report_table(const sched_program *p, void *file);
/* The layout of the buffer holding node r's value, the element at index i
 * at offset + sum(st[a] * i_a): inside a padded copy (interior.c), else its
 * own contiguous strides and offset 0. */
int64_t sched_node_layout(const sched_program *p, ir_ref r, int64_t *st);
/* Prints kernels with their loop nests (--dump schedule). */
void sched_dump(const sched_program *p, void *file);
/* Writes the kernel graph in Graphviz dot (--dump dot=FILE). */
void sched_dump_dot(const sched_program *p, void *file);

#endif
