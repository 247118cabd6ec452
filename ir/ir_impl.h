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

typedef struct {
  int64_t p; /* the graph is valid where p >= 0 */
  const char *why;
} ir_assumption_rec;

/* A weight's bytes inside a read-only file mapping the graph owns. */
typedef struct {
  const void *data;
  void *base;
  size_t len;
} ir_mapping;

struct ir_graph {
  ir_node *nodes;
  int nnodes, cap;
  ir_ref *outputs;
  char **output_names;
  int noutputs;
  /* per output: the output holding its actual length along len_axis (-1:
   * its shape is static), and for a length output the output it measures */
  int *len_out, *len_axis, *len_of;
  ir_ref *inputs;
  int ninputs;
  void **blocks; /* everything the graph owns besides the arrays above */
  int nblocks, capblocks;
  ir_mapping *maps; /* weights mapped from files (mapped.c) */
  int nmaps, capmaps;
  const char *label;
  /* symbolic dimensions: the graph's symbols in first-use order, the
   * bounds known for each (indexed by symbol id) and the run-time checks */
  int syms[IR_MAX_SYMS], nsyms;
  int64_t sym_lo[IR_MAX_SYMS], sym_hi[IR_MAX_SYMS];
  ir_assumption_rec *assume;
  int nassume;
  int64_t (*same)[2]; /* pairs of dimensions assumed equal (ir_dim_unify) */
  int nsame;
  const char **notes; /* ir_add_note: strings owned by the graph */
  int nnotes;
  size_t budget, used; /* bytes allowed (0: unbounded) and taken (ir_set_budget) */
  bool rounds_computed; /* ir_mark_rounds_computed */
  bool failed;
  char err[1024];
};

void *ir_alloc(ir_graph *g, size_t n);
/* The graph takes ownership of malloc'd `p` (freed with the graph). */
void ir_own(ir_graph *g, void *p);
/* mapped.c: the graph takes a mapping; releases the one holding `data`
 * (false when none does); unmaps all. */
void ir_own_mapping(ir_graph *g, const void *data, void *base, size_t len);
bool ir_mapping_release(ir_graph *g, const void *data);
void ir_mappings_free(ir_graph *g);
/* layout.c: a mark per node, set on views of weights of `min_bytes` or
 * more that a blocked matmul packs as they are (ir_rewrite_weight_layout
 * leaves them). */
char *ir_packed_operands(const ir_graph *g, uint64_t min_bytes);
/* layout.c: the readers of `x`, graph outputs included. */
int ir_uses_of(const ir_graph *g, ir_ref x);
/* sink_region.c: an op that may be computed on the unread parts of a wide
 * result too (element-wise; no integer division or float-to-int cast). */
bool ir_sinkable_op(const ir_graph *g, const ir_node *n);
/* sink.c: whether `r` is a reduction or an element-wise op over one; and
 * operand `b` (a constant, or a plain view broadcasting along axes that
 * `axis` maps) as a value of shape `rs`, or IR_NONE. */
bool ir_sink_from_reduce(const ir_graph *g, ir_ref r);
ir_ref ir_sink_operand_over(ir_graph *g, ir_ref b, const int *axis, const ir_shape *rs);
ir_ref ir_sink_operand_over_runs(ir_graph *g, ir_ref b, const int *first, const int *last, const ir_shape *rs);
/* layout.c: the run of xs's axes *lo..*hi that axis a of view `v` steps
 * one to one over xs's contiguous strides `st` (one axis, or several
 * merged by a reshape); false when there is none. */
bool ir_view_axis_run(const ir_view *v, int a, const ir_shape *xs, const int64_t *st, int *lo, int *hi);
/* The same, an axis of u also stepping several elements of one axis of es
 * (a stride-2 subsample of a padded copy's interior: pad_share.c). */
bool ir_view_compose_steps(const ir_view *u, const ir_shape *es, const ir_view *v, ir_view *out);
ir_ref ir_add_node(ir_graph *g, const ir_node *n);
/* A node's shape is one the graph can hold: rank in range, no negative or
 * invalid dimension, static sizes under INT64_MAX / 16 elements (a byte
 * count of any element type fits); else fails the graph (prim.c). */
bool ir_shape_ok(ir_graph *g, const ir_shape *s);
bool ir_refs_ok(ir_graph *g, int n, const ir_ref *refs);
ir_view ir_view_contiguous(const ir_shape *s);
/* The dimension table is shared by all graphs (dim.c): each graph holds a
 * reference, the last one frees it. */
void ir_dim_retain(void);
void ir_dim_release(void);
/* A monomial c * s0^e0 * s1^e1 ... of a symbolic dimension (dim.c). */
typedef struct {
  int64_t c;
  uint8_t e[IR_MAX_SYMS];
} ir_mono;
/* The monomials of `d` in canonical order into `*m` (owned by the
 * dimension table), their count; -1 when `d` names no polynomial (a plain
 * value, IR_DIM_INVALID or a forged tag). For the decisions (dim_range.c). */
int ir_dim_monos(int64_t d, const ir_mono **m);
bool ir_mono_is_const(const ir_mono *m);
/* Symbol `id` as a dimension. */
int64_t ir_dim_of_sym(int id);
/* Registers the symbols of an input shape with the graph. */
void ir_note_syms(ir_graph *g, const ir_shape *s);

#endif
