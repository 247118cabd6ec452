/* test_sink_concat.c — element-wise ops after a Concat of reductions moved
 * into the parts (ir/sink_concat.c), checked by the number of ops moved
 * and by running the generated code:
 *   (r + b) then Relu over rows 0 and 1-2 of sums, b per column   both moved
 *   the same with b per row (not a broadcast each part reads)     none
 *   the parts overlapping on row 0, row 2 to neither (a sum)      none
 *   the columns computed as panels, [.., 2, 1, 2] for 4 columns   both moved
 *   (a convolution band's output channels: importer/conv_cols.c)
 * Each output is compared with values computed here: an op applied twice
 * where parts overlap, or a bias read at the wrong row, fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime.h"

#include <string.h>

#define TMPDIR_STEM "unit_sink_concat"
#include "unit_tmpdir.h"
#include "unit_graph.h"

/* Sinks the Concats of `g` (taking it; `want_moved` ops moved), builds it
 * and checks its output z [2, 3, 4, 1] on x (`xs`, `xv`) against `want`. */
static void sink_and_run(ir_graph *g, int want_moved, ir_shape xs, float *xv, const double *want) {
  assert_int_equal(ir_rewrite_sink_concats(g), want_moved);
  if (ir_verify(g)) fail_msg("ir_verify: %s", ir_error(g));
  rt_model *m = build_model_with(g, "sunk", NULL);
  char err[2048];
  imp_tensor in = tensor("x", xs, xv), out[1];
  if (rt_run(m, &in, 1, out, err, sizeof err)) fail_msg("rt_run: %s", err);
  check_close(out[0].data, want, 24, "z");
  imp_tensor_free(&out[0]);
  rt_model_free(m);
}

/* x [2, 3, 4, 5]; r = the sums over the last axis of x's rows 0 (at row 0)
 * and 1-2 (at rows r2, r2 + 1), added into [2, 3, 4, 1]; z = 3 Relu(r + b)
 * with b [4] per column (`per_row`: b [3] per row). */
static void concat_relu(int64_t r2, bool per_row, int want_moved) {
  float xv[120], bv[4] = {0.5f, -40.0f, 2.0f, -1.0f};
  double want[24];
  fill(xv, 120, 17);
  for (int n = 0; n < 2; n++)
    for (int h = 0; h < 3; h++)
      for (int w = 0; w < 4; w++) {
        double s = 0;
        for (int k = 0; k < 5; k++) {
          if (h == 0) s += xv[((n * 3 + h) * 4 + w) * 5 + k];
          if (h >= r2 && h < r2 + 2) s += xv[((n * 3 + h - r2 + 1) * 4 + w) * 5 + k];
        }
        s += per_row ? bv[h] : bv[w];
        want[(n * 3 + h) * 4 + w] = 3.0 * (s > 0 ? s : 0);
      }
  ir_graph *g = ir_graph_new();
  ir_ref x = ir_input(g, "x", IR_F32, SHAPE(2, 3, 4, 5));
  ir_ref x1 = ir_view_slice(g, x, (int64_t[]){0, 0, 0, 0}, (int64_t[]){1, 1, 1, 1}, (int64_t[]){2, 1, 4, 5});
  ir_ref x2 = ir_view_slice(g, x, (int64_t[]){0, 1, 0, 0}, (int64_t[]){1, 1, 1, 1}, (int64_t[]){2, 2, 4, 5});
  ir_ref s1 = ir_reduce(g, IR_ADD, x1, 1u << 3), s2 = ir_reduce(g, IR_ADD, x2, 1u << 3);
  ir_ref p1 = ir_view_pad(g, s1, (int64_t[]){0, 0, 0, 0}, (int64_t[]){0, 2, 0, 0}, 0.0);
  ir_ref p2 = ir_view_pad(g, s2, (int64_t[]){0, r2, 0, 0}, (int64_t[]){0, 1 - r2, 0, 0}, 0.0);
  ir_ref cat = ir_binary(g, IR_ADD, p1, p2);
  ir_ref b = per_row ? ir_view_reshape(g, ir_const(g, "b", IR_F32, SHAPE(3), bv), SHAPE(1, 3, 1, 1))
                     : ir_view_reshape(g, ir_const(g, "b", IR_F32, SHAPE(4), bv), SHAPE(1, 1, 4, 1));
  ir_ref biased = ir_binary(g, IR_ADD, cat, ir_view_expand(g, b, SHAPE(2, 3, 4, 1)));
  ir_ref relu = ir_binary(g, IR_MAX, biased, ir_scalar(g, IR_F32, 0.0));
  finish(g, ir_binary(g, IR_MUL, relu, ir_scalar(g, IR_F32, 3.0)));
  sink_and_run(g, want_moved, SHAPE(2, 3, 4, 5), xv, want);
}

/* As concat_relu(1, false, 2), the sums' 4 columns computed as 2 panels
 * of 2, [2, rows, 2, 1, 2] (the reduced axis between), x [2, 3, 2, 5, 2]:
 * each column of the Concat is a run of two of the sums' axes, and b per
 * column is read over both. */
static void test_moved_panels(void **state) {
  (void)state;
  float xv[120], bv[4] = {0.5f, -40.0f, 2.0f, -1.0f};
  double want[24];
  fill(xv, 120, 29);
  for (int n = 0; n < 2; n++)
    for (int h = 0; h < 3; h++)
      for (int w = 0; w < 4; w++) {
        double s = bv[w];
        for (int k = 0; k < 5; k++) s += xv[(((n * 3 + h) * 2 + w / 2) * 5 + k) * 2 + w % 2];
        want[(n * 3 + h) * 4 + w] = 3.0 * (s > 0 ? s : 0);
      }
  ir_graph *g = ir_graph_new();
  ir_ref x = ir_input(g, "x", IR_F32, SHAPE(2, 3, 2, 5, 2));
  ir_ref x1 = ir_view_slice(g, x, (int64_t[]){0, 0, 0, 0, 0}, (int64_t[]){1, 1, 1, 1, 1}, (int64_t[]){2, 1, 2, 5, 2});
  ir_ref x2 = ir_view_slice(g, x, (int64_t[]){0, 1, 0, 0, 0}, (int64_t[]){1, 1, 1, 1, 1}, (int64_t[]){2, 2, 2, 5, 2});
  ir_ref s1 = ir_view_reshape(g, ir_reduce(g, IR_ADD, x1, 1u << 3), SHAPE(2, 1, 4, 1));
  ir_ref s2 = ir_view_reshape(g, ir_reduce(g, IR_ADD, x2, 1u << 3), SHAPE(2, 2, 4, 1));
  ir_ref p1 = ir_view_pad(g, s1, (int64_t[]){0, 0, 0, 0}, (int64_t[]){0, 2, 0, 0}, 0.0);
  ir_ref p2 = ir_view_pad(g, s2, (int64_t[]){0, 1, 0, 0}, (int64_t[]){0, 0, 0, 0}, 0.0);
  ir_ref cat = ir_binary(g, IR_ADD, p1, p2);
  ir_ref b = ir_view_reshape(g, ir_const(g, "b", IR_F32, SHAPE(4), bv), SHAPE(1, 1, 4, 1));
  ir_ref biased = ir_binary(g, IR_ADD, cat, ir_view_expand(g, b, SHAPE(2, 3, 4, 1)));
  ir_ref relu = ir_binary(g, IR_MAX, biased, ir_scalar(g, IR_F32, 0.0));
  finish(g, ir_binary(g, IR_MUL, relu, ir_scalar(g, IR_F32, 3.0)));
  sink_and_run(g, 2, SHAPE(2, 3, 2, 5, 2), xv, want);
}

/* the bias add and the Relu; z, the output, stays on the Concat */
static void test_moved(void **state) {
  (void)state;
  concat_relu(1, false, 2);
}

static void test_left(void **state) {
  (void)state;
  concat_relu(1, true, 0);
  concat_relu(0, false, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_moved),
      cmocka_unit_test(test_moved_panels),
      cmocka_unit_test(test_left),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
