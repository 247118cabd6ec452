/* pragma.c — what a loop gets besides its body: the vectorisation hints
 * (O2C_SIMD, O2C_SIMD_SUM/MAX), whether a kernel gets threads at all and
 * in how many chunks, the prefetch of the next weight
 * panel in a register block. */
#include "codegen_impl.h"

#include <stdlib.h>

#include <isl/ast.h>
#include <isl/id.h>
#include <isl/val.h>

/* Is the body of `loop` statements only (no loop inside)? */
static bool innermost(isl_ast_node *loop) {
  isl_ast_node *body = isl_ast_node_for_get_body(loop);
  bool only = isl_ast_node_get_type(body) == isl_ast_node_user;
  if (isl_ast_node_get_type(body) == isl_ast_node_block) {
    isl_ast_node_list *l = isl_ast_node_block_get_children(body);
    only = true;
    for (int i = 0; i < isl_ast_node_list_n_ast_node(l) && only; i++) {
      isl_ast_node *ch = isl_ast_node_list_get_ast_node(l, i);
      only = isl_ast_node_get_type(ch) == isl_ast_node_user;
      isl_ast_node_free(ch);
    }
    isl_ast_node_list_free(l);
  }
  isl_ast_node_free(body);
  return only;
}

/* The innermost loop of a sum accumulates in a scalar: let the compiler
 * vectorise it by reassociating that sum (O2C_SIMD_SUM, see program.c). */
void cg_simd_pragma(cg_kernel *c, isl_ast_node *loop) {
  if (c->k->gemm.on) {
    /* the columns of a register block: vectorised, never peeled into
     * scalars first (short loops are, and then get vectorised badly) */
    if (innermost(loop)) cg_line(c->body, c->depth, "O2C_SIMD"), c->out->simd = true;
    return;
  }
  isl_ast_node *body = isl_ast_node_for_get_body(loop);
  if (isl_ast_node_get_type(body) == isl_ast_node_user) {
    isl_ast_expr *call = isl_ast_node_user_get_expr(body);
    isl_ast_expr *fn = isl_ast_expr_op_get_arg(call, 0);
    isl_id *id = isl_ast_expr_get_id(fn);
    int stage;
    sched_stmt_kind kind = sched_stmt_of(isl_id_get_name(id), &stage);
    if (kind == SCHED_STMT_UPDATE && ir_node_get(c->p->g, c->k->stages[stage])->op == IR_ADD &&
        ir_dtype_is_float(ir_node_get(c->p->g, c->k->stages[stage])->dtype)) {
      cg_line(c->body, c->depth, "O2C_SIMD_SUM(acc%d)", stage);
      c->out->simd = true;
    } else if (kind == SCHED_STMT_UPDATE && cg_is_float_max(c, stage)) {
      cg_line(c->body, c->depth, "O2C_SIMD_MAX(acc%d, nan%d)", stage, stage);
      c->out->simd = true;
    }
    isl_id_free(id);
    isl_ast_expr_free(fn);
    isl_ast_expr_free(call);
  }
  isl_ast_node_free(body);
}

/* Adds the kind of user statement `node` (if it is one) to the bit set `kinds`. */
static isl_bool note_kind(__isl_keep isl_ast_node *node, void *kinds) {
  if (isl_ast_node_get_type(node) != isl_ast_node_user) return isl_bool_true;
  isl_ast_expr *call = isl_ast_node_user_get_expr(node);
  isl_ast_expr *fn = isl_ast_expr_op_get_arg(call, 0);
  isl_id *id = isl_ast_expr_get_id(fn);
  int stage;
  *(unsigned *)kinds |= 1u << sched_stmt_of(isl_id_get_name(id), &stage);
  isl_id_free(id);
  isl_ast_expr_free(fn);
  isl_ast_expr_free(call);
  return isl_bool_false;
}

/* In a register-blocked kernel only a loop over tiles may be threaded: its
 * body holds every statement of a tile (clear, sum, store). With a single
 * tile there is no such loop, and the loops at the top are the k loop (which
 * carries the accumulators) and the point loops. */
bool cg_whole_tiles(isl_ast_node *loop) {
  unsigned kinds = 0;
  isl_ast_node_foreach_descendant_top_down(loop, note_kind, &kinds);
  return (kinds & (1u << SCHED_STMT_UPDATE)) && (kinds & (1u << SCHED_STMT_FINAL));
}

/* Whether the threads' chunks of an element-wise or reducing kernel would
 * write into the same cache lines: its outermost loop (the one the pool
 * splits into c->chunks) steps through the output by less than a line and
 * an inner loop by more, so each chunk writes runs of its share of the
 * outer loop times that step, and where a run is under two lines most
 * lines hold pieces of two chunks. A transposing write: ResNet-18's
 * residual Add + Relu reading a [P, M] result into [M, 7, 7], 4 chunks of
 * the 7 rows, runs of 2 x 28 bytes in every 196-byte channel, ran 8x
 * slower at 2 threads than at 1 on this VM (152-209 k against 19 k TSC
 * cycles; 74-76 k on one thread beside threaded kernels, half its input
 * from the other core). Its 14x14 form (runs of 4 x 56 bytes in 784) ran
 * faster threaded (83-86 k against 140-142 k alone) and stays. The same
 * write with the 7x7 positions one collapsed loop of 49 (the result of
 * imp_conv_unfold_cols, [P, M]): 309 k against 17 k. Output strides are
 * the root's contiguous ones; kernels with symbolic sizes are not judged. */
static bool shares_lines(const cg_kernel *c) {
  const sched_kernel *k = c->k;
  const ir_node *root = ir_node_get(c->p->g, k->root);
  int64_t st[IR_MAX_RANK], rs[IR_MAX_RANK], es = (int64_t)ir_dtype_size(root->dtype);
  if (k->gemm.on || k->nouter < 2 || c->chunks < 2 || !ir_shape_is_static(&root->shape))
    return false;
  (void)sched_node_layout(c->p, k->root, rs); /* a padded copy's interior too */
  for (int a = 0; a < IR_MAX_RANK; a++) st[a] = -1;
  for (int r = 0; r < root->shape.rank; r++)
    if (k->root_axis[r] >= 0) st[k->root_axis[r]] = rs[r];
  /* a collapsed loop runs over its last axis, that axis's stride, the
   * product of the extents (scheduler/collapse.c) */
  int64_t s0 = st[k->outer[0]], n0 = k->extent[k->outer[0]];
  if (s0 < 0 || s0 * es >= 64 || ir_dim_is_sym(n0)) return false;
  bool inner = false;
  for (int i = 1; i < k->nouter; i++) inner |= st[k->outer[i]] > s0 && k->extent[k->outer[i]] > 1;
  return inner && n0 * s0 * es < 2 * 64 * c->chunks;
}

/* Threads only where they pay: handing a loop to the pool costs about a
 * microsecond, waking a sleeping worker more, so a kernel gets them when its
 * estimated time on one core is at least 20 us: its FLOPs at 64 per ns in a
 * register block, 16 elsewhere, plus its compulsory bytes at 16 per ns
 * (symbolic sizes at their reference point). The tiny LLaMA (0.035 ms in
 * all) then runs on one thread; a decode step's projections (weights
 * streamed, 2.4 MB each) keep two. The estimate also sizes the chunks: about
 * 10 us each (a claim costs ~0.1 us), at least two per thread, so cores that
 * run at different speeds (a VM's) or a worker that starts late still share
 * the work. The outermost loop of a kernel runs over outer axes only (every
 * statement of the kernel is inside it; iterations write disjoint outputs
 * and read inputs), so it is parallel; in a register-blocked kernel it runs
 * over tiles, and isl has checked that no dependence leaves a tile
 * (scheduler/tile.c). Not where the chunks would share the output's cache
 * lines (shares_lines, above). */
bool cg_wants_threads(cg_kernel *c) {
  if (c->threads < 2 || !c->k->nouter || ir_dim_ref(c->p->g, c->k->extent[c->k->outer[0]]) < 2)
    return false;
  int64_t flops, bytes;
  sched_kernel_cost(c->p, c->k, &flops, &bytes);
  double ns = (double)ir_dim_ref(c->p->g, flops) / (c->k->gemm.on ? 64 : 16) +
              (double)ir_dim_ref(c->p->g, bytes) / 16;
  c->chunks = ns / 10000 > 2.0 * c->threads ? (int64_t)(ns / 10000) : 2 * c->threads;
  /* A single row streaming its weights (gemm_fetch.c: sched_gemm_stream_read, and the
   * one-byte panels fetched ahead): two chunks a thread, so that each core
   * reads its share as one forward stream. A
   * worker claims chunks from the back, so with small chunks its stream ran
   * backwards a chunk at a time, which neither the hardware prefetchers nor
   * the fetch ahead follow. The 1.1B int4 decode step at 2 threads, Zen 5
   * (EPYC family 26 model 2), wall clock under SCHED_FIFO, 5 interleaved
   * rounds of 6 steps, load 8: 13.75-15.17 ms against 16.62-16.84 with
   * ~10 us chunks (w1: 88 chunks of 2 panels); 4 chunks a thread
   * 13.98-14.84. int8 (8 rounds): 22.6-29.1 against 23.8-28.9 (medians
   * 23.4 against 24.7). */
  if (c->k->gemm.on && ((c->k->gemm.nstream && !c->k->gemm.stream_spread) || c->k->gemm.ahead))
    c->chunks = 2 * c->threads;
  return c->threads_all || (ns >= 20000 && !shares_lines(c));
}

/* Finds the first user statement of kind `want` under `node`. */
typedef struct {
  sched_stmt_kind want;
  isl_ast_expr *call;
} find_stmt;

static isl_bool find_user(__isl_keep isl_ast_node *node, void *user) {
  find_stmt *f = user;
  if (f->call) return isl_bool_false;
  if (isl_ast_node_get_type(node) != isl_ast_node_user) return isl_bool_true;
  isl_ast_expr *call = isl_ast_node_user_get_expr(node);
  isl_ast_expr *fn = isl_ast_expr_op_get_arg(call, 0);
  isl_id *id = isl_ast_expr_get_id(fn);
  int stage;
  if (sched_stmt_of(isl_id_get_name(id), &stage) == f->want)
    f->call = call;
  else
    isl_ast_expr_free(call);
  isl_id_free(id);
  isl_ast_expr_free(fn);
  return isl_bool_false;
}

/* The block index arguments of the update statement under k loop `kloop`:
 * the column panel, the k step and the row block (NULL where the kernel
 * has no such axis). */
static bool block_args(const sched_kernel *k, isl_ast_node *kloop, cg_buf *tile, cg_buf *red, cg_buf *mtile) {
  const sched_gemm *gm = &k->gemm;
  find_stmt f = {SCHED_STMT_UPDATE, NULL};
  isl_ast_node_foreach_descendant_top_down(kloop, find_user, &f);
  if (!f.call) return false;
  for (int i = 0, arg = 1; i < k->naxes; i++) {
    int a = k->axes[i];
    if (a == gm->n) cg_expr_arg(tile, f.call, arg);
    if (a == gm->k) cg_expr_arg(red, f.call, arg);
    if (a == gm->m) cg_expr_arg(mtile, f.call, arg);
    arg += a == gm->n || a == gm->m ? 2 : 1;
  }
  isl_ast_expr_free(f.call);
  return tile->s && red->s;
}

static bool panel_prefetch(const sched_kernel *k) {
  const sched_gemm *gm = &k->gemm;
  int64_t K = k->space.d[gm->k], N = k->space.d[gm->n];
  return gm->prefetch && gm->npacked && !ir_dim_is_sym(K) && !ir_dim_is_sym(N) && (N + gm->nr - 1) / gm->nr >= 2;
}

/* The upper bound of `loop` when its condition is `iterator <= bound` and
 * it steps by 1 (NULL otherwise). */
static char *loop_bound(isl_ast_node *loop) {
  isl_ast_expr *cond = isl_ast_node_for_get_cond(loop), *inc = isl_ast_node_for_get_inc(loop);
  char *ub = NULL;
  isl_val *one = isl_ast_expr_get_type(inc) == isl_ast_expr_int ? isl_ast_expr_get_val(inc) : NULL;
  if (one && isl_val_is_one(one) && isl_ast_expr_get_type(cond) == isl_ast_expr_op &&
      isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_le) {
    isl_ast_expr *b = isl_ast_expr_op_get_arg(cond, 1);
    cg_buf s = {0};
    cg_print_expr(&s, b);
    isl_ast_expr_free(b);
    ub = s.s;
  }
  isl_val_free(one);
  isl_ast_expr_free(cond), isl_ast_expr_free(inc);
  return ub;
}

/* Whether packed weight i is the first of its buffer (each is fetched once). */
static bool first_of_buf(const sched_gemm *gm, int i) {
  for (int j = 0; j < i; j++)
    if (gm->packed_buf[j] == gm->packed_buf[i]) return false;
  return true;
}

/* The fetch of the next panel spread over the row blocks (gemm_fetch.c:
 * sched_gemm_spread_lines): where the row block index is not a constant, the k loop
 * runs in pieces of SCHED_KPIECE steps (emit.c) and each piece fetches
 * pf_lines lines of each packed weight's next panel, from a pointer that
 * row block t starts at line t x pieces x pf_lines of the slice, clamped
 * to the buffer. Block 0 alone fetching one line per k step cost 3-5 % of
 * the model (a fetch per 6 cycles is faster than memory delivers, the
 * block waited), a test of the block index inside the loop another 8 %
 * (gcc 12 does not unswitch it); a prefetch per 16 steps in every block
 * costs ~1 % with the weights in cache. Prints the pointers (in a block
 * the caller closes) and returns the loop's upper bound; NULL: not here
 * (constant index: the per-k fetch of cg_prefetch_weights, block 0 only). */
char *cg_prefetch_spread(cg_kernel *c, isl_ast_node *kloop) {
  const sched_kernel *k = c->k;
  const sched_gemm *gm = &k->gemm;
  if (gm->m < 0 || !gm->pf_lines || !panel_prefetch(k)) return NULL;
  cg_buf tile = {0}, red = {0}, mtile = {0};
  bool ok = block_args(k, kloop, &tile, &red, &mtile);
  char *end = "", *ub = ok && mtile.s ? loop_bound(kloop) : NULL;
  if (ub) strtoll(mtile.s, &end, 10);
  if (!ub || !*end) {
    free(tile.s), free(red.s), free(mtile.s), free(ub);
    return NULL;
  }
  isl_ast_expr *init = isl_ast_node_for_get_init(kloop);
  cg_buf lo = {0};
  cg_print_expr(&lo, init);
  isl_ast_expr_free(init);
  int64_t K = k->space.d[gm->k], N = k->space.d[gm->n], kc = gm->kc ? gm->kc : K;
  int64_t npan = (N + gm->nr - 1) / gm->nr, panel = K * gm->nr, pieces = (kc + SCHED_KPIECE - 1) / SCHED_KPIECE;
  cg_line(c->body, c->depth++, "{");
  for (int i = 0; i < gm->npacked; i++) {
    if (!first_of_buf(gm, i)) continue;
    int b = cg_kernel_arg(c, gm->packed_buf[i]);
    int64_t line = 64 / (int64_t)ir_dtype_size(c->p->bufs[gm->packed_buf[i]].dtype);
    int64_t span = line * gm->pf_lines * pieces, last = npan * panel - span;
    cg_buf at = {0};
    cg_printf(&at, "%lld * (%s + 1 < %lld ? %s + 1 : %s) + %d * (%s) + %lld * (%s)", (long long)panel, tile.s,
              (long long)npan, tile.s, tile.s, gm->nr, lo.s, (long long)span, mtile.s);
    cg_line(c->body, c->depth, "const char *o2c_pf%d = (const char *)&b%d[%s < %lld ? %s : %lld];", b, b, at.s,
            (long long)(last > 0 ? last : 0), at.s, (long long)(last > 0 ? last : 0));
    free(at.s);
  }
  c->out->prefetch = true;
  free(tile.s), free(red.s), free(mtile.s), free(lo.s);
  return ub;
}

/* At the top of a piece of the k loop (above): the next lines of each
 * packed weight's next panel. */
void cg_prefetch_piece(cg_kernel *c) {
  const sched_gemm *gm = &c->k->gemm;
  for (int i = 0; i < gm->npacked; i++) {
    if (!first_of_buf(gm, i)) continue;
    int b = cg_kernel_arg(c, gm->packed_buf[i]);
    if (gm->pf_lines == 1)
      cg_line(c->body, c->depth, "O2C_PREFETCH(o2c_pf%d);", b);
    else
      cg_line(c->body, c->depth, "for (int o2c_l = 0; o2c_l < %d; o2c_l += 64) O2C_PREFETCH(o2c_pf%d + o2c_l);",
              64 * gm->pf_lines, b);
    cg_line(c->body, c->depth, "o2c_pf%d += %d;", b, 64 * gm->pf_lines);
  }
}

/* At the top of a register block's k loop, for each packed weight (where
 * the scheduler asks for it: gemm.c):
 * - prefetch: its line for this k in the next column panel is fetched into
 *   cache, so the first row block of that panel does not wait for memory
 *   (the next panel of the last one is itself); only in a block of the
 *   constant index 0 (a single block, or the remainder of one): where the
 *   index varies, the pieces of the k loop fetch (cg_prefetch_spread);
 * - ahead: a single row's line gm->ahead elements past this k's (panels are
 *   contiguous: past the end of one is the start of the next), clamped to
 *   the buffer's last element. */
void cg_prefetch_weights(cg_kernel *c, isl_ast_node *kloop) {
  const sched_kernel *k = c->k;
  const sched_gemm *gm = &k->gemm;
  int64_t K = k->space.d[gm->k], N = k->space.d[gm->n];
  if ((!gm->prefetch && !gm->ahead) || !gm->npacked || ir_dim_is_sym(K) || ir_dim_is_sym(N)) return;
  int64_t npan = (N + gm->nr - 1) / gm->nr, panel = K * gm->nr, last = npan * panel - 1;
  cg_buf tile = {0}, red = {0}, mtile = {0};
  if (!block_args(k, kloop, &tile, &red, &mtile)) {
    free(tile.s), free(red.s), free(mtile.s);
    return;
  }
  char *end = "";
  bool later = c->pieces || (mtile.s && strtoll(mtile.s, &end, 10) != 0 && !*end);
  for (int i = 0; i < gm->npacked; i++) {
    if (!first_of_buf(gm, i)) continue;
    int b = cg_kernel_arg(c, gm->packed_buf[i]);
    if (panel_prefetch(k) && !later)
      cg_line(c->body, c->depth, "O2C_PREFETCH(&b%d[%lld * (%s + 1 < %lld ? %s + 1 : %s) + %d * %s]);", b,
              (long long)panel, tile.s, (long long)npan, tile.s, tile.s, gm->nr, red.s);
    /* one line a page where the target says so (gemm_fetch.c: sched_gemm_stream_read):
     * the 1.1B int8 decode step on Zen 5 (EPYC family 26 model 2), 1
     * thread, CPU time, 6 interleaved rounds, load 8: 36.3-37.6 ms against
     * 42.6-45.0 with every line fetched (as read once, prefetchnta: 37.0-52.5) */
    int64_t run = gm->nr * (int64_t)ir_dtype_size(c->p->bufs[gm->packed_buf[i]].dtype),
            page = c->p->opt.target.fetch_page;
    cg_buf every = {0};
    if (gm->ahead && page > run) cg_printf(&every, "if ((%s) %% %lld == 0) ", red.s, (long long)(page / run));
    if (gm->ahead)
      cg_line(c->body, c->depth, "%sO2C_PREFETCH(&b%d[%lld * %s + %d * %s + %d < %lld ? %lld * %s + %d * %s + %d : %lld]);",
              every.s ? every.s : "", b, (long long)panel, tile.s, gm->nr, red.s, gm->ahead, (long long)last,
              (long long)panel, tile.s, gm->nr, red.s, gm->ahead, (long long)last);
    free(every.s);
    c->out->prefetch = true;
  }
  free(tile.s), free(red.s), free(mtile.s);
}

static bool is_reduced(const sched_kernel *k, int a) {
  for (int i = 0; i < k->nred; i++)
    if (k->red[i] == a) return true;
  return false;
}

/* Beside the weights' next slice, the rows' input (gemm_fetch.c: sched_gemm_rows_slices):
 * row block `mt` at step `kk` fetches the next kc channels (past the last
 * slice: the first) at positions ((kk mod kc) x mtiles + mt) x spread + j,
 * j < spread, of the rows_count the buffer holds; clamped to the buffer. */
static void rows_fetch(cg_kernel *c, const char *kk, const char *mt) {
  const sched_kernel *k = c->k;
  const sched_gemm *gm = &k->gemm;
  const sched_buf *rb = &c->p->bufs[gm->rows_buf];
  int64_t K = k->space.d[gm->k], es = (int64_t)ir_dtype_size(rb->dtype), kc = gm->kc;
  int64_t last = rb->numel - kc, bytes = (kc * es + 63) / 64 * 64;
  if (!mt || last < 0) return;
  int b = cg_kernel_arg(c, gm->rows_buf), d = c->depth;
  cg_line(c->body, d++, "{");
  cg_line(c->body, d, "const int64_t o2c_c = %s - %s %% %lld + %lld < %lld ? %s - %s %% %lld + %lld : 0;", kk, kk,
          (long long)kc, (long long)kc, (long long)K, kk, kk, (long long)kc, (long long)kc);
  cg_line(c->body, d, "for (int64_t o2c_q = ((%s %% %lld) * %d + %s) * %d, o2c_e = o2c_q + %d; o2c_q < o2c_e && o2c_q < %lld; o2c_q++)",
          kk, (long long)kc, gm->mtiles, mt, gm->rows_spread, gm->rows_spread, (long long)gm->rows_count);
  cg_line(c->body, d + 1,
          "for (int64_t pf = 0; pf < %lld; pf += 64) O2C_PREFETCH((const char *)&b%d[%lld + %lld * o2c_q + o2c_c < %lld ? "
          "%lld + %lld * o2c_q + o2c_c : %lld] + pf);",
          (long long)bytes, b, (long long)gm->rows_base, (long long)gm->rows_stride, (long long)last,
          (long long)gm->rows_base, (long long)gm->rows_stride, (long long)last);
  cg_line(c->body, --d, "}");
}

/* At the top of a single row's k loop: the run of each weight read as it
 * lies (gemm_fetch.c: sched_gemm_stream_read) `ahead` runs further on in memory is fetched
 * into cache now (the last runs of the buffer fetch its end), as data read
 * once (O2C_PREFETCH_ONCE, program.c). Other
 * reduced axes count from 0; columns from the start of the register block. */
void cg_prefetch_streams(cg_kernel *c, isl_ast_node *kloop) {
  const sched_kernel *k = c->k;
  const sched_gemm *gm = &k->gemm;
  int64_t K = k->space.d[gm->k];
  if (!gm->nstream || ir_dim_is_sym(K)) return;
  find_stmt f = {SCHED_STMT_UPDATE, NULL};
  isl_ast_node_foreach_descendant_top_down(kloop, find_user, &f);
  if (!f.call) return;
  cg_buf idx[IR_MAX_RANK] = {{0}};
  for (int i = 0, arg = 1; i < k->naxes; i++) {
    int a = k->axes[i];
    if (!is_reduced(k, a) || a == gm->k) cg_expr_arg(&idx[a], f.call, arg);
    arg += a == gm->n || a == gm->m ? 2 : 1;
  }
  isl_ast_expr_free(f.call);
  for (int i = 0; i < gm->nstream; i++) {
    const int64_t *co = gm->stream_coef[i];
    int64_t step = co[gm->k] * (int64_t)ir_dtype_size(c->p->bufs[gm->stream_buf[i]].dtype);
    cg_buf at = {0};
    cg_printf(&at, "%lld", (long long)gm->stream_off[i]);
    bool ok = idx[gm->k].s != NULL;
    for (int j = 0; j < k->naxes && ok; j++) {
      int a = k->axes[j];
      if (!co[a] || a == gm->k || is_reduced(k, a)) continue;
      ok = idx[a].s != NULL;
      if (ok) cg_printf(&at, " + %lld * %s", (long long)(a == gm->n ? co[a] * gm->nr : co[a]), idx[a].s);
    }
    const char *kk = idx[gm->k].s;
    if (gm->stream_spread && gm->kc && gm->m >= 0) {
      /* the next slice of the panel (gemm_fetch.c: sched_gemm_conv_slices), its lines shared
       * by the row blocks: block t at step k fetches stream_spread lines
       * from line ((k mod kc) x mtiles + t) x stream_spread of that slice;
       * past the last slice of a panel is the next panel's first; clamped
       * to the buffer */
      int64_t line = 64 / (int64_t)ir_dtype_size(c->p->bufs[gm->stream_buf[i]].dtype);
      int64_t n = gm->stream_spread * line, last = c->p->bufs[gm->stream_buf[i]].numel - n;
      ok = ok && idx[gm->m].s && !ir_dim_is_sym(last) && last > 0;
      if (ok) {
        cg_buf e = {0};
        cg_printf(&e, "%s + %lld * (%s - %s %% %d + %d) + ((%s %% %d) * %d + %s) * %lld", at.s,
                  (long long)co[gm->k], kk, kk, gm->kc, gm->kc, kk, gm->kc, gm->mtiles,
                  idx[gm->m].s, (long long)n);
        cg_line(c->body, c->depth,
                "for (int64_t pf = 0; pf < %d; pf += 64) O2C_PREFETCH((const char *)&b%d[%s < %lld "
                "? %s : %lld] + pf);",
                64 * gm->stream_spread, cg_kernel_arg(c, gm->stream_buf[i]), e.s, (long long)last,
                e.s, (long long)last);
        free(e.s);
        if (i == 0 && gm->rows_spread) rows_fetch(c, kk, idx[gm->m].s);
      }
      c->out->prefetch |= ok;
      free(at.s);
      continue;
    }
    /* `ahead` steps on in memory, not along k: the steps of k are adjacent
     * runs (gemm_fetch.c), and where k ends the stream goes on with the next
     * outer iteration's (MatMulNBits: a block's few words per panel, the
     * blocks outside the panels); clamped to the buffer */
    int64_t last = c->p->bufs[gm->stream_buf[i]].numel - co[gm->k], far = co[gm->k] * gm->stream_ahead[i];
    if (ok && !ir_dim_is_sym(last) && gm->stream_every[i] > 1)
      /* one line a page (gemm_fetch.c: sched_gemm_stream_read) */
      cg_line(c->body, c->depth,
              "if ((%s) %% %d == 0) O2C_PREFETCH_ONCE(&b%d[%s + %lld * %s + %lld < %lld ? %s + %lld * %s + %lld : %lld]);",
              kk, gm->stream_every[i], cg_kernel_arg(c, gm->stream_buf[i]), at.s, (long long)co[gm->k], kk,
              (long long)far, (long long)last, at.s, (long long)co[gm->k], kk, (long long)far, (long long)last);
    else if (ok && !ir_dim_is_sym(last))
      cg_line(c->body, c->depth,
              "for (int64_t pf = 0; pf < %lld; pf += 64) O2C_PREFETCH_ONCE((const char *)&b%d[%s + %lld * %s + %lld < %lld ? %s + %lld * %s + %lld : %lld] + pf);",
              (long long)step, cg_kernel_arg(c, gm->stream_buf[i]), at.s, (long long)co[gm->k], kk, (long long)far,
              (long long)last, at.s, (long long)co[gm->k], kk, (long long)far, (long long)last);
    ok = ok && !ir_dim_is_sym(last);
    c->out->prefetch_once |= ok;
    free(at.s);
  }
  for (int a = 0; a < IR_MAX_RANK; a++) free(idx[a].s);
}
