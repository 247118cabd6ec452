/* importer_impl.h — private to importer/: the lowering context and the
 * helpers every op family uses. */
#ifndef IMPORTER_IMPL_H
#define IMPORTER_IMPL_H

#include "importer.h"
#include "onnx.pb-c.h"

#include <stdbool.h>

typedef struct imp_ctx imp_ctx;

/* One ONNX node being lowered. */
typedef struct {
  imp_ctx *ctx;
  ir_graph *g;
  const Onnx__NodeProto *proto;
  int opset; /* of the default domain */
} imp_node;

typedef int (*imp_lower_fn)(imp_node *n);

/* IMP_SYM: the lowering handles symbolic dimensions (its inputs may have
 * symbolic shapes, and the values it reads with imp_const_dims may be
 * symbolic). Any other op given a symbolic input is refused centrally. */
#define IMP_SYM 1u
/* IMP_MS: the op is in onnxruntime's com.microsoft domain (found only for
 * nodes of that domain; the default domain never finds it). */
#define IMP_MS 2u
/* IMP_DYN: the lowering reads its inputs' value-dependent lengths itself
 * (imp_in_len); any other op given such an input goes through
 * imp_dyn_pass, which passes the length on or refuses the op. */
#define IMP_DYN 4u
/* IMP_TRAINING: an op of the ai.onnx.preview.training domain (found only
 * for nodes of that domain). */
#define IMP_TRAINING 8u

typedef struct {
  const char *op;
  imp_lower_fn lower;
  unsigned flags;
} imp_op_entry;

/* One table per op family file, NULL-terminated. */
extern const imp_op_entry imp_ops_elementwise[];
extern const imp_op_entry imp_ops_logic[];
extern const imp_op_entry imp_ops_reduce[];
extern const imp_op_entry imp_ops_matmul[];
extern const imp_op_entry imp_ops_shape[];
extern const imp_op_entry imp_ops_conv[];
extern const imp_op_entry imp_ops_pool[];
extern const imp_op_entry imp_ops_norm[];
extern const imp_op_entry imp_ops_gather[];
extern const imp_op_entry imp_ops_misc[];
extern const imp_op_entry imp_ops_loss[];
extern const imp_op_entry imp_ops_quant[];
extern const imp_op_entry imp_ops_convint[];
extern const imp_op_entry imp_ops_recurrent[];
extern const imp_op_entry imp_ops_spectral[];
extern const imp_op_entry imp_ops_unary[];
extern const imp_op_entry imp_ops_resize[];
extern const imp_op_entry imp_ops_scatter[];
extern const imp_op_entry imp_ops_einsum[];
extern const imp_op_entry imp_ops_control[];
extern const imp_op_entry imp_ops_linalg[];
extern const imp_op_entry imp_ops_nbits[];
extern const imp_op_entry imp_ops_sample[];
extern const imp_op_entry imp_ops_text[];
extern const imp_op_entry imp_ops_select[];
extern const imp_op_entry imp_ops_sequence[];
extern const imp_op_entry imp_ops_training[];
extern const imp_op_entry imp_ops_col2im[];

/* Errors: record a message about the node; returns -1. */
int imp_fail(imp_node *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Inputs: count as written in the node; IR_NONE (and no error) when input
 * `i` is absent or empty; imp_in records an error if the name is unknown. */
int imp_nin(const imp_node *n);
bool imp_has_in(const imp_node *n, int i);
ir_ref imp_in(imp_node *n, int i);
/* A required input: IR_NONE with "input i is missing" recorded when absent. */
ir_ref imp_req(imp_node *n, int i);
int imp_nout(const imp_node *n);
bool imp_has_out(const imp_node *n, int i);
int imp_set_out(imp_node *n, int i, ir_ref r);
/* Value-dependent shapes (op_select.c): output `i` is `r`, computed at its
 * bound along `axis`, of which the first `len` (a scalar int64 node)
 * entries are valid; the rest holds zeros (valid indices for a Gather). A
 * constant `len` makes the output a static slice. imp_in_len gives input
 * i's length (and axis), or IR_NONE when its shape is static. */
int imp_set_out_len(imp_node *n, int i, ir_ref r, int axis, ir_ref len);
ir_ref imp_in_len(imp_node *n, int i, int *axis);
/* Slice whose starts or ends are known only at run time (op_select.c), one
 * axis of static size d, constant axes and steps: computed at the bound
 * ceil(d / |step|) along it with ONNX's clamping done on the values, the
 * first `len` entries valid. 1 when it set the output, 0 when the slice is
 * not of that form (its bounds must be constants: run and verify freeze
 * the inputs they come from), -1 on error. */
int imp_slice_runtime(imp_node *n);
/* The value output `i` was set to (IR_NONE when not set). */
ir_ref imp_out_ref(imp_node *n, int i);
bool imp_any_in_len(imp_node *n);
/* For an op without IMP_DYN given an input of value-dependent length: the
 * element-wise ops, Cast, Identity, Gather, Transpose and reshapes that
 * keep the axis whole pass the length on to their outputs; any other op is
 * refused with a message naming the input (op_select.c). */
int imp_dyn_pass(imp_node *n, imp_lower_fn lower);
/* A lowering of its own for an op whose input of run-time length it must
 * read (Gather along that axis: indices checked against the length), or
 * NULL. */
imp_lower_fn imp_dyn_lowering(imp_node *n);

/* The attribute `name` of the node, or NULL (node_attr.c). */
const Onnx__AttributeProto *imp_attr(const imp_node *n, const char *name);
/* Attributes with defaults (node_attr.c). imp_attr_ints/floats return the count (at most
 * `max` copied) or -1 when the attribute is absent. */
bool imp_has_attr(const imp_node *n, const char *name);
int64_t imp_attr_i(imp_node *n, const char *name, int64_t def);
double imp_attr_f(imp_node *n, const char *name, double def);
const char *imp_attr_s(imp_node *n, const char *name, const char *def);
int imp_attr_ints(imp_node *n, const char *name, int64_t *out, int max);
int imp_attr_floats(imp_node *n, const char *name, double *out, int max);
/* Exactly `cnt` values of ints attribute `name` (each `def` when it is
 * absent; cnt <= 2 * IR_MAX_RANK + 2): 0, or -1 with the error recorded. */
int imp_attr_ints_n(imp_node *n, const char *name, int cnt, int64_t *out, int64_t def);
/* The number of values of an INTS or FLOATS attribute, -1 when absent. */
int imp_attr_len(imp_node *n, const char *name);
/* A TENSOR attribute as a constant node (IR_NONE + error if absent/bad). */
ir_ref imp_attr_tensor(imp_node *n, const char *name);
/* A GRAPH attribute (NULL + error if absent). */
const Onnx__GraphProto *imp_attr_graph(imp_node *n, const char *name);
/* Lowers sub-graph `sub` into the same graph, its inputs bound to `ins`
 * (it may also read any value defined so far), and gives its `nouts`
 * outputs; its own names go out of scope after it. An error (0 or -1)
 * names `what` and the inner node. */
int imp_lower_subgraph(imp_node *n, const Onnx__GraphProto *sub, const char *what, const ir_ref *ins, int nins,
                       ir_ref *outs, int nouts);
/* Sequences and optionals (seq_value.c). Their lengths, and an optional's
 * presence, are known at compile time: a value of sequence type, or an
 * empty optional, is a handle where a tensor is an ir_ref (<= IMP_SEQ_BASE,
 * never a node), naming a list of tensors; an optional that holds a value
 * is that value. Handles pass through sub-graphs (If, Loop) as tensors
 * do; imp_in refuses them, imp_in_value and imp_set_out take them. */
#define IMP_SEQ_BASE (-2)
static inline bool imp_is_seq(ir_ref r) {
  return r <= IMP_SEQ_BASE;
}
typedef struct {
  int n;            /* elements (0 for an empty optional) */
  ir_ref *items;    /* tensors */
  int elem_type;    /* ONNX element type (0: unknown, an empty sequence of unknown type) */
  bool none;        /* an empty optional, not a sequence */
} imp_seq;
typedef struct imp_seqs imp_seqs;
/* The store of the import (the loader's context owns the pointer). */
imp_seqs **imp_ctx_seqs(imp_ctx *c);
ir_graph *imp_ctx_graph(imp_ctx *c);
/* imp_options.vector_floats, 16 when not given. */
int imp_ctx_vector_floats(const imp_ctx *c);
/* imp_options.vector_regs, 32 when not given. */
int imp_ctx_vector_regs(const imp_ctx *c);
/* Whether a 3x3 convolution may be Winograd's (op_conv.c): not with
 * --no-winograd. Any thread count: on two threads its memory-bound
 * transforms lost to the direct forms only on a loaded machine
 * (docs/DESIGN.md, "Winograd's F(2x2, 3x3)"). */
bool imp_ctx_winograd(const imp_ctx *c);
void imp_seqs_free(imp_seqs *s);
/* A new sequence (or, `none`, an empty optional) of `cnt` tensors, copied:
 * its handle, or IR_NONE with an error recorded. */
ir_ref imp_seq_new(imp_node *n, const ir_ref *items, int cnt, int elem_type, bool none);
/* The sequence behind `r`; NULL (an error recorded) when `r` is a tensor. */
const imp_seq *imp_seq_of(imp_node *n, ir_ref r);
/* Input `i` whatever its kind: a tensor or a handle. */
ir_ref imp_in_value(imp_node *n, int i);
/* An If whose condition is known at run time, for outputs that are
 * handles: element-wise Where when both branches give the same structure
 * (else the condition must be frozen). */
ir_ref imp_seq_where(imp_node *n, ir_ref cond, ir_ref a, ir_ref b);
/* Graph inputs and outputs of sequence or optional type (seq_value.c):
 * `vi`'s value from the elements' shapes `spec` (imp_options.values),
 * its tensors graph inputs NAME[K] (an optional tensor: NAME); the handle
 * or tensor, or IR_NONE with `err`. Sets iv->present (iv may be NULL). */
ir_ref imp_seq_input(imp_ctx *c, const Onnx__GraphProto *gp, const Onnx__ValueInfoProto *vi, const char *spec,
                     imp_io_value *iv, char *err, size_t errlen);
/* Marks the tensors of graph output `name` (handle or tensor `r`, of
 * declared type `tp`) as outputs NAME[K] (an optional tensor: NAME) and
 * describes them in `io` (may be NULL); 0 or -1 with `err`. */
int imp_seq_output(imp_ctx *c, const Onnx__GraphProto *gp, const char *name, ir_ref r, const Onnx__TypeProto *tp,
                   imp_io_value *io, char *err, size_t errlen);
/* The kind of a declared type (tensor when absent), whether an optional
 * holds a sequence, and the tensors' ONNX element type (model_io.c). */
imp_io_kind imp_io_kind_of(const Onnx__TypeProto *tp, bool *of_seq, int *elem_type);
/* `io` as `gp` declares it (first and count unset). */
int imp_io_declare(const Onnx__GraphProto *gp, imp_io *io, char *err, size_t errlen);
/* The file at `path`, whole (a regular file); -1 with `err`. */
int imp_read_file(const char *path, uint8_t **buf, size_t *len, char *err, size_t n);
/* The decoded model at `path`: NULL with `err` when the file is empty,
 * unsound, nested too deep or too large to decode. */
Onnx__ModelProto *imp_read_model(const char *path, char *err, size_t errlen);

/* Concat of `cnt` values along `axis` (op_shape.c). */
ir_ref imp_concat(imp_node *n, const ir_ref *parts, int cnt, int axis);

/* The values of input `i`, which must be a compile-time constant: copies at
 * most `max` elements as int64 / double; returns the element count or -1.
 * A value that depends on a symbol (a dimension read by Shape) is an error;
 * imp_const_dims accepts those (as symbolic dimensions, see ir.h): for the
 * lowerings that compute shapes and slice bounds from them. */
int imp_const_ints(imp_node *n, int i, int64_t *out, int max);
int imp_const_dims(imp_node *n, int i, int64_t *out, int max);
int imp_const_floats(imp_node *n, int i, double *out, int max);
/* Records an error naming symbol `sym` of dimension `d` (what: "input 0
 * has shape [batch,seq]"); -1. */
int imp_fail_sym(imp_node *n, int64_t d, const char *what);
/* The first symbolic dimension held as a value by constant `r` (a Shape's
 * output, folded), or 0 when it holds none. */
int64_t imp_sym_value(imp_node *n, ir_ref r);
/* In a model with symbols, refuses (imp_fail_sym) input `i` when its shape
 * or values depend on one: for the inputs an op reads at compile time or
 * indexes by (scales, zero points, axes, weights) while its data input may
 * stay symbolic; 0 or -1. */
int imp_need_static(imp_node *n, int i);
/* Cast of a value holding symbolic dimensions (narrow.c) to int32 (kept as
 * int64, marked; the entry checks each fits) or back to int64: 1 when it
 * set the output, 0 when it is not such a cast, -1 on error. */
int imp_narrow_cast(imp_node *n, ir_ref x, ir_dtype t);
/* Records, for a refusal that knowing value `r` would lift, the graph inputs
 * it is computed from (run and verify then freeze them to their tensors). */
void imp_need_value(imp_node *n, ir_ref r);
/* In a model with symbols, refuses a value from the file that lies in the
 * range reserved for symbolic dimensions (a forged symbol); 0 or -1. */
int imp_check_value(imp_node *n, int64_t v);
/* Does the model keep symbolic dimensions (some input dim not pinned)? */
bool imp_has_syms(const imp_node *n);

/* ONNX indices into an axis of size `v` (may be symbolic): int32 or int64
 * (else an error), as int64 with negative values wrapped (idx + v where
 * idx < 0), and checked: outside [-v, v) is the index error (run time, or
 * compile time for constant indices). */
ir_ref imp_wrap_indices(imp_node *n, ir_ref idx, int64_t v);

/* The indices' extent `in` on `axis` no larger than the data's `of`
 * (GatherElements, ScatterElements): refused when both are numbers and it
 * is larger, assumed (the generated entry checks it) when symbolic; 0 or -1. */
int imp_fits_within(imp_node *n, int64_t in, int64_t of, int axis);
/* Normalises a possibly negative axis against `rank` (error when out of range). */
int imp_axis(imp_node *n, int64_t axis, int rank);
const ir_shape *imp_shape(imp_node *n, ir_ref r);
ir_dtype imp_dtype(imp_node *n, ir_ref r);
/* IR_F16 or IR_BF16 when input `i` is an ONNX 16-bit float (held as
 * float32, see half.c), else IR_F32. */
ir_dtype imp_half_in(imp_node *n, int i);

/* The memory limit (--max-memory; tensor.c). */
size_t imp_mem_limit(void);

/* The deepest nesting of messages a model may have (an If's graph's node's
 * attribute's graph... is 3 levels per If; TypeProto nests per sequence
 * or map level): the limit of Python's protobuf, far past real models. */
#define IMP_MAX_NESTING 100
/* Walks the serialized message `buf` (of type `root`) iteratively: 0 when
 * its wire format is sound, it nests at most IMP_MAX_NESTING deep and its
 * decoded size fits the memory limit; else -1 with `err` (wire.c). */
int imp_wire_check(const uint8_t *buf, size_t len, const ProtobufCMessageDescriptor *root, char *err,
                   size_t errlen);

/* TensorProto -> constant node (tensor.c). */
ir_ref imp_tensor_const(imp_ctx *c, const Onnx__TensorProto *t, char *err, size_t errlen);
int imp_tensor_from_proto(const Onnx__TensorProto *t, const char *base_dir, imp_tensor *out,
                          char *err, size_t errlen);

/* ---- IR-building helpers shared by the op families (lower_util.c) ---- */

/* dtype / shape of node x (float32 / rank 0 for IR_NONE). */
static inline ir_dtype imp_gdtype(ir_graph *g, ir_ref x) {
  return x < 0 ? IR_F32 : ir_node_get(g, x)->dtype;
}
static inline ir_shape imp_gshape(ir_graph *g, ir_ref x) {
  ir_shape s = {0};
  if (x >= 0) s = ir_node_get(g, x)->shape;
  return s;
}
/* A rank-0 constant of x's dtype (IR_NONE passes through). */
static inline ir_ref imp_k(ir_graph *g, ir_ref x, double v) {
  return x == IR_NONE ? IR_NONE : ir_scalar(g, imp_gdtype(g, x), v);
}
static inline ir_ref imp_add(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_ADD, a, b);
}
static inline ir_ref imp_mul(ir_graph *g, ir_ref a, ir_ref b) {
  return ir_binary(g, IR_MUL, a, b);
}
static inline ir_shape imp_nshape(imp_node *n, ir_ref r) {
  return *imp_shape(n, r);
}
ir_ref imp_clamp(ir_graph *g, ir_ref x, double lo, double hi);
/* Stacks `parts` (each of size 1 on `axis`) along `axis`. */
ir_ref imp_stack(ir_graph *g, const ir_ref *parts, int count, int axis);
/* Slice [start, start+len) of `axis`. */
ir_ref imp_take(ir_graph *g, ir_ref x, int axis, int64_t start, int64_t len);
/* Inserts s-1 zeros between the elements of `axis` (length L -> (L-1)*s+1;
 * L may be symbolic): ConvTranspose's and Col2Im's strided placement. */
ir_ref imp_dilate_axis(ir_graph *g, ir_ref x, int axis, int64_t s);
/* Pads (positive) or crops (negative) `axis` by b before and e after. */
ir_ref imp_pad_crop(ir_graph *g, ir_ref x, int axis, int64_t b, int64_t e);
/* A 1-D per-axis parameter reshaped to broadcast along `axis` of rank `rank`. */
ir_ref imp_along(ir_graph *g, ir_ref v, int rank, int axis);
/* Quantization arithmetic as ONNX defines it (round half to even,
 * float32 division, saturation to the integer type's range). */
ir_ref imp_round_even(ir_graph *g, ir_ref v);
ir_ref imp_div_f32(ir_graph *g, ir_ref x, ir_ref s);
bool imp_qrange(ir_dtype t, double *lo, double *hi);
ir_ref imp_round_even_f64(ir_graph *g, ir_ref v);
ir_ref imp_requant(ir_graph *g, ir_ref v, ir_ref zp, ir_dtype out);
/* B = X * S with S constant along k (a dequantization scale): X and S's row. */
bool imp_dequant_scale(ir_graph *g, ir_ref b, ir_ref *x, ir_ref *row);
/* A [.., M, K] times a weight read as panels [K, np, P] (each panel a
 * contiguous run in memory): the sum over K, [.., M, np, P] (op_matmul.c). */
ir_ref imp_matmul_panels(ir_graph *g, ir_ref a, ir_ref panels);
/* Columns per panel of a quantized weight: two target vectors (op_matmul.c). */
int64_t imp_panel_columns(const imp_node *n);
ir_ref imp_shift_i32(ir_graph *g, ir_ref x, ir_ref zp, int zp_axis);
ir_ref imp_qmultiplier(ir_graph *g, ir_ref as, ir_ref bs, ir_ref ys);
/* Refuses (imp_fail) an input that is not float32/float64. */
bool imp_need_float(imp_node *n, ir_ref x);
/* Shape of `rank` ones with `len` at `axis`. */
ir_shape imp_unit_shape(int rank, int axis, int64_t len);
/* Permutation of `rank` axes moving `axis` to the end. */
void imp_perm_to_last(int rank, int axis, int *perm);
/* SUM over `axis` (kept) of WHERE(hit, v, 0); bool values by MAX (an OR). */
ir_ref imp_select_sum(imp_node *n, ir_ref hit, ir_ref v, int axis);
ir_ref imp_last_hit(imp_node *n, ir_ref hit, int axis);
/* resize_sym.c: the bilinear Resize of [N, C, H, W] (float32; half_pixel,
 * pytorch_half_pixel, asymmetric or align_corners) with H or W symbolic,
 * as onnxruntime computes it: on H and W a whole scale, or scale 0 and the
 * size osz (out / L at run time); sets the output, 0 or -1. */
int imp_resize_bilinear_sym(imp_node *n, ir_ref x, const char *ctm, const double *scale, const int64_t *osz);
/* The nearest Resize (any rank, no crop) where an axis goes to a size read
 * from a shape (scale 0) or a symbolic axis by other than a repeat: each
 * resized axis picked at indices the generated code computes as
 * onnxruntime does; nn one of IMP_NN_*. Sets the output, 0 or -1. */
enum { IMP_NN_ROUND_FLOOR, IMP_NN_ROUND_CEIL, IMP_NN_FLOOR, IMP_NN_CEIL };
int imp_resize_nearest_sym(imp_node *n, ir_ref x, const char *ctm, int nn, const double *scale, const int64_t *osz);
/* The float32 scale onnxruntime holds for a static axis of length `in`
 * resized to `out`: the given one, or out / in divided in float32 where
 * the double `scale` (from sizes) is no float. */
float imp_resize_scale_f32(double scale, int64_t in, int64_t out);

/* ---- sliding windows (window.c), for Conv and the pooling ops ---- */
#define IMP_MAX_SP (IR_MAX_RANK - 4) /* spatial axes; conv views add 4 leading axes */

/* The geometry of a windowed op over the spatial axes of an [N, C, ...]
 * input: kernel, strides, dilations, pads (begin/end, plus the extra end
 * padding ceil_mode needs) and the output extent. */
typedef struct {
  int nsp;
  int64_t in[IMP_MAX_SP], k[IMP_MAX_SP], s[IMP_MAX_SP], d[IMP_MAX_SP];
  int64_t pb[IMP_MAX_SP], pe[IMP_MAX_SP], extra[IMP_MAX_SP], out[IMP_MAX_SP];
} imp_window;

/* Fills `w` from the node's strides, dilations, pads / auto_pad for input
 * shape `xs` and the kernel extents `kernel` (symbolic axes included). */
int imp_window_init(imp_node *n, imp_window *w, const ir_shape *xs, const int64_t *kernel, bool ceil_mode);
/* `x` with its spatial axes padded by the window's pads (a view). */
ir_ref imp_pad_spatial(ir_graph *g, ir_ref x, const imp_window *w, double value);
/* Tap number `t` as kernel indices, row-major; the number of taps. */
void imp_tap_index(const imp_window *w, int64_t t, int64_t *kidx);
int64_t imp_tap_count(const imp_window *w);
/* The padded input under tap `kidx` for every output position (a view). */
ir_ref imp_tap_slice(ir_graph *g, ir_ref xp, const imp_window *w, const int64_t *kidx);
/* All taps combined with `op` (ADD, MAX). */
ir_ref imp_fold_taps(ir_graph *g, ir_ref xp, const imp_window *w, ir_op op);
/* The kernel_shape attribute, `nsp` entries. */
int imp_kernel_attr(imp_node *n, int nsp, int64_t *k);
/* Conv of x by w (op_conv.c; its register-blocked forms in conv_*.c, zero
 * padding), the node's window attributes and group. `b` (NULL: none): the bias, which a
 * wide form adds itself (then *b = IR_NONE); otherwise the caller does. */
ir_ref imp_conv(imp_node *n, ir_ref x, ir_ref w, ir_ref *b);
/* Conv's forms, for imp_conv (op_conv.c chooses; each file says why):
 * x5 the input [N, G, 1, C/G, spatial...], wt the weight [M, C/G, k...] (as
 * `wr` = [1, G, M/G, C/G, k...]); IR_NONE when a form does not apply. The
 * ones given `b` may take the bias (then *b = IR_NONE). */
/* conv_matmul.c: im2col (one product per group); rows unfolded along the row. */
ir_ref imp_conv_matmul(ir_graph *g, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w, int64_t M,
                       int64_t vf);
ir_ref imp_conv_row_unfold(ir_graph *g, ir_ref x5, ir_ref wt, const imp_window *w, ir_shape wr);
/* conv_taps.c: per tap; per tap over flattened rows (depthwise, short rows). */
ir_ref imp_conv_taps(ir_graph *g, ir_ref x5, ir_ref wt, const imp_window *w, ir_shape wr);
ir_ref imp_conv_taps_wide(ir_graph *g, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w0,
                          ir_shape wr);
/* conv_window.c: the windowed forms (wide or rows), the bands of few padded
 * rows, the bias added before a wide form's output view, and the wide
 * form's geometry: the right padding its rows share, its row stride, and
 * the products it computes (-1 when not counted). */
ir_ref imp_conv_window(ir_graph *g, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w0,
                       ir_shape wr, bool wide, int64_t vf, int regs);
ir_ref imp_conv_bands(imp_node *n, ir_ref x5, ir_ref wt, const imp_window *w, ir_shape wr,
                      int64_t vf, int regs, bool wide);
ir_ref imp_conv_bias_wide(ir_graph *g, ir_ref y, ir_ref *b);
int64_t imp_conv_shared_pad(const imp_window *w);
int64_t imp_conv_wide_stride(const imp_window *w);
int64_t imp_conv_wide_products(const imp_window *w, int64_t M, int64_t vf, int regs);
/* conv_cols.c: the output channels as the columns, in bands of output rows,
 * over the wide form's positions, over the positions themselves or over an
 * im2col copy's. */
ir_ref imp_conv_cols(imp_node *n, ir_ref x5, ir_ref wt, const imp_window *w, int regs, int64_t nr);
ir_ref imp_conv_wide_cols(imp_node *n, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w0,
                          int64_t vf);
ir_ref imp_conv_im2col_cols(imp_node *n, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w,
                            int64_t vf);
#define IMP_CONV_MAX_UNFOLD 9 /* kernel columns imp_conv_unfold_cols copies the input for */
ir_ref imp_conv_unfold_cols(imp_node *n, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w, int64_t vf);
ir_ref imp_conv_winograd(imp_node *n, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w);

/* The input of a windowed op as its taps read it: the padded input copied
 * once into the stride phases some tap reads (window.c says why), made by
 * imp_window_phases. */
typedef struct {
  ir_ref ph; /* [N, G, 1, C/G, phases..., Lq...]; IR_NONE: read `xp` through masks */
  int64_t s[IMP_MAX_SP];
} imp_window_input;
imp_window_input imp_window_phases(ir_graph *g, ir_ref xr, const imp_window *w, double pad);
/* The input under tap `kidx` for every output position: [N, G, 1, C/G, out...]. */
ir_ref imp_window_tap(ir_graph *g, const imp_window_input *ci, ir_ref xp, const imp_window *w,
                      const int64_t *kidx);

#endif
