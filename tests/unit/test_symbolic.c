/* test_symbolic.c — one compile of the tiny LLaMA exports with their
 * symbolic axes kept (models/llama/tiny_dynamic: batch, seq; tiny_decode:
 * past), checked for what the numbers of the whole-model tests cannot show:
 *  - the arena plan is overlap-free at every tested value of the symbols
 *    (offsets recomputed from the plan, every pair of buffers alive at once
 *    checked), and the generated PREFIX_arena_size agrees with it;
 *  - the generated entry refuses dimensions outside the compile (seq > 64,
 *    symbols < 1 or > 2^31-1) with ERR_SHAPE, and arena_size says 0;
 *  - the kernel structure is the one of a pinned compile (same kernels, the
 *    same distinct definitions), the header declares the symbols;
 *  - the decode model's present_* outputs are [1, 2, past+1, 16]. */
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

static rt_model *compile(const char *model, const char *const *dims, int ndims) {
  char path[1024], err[2048];
  snprintf(path, sizeof path, "%s/models/llama/%s/model.onnx", ONNX2C_SOURCE_DIR, model);
  rt_options o = {0};
  o.imp.dims = dims, o.imp.ndims = ndims;
  rt_model *m = NULL;
  if (rt_compile(path, NULL, &o, &m, err, sizeof err)) fail_msg("%s", err);
  return m;
}


static int64_t value_at(int64_t d, const int64_t *vals) {
  int64_t v;
  assert_true(ir_dim_eval(d, vals, &v));
  return v;
}

/* The temporaries' offsets at `vals`, recomputed from the plan. Returns the
 * arena's size. */
static int64_t plan_at(const sched_program *p, const int64_t *vals, int64_t *off, int64_t *bytes) {
  int64_t end = 0;
  for (int i = 0; i < p->nplan; i++) {
    const sched_buf *b = &p->bufs[p->plan[i]];
    bytes[i] = value_at(b->numel, vals) * (int64_t)ir_dtype_size(b->dtype);
    off[i] = 0;
    for (int j = 0; j < b->nbelow; j++) {
      const sched_buf *o = &p->bufs[b->below[j]];
      int64_t e = (off[o->plan] + bytes[o->plan] + 63) / 64 * 64;
      if (e > off[i]) off[i] = e;
    }
    int64_t e = (off[i] + bytes[i] + 63) / 64 * 64;
    if (e > end) end = e;
  }
  return end;
}

/* No two temporaries alive at the same time share a byte, at every point. */
static void check_plan(rt_model *m, const int64_t (*points)[2], int npoints) {
  const sched_program *p = m->p;
  assert_true(p->symbolic);
  assert_true(p->nplan > 4);
  int64_t *off = calloc((size_t)p->nplan, sizeof *off),
          *bytes = calloc((size_t)p->nplan, sizeof *bytes);
  int ns = ir_sym_count(m->g), checked = 0;
  for (int t = 0; t < npoints; t++) {
    int64_t vals[IR_MAX_SYMS] = {0};
    for (int i = 0; i < ns; i++) vals[ir_sym(m->g, i)] = m->dims[i] = points[t][i];
    int64_t end = plan_at(p, vals, off, bytes);
    for (int i = 0; i < p->nplan; i++) {
      const sched_buf *a = &p->bufs[p->plan[i]];
      assert_int_equal(off[i] % 64, 0);
      assert_true(off[i] + bytes[i] <= end);
      for (int j = 0; j < i; j++) {
        const sched_buf *b = &p->bufs[p->plan[j]];
        bool alive = !(a->last < b->first || b->last < a->first);
        if (!alive || !bytes[i] || !bytes[j]) continue;
        if (!(off[i] >= off[j] + bytes[j] || off[j] >= off[i] + bytes[i]))
          fail_msg("temporaries %d and %d overlap at point %d", p->plan[i], p->plan[j], t);
        checked++;
      }
    }
    assert_int_equal((int64_t)m->arena_size_dims(m->dims), end);
  }
  assert_true(checked > 0);
  free(off), free(bytes);
}

static void test_dynamic(void **state) {
  (void)state;
  rt_model *m = compile("tiny_dynamic", NULL, 0);
  char err[2048];
  if (rt_build(m, "-O1", err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(ir_sym_count(m->g), 2);
  assert_string_equal(ir_dim_sym_name(ir_sym(m->g, 0)), "batch");
  assert_string_equal(ir_dim_sym_name(ir_sym(m->g, 1)), "seq");
  static const int64_t points[][2] = {{1, 1}, {1, 7}, {2, 16}, {3, 64}, {7, 33}, {64, 2}, {1, 63}};
  check_plan(m, points, (int)(sizeof points / sizeof points[0]));
  /* outside the compile: refused, nothing read (no inputs are given) */
  static const int64_t bad[][2] = {
      {1, 65}, {1, 0}, {0, 4}, {-3, 4}, {INT64_C(1) << 31, 4}, {1, INT64_C(1) << 40}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(m->arena_size_dims(bad[i]), 0);
    assert_int_equal(m->run_dims(NULL, NULL, m->weights, NULL, bad[i]), 2);
  }
  /* the largest symbols are sizes, not overflows */
  const int64_t big[2] = {INT64_C(2147483647), 64};
  assert_true(m->arena_size_dims(big) > (size_t)1 << 40);
  char *h = model_file(m, "h");
  assert_non_null(strstr(h, "void *arena,\n    int64_t o2c_sym")); /* generated names */
  assert_non_null(strstr(h, "#define model_DIM_NAMES {\"batch\", \"seq\"}"));
  assert_non_null(strstr(h, "model_ERR_SHAPE = 2"));
  assert_null(strstr(h, "model_ARENA_SIZE"));
  free(h);
  /* the same kernels as a compile pinned to one shape (seq = 7: at 16, the
   * head size, two attention products would print alike when pinned) */
  const char *dims[] = {"batch=2", "seq=7"};
  rt_model *s = compile("tiny_dynamic", dims, 2);
  assert_int_equal(ir_sym_count(s->g), 0);
  assert_int_equal(m->p->nkernels, s->p->nkernels);
  char *cm = model_file(m, "c"), *cs = model_file(s, "c");
  int dm = 0, ds = 0;
  for (char *q = cm; (q = strstr(q, "\n/* kernel ")); q++) dm++;
  for (char *q = cs; (q = strstr(q, "\n/* kernel ")); q++) ds++;
  printf("kernels %d, distinct definitions: symbolic %d, pinned %d\n", m->p->nkernels, dm, ds);
  assert_int_equal(dm, ds);
  assert_true(dm < m->p->nkernels);
  free(cm), free(cs);
  rt_model_free(s);
  rt_model_free(m);
}

static void test_decode(void **state) {
  (void)state;
  rt_model *m = compile("tiny_decode", NULL, 0);
  char err[2048];
  if (rt_build(m, "-O1", err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(ir_sym_count(m->g), 1);
  int64_t past = ir_dim_sym("past");
  for (int i = 1; i < ir_output_count(m->g); i++) {
    const ir_shape *s = &ir_node_get(m->g, ir_output(m->g, i))->shape;
    assert_int_equal(s->rank, 4);
    assert_int_equal(s->d[2], ir_dim_add(past, 1));
  }
  static const int64_t points[][2] = {{1}, {7}, {15}, {31}, {63}, {1000}};
  check_plan(m, points, (int)(sizeof points / sizeof points[0]));
  const int64_t zero[1] = {0};
  assert_int_equal(m->arena_size_dims(zero), 0);
  rt_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dynamic),
      cmocka_unit_test(test_decode),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
