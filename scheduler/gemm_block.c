/* gemm_block.c — the register block of the matmul form (gemm.c decides
 * which kernels take it): mr x nr from the target's vector registers and
 * the shape of the sum, and the partial accumulators of a single row. */
#include "sched_impl.h"

/* mr: rows of M, and 1 without a rows axis (a single row). A sum over
 * several axes (a convolution's c, kh, kw over a window of its input) loads
 * its columns unaligned, split across cache lines: up to 12 rows share each
 * load (AVX-512, 24 zmm accumulators; 3x3 layers of ResNet-18's shapes +3-6
 * %, 1 thread, CPU time, loaded machine); a plain matmul keeps 8 (a 1x1
 * convolution, K = 64: 12 rows 16 % slower) */
static int64_t block_rows(const sched_gemm *gm, const sched_target *t, int64_t M, int nstages, int nv,
                          int64_t cap) {
  int64_t rows = (int64_t)t->vector_regs * 3 / 4 / (nstages * nv);
  return gm->m < 0 ? 1 : sched_min64(M, sched_min64(rows < 1 ? 1 : rows, cap));
}

/* Whether all the model's weights (as read, before packing) fit in half of
 * the target's L3: then they stay in cache from one call to the next. */
bool sched_gemm_weights_cached(const sched_program *p) {
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

/* Rows whose last block has at most a quarter of the FMA chains the
 * target keeps busy (latency x pipes; the block's rows x stages x vectors):
 * that block runs on its chains' latency, one row of one sum 4 cycles a
 * step on 2 chains against the full block's 8 or 12, as long as a block of
 * 4 rows. Then the most rows, down to half the block, that divide M, where
 * there are such. ResNet-18's 3x3/2 to 7x7 over an im2col copy, 49 rows as
 * 7 x 7 instead of 4 x 12 + 1: 1.38-1.47 -> 1.29-1.34 M TSC cycles (Zen 5,
 * 1 thread, docs/DESIGN.md). A last block with more chains stays: its
 * 3x3/2 to 14x14 (16 x 12 + 4, as 28 x 7 no faster), CRNN's 80-wide bands
 * (6 x 12 + 8; as 8 x 10 1.8 % slower), SwiGLU's two sums over 128 rows
 * (21 x 6 + 2), AVX2's 6 x 16 blocks over 128 rows (21 x 6 + 2). */
static int64_t whole_blocks(const sched_target *t, int64_t M, int64_t mr, int nstages, int nv) {
  if (mr < 2 || M % mr == 0 || 4 * (M % mr) * nstages * nv > sched_target_chains(t)) return mr;
  for (int64_t r = mr - 1; 2 * r >= mr; r--)
    if (M % r == 0) return r;
  return mr;
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
void sched_gemm_block_size(sched_gemm *gm, const sched_target *t, int64_t M, int64_t N, int nstages,
                           bool narrow, bool windowed, int ncols, int64_t K, bool cached, bool m_static) {
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
    nv = (int)sched_min64(t->vector_regs / 4, (N + lanes - 1) / lanes);
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
  if (m_static && !row) gm->mr = (int)whole_blocks(t, M, gm->mr, nstages, nv);
  /* a whole row takes all the registers but its columns and the
   * broadcast: 5 x 80 on AVX-512 (25 accumulators) ran 4 % faster than
   * 4 x 80 (3x3, 64 -> 128 and 128 -> 256 at stride (2, 1), 80-wide rows,
   * 1 thread, CPU time, loaded machine); 6 x 80 spilled (19 % slower) */
  if (row) gm->mr = (int)sched_min64(gm->m < 0 ? 1 : M, ((int64_t)t->vector_regs - 1 - nv) / nv);
  /* an empty product (M = 0 rows: a fuzzed TfIdfVectorizer over an input
   * of 0 rows divided by mr) still gets a block of one row; its loops run
   * no iteration */
  if (gm->mr < 1) gm->mr = 1;
  /* a weight larger than the caches comes from DRAM panel by panel; the
   * first row block of a panel waits for it unless it was fetched during
   * the previous panel. Base S = 128, 1 thread, Sapphire Rapids core:
   * AVX2 -5 %. On AVX-512 the first form (block 0 fetching a line per k
   * step) was 4 % slower there; the fetch spread over the row blocks
   * (sched_gemm_spread_lines) is 4 % faster on a Zen 5 core (147 against 154 ms,
   * 8 x 32, CPU time, loaded machine), so every width fetches */
  gm->prefetch = gm->m >= 0;
  /* one row (decode) streams one-byte weights at a few cycles per line:
   * the hardware prefetcher does not run far enough ahead to overlap that
   * with memory (one row times 66 int8 2048 x 5632 weights, Sapphire
   * Rapids core, loaded machine: 7.7 GB/s, 12.4 with lines fetched 8 KiB
   * ahead, 13.3 a plain read; AVX2: 3.2 against 9.9) */
  gm->ahead = narrow && gm->m < 0 ? SCHED_FETCH_AHEAD : 0;
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
 * 66.4 -> 58.8 (with the 8 KiB fetch, sched_gemm_stream_read). */
int sched_gemm_acc_parts(const sched_gemm *gm, const sched_target *t, int nstages) {
  int lanes = sched_target_lanes(t);
  int vecs = nstages * gm->mr * ((gm->nr + lanes - 1) / lanes);
  if (gm->m >= 0 || gm->kc || vecs <= 0) return 1; /* rows: chains enough, or not measured */
  int n = (sched_target_chains(t) + vecs - 1) / vecs, fit = t->vector_regs / 4 / vecs;
  n = n < fit ? n : fit;
  return n > 4 ? 4 : n < 1 ? 1 : n;
}
