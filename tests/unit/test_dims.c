/* test_dims.c — symbolic dimensions (ir/dim.c): interning, arithmetic,
 * exact division, evaluation, printing, decisions under bounds and
 * assumptions, and how views, broadcasting and the constant folder carry
 * them. Every value checked is computed independently by plain int64
 * arithmetic at several points of the symbols. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The table lives while a graph does: each test holds one. */
static int hold(void **state) {
  *state = ir_graph_new();
  return 0;
}

static int release(void **state) {
  ir_graph_free(*state);
  return 0;
}

static int64_t eval2(int64_t d, int64_t a, int64_t b) {
  int64_t v[IR_MAX_SYMS] = {0}, r = 0;
  v[0] = a, v[1] = b;
  assert_true(ir_dim_eval(d, v, &r));
  return r;
}

static void expect_str(int64_t d, const char *want, const char *want_c) {
  char s[128];
  ir_dim_str(d, s, sizeof s);
  assert_string_equal(s, want);
  ir_dim_to_c(d, s, sizeof s);
  assert_string_equal(s, want_c);
}

static void test_interning(void **state) {
  (void)state;
  int64_t b = ir_dim_sym("batch"), s = ir_dim_sym("seq");
  assert_true(ir_dim_is_sym(b) && ir_dim_is_sym(s) && b != s);
  assert_int_equal(ir_dim_sym("seq"), s);
  assert_int_equal(ir_dim_sym_id(b), 0);
  assert_int_equal(ir_dim_sym_id(s), 1);
  /* equal polynomials are equal values, whatever the order of operations */
  assert_int_equal(ir_dim_add(s, 1), ir_dim_add(1, s));
  assert_int_equal(ir_dim_mul(64, s), ir_dim_add(ir_dim_mul(32, s), ir_dim_mul(s, 32)));
  assert_int_equal(ir_dim_mul(ir_dim_mul(b, s), 64), ir_dim_mul(b, ir_dim_mul(64, s)));
  /* what cancels is plain again */
  assert_int_equal(ir_dim_sub(s, s), 0);
  assert_int_equal(ir_dim_sub(ir_dim_add(s, 7), s), 7);
  assert_int_equal(ir_dim_mul(s, 0), 0);
  assert_int_equal(ir_dim_add(3, 4), 7);
  assert_false(ir_dim_is_sym(ir_dim_sub(ir_dim_mul(s, s), ir_dim_mul(s, s))));
  assert_int_equal(ir_dim_syms(ir_dim_mul(b, s)), 3u);
  assert_int_equal(ir_dim_sym_id(ir_dim_mul(2, s)), -1);
  assert_int_equal(ir_dim_first_sym(ir_dim_add(s, 1)), 1);
}

static void test_arithmetic_values(void **state) {
  (void)state;
  int64_t b = ir_dim_sym("batch"), s = ir_dim_sym("seq");
  int64_t p = ir_dim_add(ir_dim_mul(ir_dim_mul(b, s), 64), ir_dim_sub(s, 3)); /* 64bs + s - 3 */
  int64_t q = ir_dim_mul(ir_dim_add(s, 1), ir_dim_sub(s, 1));                 /* s^2 - 1 */
  for (int64_t x = 1; x <= 5; x++)
    for (int64_t y = 1; y <= 70; y += 23) {
      assert_int_equal(eval2(p, x, y), 64 * x * y + y - 3);
      assert_int_equal(eval2(q, x, y), y * y - 1);
      assert_int_equal(eval2(ir_dim_neg(p), x, y), -(64 * x * y + y - 3));
    }
  int64_t v[IR_MAX_SYMS] = {INT64_C(1) << 40, INT64_C(1) << 40}, r;
  assert_false(
      ir_dim_eval(ir_dim_mul(ir_dim_mul(b, s), 64), v, &r)); /* 2^86: overflow, not a value */
}

static void test_div_exact(void **state) {
  (void)state;
  int64_t b = ir_dim_sym("batch"), s = ir_dim_sym("seq"), q;
  assert_true(ir_dim_div_exact(ir_dim_mul(ir_dim_mul(b, s), 64), ir_dim_mul(s, 64), &q));
  assert_int_equal(q, b);
  int64_t p1 = ir_dim_add(s, 1);
  assert_true(ir_dim_div_exact(ir_dim_mul(p1, 32), p1, &q));
  assert_int_equal(q, 32);
  /* multivariate: (s^2 - 1) / (s - 1) = s + 1 */
  assert_true(ir_dim_div_exact(ir_dim_sub(ir_dim_mul(s, s), 1), ir_dim_sub(s, 1), &q));
  assert_int_equal(q, p1);
  assert_false(ir_dim_div_exact(s, 2, &q));
  assert_false(ir_dim_div_exact(64, s, &q));
  assert_false(ir_dim_div_exact(ir_dim_add(ir_dim_mul(s, s), 1), p1, &q));
  assert_true(ir_dim_div_exact(0, s, &q));
  assert_int_equal(q, 0);
  assert_true(ir_dim_div_exact(12, 4, &q));
  assert_int_equal(q, 3);
  assert_false(ir_dim_div_exact(s, 0, &q));
}

static void test_printing(void **state) {
  (void)state;
  int64_t b = ir_dim_sym("batch"), s = ir_dim_sym("seq");
  expect_str(s, "seq", "o2c_sym1");
  expect_str(ir_dim_add(ir_dim_mul(64, s), 1), "64*seq+1", "(64 * o2c_sym1 + 1)");
  expect_str(ir_dim_sub(64, s), "-seq+64", "(-o2c_sym1 + 64)");
  expect_str(ir_dim_mul(b, s), "batch*seq", "(o2c_sym0 * o2c_sym1)");
  expect_str(ir_dim_mul(s, INT64_C(1) << 40), "1099511627776*seq",
             "(INT64_C(1099511627776) * o2c_sym1)");
  /* the whole length is returned, whatever fits (C text is never cut) */
  char small[8];
  assert_int_equal(ir_dim_to_c(ir_dim_mul(b, s), small, sizeof small), strlen("(o2c_sym0 * o2c_sym1)"));
  assert_string_equal(small, "(o2c_sy");
  assert_int_equal(ir_dim_str(ir_dim_mul(b, s), NULL, 0), strlen("batch*seq"));
  expect_str(-5, "-5", "-5");
  expect_str(IR_DIM_INVALID, "?", "?");
}

/* Symbols' C identifiers are generated, never made from their (model)
 * names: no name can clash with the code's own identifiers or C's. */
static void test_cnames(void **state) {
  (void)state;
  const char *names[] = {"past-len", "int", "b0", "*/ x /*", "model_OK", "max_i64", "past_len"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    int64_t d = ir_dim_sym(names[i]);
    char want[32];
    snprintf(want, sizeof want, "o2c_sym%d", ir_dim_sym_id(d));
    assert_string_equal(ir_dim_sym_name(ir_dim_sym_id(d)), names[i]);
    assert_string_equal(ir_dim_sym_cname(ir_dim_sym_id(d)), want);
  }
}

static void test_decisions(void **state) {
  ir_graph *g = *state;
  int64_t s = ir_dim_sym("seq"), p = ir_dim_sym("past");
  assert_int_equal(ir_dim_cmp(g, s, 0), IR_CMP_GT);
  assert_int_equal(ir_dim_cmp(g, s, 1), IR_CMP_EQ | IR_CMP_GT);
  assert_int_equal(ir_dim_cmp(g, ir_dim_add(p, 1), p), IR_CMP_GT);
  assert_int_equal(ir_dim_cmp(g, s, 64), IR_CMP_LT | IR_CMP_EQ | IR_CMP_GT);
  assert_int_equal(ir_dim_cmp(g, INT64_MAX, s), IR_CMP_GT); /* past any symbol's value */
  assert_int_equal(ir_dim_cmp(g, -1, ir_dim_neg(s)), IR_CMP_EQ | IR_CMP_GT);
  /* seq <= 64 from an assumption: decisions tighten, the reference point moves */
  assert_int_equal(ir_dim_ref(g, s), 64);
  assert_int_equal(ir_assume_nonneg(g, ir_dim_sub(64, s), "test"), 0);
  assert_int_equal(ir_assumption_count(g), 1);
  assert_int_equal(ir_dim_cmp(g, s, 64), IR_CMP_LT | IR_CMP_EQ);
  assert_int_equal(ir_dim_cmp(g, s, 65), IR_CMP_LT);
  int64_t lo, hi;
  ir_dim_range(g, ir_dim_mul(s, s), &lo, &hi);
  assert_true(lo == 1 && hi == 64 * 64);
  ir_dim_range(g, ir_dim_sub(s, ir_dim_mul(s, s)), &lo, &hi); /* s - s^2 over [1, 64] */
  assert_true(lo <= 64 - 64 * 64 && hi >= 0);
  /* proven facts are not recorded; an impossible one is an error */
  assert_int_equal(ir_assume_nonneg(g, ir_dim_sub(100, s), "test"), 0);
  assert_int_equal(ir_assumption_count(g), 1);
  assert_int_equal(ir_assume_nonneg(g, ir_dim_sub(ir_dim_neg(s), 1), "test"), -1);
  assert_true(ir_failed(g));
}

static void test_contradiction(void **state) {
  ir_graph *g = *state;
  int64_t s = ir_dim_sym("seq");
  assert_int_equal(ir_assume_nonneg(g, ir_dim_sub(s, 100), "a"), 0); /* seq >= 100 */
  assert_int_equal(ir_assume_nonneg(g, ir_dim_sub(64, s), "b"), -1); /* and seq <= 64 */
  assert_non_null(strstr(ir_error(g), "seq"));
}

static void test_invalid(void **state) {
  (void)state;
  int64_t s = ir_dim_sym("seq");
  int64_t big = ir_dim_mul(s, INT64_C(1) << 61);
  assert_int_equal(ir_dim_mul(big, 4), IR_DIM_INVALID); /* coefficient 2^63 */
  assert_int_equal(ir_dim_add(IR_DIM_INVALID, 1), IR_DIM_INVALID);
  assert_int_equal(ir_dim_mul(INT64_C(1) << 40, INT64_C(1) << 40), IR_DIM_INVALID);
  /* a plain result may not land in the tag range */
  assert_int_equal(ir_dim_add(IR_DIM_TAG_BASE - 1, 1), IR_DIM_INVALID);
  /* a value in the tag range that names nothing is not a dimension */
  assert_false(ir_dim_valid(IR_DIM_TAG_BASE + 999999));
  assert_int_equal(ir_dim_add(IR_DIM_TAG_BASE + 999999, 0), IR_DIM_INVALID);
  assert_int_equal(ir_dim_syms(IR_DIM_TAG_BASE + 999999), 0u);
}

/* Shapes, strides, broadcasting and views over symbolic dimensions. */
static void test_shapes_and_views(void **state) {
  ir_graph *g = *state;
  int64_t b = ir_dim_sym("batch"), s = ir_dim_sym("seq");
  ir_shape x = ir_shape_make(3, (int64_t[]){b, s, 64});
  int64_t st[IR_MAX_RANK];
  ir_contiguous_strides(&x, st);
  assert_int_equal(st[0], ir_dim_mul(64, s));
  assert_int_equal(st[1], 64);
  assert_int_equal(st[2], 1);
  assert_int_equal(ir_shape_numel(&x), ir_dim_mul(ir_dim_mul(b, s), 64));
  char str[128];
  ir_shape_str(&x, str, sizeof str);
  assert_string_equal(str, "[batch,seq,64]");
  ir_shape o, one = ir_shape_make(2, (int64_t[]){1, 64}),
              other = ir_shape_make(2, (int64_t[]){16, 64});
  assert_true(ir_shape_broadcast(&x, &one, &o) && ir_shape_eq(&o, &x));
  assert_true(ir_shape_broadcast(&x, &x, &o) && ir_shape_eq(&o, &x));
  assert_false(ir_shape_broadcast(&x, &other, &o)); /* seq against 16: not decidable, refused */
  ir_ref in = ir_input(g, "x", IR_F32, x);
  assert_int_equal(ir_sym_count(g), 2);
  assert_int_equal(ir_sym(g, 0), ir_dim_sym_id(b));
  /* [b, s, 64] -> [b, s, 4, 16] -> permute -> [b, 4, s, 16] -> reshape back needs a copy */
  ir_ref r = ir_view_reshape(g, in, ir_shape_make(4, (int64_t[]){b, s, 4, 16}));
  ir_ref t = ir_view_permute(g, r, (int[]){0, 2, 1, 3});
  const ir_node *tn = ir_node_get(g, t);
  assert_int_equal(tn->op, IR_VIEW);
  assert_int_equal(tn->view.stride[0], ir_dim_mul(64, s));
  assert_int_equal(tn->view.stride[2], 64);
  ir_ref flat = ir_view_reshape(g, in, ir_shape_make(2, (int64_t[]){ir_dim_mul(b, s), 64}));
  assert_int_equal(ir_node_get(g, flat)->op, IR_VIEW); /* merging b and s is a view */
  ir_ref back = ir_view_reshape(g, t, ir_shape_make(3, (int64_t[]){b, 4, ir_dim_mul(s, 16)}));
  assert_int_equal(ir_node_get(g, ir_node_get(g, back)->src[0])->op, IR_MOVE);
  /* a slice to a symbolic length of a static table is range-checked */
  ir_ref table = ir_const(g, "table", IR_F32, ir_shape_make(1, (int64_t[]){64}), (float[64]){0});
  assert_int_equal(ir_view_slice(g, table, (int64_t[]){0}, (int64_t[]){1}, (int64_t[]){s}),
                   IR_NONE);
  assert_non_null(strstr(ir_error(g), "out of range"));
}

/* The slice is accepted once seq <= 64 is assumed; concatenation along a
 * symbolic axis gives masks with symbolic bounds. */
static void test_assumed_slice_and_concat(void **state) {
  ir_graph *g = *state;
  int64_t s = ir_dim_sym("seq"), p = ir_dim_sym("past");
  ir_input(g, "x", IR_F32, ir_shape_make(2, (int64_t[]){s, p}));
  ir_ref table =
      ir_const(g, "table", IR_F32, ir_shape_make(2, (int64_t[]){64, 16}), (float[1024]){0});
  assert_int_equal(ir_assume_nonneg(g, ir_dim_sub(64, s), "slice"), 0);
  ir_ref sl = ir_view_slice(g, table, (int64_t[]){0, 0}, (int64_t[]){1, 1}, (int64_t[]){s, 16});
  assert_int_not_equal(sl, IR_NONE);
  assert_int_equal(ir_node_get(g, sl)->shape.d[0], s);
  ir_ref past = ir_input(g, "past", IR_F32, ir_shape_make(2, (int64_t[]){p, 16}));
  ir_ref pad = ir_view_pad(g, past, (int64_t[]){0, 0}, (int64_t[]){1, 0}, 0.0);
  const ir_node *pn = ir_node_get(g, pad);
  assert_int_equal(pn->shape.d[0], ir_dim_add(p, 1));
  assert_true(pn->view.masked);
  assert_int_equal(pn->view.hi[0], p);
  ir_ref one = ir_input(g, "new", IR_F32, ir_shape_make(2, (int64_t[]){1, 16}));
  ir_ref pad2 = ir_view_pad(g, ir_unary(g, IR_NEG, one), (int64_t[]){p, 0}, (int64_t[]){0, 0}, 0.0);
  const ir_node *qn = ir_node_get(g, pad2);
  assert_int_equal(qn->view.lo[0], p);
  assert_int_equal(qn->view.hi[0], ir_dim_add(p, 1));
  assert_false(ir_failed(g));
}

/* A window's taps over a Pad of a symbolic axis: the tap at k of a 3-tap
 * window over x [t] padded 2 on the left reads x at i >= 2 - k and i < t,
 * empty for t < 2 - k, which the bounds say as they are (they cross); the
 * same taps over a right pad end at t - k. No assumption: every t >= 1
 * holds the window. */
static void test_taps_over_pad(void **state) {
  ir_graph *g = *state;
  int64_t t = ir_dim_sym("t");
  ir_ref x = ir_input(g, "x", IR_F32, ir_shape_make(1, (int64_t[]){t}));
  for (int right = 0; right < 2; right++) {
    ir_ref xp = ir_view_pad(g, x, (int64_t[]){right ? 0 : 2}, (int64_t[]){right ? 2 : 0}, 0.0);
    for (int64_t k = 0; k < 3; k++) {
      ir_ref tap = ir_view_slice(g, xp, (int64_t[]){k}, (int64_t[]){1}, (int64_t[]){t});
      if (k == (right ? 0 : 2)) { /* x itself */
        assert_int_equal(tap, x);
        continue;
      }
      const ir_node *n = ir_node_get(g, tap);
      assert_int_equal(n->view.lo[0], right ? 0 : 2 - k);
      assert_int_equal(n->view.hi[0], right ? ir_dim_sub(t, k) : t);
    }
  }
  assert_false(ir_failed(g));
  assert_int_equal(ir_assumption_count(g), 0);
  int64_t lo, hi;
  ir_dim_range(g, t, &lo, &hi);
  assert_int_equal(lo, 1);
}

/* The constant folder computes PyTorch's shape arithmetic symbolically:
 * a shape vector [batch, seq] (as Shape gives it) plus one, compared with
 * -1 (Where(Equal(shape, -1), 1, shape)), divided exactly and not. */
static void test_eval_shape_arithmetic(void **state) {
  ir_graph *g = *state;
  int64_t b = ir_dim_sym("batch"), s = ir_dim_sym("seq");
  ir_input(g, "ids", IR_I64, ir_shape_make(2, (int64_t[]){b, s}));
  ir_shape v2 = ir_shape_make(1, (int64_t[]){2});
  ir_ref shp = ir_const(g, "shape", IR_I64, v2, (int64_t[]){b, s});
  ir_ref plus = ir_binary(g, IR_ADD, shp, ir_scalar(g, IR_I64, 1));
  ir_ref times = ir_binary(g, IR_MUL, shp, ir_scalar(g, IR_I64, 16));
  ir_ref neq = ir_binary(g, IR_NEQ, shp, ir_scalar(g, IR_I64, -1));
  ir_ref quo = ir_binary(g, IR_IDIV, times, ir_scalar(g, IR_I64, 8));
  void *out;
  assert_int_equal(ir_eval(g, plus, &out), 0);
  assert_int_equal(((int64_t *)out)[0], ir_dim_add(b, 1));
  assert_int_equal(((int64_t *)out)[1], ir_dim_add(s, 1));
  free(out);
  assert_int_equal(ir_eval(g, neq, &out), 0);
  assert_true(((uint8_t *)out)[0] && ((uint8_t *)out)[1]);
  free(out);
  assert_int_equal(ir_eval(g, quo, &out), 0);
  assert_int_equal(((int64_t *)out)[1], ir_dim_mul(2, s));
  free(out);
  /* not decidable: an error, not a guess */
  ir_ref eq16 = ir_binary(g, IR_NEQ, shp, ir_scalar(g, IR_I64, 16));
  assert_int_equal(ir_eval(g, eq16, &out), -1);
  assert_non_null(strstr(ir_error(g), "cannot decide"));
  ir_clear_error(g);
  /* an inexact division truncates (ONNX's Div) where the dividend's sign
   * is decided: batch / 2 is floor(batch / 2) */
  ir_ref half = ir_binary(g, IR_IDIV, shp, ir_scalar(g, IR_I64, 2));
  assert_int_equal(ir_eval(g, half, &out), 0);
  assert_int_equal(((int64_t *)out)[0], ir_dim_floordiv(g, b, 2));
  free(out);
  /* (batch - seq) / 2: either sign, so no truncation is decided */
  ir_ref diff = ir_sub(g, ir_const(g, "b", IR_I64, ir_shape_make(0, NULL), (int64_t[]){b}),
                      ir_const(g, "s", IR_I64, ir_shape_make(0, NULL), (int64_t[]){s}));
  ir_ref halfdiff = ir_binary(g, IR_IDIV, diff, ir_scalar(g, IR_I64, 2));
  assert_int_equal(ir_eval(g, halfdiff, &out), -1);
  assert_non_null(strstr(ir_error(g), "exactly"));
  ir_clear_error(g);
  ir_ref asf = ir_cast(g, shp, IR_F32);
  assert_int_equal(ir_eval(g, asf, &out), -1);
  ir_clear_error(g);
  /* a plain result in the tag range would forge a symbol: refused */
  ir_ref forge =
      ir_binary(g, IR_ADD, ir_scalar(g, IR_I64, 1),
                ir_const(g, "k", IR_I64, ir_shape_make(0, NULL), (int64_t[]){IR_DIM_TAG_BASE - 1}));
  assert_int_equal(ir_eval(g, forge, &out), -1);
  assert_non_null(strstr(ir_error(g), "reserved"));
}

/* A symbolic count is a run-time value: a LOAD that is not constant. */
static void test_symbolic_mean(void **state) {
  ir_graph *g = *state;
  int64_t s = ir_dim_sym("seq");
  ir_ref x = ir_input(g, "x", IR_F32, ir_shape_make(2, (int64_t[]){s, 8}));
  ir_ref m = ir_mean(g, x, 1u, true);
  assert_int_not_equal(m, IR_NONE);
  bool found = false;
  for (int r = 0; r < ir_graph_count(g); r++) {
    const ir_node *n = ir_node_get(g, r);
    if (n->op == IR_LOAD && n->sym_value)
      found = true, assert_int_equal(n->ival, s), assert_false(n->is_const);
  }
  assert_true(found);
}

/* After the last graph is freed the table starts over. */
static void test_table_lifetime(void **state) {
  (void)state;
  ir_graph *g = ir_graph_new();
  assert_int_equal(ir_dim_first_sym(ir_dim_sym("first")), 0);
  ir_graph_free(g);
  g = ir_graph_new();
  assert_int_equal(ir_dim_first_sym(ir_dim_sym("second")), 0);
  ir_graph_free(g);
}

/* Floor symbols: floor(a / b) at many points against plain int64 floors;
 * equal floors are one symbol; decisions from b*q <= num < b*q + b. */
static void test_floordiv(void **state) {
  ir_graph *g = *state;
  int64_t h = ir_dim_sym("H"), w = ir_dim_sym("W");
  assert_int_equal(ir_dim_floordiv(g, 7, 2), 3);
  assert_int_equal(ir_dim_floordiv(g, -7, 2), -4);
  assert_int_equal(ir_dim_floordiv(g, ir_dim_mul(4, h), 2), ir_dim_mul(2, h)); /* exact: no symbol */
  int64_t q = ir_dim_floordiv(g, ir_dim_add(h, 1), 2);         /* floor((H+1)/2) */
  int64_t q2 = ir_dim_floordiv(g, ir_dim_sub(h, 1), 2);        /* the same symbol, minus 1 */
  int64_t r = ir_dim_floordiv(g, ir_dim_add(ir_dim_mul(2, w), ir_dim_add(h, 5)), 2); /* W + 2 + floor((H+1)/2) */
  int64_t q3 = ir_dim_floordiv(g, ir_dim_add(q, 2), 3);        /* nested */
  assert_true(ir_dim_is_sym(q) && ir_dim_sym_id(q) >= 2);
  assert_int_equal(q2, ir_dim_sub(q, 1));
  assert_int_equal(r, ir_dim_add(ir_dim_add(w, 2), q));
  int64_t num, den;
  assert_true(ir_dim_sym_def(ir_dim_sym_id(q), &num, &den));
  assert_int_equal(num, ir_dim_add(h, 1));
  assert_int_equal(den, 2);
  assert_false(ir_dim_sym_def(0, &num, &den));
  assert_int_equal(ir_dim_base_syms(ir_dim_syms(q3)), 1u);
  for (int64_t a = 1; a < 40; a += 3)
    for (int64_t b = 1; b < 9; b += 2) {
      int64_t fq = (a + 1) / 2;
      assert_int_equal(eval2(q, a, b), fq);
      assert_int_equal(eval2(q2, a, b), (a - 1 + 2) / 2 - 1);
      assert_int_equal(eval2(r, a, b), (2 * b + a + 5) / 2);
      assert_int_equal(eval2(q3, a, b), (fq + 2) / 3);
    }
  /* 2q is H or H+1; q <= H; floor(H/2) + 1 >= q */
  assert_int_equal(ir_dim_cmp(g, ir_dim_mul(2, q), h), IR_CMP_EQ | IR_CMP_GT);
  assert_int_equal(ir_dim_cmp(g, q, ir_dim_add(h, 1)), IR_CMP_LT);
  int64_t half = ir_dim_floordiv(g, ir_dim_add(h, 2), 2);
  assert_false(ir_dim_cmp(g, half, q) & IR_CMP_LT);
  /* 2*floor((q+1)/2) equals q only for even q: assumed (checked by the
   * entry), then equal to every decision; two input symbols never are */
  int64_t q4 = ir_dim_floordiv(g, ir_dim_add(q, 1), 2), up = ir_dim_mul(2, q4);
  assert_int_equal(ir_dim_cmp(g, up, q), IR_CMP_EQ | IR_CMP_GT);
  int before = ir_assumption_count(g);
  assert_int_equal(ir_dim_unify(g, up, q), 0);
  assert_int_equal(ir_assumption_count(g), before + 2);
  assert_true(ir_dim_same(g, q, up));
  assert_int_equal(ir_dim_cmp(g, q, up), IR_CMP_EQ);
  assert_int_equal(ir_dim_unify(g, q, up), 0);
  assert_int_equal(ir_assumption_count(g), before + 2);
  assert_int_equal(ir_dim_unify(g, h, w), -1);
  /* an input dim named like a floor symbol is an input symbol of its own */
  char name[64];
  snprintf(name, sizeof name, "%s", ir_dim_sym_name(ir_dim_sym_id(q)));
  assert_int_not_equal(ir_dim_sym(name), q);
}

#define T(f) cmocka_unit_test_setup_teardown(f, hold, release)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_interning),
      T(test_arithmetic_values),
      T(test_div_exact),
      T(test_printing),
      T(test_cnames),
      T(test_decisions),
      T(test_contradiction),
      T(test_invalid),
      T(test_shapes_and_views),
      T(test_assumed_slice_and_concat),
      T(test_taps_over_pad),
      T(test_eval_shape_arithmetic),
      T(test_symbolic_mean),
      T(test_floordiv),
      cmocka_unit_test(test_table_lifetime),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
