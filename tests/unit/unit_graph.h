/* unit_graph.h — helpers for tests that build graphs with the ir builder,
 * schedule them, and run the generated code (test_fusion.c, test_tile.c).
 * Include after cmocka.h, runtime.h and unit_tmpdir.h. */
#ifndef UNIT_GRAPH_H
#define UNIT_GRAPH_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static inline ir_shape shp(int rank, const int64_t *d) {
  return ir_shape_make(rank, d);
}
#define SHAPE(...)                                                                                 \
  shp((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

/* Marks `y` the graph's output and verifies the graph. */
static void finish(ir_graph *g, ir_ref y) {
  if (y == IR_NONE || ir_failed(g)) fail_msg("builder: %s", ir_error(g));
  assert_int_equal(ir_mark_output(g, y, "y"), 0);
  if (ir_verify(g)) fail_msg("ir_verify: %s", ir_error(g));
}

/* Schedules `g` (taking it) with `so` (NULL: defaults), emits TMPDIR/NAME.*
 * and builds it: a model ready for rt_run. */
static rt_model *build_model_with(ir_graph *g, const char *name, const sched_options *so) {
  char err[1024] = "";
  rt_model *m = calloc(1, sizeof *m);
  assert_non_null(m);
  m->g = g;
  snprintf(m->dir, sizeof m->dir, "%s", tmpdir);
  snprintf(m->name, sizeof m->name, "%s", name);
  if (sched_build(m->g, so, &m->p, err, sizeof err)) fail_msg("sched_build: %s", err);
  char path[3][4400];
  FILE *f[3];
  const char *ext[3] = {"c", "h", "weights"};
  for (int i = 0; i < 3; i++) {
    snprintf(path[i], sizeof path[i], "%s/%s.%s", tmpdir, name, ext[i]);
    f[i] = fopen(path[i], "wb");
    assert_non_null(f[i]);
  }
  cg_options co = {.name = name};
  int rc = cg_emit(m->p, &co, f[0], f[1], f[2], err, sizeof err);
  for (int i = 0; i < 3; i++) fclose(f[i]);
  if (rc) fail_msg("cg_emit: %s", err);
  if (rt_build(m, "-O1", err, sizeof err)) fail_msg("rt_build: %s", err);
  return m;
}

static imp_tensor tensor(const char *name, ir_shape s, float *data) {
  imp_tensor t = {.name = (char *)name,
                  .dtype = IR_F32,
                  .shape = s,
                  .data = data,
                  .bytes = (size_t)ir_shape_numel(&s) * sizeof(float)};
  return t;
}

/* Deterministic values in [-2, 2]. */
static void fill(float *v, int n, unsigned seed) {
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (float)((int)((seed >> 16) % 2001) - 1000) / 500.0f;
  }
}

static void check_close(const float *got, const double *want, int n, const char *what) {
  for (int i = 0; i < n; i++)
    if (fabs(got[i] - want[i]) > 1e-4 + 1e-4 * fabs(want[i]))
      fail_msg("%s[%d] = %.8g, want %.8g", what, i, (double)got[i], want[i]);
}

#endif
