/* test_sink.c — the sunk epilogues (ir/sink.c): a reduction read through
 * a wide convolution's strided view, then a bias and a Relu, read by a
 * padded copy and by a sum. The rewrite must move both ops (the count) and
 * leave every output's value as it was (ir_eval before and after, exact:
 * the same float ops on the same elements); a residual Add (not a
 * broadcast) must stay where it is. The same through a ConvTranspose's
 * shuffle (a copy that reorders the reduction's elements): bias, scale
 * and Relu move in front of it, the last of them a graph output. And onto
 * a convolution's bands stored channels innermost and read transposed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ir.h"

#include <stdlib.h>
#include <string.h>

enum { C = 4, K = 3, OH = 5, OW = 5, WP = 7, COLS = OH * WP };

static ir_ref konst(ir_graph *g, ir_shape s, float scale) {
  int64_t n = ir_shape_numel(&s);
  float *v = malloc((size_t)n * sizeof *v);
  assert_non_null(v);
  for (int64_t i = 0; i < n; i++) v[i] = scale * (float)((i * 37) % 23 - 11);
  ir_ref r = ir_const(g, "c", IR_F32, s, v);
  free(v);
  return r;
}

/* [1, C, OH, OW]: the reduction over K, read as rows of WP (the last
 * WP - OW columns of each row never read). */
static ir_ref wide_conv(ir_graph *g) {
  ir_ref r = ir_reduce(g, IR_ADD, konst(g, (ir_shape){4, {1, C, K, COLS}}, 0.25f), 1u << 2);
  int64_t one = 1, wp = WP, ow = OW, oh = OH;
  ir_ref y = ir_view_window(g, ir_view_reshape(g, r, (ir_shape){3, {1, C, COLS}}), 1, &ow, &wp, &one, &oh);
  int perm[4] = {0, 1, 3, 2};
  return ir_view_permute(g, y, perm);
}

static float *eval_outputs(ir_graph *g, int64_t *n) {
  int64_t total = 0;
  for (int i = 0; i < ir_output_count(g); i++) total += ir_shape_numel(&ir_node_get(g, ir_output(g, i))->shape);
  float *all = malloc((size_t)total * sizeof *all);
  assert_non_null(all);
  int64_t at = 0;
  for (int i = 0; i < ir_output_count(g); i++) {
    ir_ref o = ir_output(g, i);
    int64_t m = ir_shape_numel(&ir_node_get(g, o)->shape);
    void *data = NULL;
    assert_int_equal(ir_eval(g, o, &data), 0);
    memcpy(all + at, data, (size_t)m * sizeof *all);
    free(data);
    at += m;
  }
  *n = total;
  return all;
}

/* Rewrites `g` and checks the count and the outputs' values; frees g. */
static void rewrite_and_compare(ir_graph *g, int expect) {
  assert_false(ir_failed(g));
  int64_t n0, n1;
  float *before = eval_outputs(g, &n0);
  assert_int_equal(ir_rewrite_sink_views(g), expect);
  assert_false(ir_failed(g));
  float *after = eval_outputs(g, &n1);
  assert_int_equal(n0, n1);
  assert_memory_equal(before, after, (size_t)n0 * sizeof *before);
  free(before), free(after);
  ir_graph_free(g);
}

/* Relu of y read by a padded copy (right pad pad_w) and a sum over the map:
 * the outputs, then the rewrite, its count and the values checked. */
static void relu_outputs_compare(ir_graph *g, ir_ref y, int64_t pad_w, int expect) {
  y = ir_binary(g, IR_MAX, y, ir_scalar(g, IR_F32, 0.0));
  int64_t b[4] = {0, 0, 1, 1}, e[4] = {0, 0, 1, pad_w};
  ir_mark_output(g, ir_move(g, ir_view_pad(g, y, b, e, 0.0)), "padded");
  ir_mark_output(g, ir_reduce(g, IR_ADD, y, 0xc), "sum");
  rewrite_and_compare(g, expect);
}

/* Builds the graph, rewrites it and checks the count and the values. */
static void check(bool residual, int expect) {
  ir_graph *g = ir_graph_new();
  assert_non_null(g);
  ir_ref y = wide_conv(g);
  y = ir_binary(g, IR_ADD, y, konst(g, (ir_shape){4, {1, C, 1, 1}}, 0.5f));
  if (residual) y = ir_binary(g, IR_ADD, y, konst(g, (ir_shape){4, {1, C, OH, OW}}, 0.125f));
  relu_outputs_compare(g, y, 2, expect);
}

static void test_bias_relu_sunk(void **state) {
  (void)state;
  check(false, 2);
}

static void test_residual_stays(void **state) {
  (void)state;
  check(true, 1); /* the bias only: the residual is not a broadcast */
}

enum { H = 3, W = 5 };

/* [1, C, 2H, 2W]: the reduction [1, C, 4 taps, 1, H*W] over K, each tap
 * moved after its position axis (the copy ir_view_reshape inserts). */
static ir_ref shuffle(ir_graph *g) {
  ir_ref r = ir_reduce(g, IR_ADD, konst(g, (ir_shape){5, {1, C, 4, K, H * W}}, 0.25f), 1u << 3);
  int perm[6] = {0, 1, 4, 2, 5, 3};
  ir_ref y = ir_view_permute(g, ir_view_reshape(g, r, (ir_shape){6, {1, C, 2, 2, H, W}}), perm);
  return ir_view_reshape(g, y, (ir_shape){4, {1, C, 2 * H, 2 * W}});
}

static void check_shuffle(bool residual, int expect) {
  ir_graph *g = ir_graph_new();
  assert_non_null(g);
  ir_ref y = ir_binary(g, IR_ADD, shuffle(g), konst(g, (ir_shape){4, {1, C, 1, 1}}, 0.5f));
  if (residual) y = ir_binary(g, IR_ADD, y, konst(g, (ir_shape){4, {1, C, 2 * H, 2 * W}}, 0.125f));
  y = ir_binary(g, IR_MUL, y, konst(g, (ir_shape){4, {1, C, 1, 1}}, 0.75f));
  y = ir_binary(g, IR_MAX, y, ir_scalar(g, IR_F32, 0.0));
  ir_mark_output(g, y, "y");
  ir_ref flat = ir_view_reshape(g, y, (ir_shape){3, {1, C, 4 * H * W}}); /* read in order, flattened */
  ir_mark_output(g, ir_reduce(g, IR_ADD, flat, 1u << 2), "sum");
  rewrite_and_compare(g, expect);
}

static void test_shuffle_sunk(void **state) {
  (void)state;
  check_shuffle(false, 3);
}

static void test_shuffle_residual_stays(void **state) {
  (void)state;
  check_shuffle(true, 1);
}

enum { BH = 2, BW = 6 };

/* [1, C, 2 BH, BW]: two bands of a sum over `axes` reduced axes, each
 * [1, BH, BW, C] (channels innermost, as importer/conv_cols.c's imp_conv_cols
 * stores them), concatenated along the rows and read transposed. */
static ir_ref bands_transposed(ir_graph *g, int axes) {
  ir_ref part[2];
  for (int i = 0; i < 2; i++) {
    ir_ref r = axes == 2 ? ir_reduce(g, IR_ADD, konst(g, (ir_shape){6, {1, BH, BW, K, 2, C}}, 0.25f + i), 3u << 3)
                         : ir_reduce(g, IR_ADD, konst(g, (ir_shape){6, {1, BH, BW, K, 1, C}}, 0.25f + i), 1u << 3);
    part[i] = ir_view_reshape(g, r, (ir_shape){4, {1, BH, BW, C}});
  }
  int64_t b0[4] = {0}, e0[4] = {0, BH, 0, 0}, b1[4] = {0, BH, 0, 0}, e1[4] = {0};
  ir_ref y = ir_binary(g, IR_ADD, ir_view_pad(g, part[0], b0, e0, 0.0), ir_view_pad(g, part[1], b1, e1, 0.0));
  int perm[4] = {0, 3, 1, 2};
  return ir_view_permute(g, y, perm);
}

/* Bias and Relu on the transposed view move onto the channels-innermost
 * bands (2); over a sum of one axis (a matmul's) nothing moves. */
static void check_transposed(int axes, int expect) {
  ir_graph *g = ir_graph_new();
  assert_non_null(g);
  ir_ref y = ir_binary(g, IR_ADD, bands_transposed(g, axes), konst(g, (ir_shape){4, {1, C, 1, 1}}, 0.5f));
  relu_outputs_compare(g, y, 1, expect);
}

static void test_transposed_sunk(void **state) {
  (void)state;
  check_transposed(2, 2);
}

static void test_transposed_matmul_stays(void **state) {
  (void)state;
  check_transposed(1, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bias_relu_sunk),
      cmocka_unit_test(test_residual_stays),
      cmocka_unit_test(test_shuffle_sunk),
      cmocka_unit_test(test_shuffle_residual_stays),
      cmocka_unit_test(test_transposed_sunk),
      cmocka_unit_test(test_transposed_matmul_stays),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
