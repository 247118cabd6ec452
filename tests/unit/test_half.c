/* test_half.c — float16 and bfloat16: the compiler's conversions
 * (ir/half.c) on every bit pattern and every rounding boundary, and the
 * conversions printed into generated code (codegen/half.c) checked against
 * them as printed, built by the system compiler (vectorised, and under
 * UBSan); .pb tensors of both types in their raw_data and int32_data forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "codegen_impl.h"
#include "runtime.h"

#define TMPDIR_STEM "o2c-half"
#include "unit_tmpdir.h"

static const ir_dtype kinds[2] = {IR_F16, IR_BF16};

static bool is_nan16(ir_dtype t, uint16_t h) {
  uint16_t e = t == IR_F16 ? 0x7c00 : 0x7f80;
  return (h & e) == e && (h & ~e & 0x7fff);
}

static bool is_inf16(ir_dtype t, uint16_t h) {
  return (h & 0x7fff) == (t == IR_F16 ? 0x7c00 : 0x7f80);
}

/* Every pattern converts to double and back unchanged (NaN stays NaN);
 * between neighbours a and b, the midpoint goes to the one with an even
 * mantissa and anything off the midpoint to the nearer one; the largest
 * value's upper midpoint overflows to inf. */
static void test_reference_rounding(void **state) {
  (void)state;
  for (int k = 0; k < 2; k++) {
    ir_dtype t = kinds[k];
    for (uint32_t h = 0; h < 0x10000; h++) {
      double v = ir_half_to_double(t, (uint16_t)h);
      uint16_t back = ir_half_from_double(t, v);
      if (is_nan16(t, (uint16_t)h)) {
        assert_true(isnan(v) && is_nan16(t, back));
        continue;
      }
      assert_int_equal(back, h);
      if (is_inf16(t, (uint16_t)h) || (h & 0x8000)) continue;
      uint16_t up = (uint16_t)(h + 1);
      double w = is_inf16(t, up) ? 2 * v - ir_half_to_double(t, (uint16_t)(h - 1)) : ir_half_to_double(t, up);
      double mid = (v + w) / 2, off = (w - v) / 1024;
      assert_int_equal(ir_half_from_double(t, mid), (h & 1) ? up : h);
      assert_int_equal(ir_half_from_double(t, -mid), ((h & 1) ? up : h) | 0x8000);
      assert_int_equal(ir_half_from_double(t, mid - off), h);
      assert_int_equal(ir_half_from_double(t, mid + off), up);
    }
  }
  assert_int_equal(ir_half_from_double(IR_F16, 65519.99), 0x7bff);
  assert_int_equal(ir_half_from_double(IR_F16, 65520.0), 0x7c00);
  assert_int_equal(ir_half_from_double(IR_F16, 0x1p-25), 0);                 /* tie to even: 0 */
  assert_int_equal(ir_half_from_double(IR_F16, 0x1.000001p-25), 1);          /* above: the least subnormal */
  assert_int_equal(ir_half_from_double(IR_F16, 0x1.ffcp-15), 0x0400); /* the largest subnormal ties up to the least normal */
  assert_int_equal(ir_half_from_double(IR_BF16, 3.4028234663852886e38), 0x7f80); /* FLT_MAX: inf */
  assert_int_equal(ir_half_from_double(IR_F16, -0.0), 0x8000);
  assert_true(is_nan16(IR_BF16, ir_half_from_double(IR_BF16, NAN)));
}

#ifdef __FLT16_MAX__
/* The hardware (or libgcc) float -> _Float16 conversion, round to nearest
 * even, is an independent second opinion on a stride through all floats. */
static void test_reference_matches_float16(void **state) {
  (void)state;
  for (uint64_t u = 0; u < (UINT64_C(1) << 32); u += 4099) {
    union { uint32_t u; float f; } x = {(uint32_t)u};
    _Float16 h = (_Float16)x.f;
    uint16_t bits;
    memcpy(&bits, &h, 2);
    uint16_t r = ir_half_from_double(IR_F16, x.f);
    if (isnan(x.f)) assert_true(is_nan16(IR_F16, r));
    else assert_int_equal(r, bits);
  }
}
#endif

/* The printed conversions, applied to the inputs in argv[1] (floats, then
 * doubles, counts first), written to argv[2]; h2f/b2f on every pattern. */
static const char checker[] =
    "#include <stdio.h>\n#include <stdlib.h>\n"
    "static void f2h(uint16_t *restrict y, const float *restrict x, long n) { for (long i = 0; i < n; i++) y[i] = "
    "o2c_f2h(x[i]); }\n"
    "static void f2b(uint16_t *restrict y, const float *restrict x, long n) { for (long i = 0; i < n; i++) y[i] = "
    "o2c_f2b(x[i]); }\n"
    "static void h2f(float *restrict y, const uint16_t *restrict x, long n) { for (long i = 0; i < n; i++) y[i] = "
    "o2c_h2f(x[i]); }\n"
    "static void b2f(float *restrict y, const uint16_t *restrict x, long n) { for (long i = 0; i < n; i++) y[i] = "
    "o2c_b2f(x[i]); }\n"
    "int main(int argc, char **argv) {\n"
    "  FILE *in = fopen(argv[1], \"rb\"), *out = fopen(argv[2], \"wb\");\n"
    "  long nf, nd;\n"
    "  if (argc != 3 || !in || !out || fread(&nf, sizeof nf, 1, in) != 1 || fread(&nd, sizeof nd, 1, in) != 1) "
    "return 1;\n"
    "  float *x = malloc(nf * sizeof *x), *fy = malloc(65536 * sizeof *fy);\n"
    "  double *d = malloc(nd * sizeof *d);\n"
    "  uint16_t *y = malloc((nf > nd ? nf : nd) * sizeof *y), *all = malloc(65536 * sizeof *all);\n"
    "  if (fread(x, sizeof *x, nf, in) != (size_t)nf || fread(d, sizeof *d, nd, in) != (size_t)nd) return 1;\n"
    "  f2h(y, x, nf); fwrite(y, sizeof *y, nf, out);\n"
    "  f2b(y, x, nf); fwrite(y, sizeof *y, nf, out);\n"
    "  for (long i = 0; i < nd; i++) y[i] = o2c_d2h(d[i]);\n"
    "  fwrite(y, sizeof *y, nd, out);\n"
    "  for (long i = 0; i < nd; i++) y[i] = o2c_d2b(d[i]);\n"
    "  fwrite(y, sizeof *y, nd, out);\n"
    "  for (long i = 0; i < 65536; i++) all[i] = (uint16_t)i;\n"
    "  h2f(fy, all, 65536); fwrite(fy, sizeof *fy, 65536, out);\n"
    "  b2f(fy, all, 65536); fwrite(fy, sizeof *fy, 65536, out);\n"
    "  free(x), free(fy), free(d), free(y), free(all);\n"
    "  return fclose(out) != 0;\n}\n";

typedef struct {
  float *f;
  double *d;
  long nf, nd, cap;
} inputs;

static void add(inputs *in, double v) {
  if (in->nf == in->cap) {
    in->cap = in->cap ? 2 * in->cap : 1 << 16;
    in->f = realloc(in->f, (size_t)in->cap * sizeof *in->f);
    in->d = realloc(in->d, (size_t)in->cap * sizeof *in->d);
    assert_true(in->f && in->d);
  }
  in->f[in->nf++] = (float)v;
  in->d[in->nd++] = v;
}

/* Every value of both types, the midpoints between neighbours and the
 * floats and doubles just around them (a double a hair above a midpoint
 * rounds to it as a float: the case a plain (float) cast gets wrong), a
 * stride through all floats, and inf, NaN. */
static void make_inputs(inputs *in) {
  for (int k = 0; k < 2; k++)
    for (uint32_t h = 0; h < 0x10000; h++) {
      double v = ir_half_to_double(kinds[k], (uint16_t)h), w = ir_half_to_double(kinds[k], (uint16_t)(h + 1));
      add(in, v);
      if (isnan(v) || isnan(w) || isinf(v) || (h & 0x8000)) continue;
      double mid = isinf(w) ? v + (v - ir_half_to_double(kinds[k], (uint16_t)(h - 1))) / 2 : (v + w) / 2;
      float m = (float)mid;
      add(in, mid), add(in, -mid), add(in, nextafterf(m, 0)), add(in, nextafterf(m, INFINITY));
      add(in, mid * (1 + 0x1p-40)), add(in, mid * (1 - 0x1p-40));
    }
  for (uint64_t u = 0; u < (UINT64_C(1) << 32); u += 65521) {
    union { uint32_t u; float f; } x = {(uint32_t)u};
    add(in, x.f);
  }
  add(in, INFINITY), add(in, -INFINITY), add(in, NAN), add(in, 1e300), add(in, -1e-300);
}

static void check_with(const char *flags) {
  char src[512], exe[512], inp[512], outp[512], cmd[3000];
  snprintf(src, sizeof src, "%s/check.c", tmpdir);
  snprintf(exe, sizeof exe, "%s/check", tmpdir);
  snprintf(inp, sizeof inp, "%s/in.bin", tmpdir);
  snprintf(outp, sizeof outp, "%s/out.bin", tmpdir);
  FILE *f = fopen(src, "w");
  assert_non_null(f);
  fprintf(f, "#include <stdint.h>\n");
  cg_half_print(f, CG_HALF_ALL);
  fputs(checker, f);
  fclose(f);
  inputs in = {0};
  make_inputs(&in);
  f = fopen(inp, "wb");
  assert_non_null(f);
  fwrite(&in.nf, sizeof in.nf, 1, f), fwrite(&in.nd, sizeof in.nd, 1, f);
  fwrite(in.f, sizeof *in.f, (size_t)in.nf, f), fwrite(in.d, sizeof *in.d, (size_t)in.nd, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror %s '%s' -o '%s' -lm && '%s' '%s' '%s'", flags, src,
           exe, exe, inp, outp);
  printf("%s\n", flags);
  fflush(stdout);
  assert_int_equal(system(cmd), 0);
  f = fopen(outp, "rb");
  assert_non_null(f);
  uint16_t *y = malloc((size_t)in.nf * sizeof *y);
  float *fy = malloc(65536 * sizeof *fy);
  assert_true(y && fy);
  long bad = 0;
  for (int pass = 0; pass < 4; pass++) { /* f2h, f2b on floats; d2h, d2b on doubles */
    ir_dtype t = kinds[pass & 1];
    assert_int_equal(fread(y, sizeof *y, (size_t)in.nf, f), (size_t)in.nf);
    for (long i = 0; i < in.nf; i++) {
      double v = pass < 2 ? (double)in.f[i] : in.d[i];
      uint16_t want = ir_half_from_double(t, v);
      bool ok = isnan(v) ? is_nan16(t, y[i]) : y[i] == want;
      if (!ok && bad++ < 10) printf("pass %d: %.17g gives %04x, want %04x\n", pass, v, y[i], want);
    }
  }
  for (int k = 0; k < 2; k++) { /* h2f, b2f */
    assert_int_equal(fread(fy, sizeof *fy, 65536, f), 65536);
    for (uint32_t h = 0; h < 0x10000; h++) {
      double want = ir_half_to_double(kinds[k], (uint16_t)h);
      bool ok = isnan(want) ? isnan(fy[h]) : (double)fy[h] == want && !signbit(fy[h]) == !signbit(want);
      if (!ok && bad++ < 20) printf("%s %04x gives %.9g, want %.9g\n", k ? "b2f" : "h2f", h, fy[h], want);
    }
  }
  fclose(f);
  free(y), free(fy), free(in.f), free(in.d);
  assert_int_equal(bad, 0);
}

static void test_printed_vectorised(void **state) {
  (void)state;
  check_with("-O3 -march=native -fno-math-errno");
}

static void test_printed_no_undefined_behaviour(void **state) {
  (void)state;
  check_with("-O1 -fsanitize=undefined,float-cast-overflow -fno-sanitize-recover=all");
}

/* Reads a TensorProto of `onnx_type` whose values are the bit patterns
 * `bits` (each < 2^14, one varint byte pair), stored in int32_data (raw ==
 * false) or raw_data; the wire format spelled out by hand: dims (1),
 * data_type (2), int32_data (5, packed), raw_data (9). */
static void decode(int onnx_type, const uint16_t *bits, int n, bool raw, imp_tensor *t) {
  uint8_t buf[64];
  size_t k = 0;
  buf[k++] = 1 << 3, buf[k++] = (uint8_t)n;
  buf[k++] = 2 << 3, buf[k++] = (uint8_t)onnx_type;
  buf[k++] = raw ? (9 << 3 | 2) : (5 << 3 | 2);
  buf[k++] = (uint8_t)(raw ? 2 * n : 0);
  size_t len_at = k - 1;
  for (int i = 0; i < n; i++) {
    if (raw) {
      buf[k++] = (uint8_t)(bits[i] & 0xff), buf[k++] = (uint8_t)(bits[i] >> 8);
    } else {
      assert_true(bits[i] < 0x4000);
      if (bits[i] < 0x80) buf[k++] = (uint8_t)bits[i];
      else buf[k++] = (uint8_t)(0x80 | (bits[i] & 0x7f)), buf[k++] = (uint8_t)(bits[i] >> 7);
    }
  }
  buf[len_at] = (uint8_t)(k - len_at - 1);
  char err[256];
  assert_int_equal(imp_tensor_decode(buf, k, NULL, t, err, sizeof err), 0);
}

static void test_tensor_forms(void **state) {
  (void)state;
  static const uint16_t h[4] = {0x3c00, 0x3e00, 0x0001, 0x3bff}; /* 1, 1.5, 2^-24, 1 - 2^-11 */
  static const uint16_t b[4] = {0x3f80, 0x3fc0, 0x0001, 0x3f7f}; /* 1, 1.5, 2^-133, 1 - 2^-8 */
  static const double hv[4] = {1, 1.5, 0x1p-24, 1 - 0x1p-11}, bv[4] = {1, 1.5, 0x1p-133, 1 - 0x1p-8};
  for (int raw = 0; raw < 2; raw++) {
    imp_tensor t;
    decode(10 /* FLOAT16 */, h, 4, raw, &t);
    assert_int_equal(t.dtype, IR_F16);
    for (int i = 0; i < 4; i++) assert_true(ir_elem_f(IR_F16, t.data, i) == hv[i]);
    char path[400], err[256];
    snprintf(path, sizeof path, "%s/h.pb", tmpdir);
    assert_int_equal(rt_tensor_write(path, &t, err, sizeof err), 0);
    imp_tensor_free(&t);
    assert_int_equal(rt_tensor_read(path, &t, err, sizeof err), 0);
    assert_int_equal(t.dtype, IR_F16);
    assert_memory_equal(t.data, h, sizeof h);
    imp_tensor_free(&t);
    decode(16 /* BFLOAT16 */, b, 4, raw, &t);
    assert_int_equal(t.dtype, IR_BF16);
    for (int i = 0; i < 4; i++) assert_true(ir_elem_f(IR_BF16, t.data, i) == bv[i]);
    imp_tensor_free(&t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference_rounding),
#ifdef __FLT16_MAX__
      cmocka_unit_test(test_reference_matches_float16),
#endif
      cmocka_unit_test(test_printed_vectorised),
      cmocka_unit_test(test_printed_no_undefined_behaviour),
      cmocka_unit_test(test_tensor_forms),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
