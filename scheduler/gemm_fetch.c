/* gemm_fetch.c — what the matmul form fetches ahead and how it slices k
 * (gemm.c decides which kernels take the form): the packed panels' k
 * slices and the next panel's lines spread over the row blocks, a single
 * row's weight streams, and a convolution's weight and input read in
 * slices of k with the next slice fetched (codegen: cg_prefetch_streams). */
#include "sched_impl.h"

#include <string.h>

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
void sched_gemm_k_slices(sched_gemm *gm, const sched_target *t, int64_t M, int64_t K, int nstages) {
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

/* The next panel's fetch, spread over the row blocks: each piece of
 * SCHED_KPIECE k steps of a full row block fetches the same number of its
 * lines, enough that the blocks of a slice (of a panel when k is not
 * sliced) fetch that slice of every packed weight. One line per k step in
 * the first block only (a fetch per 6 cycles, faster than one core's
 * DRAM: the block waited) left the kernels at 107-115 GFLOP/s with their
 * weights from memory and 127 in cache; one line per 16 k steps in every
 * block: 115-123 (768 x 768, 128 rows, AVX2 on the Sapphire Rapids core,
 * CPU time, loaded machine). */
int sched_gemm_spread_lines(const sched_program *p, const sched_gemm *gm, int64_t M, int64_t K) {
  int64_t kc = gm->kc ? gm->kc : K, blocks = M / gm->mr, lines = 0;
  int64_t pieces = blocks * ((kc + SCHED_KPIECE - 1) / SCHED_KPIECE);
  for (int i = 0; i < gm->npacked; i++) {
    int64_t es = (int64_t)ir_dtype_size(p->bufs[gm->packed_buf[i]].dtype);
    lines = lines > (kc * gm->nr * es + 63) / 64 ? lines : (kc * gm->nr * es + 63) / 64;
  }
  if (pieces < 1 || lines < 1) return 0;
  return (int)((lines + pieces - 1) / pieces);
}

/* A single row (decode) reads each weight once, so its speed is how fast
 * memory delivers it; a weight read as it lies (not packed), a short
 * contiguous run per step of the outer reduced axis k (MatMulNBits: a
 * 64-byte row of 16 columns' codes), is recorded to be fetched
 * SCHED_FETCH_AHEAD bytes ahead in memory (codegen: cg_prefetch_streams).
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
void sched_gemm_stream_read(sched_program *p, sched_kernel *k, const sched_gemm_read *r,
                            bool packed) {
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
   * memory: the page ahead is opened 4 x SCHED_FETCH_AHEAD ahead (one thread:
   * slower) */
  int64_t ahead = (page && p->opt.threads > 1 ? 4 : 1) * SCHED_FETCH_AHEAD / (step * es);
  gm->stream_ahead[i] = ahead < 1 ? 1 : (int)ahead;
  gm->stream_every[i] = page > step * es ? (int)(page / (step * es)) : 1; /* page 0: 1 */
}

/* Slices of k for a convolution whose columns are its weight laid out by
 * the importer as contiguous panels [M / nr, C, kh, kw, nr] (conv_cols.c:
 * imp_conv_wide_cols), read as it lies: k is the channels, each step a run of
 * kh x kw x nr. When the model's weights do not stay in cache (larger than
 * half of L3) and two panels do not fit in half of L2, a panel comes from
 * memory while its row blocks use it, and fetching the whole next panel
 * would push the current one out; so the panel is cut into slices of
 * about 3/4 of L1 (as sched_gemm_k_slices), every slice passes all the row blocks,
 * and each block fetches its share of the next slice, a few lines per k
 * step (codegen: cg_prefetch_streams). Not with the weights' cache size:
 * the L3 a VM reports may be the socket's (Zen 5 EPYC here: 508 MiB) and
 * ResNet-18's 47 MB did not stay in it between runs. ResNet-18's three 3x3,
 * 512 -> 512 layers at 7x7 (Zen 5, EPYC family 26 model 2, 1 thread,
 * per-kernel rdtsc minima of 5 interleaved rounds, load 7-9): 8.90 M TSC
 * cycles unsliced (main's wide form), 7.77 in 32-channel slices (48 KiB
 * L1), 7.85 in 64, 7.76 in 128; unsliced this form took 10.6. */
void sched_gemm_conv_slices(sched_program *p, sched_kernel *k, const sched_gemm_walk *w) {
  sched_gemm *gm = &k->gemm;
  const sched_target *t = &p->opt.target;
  int64_t K = k->space.d[gm->k], M = k->space.d[gm->m];
  if (gm->npacked || k->nred < 2 || ir_dim_is_sym(K) || ir_dim_is_sym(M) || t->l1d <= 0 ||
      t->l2 <= 0 || gm->nstream)
    return;
  int64_t mtiles = (M + gm->mr - 1) / gm->mr;
  for (int i = 0; i < w->nreads; i++) {
    const sched_gemm_read *r = &w->reads[i];
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
void sched_gemm_rows_slices(const sched_program *p, sched_kernel *k, const sched_gemm_walk *w) {
  sched_gemm *gm = &k->gemm;
  int64_t K = k->space.d[gm->k];
  if (p->opt.threads < 2 || !gm->stream_spread || !gm->kc || gm->m < 0 || ir_dim_is_sym(K)) return;
  for (int i = 0; i < w->nreads; i++) {
    const sched_gemm_read *r = &w->reads[i];
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
