/* test_tensor_io.c — .pb tensor files (rt_tensor_write / rt_tensor_read)
 * and the output comparison (rt_compare). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

#define TMPDIR_STEM "unit_tensor_io"
#include "unit_tmpdir.h"

static void tmp_path(char *buf, size_t n, const char *stem) {
  snprintf(buf, n, "%s/%s", tmpdir, stem);
}

static void write_bytes(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  if (len) assert_int_equal(fwrite(data, 1, len, f), len);
  fclose(f);
}

/* Distinct, dtype-valid contents (bool holds only 0/1). */
static void fill(imp_tensor *t) {
  int64_t n = ir_shape_numel(&t->shape);
  for (int64_t i = 0; i < n; i++) {
    if (t->dtype == IR_BOOL) ir_elem_set_i(t->dtype, t->data, i, i % 3 == 0);
    else if (ir_dtype_is_float(t->dtype)) ir_elem_set_f(t->dtype, t->data, i, 0.25 * (double)i - 3.5);
    else ir_elem_set_i(t->dtype, t->data, i, i * 7 + 1);
  }
}

/* Writes a tensor of dtype `dt` and shape `s`, reads it back, compares. */
static void roundtrip(ir_dtype dt, ir_shape s) {
  imp_tensor t = {0}, r = {0};
  char path[400], err[1024] = "", sh[128];
  ir_shape_str(&s, sh, sizeof sh);
  t.name = "tensor_name";
  t.dtype = dt;
  t.shape = s;
  t.bytes = (size_t)ir_shape_numel(&s) * ir_dtype_size(dt);
  t.data = calloc(1, t.bytes + 1);
  assert_non_null(t.data);
  fill(&t);
  snprintf(path, sizeof path, "%s/rt_%s_%d.pb", tmpdir, ir_dtype_name(dt), s.rank);
  assert_int_equal(rt_tensor_write(path, &t, err, sizeof err), 0);
  if (rt_tensor_read(path, &r, err, sizeof err)) fail_msg("read %s %s: %s", ir_dtype_name(dt), sh, err);
  assert_int_equal(r.dtype, dt);
  assert_true(ir_shape_eq(&r.shape, &s));
  assert_int_equal(r.bytes, t.bytes);
  assert_string_equal(r.name, "tensor_name");
  if (t.bytes) assert_memory_equal(r.data, t.data, t.bytes);
  imp_tensor_free(&r);
  free(t.data);
}

static void test_roundtrip_all_dtypes_ranks(void **state) {
  (void)state;
  static const ir_dtype dts[] = {IR_F32, IR_F64, IR_F16, IR_I8,  IR_I16, IR_I32,
                                 IR_I64, IR_U8,  IR_U16, IR_U32, IR_U64, IR_BOOL, IR_BF16};
  static const int64_t dims[] = {3, 2, 4, 5};
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++)
    for (int rank = 0; rank <= 4; rank++) roundtrip(dts[k], ir_shape_make(rank, dims));
}

static void test_roundtrip_empty(void **state) {
  (void)state;
  const int64_t a[] = {0}, b[] = {2, 0, 3}, c[] = {4, 5, 0};
  for (ir_dtype dt = IR_F32; dt < IR_DTYPE_COUNT; dt++) {
    roundtrip(dt, ir_shape_make(1, a));
    roundtrip(dt, ir_shape_make(3, b));
    roundtrip(dt, ir_shape_make(3, c));
  }
}

static void test_roundtrip_extremes(void **state) {
  (void)state;
  imp_tensor t = {0}, r = {0};
  char path[400], err[512];
  double v[5] = {NAN, INFINITY, -INFINITY, -0.0, 1e-310};
  t.dtype = IR_F64;
  t.shape = ir_shape_make(1, (int64_t[]){5});
  t.data = v;
  t.bytes = sizeof v;
  tmp_path(path, sizeof path, "extremes.pb");
  assert_int_equal(rt_tensor_write(path, &t, err, sizeof err), 0);
  assert_int_equal(rt_tensor_read(path, &r, err, sizeof err), 0);
  assert_memory_equal(r.data, v, sizeof v);
  imp_tensor_free(&r);
}

/* Reads a node-test file and checks its header. */
static imp_tensor read_node(const char *rel, ir_dtype dt, int rank, const int64_t *dims) {
  char path[512], err[1024] = "";
  imp_tensor t;
  snprintf(path, sizeof path, "%s/%s", NODE_DIR, rel);
  if (rt_tensor_read(path, &t, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(t.dtype, dt);
  ir_shape s = ir_shape_make(rank, dims);
  assert_true(ir_shape_eq(&t.shape, &s));
  assert_int_equal(t.bytes, (size_t)ir_shape_numel(&s) * ir_dtype_size(dt));
  return t;
}

static void test_read_node_files(void **state) {
  (void)state;
  imp_tensor t = read_node("test_add/test_data_set_0/input_0.pb", IR_F32, 3, (int64_t[]){3, 4, 5});
  assert_string_equal(t.name, "x");
  assert_float_equal(((float *)t.data)[0], 1.764052391052246, 1e-7);
  assert_float_equal(((float *)t.data)[1], 0.40015721321105957, 1e-7);
  imp_tensor_free(&t);
  t = read_node("test_gather_0/test_data_set_0/input_1.pb", IR_I64, 1, (int64_t[]){3});
  assert_int_equal(((int64_t *)t.data)[2], 3);
  imp_tensor_free(&t);
  t = read_node("test_not_2d/test_data_set_0/input_0.pb", IR_BOOL, 2, (int64_t[]){3, 4});
  imp_tensor_free(&t);
  t = read_node("test_argmax_default_axis_example/test_data_set_0/output_0.pb", IR_I64, 2, (int64_t[]){1, 2});
  imp_tensor_free(&t);
}

static void test_read_float16(void **state) {
  (void)state;
  imp_tensor t = read_node("test_cast_FLOAT16_to_FLOAT/test_data_set_0/input_0.pb", IR_F16, 2, (int64_t[]){3, 4});
  assert_int_equal(((uint16_t *)t.data)[0], 12178); /* 0.1182861328125 as binary16 */
  assert_int_equal(((uint16_t *)t.data)[1], 14623);
  imp_tensor_free(&t);
}

/* A read that must fail with a message naming the file, leaving no data. */
static void expect_read_error(const char *path) {
  imp_tensor t;
  char err[1024] = "";
  memset(&t, 0x5a, sizeof t);
  assert_int_equal(rt_tensor_read(path, &t, err, sizeof err), -1);
  assert_true(strlen(err) > 0);
  if (!strstr(err, path)) fail_msg("message does not name %s: %s", path, err);
}

static void test_read_errors(void **state) {
  (void)state;
  char path[400];
  tmp_path(path, sizeof path, "does_not_exist.pb");
  expect_read_error(path);
  tmp_path(path, sizeof path, "empty.pb");
  write_bytes(path, "", 0);
  expect_read_error(path);
  srand(1234);
  for (int k = 0; k < 20; k++) {
    uint8_t junk[300];
    size_t len = 1 + (size_t)(rand() % (int)sizeof junk);
    for (size_t i = 0; i < len; i++) junk[i] = (uint8_t)rand();
    snprintf(path, sizeof path, "%s/junk_%d.pb", tmpdir, k);
    write_bytes(path, junk, len);
    expect_read_error(path);
  }
}

static void test_write_error(void **state) {
  (void)state;
  float v = 1;
  imp_tensor t = {.dtype = IR_F32, .shape = ir_shape_make(0, NULL), .data = &v, .bytes = 4};
  char path[400], err[1024] = "";
  snprintf(path, sizeof path, "%s/no/such/dir/x.pb", tmpdir);
  assert_int_equal(rt_tensor_write(path, &t, err, sizeof err), -1);
  assert_non_null(strstr(err, path));
  expect_read_error(tmpdir); /* a directory */
}

static void test_read_truncated(void **state) {
  (void)state;
  FILE *f = fopen(NODE_DIR "/test_add/test_data_set_0/input_0.pb", "rb");
  assert_non_null(f);
  uint8_t buf[4096];
  size_t len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  assert_true(len > 240);
  char path[400];
  const size_t cuts[] = {len / 2, len - 1, 3};
  for (size_t k = 0; k < 3; k++) {
    snprintf(path, sizeof path, "%s/trunc_%zu.pb", tmpdir, k);
    write_bytes(path, buf, cuts[k]);
    expect_read_error(path);
  }
}

static imp_tensor f64_tensor(double *v, int n) {
  imp_tensor t = {0};
  t.dtype = IR_F64;
  t.shape = ir_shape_make(1, (int64_t[]){n});
  t.data = v;
  t.bytes = (size_t)n * sizeof(double);
  return t;
}

/* rt_compare on one pair of f64 values with the tests' tolerance. */
static bool cmp1(double got, double want) {
  imp_tensor a = f64_tensor(&got, 1), b = f64_tensor(&want, 1);
  rt_diff d;
  bool ok = rt_compare(&a, &b, 1e-5, 1e-3, &d);
  assert_true(d.shape_ok);
  assert_int_equal(d.mismatches, ok ? 0 : 1);
  return ok;
}

static void test_compare_special(void **state) {
  (void)state;
  assert_true(cmp1(NAN, NAN));
  assert_false(cmp1(NAN, 1.0));
  assert_false(cmp1(1.0, NAN));
  assert_true(cmp1(INFINITY, INFINITY));
  assert_true(cmp1(-INFINITY, -INFINITY));
  assert_false(cmp1(INFINITY, -INFINITY));
  assert_false(cmp1(INFINITY, 1e308));
  assert_false(cmp1(1e308, INFINITY));
  assert_false(cmp1(NAN, INFINITY));
}

static void test_compare_tolerance(void **state) {
  (void)state;
  /* allowed error for want=100: 1e-5 + 0.1 */
  assert_true(cmp1(100.0, 100.0));
  assert_true(cmp1(100.1, 100.0));
  assert_true(cmp1(99.9, 100.0));
  assert_false(cmp1(100.1001, 100.0));
  assert_false(cmp1(99.8999, 100.0));
  /* near zero only atol counts */
  assert_true(cmp1(0.9e-5, 0.0));
  assert_false(cmp1(1.1e-5, 0.0));
  /* relative to want, not got */
  assert_false(cmp1(-1.0, 1.0));
}

static void test_compare_shape_dtype(void **state) {
  (void)state;
  double v[4] = {1, 2, 3, 4}, w[4] = {1, 2, 3, 4};
  imp_tensor a = f64_tensor(v, 4), b = f64_tensor(w, 4);
  rt_diff d;
  assert_true(rt_compare(&a, &b, 0, 0, &d));
  b.shape = ir_shape_make(2, (int64_t[]){2, 2});
  assert_false(rt_compare(&a, &b, 1, 1, &d));
  assert_false(d.shape_ok);
  b = f64_tensor(w, 4);
  b.dtype = IR_I64;
  assert_false(rt_compare(&a, &b, 1, 1, &d));
  assert_false(d.shape_ok);
  w[2] = 3.5;
  b = f64_tensor(w, 4);
  assert_false(rt_compare(&a, &b, 0.1, 0, &d));
  assert_int_equal(d.mismatches, 1);
  assert_float_equal(d.max_abs, 0.5, 1e-12);
  int32_t x[3] = {1, -2, 3}, y[3] = {1, -2, 4};
  imp_tensor c = {.dtype = IR_I32, .shape = ir_shape_make(1, (int64_t[]){3}), .data = x, .bytes = 12};
  imp_tensor e = c;
  e.data = y;
  assert_false(rt_compare(&c, &e, 0, 0, &d));
  assert_int_equal(d.mismatches, 1);
  y[2] = 3;
  assert_true(rt_compare(&c, &e, 0, 0, &d));
}

/* float16 tensors (binary16 bit patterns) must compare by value. */
static void test_compare_float16(void **state) {
  (void)state;
  uint16_t two = 0x4000, two_01 = 0x4005 /* 2.0098 */, nan = 0x7e00, pzero = 0, nzero = 0x8000;
  imp_tensor a = {.dtype = IR_F16, .shape = ir_shape_make(0, NULL), .bytes = 2};
  imp_tensor b = a;
  rt_diff d;
  a.data = &nan, b.data = &nan;
  assert_true(rt_compare(&a, &b, 1e-5, 1e-3, &d));
  a.data = &two, b.data = &two;
  assert_true(rt_compare(&a, &b, 1e-5, 1e-3, &d));
  /* read by value, not as raw bits (2.0098 differs from 2.0 by 5 bits,
   * within a tolerance of 16.4 if the bits were compared) */
  a.data = &two_01;
  assert_false(rt_compare(&a, &b, 1e-5, 1e-3, &d));
  assert_float_equal(d.max_abs, 0.009765625, 1e-12);
  a.data = &nzero, b.data = &pzero;
  assert_true(rt_compare(&a, &b, 1e-5, 1e-3, &d));
}

/* Integers and bools compare exactly, whatever the tolerances: as doubles
 * 2^53 + 1 equals 2^53, and rtol 1e-3 lets 10000 pass for 10005. */
static void test_compare_integers_exact(void **state) {
  (void)state;
  int64_t x[2] = {10000, ((int64_t)1 << 53) + 1}, y[2] = {10005, (int64_t)1 << 53};
  imp_tensor a = {.dtype = IR_I64, .shape = ir_shape_make(1, (int64_t[]){2}), .data = x, .bytes = 16};
  imp_tensor b = a;
  b.data = y;
  rt_diff d;
  assert_false(rt_compare(&a, &b, 1e-5, 1e-3, &d));
  assert_int_equal(d.mismatches, 2);
  assert_float_equal(d.max_abs, 5, 0);
  y[0] = 10000;
  assert_false(rt_compare(&a, &b, 1e-5, 1e-3, &d));
  assert_int_equal(d.mismatches, 1);
  y[1] = x[1];
  assert_true(rt_compare(&a, &b, 1e-5, 1e-3, &d));
  uint64_t u[1] = {UINT64_MAX}, v[1] = {UINT64_MAX - 1};
  imp_tensor c = {.dtype = IR_U64, .shape = ir_shape_make(1, (int64_t[]){1}), .data = u, .bytes = 8};
  imp_tensor e = c;
  e.data = v;
  assert_false(rt_compare(&c, &e, 1e-5, 1e-3, &d));
  uint8_t p[2] = {1, 0}, q[2] = {1, 165}; /* 165: the poison byte, never a bool */
  imp_tensor f = {.dtype = IR_BOOL, .shape = ir_shape_make(1, (int64_t[]){2}), .data = p, .bytes = 2};
  imp_tensor g = f;
  g.data = q;
  assert_false(rt_compare(&f, &g, 1, 1, &d));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_all_dtypes_ranks),
      cmocka_unit_test(test_roundtrip_empty),
      cmocka_unit_test(test_roundtrip_extremes),
      cmocka_unit_test(test_read_node_files),
      cmocka_unit_test(test_read_float16),
      cmocka_unit_test(test_read_errors),
      cmocka_unit_test(test_read_truncated),
      cmocka_unit_test(test_write_error),
      cmocka_unit_test(test_compare_special),
      cmocka_unit_test(test_compare_tolerance),
      cmocka_unit_test(test_compare_shape_dtype),
      cmocka_unit_test(test_compare_float16),
      cmocka_unit_test(test_compare_integers_exact),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
