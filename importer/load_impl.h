/* load_impl.h — private to the model loader (load.c, graph_inputs.c,
 * lower_nodes.c, node_api.c, half.c): the lowering context and what those
 * files call of each other. The op families see only importer_impl.h. */
#ifndef IMPORTER_LOAD_IMPL_H
#define IMPORTER_LOAD_IMPL_H

#include "importer_impl.h"

/* The memory limit for one value (tensor.c): RAM, or ONNX2C_MEM_LIMIT. */
size_t imp_mem_limit(void);

/* Constant sub-graphs up to this many elements are evaluated while lowering. */
#define FOLD_MAX_ELEMS (1 << 20)
#define FOLD_KEEP_NARROW 256 /* elements: smaller dequantized weights are folded */
#define TRAINING_DOMAIN "ai.onnx.preview.training"

/* A value name's entry in the context's table. */
typedef struct {
  const char *name;
  ir_ref ref;
  uint8_t half; /* IR_F16 or IR_BF16: an ONNX 16-bit float held as float32 (0: none) */
  bool forgotten; /* a sub-graph's value, out of scope */
  /* float16 placement as onnxruntime's (half.c): `f32run`, made by a node
   * it runs in float32 on float16 inputs; `wide16`, a float16 value that
   * may not be rounded yet; `graph_out` (lower_nodes' producer map only),
   * a graph output; `wide`, the value before rounding, while a node that
   * rounds its inputs is lowered (`rounding`) */
  bool f32run, wide16, graph_out, rounding;
  ir_ref wide;
  /* a value-dependent length (NonZero...): the shape is a bound along
   * dyn_axis, and `len` (a scalar int64) the valid entries there */
  bool dyn;
  int dyn_axis;
  ir_ref len;
  /* narrow.c: an ONNX int32 (`narrow`) held as int64 because it holds
   * symbolic dimensions; `unwidened`, the value before it was widened to
   * int64 (`narrowed`) while a node with a narrow input is lowered */
  uint8_t narrow;
  bool narrowed;
  ir_ref unwidened;
} imp_value;

struct imp_ctx {
  const char *path;
  char *dir;
  const imp_options *opt;
  ir_graph *g;
  imp_value *values; /* open addressing, power-of-two capacity */
  size_t nvalues, cap;
  char nodeerr[768];
  bool node_failed;
  size_t const_bytes; /* constant data held by the graph so far */
  bool has_syms;      /* some graph input has a symbolic dimension (not pinned by --dim) */
  const Onnx__GraphProto *gp;
  int subgraph_depth; /* sub-graphs (If branches) being lowered inside each other */
  imp_seqs *seqs;     /* sequence values (seq_value.c) */
  unsigned half_mode; /* IMP_HALF_* of the node lower_nodes lowers next */
};

/* load.c: the value table, the op table, failures. */
imp_value *imp_ctx_lookup(imp_ctx *c, const char *name);
void imp_ctx_define(imp_ctx *c, const char *name, ir_ref r);
void imp_ctx_forget(imp_ctx *c, const char *name);
const imp_op_entry *imp_find_op(const char *op, unsigned domain);
int imp_ctx_fail(imp_ctx *c, char *err, size_t n, const char *fmt, ...);

/* node_api.c: values from the file may not look like symbols. */
int imp_ctx_check_plain(imp_ctx *c, ir_dtype t, const void *data, int64_t count, const char *what, char *err,
                        size_t n);

/* narrow.c: int32 values that hold symbolic dimensions. imp_sym_in_data:
 * a weight's first symbolic value, or 0. imp_narrow_begin, before a node is
 * lowered: *t, the ONNX type of its narrow data inputs (IR_I64: none), its
 * other inputs of that type widened; refuses an op that does not take
 * them. imp_narrow_restore after it; imp_narrow_out for each (folded)
 * output: marked narrow, or cast back to `t`. */
int64_t imp_sym_in_data(const ir_node *x);
int imp_narrow_begin(imp_node *n, ir_dtype *t);
void imp_narrow_restore(imp_node *n);
ir_ref imp_narrow_out(imp_node *n, imp_value *v, ir_dtype t);

/* half.c */
ir_dtype imp_widen_half(imp_tensor *x);
ir_dtype imp_half_of_onnx(int64_t t);
void imp_ctx_set_half(imp_ctx *c, const char *name, ir_dtype h);
ir_dtype imp_node_half(imp_node *n);
/* How a node meets float16 values (imp_ort_half_mode). */
enum {
  IMP_HALF_IN = 1,        /* it has a float16 input */
  IMP_HALF_ROUND_IN = 2,  /* onnxruntime runs it on float16: its inputs are rounded */
  IMP_HALF_ROUND_OUT = 4, /* ... and its float16 outputs */
  IMP_HALF_CAST_USER = 8, /* a Cast, read by a Cast: a Cast to float16 rounds */
};
void imp_mark_half(imp_node *n, imp_value *v, ir_dtype h, unsigned mode);
/* IMP_HALF_* for node `i` of `gp` (its inputs defined; `prod` maps the
 * graph's value names to producing node indices, edges[first[i] ..
 * first[i+1]) are node i's consumers). */
unsigned imp_ort_half_mode(imp_ctx *c, imp_ctx *prod, const Onnx__GraphProto *gp, size_t i, const size_t *edges,
                           const size_t *first);
void imp_round_inputs(imp_node *n, bool on);

/* graph_inputs.c */
bool imp_ctx_model_has_syms(imp_ctx *c, const Onnx__GraphProto *gp);
void imp_ctx_need_syms(imp_ctx *c, uint32_t mask);
void imp_ctx_need_inputs(imp_ctx *c, ir_ref r);
int imp_ctx_add_frozen(imp_ctx *c, const Onnx__GraphProto *gp, char *err, size_t n);
int imp_ctx_add_inputs(imp_ctx *c, const Onnx__GraphProto *gp, char *err, size_t n);

/* lower_nodes.c */
int imp_ctx_lower_nodes(imp_ctx *c, const Onnx__GraphProto *gp, int opset, char *err, size_t n);
int imp_ctx_check_sym_data(imp_ctx *c, char *err, size_t n);

#endif
