/* op_matmul.c — lowering of the matmul op family: MatMul, Gemm and
 * MatMulInteger, all on top of ir_matmul (broadcast MUL + ADD reduce). */
#include "importer_impl.h"

/* A required input: records an error when it is absent. */
static int lower_matmul(imp_node *n) {
  ir_ref a = imp_req(n, 0), b = imp_req(n, 1), x, row;
  if (ir_failed(n->g)) return -1;
  /* a dequantized weight: its scale multiplies the sums, not the weights
   * (A of rank 1 would drop the row axis that S's row keeps) */
  if (imp_gshape(n->g, a).rank >= 2 && imp_dequant_scale(n->g, b, &x, &row))
    return imp_set_out(n, 0, imp_mul(n->g, ir_matmul(n->g, a, x), row));
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
