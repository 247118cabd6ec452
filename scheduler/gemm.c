/* gemm.c — which reduction kernels take the register-blocked matmul form,
 * and the weights they read, packed at compile time into panels.
 *
 * A kernel qualifies when its stages are float sums over reduced axes (one,
 * k, for a matmul; a convolution's channels and taps: c, kh, kw, looped in
 * that order around the block), its final statement runs over the kept axes only, and every value a
 * stage reads along the output's unit-stride axis n is either a weight
 * (repacked so that nr consecutive columns are one load) or a buffer with
 * unit stride along n. The rows axis m is a kept axis that none of those
 * column reads depends on, so one vector of columns serves all mr rows
 * (that reuse is what register blocking buys). The loop nest itself is
 * built in tile.c. */
#include "sched_impl.h"

#include <string.h>

/* One buffer read of a stage's expression: the address is
 * offset + sum(coef[a] * i_a) over the space axes a. */
typedef struct {
  int buf;
  ir_ref view; /* the VIEW read through, or the node itself when read whole */
  bool whole;
  int64_t coef[IR_MAX_RANK];
  int64_t offset;
  bool masked;
} gemm_read;

#define GEMM_MAX_READS 32
/* Bytes ahead of the read that a single row's weight stream is fetched
 * (packed one-byte panels: gm->ahead; weights read as they lie:
 * stream_read): the hardware prefetcher runs too close to cover memory's
 * latency at the rate one core consumes the codes */
#define FETCH_AHEAD 8192

typedef struct {
  const sched_program *p;
  const sched_kernel *k;
  gemm_read reads[GEMM_MAX_READS];
  int nreads;
  int budget; /* visits left: a shared sub-expression is walked once per use */
  bool ok;    /* false: something this form does not handle */
} gemm_walk;

static void add_read(gemm_walk *w, int buf, ir_ref view, bool whole, const int64_t *stride, const ir_shape *s,
                     int64_t offset, bool masked, const int *ids) {
  if (w->nreads == GEMM_MAX_READS) {
    w->ok = false;
    return;
  }
  gemm_read *r = &w->reads[w->nreads++];
  memset(r, 0, sizeof *r);
  r->buf = buf, r->view = view, r->whole = whole, r->offset = offset, r->masked = masked;
  for (int j = 0; j < s->rank; j++)
    if (s->d[j] != 1 && ids[j] >= 0) r->coef[ids[j]] = ir_dim_add(r->coef[ids[j]], stride[j]);
}

/* The buffer reads of inline value `x`; ids[j] is the space axis indexing
 * axis j of `x` (-1: always 0). */
static void walk(gemm_walk *w, ir_ref x, const int *ids) {
  if (!w->ok || --w->budget < 0) {
    w->ok = false;
    return;
  }
  const ir_graph *g = w->p->g;
  const ir_node *n = ir_node_get(g, x);
  if (sched_stage_of(w->k, x) >= 0) {
    w->ok = false; /* a stage reading another stage: not a product of two operands */
    return;
  }
  if (w->p->buf_of[x] >= 0) {
    int64_t st[IR_MAX_RANK];
    ir_contiguous_strides(&n->shape, st);
    add_read(w, w->p->buf_of[x], x, true, st, &n->shape, 0, false, ids);
    return;
  }
  if (n->op == IR_LOAD || n->op == IR_INDEX_COMPONENTS) return;
  if (n->op != IR_VIEW) {
    for (int i = 0; i < n->nsrc; i++) walk(w, n->src[i], ids);
    return;
  }
  const ir_node *s = ir_node_get(g, n->src[0]);
  if (s->op == IR_LOAD) return;
  if (n->view.gather) {
    w->ok = false; /* an indexed read per element of the reduction */
    return;
  }
  if (w->p->buf_of[n->src[0]] >= 0) {
    add_read(w, w->p->buf_of[n->src[0]], x, false, n->view.stride, &n->shape, n->view.offset,
             n->view.masked, ids);
    return;
  }
  int map[IR_MAX_RANK], sids[IR_MAX_RANK];
  if (!ir_view_axis_map(&n->view, &s->shape, map)) {
    w->ok = false;
    return;
  }
  for (int j = 0; j < s->shape.rank; j++) sids[j] = map[j] >= 0 ? ids[map[j]] : -1;
  walk(w, n->src[0], sids);
}

static bool is_outer(const sched_kernel *k, int a) {
  for (int i = 0; i < k->nouter; i++)
    if (k->outer[i] == a) return true;
  return false;
}

/* A read of a float weight, or of a one-byte integer weight (a quantized
 * one, widened where it is read), through a plain view along (n, k) only,
 * k the one reduced axis: its panels can be made at compile time. A read
 * along n alone (a per-column scale) is one row, read as it is. */
static bool packable(const sched_program *p, const sched_kernel *k, const gemm_read *r, int n,
                     int kk) {
  const sched_buf *b = &p->bufs[r->buf];
  bool narrow = (b->dtype == IR_I8 || b->dtype == IR_U8);
  if (k->nred != 1 || b->kind != SCHED_BUF_WEIGHT || (b->dtype != IR_F32 && !narrow) || (r->whole && !narrow) ||
      r->masked || !r->coef[kk])
    return false;
  if (ir_dim_is_sym(k->space.d[n]) || ir_dim_is_sym(k->space.d[kk]))
    return false; /* panels have a fixed size */
  for (int i = 0; i < k->naxes; i++)
    if (k->axes[i] != n && k->axes[i] != kk && r->coef[k->axes[i]]) return false;
  return true;
}

static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* mr: rows of M, and 1 without a rows axis (a single row). A sum over
 * several axes (a convolution's c, kh, kw over a window of its input) loads
 * its columns unaligned, split across cache lines: up to 12 rows share each
 * load (AVX-512, 24 zmm accumulators; 3x3 layers of ResNet-18's shapes +3-6
 * %, 1 thread, CPU time, loaded machine); a plain matmul keeps 8 (a 1x1
 * convolution, K = 64: 12 rows 16 % slower) */
static int64_t block_rows(const sched_gemm *gm, const sched_target *t, int64_t M, int nstages, int nv,
                          int64_t cap) {
  int64_t rows = (int64_t)t->vector_regs * 3 / 4 / (nstages * nv);
  return gm->m < 0 ? 1 : min64(M, min64(rows < 1 ? 1 : rows, cap));
}

/* Whether all the model's weights (as read, before packing) fit in half of
 * the target's L3: then they stay in cache from one call to the next. */
static bool weights_cached(const sched_program *p) {
  int64_t bytes = 0, l3 = p->opt.target.l3;
  for (int i = 0; i < p->nbufs; i++) {
    const sched_buf *b = &p->bufs[i];
    if (b->kind != SCHED_BUF_WEIGHT || b->pack) continue;
    if (ir_dim_is_sym(b->numel)) return false;
    bytes += b->numel * (int64_t)ir_dtype_size(b->dtype);
    if (bytes > l3 / 2) return false;
  }
  return l3 > 0;
}

/* A windowed convolution with 32 registers of 512 bits (AVX-512): of the
 * blocks whose accumulators take 3/4 of the registers (12 x 2 vectors,
 * 8 x 3, 6 x 4) and whose columns are whole blocks (a partial one came out
 * of gcc as 16 + 8 + 4 + 1 wide code), the one with the least work,
 * ceil(M / mr) * mr rows, then the fewest loads per multiply-add, (nv + mr)
 * / (nv * mr). 3x3, 64 -> 64 at 56x56 (3264 columns): 8 x 48 1.18 ms
 * against 6 x 64's 1.23 (its last block of 4 rows); 512 -> 512 at 7x7 (64
 * columns): 6 x 64, 1.76-1.79 ms against 12 x 32's 1.83-1.85 (1 thread,
 * CPU time, loaded machine); CRNN 3.94 -> 3.80 ms, DBNet 30.4 -> 29.4,
 * ResNet-18 24.1 -> 23.6 (their 128-channel 3x3 layers also 8 x 48). The
 * number of vectors (nv0 when none has whole blocks); *cap the rows. */
static int wide_vectors(const sched_gemm *gm, const sched_target *t, int64_t M, int64_t N, int nstages, int nv0,
                        int64_t *cap) {
  int lanes = sched_target_lanes(t), best = nv0;
  int64_t best_work = -1, best_mr = *cap;
  for (int nv = 2; nv <= 4; nv++) {
    int64_t mr = block_rows(gm, t, M, nstages, nv, 12), work = (M + mr - 1) / mr * mr;
    if (N % (nv * lanes)) continue;
    /* columns that are a convolution's weight: every row block re-reads
     * its panel (K x nr floats) from L2, so the most rows per column
     * vector, 2 vectors (CRNN's layers, 12 x 32 against 6 x 64, k TSC
     * cycles per call: 128 -> 256 at 3 x 80 1334 -> 1276, 256 -> 256's
     * bands 2464 -> 2247, the others within 1-2 %; Zen 5) */
    if (gm->cols_conv && nv > 2) continue;
    if (best_work < 0 || work < best_work ||
        (work == best_work && (nv + mr) * best * best_mr < (best + best_mr) * nv * mr))
      best = nv, best_work = work, best_mr = mr;
  }
  /* no block of whole columns (the stem's 112-wide rows): the most rows
   * that leave no remainder block, down to 2/3 of the cap (64 rows: 8 x
   * 32, not 5 x 12 + 4) */
  if (best_work < 0) {
    int64_t mr = block_rows(gm, t, M, nstages, best, 12), r = mr;
    while (M % r && r * 3 > mr * 2) r--;
    best_mr = M % r ? mr : r;
  }
  *cap = best_mr;
  return best;
}

/* The register block, from the target's register file: about 3/4 of the
 * vector registers hold accumulators (stages x mr x nr/lanes), the rest the
 * nr/lanes loaded columns and the broadcast row value. nr is two vectors
 * (three with 32 registers of 128 bits, as NEON), one when N fits in one;
 * mr at most 8 (12 windowed, above). AVX-512: 8 x 32 (16 zmm accumulators; 6 x 32 for two
 * sums); AVX2: 6 x 16 (12 of 16 ymm; 6 x 8 for two); NEON: 8 x 12 (24
 * of 32); generic (128-bit, 16 registers): 6 x 8 (3 x 8 for two). A
 * single row (decode) keeps the same nr: on AVX-512, 32 columns streamed
 * one row's weights fastest (25 GB/s against 24 with 64 and 21 with 128,
 * one core); but a single row over weights that stay in cache (`cached`)
 * takes more columns, below. */
static void block_size(sched_gemm *gm, const sched_target *t, int64_t M, int64_t N, int nstages, bool narrow,
                       bool windowed, int ncols, int64_t K, bool cached) {
  int lanes = sched_target_lanes(t);
  int nv = t->vector_bits <= 128 && t->vector_regs >= 32 ? 3 : 2;
  /* one row whose weights stay in cache between calls (all the model's
   * weights within half of L3): the k loop is bound by its FMA chains, one
   * per vector of columns, each step waiting for the last, not by memory.
   * A quarter of the register file in chains (AVX-512: 8 x 16 columns, as
   * many as two FMA pipes of 4 cycles' latency keep busy; AVX2: 4 x 8).
   * MobileNetV3-small's 576 -> 1024 head, Zen 5, 1 thread: 50.5 -> 27.4 us
   * (2 chains -> 8; 4: 30.0); a decode step of a large model streams its
   * weights from memory and keeps 2 */
  if (gm->m < 0 && cached && !narrow && nstages == 1)
    nv = (int)min64(t->vector_regs / 4, (N + lanes - 1) / lanes);
  if (N <= lanes) nv = 1;
  /* with FMA, accumulators, one vector of columns per stage and nv, and
   * the broadcast must fit the register file: two sums on 16 registers as
   * 3 x 2 vectors need 17 (gcc then reads a column from memory once per
   * row), 6 x 1 vector takes 15 (SwiGLU on AVX2, base S = 128, 1 thread:
   * the model 1-2 % faster, A/B on a loaded machine). Without FMA (SSE) a
   * product needs a register of its own anyway: 6 x 4 measured 2 % slower
   * than 3 x 8 there */
  while (t->fma && nv > 1 &&
         nstages * (block_rows(gm, t, M, nstages, nv, windowed ? 12 : 8) + 1) * nv + 1 > t->vector_regs)
    nv--;
  /* one-byte weights: a row of the block is one full vector of bytes (64
   * columns on AVX-512), else gcc widens half vectors through 16-bit steps
   * (one row times a 2048 x 8192 int8 weight: 9 against 20 G weights/s) */
  if (narrow && N > lanes && nv < 4) nv = 4;
  /* a row of 3 or 5 vectors (the importer's rows form rounds an 80-wide
   * row to 80 columns on AVX-512) is one block across: no partial block */
  bool wide = windowed && t->vector_bits >= 512 && t->vector_regs >= 32;
  bool row = !(wide && N % (4 * lanes) == 0) && windowed && nstages == 1 && ncols <= 1 &&
             t->vector_regs >= 32 && N % lanes == 0 && (N / lanes == 3 || N / lanes == 5);
  if (row) nv = (int)(N / lanes);
  int64_t cap = windowed ? 12 : 8;
  if (wide && !row) nv = wide_vectors(gm, t, M, N, nstages, nv, &cap);
  /* A step that reads several column vectors (a strided convolution's taps,
   * each a window of its own phase: 9 for 3x3) keeps each live across the
   * rows: accumulators, ncols x nv columns and the broadcast must fit, else
   * gcc spills: fewer rows then (3x3/2, 16 -> 24 channels at 320x320,
   * AVX-512: 8 x 32 -> 6 x 32, 3.10 -> 2.76 ms). Not fewer columns: on
   * AVX2, 6 x 8 (fits) was 13 % slower than 6 x 16 (spills), one column
   * load per 6 FMAs. Not for a short sum either (K < 8, the 3x3/2 stem
   * over RGB: 6 x 32 and 4 x 32 3-5 % slower than 8 x 32): a block's clear
   * and store are then as much work as its steps. */
  if (ncols > nstages && t->fma && K >= 8) {
    int64_t fit = ((int64_t)t->vector_regs - 1 - (int64_t)ncols * nv) / (nstages * nv);
    if (fit >= 2 && fit < cap) cap = fit;
  }
  gm->nr = nv * lanes;
  gm->mr = (int)block_rows(gm, t, M, nstages, nv, cap);
  /* a whole row takes all the registers but its columns and the
   * broadcast: 5 x 80 on AVX-512 (25 accumulators) ran 4 % faster than
   * 4 x 80 (3x3, 64 -> 128 and 128 -> 256 at stride (2, 1), 80-wide rows,
   * 1 thread, CPU time, loaded machine); 6 x 80 spilled (19 % slower) */
  if (row) gm->mr = (int)min64(gm->m < 0 ? 1 : M, ((int64_t)t->vector_regs - 1 - nv) / nv);
  /* a weight larger than the caches comes from DRAM panel by panel; the
   * first row block of a panel waits for it unless it was fetched during
   * the previous panel. Base S = 128, 1 thread, Sapphire Rapids core:
   * AVX2 -5 %. On AVX-512 the first form (block 0 fetching a line per k
   * step) was 4 % slower there; the fetch spread over the row blocks
   * (spread_lines) is 4 % faster on a Zen 5 core (147 against 154 ms,
   * 8 x 32, CPU time, loaded machine), so every width fetches */
  gm->prefetch = gm->m >= 0;
  /* one row (decode) streams one-byte weights at a few cycles per line:
   * the hardware prefetcher does not run far enough ahead to overlap that
   * with memory (one row times 66 int8 2048 x 5632 weights, Sapphire
   * Rapids core, loaded machine: 7.7 GB/s, 12.4 with lines fetched 8 KiB
   * ahead, 13.3 a plain read; AVX2: 3.2 against 9.9) */
  gm->ahead = narrow && gm->m < 0 ? FETCH_AHEAD : 0;
}

/* Slices of k: the kc-long slices of the packed panels of all stages (kc x
 * nr floats each) take about 3/4 of L1, so that they stay there while
 * every row block of the panel passes over them (the row block's own slice
 * of its rows takes the rest); slices of about equal length, a multiple of
 * 8. Only with packed panels, several row blocks (the reuse that slicing
 * keeps in L1), static M and K, and partial sums (mtiles x mr x nr floats
 * per stage) within a quarter of L2. Measured on a Sapphire Rapids core
 * (48 KiB L1), base S = 128, 1 thread, a loaded machine: AVX2, kc 384 for
 * one sum and 256 for SwiGLU's two: 311-323 ms against 330-356 unsliced
 * (128 for SwiGLU: no gain; 384: worse); AVX-512 (8 x 32, kc 192): 245
 * against 233-237 ms, so not there. */
static void k_slices(sched_gemm *gm, const sched_target *t, int64_t M, int64_t K, int nstages) {
  gm->kc = gm->mtiles = 0;
  if (gm->m < 0 || !gm->npacked || ir_dim_is_sym(M) || ir_dim_is_sym(K) || t->l1d <= 0 ||
      t->vector_bits > 256)
    return;
  int64_t mtiles = (M + gm->mr - 1) / gm->mr;
  int64_t kcmax = t->l1d * 3 / 4 / (4 * (int64_t)gm->nr * nstages) / 8 * 8;
  if (mtiles < 2 || kcmax < 64 || K <= kcmax) return;
  if (mtiles * gm->mr * gm->nr * nstages * 4 > t->l2 / 4) return;
  int64_t nslices = (K + kcmax - 1) / kcmax;
  int64_t kc = ((K + nslices - 1) / nslices + 7) / 8 * 8;
  gm->kc = (int)kc, gm->mtiles = (int)mtiles;
}

/* Partial accumulators per element of the block: the block's vectors
 * (stages x mr x nr/lanes) are its independent FMA chains, each step
 * waiting for the last; a step of several products (MatMulNBits' 8 codes
 * of a word, one row: 2 vectors) keeps the pipes busy only with the
 * target's latency x pipes chains in flight (8: 4 partial sums of 2
 * vectors). At most 4, and at most a quarter of the register file in
 * accumulators (the codes, their masks and the broadcasts need the rest:
 * AVX2 with 4 sums of 2 vectors kept them in memory; 2 sums there); not
 * with k slices (their partial sums wait in memory). One-row blocks only
 * (a block of rows has mr x more chains). The 1.1B int4 decode
 * step (Zen 5, 1 thread, CPU time, loaded): AVX-512 31.5 -> 29.8 ms, AVX2
 * 66.4 -> 58.8 (with the 8 KiB fetch, stream_read). */
static int acc_parts(const sched_gemm *gm, const sched_target *t, int nstages) {
  int lanes = sched_target_lanes(t);
  int vecs = nstages * gm->mr * ((gm->nr + lanes - 1) / lanes);
  if (gm->m >= 0 || gm->kc || vecs <= 0) return 1; /* rows: chains enough, or not measured */
  int n = (sched_target_chains(t) + vecs - 1) / vecs, fit = t->vector_regs / 4 / vecs;
  n = n < fit ? n : fit;
  return n > 4 ? 4 : n < 1 ? 1 : n;
}

/* The next panel's fetch, spread over the row blocks: each piece of
 * SCHED_KPIECE k steps of a full row block fetches the same number of its
 * lines, enough that the blocks of a slice (of a panel when k is not
 * sliced) fetch that slice of every packed weight. One line per k step in
 * the first block only (a fetch per 6 cycles, faster than one core's
 * DRAM: the block waited) left the kernels at 107-115 GFLOP/s with their
 * weights from memory and 127 in cache; one line per 16 k steps in every
 * block: 115-123 (768 x 768, 128 rows, AVX2 on the Sapphire Rapids core,
 * CPU time, loaded machine). */
static int spread_lines(const sched_program *p, const sched_gemm *gm, int64_t M, int64_t K) {
  int64_t kc = gm->kc ? gm->kc : K, blocks = M / gm->mr, lines = 0;
  int64_t pieces = blocks * ((kc + SCHED_KPIECE - 1) / SCHED_KPIECE);
  for (int i = 0; i < gm->npacked; i++) {
    int64_t es = (int64_t)ir_dtype_size(p->bufs[gm->packed_buf[i]].dtype);
    lines = lines > (kc * gm->nr * es + 63) / 64 ? lines : (kc * gm->nr * es + 63) / 64;
  }
  if (pieces < 1 || lines < 1) return 0;
  return (int)((lines + pieces - 1) / pieces);
}

/* A buffer for the weight read `r` as panels [ceil(N/nr)][K][nr] (columns
 * past N are zero), made when written (sched_gemm_panel). */
static int pack_weight(sched_program *p, const sched_kernel *k, const gemm_read *r) {
  const sched_gemm *gm = &k->gemm;
  int64_t N = k->space.d[gm->n], K = k->space.d[gm->k], nr = gm->nr, npan = (N + nr - 1) / nr;
  sched_pack *pk = malloc(sizeof *pk);
  SCHED_ASSERT(pk);
  *pk = (sched_pack){N, K, nr, r->offset, r->coef[gm->n], r->coef[gm->k]};
  int b = sched_add_buf(p, SCHED_BUF_WEIGHT, p->bufs[r->buf].node, -1);
  p->bufs[b].pack = pk;
  p->bufs[b].numel = npan * K * nr;
  return b;
}

void sched_gemm_panel(const sched_program *p, const sched_buf *b, int64_t pn, void *panel) {
  const sched_pack *pk = b->pack;
  int64_t K = pk->K, nr = pk->nr, width = min64(nr, pk->N - pn * nr), cn = pk->cn, ck = pk->ck;
  size_t es = ir_dtype_size(b->dtype);
  memset(panel, 0, (size_t)(K * nr) * es);
  /* walk the source in its own order: whichever of n and k has the smaller
   * stride innermost; the element type spelled out (float, or the bytes of
   * a quantized weight), so each copy is one load and store */
#define PANEL_COPY(T)                                                                             \
  do {                                                                                            \
    T *out = panel;                                                                               \
    const T *src = (const T *)ir_node_get(p->g, b->node)->data + pk->offset + cn * pn * nr;       \
    if ((ck < 0 ? -ck : ck) < (cn < 0 ? -cn : cn))                                                \
      for (int64_t j = 0; j < width; j++)                                                         \
        for (int64_t kk = 0; kk < K; kk++) out[kk * nr + j] = src[cn * j + ck * kk];              \
    else                                                                                          \
      for (int64_t kk = 0; kk < K; kk++)                                                          \
        for (int64_t j = 0; j < width; j++) out[kk * nr + j] = src[cn * j + ck * kk];             \
  } while (0)
  if (es == 1) PANEL_COPY(uint8_t);
  else PANEL_COPY(float);
#undef PANEL_COPY
}

/* A single row (decode) reads each weight once, so its speed is how fast
 * memory delivers it; a weight read as it lies (not packed), a short
 * contiguous run per step of the outer reduced axis k (MatMulNBits: a
 * 64-byte row of 16 columns' codes), is recorded to be fetched
 * FETCH_AHEAD bytes ahead in memory (codegen: cg_prefetch_streams).
 * Measured on a Sapphire Rapids core, one 768 x 768 4-bit weight streamed
 * from memory: 96 us without, 49 with 2 KiB (39 with the weight in
 * cache); the base LLaMA int4 decode step 15.8 ms with the fetch at the
 * current row, 9.2 2 KiB ahead. The 1.1B int4 step on a Zen 5 core
 * (AVX-512, CPU time, lower quartiles of 20 interleaved rounds, loaded):
 * 512 B ahead ~41 ms, 2 KiB 35.6, 4 KiB 31.8, 8 KiB 29.8, 16 KiB 29.7.
 * A run shorter than the target's fetch_page is fetched one line per page
 * (every page / run steps): the hardware prefetchers stream within a page
 * once its line is asked for (a fetch of every line presumably holds one
 * of the core's few fill buffers per line until memory answers: a pure
 * read of the same streams is faster without any fetch); they do not
 * cross into the next page, which the fetch ahead opens. Zen 5 (EPYC family 26
 * model 2), 66 4-bit 2048 x 5632 weights streamed by the decode kernel:
 * 1 thread 17.4 against 19.5 ms, 2 threads 9.2 against 10.2 (wall clock
 * under SCHED_FIFO, minima of 3 interleaved runs, load 7-10; a pure read
 * of them without fetches 17.0 / 8.3). Only where the target says so
 * (fetch_page): the AVX2 kernel, bound by its instructions, was slower
 * with it (the 1.1B int4 step 44.5-53.4 against 41.5-46.4 ms CPU time),
 * as with both forms (every line 1 KiB ahead too). The page 32 KiB ahead
 * instead of 8 with --threads 2 (Zen 5, the 1.1B int4 step, SCHED_FIFO
 * wall clock, rounds in rotated order, load 8-11): harness alone, medians
 * 10.5-13.5 % lower (9 and 11 of 12 rounds), 16 KiB no lower, 64 KiB
 * 10.6 %; in the bench's interleaved driver 14.48 against 15.27 ms
 * (medians of 5 rounds, 4 won). One thread (CPU time) was 13 % slower
 * with 32 KiB (11 of 12 rounds), so only a pooled build fetches further. */
static void stream_read(sched_program *p, sched_kernel *k, const gemm_read *r, bool packed) {
  sched_gemm *gm = &k->gemm;
  const sched_buf *b = &p->bufs[r->buf];
  int64_t es = (int64_t)ir_dtype_size(b->dtype), step = r->coef[gm->k];
  if (packed || b->kind != SCHED_BUF_WEIGHT || r->masked || step <= 0 || ir_dim_is_sym(step) ||
      ir_dim_is_sym(r->offset) || step > 8192 / es || step * es < 64 || gm->kc ||
      gm->nstream == SCHED_MAX_STAGES)
    return;
  /* the run must be what one k step reads, without gaps: fetching it then
   * stays inside the weight */
  int64_t span = 1 + r->coef[gm->n] * (gm->nr - 1);
  for (int a = 0; a < IR_MAX_RANK; a++)
    if (ir_dim_is_sym(r->coef[a]) || r->coef[a] < 0) return;
  for (int i = 0; i < k->nred; i++)
    if (ir_dim_is_sym(k->space.d[k->red[i]])) return;
    else if (k->red[i] != gm->k) span += r->coef[k->red[i]] * (k->space.d[k->red[i]] - 1);
  if (span != step) return;
  for (int i = 0; i < gm->nstream; i++)
    if (gm->stream_buf[i] == r->buf && gm->stream_off[i] == r->offset &&
        !memcmp(gm->stream_coef[i], r->coef, sizeof r->coef))
      return; /* the same read twice (both nibbles of a byte) */
  int i = gm->nstream++;
  gm->stream_buf[i] = r->buf, gm->stream_off[i] = r->offset;
  memcpy(gm->stream_coef[i], r->coef, sizeof r->coef);
  int64_t page = p->opt.target.fetch_page;
  /* with a pool, both cores stream at once and each waits longer for
   * memory: the page ahead is opened 4 x FETCH_AHEAD ahead (one thread:
   * slower) */
  int64_t ahead = (page && p->opt.threads > 1 ? 4 : 1) * FETCH_AHEAD / (step * es);
  gm->stream_ahead[i] = ahead < 1 ? 1 : (int)ahead;
  gm->stream_every[i] = page > step * es ? (int)(page / (step * es)) : 1; /* page 0: 1 */
}

/* Slices of k for a convolution whose columns are its weight laid out by
 * the importer as contiguous panels [M / nr, C, kh, kw, nr] (op_conv.c:
 * conv_wide_cols), read as it lies: k is the channels, each step a run of
 * kh x kw x nr. When the model's weights do not stay in cache (larger than
 * half of L3) and two panels do not fit in half of L2, a panel comes from
 * memory while its row blocks use it, and fetching the whole next panel
 * would push the current one out; so the panel is cut into slices of
 * about 3/4 of L1 (as k_slices), every slice passes all the row blocks,
 * and each block fetches its share of the next slice, a few lines per k
 * step (codegen: cg_prefetch_streams). Not with the weights' cache size:
 * the L3 a VM reports may be the socket's (Zen 5 EPYC here: 508 MiB) and
 * ResNet-18's 47 MB did not stay in it between runs. ResNet-18's three 3x3,
 * 512 -> 512 layers at 7x7 (Zen 5, EPYC family 26 model 2, 1 thread,
 * per-kernel rdtsc minima of 5 interleaved rounds, load 7-9): 8.90 M TSC
 * cycles unsliced (main's wide form), 7.77 in 32-channel slices (48 KiB
 * L1), 7.85 in 64, 7.76 in 128; unsliced this form took 10.6. */
static void conv_slices(sched_program *p, sched_kernel *k, const gemm_walk *w) {
  sched_gemm *gm = &k->gemm;
  const sched_target *t = &p->opt.target;
  int64_t K = k->space.d[gm->k], M = k->space.d[gm->m];
  if (gm->npacked || k->nred < 2 || ir_dim_is_sym(K) || ir_dim_is_sym(M) || t->l1d <= 0 ||
      t->l2 <= 0 || gm->nstream)
    return;
  int64_t mtiles = (M + gm->mr - 1) / gm->mr;
  for (int i = 0; i < w->nreads; i++) {
    const gemm_read *r = &w->reads[i];
    const sched_buf *b = &p->bufs[r->buf];
    if (!r->coef[gm->n] || b->kind != SCHED_BUF_WEIGHT) continue;
    int64_t es = (int64_t)ir_dtype_size(b->dtype), step = r->coef[gm->k],
            span = 1 + r->coef[gm->n] * (gm->nr - 1);
    if (r->masked || ir_dim_is_sym(step) || ir_dim_is_sym(r->offset) || r->coef[gm->n] != 1 ||
        step <= 0)
      return;
    for (int a = 0; a < IR_MAX_RANK; a++)
      if (ir_dim_is_sym(r->coef[a]) || r->coef[a] < 0) return;
    for (int j = 0; j < k->nred; j++)
      if (ir_dim_is_sym(k->space.d[k->red[j]]))
        return;
      else if (k->red[j] != gm->k)
        span += r->coef[k->red[j]] * (k->space.d[k->red[j]] - 1);
    /* one contiguous run per k step */
    if (span != step || ir_dim_is_sym(b->numel)) return;
    int64_t run = step * es, panel = run * K, kcmax = t->l1d * 3 / 4 / run;
    if (4 * panel <= t->l2 || kcmax < 8 || K <= kcmax || mtiles < 2) return;
    if (mtiles * gm->mr * gm->nr * k->nstages * 4 > t->l2 / 4) return;
    int64_t nsl = (K + kcmax - 1) / kcmax, kc = ((K + nsl - 1) / nsl + 7) / 8 * 8;
    gm->kc = (int)kc, gm->mtiles = (int)mtiles;
    gm->stream_buf[0] = r->buf, gm->stream_off[0] = r->offset, gm->stream_ahead[0] = 1;
    memcpy(gm->stream_coef[0], r->coef, sizeof r->coef);
    gm->nstream = 1;
    gm->stream_spread = (int)(((run + 63) / 64 + mtiles - 1) / mtiles);
    return;
  }
}

/* With threads, the sliced convolution above splits its column panels:
 * every chunk reads the whole input, which the kernel before wrote half
 * (or, unthreaded, all) on the other core. In a thread's first chunk each
 * slice then waits for the other core's lines one miss at a time, the
 * FMAs stalled (this VM: a line from the other core's L2 is slow, and the
 * kernel's reads, a run of kc channels every position stride, leave the
 * hardware prefetchers nothing to follow). So beside the weights' next
 * slice each row block fetches the input's next kc channels (past the
 * last slice: the first, for the next panel) at its share of the
 * positions, ceil(positions / (kc x row blocks)) a k step; later chunks
 * find them in L2 already. One thread keeps its input in its own L2 (the
 * C without threads is unchanged). ResNet-18's 14x14 and 7x7 layers on Zen
 * 5 (EPYC family 26 model 2), 2 threads: docs/DESIGN.md ("The input's
 * next slice"). */
static void rows_slices(const sched_program *p, sched_kernel *k, const gemm_walk *w) {
  sched_gemm *gm = &k->gemm;
  int64_t K = k->space.d[gm->k];
  if (p->opt.threads < 2 || !gm->stream_spread || !gm->kc || gm->m < 0 || ir_dim_is_sym(K)) return;
  for (int i = 0; i < w->nreads; i++) {
    const gemm_read *r = &w->reads[i];
    const sched_buf *b = &p->bufs[r->buf];
    if (b->kind == SCHED_BUF_WEIGHT || !r->coef[gm->m] || r->coef[gm->n] || r->coef[gm->k] != 1) continue;
    int64_t stride = r->coef[gm->m], numel = b->numel;
    /* a position's kc channels one run inside the buffer, runs apart */
    if (r->masked || ir_dim_is_sym(stride) || ir_dim_is_sym(r->offset) || ir_dim_is_sym(numel) ||
        stride < K || numel < stride || numel > INT64_MAX / 4)
      return;
    int64_t base = (r->offset % stride + stride) % stride, count = (numel - base) / stride,
            per = (int64_t)gm->kc * gm->mtiles;
    if (count < 1 || per < 1) return;
    gm->rows_buf = r->buf, gm->rows_base = base, gm->rows_stride = stride, gm->rows_count = count;
    gm->rows_spread = (int)((count + per - 1) / per);
    return;
  }
}

int sched_gemm_packed_buf(const sched_kernel *k, ir_ref r) {
  for (int i = 0; i < k->gemm.npacked; i++)
    if (k->gemm.packed_view[i] == r) return k->gemm.packed_buf[i];
  return -1;
}

/* Columns larger than L2 (a 1x1 convolution over a 160x160 map: 24
 * channels, 2.4 MB) pass once through the row blocks in the panel order,
 * but every row block's output rows are then written a panel at a time: at
 * each column panel all M rows of the output (and of a residual read in
 * the epilogue) advance by one panel, M streams of nr floats each. In
 * chunks of the outermost other axis (or of the column panels) that take
 * an eighth of L2, with the row blocks inside, each block writes long runs
 * and the chunk's columns are re-read from L2: the DBNet-like lateral
 * 24 -> 64 with the resized top-down Add, 2315 -> 1446 k TSC cycles in
 * chunks of 8 output rows (123 KB of columns; by hand against 1525:
 * 8 rows 1186, all 160 rows per row block 1347, 32 rows 1443; Zen 5, 1
 * thread, docs/DESIGN.md "Column chunks"). */
static void chunk_columns(const sched_program *p, sched_kernel *k, int64_t col_bytes) {
  sched_gemm *gm = &k->gemm;
  int64_t l2 = p->opt.target.l2, per = 0, ext = 0;
  /* one reduced axis (a 1x1 or im2col product, the stem's taps): a
   * windowed sum over (c, kh, kw) re-reads each column panel from L1 for
   * every row block in the panel order, and from L2 in chunks (AVX2 3x3,
   * 64 -> 64 at 56x56: 2.76 -> 3.26 ms; AVX-512 equal) */
  if (l2 <= 0 || k->nred != 1 || gm->m < 0 || gm->rows_outer || gm->cols_conv || gm->cols_outer || gm->kc ||
      gm->npacked ||
      col_bytes <= l2 / 5 * 4 || ir_dim_is_sym(k->space.d[gm->m]) || k->space.d[gm->m] < 2 * gm->mr)
    return;
  int a = -1;
  for (int i = 0; i < k->nouter && a < 0; i++) {
    int b = k->outer[i];
    if (b != gm->m && b != gm->n && !ir_dim_is_sym(k->space.d[b]) && k->space.d[b] > 1) a = b;
  }
  if (a < 0 && !ir_dim_is_sym(k->space.d[gm->n])) a = gm->n;
  if (a < 0) return;
  ext = a == gm->n ? (k->space.d[a] + gm->nr - 1) / gm->nr : k->space.d[a]; /* iterations of the band */
  per = col_bytes / ext;
  int64_t c = per > 0 ? l2 / 8 / per : ext;
  if (c < 1) c = 1;
  /* one column panel a chunk is the panel order itself */
  if (c >= ext || c > INT32_MAX || (a == gm->n && c < 2)) return;
  gm->chunk = (int)c, gm->chunk_axis = a;
}

/* The bytes of the static buffers read along the columns (axis n); with
 * `once`, a buffer read at several offsets (a taps form) counts once. */
static int64_t column_bytes(const sched_program *p, const gemm_walk *w, int n, bool once) {
  int64_t bytes = 0;
  for (int i = 0; i < w->nreads; i++) {
    const sched_buf *b = &p->bufs[w->reads[i].buf];
    bool seen = false;
    for (int j = 0; j < i && once; j++) seen |= w->reads[j].buf == w->reads[i].buf && w->reads[j].coef[n];
    if (w->reads[i].coef[n] && !seen && !ir_dim_is_sym(b->numel)) bytes += b->numel * (int64_t)ir_dtype_size(b->dtype);
  }
  return bytes;
}

/* A product whose columns are a small packed weight (a classifier head:
 * CRNN's 768 -> 97 over 80 positions, 3 full column panels) runs its
 * column panels outermost, and that loop is the one the thread pool
 * splits: 3 panels on 2 threads go 2 : 1 and the head gained nothing from
 * a second thread. Compiled for threads, with fewer full panels than two a
 * thread and at least two row blocks a thread, the row blocks go outside
 * instead, when the whole packed weight stays in L2 for every row block
 * (half of it, beside the rows): the panels come from L2 in either order
 * (one is already larger than L1), and the threads split the rows. */
static void rows_for_threads(const sched_program *p, sched_kernel *k, const gemm_walk *w, const bool *pack) {
  sched_gemm *gm = &k->gemm;
  const sched_target *t = &p->opt.target;
  int th = p->opt.threads;
  if (th < 2 || t->l2 <= 0 || gm->m < 0 || k->nred != 1 || gm->rows_outer || gm->cols_conv ||
      ir_dim_is_sym(k->space.d[gm->m]) || ir_dim_is_sym(k->space.d[gm->n]) || gm->mr < 1 || gm->nr < 1)
    return;
  int64_t bytes = 0;
  for (int i = 0; i < w->nreads; i++) {
    const sched_buf *b = &p->bufs[w->reads[i].buf];
    if (!w->reads[i].coef[gm->n]) continue;
    if (!pack[i] || ir_dim_is_sym(b->numel)) return; /* columns from an activation */
    if (b->numel > t->l2) return;                     /* too large anyway (no overflow below) */
    bytes += b->numel * (int64_t)ir_dtype_size(b->dtype);
  }
  int64_t panels = k->space.d[gm->n] / gm->nr, rows = (k->space.d[gm->m] + gm->mr - 1) / gm->mr;
  if (bytes > 0 && bytes <= t->l2 / 2 && panels < 2 * th && rows >= 2 * th) gm->rows_outer = true;
}

/* Decides whether kernel `k` takes the register-blocked form; if it does,
 * fills k->gemm and packs the weights it reads along (n, k). */
void sched_gemm_plan(sched_program *p, sched_kernel *k) {
  const ir_graph *g = p->g;
  memset(&k->gemm, 0, sizeof k->gemm);
  if (!k->nstages || k->nred < 1 || k->final_full || k->nouter < 1) return;
  for (int i = 0; i < k->nstages; i++) {
    const ir_node *s = ir_node_get(g, k->stages[i]);
    if (s->op != IR_ADD || (s->dtype != IR_F32 && s->dtype != IR_I32)) return;
  }
  /* n: the space axis of the output's innermost axis, stored with unit stride */
  const ir_node *root = ir_node_get(g, k->root);
  int n = -1;
  for (int i = root->shape.rank - 1; i >= 0 && n < 0; i--)
    if (root->shape.d[i] != 1) n = k->root_axis[i];
  if (n < 0 || !is_outer(k, n)) return;
  gemm_walk w = {.p = p, .k = k, .budget = 4096, .ok = true};
  int ids[IR_MAX_RANK];
  for (int j = 0; j < IR_MAX_RANK; j++) ids[j] = j;
  for (int i = 0; i < k->nstages && w.ok; i++) walk(&w, ir_node_get(g, k->stages[i])->src[0], ids);
  if (!w.ok) return;
  int kk = k->red[0];
  bool pack[GEMM_MAX_READS] = {false}, uses_k = false;
  for (int i = 0; i < w.nreads; i++) {
    const gemm_read *r = &w.reads[i];
    for (int j = 0; j < k->nred; j++) uses_k |= r->coef[k->red[j]] != 0;
    if (!r->coef[n]) continue;
    pack[i] = packable(p, k, r, n, kk);
    if (!pack[i] && r->coef[n] != 1) return; /* columns neither packable nor contiguous */
  }
  if (!uses_k) return;
  /* m: the largest kept axis that no column read depends on */
  int m = -1;
  for (int i = 0; i < k->nouter; i++) {
    int a = k->outer[i];
    bool free_of = a != n;
    for (int j = 0; j < w.nreads && free_of; j++)
      free_of = !w.reads[j].coef[n] || !w.reads[j].coef[a];
    if (free_of && (m < 0 || sched_ref(p, k->space.d[a]) >= sched_ref(p, k->space.d[m]))) m = a;
  }
  int npack = 0;
  for (int i = 0; i < w.nreads; i++) npack += pack[i];
  if (npack > SCHED_MAX_PACKED) return;
  sched_gemm *gm = &k->gemm;
  gm->on = true, gm->m = m, gm->n = n, gm->k = kk;
  /* row blocks outside when the rows are a weight larger than what the
   * columns read: the larger operand is then streamed once and the smaller
   * one reused from cache (a deep 3x3 layer: 9.4 MB of weights against 0.2
   * MB of input; the 7x7 stem's im2col columns, 7.4 MB, stay inside) —
   * from L2, so only when the columns take at most 4/5 of it (the rest
   * holds the block's rows and outputs); else each column panel stays in
   * L2 while the row blocks pass. ResNet-18's 3x3/2, 128 -> 256 at 14x14
   * (0.9 MB of im2col columns, 1.2 MB of weights) on Zen 5's 1 MiB L2:
   * 0.91 -> 0.56 ms; AVX2 code (the preset's 512 KiB: its 28x28 layers'
   * 0.48 MB inputs and the 7x7/2 layer's 0.45 MB columns too): the model
   * 52.9 -> 50.7 ms; with half of L2, DBNet's 0.39 MB AVX2 kernel flipped
   * too and the model was 3 % slower (1 thread, CPU time, loaded). */
  int64_t row_elems = 0, col_elems = 0, col_bytes = m >= 0 && !npack ? column_bytes(p, &w, n, false) : 0;
  for (int i = 0; i < w.nreads && m >= 0 && !npack; i++) {
    const gemm_read *r = &w.reads[i];
    const sched_buf *b = &p->bufs[r->buf];
    if (r->coef[n] && !ir_dim_is_sym(b->numel))
      col_elems += b->numel;
    else if (r->coef[m] && b->kind == SCHED_BUF_WEIGHT && !ir_dim_is_sym(b->numel)) row_elems += b->numel;
  }
  gm->rows_outer = row_elems > col_elems && (p->opt.target.l2 <= 0 || col_bytes <= p->opt.target.l2 / 5 * 4);
  /* a convolution whose columns are its weight (output channels as the
   * columns, importer/op_conv.c): each column panel (K x nr of the weight)
   * outside the output rows too, so that it comes from memory once and
   * stays in L2 for every row, not once per output row (128 -> 256 at
   * stride (2, 1), 1.2 MB of weights over 1 MiB of L2) */
  int64_t conv_bytes = 0;
  for (int i = 0; i < w.nreads && m >= 0 && k->nred > 1 && !gm->rows_outer; i++) {
    const sched_buf *b = &p->bufs[w.reads[i].buf];
    if (!w.reads[i].coef[n] || b->kind != SCHED_BUF_WEIGHT) continue;
    gm->cols_conv = true;
    int64_t bytes = ir_dim_is_sym(b->numel) ? INT64_MAX / 2 : b->numel * (int64_t)ir_dtype_size(b->dtype);
    conv_bytes = conv_bytes > INT64_MAX / 2 - bytes ? INT64_MAX / 2 : conv_bytes + bytes;
  }
  /* a weight that fits in a quarter of L2 beside the rows' input stays there
   * with the output rows outside: the outer loop, which the thread pool
   * splits, is then the output rows (CRNN's 32 -> 64 at 12 x 80: 2 column
   * panels of 32 channels had been its only chunks), and each core reads
   * the rows the kernel before wrote on it */
  gm->cols_outer = gm->cols_conv && (p->opt.target.l2 <= 0 || conv_bytes > p->opt.target.l2 / 4);
  bool narrow = false;
  for (int i = 0; i < w.nreads; i++)
    narrow |= w.reads[i].coef[n] && w.reads[i].coef[kk] && ir_dtype_size(p->bufs[w.reads[i].buf].dtype) == 1;
  int ncols = 0;
  for (int i = 0; i < w.nreads; i++) ncols += w.reads[i].coef[n] && w.reads[i].coef[kk];
  block_size(gm, &p->opt.target, m >= 0 ? sched_ref(p, k->space.d[m]) : 1, sched_ref(p, k->space.d[n]), k->nstages,
             narrow, k->nred > 1, ncols, sched_ref(p, k->space.d[kk]), weights_cached(p));
  rows_for_threads(p, k, &w, pack);
  k->ngathers = 0; /* indices in the epilogue are computed where they are read */
  for (int i = 0; i < w.nreads; i++) {
    if (!pack[i] || sched_gemm_packed_buf(k, w.reads[i].view) >= 0) continue;
    gm->packed_view[gm->npacked] = w.reads[i].view;
    gm->packed_buf[gm->npacked++] = pack_weight(p, k, &w.reads[i]);
  }
  for (int i = 0; i < w.nreads && m < 0; i++) stream_read(p, k, &w.reads[i], pack[i]);
  if (!p->opt.no_kslice && k->nred == 1)
    k_slices(gm, &p->opt.target, m >= 0 ? k->space.d[m] : 1, k->space.d[kk], k->nstages);
  else if (!p->opt.no_kslice && gm->cols_outer && m >= 0)
    conv_slices(p, k, &w), rows_slices(p, k, &w);
  if (gm->prefetch && gm->npacked && !ir_dim_is_sym(k->space.d[kk]))
    gm->pf_lines = spread_lines(p, gm, sched_ref(p, k->space.d[m]), k->space.d[kk]);
  /* each buffer the columns read counted once (a taps form reads one
   * nine times): MobileNetV3-small's stem, 0.6 MB of stride phases, had
   * been chunked for 5.5 MB and ran 1-2 % slower */
  chunk_columns(p, k, m >= 0 && !npack ? column_bytes(p, &w, n, true) : 0);
  gm->parts = acc_parts(gm, &p->opt.target, k->nstages);
}
