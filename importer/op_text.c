/* op_text.c — text features: TfIdfVectorizer on integer tokens (string
 * tensors are not supported).
 *
 * The n-gram pool is a compile-time constant, so each n-gram length n and
 * skip distance d is one comparison of the token windows x[:, i + t*d]
 * (t < n) against the pool's n-grams of that length, all at once: an
 * [N, G_n, L] AND of equalities summed over the positions L. The counts
 * reach their output columns through a constant 0/1 matrix (a MatMul:
 * exact for counts below 2^24). Which n-grams count follows onnxruntime's
 * kernel: lengths min_gram_length..max_gram_length, every skip distance
 * 1..max_skip_count+1 for n >= 2, unigrams once; so do the weights. */
#include "importer_impl.h"

#include <stdlib.h>
#include <string.h>

/* The pool attribute as a malloc'd array of `*len` values (NULL + error). */
static int64_t *ints_attr(imp_node *n, const char *name, int *len, int cap) {
  int k = imp_attr_len(n, name);
  if (k < 0 || k > cap) return imp_fail(n, "attribute '%s' must have 0..%d values", name, cap), NULL;
  int64_t *v = malloc((size_t)k * sizeof *v + 1);
  if (!v) abort();
  if (k && imp_attr_ints(n, name, v, k) != k) return free(v), NULL;
  *len = k;
  return v;
}

/* Occurrences of the G n-grams `pool` [G * len] in the rows of x [N, C]
 * at skip distance d: [N, G] (int64), or IR_NONE with *none when no
 * n-gram of that span fits a row. */
static ir_ref count_ngrams(imp_node *n, ir_ref x, const int64_t *pool, int G, int len, int64_t d, bool *none) {
  ir_graph *g = n->g;
  ir_shape xs = imp_nshape(n, x);
  int64_t N = xs.d[0], C = xs.d[1], L = C - (int64_t)(len - 1) * d;
  *none = L <= 0;
  if (*none) return IR_NONE;
  int64_t *col = malloc((size_t)G * sizeof *col + 1);
  if (!col) abort();
  ir_ref match = IR_NONE;
  for (int t = 0; t < len; t++) {
    for (int j = 0; j < G; j++) col[j] = pool[(size_t)j * (size_t)len + (size_t)t];
    ir_ref p = ir_const(g, "tfidf_pool", IR_I64, (ir_shape){.rank = 3, .d = {1, G, 1}}, col);
    ir_ref w = ir_view_reshape(g, imp_take(g, x, 1, t * d, L), (ir_shape){.rank = 3, .d = {N, 1, L}});
    ir_ref e = ir_eq(g, w, p);
    match = t ? ir_binary(g, IR_AND, match, e) : e;
  }
  free(col);
  return ir_sum(g, ir_cast(g, match, IR_I64), 1u << 2, false);
}

/* The counts [N, O] (float32) of the n-grams of the counted lengths, each
 * in its ngram_indexes column. */
static ir_ref columns(imp_node *n, ir_ref x, const int64_t *counts, int ncounts, const int64_t *pool, int npool,
                      const int64_t *idx, int64_t lo, int64_t hi, int64_t skip, int64_t O) {
  ir_graph *g = n->g;
  int64_t N = imp_nshape(n, x).d[0], pos = 0, gc = 0;
  int64_t *rows = malloc((size_t)npool * sizeof *rows + 1); /* output column of each counted n-gram */
  if (!rows) abort();
  ir_ref parts[64];
  int np = 0;
  for (int k = 0; k < ncounts; k++) {
    int len = k + 1;
    int64_t b = counts[k], G = ((k + 1 < ncounts ? counts[k + 1] : npool) - b) / len;
    if (G == 0 || len < lo || len > hi) {
      pos += G;
      continue;
    }
    ir_ref acc = IR_NONE;
    bool none = false;
    for (int64_t s = 0; s <= (len == 1 ? 0 : skip) && !none; s++) {
      ir_ref c = count_ngrams(n, x, pool + b, (int)G, len, s + 1, &none);
      if (!none) acc = acc == IR_NONE ? c : imp_add(g, acc, c);
    }
    parts[np++] = acc != IR_NONE ? acc : ir_load_int(g, IR_I64, (ir_shape){.rank = 2, .d = {N, G}}, 0);
    for (int64_t j = 0; j < G; j++) rows[gc++] = idx[pos + j];
    pos += G;
  }
  ir_ref y = IR_NONE;
  if (!np) y = ir_load(g, IR_F32, (ir_shape){.rank = 2, .d = {N, O}}, 0);
  else if ((uint64_t)gc * (uint64_t)O * sizeof(float) > imp_mem_limit())
    imp_fail(n, "the %lld x %lld column map is larger than the memory limit", (long long)gc, (long long)O);
  else {
    float *m = calloc((size_t)(gc * O), sizeof *m);
    if (!m) abort();
    for (int64_t r = 0; r < gc; r++) m[r * O + rows[r]] = 1;
    ir_ref cnt = np == 1 ? parts[0] : imp_concat(n, parts, np, 1);
    y = ir_matmul(g, ir_cast(g, cnt, IR_F32), ir_const_take(g, "tfidf_columns", IR_F32, (ir_shape){.rank = 2, .d = {gc, O}}, m));
  }
  free(rows);
  return y;
}

/* IDF: the weight where the n-gram occurs; TFIDF: count x weight. The
 * weights are in pool order (as onnxruntime reads them), so the weight of
 * n-gram j goes to column ngram_indexes[j]; none given: all 1. */
static ir_ref weigh(imp_node *n, ir_ref y, bool idf, const int64_t *idx, int nidx, int64_t O) {
  ir_graph *g = n->g;
  int nw = imp_attr_len(n, "weights");
  ir_ref w = ir_scalar(g, IR_F32, 1);
  if (nw > 0 && nw != nidx) return imp_fail(n, "weights has %d values for %d n-grams", nw, nidx), IR_NONE;
  if (nw > 0) {
    double *wd = malloc((size_t)nw * sizeof *wd);
    float *wf = calloc((size_t)O, sizeof *wf);
    if (!wd || !wf) abort();
    if (imp_attr_floats(n, "weights", wd, nw) != nw) return free(wd), free(wf), IR_NONE;
    for (int j = 0; j < nw; j++) wf[idx[j]] = (float)wd[j];
    free(wd);
    w = ir_const_take(g, "tfidf_weights", IR_F32, (ir_shape){.rank = 2, .d = {1, O}}, wf);
  }
  return imp_mul(g, idf ? ir_cast(g, ir_gt(g, y, ir_scalar(g, IR_F32, 0)), IR_F32) : y, w);
}

static int lower_tfidf(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_dtype xt = imp_dtype(n, x);
  if (xt != IR_I32 && xt != IR_I64) return imp_fail(n, "input type %s is not supported (int32/int64 tokens only)", ir_dtype_name(xt));
  if (imp_has_attr(n, "pool_strings")) return imp_fail(n, "a string pool is not supported");
  ir_shape xs = imp_nshape(n, x);
  if (xs.rank != 1 && xs.rank != 2) return imp_fail(n, "input must be 1-D or 2-D");
  int64_t N = xs.rank == 2 ? xs.d[0] : 1, C = xs.d[xs.rank - 1];
  x = ir_view_reshape(g, ir_cast(g, x, IR_I64), (ir_shape){.rank = 2, .d = {N, C}});
  int64_t lo = imp_attr_i(n, "min_gram_length", 1), hi = imp_attr_i(n, "max_gram_length", 1);
  int64_t skip = imp_attr_i(n, "max_skip_count", 0);
  const char *mode = imp_attr_s(n, "mode", "TF");
  int md = !strcmp(mode, "TF") ? 0 : !strcmp(mode, "IDF") ? 1 : !strcmp(mode, "TFIDF") ? 2 : -1;
  if (md < 0) return imp_fail(n, "mode '%s' is not supported", mode);
  if (lo < 1 || hi < lo || hi > 64 || skip < 0 || skip > 1024)
    return imp_fail(n, "gram lengths must be 1 <= min <= max <= 64 and max_skip_count in 0..1024");
  int ncounts = 0, npool = 0, nidx = 0, rc = 0;
  const int cap = 1 << 22;
  int64_t *counts = ints_attr(n, "ngram_counts", &ncounts, 64), *pool = NULL, *idx = NULL;
  if (counts) pool = ints_attr(n, "pool_int64s", &npool, cap);
  if (pool) idx = ints_attr(n, "ngram_indexes", &nidx, cap);
  if (!counts || !pool || !idx) return free(counts), free(pool), -1;
  /* group k (n-grams of length k+1) is pool[counts[k] .. counts[k+1]) */
  int64_t O = 0, total = 0, work = 0;
  for (int k = 0; k < ncounts && !rc; k++) {
    int64_t b = counts[k], e = k + 1 < ncounts ? counts[k + 1] : npool;
    if (b < 0 || e < b || e > npool || (e - b) % (k + 1))
      rc = imp_fail(n, "ngram_counts do not split the pool into whole n-grams");
    total += (e - b) / (k + 1);
    /* one window comparison per token of each counted length and skip:
     * bounded, so a model cannot ask for millions of kernels */
    if (e > b && k + 1 >= lo && k + 1 <= hi) work += (k + 1) * (k ? skip + 1 : 1);
  }
  if (!rc && work > 4096)
    rc = imp_fail(n, "%lld window comparisons (n-gram lengths x skip distances) are more than 4096", (long long)work);
  if (!rc && total != nidx) rc = imp_fail(n, "ngram_indexes has %d values for %lld n-grams", nidx, (long long)total);
  for (int j = 0; j < nidx && !rc; j++) {
    if (idx[j] < 0 || idx[j] >= cap) rc = imp_fail(n, "ngram_indexes value %lld is out of range", (long long)idx[j]);
    else if (idx[j] + 1 > O) O = idx[j] + 1;
  }
  ir_ref y = rc ? IR_NONE : columns(n, x, counts, ncounts, pool, npool, idx, lo, hi, skip, O);
  if (y != IR_NONE && md) y = weigh(n, y, md == 1, idx, nidx, O);
  free(counts), free(pool), free(idx);
  if (y == IR_NONE) return -1;
  return imp_set_out(n, 0, xs.rank == 1 ? ir_view_reshape(g, y, ir_shape_make(1, &O)) : y);
}

const imp_op_entry imp_ops_text[] = {
    {"TfIdfVectorizer", lower_tfidf, 0},
    {NULL, NULL, 0},
};
