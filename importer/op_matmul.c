/* op_matmul.c — lowering of the matmul op family: MatMul, Gemm and
 * MatMulInteger, all on top of ir_matmul (broadcast MUL + ADD reduce). */
#include "importer_impl.h"

ir_ref imp_matmul_panels(ir_graph *g, ir_ref a, ir_ref panels) {
  if (ir_failed(g) || a == IR_NONE || panels == IR_NONE) return IR_NONE;
  const ir_shape as = ir_node_get(g, a)->shape, ps = ir_node_get(g, panels)->shape;
  int r = as.rank;
  if (r + 2 > IR_MAX_RANK || ps.rank != 3) return ir_fail(g, "invalid panel product"), IR_NONE;
  ir_shape av = as, bv = {.rank = r + 2};
  av.d[r] = 1, av.d[r + 1] = 1, av.rank = r + 2; /* [.., M, K, 1, 1] */
  for (int i = 0; i < r - 1; i++) bv.d[i] = 1;
  bv.d[r - 1] = ps.d[0], bv.d[r] = ps.d[1], bv.d[r + 1] = ps.d[2]; /* [1.., K, np, P] */
  ir_ref prod = ir_binary(g, IR_MUL, ir_view_reshape(g, a, av), ir_view_reshape(g, panels, bv));
  return ir_sum(g, prod, 1u << (r - 1), false);
}

/* Columns per panel of a quantized weight (MatMulNBits' packed codes, the
 * widened copies of both forms): two vectors of the target (32 floats on
 * AVX-512, 16 on AVX2), so a panel's rows follow each other in memory and
 * one row is two independent sums (with one vector a row every FMA of it
 * waits on the one before: the 1.1B int4 decode step 7 % slower; four
 * vectors: slower, and spilled on AVX2's 16 registers: base LLaMA 13.8 ms
 * against 9.3). */
int64_t imp_panel_columns(const imp_node *n) {
  return 2 * (int64_t)imp_ctx_vector_floats(n->ctx);
}

/* x [K, N] (imp_dequant_scale's widened weight: CAST(w), or CAST(w) plus a
 * zero point of one value) read as panels [N / P, K, P] of P columns,
 * widened by one copy (the views on the one-byte weight itself, so the
 * copy reads it where it lies), or IR_NONE. */
static ir_ref widened_panels(ir_graph *g, ir_ref x, int64_t P) {
  const ir_node *xn = ir_node_get(g, x);
  ir_ref z = IR_NONE, c = x;
  if (xn->op == IR_ADD) {
    z = xn->src[1], c = xn->src[0];
    if (ir_shape_numel(&ir_node_get(g, z)->shape) != 1) return IR_NONE;
  }
  const ir_node *cn = ir_node_get(g, c);
  if (cn->op != IR_CAST || cn->dtype != IR_F32) return IR_NONE;
  ir_ref w = cn->src[0];
  const ir_shape ws = ir_node_get(g, w)->shape;
  if (!ir_shape_eq(&ws, &ir_node_get(g, x)->shape) || ws.d[1] % P) return IR_NONE;
  int swap01[3] = {1, 0, 2};
  ir_shape w3 = {.rank = 3, .d = {ws.d[0], ws.d[1] / P, P}};
  ir_ref v = ir_cast(g, ir_view_permute(g, ir_view_reshape(g, w, w3), swap01), IR_F32); /* [N/P, K, P] */
  if (z != IR_NONE) v = ir_binary(g, IR_ADD, v, ir_view_reshape(g, z, (ir_shape){.rank = 3, .d = {1, 1, 1}}));
  return ir_view_permute(g, ir_move(g, v), swap01); /* [K, N/P, P] */
}

/* A times a widened one-byte weight x [K, N] (imp_dequant_scale), then
 * times its scale `row` [1, N], when A has several rows (a prefill): x
 * widened once per call into float panels [N / P, K, P] of P = two target
 * vectors (the register block's columns), each panel one contiguous run
 * read by every row block. Read where it lay, [K, N], a panel's K rows
 * were N floats apart (the 1.1B model's w1: 22 KB), in a few sets of L2,
 * streamed again for every row block (the 1.1B int8 prefill at S = 128,
 * Zen 5, 1 thread: 2.80-3.05 s -> 1.59-1.62, fp32 1.42-1.45; docs/DESIGN.md).
 * Fewer than 4 rows (a decode step) keep the widening in the register
 * block, as the fuser does (scheduler/fuse.c, recomputes); a symbolic row
 * count counts as many (the fuser widened such a weight once per call
 * before too). IR_NONE where it does not apply. */
static ir_ref matmul_widened(imp_node *n, ir_ref a, ir_ref x, ir_ref row) {
  ir_graph *g = n->g;
  const ir_shape as = imp_gshape(g, a), xs = imp_gshape(g, x), rs = imp_gshape(g, row);
  int64_t P = imp_panel_columns(n), rows = 1;
  for (int i = 0; i < as.rank - 1 && rows < 4; i++) rows = ir_dim_is_sym(as.d[i]) ? 4 : rows * as.d[i];
  if (xs.rank != 2 || !ir_shape_is_static(&xs) || rows < 4 || P < 1 || xs.d[1] % P ||
      as.rank + 2 > IR_MAX_RANK || (ir_shape_numel(&rs) != xs.d[1] && ir_shape_numel(&rs) != 1))
    return IR_NONE;
  int64_t N = xs.d[1];
  ir_ref xp = widened_panels(g, x, P);
  if (xp == IR_NONE) return IR_NONE;
  int r = as.rank;
  ir_ref y = imp_matmul_panels(g, a, xp);
  /* the scale on the sum's own axes [.., M, N/P, P]: the product's epilogue */
  ir_shape sv = {.rank = r + 1};
  for (int i = 0; i < r - 1; i++) sv.d[i] = 1;
  sv.d[r - 1] = ir_shape_numel(&rs) == 1 ? 1 : N / P, sv.d[r] = ir_shape_numel(&rs) == 1 ? 1 : P;
  y = ir_binary(g, IR_MUL, y, ir_view_reshape(g, row, sv));
  ir_shape ys = as;
  ys.d[r - 1] = N;
  return ir_view_reshape(g, y, ys);
}

/* MatMul; a dequantized weight's scale multiplies the sums. */
static int lower_matmul(imp_node *n) {
  ir_ref a = imp_req(n, 0), b = imp_req(n, 1), x, row;
  if (ir_failed(n->g)) return -1;
  /* a dequantized weight: its scale multiplies the sums, not the weights
   * (A of rank 1 would drop the row axis that S's row keeps) */
  if (imp_gshape(n->g, a).rank >= 2 && imp_dequant_scale(n->g, b, &x, &row)) {
    ir_ref y = matmul_widened(n, a, x, row);
    if (y == IR_NONE && !ir_failed(n->g)) y = imp_mul(n->g, ir_matmul(n->g, a, x), row);
    return imp_set_out(n, 0, y);
  }
  return imp_set_out(n, 0, ir_matmul(n->g, a, b));
}

/* Gemm operands are matrices; trans* swaps the two axes (a view). */
static ir_ref gemm_operand(imp_node *n, int i, const char *trans_attr) {
  ir_ref x = imp_req(n, i);
  if (x == IR_NONE) return IR_NONE;
  if (imp_shape(n, x)->rank != 2)
    return imp_fail(n, "input %d must be a matrix (rank %d)", i, imp_shape(n, x)->rank), IR_NONE;
  if (!imp_attr_i(n, trans_attr, 0)) return x;
  static const int swap[2] = {1, 0};
  return ir_view_permute(n->g, x, swap);
}

/* Y = alpha * A' B' + beta * C, C optional and unidirectionally broadcast
 * to the (M, N) result. */
static int lower_gemm(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref a = gemm_operand(n, 0, "transA");
  ir_ref b = gemm_operand(n, 1, "transB");
  ir_ref y = ir_matmul(g, a, b);
  if (y == IR_NONE) return -1;
  ir_dtype t = imp_dtype(n, y);
  double alpha = imp_attr_f(n, "alpha", 1.0), beta = imp_attr_f(n, "beta", 1.0);
  if (alpha != 1.0) y = ir_binary(g, IR_MUL, y, ir_scalar(g, t, alpha));
  ir_ref c = imp_in(n, 2);
  if (c != IR_NONE && beta != 0.0) {
    if (beta != 1.0) c = ir_binary(g, IR_MUL, c, ir_scalar(g, t, beta));
    /* expand first so that C can never grow the result's shape */
    c = ir_view_expand(g, c, *imp_shape(n, y));
    y = ir_binary(g, IR_ADD, y, c);
  }
  return imp_set_out(n, 0, y);
}

/* A zero point as int32, shaped to broadcast against its operand: a 1-D
 * zero point of A holds one value per row, so it becomes a column. */
static ir_ref zero_point(imp_node *n, int i, ir_ref x, bool per_row) {
  ir_ref z = imp_in(n, i);
  if (z == IR_NONE) return IR_NONE;
  z = ir_cast(n->g, z, IR_I32);
  if (z == IR_NONE) return IR_NONE;
  const ir_shape *zs = imp_shape(n, z);
  if (per_row && zs->rank == 1 && zs->d[0] != 1 && imp_shape(n, x)->rank >= 2) {
    int64_t d[2] = {zs->d[0], 1};
    z = ir_view_reshape(n->g, z, ir_shape_make(2, d));
  }
  return z;
}

/* (A - a_zero_point) x (B - b_zero_point), accumulated in int32. */
static ir_ref int_operand(imp_node *n, int i, bool per_row) {
  ir_ref x = imp_req(n, i);
  if (x == IR_NONE) return IR_NONE;
  ir_dtype t = imp_dtype(n, x);
  if (t != IR_U8 && t != IR_I8)
    return imp_fail(n, "input %d has type %s (int8/uint8 only)", i, ir_dtype_name(t)), IR_NONE;
  ir_ref xi = ir_cast(n->g, x, IR_I32);
  ir_ref z = zero_point(n, i + 2, x, per_row);
  if (z != IR_NONE) xi = ir_sub(n->g, xi, z);
  return xi;
}

static int lower_matmul_integer(imp_node *n) {
  ir_ref a = int_operand(n, 0, true);
  ir_ref b = int_operand(n, 1, false);
  return imp_set_out(n, 0, ir_matmul(n->g, a, b));
}

const imp_op_entry imp_ops_matmul[] = {
    {"MatMul", lower_matmul, IMP_SYM},
    {"Gemm", lower_gemm, IMP_SYM},
    {"MatMulInteger", lower_matmul_integer, IMP_SYM},
    {NULL, NULL, 0},
};
