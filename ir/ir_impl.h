/* ir_impl.h — private to ir/: the graph layout and internal helpers. */
#ifndef IR_IMPL_H
#define IR_IMPL_H

#include "ir.h"

#include <stdio.h>
#include <stdlib.h>

/* Internal invariants: on in every build, prints file:line. */
#define IR_ASSERT(c)                                                                       \
  do {                                                                                     \
    if (!(c)) {                                                                            \
      fprintf(stderr, "%s:%d: internal error: %s\n", __FILE__, __LINE__, #c);              \
      abort();                                                                             \
    }                                                                                      \
  } while (0)

struct ir_graph {
  ir_node *nodes;
  int nnodes, cap;
  ir_ref *outputs;
  char **output_names;
  int noutputs;
  ir_ref *inputs;
  int ninputs;
  void **blocks; /* everything the graph owns besides the arrays above */
  int nblocks, capblocks;
  const char *label;
  bool failed;
  char err[1024];
};

void *ir_alloc(ir_graph *g, size_t n);
/* The graph takes ownership of malloc'd `p` (freed with the graph). */
void ir_own(ir_graph *g, void *p);
ir_ref ir_add_node(ir_graph *g, const ir_node *n);
bool ir_refs_ok(ir_graph *g, int n, const ir_ref *refs);
ir_view ir_view_contiguous(const ir_shape *s);

#endif
