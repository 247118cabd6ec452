/* test_interior.c — values stored inside the padded copy that reads them
 * (scheduler/interior.c), checked by running the generated code:
 *   a wide result (rows of 4, the last column never read) padded as a
 *     convolution's input                   stored inside: one buffer
 *   a compact [2, 3, 3] padded on all sides  stored inside (row stride 5)
 *   the same with a second reader            its own buffer
 *   a transposed padded copy                 its own buffer
 * Each output is compared with the padded values computed here, so a wrong
 * offset, stride or border fails; the counts pin where the store applies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime.h"

#include <string.h>

#define TMPDIR_STEM "unit_interior"
#include "unit_tmpdir.h"
#include "unit_graph.h"

/* Values stored inside a copy, and copies written only at their border. */
static void count_interiors(const sched_program *p, int *stored, int *borders) {
  *stored = *borders = 0;
  for (int r = 0; r < ir_graph_count(p->g); r++) *stored += p->store[r].on, *borders += p->border_only[r];
}

/* y = x + x, x [2, 12] as [2, 3, 4] with the last column dropped, padded
 * by a row above and below and a column on the left: [2, 5, 4], the wide
 * convolution's input (scheduler/interior.c); read by z = p * 3. */
static void test_wide(void **state) {
  (void)state;
  ir_graph *g = ir_graph_new();
  ir_ref x = ir_input(g, "x", IR_F32, SHAPE(2, 12));
  ir_ref y = ir_binary(g, IR_ADD, x, x);
  ir_ref v = ir_view_slice(g, ir_view_reshape(g, y, SHAPE(2, 3, 4)), (int64_t[]){0, 0, 0}, (int64_t[]){1, 1, 1},
                           (int64_t[]){2, 3, 3});
  ir_ref p = ir_move(g, ir_view_pad(g, v, (int64_t[]){0, 1, 1}, (int64_t[]){0, 1, 0}, 0.0));
  finish(g, ir_binary(g, IR_MUL, p, ir_scalar(g, IR_F32, 3.0)));
  rt_model *m = build_model_with(g, "wide", NULL);
  int stored, borders;
  count_interiors(m->p, &stored, &borders);
  assert_int_equal(stored, 1);
  assert_int_equal(borders, 1);
  float xv[24];
  double want[40];
  fill(xv, 24, 7);
  for (int c = 0; c < 2; c++)
    for (int r = 0; r < 5; r++)
      for (int q = 0; q < 4; q++)
        want[c * 20 + r * 4 + q] =
            r >= 1 && r <= 3 && q >= 1 ? 6.0 * xv[c * 12 + (r - 1) * 4 + q - 1] : 0.0;
  char err[2048];
  imp_tensor in = tensor("x", SHAPE(2, 12), xv), out;
  if (rt_run(m, &in, 1, &out, err, sizeof err)) fail_msg("rt_run: %s", err);
  check_close(out.data, want, 40, "z");
  imp_tensor_free(&out);
  rt_model_free(m);
}

/* y = x + x, x [2, 3, 3], padded by 1 on every side ([2, 5, 5]); with
 * `other`, y is an output too; with `transposed`, the copy is [5, 5, 2]. */
static void padded(bool other, bool transposed, int want_stored) {
  ir_graph *g = ir_graph_new();
  ir_ref x = ir_input(g, "x", IR_F32, SHAPE(2, 3, 3));
  ir_ref y = ir_binary(g, IR_ADD, x, x);
  ir_ref v = ir_view_pad(g, y, (int64_t[]){0, 1, 1}, (int64_t[]){0, 1, 1}, 0.0);
  if (transposed) v = ir_view_permute(g, v, (int[]){1, 2, 0});
  ir_ref p = ir_move(g, v);
  finish(g, ir_binary(g, IR_MUL, p, ir_scalar(g, IR_F32, 3.0)));
  if (other) assert_int_equal(ir_mark_output(g, y, "y2"), 0);
  rt_model *m = build_model_with(g, "padded", NULL);
  int stored, borders;
  count_interiors(m->p, &stored, &borders);
  assert_int_equal(stored, want_stored);
  assert_int_equal(borders, want_stored);
  float xv[18];
  double want[50];
  fill(xv, 18, 11);
  for (int c = 0; c < 2; c++)
    for (int r = 0; r < 5; r++)
      for (int q = 0; q < 5; q++) {
        double e = r >= 1 && r <= 3 && q >= 1 && q <= 3 ? 6.0 * xv[c * 9 + (r - 1) * 3 + q - 1] : 0.0;
        want[transposed ? (r * 5 + q) * 2 + c : c * 25 + r * 5 + q] = e;
      }
  char err[2048];
  imp_tensor in = tensor("x", SHAPE(2, 3, 3), xv), out[2];
  if (rt_run(m, &in, 1, out, err, sizeof err)) fail_msg("rt_run: %s", err);
  check_close(out[0].data, want, 50, "z");
  imp_tensor_free(&out[0]);
  if (other) imp_tensor_free(&out[1]);
  rt_model_free(m);
}

static void test_compact(void **state) {
  (void)state;
  padded(false, false, 1);
}

static void test_leaves_alone(void **state) {
  (void)state;
  padded(true, false, 0);
  padded(false, true, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wide),
      cmocka_unit_test(test_compact),
      cmocka_unit_test(test_leaves_alone),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
