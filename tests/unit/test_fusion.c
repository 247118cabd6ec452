/* test_fusion.c — how many kernels the scheduler makes for common
 * patterns, and how many buffers each kernel touches (k->nargs: the
 * buffer it writes first, then every buffer its inline expression reads).
 * Graphs are built here with the ir builder (Conv through the importer),
 * and a few of the fused kernels are emitted, compiled and run against a
 * plain reference computed in the test.
 *
 * Expected counts:
 *   MatMul                      1 kernel (the K reduction is a stage)
 *   MatMul + Relu               1 (Relu is the final statement over M,N)
 *   MatMul + bias + Relu        1
 *   Softmax                     1 (max and sum stages, final over all axes,
 *                                 exp(x - max) kept in the output by the sum)
 *   LayerNormalization pattern  1 (sum(x) and sum((x-mean)^2) stages)
 *   Conv + Relu                 1
 *   10 element-wise ops         1
 *   MatMul -> MatMul            2 (the second reads the first along K)
 *   Add + Relu read padded and  3 (Add + Relu, the padded copy, the sum)
 *   as is (a residual block's end)
 *
 * Scheduler bugs of the past, asserted absent:
 *   (1) non-square MatMul -> MatMul made 3 kernels (an extra copy)
 *       (has_copy_kernel);
 *   (2) Add + Relu read by a padded copy and by another kernel made the
 *       Add a kernel of its own (test_add_relu_padded). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

#define TMPDIR_STEM "unit_fusion"
#include "unit_tmpdir.h"
#include "unit_graph.h"

/* Schedules `g`; on an unexpected count the schedule goes to
 * TMPDIR/NAME.sched (and stderr) for the report. */
static sched_program *schedule(ir_graph *g, const char *name) {
  sched_options so = {0};
  sched_program *p;
  char err[1024] = "";
  if (sched_build(g, &so, &p, err, sizeof err)) fail_msg("%s: sched_build: %s", name, err);
  char path[600];
  snprintf(path, sizeof path, "%s/%s.sched", tmpdir, name);
  FILE *f = fopen(path, "w");
  if (f) {
    sched_dump(p, f);
    fclose(f);
  }
  return p;
}

static void print_kernels(const sched_program *p, const char *name) {
  printf("[%s] %d kernel(s)\n", name, p->nkernels);
  for (int i = 0; i < p->nkernels; i++) {
    const sched_kernel *k = &p->kernels[i];
    const ir_node *r = ir_node_get(p->g, k->root);
    printf("  kernel %d: root %%%d %s%s nstages=%d nargs=%d\n", i, k->root, ir_op_name(r->op),
           r->reduce ? "(reduce)" : "", k->nstages, k->nargs);
  }
  fflush(stdout);
}

static int count_kind(const sched_program *p, const sched_kernel *k, sched_buf_kind kind) {
  int n = 0;
  for (int i = 0; i < k->nargs; i++) n += p->bufs[k->args[i]].kind == kind;
  return n;
}

static void check_one_kernel(const sched_program *p, const char *name, int nargs, int nstages) {
  print_kernels(p, name);
  assert_int_equal(p->nkernels, 1);
  const sched_kernel *k = &p->kernels[0];
  assert_int_equal(k->root, ir_output(p->g, 0));
  assert_int_equal(p->bufs[k->out_buf].kind, SCHED_BUF_OUTPUT);
  assert_int_equal(k->args[0], k->out_buf);
  assert_int_equal(k->nargs, nargs);
  assert_int_equal(k->nstages, nstages);
  assert_int_equal(p->arena_size, 0); /* nothing temporary */
}

/* ---- graphs ------------------------------------------------------------ */

enum { M = 8, K = 16, N = 12 };

/* y = A[M,K] @ B[K,N] (+ bias[N]) (relu) */
static ir_graph *g_matmul(bool bias, bool relu, const float *bias_data) {
  ir_graph *g = ir_graph_new();
  ir_ref a = ir_input(g, "A", IR_F32, SHAPE(M, K));
  ir_ref b = ir_input(g, "B", IR_F32, SHAPE(K, N));
  ir_ref y = ir_matmul(g, a, b);
  if (bias) y = ir_binary(g, IR_ADD, y, ir_const(g, "bias", IR_F32, SHAPE(N), bias_data));
  if (relu) y = ir_binary(g, IR_MAX, y, ir_scalar(g, IR_F32, 0.0));
  finish(g, y);
  return g;
}

enum { SR = 4, SC = 10 };

static ir_graph *g_softmax(void) {
  ir_graph *g = ir_graph_new();
  ir_ref x = ir_input(g, "x", IR_F32, SHAPE(SR, SC));
  finish(g, ir_softmax(g, x, 1));
  return g;
}

enum { LR = 4, LC = 16 };
#define LN_EPS 1e-5

/* y = (x - mean) * rsqrt(mean((x - mean)^2) + eps) * gamma + beta over the last axis */
static ir_graph *g_layernorm(void) {
  ir_graph *g = ir_graph_new();
  ir_ref x = ir_input(g, "x", IR_F32, SHAPE(LR, LC));
  ir_ref gamma = ir_input(g, "gamma", IR_F32, SHAPE(LC));
  ir_ref beta = ir_input(g, "beta", IR_F32, SHAPE(LC));
  ir_ref mean = ir_mean(g, x, 1u << 1, true);
  ir_ref d = ir_sub(g, x, mean);
  ir_ref var = ir_mean(g, ir_binary(g, IR_MUL, d, d), 1u << 1, true);
  ir_ref rstd = ir_unary(g, IR_RECIP, ir_unary(g, IR_SQRT, ir_binary(g, IR_ADD, var, ir_scalar(g, IR_F32, LN_EPS))));
  ir_ref y = ir_binary(g, IR_MUL, ir_binary(g, IR_MUL, d, rstd), gamma);
  finish(g, ir_binary(g, IR_ADD, y, beta));
  return g;
}

enum { EW = 32 };

/* ten element-wise primitives on x and z: f32[EW] */
static ir_graph *g_chain10(void) {
  ir_graph *g = ir_graph_new();
  ir_ref x = ir_input(g, "x", IR_F32, SHAPE(EW));
  ir_ref z = ir_input(g, "z", IR_F32, SHAPE(EW));
  ir_ref two = ir_scalar(g, IR_F32, 2.0), half = ir_scalar(g, IR_F32, 0.5);
  ir_ref y = ir_binary(g, IR_MUL, x, two);             /* 1: 2x */
  y = ir_binary(g, IR_ADD, y, z);                       /* 2: + z */
  y = ir_unary(g, IR_NEG, y);                           /* 3: -() */
  y = ir_binary(g, IR_MAX, y, ir_scalar(g, IR_F32, -3)); /* 4: max(,-3) */
  y = ir_binary(g, IR_MUL, y, y);                       /* 5: square */
  y = ir_binary(g, IR_ADD, y, ir_scalar(g, IR_F32, 1)); /* 6: + 1 */
  y = ir_unary(g, IR_SQRT, y);                          /* 7: sqrt */
  y = ir_unary(g, IR_RECIP, y);                         /* 8: 1/ */
  y = ir_binary(g, IR_MUL, y, half);                    /* 9: * 0.5 */
  y = ir_binary(g, IR_ADD, y, x);                       /* 10: + x */
  finish(g, y);
  int prims = 0;
  for (int r = 0; r < ir_graph_count(g); r++) {
    const ir_node *n = ir_node_get(g, r);
    prims += n->op != IR_ALLOCATE && n->op != IR_LOAD && n->op != IR_VIEW;
  }
  assert_int_equal(prims, 10);
  return g;
}

static double chain10_ref(double x, double z) {
  double y = -(2 * x + z);
  y = fmax(y, -3);
  y = 1 / sqrt(y * y + 1);
  return y * 0.5 + x;
}

enum { M2 = 4 };

/* y = (A[M,K] @ B[K,N]) @ C[N,M2] */
static ir_graph *g_matmul_matmul(void) {
  ir_graph *g = ir_graph_new();
  ir_ref a = ir_input(g, "A", IR_F32, SHAPE(M, K));
  ir_ref b = ir_input(g, "B", IR_F32, SHAPE(K, N));
  ir_ref c = ir_input(g, "C", IR_F32, SHAPE(N, M2));
  finish(g, ir_matmul(g, ir_matmul(g, a, b), c));
  return g;
}

/* ---- running a hand-built graph --------------------------------------- */

static rt_model *build_model(ir_graph *g, const char *name) {
  return build_model_with(g, name, NULL);
}

/* ---- tests --------------------------------------------------------------- */

static void test_matmul(void **state) {
  (void)state;
  ir_graph *g = g_matmul(false, false, NULL);
  sched_program *p = schedule(g, "matmul");
  /* out, A, B */
  check_one_kernel(p, "matmul", 3, 1);
  assert_int_equal(count_kind(p, &p->kernels[0], SCHED_BUF_INPUT), 2);
  sched_free(p);
  ir_graph_free(g);
}

static void test_matmul_relu(void **state) {
  (void)state;
  ir_graph *g = g_matmul(false, true, NULL);
  sched_program *p = schedule(g, "matmul_relu");
  /* out, A, B: the 0 of the Relu is a LOAD, computed inline, no buffer */
  check_one_kernel(p, "matmul_relu", 3, 1);
  assert_false(p->kernels[0].final_full); /* relu runs once per output element */
  sched_free(p);
  ir_graph_free(g);
}

static void test_matmul_bias_relu(void **state) {
  (void)state;
  float bias[N];
  fill(bias, N, 7);
  ir_graph *g = g_matmul(true, true, bias);
  sched_program *p = schedule(g, "matmul_bias_relu");
  /* out, A, B, bias (a weight, read through a broadcast view) */
  check_one_kernel(p, "matmul_bias_relu", 4, 1);
  assert_int_equal(count_kind(p, &p->kernels[0], SCHED_BUF_INPUT), 2);
  assert_int_equal(count_kind(p, &p->kernels[0], SCHED_BUF_WEIGHT), 1);
  sched_free(p);
  ir_graph_free(g);
}

static void test_softmax(void **state) {
  (void)state;
  ir_graph *g = g_softmax();
  sched_program *p = schedule(g, "softmax");
  /* out, x: max and sum are accumulators; the sum's loop stores exp(x -
   * max) into the output, where the final statement reads it back */
  check_one_kernel(p, "softmax", 2, 2);
  assert_true(p->kernels[0].final_full);
  assert_int_equal(p->kernels[0].stash, 2);
  sched_free(p);
  ir_graph_free(g);
}

static void test_layernorm(void **state) {
  (void)state;
  ir_graph *g = g_layernorm();
  sched_program *p = schedule(g, "layernorm");
  /* out, x, gamma, beta: mean and var are accumulators */
  check_one_kernel(p, "layernorm", 4, 2);
  assert_int_equal(count_kind(p, &p->kernels[0], SCHED_BUF_INPUT), 3);
  assert_int_equal(p->kernels[0].stash, 0); /* (x - mean)^2: no transcendental to keep */
  sched_free(p);
  ir_graph_free(g);
}

static void test_conv_relu(void **state) {
  (void)state;
  char err[2048] = "";
  ir_graph *g;
  imp_options io = {0};
  if (imp_load(NODE_DIR "/test_basic_conv_with_padding/model.onnx", &io, &g, err, sizeof err))
    fail_msg("imp_load: %s", err);
  assert_int_equal(ir_output_count(g), 1);
  assert_int_equal(ir_input_count(g), 2); /* x and W are both graph inputs here */
  ir_ref y = ir_binary(g, IR_MAX, ir_output(g, 0), ir_scalar(g, IR_F32, 0.0));
  assert_int_not_equal(y, IR_NONE);
  ir_set_output(g, 0, y);
  if (ir_verify(g)) fail_msg("ir_verify: %s", ir_error(g));
  sched_program *p = schedule(g, "conv_relu");
  /* the padded input copied once (importer/window.c: unmasked taps), then one
   * kernel: out, the copy, W (no bias); the taps are views of the copy,
   * computed inline. No stage: this model has C/G = 1, so the 9 taps are
   * summed element-wise and the sum over C/G has size 1. */
  print_kernels(p, "conv_relu");
  assert_int_equal(p->nkernels, 2);
  const sched_kernel *copy = &p->kernels[0], *k = &p->kernels[1];
  assert_int_equal(ir_node_get(p->g, copy->root)->op, IR_MOVE);
  assert_int_equal(count_kind(p, copy, SCHED_BUF_INPUT), 1);
  assert_int_equal(k->root, ir_output(p->g, 0));
  assert_int_equal(k->nargs, 3);
  assert_int_equal(k->nstages, 0);
  assert_int_equal(count_kind(p, k, SCHED_BUF_INPUT), 1); /* W; x is read through the copy */
  sched_free(p);
  ir_graph_free(g);
}

static void test_chain10(void **state) {
  (void)state;
  ir_graph *g = g_chain10();
  sched_program *p = schedule(g, "chain10");
  /* out, x, z: x is read twice but is one buffer */
  check_one_kernel(p, "chain10", 3, 0);
  sched_free(p);
  ir_graph_free(g);
}

/* A residual block's end: r = Relu(x + z), read by the next convolution's
 * padded copy and by the next block's Add (here y = r + the copy's top left
 * corner). The Add consumer claims r and the Add below it; the padded view
 * then materialises r, and the Add stayed a kernel of its own (bug 2:
 * ResNet-18's /2/Add then a flat Relu over its 200704 floats, fuse.c). */
static void test_add_relu_padded(void **state) {
  (void)state;
  ir_graph *g = ir_graph_new();
  ir_ref x = ir_input(g, "x", IR_F32, SHAPE(4, 6, 6));
  ir_ref z = ir_input(g, "z", IR_F32, SHAPE(4, 6, 6));
  ir_ref r = ir_binary(g, IR_MAX, ir_binary(g, IR_ADD, x, z), ir_scalar(g, IR_F32, 0.0));
  const int64_t before[] = {0, 1, 1}, after[] = {0, 1, 1};
  ir_ref pad = ir_move(g, ir_view_pad(g, r, before, after, 0.0));
  const int64_t start[] = {0, 0, 0}, step[] = {1, 1, 1}, len[] = {4, 6, 6};
  finish(g, ir_binary(g, IR_ADD, r, ir_view_slice(g, pad, start, step, len)));
  sched_program *p = schedule(g, "add_relu_padded");
  print_kernels(p, "add_relu_padded");
  assert_int_equal(p->nkernels, 3);
  for (int i = 0; i < p->nkernels; i++) {
    const ir_node *root = ir_node_get(p->g, p->kernels[i].root);
    assert_true(root->op != IR_ADD || p->kernels[i].root == ir_output(p->g, 0));
  }
  sched_free(p);
  ir_graph_free(g);
}

/* The bug (1) of the past: a kernel whose root is the output VIEW of a
 * reduction, with no stage, reading only that reduction's TEMP buffer: a
 * plain copy that should have been the reduction's own kernel. */
static bool has_copy_kernel(const sched_program *p) {
  for (int i = 0; i < p->nkernels; i++) {
    const sched_kernel *k = &p->kernels[i];
    const ir_node *r = ir_node_get(p->g, k->root);
    if (r->op == IR_VIEW && k->nstages == 0 && k->nargs == 2 && p->bufs[k->args[1]].kind == SCHED_BUF_TEMP &&
        ir_node_get(p->g, p->bufs[k->args[1]].node)->reduce)
      return true;
  }
  return false;
}

static void check_matmul_matmul(ir_graph *g, const char *name, int64_t temp_bytes) {
  sched_program *p = schedule(g, name);
  print_kernels(p, name);
  /* the scheduler bug (1) of the past (fuse.c shape_kernel): with
   * non-square operands the output VIEW's kernel owned both reductions and
   * materialised the second, giving 3 kernels (reduce, reduce into a TEMP,
   * a copy VIEW -> output) instead of 2 */
  assert_false(has_copy_kernel(p));
  assert_int_equal(p->nkernels, 2);
  const sched_kernel *k0 = &p->kernels[0], *k1 = &p->kernels[1];
  /* kernel 0: T (temporary), A, B */
  assert_int_equal(p->bufs[k0->out_buf].kind, SCHED_BUF_TEMP);
  assert_int_equal(k0->nargs, 3);
  assert_int_equal(count_kind(p, k0, SCHED_BUF_INPUT), 2);
  /* kernel 1: out, T, C */
  assert_int_equal(p->bufs[k1->out_buf].kind, SCHED_BUF_OUTPUT);
  assert_int_equal(k1->nargs, 3);
  assert_int_equal(count_kind(p, k1, SCHED_BUF_TEMP), 1);
  assert_int_equal(count_kind(p, k1, SCHED_BUF_INPUT), 1);
  assert_int_equal(k0->nstages, 1);
  assert_int_equal(k1->nstages, 1);
  int temps = 0;
  for (int i = 0; i < p->nbufs; i++) temps += p->bufs[i].kind == SCHED_BUF_TEMP;
  assert_int_equal(temps, 1);
  assert_int_equal(p->arena_size, temp_bytes);
  sched_free(p);
  ir_graph_free(g);
}

/* [8,16] @ [16,12] @ [12,4] */
static void test_matmul_matmul(void **state) {
  (void)state;
  check_matmul_matmul(g_matmul_matmul(), "matmul_matmul", M * N * 4); /* 384 bytes, 64-aligned */
}

/* [16,16] @ [16,16] @ [16,16]: equal stage shapes, the trace must split them */
static void test_matmul_matmul_square(void **state) {
  (void)state;
  ir_graph *g = ir_graph_new();
  ir_shape s = SHAPE(K, K);
  ir_ref y = ir_matmul(g, ir_matmul(g, ir_input(g, "A", IR_F32, s), ir_input(g, "B", IR_F32, s)),
                       ir_input(g, "C", IR_F32, s));
  finish(g, y);
  check_matmul_matmul(g, "matmul_matmul_square", K * K * 4);
}

/* ---- numbers ------------------------------------------------------------- */

static void test_run_matmul_bias_relu(void **state) {
  (void)state;
  float a[M * K], b[K * N], bias[N];
  fill(a, M * K, 1);
  fill(b, K * N, 2);
  fill(bias, N, 3);
  rt_model *m = build_model(g_matmul(true, true, bias), "mm_bias_relu");
  assert_int_equal(m->p->nkernels, 1);
  imp_tensor in[2] = {tensor("A", SHAPE(M, K), a), tensor("B", SHAPE(K, N), b)}, out;
  char err[1024] = "";
  if (rt_run(m, in, 2, &out, err, sizeof err)) fail_msg("rt_run: %s", err);
  assert_true(ir_shape_eq(&out.shape, &(ir_shape){2, {M, N}}));
  double want[M * N];
  int pos = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int t = 0; t < K; t++) s += (double)a[i * K + t] * b[t * N + j];
      want[i * N + j] = fmax(s + bias[j], 0);
      pos += want[i * N + j] > 0;
    }
  assert_true(pos > 0 && pos < M * N); /* the Relu matters */
  check_close(out.data, want, M * N, "matmul_bias_relu");
  imp_tensor_free(&out);
  rt_model_free(m);
}

static void test_run_softmax(void **state) {
  (void)state;
  float x[SR * SC];
  fill(x, SR * SC, 4);
  x[3] = 80.0f; /* would overflow exp without the max */
  rt_model *m = build_model(g_softmax(), "softmax_run");
  assert_int_equal(m->p->nkernels, 1);
  imp_tensor in = tensor("x", SHAPE(SR, SC), x), out;
  char err[1024] = "";
  if (rt_run(m, &in, 1, &out, err, sizeof err)) fail_msg("rt_run: %s", err);
  double want[SR * SC];
  for (int i = 0; i < SR; i++) {
    double mx = -INFINITY, s = 0;
    for (int j = 0; j < SC; j++) mx = fmax(mx, x[i * SC + j]);
    for (int j = 0; j < SC; j++) s += exp(x[i * SC + j] - mx);
    for (int j = 0; j < SC; j++) want[i * SC + j] = exp(x[i * SC + j] - mx) / s;
  }
  check_close(out.data, want, SR * SC, "softmax");
  imp_tensor_free(&out);
  rt_model_free(m);
}

static void test_run_layernorm(void **state) {
  (void)state;
  float x[LR * LC], gamma[LC], beta[LC];
  fill(x, LR * LC, 5);
  for (int j = 0; j < LC; j++) x[j] += 3.0f; /* a row with a non-zero mean */
  fill(gamma, LC, 6);
  fill(beta, LC, 8);
  rt_model *m = build_model(g_layernorm(), "layernorm_run");
  assert_int_equal(m->p->nkernels, 1);
  imp_tensor in[3] = {tensor("x", SHAPE(LR, LC), x), tensor("gamma", SHAPE(LC), gamma),
                      tensor("beta", SHAPE(LC), beta)},
             out;
  char err[1024] = "";
  if (rt_run(m, in, 3, &out, err, sizeof err)) fail_msg("rt_run: %s", err);
  double want[LR * LC];
  for (int i = 0; i < LR; i++) {
    double mean = 0, var = 0;
    for (int j = 0; j < LC; j++) mean += x[i * LC + j];
    mean /= LC;
    for (int j = 0; j < LC; j++) var += (x[i * LC + j] - mean) * (x[i * LC + j] - mean);
    var /= LC;
    for (int j = 0; j < LC; j++)
      want[i * LC + j] = (x[i * LC + j] - mean) / sqrt(var + LN_EPS) * gamma[j] + beta[j];
  }
  check_close(out.data, want, LR * LC, "layernorm");
  imp_tensor_free(&out);
  rt_model_free(m);
}

static void test_run_chain10(void **state) {
  (void)state;
  float x[EW], z[EW];
  fill(x, EW, 9);
  fill(z, EW, 10);
  rt_model *m = build_model(g_chain10(), "chain10_run");
  assert_int_equal(m->p->nkernels, 1);
  imp_tensor in[2] = {tensor("x", SHAPE(EW), x), tensor("z", SHAPE(EW), z)}, out;
  char err[1024] = "";
  if (rt_run(m, in, 2, &out, err, sizeof err)) fail_msg("rt_run: %s", err);
  double want[EW];
  for (int i = 0; i < EW; i++) want[i] = chain10_ref(x[i], z[i]);
  check_close(out.data, want, EW, "chain10");
  imp_tensor_free(&out);
  rt_model_free(m);
}

static void test_run_matmul_matmul(void **state) {
  (void)state;
  float a[M * K], b[K * N], c[N * M2];
  fill(a, M * K, 11);
  fill(b, K * N, 12);
  fill(c, N * M2, 13);
  /* numbers only: the kernel count is test_matmul_matmul's (bug 1) */
  rt_model *m = build_model(g_matmul_matmul(), "mm_mm_run");
  imp_tensor in[3] = {tensor("A", SHAPE(M, K), a), tensor("B", SHAPE(K, N), b),
                      tensor("C", SHAPE(N, M2), c)},
             out;
  char err[1024] = "";
  if (rt_run(m, in, 3, &out, err, sizeof err)) fail_msg("rt_run: %s", err);
  double t[M * N], want[M * M2];
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int q = 0; q < K; q++) s += (double)a[i * K + q] * b[q * N + j];
      t[i * N + j] = (float)s; /* the temporary is f32 */
    }
  for (int i = 0; i < M; i++)
    for (int j = 0; j < M2; j++) {
      double s = 0;
      for (int q = 0; q < N; q++) s += t[i * N + q] * c[q * M2 + j];
      want[i * M2 + j] = s;
    }
  check_close(out.data, want, M * M2, "matmul_matmul");
  imp_tensor_free(&out);
  rt_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_matmul_relu),
      cmocka_unit_test(test_matmul_bias_relu),
      cmocka_unit_test(test_softmax),
      cmocka_unit_test(test_layernorm),
      cmocka_unit_test(test_conv_relu),
      cmocka_unit_test(test_chain10),
      cmocka_unit_test(test_add_relu_padded),
      cmocka_unit_test(test_matmul_matmul),
      cmocka_unit_test(test_matmul_matmul_square),
      cmocka_unit_test(test_run_matmul_bias_relu),
      cmocka_unit_test(test_run_softmax),
      cmocka_unit_test(test_run_layernorm),
      cmocka_unit_test(test_run_chain10),
      cmocka_unit_test(test_run_matmul_matmul),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
