/* op_quant.c — QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and
 * QLinearMatMul, lowered onto IR primitives with ONNX's rounding
 * (round half to even, saturation) in float64. */
#include "importer_impl.h"

#include <math.h>

/* ---------- rounding and quantization ---------- */

/* Reshapes a 1-D scale / zero point of more than one element to broadcast
 * along the `axis` attribute of x; scalars are left as they are. */
static int per_axis(imp_node *n, ir_ref x, ir_ref *s, ir_ref *zp) {
  int rank = imp_gshape(n->g, x).rank;
  if (ir_shape_numel(imp_shape(n, *s)) <= 1 && imp_gshape(n->g, *s).rank <= 1) {
    /* a [1] scale must not turn a scalar x into a [1] result */
    ir_shape sc = {0};
    if (rank == 0) {
      *s = ir_view_reshape(n->g, *s, sc);
      if (*zp != IR_NONE) *zp = ir_view_reshape(n->g, *zp, sc);
    }
    return 0;
  }
  int axis = imp_axis(n, imp_attr_i(n, "axis", 1), rank);
  if (axis < 0) return -1;
  *s = imp_along(n->g, *s, rank, axis), *zp = imp_along(n->g, *zp, rank, axis);
  return 0;
}

static int lower_quantize(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), s = imp_req(n, 1), zp = imp_in(n, 2);
  if (ir_failed(g) || imp_need_static(n, 1) || imp_need_static(n, 2)) return -1;
  if (imp_gdtype(g, x) == IR_F16 || imp_gdtype(g, s) == IR_F16) return imp_fail(n, "float16 dtype not supported");
  if (imp_has_attr(n, "block_size") && imp_attr_i(n, "block_size", 0) != 0)
    return imp_fail(n, "blocked quantization (block_size) is not supported");
  ir_dtype out = zp != IR_NONE ? imp_gdtype(g, zp) : (ir_dtype)IR_U8;
  if (zp == IR_NONE && imp_has_attr(n, "output_dtype")) {
    int64_t od = imp_attr_i(n, "output_dtype", 2);
    if (od == 2) out = IR_U8;
    else if (od == 3) out = IR_I8;
    else if (od == 4) out = IR_U16;
    else if (od == 5) out = IR_I16;
    else return imp_fail(n, "output_dtype %lld is not supported", (long long)od);
  }
  double lo, hi;
  if (!imp_qrange(out, &lo, &hi) || out == IR_I32) return imp_fail(n, "output type %s is not supported", ir_dtype_name(out));
  if (per_axis(n, x, &s, &zp)) return -1;
  return imp_set_out(n, 0, imp_requant(g, imp_div_f32(g, x, s), zp, out));
}

/* A constant of zeros (a symmetric zero point): subtracting it is skipped,
 * one operation less per weight element inside a matmul. */
static bool all_zero(ir_graph *g, ir_ref r) {
  while (ir_node_get(g, r)->op == IR_VIEW && !ir_node_get(g, r)->view.gather) r = ir_node_get(g, r)->src[0];
  const ir_node *x = ir_node_get(g, r);
  if (x->op != IR_ALLOCATE || !x->data || !ir_shape_is_static(&x->shape)) return false;
  size_t bytes = (size_t)ir_shape_numel(&x->shape) * ir_dtype_size(x->dtype);
  const unsigned char *d = x->data;
  for (size_t i = 0; i < bytes; i++)
    if (d[i]) return false;
  return true;
}

static int lower_dequantize(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), s = imp_req(n, 1), zp = imp_in(n, 2);
  if (ir_failed(g) || imp_need_static(n, 1) || imp_need_static(n, 2)) return -1;
  ir_dtype ft = imp_gdtype(g, s);
  if (ft == IR_F16) return imp_fail(n, "float16 dtype not supported");
  if (imp_has_attr(n, "block_size") && imp_attr_i(n, "block_size", 0) != 0)
    return imp_fail(n, "blocked quantization (block_size) is not supported");
  if (per_axis(n, x, &s, &zp)) return -1;
  ir_ref v = ir_cast(g, x, ft);
  if (zp != IR_NONE && !all_zero(g, zp)) v = ir_sub(g, v, ir_cast(g, zp, ft));
  return imp_set_out(n, 0, imp_mul(g, v, s));
}

/* B = X * S (a DequantizeLinear as lowered above) with X a widened one-byte
 * integer, less its zero point or not, and S a view that is the same for
 * every k (axis -2 of B: a per-tensor or per-column scale). A MatMul then
 * multiplies S once per output (sum_k a_k x_kn) * s_n instead of once per
 * weight element inside the sum, which leaves a widen and one FMA per
 * weight. Fills *x and *row (S's row: size 1 on axis -2). */
bool imp_dequant_scale(ir_graph *g, ir_ref b, ir_ref *x, ir_ref *row) {
  const ir_node *m = ir_node_get(g, b);
  int rank = m->shape.rank;
  if (m->op != IR_MUL || m->dtype != IR_F32 || rank < 2) return false;
  const ir_node *xv = ir_node_get(g, m->src[0]), *sv = ir_node_get(g, m->src[1]);
  const ir_node *c = xv->op == IR_ADD ? ir_node_get(g, xv->src[0]) : xv; /* less a zero point: ADD(x, NEG(zp)) */
  if (c->op != IR_CAST) return false;
  ir_dtype q = ir_node_get(g, c->src[0])->dtype;
  if (q != IR_I8 && q != IR_U8) return false;
  if (sv->op != IR_VIEW || sv->view.gather || sv->view.masked || sv->view.stride[rank - 2] != 0) return false;
  *x = m->src[0];
  *row = imp_take(g, m->src[1], rank - 2, 0, 1);
  return *row != IR_NONE;
}

/* uint8 quantization with scale (max(0,x) - min(0,x)) / 255 and the zero
 * point that maps 0 exactly. */
static int lower_dynquant(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (ir_failed(g)) return -1;
  if (imp_gdtype(g, x) != IR_F32) return imp_fail(n, "input type %s is not supported (float32 only)", ir_dtype_name(imp_gdtype(g, x)));
  uint32_t all = 0;
  int rank = imp_gshape(g, x).rank;
  for (int i = 0; i < rank; i++) all |= 1u << i;
  ir_ref mx = ir_binary(g, IR_MAX, ir_max_reduce(g, x, all, false), imp_k(g, x, 0));
  ir_ref mn = ir_min(g, ir_min_reduce(g, x, all, false), imp_k(g, x, 0));
  ir_ref range = ir_sub(g, mx, mn);
  range = ir_where(g, ir_eq(g, range, imp_k(g, x, 0)), imp_k(g, x, 1), range);
  ir_ref scale = ir_cast(g, imp_div_f32(g, range, imp_k(g, x, 255)), IR_F32);
  ir_ref zpf = ir_sub(g, imp_k(g, x, 0), ir_cast(g, imp_div_f32(g, mn, scale), IR_F32));
  zpf = imp_clamp(g, zpf, 0, 255);
  ir_ref zp = ir_cast(g, imp_round_even(g, ir_cast(g, zpf, IR_F64)), IR_U8);
  ir_ref y = imp_requant(g, imp_div_f32(g, x, scale), zp, IR_U8);
  if (imp_set_out(n, 0, y)) return -1;
  if (imp_has_out(n, 1) && imp_set_out(n, 1, scale)) return -1;
  if (imp_has_out(n, 2) && imp_set_out(n, 2, zp)) return -1;
  return 0;
}

static int lower_qlinearmatmul(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref a = imp_req(n, 0), as = imp_req(n, 1), az = imp_req(n, 2), b = imp_req(n, 3), bs = imp_req(n, 4);
  ir_ref bz = imp_req(n, 5), ys = imp_req(n, 6), yz = imp_req(n, 7);
  if (ir_failed(g)) return -1;
  for (int i = 1; i < 8; i++) /* the scales and zero points: their shapes pick the broadcast */
    if (i != 3 && imp_need_static(n, i)) return -1;
  int ra = imp_gshape(g, a).rank, rb = imp_gshape(g, b).rank;
  /* a's zero point is per row (axis -2), b's per column (axis -1) */
  ir_ref av = imp_shift_i32(g, a, imp_gshape(g, az).rank == 1 && imp_gshape(g, az).d[0] > 1 ? imp_along(g, az, ra, ra - 2) : az, 0);
  ir_ref bv = imp_shift_i32(g, b, bz, rb - 1);
  ir_ref acc = ir_matmul(g, av, bv);
  ir_ref asr = imp_gshape(g, as).rank == 1 && imp_gshape(g, as).d[0] > 1 ? imp_along(g, as, 2, 0) : as;
  ir_ref m = imp_qmultiplier(g, asr, bs, ys);
  ir_ref v = ir_cast(g, imp_mul(g, ir_cast(g, acc, IR_F32), m), IR_F64);
  return imp_set_out(n, 0, imp_requant(g, v, yz, imp_gdtype(g, yz)));
}


const imp_op_entry imp_ops_quant[] = {
    {"QuantizeLinear", lower_quantize, IMP_SYM},
    {"DequantizeLinear", lower_dequantize, IMP_SYM},
    {"DynamicQuantizeLinear", lower_dynquant, IMP_SYM},
    {"QLinearMatMul", lower_qlinearmatmul, IMP_SYM},
    {NULL, NULL, 0},
};
