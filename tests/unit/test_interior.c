/* test_interior.c — values stored inside the padded copy that reads them
 * (scheduler/interior.c), checked by running the generated code:
 *   a wide result (rows of 4, the last column never read) padded as a
 *     convolution's input                   stored inside: one buffer
 *   a compact [2, 3, 3] padded on all sides  stored inside (row stride 5)
 *   positions x channels split in two axes   stored inside (14x14's form)
 *   the same with a second reader            its own buffer
 *   a transposed padded copy                 its own buffer
 *   a Concat of two parts (rows 0 and 1-2)   the parts stored inside, no
 *     padded as a convolution's input         Concat kernel
 *   the same with the parts overlapping      the Concat stored inside, the
 *     (a sum, not a Concat), or a row left     parts in their own buffers
 *     to neither
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

/* Runs the graph on input values xv and compares output z with `want`
 * (`n` values); checks the stored values, border-only copies and kernels. */
static void run_checked(ir_graph *g, float *xv, const double *want, int n, int want_stored, int want_borders,
                        int want_kernels, bool other) {
  ir_shape xs = ir_node_get(g, ir_input_ref(g, 0))->shape;
  rt_model *m = build_model_with(g, "padded", NULL);
  int stored, borders;
  count_interiors(m->p, &stored, &borders);
  assert_int_equal(stored, want_stored);
  assert_int_equal(borders, want_borders);
  if (want_kernels) assert_int_equal(m->p->nkernels, want_kernels);
  char err[2048];
  imp_tensor in = tensor("x", xs, xv), out[2];
  if (rt_run(m, &in, 1, out, err, sizeof err)) fail_msg("rt_run: %s", err);
  check_close(out[0].data, want, n, "z");
  imp_tensor_free(&out[0]);
  if (other) imp_tensor_free(&out[1]);
  rt_model_free(m);
}

/* Copies view `v` (of y = x + x, x the graph's input, `xv` its values),
 * reads the copy as z = copy * 3 (with `other`, y is an output too),
 * checks how many values are stored inside a copy and z against `want`
 * (the padded 6 x, `n` values). */
static void check_padded(ir_graph *g, ir_ref y, ir_ref v, bool other, int want_stored, float *xv,
                         const double *want, int n) {
  finish(g, ir_binary(g, IR_MUL, ir_move(g, v), ir_scalar(g, IR_F32, 3.0)));
  if (other) assert_int_equal(ir_mark_output(g, y, "y2"), 0);
  run_checked(g, xv, want, n, want_stored, want_stored, 0, other);
}

/* x + x over input x of shape s. */
static ir_ref doubled(ir_graph *g, ir_shape s) {
  ir_ref x = ir_input(g, "x", IR_F32, s);
  return ir_binary(g, IR_ADD, x, x);
}

/* y [2, 12] as [2, 3, 4] with the last column dropped, padded by a row
 * above and below and a column on the left: [2, 5, 4], the wide
 * convolution's input. */
static void test_wide(void **state) {
  (void)state;
  float xv[24];
  double want[40];
  fill(xv, 24, 7);
  for (int c = 0; c < 2; c++)
    for (int r = 0; r < 5; r++)
      for (int q = 0; q < 4; q++)
        want[c * 20 + r * 4 + q] = r >= 1 && r <= 3 && q >= 1 ? 6.0 * xv[c * 12 + (r - 1) * 4 + q - 1] : 0.0;
  ir_graph *g = ir_graph_new();
  ir_ref y = doubled(g, SHAPE(2, 12));
  ir_ref v = ir_view_slice(g, ir_view_reshape(g, y, SHAPE(2, 3, 4)), (int64_t[]){0, 0, 0}, (int64_t[]){1, 1, 1},
                           (int64_t[]){2, 3, 3});
  check_padded(g, y, ir_view_pad(g, v, (int64_t[]){0, 1, 1}, (int64_t[]){0, 1, 0}, 0.0), false, 1, xv, want, 40);
}

/* Channels innermost, split in two axes (as the 14x14 columns form
 * stores them): y [6, 2, 4], the positions of 2 rows of 3 (the last never
 * read) by 8 channels, padded to [4, 3, 10] (a row above and below, a
 * column on the left, 2 channels more): y's position axis gets the
 * copy's column stride 10, its channel axes 4 and 1. */
static void test_channels_innermost(void **state) {
  (void)state;
  float xv[48];
  double want[120];
  fill(xv, 48, 5);
  for (int r = 0; r < 4; r++)
    for (int q = 0; q < 3; q++)
      for (int c = 0; c < 10; c++)
        want[(r * 3 + q) * 10 + c] = r >= 1 && r <= 2 && q >= 1 && c < 8 ? 6.0 * xv[((r - 1) * 3 + q - 1) * 8 + c] : 0.0;
  ir_graph *g = ir_graph_new();
  ir_ref y = doubled(g, SHAPE(6, 2, 4));
  ir_ref v = ir_view_slice(g, ir_view_reshape(g, y, SHAPE(2, 3, 8)), (int64_t[]){0, 0, 0}, (int64_t[]){1, 1, 1},
                           (int64_t[]){2, 2, 8});
  check_padded(g, y, ir_view_pad(g, v, (int64_t[]){1, 1, 0}, (int64_t[]){1, 0, 2}, 0.0), false, 1, xv, want, 120);
}

/* y [2, 3, 3] padded by 1 on every side ([2, 5, 5]); with `other`, y is
 * an output too; with `transposed`, the copy is [5, 5, 2]. */
static void padded(bool other, bool transposed, int want_stored) {
  float xv[18];
  double want[50];
  fill(xv, 18, 11);
  for (int c = 0; c < 2; c++)
    for (int r = 0; r < 5; r++)
      for (int q = 0; q < 5; q++) {
        double e = r >= 1 && r <= 3 && q >= 1 && q <= 3 ? 6.0 * xv[c * 9 + (r - 1) * 3 + q - 1] : 0.0;
        want[transposed ? (r * 5 + q) * 2 + c : c * 25 + r * 5 + q] = e;
      }
  ir_graph *g = ir_graph_new();
  ir_ref y = doubled(g, SHAPE(2, 3, 3));
  ir_ref v = ir_view_pad(g, y, (int64_t[]){0, 1, 1}, (int64_t[]){0, 1, 1}, 0.0);
  if (transposed) v = ir_view_permute(g, v, (int[]){1, 2, 0});
  check_padded(g, y, v, other, want_stored, xv, want, 50);
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

/* x [2, 3, 4]; the parts 2 x[:, 0:n1] at rows 0..n1-1 and 2 x[:, 1:3] at
 * rows r, r + 1, added into [2, 3, 4] (n1 = 1, r = 1: a Concat; n1 = 2:
 * they overlap on row 1, a sum), padded by a row above and below and a
 * column on the left ([2, 5, 5]), read as z = copy * 3. */
static void concat(int64_t n1, int64_t r, int want_stored, int want_borders, int want_kernels) {
  float xv[24];
  double want[50];
  fill(xv, 24, 13);
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < 5; i++)
      for (int q = 0; q < 5; q++) {
        double e = 0;
        if (i >= 1 && i <= 3 && q >= 1) {
          int h = i - 1, w = q - 1;
          e = (h < n1 ? 6.0 * xv[c * 12 + h * 4 + w] : 0.0) +
              (h >= r && h < r + 2 ? 6.0 * xv[c * 12 + (h - r + 1) * 4 + w] : 0.0);
        }
        want[c * 25 + i * 5 + q] = e;
      }
  ir_graph *g = ir_graph_new();
  ir_ref x = ir_input(g, "x", IR_F32, SHAPE(2, 3, 4));
  ir_ref x1 = ir_view_slice(g, x, (int64_t[]){0, 0, 0}, (int64_t[]){1, 1, 1}, (int64_t[]){2, n1, 4});
  ir_ref x2 = ir_view_slice(g, x, (int64_t[]){0, 1, 0}, (int64_t[]){1, 1, 1}, (int64_t[]){2, 2, 4});
  ir_ref y1 = ir_binary(g, IR_ADD, x1, x1), y2 = ir_binary(g, IR_ADD, x2, x2);
  ir_ref p1 = ir_view_pad(g, y1, (int64_t[]){0, 0, 0}, (int64_t[]){0, 3 - n1, 0}, 0.0);
  ir_ref p2 = ir_view_pad(g, y2, (int64_t[]){0, r, 0}, (int64_t[]){0, 1 - r, 0}, 0.0);
  ir_ref cat = ir_binary(g, IR_ADD, p1, p2);
  ir_ref v = ir_view_pad(g, cat, (int64_t[]){0, 1, 1}, (int64_t[]){0, 1, 0}, 0.0);
  finish(g, ir_binary(g, IR_MUL, ir_move(g, v), ir_scalar(g, IR_F32, 3.0)));
  run_checked(g, xv, want, 50, want_stored, want_borders, want_kernels, false);
}

/* the parts, the border and z: no kernel for the Concat */
static void test_concat(void **state) {
  (void)state;
  concat(1, 1, 3, 1, 4);
}

/* a sum of overlapping parts is computed (its own kernel, stored inside):
 * covering every row, and leaving row 2 to neither */
static void test_concat_overlap(void **state) {
  (void)state;
  concat(2, 1, 1, 1, 5);
  concat(1, 0, 1, 1, 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wide),
      cmocka_unit_test(test_compact),
      cmocka_unit_test(test_channels_innermost),
      cmocka_unit_test(test_leaves_alone),
      cmocka_unit_test(test_concat),
      cmocka_unit_test(test_concat_overlap),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
