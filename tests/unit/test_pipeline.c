/* test_pipeline.c — end to end: a hand-built graph through the scheduler,
 * code generator, C compiler and loader; and node-test models through
 * rt_compile / rt_build / rt_run against their expected outputs. */
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

#define TMPDIR_STEM "unit_pipeline"
#include "unit_tmpdir.h"

/* y = exp(x) * 2 + 1 over x: f32[4,5]. */
static ir_graph *build_exp_graph(void) {
  ir_graph *g = ir_graph_new();
  ir_ref x = ir_input(g, "x", IR_F32, ir_shape_make(2, (int64_t[]){4, 5}));
  ir_ref y = ir_binary(g, IR_MUL, ir_exp(g, x), ir_scalar(g, IR_F32, 2.0));
  y = ir_binary(g, IR_ADD, y, ir_scalar(g, IR_F32, 1.0));
  assert_int_not_equal(y, IR_NONE);
  assert_int_equal(ir_mark_output(g, y, "y"), 0);
  if (ir_verify(g)) fail_msg("ir_verify: %s", ir_error(g));
  return g;
}

static void test_schedule_fuses_elementwise(void **state) {
  (void)state;
  ir_graph *g = build_exp_graph();
  sched_options so = {0};
  sched_program *p;
  char err[1024] = "";
  if (sched_build(g, &so, &p, err, sizeof err)) fail_msg("sched_build: %s", err);
  assert_int_equal(p->nkernels, 1);
  const sched_kernel *k = &p->kernels[0];
  assert_int_equal(k->root, ir_output(g, 0));
  assert_int_equal(p->bufs[k->out_buf].kind, SCHED_BUF_OUTPUT);
  int inputs = 0;
  for (int i = 0; i < k->nargs; i++) inputs += p->bufs[k->args[i]].kind == SCHED_BUF_INPUT;
  assert_int_equal(inputs, 1);
  assert_int_equal(p->arena_size, 0);
  sched_free(p);
  ir_graph_free(g);
}

/* Emits, builds and runs the hand-built graph; checks against libm. */
static void test_hand_graph_runs(void **state) {
  (void)state;
  char err[1024] = "";
  rt_model *m = calloc(1, sizeof *m);
  assert_non_null(m);
  m->g = build_exp_graph();
  snprintf(m->dir, sizeof m->dir, "%s", tmpdir);
  snprintf(m->name, sizeof m->name, "handmade");
  sched_options so = {0};
  if (sched_build(m->g, &so, &m->p, err, sizeof err)) fail_msg("sched_build: %s", err);
  char path[3][4400];
  FILE *f[3];
  const char *ext[3] = {"c", "h", "weights"};
  for (int i = 0; i < 3; i++) {
    snprintf(path[i], sizeof path[i], "%s/handmade.%s", tmpdir, ext[i]);
    f[i] = fopen(path[i], "wb");
    assert_non_null(f[i]);
  }
  cg_options co = {.name = "handmade"};
  int rc = cg_emit(m->p, &co, f[0], f[1], f[2], err, sizeof err);
  for (int i = 0; i < 3; i++) fclose(f[i]);
  if (rc) fail_msg("cg_emit: %s", err);
  if (rt_build(m, "-O1", err, sizeof err)) fail_msg("rt_build: %s", err);
  float xv[20];
  for (int i = 0; i < 20; i++) xv[i] = -2.0f + 0.25f * (float)i;
  imp_tensor in = {.name = "x", .dtype = IR_F32, .shape = ir_shape_make(2, (int64_t[]){4, 5}),
                   .data = xv, .bytes = sizeof xv};
  imp_tensor out;
  if (rt_run(m, &in, 1, &out, err, sizeof err)) fail_msg("rt_run: %s", err);
  assert_int_equal(out.dtype, IR_F32);
  assert_true(ir_shape_eq(&out.shape, &in.shape));
  for (int i = 0; i < 20; i++) {
    double want = exp((double)xv[i]) * 2 + 1;
    double got = ((float *)out.data)[i];
    if (fabs(got - want) > 1e-5 + 1e-5 * fabs(want)) fail_msg("y[%d] = %g, want %g", i, got, want);
  }
  imp_tensor_free(&out);
  rt_model_free(m);
}

/* Compiles NODE_DIR/NAME/model.onnx, runs it on test_data_set_0 and
 * compares every output with the tests' tolerance. */
static void run_node_test(const char *name) {
  char model[512], err[2048] = "";
  snprintf(model, sizeof model, "%s/%s/model.onnx", NODE_DIR, name);
  rt_options o = {0};
  rt_model *m;
  if (rt_compile(model, NULL, &o, &m, err, sizeof err)) fail_msg("%s: rt_compile: %s", name, err);
  if (rt_build(m, "-O1", err, sizeof err)) fail_msg("%s: rt_build: %s", name, err);
  imp_tensor ins[8], *outs = calloc(8, sizeof *outs);
  assert_non_null(outs);
  int nin = ir_input_count(m->g), nout = ir_output_count(m->g);
  assert_true(nin <= 8 && nout <= 8);
  char path[600];
  for (int i = 0; i < nin; i++) {
    snprintf(path, sizeof path, "%s/%s/test_data_set_0/input_%d.pb", NODE_DIR, name, i);
    if (rt_tensor_read(path, &ins[i], err, sizeof err)) fail_msg("%s", err);
  }
  if (rt_run(m, ins, nin, outs, err, sizeof err)) fail_msg("%s: rt_run: %s", name, err);
  for (int i = 0; i < nout; i++) {
    imp_tensor want;
    snprintf(path, sizeof path, "%s/%s/test_data_set_0/output_%d.pb", NODE_DIR, name, i);
    if (rt_tensor_read(path, &want, err, sizeof err)) fail_msg("%s", err);
    rt_diff d;
    if (!rt_compare(&outs[i], &want, 1e-5, 1e-3, &d))
      fail_msg("%s output %d: shape_ok=%d mismatches=%lld max_abs=%g", name, i, d.shape_ok,
               (long long)d.mismatches, d.max_abs);
    imp_tensor_free(&want);
    imp_tensor_free(&outs[i]);
  }
  for (int i = 0; i < nin; i++) imp_tensor_free(&ins[i]);
  free(outs);
  rt_model_free(m);
}

static void test_node_add(void **state) {
  (void)state;
  run_node_test("test_add");
}

static void test_node_models(void **state) {
  (void)state;
  run_node_test("test_relu");
  run_node_test("test_matmul_2d");
  run_node_test("test_split_equal_parts_1d");
}

/* A missing input tensor is an error with a message, not a crash. */
static void test_run_wrong_input(void **state) {
  (void)state;
  char err[2048] = "";
  rt_options o = {0};
  rt_model *m;
  if (rt_compile(NODE_DIR "/test_relu/model.onnx", NULL, &o, &m, err, sizeof err)) fail_msg("%s", err);
  if (rt_build(m, "-O1", err, sizeof err)) fail_msg("%s", err);
  float v[2] = {1, 2};
  imp_tensor in = {.name = "x", .dtype = IR_F32, .shape = ir_shape_make(1, (int64_t[]){2}), .data = v, .bytes = 8};
  imp_tensor out[2];
  err[0] = 0;
  assert_int_equal(rt_run(m, &in, 1, out, err, sizeof err), -1);
  assert_non_null(strstr(err, "'x'"));
  for (int i = 0; i < ir_output_count(m->g); i++) imp_tensor_free(&out[i]);
  rt_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_schedule_fuses_elementwise),
      cmocka_unit_test(test_hand_graph_runs),
      cmocka_unit_test(test_node_add),
      cmocka_unit_test(test_node_models),
      cmocka_unit_test(test_run_wrong_input),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
