/* test_views.c — the shape tracker (ir/view.c) against a dense reference:
 * random chains of reshape / permute / slice / expand / pad over a constant
 * of distinct values are evaluated with ir_eval and compared element for
 * element with the same ops applied by plain index arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ELEMS 4096
#define TRIALS 200

/* A dense row-major tensor of the reference. */
typedef struct {
  ir_shape s;
  int64_t *v;
} dense;

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static int rnd(int n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (int)(rng % (uint64_t)n);
}

static void unflatten(const ir_shape *s, int64_t f, int64_t *idx) {
  for (int k = s->rank - 1; k >= 0; k--) {
    idx[k] = f % s->d[k];
    f /= s->d[k];
  }
}

static int64_t flatten(const ir_shape *s, const int64_t *idx) {
  int64_t f = 0;
  for (int k = 0; k < s->rank; k++) f = f * s->d[k] + idx[k];
  return f;
}

static dense dense_new(ir_shape s) {
  dense d = {s, calloc((size_t)ir_shape_numel(&s) + 1, sizeof(int64_t))};
  assert_non_null(d.v);
  return d;
}

/* Replaces *a by `b` (frees the old values). */
static void dense_set(dense *a, dense b) {
  free(a->v);
  *a = b;
}

static void ref_permute(dense *a, const int *perm) {
  ir_shape s = a->s;
  for (int i = 0; i < s.rank; i++) s.d[i] = a->s.d[perm[i]];
  dense o = dense_new(s);
  int64_t j[IR_MAX_RANK], k[IR_MAX_RANK];
  for (int64_t f = 0; f < ir_shape_numel(&s); f++) {
    unflatten(&s, f, j);
    for (int i = 0; i < s.rank; i++) k[perm[i]] = j[i];
    o.v[f] = a->v[flatten(&a->s, k)];
  }
  dense_set(a, o);
}

static void ref_slice(dense *a, const int64_t *start, const int64_t *step, const int64_t *len) {
  ir_shape s = a->s;
  for (int i = 0; i < s.rank; i++) s.d[i] = len[i];
  dense o = dense_new(s);
  int64_t j[IR_MAX_RANK], k[IR_MAX_RANK];
  for (int64_t f = 0; f < ir_shape_numel(&s); f++) {
    unflatten(&s, f, j);
    for (int i = 0; i < s.rank; i++) k[i] = start[i] + step[i] * j[i];
    o.v[f] = a->v[flatten(&a->s, k)];
  }
  dense_set(a, o);
}

static void ref_expand(dense *a, ir_shape s) {
  dense o = dense_new(s);
  int64_t j[IR_MAX_RANK], k[IR_MAX_RANK];
  int off = s.rank - a->s.rank;
  for (int64_t f = 0; f < ir_shape_numel(&s); f++) {
    unflatten(&s, f, j);
    for (int i = 0; i < a->s.rank; i++) k[i] = a->s.d[i] == 1 ? 0 : j[i + off];
    o.v[f] = a->v[flatten(&a->s, k)];
  }
  dense_set(a, o);
}

static void ref_pad(dense *a, const int64_t *before, const int64_t *after, int64_t value) {
  ir_shape s = a->s;
  for (int i = 0; i < s.rank; i++) s.d[i] += before[i] + after[i];
  dense o = dense_new(s);
  int64_t j[IR_MAX_RANK];
  for (int64_t f = 0; f < ir_shape_numel(&s); f++) {
    unflatten(&s, f, j);
    bool in = true;
    for (int i = 0; i < s.rank; i++) {
      j[i] -= before[i];
      in &= j[i] >= 0 && j[i] < a->s.d[i];
    }
    o.v[f] = in ? a->v[flatten(&a->s, j)] : value;
  }
  dense_set(a, o);
}

/* A random shape of rank 1..4 with `numel` elements (distributes its
 * prime factors over the axes). */
static ir_shape random_factorisation(int64_t numel) {
  ir_shape s = {.rank = 1 + rnd(4)};
  for (int i = 0; i < s.rank; i++) s.d[i] = 1;
  for (int64_t p = 2; numel > 1; p++)
    while (numel % p == 0) {
      s.d[rnd(s.rank)] *= p;
      numel /= p;
    }
  return s;
}

static ir_shape random_shape(void) {
  ir_shape s = {.rank = 1 + rnd(4)};
  for (int i = 0; i < s.rank; i++) s.d[i] = 1 + rnd(4);
  return s;
}

/* One random op applied to both the graph value `*r` and the reference;
 * appends its description to `log`. */
static void random_op(ir_graph *g, ir_ref *r, dense *a, char *log, size_t loglen) {
  int rank = a->s.rank;
  int64_t p0[IR_MAX_RANK], p1[IR_MAX_RANK], p2[IR_MAX_RANK];
  char sh[128];
  size_t at = strlen(log);
  switch (rnd(5)) {
  case 0: {
    ir_shape s = random_factorisation(ir_shape_numel(&a->s));
    ir_shape_str(&s, sh, sizeof sh);
    snprintf(log + at, loglen - at, " reshape%s", sh);
    *r = ir_view_reshape(g, *r, s);
    a->s = s;
    break;
  }
  case 1: {
    int perm[IR_MAX_RANK];
    for (int i = 0; i < rank; i++) perm[i] = i;
    for (int i = rank - 1; i > 0; i--) {
      int k = rnd(i + 1), t = perm[i];
      perm[i] = perm[k];
      perm[k] = t;
    }
    snprintf(log + at, loglen - at, " permute(");
    for (int i = 0; i < rank; i++) snprintf(log + strlen(log), loglen - strlen(log), "%d,", perm[i]);
    snprintf(log + strlen(log), loglen - strlen(log), ")");
    *r = ir_view_permute(g, *r, perm);
    ref_permute(a, perm);
    break;
  }
  case 2: {
    snprintf(log + at, loglen - at, " slice(");
    for (int i = 0; i < rank; i++) {
      int64_t d = a->s.d[i], step = 1 + rnd(3);
      if (rnd(2)) step = -step;
      p0[i] = rnd((int)d);
      int64_t room = step > 0 ? (d - 1 - p0[i]) / step : p0[i] / -step;
      p2[i] = 1 + rnd((int)room + 1);
      p1[i] = step;
      snprintf(log + strlen(log), loglen - strlen(log), "%lld:%lld:%lld,", (long long)p0[i], (long long)step,
               (long long)p2[i]);
    }
    snprintf(log + strlen(log), loglen - strlen(log), ")");
    *r = ir_view_slice(g, *r, p0, p1, p2);
    ref_slice(a, p0, p1, p2);
    break;
  }
  case 3: {
    ir_shape s = a->s;
    if (rank < 6 && rnd(3) == 0) { /* a new leading axis */
      memmove(s.d + 1, s.d, sizeof(int64_t) * (size_t)rank);
      s.d[0] = 1 + rnd(3);
      s.rank++;
    }
    for (int i = 0; i < s.rank; i++)
      if (s.d[i] == 1 && rnd(2)) s.d[i] = 2 + rnd(2);
    if (ir_shape_numel(&s) > MAX_ELEMS) return;
    ir_shape_str(&s, sh, sizeof sh);
    snprintf(log + at, loglen - at, " expand%s", sh);
    *r = ir_view_expand(g, *r, s);
    ref_expand(a, s);
    break;
  }
  default: {
    int64_t value = -1 - rnd(3), n = 1;
    for (int i = 0; i < rank; i++) {
      p0[i] = rnd(3);
      p1[i] = rnd(2);
      n *= a->s.d[i] + p0[i] + p1[i];
    }
    if (n > MAX_ELEMS) return;
    snprintf(log + at, loglen - at, " pad(v=%lld:", (long long)value);
    for (int i = 0; i < rank; i++)
      snprintf(log + strlen(log), loglen - strlen(log), "%lld+%lld,", (long long)p0[i], (long long)p1[i]);
    snprintf(log + strlen(log), loglen - strlen(log), ")");
    *r = ir_view_pad(g, *r, p0, p1, (double)value);
    ref_pad(a, p0, p1, value);
  }
  }
}

/* Evaluates `r` and compares it with the reference. */
static void check_against(ir_graph *g, ir_ref r, const dense *a, const char *log) {
  if (r == IR_NONE) fail_msg("builder failed: %s; chain:%s", ir_error(g), log);
  const ir_node *n = ir_node_get(g, r);
  char x[128], y[128];
  ir_shape_str(&n->shape, x, sizeof x);
  ir_shape_str(&a->s, y, sizeof y);
  if (!ir_shape_eq(&n->shape, &a->s)) fail_msg("shape %s, want %s; chain:%s", x, y, log);
  void *out = NULL;
  if (ir_eval(g, r, &out)) fail_msg("ir_eval failed: %s; chain:%s", ir_error(g), log);
  for (int64_t i = 0; i < ir_shape_numel(&a->s); i++) {
    int64_t got = ir_elem_i(n->dtype, out, i);
    if (got != a->v[i])
      fail_msg("element %lld of %s: got %lld, want %lld; chain:%s", (long long)i, y, (long long)got,
               (long long)a->v[i], log);
  }
  free(out);
}

/* A constant of distinct positive values 1..N and its reference. */
static ir_ref make_source(ir_graph *g, ir_shape s, dense *a) {
  *a = dense_new(s);
  int64_t n = ir_shape_numel(&s);
  int32_t *data = malloc(sizeof(int32_t) * (size_t)n);
  assert_non_null(data);
  for (int64_t i = 0; i < n; i++) data[i] = (int32_t)(i + 1), a->v[i] = i + 1;
  ir_ref r = ir_const(g, "src", IR_I32, s, data);
  free(data);
  return r;
}

static bool reaches_move(const ir_graph *g, ir_ref r);

static void test_random_chains(void **state) {
  (void)state;
  int moved = 0;
  for (int t = 0; t < TRIALS; t++) {
    ir_graph *g = ir_graph_new();
    dense a;
    ir_ref r = make_source(g, random_shape(), &a);
    char log[4096];
    ir_shape_str(&a.s, log, sizeof log);
    int nops = 1 + rnd(6);
    for (int k = 0; k < nops; k++) {
      random_op(g, &r, &a, log, sizeof log);
      check_against(g, r, &a, log);
    }
    moved += reaches_move(g, r);
    free(a.v);
    ir_graph_free(g);
  }
  /* the chains must also cover the copies (reshape of a non-contiguous
   * view, two pads with different values) */
  assert_true(moved > TRIALS / 20);
}

/* True when a MOVE is among the nodes `r` depends on (or is `r`). */
static bool reaches_move(const ir_graph *g, ir_ref r) {
  const ir_node *n = ir_node_get(g, r);
  if (n->op == IR_MOVE) return true;
  for (int i = 0; i < n->nsrc; i++)
    if (reaches_move(g, n->src[i])) return true;
  return false;
}

static void test_reshape_after_permute_moves(void **state) {
  (void)state;
  ir_graph *g = ir_graph_new();
  dense a;
  ir_ref r = make_source(g, ir_shape_make(2, (int64_t[]){2, 3}), &a);
  const int perm[] = {1, 0};
  r = ir_view_permute(g, r, perm);
  ref_permute(&a, perm);
  assert_false(reaches_move(g, r));
  ir_shape flat = ir_shape_make(1, (int64_t[]){6});
  r = ir_view_reshape(g, r, flat);
  a.s = flat;
  assert_int_not_equal(r, IR_NONE);
  assert_true(reaches_move(g, r));
  check_against(g, r, &a, " [2,3] permute(1,0) reshape[6]");
  free(a.v);
  ir_graph_free(g);
}

/* A reshape that only splits a contiguous axis stays a view. */
static void test_reshape_contiguous_no_move(void **state) {
  (void)state;
  ir_graph *g = ir_graph_new();
  dense a;
  ir_ref r = make_source(g, ir_shape_make(2, (int64_t[]){4, 6}), &a);
  ir_shape s = ir_shape_make(3, (int64_t[]){4, 2, 3});
  r = ir_view_reshape(g, r, s);
  a.s = s;
  assert_false(reaches_move(g, r));
  check_against(g, r, &a, " [4,6] reshape[4,2,3]");
  free(a.v);
  ir_graph_free(g);
}

/* Sliding windows (convolution taps) over a padded [2, 5, 7] source, 2x3
 * windows with strides (2, 1) and dilations (1, 2): the padded source is
 * copied once (a window cannot be a mask), the windows are a view of it;
 * a window past the end is refused. */
static void test_window(void **state) {
  (void)state;
  ir_graph *g = ir_graph_new();
  dense a;
  ir_ref r = make_source(g, ir_shape_make(3, (int64_t[]){2, 5, 7}), &a);
  ir_ref p = ir_view_pad(g, r, (int64_t[]){0, 1, 1}, (int64_t[]){0, 1, 1}, 0.0);
  int64_t win[] = {2, 3}, step[] = {2, 1}, dil[] = {1, 2}, out[] = {3, 5};
  ir_ref v = ir_view_window(g, p, 2, win, step, dil, out);
  assert_true(reaches_move(g, v));
  assert_int_equal(ir_node_get(g, v)->op, IR_VIEW);
  dense w = dense_new(ir_shape_make(5, (int64_t[]){2, 2, 3, 3, 5}));
  int64_t idx[5];
  for (int64_t f = 0; f < ir_shape_numel(&w.s); f++) {
    unflatten(&w.s, f, idx);
    int64_t h = idx[3] * 2 + idx[1] - 1, x = idx[4] + idx[2] * 2 - 1;
    w.v[f] = h < 0 || h >= 5 || x < 0 || x >= 7 ? 0 : a.v[(idx[0] * 5 + h) * 7 + x];
  }
  check_against(g, v, &w, " [2,5,7] pad window");
  out[1] = 6; /* (6 - 1) * 1 + (3 - 1) * 2 = 9 > 8, the last padded column */
  assert_int_equal(ir_view_window(g, p, 2, win, step, dil, out), IR_NONE);
  free(a.v), free(w.v);
  ir_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_chains),
      cmocka_unit_test(test_reshape_after_permute_moves),
      cmocka_unit_test(test_reshape_contiguous_no_move),
      cmocka_unit_test(test_window),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
