/* test_importer.c — imp_load on good models and on the ways a model file
 * can be wrong: each error must name the file (and the node and op when
 * one is at fault). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "importer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

#define TMPDIR_STEM "unit_importer"
#include "unit_tmpdir.h"

static void write_bytes(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  if (len) assert_int_equal(fwrite(data, 1, len, f), len);
  fclose(f);
}

/* The whole file at `path` (malloc'd). */
static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static uint8_t tmp[1 << 16];
  *len = fread(tmp, 1, sizeof tmp, f);
  fclose(f);
  uint8_t *b = malloc(*len);
  assert_non_null(b);
  memcpy(b, tmp, *len);
  return b;
}

/* Loading must fail with a message naming the file and every `want`. */
static void expect_load_error(const char *path, const imp_options *o, const char *want1, const char *want2) {
  ir_graph *g = (ir_graph *)1;
  char err[1024] = "";
  assert_int_equal(imp_load(path, o, &g, err, sizeof err), -1);
  assert_null(g);
  assert_true(strlen(err) > 0);
  if (!strstr(err, path)) fail_msg("message does not name the file: %s", err);
  if (want1 && !strstr(err, want1)) fail_msg("message lacks \"%s\": %s", want1, err);
  if (want2 && !strstr(err, want2)) fail_msg("message lacks \"%s\": %s", want2, err);
}

static void check_value(const ir_graph *g, ir_ref r, const char *name, ir_dtype dt, int rank, const int64_t *d) {
  const ir_node *n = ir_node_get(g, r);
  assert_non_null(n);
  if (name && n->op == IR_ALLOCATE) assert_string_equal(n->name, name);
  assert_int_equal(n->dtype, dt);
  ir_shape s = ir_shape_make(rank, d);
  assert_true(ir_shape_eq(&n->shape, &s));
}

static void test_load_add(void **state) {
  (void)state;
  ir_graph *g;
  char err[1024] = "";
  if (imp_load(NODE_DIR "/test_add/model.onnx", NULL, &g, err, sizeof err)) fail_msg("%s", err);
  const int64_t d[] = {3, 4, 5};
  assert_int_equal(ir_input_count(g), 2);
  assert_int_equal(ir_output_count(g), 1);
  check_value(g, ir_input_ref(g, 0), "x", IR_F32, 3, d);
  check_value(g, ir_input_ref(g, 1), "y", IR_F32, 3, d);
  check_value(g, ir_output(g, 0), NULL, IR_F32, 3, d);
  assert_string_equal(ir_output_name(g, 0), "sum");
  assert_false(ir_failed(g));
  assert_int_equal(ir_verify(g), 0);
  ir_graph_free(g);
}

static void test_load_multi_output(void **state) {
  (void)state;
  ir_graph *g;
  char err[1024] = "";
  if (imp_load(NODE_DIR "/test_split_equal_parts_1d/model.onnx", NULL, &g, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(ir_input_count(g), 1);
  assert_int_equal(ir_output_count(g), 3);
  check_value(g, ir_input_ref(g, 0), "input", IR_F32, 1, (int64_t[]){6});
  for (int i = 0; i < 3; i++) {
    char name[32];
    snprintf(name, sizeof name, "output_%d", i + 1);
    check_value(g, ir_output(g, i), NULL, IR_F32, 1, (int64_t[]){2});
    assert_string_equal(ir_output_name(g, i), name);
  }
  ir_graph_free(g);
}

static void test_bad_files(void **state) {
  (void)state;
  char path[400];
  snprintf(path, sizeof path, "%s/missing.onnx", tmpdir);
  expect_load_error(path, NULL, NULL, NULL);
  expect_load_error(tmpdir, NULL, NULL, NULL); /* a directory */
  snprintf(path, sizeof path, "%s/empty.onnx", tmpdir);
  write_bytes(path, "", 0);
  expect_load_error(path, NULL, "empty", NULL);
  srand(42);
  for (int k = 0; k < 10; k++) {
    uint8_t junk[512];
    size_t len = 1 + (size_t)(rand() % (int)sizeof junk);
    for (size_t i = 0; i < len; i++) junk[i] = (uint8_t)rand();
    snprintf(path, sizeof path, "%s/junk_%d.onnx", tmpdir, k);
    write_bytes(path, junk, len);
    expect_load_error(path, NULL, NULL, NULL);
  }
}

static void test_truncated(void **state) {
  (void)state;
  size_t len;
  uint8_t *b = slurp(NODE_DIR "/test_add/model.onnx", &len);
  char path[400];
  const size_t cuts[] = {len / 2, len - 1, len / 4, 1};
  for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
    snprintf(path, sizeof path, "%s/trunc_%zu.onnx", tmpdir, k);
    write_bytes(path, b, cuts[k]);
    expect_load_error(path, NULL, NULL, NULL);
  }
  free(b);
}

/* test_add with its op_type patched from "Add" to "Qdd" (same length, so
 * the protobuf stays valid). */
static void test_unsupported_op(void **state) {
  (void)state;
  size_t len;
  uint8_t *b = slurp(NODE_DIR "/test_add/model.onnx", &len);
  int hits = 0;
  for (size_t i = 0; i + 3 <= len; i++)
    if (!memcmp(b + i, "Add", 3)) b[i] = 'Q', hits++;
  assert_int_equal(hits, 1);
  char path[400];
  snprintf(path, sizeof path, "%s/qdd.onnx", tmpdir);
  write_bytes(path, b, len);
  free(b);
  /* the node has no name: it is named after its output 'sum' */
  expect_load_error(path, NULL, "'Qdd'", "'sum'");
}

/* A minimal protobuf writer to build small models by hand. */
typedef struct {
  uint8_t b[2048];
  size_t n;
} pb;

static void pb_varint(pb *p, uint64_t v) {
  do {
    assert_true(p->n < sizeof p->b);
    p->b[p->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
}

static void pb_int(pb *p, int field, uint64_t v) {
  pb_varint(p, (uint64_t)field << 3);
  pb_varint(p, v);
}

static void pb_bytes(pb *p, int field, const void *d, size_t len) {
  pb_varint(p, (uint64_t)field << 3 | 2);
  pb_varint(p, len);
  assert_true(p->n + len <= sizeof p->b);
  memcpy(p->b + p->n, d, len);
  p->n += len;
}

static void pb_str(pb *p, int field, const char *s) {
  pb_bytes(p, field, s, strlen(s));
}

static void pb_msg(pb *p, int field, const pb *m) {
  pb_bytes(p, field, m->b, m->n);
}

/* ValueInfoProto: float tensor `name` with dims; a NULL param is a fixed dim. */
static pb value_info(const char *name, int rank, const int64_t *d, const char *const *param) {
  pb shape = {0}, tt = {0}, tp = {0}, vi = {0};
  for (int i = 0; i < rank; i++) {
    pb dim = {0};
    if (param && param[i]) pb_str(&dim, 2, param[i]);
    else pb_int(&dim, 1, (uint64_t)d[i]);
    pb_msg(&shape, 1, &dim);
  }
  pb_int(&tt, 1, 1); /* FLOAT */
  pb_msg(&tt, 2, &shape);
  pb_msg(&tp, 1, &tt);
  pb_str(&vi, 1, name);
  pb_msg(&vi, 2, &tp);
  return vi;
}

/* A one-node model x -> OP -> y over float [N, 3] with N symbolic. */
static void write_symbolic_model(const char *path, const char *op) {
  const int64_t d[] = {0, 3};
  const char *const param[] = {"N", NULL};
  pb node = {0}, graph = {0}, opset = {0}, model = {0};
  pb_str(&node, 1, "x");
  pb_str(&node, 2, "y");
  pb_str(&node, 3, "the_node");
  pb_str(&node, 4, op);
  pb_msg(&graph, 1, &node);
  pb_str(&graph, 2, "g");
  pb in = value_info("x", 2, d, param), out = value_info("y", 2, d, param);
  pb_msg(&graph, 11, &in);
  pb_msg(&graph, 12, &out);
  pb_int(&model, 1, 8); /* ir_version */
  pb_msg(&model, 7, &graph);
  pb_int(&opset, 2, 14);
  pb_msg(&model, 8, &opset);
  write_bytes(path, model.b, model.n);
}

/* A symbolic dimension stays a symbol (the output is [N, 3]); --dim pins
 * it; an op whose lowering does not handle symbols is refused naming the
 * node, the op and the symbol, and suggesting --dim. */
static void test_symbolic_dim(void **state) {
  (void)state;
  char path[400], err[1024] = "";
  snprintf(path, sizeof path, "%s/symbolic.onnx", tmpdir);
  write_symbolic_model(path, "Relu");
  ir_graph *g;
  if (imp_load(path, NULL, &g, err, sizeof err)) fail_msg("symbolic: %s", err);
  const ir_shape *s = &ir_node_get(g, ir_output(g, 0))->shape;
  assert_int_equal(s->rank, 2);
  assert_int_equal(ir_dim_sym_id(s->d[0]), ir_sym(g, 0));
  assert_string_equal(ir_dim_sym_name(ir_sym(g, 0)), "N");
  assert_int_equal(s->d[1], 3);
  ir_graph_free(g);
  const char *dims[] = {"N=7"};
  imp_options o = {.dims = dims, .ndims = 1};
  if (imp_load(path, &o, &g, err, sizeof err)) fail_msg("with N=7: %s", err);
  const int64_t d[] = {7, 3};
  check_value(g, ir_input_ref(g, 0), "x", IR_F32, 2, d);
  check_value(g, ir_output(g, 0), NULL, IR_F32, 2, d);
  assert_int_equal(ir_sym_count(g), 0);
  ir_graph_free(g);
  const char *bad[] = {"N=abc"};
  imp_options ob = {.dims = bad, .ndims = 1};
  expect_load_error(path, &ob, "--dim N", NULL);
  write_symbolic_model(path, "Det"); /* an op that does not take symbolic dimensions */
  expect_load_error(path, NULL, "'the_node' (Det", "give 'N' a value with --dim N=N");
}

static void test_hand_built_unsupported(void **state) {
  (void)state;
  char path[400];
  snprintf(path, sizeof path, "%s/nosuchop.onnx", tmpdir);
  write_symbolic_model(path, "NoSuchOp");
  const char *dims[] = {"N=2"};
  imp_options o = {.dims = dims, .ndims = 1};
  expect_load_error(path, &o, "'the_node'", "'NoSuchOp'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_add),
      cmocka_unit_test(test_load_multi_output),
      cmocka_unit_test(test_bad_files),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_unsupported_op),
      cmocka_unit_test(test_symbolic_dim),
      cmocka_unit_test(test_hand_built_unsupported),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
