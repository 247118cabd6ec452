/* test_tile.c — the register-blocked matmul form (scheduler/gemm.c, tile.c)
 * and the transposed keys (ir/layout.c): which kernels take it, with which
 * blocks and packed panels, that the generated code computes what a plain
 * reference in the test computes (with partial tiles in both directions),
 * and that the isl legality check refuses a tiled order that is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime.h"

#include <string.h>

#define TMPDIR_STEM "unit_tile"
#include "unit_tmpdir.h"
#include "unit_graph.h"

/* 20 rows = 2 full blocks of 8 + 4; 40 columns = one panel of 32 + 8 */
enum { M = 20, K = 24, N = 40 };

static float wdata[K * N], w3data[K * N], bias[N];

/* y = relu(A[M,K] @ W[K,N] + bias): W and bias are weights */
static ir_graph *g_linear(void) {
  ir_graph *g = ir_graph_new();
  ir_ref a = ir_input(g, "A", IR_F32, SHAPE(M, K));
  ir_ref w = ir_const(g, "W", IR_F32, SHAPE(K, N), wdata);
  ir_ref y = ir_binary(g, IR_ADD, ir_matmul(g, a, w), ir_const(g, "bias", IR_F32, SHAPE(N), bias));
  finish(g, ir_binary(g, IR_MAX, y, ir_scalar(g, IR_F32, 0.0)));
  return g;
}

/* y = silu(A @ W) * (A @ W3): SwiGLU, two sums in one kernel */
static ir_graph *g_swiglu(void) {
  ir_graph *g = ir_graph_new();
  ir_ref a = ir_input(g, "A", IR_F32, SHAPE(M, K));
  ir_ref h = ir_matmul(g, a, ir_const(g, "W", IR_F32, SHAPE(K, N), wdata));
  ir_ref u = ir_matmul(g, a, ir_const(g, "W3", IR_F32, SHAPE(K, N), w3data));
  finish(g, ir_binary(g, IR_MUL, ir_binary(g, IR_MUL, h, ir_sigmoid(g, h)), u));
  return g;
}

enum { H = 2, S = 12, D = 16 };

/* scores = Q @ (2 K)^T per head: the keys are computed, read along D */
static ir_graph *g_scores(void) {
  ir_graph *g = ir_graph_new();
  ir_ref q = ir_input(g, "Q", IR_F32, SHAPE(H, S, D));
  ir_ref k =
      ir_binary(g, IR_MUL, ir_input(g, "K", IR_F32, SHAPE(H, S, D)), ir_scalar(g, IR_F32, 2.0));
  finish(g, ir_matmul(g, q, ir_view_permute(g, k, (int[]){0, 2, 1})));
  return g;
}

static const sched_kernel *only_kernel(const sched_program *p) {
  assert_int_equal(p->nkernels, 1);
  return &p->kernels[0];
}

/* Runs `m` on A[M,K] filled from `seed` (into `a`); the caller frees the output. */
static imp_tensor run_on_a(rt_model *m, float *a, unsigned seed) {
  fill(a, M * K, seed);
  imp_tensor in = tensor("A", SHAPE(M, K), a), out;
  char err[1024] = "";
  if (rt_run(m, &in, 1, &out, err, sizeof err)) fail_msg("rt_run: %s", err);
  return out;
}

static void check_linear_values(rt_model *m) {
  float a[M * K];
  imp_tensor out = run_on_a(m, a, 7);
  double want[M * N];
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = bias[j];
      for (int t = 0; t < K; t++) s += (double)a[i * K + t] * wdata[t * N + j];
      want[i * N + j] = fmax(s, 0);
    }
  check_close(out.data, want, M * N, m->name);
  imp_tensor_free(&out);
}

static void test_linear_blocked(void **state) {
  (void)state;
  rt_model *m = build_model_with(g_linear(), "linear", NULL);
  const sched_kernel *k = only_kernel(m->p);
  assert_true(k->gemm.on);
  assert_int_equal(k->gemm.mr, 8);
  assert_int_equal(k->gemm.nr, 32);
  assert_int_equal(k->gemm.npacked, 1);
  assert_true(k->ndeps > 0);
  /* W is stored once, as two zero-padded panels of 24 x 32; the original is dropped */
  const sched_buf *pb = &m->p->bufs[k->gemm.packed_buf[0]];
  assert_non_null(pb->pack);
  assert_int_equal(pb->numel, 2 * K * 32);
  int64_t stored = 0;
  for (int b = 0; b < m->p->nbufs; b++)
    if (m->p->bufs[b].kind == SCHED_BUF_WEIGHT && !m->p->bufs[b].unused)
      stored += m->p->bufs[b].numel;
  assert_int_equal(stored, 2 * K * 32 + N); /* panels and the bias */
  check_linear_values(m);
  rt_model_free(m);
}

static void test_linear_no_tile(void **state) {
  (void)state;
  sched_options so = {.no_tile = true};
  rt_model *m = build_model_with(g_linear(), "linear_flat", &so);
  const sched_kernel *k = only_kernel(m->p);
  assert_false(k->gemm.on);
  assert_int_equal(k->gemm.npacked, 0);
  check_linear_values(m);
  rt_model_free(m);
}

static void test_swiglu_one_blocked_kernel(void **state) {
  (void)state;
  rt_model *m = build_model_with(g_swiglu(), "swiglu", NULL);
  const sched_kernel *k = only_kernel(m->p);
  assert_true(k->gemm.on);
  assert_int_equal(k->nstages, 2);
  assert_int_equal(k->gemm.npacked, 2);
  assert_int_equal(k->gemm.mr, 6); /* two blocks of 6 x 32 accumulators */
  float a[M * K];
  imp_tensor out = run_on_a(m, a, 9);
  double want[M * N];
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double h = 0, u = 0;
      for (int t = 0; t < K; t++)
        h += (double)a[i * K + t] * wdata[t * N + j], u += (double)a[i * K + t] * w3data[t * N + j];
      want[i * N + j] = h / (1 + exp(-h)) * u;
    }
  check_close(out.data, want, M * N, "swiglu");
  imp_tensor_free(&out);
  rt_model_free(m);
}

static void test_scores_keys_transposed(void **state) {
  (void)state;
  ir_graph *g = g_scores();
  assert_int_equal(ir_rewrite_matmul_operands(g), 1);
  if (ir_verify(g)) fail_msg("ir_verify: %s", ir_error(g));
  rt_model *m = build_model_with(g, "scores", NULL);
  /* the transposed copy of 2K (the multiply computed inline), then the blocked product */
  assert_int_equal(m->p->nkernels, 2);
  const sched_kernel *copy = &m->p->kernels[0], *mm = &m->p->kernels[1];
  assert_int_equal(ir_node_get(m->p->g, copy->root)->op, IR_MOVE);
  assert_true(mm->gemm.on);
  assert_int_equal(mm->gemm.npacked, 0); /* computed: read as it is, now contiguous */
  float q[H * S * D], kk[H * S * D];
  fill(q, H * S * D, 3);
  fill(kk, H * S * D, 4);
  imp_tensor in[2] = {tensor("Q", SHAPE(H, S, D), q), tensor("K", SHAPE(H, S, D), kk)}, out;
  char err[1024] = "";
  if (rt_run(m, in, 2, &out, err, sizeof err)) fail_msg("rt_run: %s", err);
  double want[H * S * S];
  for (int h = 0; h < H; h++)
    for (int i = 0; i < S; i++)
      for (int j = 0; j < S; j++) {
        double s = 0;
        for (int d = 0; d < D; d++)
          s += (double)q[(h * S + i) * D + d] * 2 * kk[(h * S + j) * D + d];
        want[(h * S + i) * S + j] = s;
      }
  check_close(out.data, want, H * S * S, "scores");
  imp_tensor_free(&out);
  rt_model_free(m);
}

/* One query row (a decode step): the keys are not copied. */
static void test_scores_one_row_not_copied(void **state) {
  (void)state;
  ir_graph *g = ir_graph_new();
  ir_ref q = ir_input(g, "Q", IR_F32, SHAPE(H, 1, D));
  ir_ref k =
      ir_binary(g, IR_MUL, ir_input(g, "K", IR_F32, SHAPE(H, S, D)), ir_scalar(g, IR_F32, 2.0));
  finish(g, ir_matmul(g, q, ir_view_permute(g, k, (int[]){0, 2, 1})));
  assert_int_equal(ir_rewrite_matmul_operands(g), 0);
  ir_graph_free(g);
}

static void test_misordered_tiles_refused(void **state) {
  (void)state;
  ir_graph *g = g_linear();
  sched_options so = {.tile_misorder = true};
  sched_program *p = NULL;
  char err[1024] = "";
  assert_int_equal(sched_build(g, &so, &p, err, sizeof err), -1);
  assert_null(p);
  assert_non_null(strstr(err, "changes a dependence"));
  ir_graph_free(g);
}

/* Slices of k (AVX2: kc = 336 of K = 1000 for one sum, 168 for two; the
 * last slice shorter), with partial row and column tiles: y = relu(A W + b)
 * and SwiGLU, against the plain sums. */
enum { KB = 1000 };
static float wbig[KB * N], w3big[KB * N];

static void check_k_sliced(bool swiglu, int kc) {
  ir_graph *g = ir_graph_new();
  ir_ref a = ir_input(g, "A", IR_F32, SHAPE(M, KB));
  ir_ref h = ir_matmul(g, a, ir_const(g, "W", IR_F32, SHAPE(KB, N), wbig)), y;
  if (swiglu) {
    ir_ref u = ir_matmul(g, a, ir_const(g, "W3", IR_F32, SHAPE(KB, N), w3big));
    y = ir_binary(g, IR_MUL, ir_binary(g, IR_MUL, h, ir_sigmoid(g, h)), u);
  } else {
    ir_ref b = ir_binary(g, IR_ADD, h, ir_const(g, "bias", IR_F32, SHAPE(N), bias));
    y = ir_binary(g, IR_MAX, b, ir_scalar(g, IR_F32, 0.0));
  }
  finish(g, y);
  sched_options so = {0};
  char err[256];
  assert_int_equal(sched_target_get("x86-64-v3", &so.target, err, sizeof err), 0);
  rt_model *m = build_model_with(g, swiglu ? "swiglu_sliced" : "linear_sliced", &so);
  const sched_kernel *k = only_kernel(m->p);
  assert_true(k->gemm.on);
  assert_int_equal(k->gemm.kc, kc);
  static float a_[M * KB];
  fill(a_, M * KB, 11);
  imp_tensor in = tensor("A", SHAPE(M, KB), a_), out;
  if (rt_run(m, &in, 1, &out, err, sizeof err)) fail_msg("rt_run: %s", err);
  double want[M * N];
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0, u = 0;
      for (int t = 0; t < KB; t++)
        s += (double)a_[i * KB + t] * wbig[t * N + j], u += (double)a_[i * KB + t] * w3big[t * N + j];
      want[i * N + j] = swiglu ? s / (1 + exp(-s)) * u : fmax(s + bias[j], 0);
    }
  check_close(out.data, want, M * N, m->name);
  imp_tensor_free(&out);
  rt_model_free(m);
}

static void test_linear_k_sliced(void **state) {
  (void)state;
  check_k_sliced(false, 336);
}

static void test_swiglu_k_sliced(void **state) {
  (void)state;
  check_k_sliced(true, 336);
}

/* The legality check sees through the copies to and from the partial sums:
 * a misordered sliced kernel is refused too. */
static void test_misordered_k_slices_refused(void **state) {
  (void)state;
  ir_graph *g = ir_graph_new();
  ir_ref a = ir_input(g, "A", IR_F32, SHAPE(M, KB));
  finish(g, ir_matmul(g, a, ir_const(g, "W", IR_F32, SHAPE(KB, N), wbig)));
  sched_options so = {.tile_misorder = true};
  char err[1024] = "";
  assert_int_equal(sched_target_get("x86-64-v3", &so.target, err, sizeof err), 0);
  sched_program *p = NULL;
  assert_int_equal(sched_build(g, &so, &p, err, sizeof err), -1);
  assert_null(p);
  assert_non_null(strstr(err, "changes a dependence"));
  ir_graph_free(g);
}

static int setup(void **state) {
  fill(wdata, K * N, 1);
  fill(w3data, K * N, 2);
  fill(wbig, KB * N, 12);
  fill(w3big, KB * N, 13);
  fill(bias, N, 5);
  return tmpdir_setup(state);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_linear_blocked),
      cmocka_unit_test(test_linear_no_tile),
      cmocka_unit_test(test_swiglu_one_blocked_kernel),
      cmocka_unit_test(test_scores_keys_transposed),
      cmocka_unit_test(test_scores_one_row_not_copied),
      cmocka_unit_test(test_misordered_tiles_refused),
      cmocka_unit_test(test_linear_k_sliced),
      cmocka_unit_test(test_swiglu_k_sliced),
      cmocka_unit_test(test_misordered_k_slices_refused),
  };
  return cmocka_run_group_tests(tests, setup, tmpdir_teardown);
}
