/* test_models.c — structural properties of the generated files on the
 * models of models/misc (made by models/make_misc.py):
 *  - tied embeddings: the table is stored once in the weights file;
 *  - 2 and 12 residual blocks: the kernel definitions are the same text (one
 *    definition per distinct kernel, called once per layer);
 *  - no generated file calls malloc, and each compiles with -Werror;
 *  - convolutions take the register-blocked form (convs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime.h"
#include "unit_model_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rt_model *compile(const char *name) {
  char path[1024], err[2048];
  snprintf(path, sizeof path, "%s/models/misc/%s.onnx", ONNX2C_SOURCE_DIR, name);
  rt_options o = {0};
  rt_model *m = NULL;
  if (rt_compile(path, NULL, &o, &m, err, sizeof err)) fail_msg("%s", err);
  return m;
}


static void test_tied_embedding_stored_once(void **state) {
  (void)state;
  rt_model *m = compile("tied");
  assert_int_equal(m->p->weights_size, 300 * 32 * 4);
  rt_model_free(m);
}

/* The kernel definitions: the text between the first kernel and the entry. */
static char *kernel_section(const rt_model *m) {
  char *c = model_file(m, "c");
  char *start = strstr(c, "/* kernel 0"), *end = strstr(c, "int model_run(");
  assert_non_null(start);
  assert_non_null(end);
  char *s = strndup(start, (size_t)(end - start));
  free(c);
  return s;
}

static void test_depth_does_not_grow_kernels(void **state) {
  (void)state;
  rt_model *a = compile("layers_2"), *b = compile("layers_12");
  char *ka = kernel_section(a), *kb = kernel_section(b);
  printf("kernels: 2 layers %d (section %zu bytes), 12 layers %d (section %zu bytes)\n", a->p->nkernels,
         strlen(ka), b->p->nkernels, strlen(kb));
  assert_true(b->p->nkernels > a->p->nkernels);
  assert_string_equal(ka, kb);
  free(ka), free(kb);
  rt_model_free(a);
  rt_model_free(b);
}

static void test_no_malloc_and_strict_build(void **state) {
  (void)state;
  const char *names[] = {"tied", "layers_12", "view_reshape", "matmuls"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    rt_model *m = compile(names[i]);
    char *c = model_file(m, "c"), *h = model_file(m, "h");
    assert_null(strstr(c, "malloc"));
    assert_null(strstr(h, "malloc"));
    free(c), free(h);
    char err[2048];
    if (rt_build(m, "-O0 -Wall -Wextra -Werror", err, sizeof err)) fail_msg("%s: %s", names[i], err);
    rt_model_free(m);
  }
}

/* Every convolution that sums over channels (3x3 padded, strided, 1x1,
 * dilated, and on short rows as im2col) and the Gemm are register-blocked:
 * the padded, phase-split or im2col copies make their input reads unmasked
 * and unit-stride. The depthwise one has no channel sum (a plain loop nest,
 * vectorised along the width). Built
 * with OpenMP's simd pragmas live and 2 threads: the Gemm's 33 columns are
 * one full block and one single column, whose k loop must get no `omp simd`
 * and no threads. */
static void test_convs_blocked(void **state) {
  (void)state;
  char path[1024], err[2048];
  snprintf(path, sizeof path, "%s/models/misc/convs.onnx", ONNX2C_SOURCE_DIR);
  rt_options o = {.threads = 2, .threads_all = true};
  rt_model *m = NULL;
  if (rt_compile(path, NULL, &o, &m, err, sizeof err)) fail_msg("%s", err);
  int blocked = 0, moves = 0;
  for (int i = 0; i < m->p->nkernels; i++) {
    const sched_kernel *k = &m->p->kernels[i];
    blocked += k->gemm.on;
    moves += ir_node_get(m->p->g, k->root)->op == IR_MOVE;
  }
  /* the first 3x3 (few padded rows) in three bands (importer/conv_window.c
   * imp_conv_bands), each blocked over its own padded copy */
  assert_int_equal(blocked, 8);
  /* five padded inputs, the first's bands two more; one split into stride
   * phases, one copied into columns */
  assert_int_equal(moves, 9);
  if (rt_build(m, "-O2 -fopenmp -fopenmp-simd -DONNX2C_OMP_SIMD -Wall -Wextra -Werror", err, sizeof err))
    fail_msg("%s", err);
  rt_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tied_embedding_stored_once),
      cmocka_unit_test(test_depth_does_not_grow_kernels),
      cmocka_unit_test(test_no_malloc_and_strict_build),
      cmocka_unit_test(test_convs_blocked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
