/* A host program that uses the typed header of a model compiled with
 * --name m, checked against expect.h (tests/typed/expect.py, which reads
 * the model with the onnx library): the name, dtype, rank, shape, element
 * count and bytes of every input and output, as macros (IN0, OUT0) and as
 * functions at the given dimensions; a refused point; with data, the typed
 * entry on the reference input against onnxruntime's output (1e-4), and
 * the general entry giving the same bytes twice. -DEMBED: the weights are
 * the linked-in array of --embed-weights.
 * usage: host DIR (DIR holds m.weights and, with data, in0.bin, out0.bin) */
#include "expect.h"
#include "m.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(c)                                                                                   \
  do {                                                                                             \
    if (!(c)) fprintf(stderr, "host.c:%d: failed: %s\n", __LINE__, #c), fails++;                   \
  } while (0)

static void check_io(int out, int i) {
  const char *(*name)(int) = out ? m_output_name : m_input_name;
  int (*dtype)(int) = out ? m_output_dtype : m_input_dtype;
  int (*shape)(int, const int64_t *, int64_t *) = out ? m_output_shape : m_input_shape;
  int64_t (*numel)(int, const int64_t *) = out ? m_output_numel : m_input_numel;
  int64_t (*bytes)(int, const int64_t *) = out ? m_output_bytes : m_input_bytes;
  const int rank = out ? exp_out_rank[i] : exp_in_rank[i];
  const int64_t *want = out ? exp_out_shape[i] : exp_in_shape[i];
  int64_t s[13], n = 1;
  CHECK(!strcmp(name(i), out ? exp_out_names[i] : exp_in_names[i]));
  CHECK(dtype(i) == (out ? exp_out_dtype[i] : exp_in_dtype[i]));
  CHECK((out ? m_output_rank : m_input_rank)(i) == rank);
  CHECK(shape(i, exp_dims, s) == rank);
  for (int k = 0; k < rank; k++) {
    CHECK(s[k] == want[k]);
    n *= want[k];
  }
  CHECK(numel(i, exp_dims) == n);
  CHECK(bytes(i, exp_dims) == n * (out ? exp_out_size[i] : exp_in_size[i]));
  if (!out)
    for (int k = 0; k < rank; k++) CHECK(m_input_axis_dim(i, k) == exp_in_axis_dim[i][k]);
#if EXP_REFUSE
  CHECK(shape(i, exp_refuse, s) == -1 && numel(i, exp_refuse) == -1 && bytes(i, exp_refuse) == -1);
#endif
}

#if EXP_DATA
static void *load(const char *dir, const char *file, size_t size) {
  char p[4096];
  snprintf(p, sizeof p, "%s/%s", dir, file);
  void *b = aligned_alloc(64, (size + 63) / 64 * 64 + 64);
  FILE *f = fopen(p, "rb");
  if (!b || !f || fread(b, 1, size, f) != size) fprintf(stderr, "cannot read %s\n", p), exit(1);
  fclose(f);
  return b;
}
#endif

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  (void)argv;
  CHECK(m_NUM_INPUTS == EXP_NUM_IN && m_NUM_OUTPUTS == EXP_NUM_OUT);
  for (int i = 0; i < EXP_NUM_IN; i++) check_io(0, i);
  for (int i = 0; i < EXP_NUM_OUT; i++) check_io(1, i);
  int64_t s[13];
  CHECK(!m_input_name(EXP_NUM_IN) && !m_output_name(-1) && m_input_shape(EXP_NUM_IN, exp_dims, s) == -1);
  CHECK(m_input_dtype(-1) == -1 && m_output_bytes(EXP_NUM_OUT, exp_dims) == -1);
  /* the macros of the first input and output */
  CHECK(!strcmp(m_IN0_NAME, exp_in_names[0]) && !strcmp(m_OUT0_NAME, exp_out_names[0]));
  CHECK(m_IN0_DTYPE == exp_in_dtype[0] && m_OUT0_DTYPE == exp_out_dtype[0]);
  CHECK(m_IN0_RANK == exp_in_rank[0] && m_OUT0_RANK == exp_out_rank[0]);
  CHECK(sizeof(m_IN0_CTYPE) == (size_t)exp_in_size[0] && sizeof(m_OUT0_CTYPE) == (size_t)exp_out_size[0]);
#if EXP_NUM_DIMS
  static const char *const names[] = m_DIM_NAMES;
  CHECK(m_NUM_DIMS == EXP_NUM_DIMS);
  for (int k = 0; k < EXP_NUM_DIMS; k++) CHECK(!strcmp(names[k], exp_dim_names[k]));
#else
  static const int64_t in_shape[] = m_IN0_SHAPE, out_shape[] = m_OUT0_SHAPE;
  int64_t n = 1;
  for (int k = 0; k < m_IN0_RANK; k++) CHECK(in_shape[k] == exp_in_shape[0][k]);
  for (int k = 0; k < m_OUT0_RANK; k++) {
    CHECK(out_shape[k] == exp_out_shape[0][k]);
    n *= out_shape[k];
  }
  CHECK(m_OUT0_NUMEL == n && m_OUT0_BYTES == n * (int64_t)sizeof(m_OUT0_CTYPE));
  CHECK(m_IN0_BYTES == m_IN0_NUMEL * (int64_t)sizeof(m_IN0_CTYPE));
#endif
#if EXP_DATA
  /* the typed entry takes C arrays of the shapes the onnx library reads */
  exp_in0_t *in = load(argv[1], "in0.bin", sizeof(exp_in0_t));
  exp_out0_t *want = load(argv[1], "out0.bin", sizeof(exp_out0_t));
#ifdef EMBED /* --embed-weights: linked in, the file is gone */
  const void *w = m_weights;
  CHECK((uintptr_t)w % 64 == 0);
#else
  void *w = load(argv[1], "m.weights", m_WEIGHTS_SIZE);
#endif
  void *arena = aligned_alloc(64, m_ARENA_SIZE + 64);
  exp_out0_t *got = calloc(1, sizeof *got), *again = calloc(1, sizeof *again);
  CHECK(m_run_typed(*in, *got, w, arena) == m_OK);
  double worst = 0;
  for (size_t k = 0; k < sizeof *got / sizeof(float); k++)
    worst = fmax(worst, fabs((double)((float *)got)[k] - ((float *)want)[k]));
  printf("typed entry: max |diff| vs onnxruntime %.3g\n", worst);
  CHECK(worst <= 1e-4);
  const void *ins[] = {in};
  void *outs[] = {again};
  CHECK(m_run(ins, outs, w, arena) == m_OK && !memcmp(got, again, sizeof *got));
#ifndef EMBED
  free(w);
#endif
  free(in), free(want), free(arena), free(got), free(again);
#endif
  printf("typed header: %d inputs, %d outputs checked, %d failures\n", EXP_NUM_IN, EXP_NUM_OUT, fails);
  return fails != 0;
}
