/* sched_impl.h — private to scheduler/. */
#ifndef SCHED_IMPL_H
#define SCHED_IMPL_H

#include "scheduler.h"

#include <stdio.h>
#include <stdlib.h>

#define SCHED_ASSERT(c)                                                                    \
  do {                                                                                     \
    if (!(c)) {                                                                            \
      fprintf(stderr, "%s:%d: internal error: %s\n", __FILE__, __LINE__, #c);              \
      abort();                                                                             \
    }                                                                                      \
  } while (0)

/* Decides what is materialised and forms the kernels (fuse.c). */
char *sched_fuse(sched_program *p, const sched_options *opt, const char *live);

/* Builds the isl model of `k` and its AST (sched_isl.c). */
int sched_kernel_build_ast(sched_program *p, sched_kernel *k, char *err, size_t errlen);

#endif
