/* builder.c — composite helpers made only of primitives. */
#include "ir_impl.h"

#include <math.h>

#define LOG2E 1.44269504088896340736
#define LN2 0.693147180559945309417

static ir_dtype dt(ir_graph *g, ir_ref a) {
  return g->nodes[a].dtype;
}

static ir_ref k(ir_graph *g, ir_ref like, double v) {
  return ir_scalar(g, dt(g, like), v);
}

ir_ref ir_sub(ir_graph *g, ir_ref a, ir_ref b) {
  if (!ir_refs_ok(g, 1, &b)) return IR_NONE;
  return ir_binary(g, IR_ADD, a, ir_unary(g, IR_NEG, b));
}

ir_ref ir_div(ir_graph *g, ir_ref a, ir_ref b) {
  if (!ir_refs_ok(g, 1, &b)) return IR_NONE;
  if (!ir_dtype_is_float(dt(g, b))) return ir_binary(g, IR_IDIV, a, b);
  return ir_binary(g, IR_MUL, a, ir_unary(g, IR_RECIP, b));
}

ir_ref ir_exp(ir_graph *g, ir_ref a) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  return ir_unary(g, IR_EXP2, ir_binary(g, IR_MUL, a, k(g, a, LOG2E)));
}

ir_ref ir_log(ir_graph *g, ir_ref a) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  return ir_binary(g, IR_MUL, ir_unary(g, IR_LOG2, a), k(g, a, LN2));
}

ir_ref ir_eq(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_unary(g, IR_NOT, ir_binary(g, IR_NEQ, a, b));
}
ir_ref ir_le(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_unary(g, IR_NOT, ir_binary(g, IR_LT, b, a));
}
ir_ref ir_gt(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_LT, b, a);
}
ir_ref ir_ge(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_unary(g, IR_NOT, ir_binary(g, IR_LT, a, b));
}

ir_ref ir_min(ir_graph *g, ir_ref a, ir_ref b) {
  /* NaN-propagating like MAX: pick a when a < b or a is NaN */
  ir_ref pick_a = ir_binary(g, IR_LT, a, b);
  if (!ir_refs_ok(g, 1, &pick_a)) return IR_NONE;
  if (ir_dtype_is_float(dt(g, a)))
    pick_a = ir_binary(g, IR_OR, pick_a, ir_binary(g, IR_NEQ, a, a));
  return ir_where(g, pick_a, a, b);
}

ir_ref ir_abs(ir_graph *g, ir_ref a) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  if (!ir_dtype_is_signed(dt(g, a))) return a;
  return ir_where(g, ir_binary(g, IR_LT, a, k(g, a, 0)), ir_unary(g, IR_NEG, a), a);
}

ir_ref ir_sigmoid(ir_graph *g, ir_ref a) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_ref e = ir_unary(g, IR_EXP2, ir_binary(g, IR_MUL, a, k(g, a, -LOG2E)));
  return ir_unary(g, IR_RECIP, ir_binary(g, IR_ADD, e, k(g, a, 1)));
}

ir_ref ir_tanh(ir_graph *g, ir_ref a) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_ref s = ir_sigmoid(g, ir_binary(g, IR_MUL, a, k(g, a, 2)));
  return ir_binary(g, IR_ADD, ir_binary(g, IR_MUL, s, k(g, a, 2)), k(g, a, -1));
}

/* a^b = 2^(b log2|a|), negated for a < 0 and odd integer b, 1 where b == 0. */
ir_ref ir_pow(ir_graph *g, ir_ref a, ir_ref b) {
  ir_ref r[2] = {a, b};
  if (!ir_refs_ok(g, 2, r)) return IR_NONE;
  ir_ref mag = ir_unary(g, IR_EXP2, ir_binary(g, IR_MUL, b, ir_unary(g, IR_LOG2, ir_abs(g, a))));
  ir_ref odd = ir_binary(g, IR_NEQ, ir_binary(g, IR_MOD, b, k(g, b, 2)), k(g, b, 0));
  ir_ref neg = ir_binary(g, IR_AND, ir_binary(g, IR_LT, a, k(g, a, 0)), odd);
  ir_ref v = ir_where(g, neg, ir_unary(g, IR_NEG, mag), mag);
  return ir_where(g, ir_eq(g, b, k(g, b, 0)), k(g, a, 1), v);
}

ir_ref ir_squeeze_axes(ir_graph *g, ir_ref a, uint32_t axes) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_shape s = g->nodes[a].shape, o = {0};
  for (int i = 0; i < s.rank; i++)
    if (!(axes & (1u << i))) o.d[o.rank++] = s.d[i];
    else if (s.d[i] != 1) {
      char d[96];
      ir_dim_str(s.d[i], d, sizeof d);
      return ir_fail(g, "cannot squeeze axis %d of size %s", i, d), IR_NONE;
    }
  return ir_view_reshape(g, a, o);
}

static ir_ref finish_reduce(ir_graph *g, ir_ref r, uint32_t axes, bool keepdims) {
  return keepdims ? r : ir_squeeze_axes(g, r, axes);
}

ir_ref ir_sum(ir_graph *g, ir_ref a, uint32_t axes, bool keepdims) {
  return finish_reduce(g, ir_reduce(g, IR_ADD, a, axes), axes, keepdims);
}

ir_ref ir_prod(ir_graph *g, ir_ref a, uint32_t axes, bool keepdims) {
  return finish_reduce(g, ir_reduce(g, IR_MUL, a, axes), axes, keepdims);
}

ir_ref ir_max_reduce(ir_graph *g, ir_ref a, uint32_t axes, bool keepdims) {
  return finish_reduce(g, ir_reduce(g, IR_MAX, a, axes), axes, keepdims);
}

ir_ref ir_min_reduce(ir_graph *g, ir_ref a, uint32_t axes, bool keepdims) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  if (ir_dtype_is_float(dt(g, a)))
    return ir_unary(g, IR_NEG, ir_max_reduce(g, ir_unary(g, IR_NEG, a), axes, keepdims));
  /* integers: ~x reverses the order and never overflows, where -x wraps at
   * the type's minimum (min(INT_MIN, 5) was 5, and a min over nothing
   * INT_MIN); over nothing ~lowest is the highest, as onnxruntime gives */
  ir_ref ones = k(g, a, ir_dtype_is_signed(dt(g, a)) ? -1 : ir_dtype_highest(dt(g, a)));
  return ir_binary(g, IR_XOR, ir_max_reduce(g, ir_binary(g, IR_XOR, a, ones), axes, keepdims), ones);
}

ir_ref ir_mean(ir_graph *g, ir_ref a, uint32_t axes, bool keepdims) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  const ir_shape *s = &g->nodes[a].shape;
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++)
    if (axes & (1u << i)) n = ir_dim_mul(n, s->d[i]);
  ir_ref sum = ir_sum(g, a, axes, keepdims);
  /* The mean of nothing is 0, as onnxruntime and PyTorch (EmbeddingBag's
   * empty bag) give it; ONNX leaves it undefined, and 0 * (1/0) was NaN.
   * The sum of nothing is 0: with no element the sum is the answer. */
  if (n == 0) return sum;
  if (ir_dim_is_sym(n)) {
    /* the count is known at run time: a symbolic LOAD, cast and inverted;
     * where it can be 0 (a Range of seq - 1 elements), divided by at least
     * 1 instead (the sum is then 0); a count that is >= 1 for every value
     * of the symbols (the entry checks them >= 1) costs nothing more */
    ir_ref cnt = ir_load_int(g, IR_I64, ir_shape_make(0, NULL), n);
    int64_t lo, hi;
    ir_dim_range(g, n, &lo, &hi);
    if (lo < 1) cnt = ir_binary(g, IR_MAX, cnt, ir_load_int(g, IR_I64, ir_shape_make(0, NULL), 1));
    if (!ir_dtype_is_float(dt(g, a))) return ir_binary(g, IR_IDIV, sum, ir_cast(g, cnt, dt(g, a)));
    return ir_binary(g, IR_MUL, sum, ir_unary(g, IR_RECIP, ir_cast(g, cnt, dt(g, a))));
  }
  if (ir_dtype_is_float(dt(g, a))) return ir_binary(g, IR_MUL, sum, k(g, a, 1.0 / (double)n));
  return ir_binary(g, IR_IDIV, sum, k(g, a, (double)n));
}

ir_ref ir_matmul(ir_graph *g, ir_ref a, ir_ref b) {
  ir_ref r[2] = {a, b};
  if (!ir_refs_ok(g, 2, r)) return IR_NONE;
  int ra = g->nodes[a].shape.rank, rb = g->nodes[b].shape.rank;
  if (ra == 0 || rb == 0) return ir_fail(g, "matmul of a scalar"), IR_NONE;
  if (ra == 1) a = ir_view_unsqueeze(g, a, 0), ra = 2;
  if (rb == 1) b = ir_view_unsqueeze(g, b, 1), rb = 2;
  if (!ir_refs_ok(g, 2, (ir_ref[]){a, b})) return IR_NONE;
  int64_t K = g->nodes[a].shape.d[ra - 1];
  if (g->nodes[b].shape.d[rb - 2] != K) {
    char x[96], y[96];
    ir_dim_str(K, x, sizeof x);
    ir_dim_str(g->nodes[b].shape.d[rb - 2], y, sizeof y);
    return ir_fail(g, "matmul inner dimensions differ (%s vs %s)", x, y), IR_NONE;
  }
  /* b a copy repeating its source along a batch axis (ir_view_unrepeat):
   * the matmul on the source, that axis split in a and in the result */
  ir_ref bs;
  int ax;
  if (ra == rb && ir_view_unrepeat(g, b, &bs, &ax) && ax < rb - 2 &&
      g->nodes[a].shape.d[ax] == g->nodes[b].shape.d[ax]) {
    ir_shape sa = g->nodes[a].shape, sy;
    for (int i = ra; i > ax + 1; i--) sa.d[i] = sa.d[i - 1];
    sa.d[ax] = g->nodes[bs].shape.d[ax];
    sa.d[ax + 1] = g->nodes[bs].shape.d[ax + 1];
    sa.rank = ra + 1;
    ir_ref y = ir_matmul(g, ir_view_reshape(g, a, sa), bs);
    if (!ir_refs_ok(g, 1, &y)) return IR_NONE;
    sy = g->nodes[y].shape;
    sy.d[ax] = g->nodes[b].shape.d[ax];
    for (int i = ax + 1; i < ra; i++) sy.d[i] = sy.d[i + 1];
    sy.rank = ra;
    return ir_view_reshape(g, y, sy);
  }
  /* a[..., M, 1, K] * b^T[..., 1, N, K], summed over K */
  int perm[IR_MAX_RANK];
  for (int i = 0; i < rb; i++) perm[i] = i;
  perm[rb - 2] = rb - 1;
  perm[rb - 1] = rb - 2;
  ir_ref at = ir_view_unsqueeze(g, a, ra - 1);
  ir_ref bt = ir_view_unsqueeze(g, ir_view_permute(g, b, perm), rb - 2);
  ir_ref prod = ir_binary(g, IR_MUL, at, bt);
  if (!ir_refs_ok(g, 1, &prod)) return IR_NONE;
  int rp = g->nodes[prod].shape.rank;
  ir_ref out = ir_sum(g, prod, 1u << (rp - 1), false);
  if (g->nodes[r[1]].shape.rank == 1) out = ir_view_squeeze(g, out, rp - 2);
  if (g->nodes[r[0]].shape.rank == 1) out = ir_view_squeeze(g, out, rp - 3);
  return out;
}

ir_ref ir_softmax(ir_graph *g, ir_ref a, int axis) {
  uint32_t ax = 1u << axis;
  ir_ref e = ir_exp(g, ir_sub(g, a, ir_max_reduce(g, a, ax, true)));
  return ir_binary(g, IR_MUL, e, ir_unary(g, IR_RECIP, ir_sum(g, e, ax, true)));
}
