/* test_pad_share.c — ir_rewrite_pad_share (ir/pad_share.c): a padded copy
 * MOVE(pad(y)) computes y itself (the pad moved below y's zero-keeping ops)
 * and y's other readers read the copy's interior. Each graph is made of
 * constants, evaluated with ir_eval before and after the rewrite, and the
 * outputs compared; the cases it must leave alone (a pad of another value
 * than 0, an op that does not give 0 on zeros, y an output, another reader
 * beside a transposed copy, a constant other than 0: it would not read
 * as 0 in the border; an operand read across the copy's rows) are checked
 * to be left alone. A reader in steps of 2 reads the interior too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ir.h"
#include "unit_rewrite.h"

enum { C = 3, H = 4, W = 5, N = C * H * W };

static float adata[N], bdata[N], ddata[N];

static ir_shape shape3(void) {
  return ir_shape_make(3, (int64_t[]){C, H, W});
}

/* y = Relu(A + B * -D) [C, H, W] */
static ir_ref residual(ir_graph *g) {
  ir_ref d = ir_unary(g, IR_NEG, ir_const(g, "D", IR_F32, shape3(), ddata));
  ir_ref s = ir_binary(g, IR_MUL, ir_const(g, "B", IR_F32, shape3(), bdata), d);
  s = ir_binary(g, IR_ADD, ir_const(g, "A", IR_F32, shape3(), adata), s);
  return ir_binary(g, IR_MAX, s, ir_scalar(g, IR_F32, 0.0));
}

/* A copy of y padded by one row above, two columns right (`value` outside) */
static ir_ref padded(ir_graph *g, ir_ref y, double value) {
  return ir_move(g, ir_view_pad(g, y, (int64_t[]){0, 1, 0}, (int64_t[]){0, 0, 2}, value));
}

static void check(ir_graph *g, int want) {
  check_rewrite(g, ir_rewrite_pad_share, want);
}

static void test_shares(void **state) {
  (void)state;
  /* y read by the padded copy, by another Add and through a transposing
   * view: both of those read the copy's interior */
  ir_graph *g = ir_graph_new();
  ir_ref y = residual(g);
  ir_ref m = padded(g, y, 0.0);
  assert_int_equal(ir_mark_output(g, m, "m"), 0);
  assert_int_equal(ir_mark_output(g, ir_binary(g, IR_ADD, y, ir_const(g, "E", IR_F32, shape3(), adata)), "z"), 0);
  ir_ref t = ir_view_permute(g, y, (int[]){2, 0, 1});
  assert_int_equal(ir_mark_output(g, ir_binary(g, IR_MUL, t, t), "t"), 0);
  check(g, 1);
  /* y also read in steps of 2 (a stride-2 1x1 convolution's input): the
   * steps compose onto the interior's axes */
  g = ir_graph_new();
  y = residual(g);
  assert_int_equal(ir_mark_output(g, padded(g, y, 0.0), "m"), 0);
  ir_ref sub = ir_view_slice(g, y, (int64_t[]){0, 0, 0}, (int64_t[]){1, 2, 2}, (int64_t[]){C, H / 2, (W + 1) / 2});
  assert_int_equal(ir_mark_output(g, ir_move(g, sub), "s"), 0);
  check(g, 1);
  /* the copy its one reader: the copy computes y */
  g = ir_graph_new();
  assert_int_equal(ir_mark_output(g, padded(g, residual(g), 0.0), "m"), 0);
  check(g, 1);
  /* a transposed copy with no other reader: the pad moves below y too */
  g = ir_graph_new();
  ir_ref p = ir_view_pad(g, residual(g), (int64_t[]){0, 1, 1}, (int64_t[]){0, 1, 1}, 0.0);
  assert_int_equal(ir_mark_output(g, ir_move(g, ir_view_permute(g, p, (int[]){1, 2, 0})), "m"), 0);
  check(g, 1);
}

static void test_leaves_alone(void **state) {
  (void)state;
  /* a pad of -inf (MaxPool's): Relu(-inf) is not -inf */
  ir_graph *g = ir_graph_new();
  ir_ref y = residual(g);
  assert_int_equal(ir_mark_output(g, padded(g, y, -1.0 / 0.0), "m"), 0);
  assert_int_equal(ir_mark_output(g, ir_binary(g, IR_ADD, y, y), "z"), 0);
  check(g, 0);
  /* an op that does not give 0 on zeros (1 / x) */
  g = ir_graph_new();
  y = ir_unary(g, IR_RECIP, residual(g));
  assert_int_equal(ir_mark_output(g, padded(g, y, 0.0), "m"), 0);
  check(g, 0);
  /* a constant other than 0 among y's operands (Relu(x + 0.5)) */
  g = ir_graph_new();
  y = ir_binary(g, IR_ADD, ir_const(g, "A", IR_F32, shape3(), adata), ir_scalar(g, IR_F32, 0.5));
  y = ir_binary(g, IR_MAX, y, ir_scalar(g, IR_F32, 0.0));
  assert_int_equal(ir_mark_output(g, padded(g, y, 0.0), "m"), 0);
  check(g, 0);
  /* an operand read across its rows (channels innermost, the copy's rows
   * along the width): each element a masked read across lines */
  g = ir_graph_new();
  ir_ref tr = ir_view_permute(g, ir_const(g, "T", IR_F32, ir_shape_make(3, (int64_t[]){H, W, C}), adata),
                              (int[]){2, 0, 1});
  y = ir_binary(g, IR_MAX, ir_binary(g, IR_ADD, tr, ir_const(g, "B", IR_F32, shape3(), bdata)),
                ir_scalar(g, IR_F32, 0.0));
  assert_int_equal(ir_mark_output(g, padded(g, y, 0.0), "m"), 0);
  check(g, 0);
  /* y an output itself */
  g = ir_graph_new();
  y = residual(g);
  assert_int_equal(ir_mark_output(g, padded(g, y, 0.0), "m"), 0);
  assert_int_equal(ir_mark_output(g, y, "y"), 0);
  check(g, 0);
  /* another reader beside a transposed copy: it would read across */
  g = ir_graph_new();
  y = residual(g);
  ir_ref p = ir_view_pad(g, y, (int64_t[]){0, 1, 1}, (int64_t[]){0, 1, 1}, 0.0);
  assert_int_equal(ir_mark_output(g, ir_move(g, ir_view_permute(g, p, (int[]){1, 2, 0})), "m"), 0);
  assert_int_equal(ir_mark_output(g, ir_binary(g, IR_ADD, y, y), "z"), 0);
  check(g, 0);
}

int main(void) {
  for (int i = 0; i < N; i++)
    adata[i] = (float)(i % 7) - 3.0f, bdata[i] = (float)(i % 5) * 0.75f - 1.0f, ddata[i] = (float)(i % 3);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shares),
      cmocka_unit_test(test_leaves_alone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
