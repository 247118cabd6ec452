/* test_compare.c — the line run --expect and verify print per output
 * (rt_diff_str): what differs, not "max abs err 0", when the shapes, NaN
 * or infinities differ; the error against the output's scale on a FAIL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "runtime.h"

#include <math.h>
#include <string.h>

static imp_tensor f32(float *v, int rank, const int64_t *dims) {
  imp_tensor t = {.dtype = IR_F32, .shape = ir_shape_make(rank, dims), .data = v};
  t.bytes = (size_t)ir_shape_numel(&t.shape) * sizeof(float);
  return t;
}

/* The line for got against want, in verify's form (run's with `run`). */
static const char *line(const imp_tensor *got, const imp_tensor *want, bool run, bool *ok) {
  static char buf[1024];
  rt_diff d;
  *ok = rt_value_compare(got, want, 1e-5, 1e-3, &d);
  rt_diff_str(got, want, &d, *ok, run ? "expected" : "onnxruntime's", run, buf, sizeof buf);
  return buf;
}

static void test_pass_lines_unchanged(void **state) {
  (void)state;
  float a[2] = {1, 2}, b[2] = {1, 2.001f};
  imp_tensor g = f32(a, 1, (int64_t[]){2}), w = f32(b, 1, (int64_t[]){2});
  bool ok;
  assert_string_equal(line(&g, &w, false, &ok), " f32[2]: max abs err 0.001, max rel err 0.0005: PASS");
  assert_true(ok);
  assert_string_equal(line(&g, &w, true, &ok), " f32[2]: max abs 0.001, max rel 0.0005, 0 mismatches: PASS");
}

static void test_shape(void **state) {
  (void)state;
  float a[7] = {0}, b[7] = {0};
  imp_tensor g = f32(a, 3, (int64_t[]){1, 1, 6}), w = f32(b, 3, (int64_t[]){1, 1, 7});
  bool ok;
  assert_string_equal(line(&g, &w, false, &ok), ": shape f32[1,1,6], onnxruntime's f32[1,1,7]: FAIL");
  assert_false(ok);
  w.shape = g.shape, w.dtype = IR_I32;
  assert_string_equal(line(&g, &w, true, &ok), ": dtype f32[1,1,6], expected i32[1,1,6]: FAIL");
  w.shape = ir_shape_make(1, (int64_t[]){6});
  assert_string_equal(line(&g, &w, true, &ok), ": dtype and shape f32[1,1,6], expected i32[6]: FAIL");
}

static void test_nan_inf(void **state) {
  (void)state;
  float a[6] = {NAN, 1, NAN, INFINITY, 5, 6}, b[6] = {0, NAN, 0, 3, -INFINITY, 6};
  imp_tensor g = f32(a, 2, (int64_t[]){2, 3}), w = f32(b, 2, (int64_t[]){2, 3});
  bool ok;
  assert_string_equal(line(&g, &w, false, &ok),
                      " f32[2,3]: 2 NaN, numbers in onnxruntime's (first at [0,0]), "
                      "1 NaN in onnxruntime's, numbers here (first at [0,1]), "
                      "1 inf, other values in onnxruntime's (first at [1,0]), "
                      "1 inf in onnxruntime's, other values here (first at [1,1]): FAIL");
  assert_false(ok);
  /* a finite error besides: its max abs and scale too (the inf is not the scale) */
  a[5] = 7;
  assert_string_equal(line(&g, &w, true, &ok),
                      " f32[2,3]: 2 NaN, numbers in expected (first at [0,0]), "
                      "1 NaN in expected, numbers here (first at [0,1]), "
                      "1 inf, other values in expected (first at [1,0]), "
                      "1 inf in expected, other values here (first at [1,1]), "
                      "max abs 1, max rel 0.167, 6 mismatches, scaled err 0.167 (max |expected| 6): FAIL");
}

/* A correct float32 answer on outputs reaching 320, off by 0.02 where a
 * value is small: the scaled error says it is rounding. */
static void test_scaled(void **state) {
  (void)state;
  float a[3] = {320, -100, 0.5f}, b[3] = {320, -100, 0.5196f};
  imp_tensor g = f32(a, 1, (int64_t[]){3}), w = f32(b, 1, (int64_t[]){3});
  bool ok;
  const char *s = line(&g, &w, false, &ok);
  assert_false(ok);
  assert_non_null(strstr(s, ": max abs err 0.0196, max rel err 0.0377, scaled err 6.1"));
  assert_non_null(strstr(s, "e-05 (max |onnxruntime's| 320): FAIL"));
  b[0] = b[1] = b[2] = 0;
  a[0] = a[1] = 0; /* nothing to scale by: left out */
  assert_string_equal(line(&g, &w, false, &ok), " f32[3]: max abs err 0.5, max rel err 0: FAIL");
}

/* Sequences: the first element whose shape differs, and where a NaN is. */
static void test_sequence(void **state) {
  (void)state;
  float a[4] = {1, 2, 3, NAN}, b[4] = {1, 2, 3, 4};
  imp_tensor ge[2] = {f32(a, 1, (int64_t[]){2}), f32(a + 2, 1, (int64_t[]){2})};
  imp_tensor we[2] = {f32(b, 1, (int64_t[]){2}), f32(b + 2, 1, (int64_t[]){2})};
  imp_tensor g = {.kind = IMP_IO_SEQUENCE, .present = true, .nelem = 2, .elem = ge}, w = g;
  w.elem = we;
  bool ok;
  assert_string_equal(line(&g, &w, true, &ok),
                      " f32 sequence of 2: 1 NaN, numbers in expected (first at [1] of element 1), 1 mismatches: FAIL");
  we[1].shape = ir_shape_make(1, (int64_t[]){1});
  assert_string_equal(line(&g, &w, true, &ok), ": element 1 shape f32[2], expected f32[1]: FAIL");
  w.nelem = 1;
  assert_string_equal(line(&g, &w, true, &ok), ": f32 sequence of 2, expected f32 sequence of 1: FAIL");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pass_lines_unchanged), cmocka_unit_test(test_shape), cmocka_unit_test(test_nan_inf),
      cmocka_unit_test(test_scaled),               cmocka_unit_test(test_sequence),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
