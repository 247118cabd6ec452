/* codegen.h — C text from scheduled kernels.
 *
 * Writes three files: NAME.c (C11, kernels as static functions printed
 * from their isl ASTs, one entry function), NAME.h (the entry function,
 * input/output shapes, arena and weights sizes, status codes) and
 * NAME.weights (the constants as one little-endian blob, 64-byte aligned
 * offsets). The generated code never allocates. */
#ifndef CODEGEN_H
#define CODEGEN_H

#include "scheduler.h"

#include <stdio.h>

typedef struct {
  const char *name; /* prefix of every exported symbol and of the files */
  int threads;      /* > 1: a thread pool runs the outer loop of large kernels (pool.c) */
  /* non-NULL: the weights file's path, for cg_emit_embedded; the header
   * declares PREFIX_weights */
  const char *embed;
  /* threads for every kernel with two or more outer iterations, not only
   * those estimated to gain from them (testing the threaded code) */
  bool threads_all;
} cg_options;

int cg_emit(const sched_program *p, const cg_options *o, FILE *c, FILE *h, FILE *weights,
            char *err, size_t errlen);
/* PREFIX_weights.c: the weights file `o->embed` as the 64-byte aligned
 * array PREFIX_weights (an assembler .incbin: 0.8 s for 100 MB, where a C
 * initializer takes 21 s as a string, 228 s and 10 GB as a list). */
int cg_emit_embedded(const sched_program *p, const cg_options *o, FILE *f, char *err, size_t errlen);
/* The C type of a dtype as generated code spells it. */
const char *cg_ctype(ir_dtype t);

#endif
