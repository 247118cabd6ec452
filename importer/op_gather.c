/* op_gather.c — lowering of the gather op family.
 *
 * Every gather is the one-hot reduction of the design:
 *   out[j] = SUM_v WHERE(EQ(v, idx[j]), data[v], 0)
 * over a broadcast iteration space that holds both the output axes and the
 * gathered axis v. It is O(V) on purpose; a later rewrite of the graph turns
 * the pattern into an indexed read. */
#include "importer_impl.h"

static ir_shape shape_of(imp_node *n, ir_ref r) {
  return *imp_shape(n, r);
}

/* SUM over `axis` of WHERE(hit, data, 0), dropping the axis; bool data is
 * reduced with MAX over a byte copy (an OR). */
static ir_ref select_sum(imp_node *n, ir_ref hit, ir_ref data, int axis);

/* ONNX gathers reject indices out of range: so does the rewritten read. */
static ir_ref strict(imp_node *n, ir_ref r) {
  if (r != IR_NONE) ir_mark_index_strict(n->g, r);
  return r;
}

static ir_ref select_sum(imp_node *n, ir_ref hit, ir_ref data, int axis) {
  ir_graph *g = n->g;
  ir_dtype t = imp_dtype(n, data);
  bool is_bool = t == IR_BOOL;
  if (is_bool) data = ir_cast(g, data, IR_U8);
  ir_dtype w = is_bool ? IR_U8 : t;
  ir_ref picked = ir_where(g, hit, data, ir_scalar(g, w, 0));
  ir_ref r = is_bool ? ir_max_reduce(g, picked, 1u << axis, false) : ir_sum(g, picked, 1u << axis, false);
  if (is_bool) r = ir_binary(g, IR_NEQ, r, ir_scalar(g, IR_U8, 0));
  return r;
}

/* Shape of `rank` ones with `s` placed from position `at`. */
static ir_shape place(const ir_shape *s, int rank, int at) {
  ir_shape o = {.rank = rank};
  for (int i = 0; i < rank; i++) o.d[i] = 1;
  for (int i = 0; i < s->rank; i++) o.d[at + i] = s->d[i];
  return o;
}

/* Iteration space D[:a] ++ I ++ [V] ++ D[a+1:], reduced over the V axis. */
static int lower_gather(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref data = imp_req(n, 0), idx = imp_req(n, 1);
  if (data == IR_NONE || idx == IR_NONE) return -1;
  ir_shape ds = shape_of(n, data), is = shape_of(n, idx);
  int r = ds.rank, q = is.rank;
  if (r < 1) return imp_fail(n, "data must have rank >= 1");
  int a = imp_axis(n, imp_attr_i(n, "axis", 0), r);
  if (a < 0) return -1;
  if (r + q > IR_MAX_RANK) return imp_fail(n, "rank %d of the iteration space is too high", r + q);
  int rank = r + q, vax = a + q;
  int64_t v = ds.d[a];
  /* data: insert q unit axes before axis a */
  ir_shape dv = {.rank = rank};
  for (int i = 0; i < rank; i++) dv.d[i] = i < a ? ds.d[i] : i < vax ? 1 : ds.d[i - q];
  /* indices: at positions a .. a+q-1 */
  ir_shape iv = place(&is, rank, a);
  ir_shape vs = {.rank = rank};
  for (int i = 0; i < rank; i++) vs.d[i] = i == vax ? v : 1;
  ir_ref w = ir_view_reshape(g, imp_wrap_indices(n, idx, v), iv);
  ir_ref hit = ir_eq(g, ir_iota(g, vs, vax), w);
  return imp_set_out(n, 0, strict(n, select_sum(n, hit, ir_view_reshape(g, data, dv), vax)));
}

/* Iteration space I ++ [V]: data cut to the extent of the indices on the
 * other axes, with its axis a moved last and a unit axis in its place. */
static int lower_gather_elements(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref data = imp_req(n, 0), idx = imp_req(n, 1);
  if (data == IR_NONE || idx == IR_NONE) return -1;
  ir_shape ds = shape_of(n, data), is = shape_of(n, idx);
  int r = ds.rank;
  if (r < 1 || is.rank != r) return imp_fail(n, "data and indices must have the same rank >= 1");
  if (r + 1 > IR_MAX_RANK) return imp_fail(n, "rank too high");
  int a = imp_axis(n, imp_attr_i(n, "axis", 0), r);
  if (a < 0) return -1;
  int64_t v = ds.d[a];
  int64_t st[IR_MAX_RANK], sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  int perm[IR_MAX_RANK];
  for (int i = 0; i < r; i++) {
    if (i != a && imp_fits_within(n, is.d[i], ds.d[i], i)) return -1;
    st[i] = 0, sp[i] = 1, ln[i] = i == a ? ds.d[i] : is.d[i];
    perm[i] = i < a ? i : i + 1 < r ? i + 1 : a;
  }
  perm[r - 1] = a;
  ir_ref d = ir_view_permute(g, ir_view_slice(g, data, st, sp, ln), perm);
  d = ir_view_unsqueeze(g, d, a);
  ir_shape vs = {.rank = r + 1};
  for (int i = 0; i <= r; i++) vs.d[i] = i == r ? v : 1;
  ir_ref w = ir_view_unsqueeze(g, imp_wrap_indices(n, idx, v), r);
  ir_ref hit = ir_eq(g, ir_iota(g, vs, r), w);
  return imp_set_out(n, 0, strict(n, select_sum(n, hit, d, r)));
}

/* The k indexed axes of data become one axis of V = their product and the
 * index tuples become flat offsets into it; the iteration space is
 * I[:q-1] ++ [V] ++ D[b+k:] with the b batch axes shared. */
static int lower_gather_nd(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref data = imp_req(n, 0), idx = imp_req(n, 1);
  if (data == IR_NONE || idx == IR_NONE) return -1;
  ir_shape ds = shape_of(n, data), is = shape_of(n, idx);
  int r = ds.rank, q = is.rank;
  int64_t b = imp_attr_i(n, "batch_dims", 0);
  if (q < 1 || b < 0 || b >= q || b >= r) return imp_fail(n, "invalid ranks or batch_dims");
  if (ir_dim_is_sym(is.d[q - 1])) return imp_fail_sym(n, is.d[q - 1], "index tuples of a symbolic length");
  if (is.d[q - 1] < 1 || is.d[q - 1] > r) return imp_fail(n, "index tuples do not fit rank %d", r);
  int k = (int)is.d[q - 1];
  if (b + k > r) return imp_fail(n, "index tuples of length %d do not fit rank %d", k, r);
  for (int i = 0; i < b; i++)
    if (!ir_dim_same(g, is.d[i], ds.d[i])) {
      if (!ir_dim_is_sym(is.d[i]) && !ir_dim_is_sym(ds.d[i])) return imp_fail(n, "batch axis %d differs", i);
      if (ir_dim_unify(g, is.d[i], ds.d[i])) return -1;
    }
  int rank = q + (r - (int)b - k), vax = q - 1;
  if (rank > IR_MAX_RANK) return imp_fail(n, "rank %d of the iteration space is too high", rank);
  /* flat offset of each index tuple */
  ir_shape lead = is;
  lead.rank = q - 1;
  int64_t st[IR_MAX_RANK], sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int i = 0; i < q; i++) st[i] = 0, sp[i] = 1, ln[i] = is.d[i];
  ln[q - 1] = 1;
  ir_ref flat = IR_NONE;
  int64_t v = 1;
  for (int m = k - 1; m >= 0; m--) {
    int64_t dm = ds.d[b + m];
    st[q - 1] = m;
    ir_ref c = ir_view_reshape(g, ir_view_slice(g, idx, st, sp, ln), lead);
    /* the stride as an exact (possibly symbolic) int64, not a double */
    c = ir_binary(g, IR_MUL, imp_wrap_indices(n, c, dm), ir_load_int(g, IR_I64, ir_shape_make(0, NULL), v));
    flat = flat == IR_NONE ? c : ir_binary(g, IR_ADD, flat, c);
    v = ir_dim_mul(v, dm);
    if (v == IR_DIM_INVALID) return imp_fail(n, "the indexed axes' product overflows");
  }
  ir_shape dv = {.rank = rank}, fv = {.rank = rank}, vs = {.rank = rank};
  for (int i = 0; i < rank; i++) {
    dv.d[i] = i < b ? ds.d[i] : i < vax ? 1 : i == vax ? v : ds.d[i - vax - 1 + b + k];
    fv.d[i] = i < vax ? is.d[i] : 1;
    vs.d[i] = i == vax ? v : 1;
  }
  ir_ref hit = ir_eq(g, ir_iota(g, vs, vax), ir_view_reshape(g, flat, fv));
  return imp_set_out(n, 0, strict(n, select_sum(n, hit, ir_view_reshape(g, data, dv), vax)));
}

const imp_op_entry imp_ops_gather[] = {
    {"GatherND", lower_gather_nd, IMP_SYM},
    {"Gather", lower_gather, IMP_SYM},
    {"GatherElements", lower_gather_elements, IMP_SYM},
    {NULL, NULL, 0},
};
