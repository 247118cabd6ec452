/* test_collapse.c — loop collapse (scheduler/collapse.c), pinned on the
 * loop nests isl builds and checked by running the code:
 *   embedding of ids [B, S] (B, S symbolic in the dynamic tiny LLaMA, the
 *     static one [2, 3])                 2 loops (B*S, D), not 3
 *   element-wise over [2, 3, 4, 5]       1 loop of 120
 *   + a bias broadcast over C            3 loops (N, C, H*W)
 *   a transposed operand                 3 loops: no collapse is legal
 *   a transpose of two operands          its innermost loop along their rows
 * Each also compiled with no_collapse, so the counts can fail; the outputs
 * of the collapsed code are compared with a reference computed here (the
 * embedding with the uncollapsed code's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime.h"

#include <string.h>
#include <unistd.h>

#define TMPDIR_STEM "unit_collapse"
#include "unit_tmpdir.h"
#include "unit_graph.h"

static isl_bool count_for(__isl_keep isl_ast_node *node, void *n) {
  if (isl_ast_node_get_type(node) == isl_ast_node_for) ++*(int *)n;
  return isl_bool_true;
}

/* The for loops of a kernel's loop nest. */
static int loops(const sched_kernel *k) {
  int n = 0;
  isl_ast_node_foreach_descendant_top_down(k->ast, count_for, &n);
  return n;
}

/* Matmuls untiled: the kernels looked at here are no matmuls, and the
 * tiles' legality proofs were 90 % of the symbolic LLaMA's compile (its
 * embedding kernel is the same C either way). */
static rt_model *compile(const char *model, bool no_collapse) {
  char path[1024], err[2048];
  snprintf(path, sizeof path, "%s/models/%s", ONNX2C_SOURCE_DIR, model);
  rt_options o = {0};
  o.sched.no_collapse = no_collapse;
  o.sched.no_tile = true;
  rt_model *m = NULL;
  if (rt_compile(path, NULL, &o, &m, err, sizeof err)) fail_msg("%s", err);
  return m;
}

/* The kernel whose root came from ONNX node `label` ("Div 'NAME'"). */
static const sched_kernel *kernel_of(const rt_model *m, const char *label) {
  for (int i = 0; i < m->p->nkernels; i++) {
    const char *l = ir_node_get(m->p->g, m->p->kernels[i].root)->label;
    if (l && strstr(l, label)) return &m->p->kernels[i];
  }
  fail_msg("no kernel of node %s", label);
  return NULL;
}

static void test_embedding_static(void **state) {
  (void)state;
  char err[2048], path[1024];
  imp_tensor in, out[2];
  snprintf(path, sizeof path, "%s/models/gather/embedding_ids.pb", ONNX2C_SOURCE_DIR);
  if (rt_tensor_read(path, &in, err, sizeof err)) fail_msg("%s", err);
  for (int c = 0; c < 2; c++) {
    rt_model *m = compile("gather/embedding.onnx", c);
    assert_int_equal(m->p->nkernels, 1);
    const sched_kernel *k = &m->p->kernels[0];
    assert_int_equal(loops(k), c ? 3 : 2);
    if (!c) assert_int_equal(k->extent[k->outer[0]], 6); /* ids [2, 3] */
    if (rt_build(m, "-O1", err, sizeof err)) fail_msg("%s", err);
    if (rt_run(m, &in, 1, &out[c], err, sizeof err)) fail_msg("%s", err);
    rt_model_free(m);
  }
  assert_int_equal(out[0].bytes, out[1].bytes);
  assert_memory_equal(out[0].data, out[1].data, out[0].bytes);
  imp_tensor_free(&in), imp_tensor_free(&out[0]), imp_tensor_free(&out[1]);
}

/* The dynamic tiny LLaMA: ids [batch, seq], the embedding fused with the
 * first norm's sum: one loop over batch*seq (a symbolic product), one over
 * the model dimension. */
static void test_embedding_symbolic(void **state) {
  (void)state;
  for (int c = 0; c < 2; c++) {
    rt_model *m = compile("llama/tiny_dynamic/model.onnx", c);
    const sched_kernel *k = kernel_of(m, "/layers.0/attn_norm/Div");
    assert_int_equal(k->ngathers, 1);
    assert_int_equal(loops(k), c ? 3 : 2);
    if (!c) assert_true(ir_dim_is_sym(k->extent[k->outer[0]]));
    rt_model_free(m);
  }
}

/* Builds relu(x + y) or relu(x + bias) or relu(transpose(x) + y) and
 * checks its loop count and values. */
enum { PLAIN, BIAS, TRANSPOSED };

static void check_elementwise(int form, int want_loops, int64_t want_extent) {
  static const int64_t d[4] = {2, 3, 4, 5};
  float x[120], y[120], got[120];
  double want[120];
  fill(x, 120, 1), fill(y, 120, 2);
  for (int c = 0; c < 2; c++) {
    ir_graph *g = ir_graph_new();
    ir_ref a = ir_input(g, "a", IR_F32, SHAPE(2, 3, 4, 5)), b;
    b = ir_input(g, "b", IR_F32, form == BIAS ? SHAPE(1, 3, 1, 1) : SHAPE(2, 3, 4, 5));
    if (form == TRANSPOSED) {
      a = ir_view_permute(g, a, (const int[]){0, 2, 1, 3});
      b = ir_view_permute(g, b, (const int[]){0, 2, 1, 3});
    }
    ir_ref s = ir_binary(g, IR_ADD, a, b);
    ir_ref y0 = ir_binary(g, IR_MAX, s, ir_scalar(g, IR_F32, 0.0));
    finish(g, y0);
    sched_options so = {.no_collapse = c};
    char name[32];
    snprintf(name, sizeof name, "ew%d_%d", form, c);
    rt_model *m = build_model_with(g, name, &so);
    assert_int_equal(m->p->nkernels, 1);
    const sched_kernel *k = &m->p->kernels[0];
    assert_int_equal(loops(k), c ? 4 : want_loops);
    if (!c) assert_int_equal(k->extent[k->outer[k->nouter - 1]], want_extent);
    imp_tensor ins[2] = {tensor("a", SHAPE(2, 3, 4, 5), x),
                         tensor("b", form == BIAS ? SHAPE(1, 3, 1, 1) : SHAPE(2, 3, 4, 5), y)}, out;
    char err[1024];
    if (rt_run(m, ins, 2, &out, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(out.bytes, sizeof got);
    memcpy(got, out.data, sizeof got);
    imp_tensor_free(&out);
    rt_model_free(m);
    /* out[n][i][j][w]: x and y read at [n][j][i][w] when transposed */
    int64_t o = 0;
    for (int n = 0; n < 2; n++)
      for (int i = 0; i < (form == TRANSPOSED ? 4 : 3); i++)
        for (int j = 0; j < (form == TRANSPOSED ? 3 : 4); j++)
          for (int w = 0; w < d[3]; w++, o++) {
            int ci = form == TRANSPOSED ? j : i, hj = form == TRANSPOSED ? i : j;
            int64_t src = ((n * 3 + ci) * 4 + hj) * 5 + w;
            double v = (double)x[src] + (form == BIAS ? y[ci] : y[src]);
            want[o] = v > 0 ? v : 0;
          }
    check_close(got, want, 120, name);
  }
}

static void test_elementwise_4d(void **state) {
  (void)state;
  check_elementwise(PLAIN, 1, 120);
}

static void test_bias_over_channels(void **state) {
  (void)state;
  check_elementwise(BIAS, 3, 20);
}

static void test_transposed_stays(void **state) {
  (void)state;
  check_elementwise(TRANSPOSED, 4, 5);
}

/* permute(x) [+ permute(y)] of x, y [64][32]: along the output's rows
 * every read strides 32 floats (a cache line or more). Two reads
 * contiguous along the output's column axis run it innermost (the output
 * stored with a stride); a single read (a plain transpose) keeps the
 * output's order. */
static void check_transposed_order(bool two) {
  enum { R = 64, C = 32 };
  float x[R * C], y[R * C], got[R * C];
  fill(x, R * C, 3), fill(y, R * C, 4);
  ir_graph *g = ir_graph_new();
  ir_ref a = ir_view_permute(g, ir_input(g, "a", IR_F32, SHAPE(R, C)), (const int[]){1, 0});
  if (two) a = ir_binary(g, IR_ADD, a, ir_view_permute(g, ir_input(g, "b", IR_F32, SHAPE(R, C)), (const int[]){1, 0}));
  else a = ir_binary(g, IR_MUL, a, ir_scalar(g, IR_F32, 2.0));
  finish(g, a);
  rt_model *m = build_model_with(g, two ? "transposed2" : "transposed1", NULL);
  assert_int_equal(m->p->nkernels, 1);
  const sched_kernel *k = &m->p->kernels[0];
  assert_int_equal(k->nouter, 2);
  assert_int_equal(k->outer[1], two ? 0 : 1); /* the innermost loop: out's rows (x's columns) or out's columns */
  imp_tensor ins[2] = {tensor("a", SHAPE(R, C), x), tensor("b", SHAPE(R, C), y)}, out;
  char err[1024];
  if (rt_run(m, ins, two ? 2 : 1, &out, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(out.bytes, sizeof got);
  memcpy(got, out.data, sizeof got);
  imp_tensor_free(&out);
  rt_model_free(m);
  double want[R * C];
  for (int i = 0; i < C; i++)
    for (int j = 0; j < R; j++) want[i * R + j] = two ? (double)x[j * C + i] + y[j * C + i] : 2.0 * x[j * C + i];
  check_close(got, want, R * C, two ? "transposed2" : "transposed1");
}

static void test_transposed_copy_order(void **state) {
  (void)state;
  check_transposed_order(false);
  check_transposed_order(true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_embedding_static),  cmocka_unit_test(test_embedding_symbolic),
      cmocka_unit_test(test_elementwise_4d),    cmocka_unit_test(test_bias_over_channels),
      cmocka_unit_test(test_transposed_stays),  cmocka_unit_test(test_transposed_copy_order),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
