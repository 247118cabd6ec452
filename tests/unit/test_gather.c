/* test_gather.c — the gather rewrite, checked on the scheduler's output:
 * one kernel, three buffers (out, W, ids), no loop over V, no reduction;
 * and the same models without the rewrite keep the O(V) reduction, so the
 * structural checks can fail. An index out of range is an error status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime.h"

#include <string.h>

#define V 50

static rt_model *compile(const char *name, bool no_rewrite) {
  char path[1024], err[2048];
  snprintf(path, sizeof path, "%s/models/gather/%s.onnx", ONNX2C_SOURCE_DIR, name);
  rt_options o = {0};
  o.no_rewrite = no_rewrite;
  rt_model *m = NULL;
  if (rt_compile(path, NULL, &o, &m, err, sizeof err)) fail_msg("%s", err);
  return m;
}

static bool loops_over_v(const sched_kernel *k) {
  for (int i = 0; i < k->naxes; i++)
    if (k->space.d[k->axes[i]] == V) return true;
  return false;
}

static void check_rewritten(const char *name) {
  rt_model *m = compile(name, false);
  assert_int_equal(m->rewrites, 1);
  assert_int_equal(m->p->nkernels, 1);
  const sched_kernel *k = &m->p->kernels[0];
  assert_int_equal(k->nargs, 3);
  assert_int_equal(k->nstages, 0);
  assert_false(loops_over_v(k));
  rt_model_free(m);
  /* without the rewrite the same model reduces over V */
  m = compile(name, true);
  assert_int_equal(m->rewrites, 0);
  bool reduces_over_v = false;
  for (int i = 0; i < m->p->nkernels; i++)
    reduces_over_v |= m->p->kernels[i].nstages > 0 && loops_over_v(&m->p->kernels[i]);
  assert_true(reduces_over_v);
  rt_model_free(m);
}

static void test_embedding_structure(void **state) {
  (void)state;
  check_rewritten("embedding");
}

static void test_int32_indices_structure(void **state) {
  (void)state;
  check_rewritten("idx_i32");
}

static void test_rank3_indices_structure(void **state) {
  (void)state;
  check_rewritten("idx_rank3");
}

static void test_hand_written_onehot_structure(void **state) {
  (void)state;
  check_rewritten("onehot");
}

static void run_ids(const char *model, const char *ids, char *err, size_t n, int *rc) {
  char path[1024];
  rt_model *m = compile(model, false);
  if (rt_build(m, "-O1", err, n)) fail_msg("%s", err);
  snprintf(path, sizeof path, "%s/models/gather/%s", ONNX2C_SOURCE_DIR, ids);
  imp_tensor in, out;
  if (rt_tensor_read(path, &in, err, n)) fail_msg("%s", err);
  *rc = rt_run(m, &in, 1, &out, err, n);
  imp_tensor_free(&in);
  imp_tensor_free(&out);
  rt_model_free(m);
}

static void test_out_of_range_is_an_error(void **state) {
  (void)state;
  char err[1024] = "";
  int rc;
  run_ids("embedding", "embedding_oob.pb", err, sizeof err, &rc);
  assert_int_equal(rc, -1);
  assert_non_null(strstr(err, "index out of range"));
  run_ids("embedding", "embedding_ids.pb", err, sizeof err, &rc);
  assert_int_equal(rc, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_embedding_structure),
      cmocka_unit_test(test_int32_indices_structure),
      cmocka_unit_test(test_rank3_indices_structure),
      cmocka_unit_test(test_hand_written_onehot_structure),
      cmocka_unit_test(test_out_of_range_is_an_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
