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
 * (that reuse is what register blocking buys). The block's size is chosen
 * in gemm_block.c, the fetches and k slices in gemm_fetch.c, the loop
 * order in gemm_order.c; the loop nest itself is built in tile.c. */
#include "sched_impl.h"

#include <string.h>

static void add_read(sched_gemm_walk *w, int buf, ir_ref view, bool whole, const int64_t *stride,
                     const ir_shape *s, int64_t offset, bool masked, const int *ids) {
  if (w->nreads == SCHED_GEMM_MAX_READS) {
    w->ok = false;
    return;
  }
  sched_gemm_read *r = &w->reads[w->nreads++];
  memset(r, 0, sizeof *r);
  r->buf = buf, r->view = view, r->whole = whole, r->offset = offset, r->masked = masked;
  for (int j = 0; j < s->rank; j++)
    if (s->d[j] != 1 && ids[j] >= 0) r->coef[ids[j]] = ir_dim_add(r->coef[ids[j]], stride[j]);
}

/* The buffer reads of inline value `x`; ids[j] is the space axis indexing
 * axis j of `x` (-1: always 0). */
static void walk(sched_gemm_walk *w, ir_ref x, const int *ids) {
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
static bool packable(const sched_program *p, const sched_kernel *k, const sched_gemm_read *r, int n,
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

/* A buffer for the weight read `r` as panels [ceil(N/nr)][K][nr] (columns
 * past N are zero), made when written (sched_gemm_panel). */
static int pack_weight(sched_program *p, const sched_kernel *k, const sched_gemm_read *r) {
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
  int64_t K = pk->K, nr = pk->nr, width = sched_min64(nr, pk->N - pn * nr), cn = pk->cn,
          ck = pk->ck;
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

int sched_gemm_packed_buf(const sched_kernel *k, ir_ref r) {
  for (int i = 0; i < k->gemm.npacked; i++)
    if (k->gemm.packed_view[i] == r) return k->gemm.packed_buf[i];
  return -1;
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
  sched_gemm_walk w = {.p = p, .k = k, .budget = 4096, .ok = true};
  int ids[IR_MAX_RANK];
  for (int j = 0; j < IR_MAX_RANK; j++) ids[j] = j;
  for (int i = 0; i < k->nstages && w.ok; i++) walk(&w, ir_node_get(g, k->stages[i])->src[0], ids);
  if (!w.ok) return;
  int kk = k->red[0];
  bool pack[SCHED_GEMM_MAX_READS] = {false}, uses_k = false;
  for (int i = 0; i < w.nreads; i++) {
    const sched_gemm_read *r = &w.reads[i];
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
  sched_gemm_outer_order(p, k, &w, npack);
  bool narrow = false;
  for (int i = 0; i < w.nreads; i++)
    narrow |= w.reads[i].coef[n] && w.reads[i].coef[kk] && ir_dtype_size(p->bufs[w.reads[i].buf].dtype) == 1;
  int ncols = 0;
  for (int i = 0; i < w.nreads; i++) ncols += w.reads[i].coef[n] && w.reads[i].coef[kk];
  sched_gemm_block_size(gm, &p->opt.target, m >= 0 ? sched_ref(p, k->space.d[m]) : 1,
                        sched_ref(p, k->space.d[n]), k->nstages, narrow, k->nred > 1, ncols,
                        sched_ref(p, k->space.d[kk]), sched_gemm_weights_cached(p),
                        m >= 0 && !ir_dim_is_sym(k->space.d[m]));
  sched_gemm_rows_for_threads(p, k, &w, pack);
  k->ngathers = 0; /* indices in the epilogue are computed where they are read */
  for (int i = 0; i < w.nreads; i++) {
    if (!pack[i] || sched_gemm_packed_buf(k, w.reads[i].view) >= 0) continue;
    gm->packed_view[gm->npacked] = w.reads[i].view;
    gm->packed_buf[gm->npacked++] = pack_weight(p, k, &w.reads[i]);
  }
  for (int i = 0; i < w.nreads && m < 0; i++) sched_gemm_stream_read(p, k, &w.reads[i], pack[i]);
  if (!p->opt.no_kslice && k->nred == 1)
    sched_gemm_k_slices(gm, &p->opt.target, m >= 0 ? k->space.d[m] : 1, k->space.d[kk], k->nstages);
  else if (!p->opt.no_kslice && gm->cols_outer && m >= 0)
    sched_gemm_conv_slices(p, k, &w), sched_gemm_rows_slices(p, k, &w);
  if (gm->prefetch && gm->npacked && !ir_dim_is_sym(k->space.d[kk]))
    gm->pf_lines = sched_gemm_spread_lines(p, gm, sched_ref(p, k->space.d[m]), k->space.d[kk]);
  /* each buffer the columns read counted once (a taps form reads one
   * nine times): MobileNetV3-small's stem, 0.6 MB of stride phases, had
   * been chunked for 5.5 MB and ran 1-2 % slower */
  sched_gemm_chunk_columns(p, k, m >= 0 && !npack ? sched_gemm_column_bytes(p, &w, n, true) : 0);
  gm->parts = sched_gemm_acc_parts(gm, &p->opt.target, k->nstages);
}
