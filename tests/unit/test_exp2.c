/* test_exp2.c — the vectorisable exp2 that generated code uses for float
 * (codegen/program.c, cg_exp2f_src), checked as printed: built with the
 * system compiler into a program that compares it with exp2 in double. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "codegen_impl.h"

#define TMPDIR_STEM "o2c-exp2"
#include "unit_tmpdir.h"

/* Every STRIDE-th float bit pattern in (-160, 140) (so every binade alike) through a loop the
 * compiler vectorises (so the vector form is the one checked), then the special values. */
static const char checker[] =
    "#include <float.h>\n#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    "static void run(float *restrict y, const float *restrict x, long n) {\n"
    "  for (long i = 0; i < n; i++) y[i] = o2c_exp2f(x[i]);\n}\n"
    "int main(void) {\n"
    "  long n = 0, cap = 1 << 20, bad = 0;\n"
    "  float *x = malloc(cap * sizeof *x), *y = malloc(cap * sizeof *y);\n"
    "  double worst = 0;\n"
    "  for (uint32_t sign = 0; sign < 2; sign++)\n"
    "    for (uint32_t b = 0; b < (sign ? 0x43200000u : 0x430C0000u);) {\n" /* |x| < 160 / 140 */
    "      for (n = 0; n < cap && b < (sign ? 0x43200000u : 0x430C0000u); n++, b += STRIDE) {\n"
    "        union { uint32_t u; float f; } v = {b | sign << 31};\n"
    "        x[n] = v.f;\n"
    "      }\n"
    "      run(y, x, n);\n"
    "      for (long i = 0; i < n; i++) {\n"
    "        double ref = exp2((double)x[i]);\n"
    "        if (ref > FLT_MAX) bad += !isinf(y[i]);\n"
    "        else if (ref < FLT_MIN) bad += fabs(y[i] - ref) > 0x1p-148;\n"
    "        else if (fabs(y[i] - ref) / ref > worst) worst = fabs(y[i] - ref) / ref;\n"
    "      }\n"
    "    }\n"
    "  float sp[5] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f}, r[5];\n"
    "  run(r, sp, 5);\n"
    "  bad += !(isinf(r[0]) && r[0] > 0) + (r[1] != 0.0f) + !isnan(r[2]) + (r[3] != 1.0f) + (r[4] "
    "!= 1.0f);\n"
    "  printf(\"worst relative error %.3g (%.2f ulp), %ld bad\\n\", worst, worst / 0x1p-24, bad);\n"
    "  free(x), free(y);\n"
    "  return bad || worst > 2 * 0x1p-24;\n}\n";

static void check_with(const char *flags) {
  char src[512], exe[512], cmd[2048];
  snprintf(src, sizeof src, "%s/check.c", tmpdir);
  snprintf(exe, sizeof exe, "%s/check", tmpdir);
  FILE *f = fopen(src, "w");
  assert_non_null(f);
  fprintf(f, "#include <stdint.h>\n%s%s", cg_exp2f_src, checker);
  fclose(f);
  snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror %s '%s' -o '%s' -lm && '%s'", flags,
           src, exe, exe);
  printf("%s\n", flags);
  fflush(stdout);
  assert_int_equal(system(cmd), 0);
}

static void test_exp2_vectorised(void **state) {
  (void)state;
  check_with("-O3 -march=native -fno-math-errno -DSTRIDE=97");
}

static void test_exp2_no_undefined_behaviour(void **state) {
  (void)state;
  check_with(
      "-O1 -fsanitize=undefined,float-cast-overflow -fno-sanitize-recover=all -DSTRIDE=1999");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exp2_vectorised),
      cmocka_unit_test(test_exp2_no_undefined_behaviour),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
