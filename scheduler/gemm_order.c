/* gemm_order.c — the loop order of the matmul form (gemm.c decides which
 * kernels take it): row blocks or column panels outermost, for the
 * caches and for the thread pool, and columns larger than L2 in chunks. */
#include "sched_impl.h"

/* Which loops go outside (k->gemm's m, n and k set; `npack` weights
 * packed): the row blocks (rows_outer), or, for a convolution whose columns
 * are its weight, the column panels (cols_conv, cols_outer). */
void sched_gemm_outer_order(const sched_program *p, sched_kernel *k, const sched_gemm_walk *w,
                            int npack) {
  sched_gemm *gm = &k->gemm;
  int m = gm->m, n = gm->n;
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
  int64_t row_elems = 0, col_elems = 0,
          col_bytes = m >= 0 && !npack ? sched_gemm_column_bytes(p, w, n, false) : 0;
  for (int i = 0; i < w->nreads && m >= 0 && !npack; i++) {
    const sched_gemm_read *r = &w->reads[i];
    const sched_buf *b = &p->bufs[r->buf];
    if (r->coef[n] && !ir_dim_is_sym(b->numel))
      col_elems += b->numel;
    else if (r->coef[m] && b->kind == SCHED_BUF_WEIGHT && !ir_dim_is_sym(b->numel)) row_elems += b->numel;
  }
  gm->rows_outer = row_elems > col_elems && (p->opt.target.l2 <= 0 || col_bytes <= p->opt.target.l2 / 5 * 4);
  /* a convolution whose columns are its weight (output channels as the
   * columns, importer/conv_cols.c): each column panel (K x nr of the weight)
   * outside the output rows too, so that it comes from memory once and
   * stays in L2 for every row, not once per output row (128 -> 256 at
   * stride (2, 1), 1.2 MB of weights over 1 MiB of L2) */
  int64_t conv_bytes = 0;
  for (int i = 0; i < w->nreads && m >= 0 && k->nred > 1 && !gm->rows_outer; i++) {
    const sched_buf *b = &p->bufs[w->reads[i].buf];
    if (!w->reads[i].coef[n] || b->kind != SCHED_BUF_WEIGHT) continue;
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
void sched_gemm_chunk_columns(const sched_program *p, sched_kernel *k, int64_t col_bytes) {
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
int64_t sched_gemm_column_bytes(const sched_program *p, const sched_gemm_walk *w, int n,
                                bool once) {
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
void sched_gemm_rows_for_threads(const sched_program *p, sched_kernel *k, const sched_gemm_walk *w,
                                 const bool *pack) {
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
