/* test_sink_region.c — ir_rewrite_sink_regions (ir/sink_region.c):
 * element-wise nodes after a view that selects part of a single-use value
 * move in front of it. Each
 * graph is made of constants, evaluated with ir_eval before and after the
 * rewrite, and the outputs compared; the cases it must leave alone (a
 * masked view, a value with another use, a view that selects less than
 * half, an operand that is not a constant) are checked to be left alone;
 * an in-place reshape that splits an axis also takes a residual. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ir.h"
#include "unit_rewrite.h"

#include <stdlib.h>
#include <string.h>

enum { R = 3, C = 10, W = 8 };

static float adata[R * C], bdata[R * C];

static ir_shape shape2(int64_t a, int64_t b) {
  return ir_shape_make(2, (int64_t[]){a, b});
}

/* P = A + B [R, C]; V = w columns of P from column 1, `step` apart. */
static ir_ref selected(ir_graph *g, int64_t w, int64_t step, ir_ref *p) {
  *p = ir_binary(g, IR_ADD, ir_const(g, "A", IR_F32, shape2(R, C), adata),
                 ir_const(g, "B", IR_F32, shape2(R, C), bdata));
  return ir_view_slice(g, *p, (int64_t[]){0, 1}, (int64_t[]){1, step}, (int64_t[]){R, w});
}

/* HardSwish-like: v * min(max(v / 6 + 0.5, 0), 1), and v + 1 beside it */
static ir_ref activation(ir_graph *g, ir_ref v) {
  ir_ref t = ir_binary(g, IR_ADD, ir_binary(g, IR_MUL, v, ir_scalar(g, IR_F32, 1.0 / 6)), ir_scalar(g, IR_F32, 0.5));
  ir_ref c = ir_min(g, ir_binary(g, IR_MAX, t, ir_scalar(g, IR_F32, 0.0)), ir_scalar(g, IR_F32, 1.0));
  return ir_binary(g, IR_MUL, v, c);
}

static void check(ir_graph *g, int want) {
  check_rewrite(g, ir_rewrite_sink_regions, want);
}

static void test_moves_activation(void **state) {
  (void)state;
  /* a strided selection; a second output inside the region (v + 1) gets
   * a view of its own */
  ir_graph *g = ir_graph_new();
  ir_ref p, v = selected(g, 5, 2, &p);
  assert_int_equal(ir_mark_output(g, activation(g, v), "y"), 0);
  assert_int_equal(ir_mark_output(g, ir_binary(g, IR_ADD, v, ir_scalar(g, IR_F32, 1.0)), "z"), 0);
  check(g, 2);
  /* the activation's result consumed by an op outside (a sum): one view */
  g = ir_graph_new();
  v = selected(g, W, 1, &p);
  assert_int_equal(ir_mark_output(g, ir_sum(g, activation(g, v), 2u, false), "s"), 0);
  check(g, 1);
}

static void test_leaves_alone(void **state) {
  (void)state;
  ir_graph *g = ir_graph_new();
  ir_ref p, v = selected(g, W, 1, &p);
  /* masked: the padding would not stay what it was */
  ir_ref m = ir_view_pad(g, v, (int64_t[]){0, 1}, (int64_t[]){0, 0}, 0.0);
  assert_int_equal(ir_mark_output(g, activation(g, m), "y"), 0);
  check(g, 0);
  /* P read elsewhere too */
  g = ir_graph_new();
  v = selected(g, W, 1, &p);
  assert_int_equal(ir_mark_output(g, activation(g, v), "y"), 0);
  assert_int_equal(ir_mark_output(g, p, "p"), 0);
  check(g, 0);
  /* less than half of P selected: more work wasted than saved */
  g = ir_graph_new();
  v = selected(g, 4, 1, &p);
  assert_int_equal(ir_mark_output(g, activation(g, v), "y"), 0);
  check(g, 0);
  /* an operand that is not a constant (another input's values) */
  g = ir_graph_new();
  v = selected(g, W, 1, &p);
  ir_ref other = ir_const(g, "O", IR_F32, shape2(R, W), adata);
  assert_int_equal(ir_mark_output(g, ir_binary(g, IR_MUL, v, other), "y"), 0);
  check(g, 0);
}

/* P [R, C] read whole as [R, 2, C/2] (a 1x1 convolution's flat positions
 * read as rows): the activation and an added value of the view's shape
 * (a residual) move onto P; a view read of the result then reads the new
 * value itself. A reshape that only adds an axis of 1 is left alone. */
static void test_reshape(void **state) {
  (void)state;
  ir_graph *g = ir_graph_new();
  ir_ref p = ir_binary(g, IR_ADD, ir_const(g, "A", IR_F32, shape2(R, C), adata),
                       ir_const(g, "B", IR_F32, shape2(R, C), bdata));
  ir_shape vs = ir_shape_make(3, (int64_t[]){R, 2, C / 2});
  ir_ref v = ir_view_reshape(g, p, vs);
  ir_ref res = ir_const(g, "O", IR_F32, vs, bdata);
  ir_ref y = ir_binary(g, IR_ADD, activation(g, v), res);
  assert_int_equal(ir_mark_output(g, y, "y"), 0);
  ir_ref t = ir_view_slice(g, y, (int64_t[]){0, 1, 1}, (int64_t[]){1, 1, 2}, (int64_t[]){R, 1, 2});
  assert_int_equal(ir_mark_output(g, ir_binary(g, IR_MUL, t, t), "t"), 0);
  check(g, 1);
  g = ir_graph_new();
  p = ir_binary(g, IR_ADD, ir_const(g, "A", IR_F32, shape2(R, C), adata),
                ir_const(g, "B", IR_F32, shape2(R, C), bdata));
  v = ir_view_reshape(g, p, ir_shape_make(3, (int64_t[]){R, 1, C}));
  assert_int_equal(ir_mark_output(g, activation(g, v), "y"), 0);
  check(g, 0);
}

int main(void) {
  for (int i = 0; i < R * C; i++) adata[i] = (float)(i % 7) - 3.0f, bdata[i] = (float)(i % 5) * 0.75f - 1.0f;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_moves_activation),
      cmocka_unit_test(test_leaves_alone),
      cmocka_unit_test(test_reshape),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
