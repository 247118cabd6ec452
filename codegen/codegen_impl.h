/* codegen_impl.h — private to codegen/. */
#ifndef CODEGEN_IMPL_H
#define CODEGEN_IMPL_H

#include "codegen.h"

#include <stdarg.h>
#include <stdbool.h>

typedef struct {
  char *s;
  size_t n, cap;
} cg_buf;

/* The integer and max helpers, printed only where used: clang warns about
 * an unused static function even when it is inline (-Wunused-function). */
typedef enum { CG_HELPER_MAX, CG_HELPER_IDIV, CG_HELPER_IMOD, CG_HELPER_COUNT } cg_helper;

/* What the whole file needs: helpers per dtype, float->int casts. */
typedef struct {
  uint32_t helpers[CG_HELPER_COUNT];         /* per helper: bit per dtype */
  uint32_t max_sel;                          /* bit per float dtype: maxs_T is used */
  uint8_t casts[IR_DTYPE_COUNT][IR_DTYPE_COUNT];
  bool simd; /* O2C_SIMD_SUM is used */
  bool nounroll; /* O2C_NOUNROLL is used */
  bool prefetch; /* O2C_PREFETCH is used */
  bool prefetch_once; /* O2C_PREFETCH_ONCE is used */
  bool block;    /* O2C_BLOCK is used (a register-blocked kernel) */
  bool no_slp;   /* O2C_NO_SLP is used (a kernel rounds float64 to float32) */
  bool f64_ymm;  /* O2C_F64_YMM is used (a float64 kernel with a short loop) */
  bool exp2;     /* o2c_exp2f is used */
  unsigned half; /* the float16/bfloat16 conversions used: CG_HALF_* bits */
  bool pool;     /* a kernel runs on the thread pool (o2c_pool_run) */
  uint32_t selects; /* o2c_sel_<dtype> is used: bit per dtype */
  bool nbits_dot; /* o2c_nbits4_dot is called (nbits_dot.c) */
} cg_out;

/* A value already computed in the current statement: node `r` at the
 * element whose index expressions joined give `key`, held in local vN. */
typedef struct {
  ir_ref r;
  char *key;
  int var;
} cg_memo;

/* the most cuts a split loop takes (emit.c, split_loop: 16 parts of a
 * Winograd transform make 15) */
#define CG_SPLIT_CUTS 16

typedef struct {
  const sched_program *p;
  const sched_kernel *k;
  cg_buf *body;
  cg_out *out;
  int depth;
  bool error;
  cg_buf pre;     /* local definitions of the statement being printed */
  cg_memo *memo;  /* values of the statement being printed */
  int nmemo, capmemo, nvars;
  int threads;
  bool threads_all; /* cg_options.threads_all */
  char index_name[32];
  bool has_index; /* an indexed read: the kernel can fail */
  /* register-blocked kernels, while a statement is printed: the element of
   * the accumulator blocks ("[3][c3]"; "" elsewhere), the column tile and
   * the column in it, the reduction index (for packed weight panels) */
  const char *acc_sub, *col_tile, *col, *red;
  /* the next loop is a register block's k loop (under the reduction mark):
   * never `omp simd` (it carries the accumulators; with a single column
   * it is the innermost loop) */
  bool k_loop;
  /* the next k loop runs in pieces that fetch the next panel (pragma.c:
   * cg_prefetch_spread); its upper bound */
  bool pieces;
  char *pieces_ub;
  /* under the k-slices mark: the slices carry partial sums, not threaded */
  bool in_slices;
  /* a step of several products (emit.c: print_terms): the update renders
   * only its product `term` (acc += term), when one_term */
  bool one_term;
  int term;
  /* threads: where the threaded loops' functions go (NULL: nowhere, no
   * threads), how many there are, the symbols they use, the locals every
   * function of statements declares (accumulators), whether a statement is
   * printed outside them */
  cg_buf *rows;
  bool worth_threads; /* the kernel is large enough for threads (pragma.c) */
  int64_t chunks;     /* chunks a threaded loop is cut into (pragma.c) */
  int nrows;
  uint32_t rows_syms;
  const char *decl;
  bool in_rows, outside;
  bool top_if; /* printing a branch of an if at the kernel's top (emit.c) */
  /* an innermost loop split where its masks hold (emit.c, split_loop):
   * 1 while its body is rendered to collect the masks on iterator
   * `split_it` (their common range [split_lo, split_hi), split_n of them,
   * split_bad for a symbolic bound; every bound inside the loop's range
   * [split_from, split_to) in split_cuts), 2 while the middle loop's body
   * is rendered (those conditions left out), 3 while a piece [split_pa,
   * split_pb) between two cuts is (each condition holds there or fails) */
  int split_mode;
  const char *split_it;
  int64_t split_lo, split_hi, split_from, split_to, split_pa, split_pb;
  int split_n;
  bool split_bad;
  int64_t split_cuts[CG_SPLIT_CUTS];
  int split_ncuts;  /* > CG_SPLIT_CUTS: too many to cut at */
  int split_other;  /* conditions on other iterators printed while collecting */
  /* a float64 value rounded to float32 somewhere in the kernel: its
   * functions get O2C_NO_SLP (program.c) */
  bool narrows_f64;
  /* a float64 value anywhere in the kernel, and a loop that gcc may unroll
   * whole (fewer than CG_LONG_LOOP iterations, or not known to have many):
   * its functions get O2C_F64_YMM */
  bool has_f64, short_loop;
} cg_kernel;

/* The C text of o2c_exp2f, printed into files that use it (program.c). */
extern const char cg_exp2f_src[];
/* The C text of the thread pool, after O2C_POOL_SIZE is defined (pool.c). */
extern const char cg_pool_src[];
extern const char cg_pool_calls_src[]; /* pool_calls.c: threaded or alone, call by call */
/* The float16/bfloat16 conversions (half.c), a bit each: cg_half_print
 * prints those in `need` and the ones they call. */
enum {
  CG_HALF_H2F = 1, CG_HALF_F2H = 2, CG_HALF_B2F = 4, CG_HALF_F2B = 8,
  CG_HALF_D2F_ODD = 16, CG_HALF_D2H = 32, CG_HALF_D2B = 64, CG_HALF_ALL = 127
};
void cg_half_print(FILE *f, unsigned need);
/* The C text of o2c_nbits4_dot and O2C_NBITS_DOT (nbits_dot.c). */
extern const char cg_nbits_dot_src[];

void cg_printf(cg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_line(cg_buf *b, int depth, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int cg_kernel_arg(const cg_kernel *c, int buf);
void cg_need_helper(cg_out *o, cg_helper h, ir_dtype t);
void cg_need_cast(cg_out *o, ir_dtype from, ir_dtype to);
/* Text from the model (names, op types, shapes with symbol names) as it
 * may appear in the C: escaped for a comment, or a string literal with its
 * quotes (escape.c). Nothing else prints model text. */
void cg_text(cg_buf *b, const char *s, bool literal);
void cg_ftext(FILE *f, const char *s, bool literal);
/* A dimension as C over the symbols' parameters, whatever its length
 * (ir_dim_to_c; `bound`: ir_dim_bound_c). */
void cg_dim(cg_buf *b, int64_t d, bool bound);
/* " *   input 0 'ids': i64 [batch,seq]" (program.c). */
void cg_io_comment(FILE *h, const sched_program *p, const char *what, ir_ref r, int i, const char *name);
/* The graph's notes (ir_add_note), one comment line each, escaped. */
void cg_io_notes(FILE *h, const sched_program *p);
/* Symbolic dimensions (dims.c): the symbols a printed kernel body uses
 * (bit per symbol id; the locals of non-affine extents are prepended to
 * the body), as parameters / call arguments; the entry function around the
 * kernel calls; the header. */
uint32_t cg_dims_used(const sched_program *p, cg_buf *body);
void cg_dims_params(cg_buf *o, uint32_t syms);
void cg_dims_args(cg_buf *o, uint32_t syms);
/* Defines the model's floor symbols (ir_dim_floordiv) from its input
 * symbols, which must be in scope and checked by o2c_dims_ok. */
void cg_dims_derived(FILE *c, const sched_program *p);
void cg_dims_entry_begin(FILE *c, const sched_program *p, const char *N);
void cg_dims_entry_end(FILE *c, const sched_program *p, const char *N);
void cg_dims_header(FILE *h, const sched_program *p, const char *N, bool embed);
/* Per input and output: macros and functions for name, dtype, shape,
 * element count and bytes; the typed entry of static models (typed.c). */
void cg_typed_header(FILE *h, const sched_program *p, const char *N, bool embed);
void cg_typed_source(FILE *c, const sched_program *p, const char *N);
/* Prints the loop nest of c->k into c->body (emit.c). */
int cg_kernel_body(cg_kernel *c);
/* Statements (render.c): the statement `kind` of stage `stage` at the
 * iteration whose axes are `space_idx` (one C expression per axis of the
 * kernel's space), printed into c->body; cg_statement_begin forgets the
 * locals of the previous one. */
void cg_render_stmt(cg_kernel *c, sched_stmt_kind kind, int stage, char *const *space_idx);
void cg_statement_begin(cg_kernel *c);
/* The products a register block's update of `stage` adds one at a time
 * (a strided convolution's taps): 0 when it adds one value. */
int cg_update_terms(const cg_kernel *c, int stage);
/* The partial accumulators of `stage` (sched_gemm.parts, at most its
 * products): acc<stage>, acc<stage>_1, ..; 1 when it adds one value. */
int cg_acc_parts(const cg_kernel *c, int stage);
/* A float max reduction: kept as a plain max plus a NaN flag nan<stage>. */
bool cg_is_float_max(const cg_kernel *c, int stage);
/* A loop of at least this many iterations is not unrolled whole by gcc
 * (its limit: 16), so a loop vectorised over it reads its rows in order. */
#define CG_LONG_LOOP 32
/* The attributes of a kernel's functions (O2C_BLOCK ...), each followed
 * by a space, noted in c->out as used; known once its body is rendered
 * (emit.c). */
void cg_fn_attrs(cg_buf *o, cg_kernel *c);
/* isl AST expressions as C (isl_expr.c); cg_expr_arg: argument `i` of a
 * user statement's call. */
void cg_print_expr(cg_buf *o, isl_ast_expr *e);
void cg_expr_arg(cg_buf *o, isl_ast_expr *call, int i);
/* Loop decorations (pragma.c): the vectorisation hint before `loop`;
 * whether `loop` holds whole register-block tiles (the only loops of such
 * a kernel that may be threaded); whether the kernel is worth threads (and
 * its chunks, c->chunks); the prefetch of the next packed weight panel at
 * the top of a k loop, or spread over the row blocks: the fetch pointers
 * before a k loop that runs in pieces (returns its upper bound; NULL: not
 * in pieces) and the fetch at the top of each piece. */
void cg_simd_pragma(cg_kernel *c, isl_ast_node *loop);
bool cg_whole_tiles(isl_ast_node *loop);
bool cg_wants_threads(cg_kernel *c);
void cg_prefetch_weights(cg_kernel *c, isl_ast_node *kloop);
char *cg_prefetch_spread(cg_kernel *c, isl_ast_node *kloop);
void cg_prefetch_piece(cg_kernel *c);
void cg_prefetch_streams(cg_kernel *c, isl_ast_node *kloop);
/* A one-row 4-bit MatMulNBits kernel (nbits_dot.c): a call of
 * o2c_nbits4_dot for its panels put at the top of the function that runs
 * them, `body` (no threads) or the rows function in `rows`; false, and
 * nothing changed, for any other kernel or target. */
bool cg_nbits_dot(cg_kernel *c, cg_buf *body, cg_buf *rows);

#endif
