/* test_weight_layout.c — ir_rewrite_weight_layout (ir/rewrite.c): a weight
 * read out of its own order is laid out again as read, except where the
 * view reads whole runs of 4 KiB or more in order with one outer axis
 * stepping over the rest (the kernel rows of a band of each panel of a
 * convolution's weight, importer/conv_cols.c: a copy per band would stream
 * those rows again). Each graph's output is evaluated before and after the
 * rewrite and compared (unit_rewrite.h), and the rewrite's count says
 * whether the weight was laid out again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ir.h"
#include "unit_rewrite.h"

enum { PANELS = 4, ROWS = 3, MAXW = 512 };

static float wdata[PANELS * ROWS * MAXW];

/* 2 * the rows 1..2 of every panel of a weight [PANELS, ROWS, width] (or,
 * `transposed`, the weight's last two axes swapped). */
static ir_graph *band(int64_t width, bool transposed) {
  for (int i = 0; i < PANELS * ROWS * MAXW; i++) wdata[i] = (float)(i % 977) * 0.25f - 40.0f;
  ir_graph *g = ir_graph_new();
  ir_ref w = ir_const(g, "w", IR_F32, ir_shape_make(3, (int64_t[]){PANELS, ROWS, width}), wdata);
  ir_ref v = transposed ? ir_view_permute(g, w, (int[]){0, 2, 1})
                        : ir_view_slice(g, w, (int64_t[]){0, 1, 0}, (int64_t[]){1, 1, 1},
                                        (int64_t[]){PANELS, 2, width});
  ir_mark_output(g, ir_binary(g, IR_MUL, v, ir_scalar(g, IR_F32, 2.0)), "y");
  return g;
}

static int relayout(ir_graph *g) {
  return ir_rewrite_weight_layout(g, UINT64_MAX);
}

/* rows of 512 floats: runs of 2 x 2 KiB, read where they lie */
static void test_runs_kept(void **state) {
  (void)state;
  check_rewrite(band(512, false), relayout, 0);
}

/* rows of 256: runs of 2 KiB, laid out again */
static void test_short_runs_copied(void **state) {
  (void)state;
  check_rewrite(band(256, false), relayout, 1);
}

/* a transpose reads no runs: laid out again */
static void test_transpose_copied(void **state) {
  (void)state;
  check_rewrite(band(512, true), relayout, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_runs_kept),
      cmocka_unit_test(test_short_runs_copied),
      cmocka_unit_test(test_transpose_copied),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
