/* op_scatter.c — data-dependent selections written as one-hot compares of
 * an iota with an index, reduced by SUM/MAX: ReverseSequence, the Scatter
 * family, TopK. */
#include "importer_impl.h"

#include <string.h>


/* Moves `axis` of x last and puts a unit axis in its place:
 * [.., N@axis, ..] -> [.., 1@axis, .., N]. */
static ir_ref axis_to_last(ir_graph *g, ir_ref x, int rank, int axis) {
  int perm[IR_MAX_RANK];
  imp_perm_to_last(rank, axis, perm);
  return ir_view_unsqueeze(g, ir_view_permute(g, x, perm), axis);
}

/* ReverseSequence: out[t, b] = x[t < L_b ? L_b - 1 - t : t, b], the source
 * time picked by a one-hot over a trailing axis. */
static int lower_reverse_sequence(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), lens = imp_req(n, 1);
  if (x == IR_NONE || lens == IR_NONE) return -1;
  ir_shape s = imp_nshape(n, x);
  int r = s.rank;
  if (r < 2 || r + 1 > IR_MAX_RANK) return imp_fail(n, "input rank must be >= 2");
  if (imp_dtype(n, x) == IR_F16) return imp_fail(n, "float16 dtype not supported");
  int ta = imp_axis(n, imp_attr_i(n, "time_axis", 0), r), ba = imp_axis(n, imp_attr_i(n, "batch_axis", 1), r);
  if (ta < 0 || ba < 0 || ta == ba) return imp_fail(n, "invalid time_axis / batch_axis");
  int64_t T = s.d[ta], B = s.d[ba];
  ir_dtype lt = imp_dtype(n, lens);
  if (lt != IR_I32 && lt != IR_I64) return imp_fail(n, "sequence_lens of type %s not supported", ir_dtype_name(lt));
  ir_ref L = ir_view_reshape(g, ir_cast(g, lens, IR_I64), imp_unit_shape(r, ba, B));
  ir_ref t = ir_iota(g, imp_unit_shape(r, ta, T), ta);
  ir_ref rev = ir_sub(g, ir_binary(g, IR_ADD, L, ir_scalar(g, IR_I64, -1)), t);
  ir_ref src = ir_view_unsqueeze(g, ir_where(g, ir_binary(g, IR_LT, t, L), rev, t), r);
  ir_ref hit = ir_eq(g, ir_iota(g, imp_unit_shape(r + 1, r, T), r), src);
  ir_ref out = imp_select_sum(n, hit, axis_to_last(g, x, r, ta), r);
  return imp_set_out(n, 0, ir_view_squeeze(g, out, r));
}

/* ---------------------------------------------------------------- Scatter */

typedef enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } reduction;

static bool parse_reduction(imp_node *n, reduction *red) {
  const char *s = imp_attr_s(n, "reduction", "none");
  static const char *names[] = {"none", "add", "mul", "max", "min"};
  for (int i = 0; i < 5; i++)
    if (!strcmp(s, names[i])) return *red = (reduction)i, true;
  return imp_fail(n, "reduction '%s' is not supported", s), false;
}

/* Combines data (unit at `axis`) with the updates hit along `axis`:
 * none replaces hit elements by the last update that hits them (the
 * updates in their order along `axis`, imp_last_hit; the spec leaves the
 * order of duplicates open: torch 1.13 exports scatter_add at opset 14 as
 * ScatterElements onto zeros), the others fold all hitting updates into
 * the data element. */
static ir_ref scatter_combine(imp_node *n, ir_ref data, ir_ref hit, ir_ref upd, int axis, reduction red) {
  ir_graph *g = n->g;
  uint32_t ax = 1u << axis;
  ir_dtype t = imp_gdtype(g, data);
  if (t == IR_F16) return imp_fail(n, "float16 dtype not supported"), IR_NONE;
  if (t == IR_BOOL && red != RED_NONE) return imp_fail(n, "bool data needs reduction none"), IR_NONE;
  ir_ref any = ir_binary(g, IR_NEQ, ir_max_reduce(g, ir_cast(g, hit, IR_U8), ax, true), ir_scalar(g, IR_U8, 0));
  switch (red) {
  case RED_NONE: return ir_where(g, any, imp_select_sum(n, imp_last_hit(n, hit, axis), upd, axis), data);
  case RED_ADD: return ir_binary(g, IR_ADD, data, imp_select_sum(n, hit, upd, axis));
  case RED_MUL: return ir_binary(g, IR_MUL, data, ir_prod(g, ir_where(g, hit, upd, imp_k(g, upd, 1)), ax, true));
  case RED_MAX: {
    ir_ref m = ir_max_reduce(g, ir_where(g, hit, upd, imp_k(g, upd, ir_dtype_lowest(t))), ax, true);
    return ir_where(g, any, ir_binary(g, IR_MAX, data, m), data);
  }
  case RED_MIN: {
    ir_ref m = ir_min_reduce(g, ir_where(g, hit, upd, imp_k(g, upd, ir_dtype_highest(t))), ax, true);
    return ir_where(g, any, ir_min(g, data, m), data);
  }
  }
  return IR_NONE;
}

/* Iteration space D ++ [J], J the indices' extent along the axis; indices
 * and updates are padded to D on the other axes (index -1: no hit). */
static int lower_scatter_elements(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref data = imp_req(n, 0), idx = imp_req(n, 1), upd = imp_req(n, 2);
  if (data == IR_NONE || idx == IR_NONE || upd == IR_NONE) return -1;
  ir_shape ds = imp_nshape(n, data), is = imp_nshape(n, idx);
  int r = ds.rank;
  if (r < 1 || is.rank != r || !ir_shape_eq(&is, imp_shape(n, upd)))
    return imp_fail(n, "data, indices and updates must have the same rank");
  if (r + 1 > IR_MAX_RANK) return imp_fail(n, "rank too high");
  int a = imp_axis(n, imp_attr_i(n, "axis", 0), r);
  reduction red = RED_NONE;
  if (a < 0 || !parse_reduction(n, &red)) return -1;
  int64_t pb[IR_MAX_RANK] = {0}, pa[IR_MAX_RANK] = {0};
  for (int i = 0; i < r; i++) {
    if (i != a && imp_fits_within(n, is.d[i], ds.d[i], i)) return -1;
    pa[i] = i == a ? 0 : ir_dim_sub(ds.d[i], is.d[i]);
  }
  ir_ref w = ir_view_pad(g, imp_wrap_indices(n, idx, ds.d[a]), pb, pa, -1.0);
  ir_ref u = ir_view_pad(g, upd, pb, pa, 0.0);
  ir_ref hit = ir_eq(g, ir_iota(g, imp_unit_shape(r + 1, a, ds.d[a]), a), axis_to_last(g, w, r, a));
  ir_ref out = scatter_combine(n, ir_view_unsqueeze(g, data, r), hit, axis_to_last(g, u, r, a), r, red);
  return imp_set_out(n, 0, ir_view_squeeze(g, out, r));
}

/* The k indexed axes of data become one axis of V = their product and the
 * index tuples flat offsets into it; iteration space [V, M] ++ D[k:] with
 * M the number of index tuples, reduced over M. */
static int lower_scatter_nd(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref data = imp_req(n, 0), idx = imp_req(n, 1), upd = imp_req(n, 2);
  if (data == IR_NONE || idx == IR_NONE || upd == IR_NONE) return -1;
  ir_shape ds = imp_nshape(n, data), is = imp_nshape(n, idx);
  int r = ds.rank, q = is.rank;
  reduction red = RED_NONE;
  if (!parse_reduction(n, &red)) return -1;
  if (q < 1) return imp_fail(n, "indices must have rank >= 1");
  if (ir_dim_is_sym(is.d[q - 1])) return imp_fail_sym(n, is.d[q - 1], "index tuples of a symbolic length");
  if (is.d[q - 1] < 1 || is.d[q - 1] > r) return imp_fail(n, "index tuples do not fit rank %d", r);
  int k = (int)is.d[q - 1];
  int rank = 2 + r - k;
  if (rank > IR_MAX_RANK) return imp_fail(n, "rank too high");
  int64_t M = 1, V = 1;
  for (int i = 0; i < q - 1; i++) M = ir_dim_mul(M, is.d[i]);
  int64_t st[IR_MAX_RANK], sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int i = 0; i < q; i++) st[i] = 0, sp[i] = 1, ln[i] = is.d[i];
  ln[q - 1] = 1;
  ir_ref flat = IR_NONE;
  for (int m = k - 1; m >= 0; m--) {
    st[q - 1] = m;
    ir_ref c = imp_wrap_indices(n, ir_view_slice(g, idx, st, sp, ln), ds.d[m]);
    /* the stride as an exact (possibly symbolic) int64, not a double */
    c = ir_binary(g, IR_MUL, c, ir_load_int(g, IR_I64, ir_shape_make(0, NULL), V));
    flat = flat == IR_NONE ? c : ir_binary(g, IR_ADD, flat, c);
    V = ir_dim_mul(V, ds.d[m]);
  }
  if (M == IR_DIM_INVALID || V == IR_DIM_INVALID) return imp_fail(n, "the indexed axes' product overflows");
  ir_shape dv = {.rank = rank}, fv = {.rank = rank}, uv = {.rank = rank};
  for (int i = 0; i < rank; i++) {
    int64_t rest = i >= 2 ? ds.d[k + i - 2] : 1;
    dv.d[i] = i == 0 ? V : rest;
    fv.d[i] = i == 1 ? M : 1;
    uv.d[i] = i == 0 ? 1 : i == 1 ? M : rest;
  }
  if (ir_shape_numel(imp_shape(n, upd)) != ir_shape_numel(&uv)) return imp_fail(n, "updates have the wrong shape");
  ir_ref hit = ir_eq(g, ir_iota(g, imp_unit_shape(rank, 0, V), 0), ir_view_reshape(g, flat, fv));
  ir_ref out = scatter_combine(n, ir_view_reshape(g, data, dv), hit, ir_view_reshape(g, upd, uv), 1, red);
  return imp_set_out(n, 0, ir_view_reshape(g, out, ds));
}

/* ------------------------------------------------------------------- TopK */

/* rank_i = #{j : x_j before x_i} with "before" = larger (smaller) value,
 * NaN the largest, ties by lower index: a total order, so every rank is
 * held once; output slot r takes the element of rank r. */
static int lower_topk(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape s = imp_nshape(n, x);
  int r = s.rank;
  if (r < 1 || r + 1 > IR_MAX_RANK) return imp_fail(n, "input rank must be >= 1");
  ir_dtype t = imp_dtype(n, x);
  if (t == IR_F16 || t == IR_BOOL) return imp_fail(n, "dtype %s not supported", ir_dtype_name(t));
  int a = imp_axis(n, imp_attr_i(n, "axis", -1), r);
  if (a < 0) return -1;
  int64_t kk, N = s.d[a];
  ir_ref len = IR_NONE; /* k known only at run time: every element ranked, the output cut to k */
  if (n->opset < 10) kk = imp_attr_i(n, "k", -1);
  else if (imp_in(n, 1) != IR_NONE && !ir_is_const(g, imp_in(n, 1))) {
    ir_ref k = imp_in(n, 1);
    if (ir_shape_numel(imp_shape(n, k)) != 1 || imp_dtype(n, k) != IR_I64) return imp_fail(n, "k must be one int64");
    kk = N, len = ir_check_index(g, ir_view_reshape(g, k, (ir_shape){0}), ir_dim_add(N, 1)); /* 0 <= k <= N */
  } else if (imp_const_dims(n, 1, &kk, 1) != 1) return imp_fail(n, "k must be one integer");
  /* k read from a shape (torch.sort, argsort: k = the axis' length) may be
   * symbolic: the slots are then an iota of that extent */
  if (ir_dim_is_sym(kk) && !ir_dim_is_sym(N)) return imp_fail_sym(n, kk, "a symbolic k on a static axis");
  if (kk < 0 || (!ir_dim_is_sym(N) && kk > N)) return imp_fail(n, "k=%lld out of range", (long long)kk);
  if (ir_dim_is_sym(N) && ir_assume_nonneg(g, ir_dim_sub(N, kk), "TopK's k fits the axis")) return -1;
  bool largest = imp_attr_i(n, "largest", 1) != 0;
  ir_ref xi = ir_view_unsqueeze(g, x, r), xj = axis_to_last(g, x, r, a);
  ir_ref ii = ir_iota(g, imp_unit_shape(r + 1, a, N), a), jj = ir_iota(g, imp_unit_shape(r + 1, r, N), r);
  ir_ref better = largest ? ir_gt(g, xj, xi) : ir_binary(g, IR_LT, xj, xi), same = ir_eq(g, xj, xi);
  if (ir_dtype_is_float(t)) {
    /* NaN ranks above every number (torch.topk's order): with plain
     * compares a NaN and the largest number both took rank 0, and the
     * slot summed their values and their indices (an index past the axis) */
    ir_ref nj = ir_binary(g, IR_NEQ, xj, xj), ni = ir_binary(g, IR_NEQ, xi, xi);
    ir_ref nan_first = largest ? ir_binary(g, IR_AND, nj, ir_unary(g, IR_NOT, ni))
                               : ir_binary(g, IR_AND, ni, ir_unary(g, IR_NOT, nj));
    better = ir_binary(g, IR_OR, better, nan_first);
    same = ir_binary(g, IR_OR, same, ir_binary(g, IR_AND, nj, ni));
  }
  ir_ref tie = ir_binary(g, IR_AND, same, ir_binary(g, IR_LT, jj, ii));
  ir_ref before = ir_cast(g, ir_binary(g, IR_OR, better, tie), IR_I64);
  ir_ref rank = ir_sum(g, before, 1u << r, false);
  ir_ref slot = ir_iota(g, imp_unit_shape(r + 1, a, kk), a);
  ir_ref hit = ir_eq(g, slot, axis_to_last(g, rank, r, a));
  ir_ref vals = ir_view_squeeze(g, imp_select_sum(n, hit, xj, r), r);
  ir_ref idxs = ir_view_squeeze(g, imp_select_sum(n, hit, jj, r), r);
  if (imp_set_out_len(n, 0, vals, a, len) < 0) return -1;
  return imp_has_out(n, 1) ? imp_set_out_len(n, 1, idxs, a, len) : 0;
}


const imp_op_entry imp_ops_scatter[] = {
    {"ReverseSequence", lower_reverse_sequence, IMP_SYM},
    {"ScatterElements", lower_scatter_elements, IMP_SYM},
    {"Scatter", lower_scatter_elements, IMP_SYM},
    {"ScatterND", lower_scatter_nd, IMP_SYM},
    {"TopK", lower_topk, IMP_SYM},
    {NULL, NULL, 0},
};
