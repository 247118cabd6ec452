/* op_select.c — ops whose output shape depends on the values: NonZero,
 * Compress, Unique, NonMaxSuppression. Each output is computed at a static
 * bound (every element selected) with a run-time length (imp_set_out_len):
 * the number of valid entries along one axis, a scalar the generated entry
 * also writes (ir_mark_output_len). The selections are primitives only:
 * an exclusive prefix count of the kept elements gives each its output
 * position, and each position reads its source by a one-hot over the
 * sources (which the gather rewrite turns into an indexed read). Also the
 * rule that passes a length through the ops that can take one
 * (imp_dyn_pass), and Slice with bounds known only at run time. */
#include "importer_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ir_shape sh(int rank, const int64_t *d) {
  ir_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.d[i] = d[i];
  return s;
}
#define SH(...) sh((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

static ir_ref i64(ir_graph *g, int64_t v) {
  return ir_load_int(g, IR_I64, (ir_shape){0}, v); /* v may be a symbolic size */
}

static ir_ref count_of(ir_graph *g, ir_ref keep) {
  return ir_sum(g, ir_cast(g, keep, IR_I64), 1u, false);
}

/* pos[i] = #{j < i : keep[j]} for keep [L] bool: each kept element's
 * place in the output, in order. */
static ir_ref prefix_count(ir_graph *g, ir_ref keep, int64_t L) {
  ir_ref before = ir_binary(g, IR_LT, ir_iota(g, SH(1, L), 1), ir_iota(g, SH(L, 1), 0));
  ir_ref t = ir_binary(g, IR_AND, before, ir_view_reshape(g, keep, SH(1, L)));
  return ir_sum(g, ir_cast(g, t, IR_I64), 2u, false);
}

/* src[p] = the i with sel[i] and key[i] == p, 0 where there is none (the
 * padding: a valid index), for p < K; sel [L] bool, key [L] int64. */
static ir_ref source_of(ir_graph *g, ir_ref sel, ir_ref key, int64_t L, int64_t K) {
  ir_ref hit = ir_binary(g, IR_AND, ir_eq(g, ir_iota(g, SH(K, 1), 0), ir_view_reshape(g, key, SH(1, L))),
                         ir_view_reshape(g, sel, SH(1, L)));
  return ir_sum(g, ir_where(g, hit, ir_iota(g, SH(1, L), 1), i64(g, 0)), 2u, false);
}

/* Rows src[p] of x3 [P, L, Q]: [P, K, Q] (a one-hot sum, rewritten to an
 * indexed read). Bools go through uint8. */
static ir_ref pick_rows(ir_graph *g, ir_ref x3, ir_ref src, int64_t P, int64_t L, int64_t Q, int64_t K) {
  bool b = ir_node_get(g, x3)->dtype == IR_BOOL;
  ir_ref x = b ? ir_cast(g, x3, IR_U8) : x3;
  ir_dtype t = ir_node_get(g, x)->dtype;
  ir_ref hit = ir_eq(g, ir_iota(g, SH(1, 1, L, 1), 2), ir_view_reshape(g, src, SH(1, K, 1, 1)));
  ir_ref r = ir_sum(g, ir_where(g, hit, ir_view_reshape(g, x, SH(P, 1, L, Q)), ir_scalar(g, t, 0)), 4u, false);
  return b ? ir_binary(g, IR_NEQ, r, ir_scalar(g, IR_U8, 0)) : r;
}

/* Every input of value-dependent length must be one the lowering reads
 * (bit i of `ok`); else run and verify freeze the inputs it comes from. */
static int refuse_lengths(imp_node *n, unsigned ok) {
  for (int i = 0; i < imp_nin(n); i++)
    if (!(ok >> i & 1) && imp_in_len(n, i, NULL) != IR_NONE)
      return imp_need_value(n, imp_in_len(n, i, NULL)), imp_fail(n, "input %d ('%s') has a length known only at run time: not supported here", i,
                      n->proto->input[i]);
  return 0;
}

/* The pairwise compares cost a * b elements (never all in memory, but
 * every size computed must fit int64): refused past 2^62. */
static int check_pairs(imp_node *n, int64_t a, int64_t b) {
  int64_t r;
  if (ir_dim_is_sym(a) || ir_dim_is_sym(b) ? !ir_dim_valid(ir_dim_mul(a, b)) : ir_mul_ov(a, b, &r) || r > INT64_C(1) << 62)
    return imp_fail(n, "the input is too large for the pairwise selection");
  return 0;
}

/* x as [P, D, Q] around `axis` (axis < 0: flattened to [1, N, 1]). */
static ir_ref as3(ir_graph *g, ir_ref x, int axis, int64_t *P, int64_t *D, int64_t *Q) {
  const ir_shape *s = &ir_node_get(g, x)->shape;
  *P = 1, *D = 1, *Q = 1;
  for (int k = 0; k < s->rank; k++) {
    int64_t *t = axis < 0 ? D : k < axis ? P : k == axis ? D : Q;
    *t = ir_dim_mul(*t, s->d[k]);
  }
  if (!ir_dim_valid(*P) || !ir_dim_valid(*D) || !ir_dim_valid(*Q)) return ir_fail(g, "the size overflows"), IR_NONE;
  return ir_view_reshape(g, x, SH(*P, *D, *Q));
}

/* x's shape with axis `axis` of size `d` (axis < 0: [d]). */
static ir_shape with_axis(const ir_shape *s, int axis, int64_t d) {
  if (axis < 0) return SH(d);
  ir_shape o = *s;
  o.d[axis] = d;
  return o;
}

/* ---------------------------------------------------------------- NonZero */

/* A constant input: its coordinates, [rank, count], counted here in one
 * pass (the pairwise form folds through N^2 compares: a constant mask of
 * 15,840 elements asked for 12.6 GB; differential fuzzer). */
static int nonzero_const(imp_node *n, ir_ref x, const ir_shape *s) {
  ir_graph *g = n->g;
  void *v;
  if (ir_eval(g, x, &v)) return imp_fail(n, "the constant input: %s", ir_error(g));
  ir_dtype t = imp_dtype(n, x);
  int64_t N = ir_shape_numel(s), cnt = 0, bytes;
  for (int64_t i = 0; i < N; i++) cnt += ir_elem_f(t, v, i) != 0; /* NaN is not zero */
  if (ir_mul_ov(cnt, (int64_t)s->rank * 8, &bytes) || (uint64_t)bytes > imp_mem_limit())
    return free(v), imp_fail(n, "%lld coordinates exceed the memory limit", (long long)cnt);
  int64_t *c = malloc(bytes ? (size_t)bytes : 1);
  if (!c) abort();
  for (int64_t i = 0, j = 0; i < N; i++) {
    if (ir_elem_f(t, v, i) == 0) continue;
    for (int64_t k = s->rank - 1, rem = i; k >= 0; k--)
      c[k * cnt + j] = rem % s->d[k], rem /= s->d[k];
    j++;
  }
  free(v);
  return imp_set_out(n, 0, ir_const_take(g, "nonzero", IR_I64, SH(s->rank, cnt), c));
}

static int lower_nonzero(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE || refuse_lengths(n, 0)) return -1;
  ir_shape s = *imp_shape(n, x);
  if (s.rank < 1) return imp_fail(n, "a scalar input is not supported");
  if (ir_is_const(g, x)) return nonzero_const(n, x, &s);
  int64_t P = 1, N = 1, Q = 1;
  ir_ref x3 = as3(g, x, -1, &P, &N, &Q), flat = ir_view_reshape(g, x3, SH(N));
  if (check_pairs(n, N, N)) return -1;
  ir_dtype t = imp_dtype(n, x);
  ir_ref nz = ir_binary(g, IR_NEQ, flat, ir_scalar(g, t, 0));
  ir_ref src = source_of(g, nz, prefix_count(g, nz, N), N, N);
  /* coordinates of the flat index src: (src / stride) % size per axis */
  ir_ref rows[IR_MAX_RANK];
  int64_t stride = 1;
  for (int k = s.rank - 1; k >= 0; k--) {
    ir_ref c = ir_binary(g, IR_MOD, ir_binary(g, IR_IDIV, src, i64(g, stride)), i64(g, s.d[k]));
    rows[k] = ir_view_reshape(g, c, SH(1, N));
    stride = ir_dim_mul(stride, s.d[k]);
  }
  if (ir_failed(g)) return -1;
  ir_ref y = imp_concat(n, rows, s.rank, 0);
  return imp_set_out_len(n, 0, y, 1, count_of(g, nz));
}

/* --------------------------------------------------------------- Compress */

static int lower_compress(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), cond = imp_req(n, 1);
  if (x == IR_NONE || cond == IR_NONE || refuse_lengths(n, 0)) return -1;
  ir_shape s = *imp_shape(n, x), cs = *imp_shape(n, cond);
  if (cs.rank != 1 || imp_dtype(n, cond) != IR_BOOL) return imp_fail(n, "the condition must be a 1-D bool tensor");
  int axis = -1;
  if (imp_has_attr(n, "axis") && (axis = imp_axis(n, imp_attr_i(n, "axis", 0), s.rank)) < 0) return -1;
  int64_t P = 1, D = 1, Q = 1, L = cs.d[0];
  ir_ref x3 = as3(g, x, axis, &P, &D, &Q);
  if (ir_dim_is_sym(L) || ir_dim_is_sym(D)) {
    if (L != D) return imp_fail_sym(n, ir_dim_is_sym(L) ? L : D, "the condition's length and the axis");
  } else if (L > D) {
    return imp_fail(n, "the condition (%lld) is longer than the axis (%lld)", (long long)L, (long long)D);
  } else if (L < D) { /* the slices past the condition are dropped */
    x3 = ir_view_slice(g, x3, (int64_t[]){0, 0, 0}, (int64_t[]){1, 1, 1}, (int64_t[]){P, L, Q});
  }
  if (check_pairs(n, L, ir_dim_mul(ir_dim_mul(P, Q), L))) return -1;
  ir_ref src = source_of(g, cond, prefix_count(g, cond, L), L, L);
  ir_ref y = ir_view_reshape(g, pick_rows(g, x3, src, P, L, Q, L), with_axis(&s, axis, L));
  return imp_set_out_len(n, 0, y, axis < 0 ? 0 : axis, count_of(g, cond));
}

/* ----------------------------------------------------------------- Unique */

/* Rows i, j of x3 [P, D, Q] (slices along the axis, or elements) compared:
 * equal rows, and for `sorted` the lexicographic order (row j before row i
 * at their first differing element, in C order over (P, Q) as numpy and
 * onnxruntime order them). */
static int lower_unique(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE || refuse_lengths(n, 0)) return -1;
  ir_shape s = *imp_shape(n, x);
  int axis = -1;
  if (imp_has_attr(n, "axis") && (axis = imp_axis(n, imp_attr_i(n, "axis", 0), s.rank)) < 0) return -1;
  bool sorted = imp_attr_i(n, "sorted", 1) != 0;
  int64_t P = 1, D = 1, Q = 1;
  ir_ref x3 = as3(g, x, axis, &P, &D, &Q);
  if (check_pairs(n, D, ir_dim_mul(ir_dim_mul(P, Q), D))) return -1;
  ir_ref xi = ir_view_reshape(g, x3, SH(P, D, 1, Q)), xj = ir_view_reshape(g, x3, SH(P, 1, D, Q));
  ir_ref ne = ir_binary(g, IR_NEQ, xi, xj);
  ir_ref same = ir_eq(g, ir_sum(g, ir_cast(g, ne, IR_I64), 9u, false), i64(g, 0)); /* [D(i), D(j)] */
  ir_ref jlt = ir_binary(g, IR_LT, ir_iota(g, SH(1, D), 1), ir_iota(g, SH(D, 1), 0));
  ir_ref dups = ir_sum(g, ir_cast(g, ir_binary(g, IR_AND, same, jlt), IR_I64), 2u, false);
  ir_ref first = ir_eq(g, dups, i64(g, 0)); /* [D]: the first occurrence of its row */
  ir_ref firstj = ir_view_reshape(g, first, SH(1, D));
  ir_ref order; /* [D(i), D(j)]: the distinct row j comes before row i */
  if (sorted) {
    ir_ref kk = ir_binary(g, IR_ADD, ir_binary(g, IR_MUL, ir_iota(g, SH(P, 1, 1, 1), 0), i64(g, Q)),
                          ir_iota(g, SH(1, 1, 1, Q), 3));
    ir_ref big = i64(g, INT64_C(1) << 60);
    ir_ref kstar = ir_min_reduce(g, ir_where(g, ne, kk, big), 9u, true); /* first difference */
    ir_ref lt = ir_binary(g, IR_LT, xj, xi);
    if (ir_dtype_is_float(imp_dtype(n, x))) {
      /* NaN after every number, NaNs (each its own entry) in the order they
       * occur, as numpy's unique(equal_nan=False): with the plain compare a
       * NaN came before nothing and nothing before it, and shared its
       * place with the smallest entry (garbage values, indices past D) */
      ir_ref ni = ir_binary(g, IR_NEQ, xi, xi), nj = ir_binary(g, IR_NEQ, xj, xj);
      ir_ref nan_after = ir_binary(g, IR_AND, ni, ir_unary(g, IR_NOT, nj));
      ir_ref nan_order = ir_binary(g, IR_AND, ir_binary(g, IR_AND, ni, nj), ir_view_reshape(g, jlt, SH(1, D, D, 1)));
      lt = ir_binary(g, IR_OR, lt, ir_binary(g, IR_OR, nan_after, nan_order));
    }
    ir_ref at = ir_binary(g, IR_AND, ir_eq(g, kk, kstar), lt);
    order = ir_binary(g, IR_LT, i64(g, 0), ir_sum(g, ir_cast(g, at, IR_I64), 9u, false));
  } else {
    order = jlt;
  }
  ir_ref key = ir_sum(g, ir_cast(g, ir_binary(g, IR_AND, order, firstj), IR_I64), 2u, false); /* [D] */
  /* each row's unique entry: the key of the first occurrence of its value
   * (a row holding NaN equals no row but itself) */
  ir_ref self = ir_eq(g, ir_iota(g, SH(1, D), 1), ir_iota(g, SH(D, 1), 0));
  ir_ref mine = ir_binary(g, IR_AND, ir_binary(g, IR_OR, same, self), firstj);
  ir_ref inv = ir_sum(g, ir_where(g, mine, ir_view_reshape(g, key, SH(1, D)), i64(g, 0)), 2u, false);
  ir_ref cnt = count_of(g, first);
  ir_ref src = source_of(g, first, key, D, D);
  ir_ref y = ir_view_reshape(g, pick_rows(g, x3, src, P, D, Q, D), with_axis(&s, axis, D));
  ir_ref counts = ir_sum(g, ir_cast(g, ir_eq(g, ir_iota(g, SH(D, 1), 0), ir_view_reshape(g, inv, SH(1, D))), IR_I64),
                         2u, false);
  if (imp_set_out_len(n, 0, y, axis < 0 ? 0 : axis, cnt) || imp_set_out_len(n, 1, src, 0, cnt) ||
      imp_set_out(n, 2, inv) || imp_set_out_len(n, 3, counts, 0, cnt))
    return -1;
  return 0;
}

/* ------------------------------------------------------- NonMaxSuppression */

/* Column k of boxes [B, N, 4] as [B, N]. */
static ir_ref coord(ir_graph *g, ir_ref boxes, int64_t B, int64_t N, int k) {
  ir_ref c = ir_view_slice(g, boxes, (int64_t[]){0, 0, k}, (int64_t[]){1, 1, 1}, (int64_t[]){B, N, 1});
  return ir_view_reshape(g, c, SH(B, N));
}

/* An optional scalar input (shape [] or [1]) as a rank-0 value, or IR_NONE. */
static ir_ref scalar_in(imp_node *n, int i, ir_dtype t) {
  ir_ref r = imp_in(n, i);
  if (r == IR_NONE) return IR_NONE;
  if (ir_shape_numel(imp_shape(n, r)) != 1 || imp_dtype(n, r) != t)
    return imp_fail(n, "input %d must be one %s", i, ir_dtype_name(t)), IR_NONE;
  return ir_view_reshape(n->g, r, (ir_shape){0});
}

/* sup[b, i, j]: box j, once selected, suppresses box i: their IoU is above
 * the threshold, as onnxruntime decides it (no overlap, or an empty box or
 * union, never suppresses). The IoU is divided in double and rounded to
 * float, so it is onnxruntime's float quotient except within 2^-52 of a
 * rounding midpoint. */
static ir_ref suppression(imp_node *n, ir_ref boxes, int64_t B, int64_t N, ir_ref thr) {
  ir_graph *g = n->g;
  ir_ref c[4], lo[2], hi[2];
  for (int k = 0; k < 4; k++) c[k] = coord(g, boxes, B, N, k);
  if (imp_attr_i(n, "center_point_box", 0)) { /* [x_center, y_center, width, height] */
    for (int a = 0; a < 2; a++) {
      ir_ref half = ir_binary(g, IR_MUL, c[2 + a], ir_scalar(g, IR_F32, 0.5));
      lo[a] = ir_sub(g, c[a], half), hi[a] = ir_binary(g, IR_ADD, c[a], half);
    }
  } else { /* [y1, x1, y2, x2], any diagonal pair of corners */
    for (int a = 0; a < 2; a++) lo[a] = ir_min(g, c[1 - a], c[3 - a]), hi[a] = ir_binary(g, IR_MAX, c[1 - a], c[3 - a]);
  }
  ir_ref ok = IR_NONE, inter = IR_NONE, area = IR_NONE;
  for (int a = 0; a < 2; a++) {
    ir_ref li = ir_view_reshape(g, lo[a], SH(B, N, 1)), lj = ir_view_reshape(g, lo[a], SH(B, 1, N));
    ir_ref hi_ = ir_view_reshape(g, hi[a], SH(B, N, 1)), hj = ir_view_reshape(g, hi[a], SH(B, 1, N));
    ir_ref imin = ir_binary(g, IR_MAX, li, lj), imax = ir_min(g, hi_, hj);
    ir_ref o = ir_gt(g, imax, imin);
    ok = a ? ir_binary(g, IR_AND, ok, o) : o;
    ir_ref w = ir_sub(g, imax, imin);
    inter = a ? ir_binary(g, IR_MUL, w, inter) : w; /* onnxruntime: x extent times y extent */
    ir_ref e = ir_sub(g, hi[a], lo[a]);
    area = a ? ir_binary(g, IR_MUL, e, area) : e;
  }
  /* area [B, N] (x extent times y extent, as above) of box i and box j */
  ir_ref ai = ir_view_reshape(g, area, SH(B, N, 1)), aj = ir_view_reshape(g, area, SH(B, 1, N));
  ir_ref uni = ir_sub(g, ir_binary(g, IR_ADD, aj, ai), inter);
  ir_ref zero = ir_scalar(g, IR_F32, 0);
  ok = ir_binary(g, IR_AND, ok, ir_gt(g, inter, zero));
  ok = ir_binary(g, IR_AND, ok, ir_binary(g, IR_AND, ir_gt(g, ai, zero), ir_gt(g, aj, zero)));
  ok = ir_binary(g, IR_AND, ok, ir_gt(g, uni, zero));
  ir_ref q = ir_binary(g, IR_MUL, ir_cast(g, inter, IR_F64), ir_unary(g, IR_RECIP, ir_cast(g, uni, IR_F64)));
  return ir_binary(g, IR_AND, ok, ir_gt(g, ir_cast(g, q, IR_F32), thr));
}

/* The greedy selection of each (batch, class) — a box is kept unless a
 * kept box before it (higher score; equal scores: lower index first)
 * suppresses it — is a fixed point reached by iterating from "every
 * candidate kept": after t rounds the first t+1 boxes in score order are
 * final, so N-1 rounds of O(N^2) each (no loop in the generated code: the
 * rounds are unrolled, hence N must be static). */
static int lower_nms(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref boxes = imp_req(n, 0), scores = imp_req(n, 1);
  if (boxes == IR_NONE || scores == IR_NONE || refuse_lengths(n, 3u)) return -1;
  ir_shape bs = *imp_shape(n, boxes), ss = *imp_shape(n, scores);
  if (bs.rank != 3 || ss.rank != 3 || bs.d[2] != 4 || bs.d[0] != ss.d[0] || bs.d[1] != ss.d[2])
    return imp_fail(n, "boxes must be [B, N, 4] and scores [B, C, N]");
  if (imp_dtype(n, boxes) != IR_F32 || imp_dtype(n, scores) != IR_F32) return imp_fail(n, "boxes and scores must be float");
  int64_t B = bs.d[0], N = bs.d[1], C = ss.d[1], G, F;
  for (int k = 0; k < 3; k++)
    if (ir_dim_is_sym(bs.d[k]) || ir_dim_is_sym(ss.d[k]))
      return imp_fail_sym(n, ir_dim_is_sym(bs.d[k]) ? bs.d[k] : ss.d[k], "the boxes' and scores' shapes");
  if (ir_mul_ov(B, C, &G) || ir_mul_ov(G, N, &F) || check_pairs(n, F, N)) return imp_fail(n, "too many boxes");
  if (ir_reserve(g, 16 * N + 256)) return -1;
  /* a length from a selection before (boxes picked by NonZero): past it no box exists */
  int ab = -1, as = -1;
  ir_ref lb = imp_in_len(n, 0, &ab), ls = imp_in_len(n, 1, &as), len = lb != IR_NONE ? lb : ls;
  if ((lb != IR_NONE && ab != 1) || (ls != IR_NONE && as != 2) || (lb != IR_NONE && ls != IR_NONE && lb != ls))
    return imp_fail(n, "boxes and scores of run-time length must share it along the box axis");
  ir_ref maxo = scalar_in(n, 2, IR_I64), iou = scalar_in(n, 3, IR_F32), sthr = scalar_in(n, 4, IR_F32);
  if (ir_failed(g) || (imp_has_in(n, 2) && maxo == IR_NONE) || (imp_has_in(n, 3) && iou == IR_NONE) ||
      (imp_has_in(n, 4) && sthr == IR_NONE))
    return -1;
  int64_t K = N; /* boxes per class at most */
  if (maxo == IR_NONE) K = 0; /* absent: 0, no output */
  else if (ir_is_const(g, maxo) && imp_const_ints(n, 2, &K, 1) == 1) K = K < 0 ? 0 : K < N ? K : N;
  if (maxo == IR_NONE) maxo = i64(g, 0);
  if (iou == IR_NONE) iou = ir_scalar(g, IR_F32, 0);
  ir_ref sup = ir_view_reshape(g, suppression(n, boxes, B, N, iou), SH(B, 1, N, N));
  ir_ref si = ir_view_reshape(g, scores, SH(B, C, N, 1)), sj = ir_view_reshape(g, scores, SH(B, C, 1, N));
  ir_ref jlt = ir_binary(g, IR_LT, ir_iota(g, SH(1, 1, 1, N), 3), ir_iota(g, SH(1, 1, N, 1), 2));
  ir_ref before = ir_binary(g, IR_OR, ir_gt(g, sj, si), ir_binary(g, IR_AND, ir_eq(g, sj, si), jlt));
  ir_ref blocks = ir_binary(g, IR_AND, before, sup); /* [B, C, i, j] */
  ir_ref cand = ir_load_int(g, IR_BOOL, SH(1, 1, N), 1);
  if (len != IR_NONE) cand = ir_binary(g, IR_LT, ir_iota(g, SH(1, 1, N), 2), len);
  if (sthr != IR_NONE) cand = ir_binary(g, IR_AND, cand, ir_gt(g, scores, sthr));
  cand = ir_view_expand(g, cand, SH(B, C, N));
  ir_ref keep = cand;
  for (int64_t t = 0; t + 1 < N && !ir_failed(g); t++) {
    ir_ref hit = ir_binary(g, IR_AND, blocks, ir_view_reshape(g, keep, SH(B, C, 1, N)));
    ir_ref none = ir_eq(g, ir_sum(g, ir_cast(g, hit, IR_I64), 8u, false), i64(g, 0));
    keep = ir_move(g, ir_binary(g, IR_AND, cand, none));
  }
  ir_ref keepj = ir_view_reshape(g, keep, SH(B, C, 1, N));
  ir_ref rank = ir_sum(g, ir_cast(g, ir_binary(g, IR_AND, before, keepj), IR_I64), 8u, false); /* [B, C, N] */
  ir_ref fin = ir_binary(g, IR_AND, keep, ir_binary(g, IR_LT, rank, maxo));
  /* place: the kept boxes of earlier (batch, class) groups, then the rank */
  ir_ref per = ir_sum(g, ir_cast(g, ir_view_reshape(g, fin, SH(G, N)), IR_I64), 2u, false); /* [G] */
  ir_ref glt = ir_binary(g, IR_LT, ir_iota(g, SH(1, G), 1), ir_iota(g, SH(G, 1), 0));
  ir_ref off = ir_sum(g, ir_where(g, glt, ir_view_reshape(g, per, SH(1, G)), i64(g, 0)), 2u, false);
  ir_ref pos = ir_binary(g, IR_ADD, ir_view_reshape(g, off, SH(G, 1)), ir_view_reshape(g, rank, SH(G, N)));
  int64_t bound = G * K;
  ir_ref src = source_of(g, ir_view_reshape(g, fin, SH(F)), ir_view_reshape(g, pos, SH(F)), F, bound);
  ir_ref col[3] = {ir_binary(g, IR_IDIV, src, i64(g, C * N)),
                   ir_binary(g, IR_MOD, ir_binary(g, IR_IDIV, src, i64(g, N)), i64(g, C)),
                   ir_binary(g, IR_MOD, src, i64(g, N))};
  for (int k = 0; k < 3; k++) col[k] = ir_view_reshape(g, col[k], SH(bound, 1));
  return imp_set_out_len(n, 0, imp_concat(n, col, 3, 1), 0, count_of(g, ir_view_reshape(g, fin, SH(F))));
}

/* ------------------------------------------- Gather along a run-time length */

/* Gather from data whose gathered axis has a run-time length L (boxes
 * picked by NonZero, then indexed by NonMaxSuppression's selection): a
 * negative index wraps by L and an index outside [0, L) is the index
 * error, as onnxruntime would see the data. Padding entries of indices
 * that have a run-time length themselves are not checked. */
static int lower_gather_len(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref data = imp_req(n, 0), idx = imp_req(n, 1);
  if (data == IR_NONE || idx == IR_NONE) return -1;
  ir_shape ds = *imp_shape(n, data), is = *imp_shape(n, idx);
  int a = imp_axis(n, imp_attr_i(n, "axis", 0), ds.rank), b = -1;
  if (a < 0) return -1;
  if (ds.rank + is.rank - 1 > IR_MAX_RANK) return imp_fail(n, "rank too high");
  ir_ref L = imp_in_len(n, 0, NULL), li = imp_in_len(n, 1, &b);
  ir_dtype it = imp_dtype(n, idx);
  if (it != IR_I64 && it != IR_I32) return imp_fail(n, "indices must be int32 or int64");
  int64_t P = 1, D = 1, Q = 1, M = ir_shape_numel(&is);
  ir_ref x3 = as3(g, data, a, &P, &D, &Q);
  if (check_pairs(n, M, ir_dim_mul(ir_dim_mul(P, Q), D))) return -1;
  ir_ref e = ir_view_reshape(g, it == IR_I64 ? idx : ir_cast(g, idx, IR_I64), SH(M));
  ir_ref zero = i64(g, 0);
  e = ir_where(g, ir_binary(g, IR_LT, e, zero), ir_binary(g, IR_ADD, e, L), e);
  ir_ref bad = ir_binary(g, IR_OR, ir_binary(g, IR_LT, e, zero), ir_ge(g, e, L));
  if (li != IR_NONE) { /* padding: no index to check */
    ir_ref pos = ir_view_reshape(g, ir_iota(g, is, b), SH(M));
    ir_ref pad = ir_ge(g, pos, li);
    e = ir_where(g, pad, zero, e);
    bad = ir_binary(g, IR_AND, bad, ir_unary(g, IR_NOT, pad));
  }
  e = ir_check_index(g, ir_where(g, bad, i64(g, D), e), D);
  ir_shape os = {.rank = ds.rank + is.rank - 1};
  for (int k = 0; k < os.rank; k++) os.d[k] = k < a ? ds.d[k] : k < a + is.rank ? is.d[k - a] : ds.d[k - is.rank + 1];
  ir_ref y = ir_view_reshape(g, pick_rows(g, x3, e, P, D, Q, M), os);
  return imp_set_out_len(n, 0, y, a + b, li); /* static unless the indices have a run-time length */
}

imp_lower_fn imp_dyn_lowering(imp_node *n) {
  int a;
  if (!strcmp(n->proto->op_type, "Gather") && imp_in_len(n, 0, &a) != IR_NONE && imp_in(n, 0) != IR_NONE) {
    int ga = (int)imp_attr_i(n, "axis", 0), r = imp_shape(n, imp_in(n, 0))->rank;
    if ((ga < 0 ? ga + r : ga) == a) return lower_gather_len;
  }
  return NULL;
}

/* ------------------------------------------------ Slice at run-time bounds */

/* One int64 scalar from a 1-element integer tensor. */
static ir_ref scalar_i64(imp_node *n, ir_ref r) {
  return ir_cast(n->g, ir_view_reshape(n->g, r, (ir_shape){0}), IR_I64);
}

static ir_ref clamp(ir_graph *g, ir_ref v, int64_t lo, int64_t hi) {
  return ir_min(g, ir_binary(g, IR_MAX, v, i64(g, lo)), i64(g, hi));
}

int imp_slice_runtime(imp_node *n) {
  ir_graph *g = n->g;
  if (n->opset < 10 || !imp_has_in(n, 1) || !imp_has_in(n, 2) || imp_any_in_len(n)) return 0;
  ir_ref x = imp_in(n, 0), st = imp_in(n, 1), en = imp_in(n, 2);
  if (x == IR_NONE || st == IR_NONE || en == IR_NONE || (ir_is_const(g, st) && ir_is_const(g, en))) return 0;
  for (int i = 3; i < 5; i++)
    if (imp_has_in(n, i) && !ir_is_const(g, imp_in(n, i))) return 0;
  const ir_shape *ss = imp_shape(n, st), *es = imp_shape(n, en);
  if (ss->rank != 1 || ss->d[0] != 1 || es->rank != 1 || es->d[0] != 1) return 0;
  int64_t axis = 0, step = 1;
  int ca = imp_has_in(n, 3) ? imp_const_ints(n, 3, &axis, 1) : 1;
  int cs = imp_has_in(n, 4) ? imp_const_ints(n, 4, &step, 1) : 1;
  if (ca < 0 || cs < 0) return -1;
  if (ca != 1 || cs != 1) return 0;
  ir_shape s = *imp_shape(n, x);
  int a = imp_axis(n, axis, s.rank);
  if (a < 0) return -1;
  if (step == 0) return imp_fail(n, "step 0 on axis %d", a);
  int64_t d = s.d[a];
  if (ir_dim_is_sym(d) || d < 1 || step == INT64_MIN) return 0;
  /* ONNX's clamping, on the values: negative bounds count from the end */
  int64_t k = step < 0 ? -step : step, B = d / k + (d % k != 0);
  ir_ref s0 = scalar_i64(n, st), e0 = scalar_i64(n, en), zero = i64(g, 0);
  s0 = ir_where(g, ir_binary(g, IR_LT, s0, zero), ir_binary(g, IR_ADD, s0, i64(g, d)), s0);
  e0 = ir_where(g, ir_binary(g, IR_LT, e0, zero), ir_binary(g, IR_ADD, e0, i64(g, d)), e0);
  s0 = clamp(g, s0, 0, step > 0 ? d : d - 1);
  e0 = clamp(g, e0, step > 0 ? 0 : -1, step > 0 ? d : d - 1);
  ir_ref num = step > 0 ? ir_sub(g, e0, s0) : ir_sub(g, s0, e0);
  /* ceil(num / k) as (num - 1) / k + 1: num + k - 1 could overflow for a huge step */
  ir_ref len = ir_where(g, ir_binary(g, IR_LT, zero, num),
                        imp_add(g, ir_binary(g, IR_IDIV, ir_sub(g, num, i64(g, 1)), i64(g, k)), i64(g, 1)), zero);
  /* output i reads s0 + i * step, which is in [0, d) for i < len */
  ir_ref i = ir_iota(g, SH(B), 0), valid = ir_binary(g, IR_LT, i, len);
  ir_ref e = ir_where(g, valid, ir_binary(g, IR_ADD, s0, ir_binary(g, IR_MUL, i, i64(g, step))), zero);
  int64_t P, D, Q;
  ir_ref x3 = as3(g, x, a, &P, &D, &Q);
  if (x3 == IR_NONE || check_pairs(n, B, ir_dim_mul(ir_dim_mul(P, Q), D))) return -1;
  ir_ref y = pick_rows(g, x3, e, P, D, Q, B);
  y = ir_where(g, ir_view_reshape(g, valid, SH(1, B, 1)), y, ir_scalar(g, ir_node_get(g, y)->dtype, 0));
  return imp_set_out_len(n, 0, ir_view_reshape(g, y, with_axis(&s, a, B)), a, len) ? -1 : 1;
}

/* ------------------------------------------------------ lengths passed on */

static bool in_table(const imp_op_entry *t, imp_lower_fn f) {
  for (; t->op; t++)
    if (t->lower == f) return true;
  return false;
}

/* The output axis that reads input axis `a` of `in` whole when the op only
 * reshapes (Reshape, Squeeze, Unsqueeze, Flatten): the one axis of the
 * bound's size with the same elements before it; -1 if none or several. */
static int reshaped_axis(const ir_shape *in, int a, const ir_shape *out) {
  int64_t pre = 1, p = 1;
  for (int k = 0; k < a; k++) pre = ir_dim_mul(pre, in->d[k]);
  int found = -1;
  for (int k = 0; k < out->rank; k++) {
    if (p == pre && out->d[k] == in->d[a]) {
      if (found >= 0) return -1;
      found = k;
    }
    p = ir_dim_mul(p, out->d[k]);
  }
  return found;
}

int imp_dyn_pass(imp_node *n, imp_lower_fn lower) {
  const char *op = n->proto->op_type;
  int first = -1, axis = -1;
  ir_ref len = IR_NONE;
  for (int i = 0; i < imp_nin(n) && first < 0; i++)
    if ((len = imp_in_len(n, i, &axis)) != IR_NONE) first = i;
  /* a copy: imp_set_out_len below may add nodes (the array moves) */
  const ir_shape in = imp_nshape(n, imp_in(n, first));
  bool pointwise = in_table(imp_ops_elementwise, lower) || in_table(imp_ops_logic, lower) ||
                   !strcmp(op, "Cast") || !strcmp(op, "Identity") || !strcmp(op, "CastLike");
  for (int o = 0; o < imp_nout(n); o++) {
    if (!imp_has_out(n, o)) continue;
    ir_ref r = imp_out_ref(n, o);
    const ir_shape *out = imp_shape(n, r);
    int oa = -1;
    if (pointwise) {
      oa = out->rank - in.rank + axis;
      for (int i = 0; i < imp_nin(n) && oa >= 0; i++) { /* others broadcast along it, or share the length */
        int a2;
        ir_ref l2 = imp_in_len(n, i, &a2);
        if (!imp_has_in(n, i)) continue;
        const ir_shape *s = imp_shape(n, imp_in(n, i));
        int k = oa - (out->rank - s->rank);
        if (l2 != IR_NONE ? (l2 != len || k != a2) : (k >= 0 && s->d[k] != 1)) oa = -1;
      }
    } else if (!strcmp(op, "Gather") && first <= 1 && imp_in_len(n, 1 - first, NULL) == IR_NONE) {
      int ga = (int)imp_attr_i(n, "axis", 0), r = imp_shape(n, imp_in(n, 0))->rank;
      ga = ga < 0 ? ga + r : ga;
      int qr = imp_shape(n, imp_in(n, 1))->rank;
      oa = first == 1 ? ga + axis : axis < ga ? axis : axis > ga ? axis + qr - 1 : -1;
    } else if (!strcmp(op, "Transpose") && first == 0) {
      int64_t perm[IR_MAX_RANK];
      int np = imp_attr_ints(n, "perm", perm, IR_MAX_RANK);
      for (int k = 0; k < out->rank; k++)
        if ((np < 0 ? out->rank - 1 - k : perm[k]) == axis) oa = k;
    } else if ((!strcmp(op, "Reshape") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze") ||
                !strcmp(op, "Flatten")) && first == 0) {
      oa = reshaped_axis(&in, axis, out);
    }
    if (oa < 0) /* run and verify freeze the inputs the length comes from */
      return imp_need_value(n, len), imp_fail(n, "input %d ('%s') has a length known only at run time (a value-dependent shape); "
                      "op '%s' cannot take it here", first, n->proto->input[first], op);
    if (imp_set_out_len(n, o, r, oa, len)) return -1;
  }
  return 0;
}

const imp_op_entry imp_ops_select[] = {
    {"NonZero", lower_nonzero, IMP_SYM | IMP_DYN},
    {"Compress", lower_compress, IMP_SYM | IMP_DYN},
    {"Unique", lower_unique, IMP_SYM | IMP_DYN},
    {"NonMaxSuppression", lower_nms, IMP_SYM | IMP_DYN},
    {NULL, NULL, 0},
};
