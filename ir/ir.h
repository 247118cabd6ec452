/* ir.h — the caten primitive graph.
 *
 * A graph is a DAG of nodes, each one of the dozen primitives of ops.def.
 * Every node produces a tensor of a static shape and one dtype. Views are
 * metadata (shape, strides over the source's flat buffer, offset and a
 * per-axis valid range for padding) and never a copy; a reduction is an
 * ADD/MUL/MAX node with `reduce` set whose output keeps the reduced axes
 * with size 1 (the "broadcast output" of Caten: those axes have stride 0
 * in the iteration space of the reduction).
 *
 * Builder functions take and return node references (ir_ref). Errors are
 * sticky: the first failing call records a message in the graph and
 * returns IR_NONE, and every later call that receives IR_NONE returns
 * IR_NONE too, so a lowering can chain calls and check once at the end.
 */
#ifndef IR_H
#define IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IR_MAX_RANK 12
#define IR_NONE (-1)

typedef int ir_ref;

typedef enum {
#define X(name, arity, kind) IR_##name,
#include "ops.def"
#undef X
  IR_OP_COUNT
} ir_op;

typedef enum {
  IR_F32,
  IR_F64,
  IR_F16,
  IR_I8,
  IR_I16,
  IR_I32,
  IR_I64,
  IR_U8,
  IR_U16,
  IR_U32,
  IR_U64,
  IR_BOOL,
  IR_BF16, /* bfloat16; like IR_F16 only stored, never computed on (half.c) */
  IR_DTYPE_COUNT
} ir_dtype;

/* Symbolic dimensions (dim.c). A dimension, stride, offset or mask bound
 * is an int64_t: either a plain value or a *tag*, a value in the reserved
 * range [IR_DIM_TAG_BASE, IR_DIM_TAG_BASE + 2^30) that names an interned
 * polynomial over the model's symbols (batch, seq, ...) with int64
 * coefficients, e.g. 64*seq or past+1. Interning makes equality `==`, and
 * a polynomial that reduces to a constant is returned as a plain value, so
 * a dimension is static exactly when it is not a tag. Tags are positive and
 * huge: `d > 1` and `d != 1` hold for a symbol, which is what the code
 * that tells broadcast (size 1) axes from others needs; every other
 * arithmetic or ordering on dimensions goes through ir_dim_*. Symbols are
 * >= 1. The table is process-wide and append-only (the compiler is
 * single-threaded); it lives while any graph lives. Arithmetic that
 * overflows gives IR_DIM_INVALID, which propagates and is refused as a
 * shape. */
#define IR_DIM_TAG_BASE (INT64_C(1) << 62)
#define IR_DIM_TAG_COUNT (INT64_C(1) << 30)
#define IR_DIM_INVALID (IR_DIM_TAG_BASE + IR_DIM_TAG_COUNT - 1)
/* input symbols; with the floor symbols derived from them (ir_dim_floordiv)
 * at most IR_MAX_SYMS (bit masks of symbols are uint32_t) */
#define IR_MAX_INPUT_SYMS 16
#define IR_MAX_SYMS 32
/* The largest value a symbol may take (checked by the generated code): it
 * keeps decisions finite, e.g. an INT64_MAX slice end is past any size. */
#define IR_DIM_SYM_MAX INT64_C(2147483647)

typedef struct {
  int rank;
  int64_t d[IR_MAX_RANK];
} ir_shape;

/* How a VIEW reads its source: element (i0..in) of the view lives at flat
 * element offset + sum(stride[k] * ik) of the source's contiguous buffer,
 * when lo[k] <= ik < hi[k] on every axis; elsewhere it reads pad_value.
 * An indexed view (gather, made only by ir_rewrite_gather) has a second
 * source e of the view's shape and adds gstride * e(i) to the address;
 * e(i) outside [0, gbound) is never read: it is an error at run time
 * (gstrict) or reads 0, as the one-hot it replaces did. */
typedef struct {
  ir_shape shape;
  int64_t stride[IR_MAX_RANK];
  int64_t offset;
  int64_t lo[IR_MAX_RANK];
  int64_t hi[IR_MAX_RANK];
  bool masked;
  double pad_value;
  bool gather;
  bool gstrict; /* out of range: an error (else the read gives 0, as the one-hot did) */
  int64_t gstride, gbound;
} ir_view;

typedef enum { IR_ORIGIN_INPUT, IR_ORIGIN_WEIGHT } ir_origin;

typedef struct {
  ir_op op;
  ir_dtype dtype;
  ir_shape shape;
  int nsrc;
  ir_ref src[3];
  bool reduce;          /* ADD/MUL/MAX: accumulate over axes where src is larger */
  ir_view view;         /* VIEW */
  double fval;          /* LOAD (floating dtypes) */
  int64_t ival;         /* LOAD (integer dtypes and bool) */
  bool sym_value;       /* LOAD: ival is a symbolic dimension, known at run time */
  int64_t coef[IR_MAX_RANK]; /* INDEX_COMPONENTS: value = base + sum(coef[k]*ik) */
  int64_t base;
  ir_origin origin;     /* ALLOCATE */
  int io_index;         /* ALLOCATE input: position among graph inputs */
  const char *name;     /* ALLOCATE: tensor name */
  const void *data;     /* ALLOCATE weight: bytes, owned by the graph */
  const char *label;    /* the ONNX node this came from (for comments) */
  bool is_const;        /* no graph input reaches this node */
  bool strict_index;    /* reduce: a one-hot whose index must be in range (ONNX
                           Gather); rewritten, out of range is an error, not 0 */
  uint8_t nbits_row;    /* reduce: the one-row MatMulNBits sum of codes of this
                           many bits (importer/op_nbits.c), which codegen may
                           print with integer dot products (codegen/nbits_dot.c) */
} ir_node;

typedef struct ir_graph ir_graph;

/* Graph lifetime and queries. */
ir_graph *ir_graph_new(void);
void ir_graph_free(ir_graph *g);
const ir_node *ir_node_get(const ir_graph *g, ir_ref r);
int ir_graph_count(const ir_graph *g);
bool ir_failed(const ir_graph *g);
const char *ir_error(const ir_graph *g);
int ir_fail(ir_graph *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ir_clear_error(ir_graph *g);
/* Label nodes created from now on (the ONNX node being lowered). */
void ir_set_label(ir_graph *g, const char *label);
char *ir_strdup(ir_graph *g, const char *s);
char *ir_strndup(ir_graph *g, const char *s, size_t n);
/* Notes for the generated header (how a sequence input maps onto entry
 * tensors): lines of model text, escaped by codegen when printed. */
void ir_add_note(ir_graph *g, const char *line);
int ir_note_count(const ir_graph *g);
const char *ir_note(const ir_graph *g, int i);
/* The graph rounds a computed float to an integer where onnxruntime does
 * (quantization): a one-ulp difference before it moves a tie by a whole
 * code, so the generated C turns off contraction of a*b+c into an FMA. */
void ir_mark_rounds_computed(ir_graph *g);
bool ir_rounds_computed(const ir_graph *g);

int ir_output_count(const ir_graph *g);
ir_ref ir_output(const ir_graph *g, int i);
const char *ir_output_name(const ir_graph *g, int i);
int ir_mark_output(ir_graph *g, ir_ref r, const char *name);
void ir_set_output(ir_graph *g, int i, ir_ref r);
/* Value-dependent shapes (NonZero, Unique, ...): output i is computed at a
 * static bound along `axis` and only its first `len` entries there are
 * valid. ir_mark_output_len appends `len` (a scalar int64) as the output
 * "NAME.length", which the generated entry writes like any output; the
 * runtime cuts output i to it. ir_output_len gives that output's index
 * (and the axis) or -1; ir_output_len_of the output a length output
 * measures, or -1. */
int ir_mark_output_len(ir_graph *g, int i, int axis, ir_ref len);
int ir_output_len(const ir_graph *g, int i, int *axis);
int ir_output_len_of(const ir_graph *g, int i);
/* A malloc'd array of ir_graph_count flags: 1 for nodes the outputs need. */
char *ir_live_nodes(const ir_graph *g);
int ir_input_count(const ir_graph *g);
ir_ref ir_input_ref(const ir_graph *g, int i);
/* Replace every use of `from` (sources and outputs) by `to`. */
void ir_replace_uses(ir_graph *g, ir_ref from, ir_ref to);

/* Checked int64 arithmetic for every size, count and offset computed from
 * a model (attributes, shapes, constant inputs): true when the exact result
 * does not fit (then *r is unspecified and must not be used). */
static inline bool ir_add_ov(int64_t a, int64_t b, int64_t *r) {
  return __builtin_add_overflow(a, b, r);
}
static inline bool ir_sub_ov(int64_t a, int64_t b, int64_t *r) {
  return __builtin_sub_overflow(a, b, r);
}
static inline bool ir_mul_ov(int64_t a, int64_t b, int64_t *r) {
  return __builtin_mul_overflow(a, b, r);
}

/* The graph's budget: the bytes its nodes and owned blocks may take, and
 * at most IR_MAX_NODES nodes (0: no bound; the importer bounds the graph
 * while it builds it). Past it, building fails with a sticky error naming
 * the limit instead of growing until the machine runs out. ir_reserve
 * checks BEFORE an expansion (one node per kernel tap...) that `nodes` more
 * nodes fit. Real models lower to well under a million nodes. */
#define IR_MAX_NODES (1 << 22)
void ir_set_budget(ir_graph *g, size_t bytes);
int ir_reserve(ir_graph *g, int64_t nodes);

/* Dtypes and shapes. */
size_t ir_dtype_size(ir_dtype t);
const char *ir_dtype_name(ir_dtype t);
bool ir_dtype_is_float(ir_dtype t);
bool ir_dtype_is_signed(ir_dtype t);
const char *ir_op_name(ir_op op);
int64_t ir_shape_numel(const ir_shape *s);
ir_shape ir_shape_make(int rank, const int64_t *dims);
bool ir_shape_eq(const ir_shape *a, const ir_shape *b);
/* numpy broadcasting; returns false when the shapes do not broadcast. */
bool ir_shape_broadcast(const ir_shape *a, const ir_shape *b, ir_shape *out);
void ir_shape_str(const ir_shape *s, char *buf, size_t n);
void ir_contiguous_strides(const ir_shape *s, int64_t *strides);
/* The view `u` (over a contiguous value of shape `es`) re-expressed over
 * the buffer that `v` reads that value from (sink.c): u's mask and shape,
 * v's strides and offset (v's mask is not applied); false when an axis of
 * u does not move along one axis of es. */
bool ir_view_compose(const ir_view *u, const ir_shape *es, const ir_view *v, ir_view *out);

/* Symbolic dimensions (see the comment at IR_DIM_TAG_BASE). */
static inline bool ir_dim_is_sym(int64_t d) {
  return d >= IR_DIM_TAG_BASE && d < IR_DIM_TAG_BASE + IR_DIM_TAG_COUNT;
}
/* The dimension of symbol `name` (registered on first use); IR_DIM_INVALID
 * when IR_MAX_INPUT_SYMS input symbols (or IR_MAX_SYMS symbols) exist. */
int64_t ir_dim_sym(const char *name);
/* A plain value, or a tag that names a polynomial (not IR_DIM_INVALID, nor a
 * value in the tag range that names nothing). */
bool ir_dim_valid(int64_t d);
int64_t ir_dim_add(int64_t a, int64_t b);
int64_t ir_dim_sub(int64_t a, int64_t b);
int64_t ir_dim_mul(int64_t a, int64_t b);
int64_t ir_dim_neg(int64_t a);
/* a / b when b divides a exactly as polynomials (true), else false. */
bool ir_dim_div_exact(int64_t a, int64_t b, int64_t *q);
/* Every monomial of `d` has degree <= 1 and a coefficient that fits an int:
 * an affine expression of the symbols (isl can take it as is). */
bool ir_dim_is_affine(int64_t d);
/* The value of `d` with symbol k = values[k]; false on overflow or invalid. */
bool ir_dim_eval(int64_t d, const int64_t *values, int64_t *out);
/* floor(a / b) for a plain b >= 1: a polynomial when it divides, else with
 * a derived symbol q = floor(num / b) for the part that does not (num's
 * constant in 0..b-1, so equal floors are one symbol). The generated code
 * computes q from its definition (ir_dim_sym_def), never takes it as an
 * argument; ir_dim_eval does the same; ir_dim_cmp uses b*q <= num <
 * b*q + b. IR_DIM_INVALID when q could be < 1 under what `g` knows (so a
 * caller refuses, as before) or IR_MAX_SYMS symbols exist. */
int64_t ir_dim_floordiv(ir_graph *g, int64_t a, int64_t b);
/* Is symbol `id` derived (then its definition floor(num / den))? */
bool ir_dim_sym_def(int id, int64_t *num, int64_t *den);
/* `mask` with every derived symbol replaced by the symbols it is made from
 * (the input symbols that decide it). */
uint32_t ir_dim_base_syms(uint32_t mask);
/* Bit k set when symbol k occurs in `d`. */
uint32_t ir_dim_syms(int64_t d);
/* The symbol `d` is (1*sym), or -1. */
int ir_dim_sym_id(int64_t d);
/* Lowest input symbol `d` depends on, or -1 (for error messages). */
int ir_dim_first_sym(int64_t d);
const char *ir_dim_sym_name(int id);
/* The symbol as a C identifier (and isl parameter): o2c_sym<id>, never
 * made from its name, which is model text (it reaches the C only through
 * codegen's escaping, in comments and the names array). */
const char *ir_dim_sym_cname(int id);
/* "64*seq+1" (for dumps and messages); "?" for IR_DIM_INVALID. All three
 * printers write what fits in `buf` (NULL with n = 0: nothing) and return
 * the whole text's length, like snprintf: C text must never be cut. */
size_t ir_dim_str(int64_t d, char *buf, size_t n);
/* The C expression of `d` over the symbols' C names, e.g.
 * "(64 * o2c_sym1 + 1)". ir_dim_bound_c: the sum of the magnitudes of its
 * monomials in double ("(64.0 * (double)o2c_sym1 + 1.0)"), a bound on every
 * partial sum its int64 evaluation makes (for the generated code's overflow
 * check). */
size_t ir_dim_to_c(int64_t d, char *buf, size_t n);
size_t ir_dim_bound_c(int64_t d, char *buf, size_t n);
bool ir_shape_is_static(const ir_shape *s);
/* Lowest symbol in any dimension of `s`, or -1. */
int ir_shape_first_sym(const ir_shape *s);

/* Decisions under the graph's knowledge (symbols >= 1, the bounds implied
 * by recorded assumptions). ir_dim_cmp returns the relations between a and
 * b that are possible for some symbol values: a set of IR_CMP_LT, IR_CMP_EQ and
 * IR_CMP_GT. a < b is proven when the result is IR_CMP_LT; a <= b when
 * IR_CMP_GT is not in it. */
#define IR_CMP_LT 1u
#define IR_CMP_EQ 2u
#define IR_CMP_GT 4u
unsigned ir_dim_cmp(const ir_graph *g, int64_t a, int64_t b);
/* The smallest and largest values of `d` (INT64_MIN / INT64_MAX: unbounded). */
void ir_dim_range(const ir_graph *g, int64_t d, int64_t *lo, int64_t *hi);
/* `d` at the reference point of the heuristics and the memory plan: each
 * symbol at its upper bound when an assumption gave it one, else 64 (at
 * least its lower bound). Saturates instead of overflowing. */
int64_t ir_dim_ref(const ir_graph *g, int64_t d);
/* Records that the graph is only valid where p >= 0 (e.g. seq <= 64 for a
 * slice of a 64-row table to seq rows): generated code checks it at run
 * time. A bound on one symbol tightens later decisions. Fails (sticky
 * error) when p is provably negative; no-op when provably >= 0. */
int ir_assume_nonneg(ir_graph *g, int64_t p, const char *why);
/* Two dimensions that must be equal where ONNX says so (broadcast operands,
 * the other axes of a Concat) but are different expressions: the 2x
 * upsampled 1/32 map of an FPN, 2*floor((q + 1) / 2), against the 1/16 map
 * q. When one involves a floor symbol and they may be equal, a == b is
 * assumed (two assumptions the entry checks) and remembered, so that
 * ir_dim_same and ir_dim_cmp see them as equal; 0, or -1 (sticky error)
 * when they cannot be equal or hold no floor symbol. */
int ir_dim_unify(ir_graph *g, int64_t a, int64_t b);
bool ir_dim_same(const ir_graph *g, int64_t a, int64_t b);
int ir_assumption_count(const ir_graph *g);
int64_t ir_assumption(const ir_graph *g, int i, const char **why);
/* The graph's symbols (ids for ir_dim_sym_name), in the order the graph
 * inputs first use them: the parameters of the generated entry function. */
int ir_sym_count(const ir_graph *g);
int ir_sym(const ir_graph *g, int i);

/* Leaves. `data` is copied; `name` is copied. */
ir_ref ir_input(ir_graph *g, const char *name, ir_dtype t, ir_shape s);
ir_ref ir_const(ir_graph *g, const char *name, ir_dtype t, ir_shape s, const void *data);
/* The same, taking ownership of `data` (malloc'd, numel * size bytes): no copy. */
ir_ref ir_const_take(ir_graph *g, const char *name, ir_dtype t, ir_shape s, void *data);
/* The same, reading `data` in place inside the read-only mapping
 * [base, base + len), which the graph takes (munmap when freed): external
 * data is never copied. */
ir_ref ir_const_mapped(ir_graph *g, const char *name, ir_dtype t, ir_shape s, const void *data, void *base,
                       size_t len);
/* After a pass has streamed through weight data `data`: a mapped weight's
 * pages are given back (read from the file again when next touched), so a
 * model larger than memory is never resident at once; others: nothing. */
void ir_const_drop_pages(const ir_graph *g, const void *data);
ir_ref ir_load(ir_graph *g, ir_dtype t, ir_shape s, double value);
/* An integer LOAD; `value` may be a symbolic dimension (dtype i64): its
 * value is then only known at run time (the node is not constant). */
ir_ref ir_load_int(ir_graph *g, ir_dtype t, ir_shape s, int64_t value);
ir_ref ir_scalar(ir_graph *g, ir_dtype t, double value); /* rank-0 LOAD */
ir_ref ir_index(ir_graph *g, ir_shape s, const int64_t *coef, int64_t base);
/* iota along `axis` of shape `s` (int64). */
ir_ref ir_iota(ir_graph *g, ir_shape s, int axis);

/* Primitives. Binary ops and WHERE broadcast their operands (numpy rules);
 * operand dtypes must match (WHERE: condition is bool). */
ir_ref ir_unary(ir_graph *g, ir_op op, ir_ref a);
ir_ref ir_binary(ir_graph *g, ir_op op, ir_ref a, ir_ref b);
ir_ref ir_where(ir_graph *g, ir_ref c, ir_ref x, ir_ref y);
ir_ref ir_cast(ir_graph *g, ir_ref a, ir_dtype t);
/* Reduce with ADD, MUL or MAX over the axes set in `axes` (bitmask);
 * keeps the reduced axes with size 1. */
ir_ref ir_reduce(ir_graph *g, ir_op op, ir_ref a, uint32_t axes);
ir_ref ir_move(ir_graph *g, ir_ref a);

/* Views (metadata only; ir_view_reshape inserts a MOVE when it must). */
ir_ref ir_view_reshape(ir_graph *g, ir_ref a, ir_shape s);
ir_ref ir_view_permute(ir_graph *g, ir_ref a, const int *perm);
ir_ref ir_view_expand(ir_graph *g, ir_ref a, ir_shape s); /* numpy broadcast to s */
/* Per axis: start, step (non-zero, may be negative) and resulting length. */
ir_ref ir_view_slice(ir_graph *g, ir_ref a, const int64_t *start, const int64_t *step,
                     const int64_t *len);
/* Per axis: elements added before and after (>= 0), read as `value`. */
ir_ref ir_view_pad(ir_graph *g, ir_ref a, const int64_t *before, const int64_t *after,
                   double value);
/* Sliding windows over the last nsp axes (convolution taps): shape
 * [leading..., win..., out...], element (.., k, o) reads a[.., o*step + k*dil]. */
ir_ref ir_view_window(ir_graph *g, ir_ref a, int nsp, const int64_t *win, const int64_t *step,
                      const int64_t *dil, const int64_t *out);
ir_ref ir_view_unsqueeze(ir_graph *g, ir_ref a, int axis);
ir_ref ir_view_squeeze(ir_graph *g, ir_ref a, int axis);
bool ir_view_is_identity(const ir_view *v, const ir_shape *src);
/* Does `v` read all of `src` in place as another static shape (offset 0,
 * its own contiguous strides, unmasked), splitting or merging axes? One
 * that only adds or drops axes of size 1 is not counted: kernels follow
 * it already. ([N, M, H*W] read as [N, M, H, W]: yes; [M, 1, N] as
 * [M, N]: no.) */
bool ir_view_is_split_reshape(const ir_view *v, const ir_shape *src);
/* A pure broadcast view (unsqueeze/squeeze/expand only: no permutation,
 * slice, pad or reshape across axes) reads source element (i_j) at view
 * element (i_k) with i_j = i_{view_axis[j]}; view_axis[j] is -1 for source
 * axes of size 1. Returns false when `v` is not such a view of `src`. */
bool ir_view_broadcast_map(const ir_view *v, const ir_shape *src, int *view_axis);
/* The same for a view that may also reorder the source's axes (a
 * transpose): every source axis of size > 1 is read by one view axis, with
 * its contiguous stride; every other view axis is a broadcast. */
bool ir_view_axis_map(const ir_view *v, const ir_shape *src, int *view_axis);
/* When `b` reads (in place, its axes maybe permuted) a copy that a reshape
 * made of a view repeating an axis R times (stride 0) merged into the axis
 * before it (G·R: grouped-query attention's keys and values), *bs is the
 * same values read from the copy's source with that axis split into
 * (G, R), and *axis b's axis that holds G·R; else false. */
bool ir_view_unrepeat(ir_graph *g, ir_ref b, ir_ref *bs, int *axis);

/* Composite helpers, built only from primitives (builder.c). */
ir_ref ir_sub(ir_graph *g, ir_ref a, ir_ref b);
ir_ref ir_div(ir_graph *g, ir_ref a, ir_ref b);
ir_ref ir_exp(ir_graph *g, ir_ref a);
ir_ref ir_log(ir_graph *g, ir_ref a);
ir_ref ir_eq(ir_graph *g, ir_ref a, ir_ref b);
ir_ref ir_le(ir_graph *g, ir_ref a, ir_ref b);
ir_ref ir_gt(ir_graph *g, ir_ref a, ir_ref b);
ir_ref ir_ge(ir_graph *g, ir_ref a, ir_ref b);
ir_ref ir_min(ir_graph *g, ir_ref a, ir_ref b);
ir_ref ir_abs(ir_graph *g, ir_ref a);
ir_ref ir_sigmoid(ir_graph *g, ir_ref a);
ir_ref ir_tanh(ir_graph *g, ir_ref a);
ir_ref ir_pow(ir_graph *g, ir_ref a, ir_ref b);
ir_ref ir_sum(ir_graph *g, ir_ref a, uint32_t axes, bool keepdims);
ir_ref ir_mean(ir_graph *g, ir_ref a, uint32_t axes, bool keepdims);
ir_ref ir_max_reduce(ir_graph *g, ir_ref a, uint32_t axes, bool keepdims);
ir_ref ir_min_reduce(ir_graph *g, ir_ref a, uint32_t axes, bool keepdims);
ir_ref ir_prod(ir_graph *g, ir_ref a, uint32_t axes, bool keepdims);
/* Drop the axes in `axes` (which must have size 1). */
ir_ref ir_squeeze_axes(ir_graph *g, ir_ref a, uint32_t axes);
/* numpy matmul semantics (1-D operands, batch broadcasting). */
ir_ref ir_matmul(ir_graph *g, ir_ref a, ir_ref b);
ir_ref ir_softmax(ir_graph *g, ir_ref a, int axis);
/* Lowest and highest values of a dtype (for max/min reductions, padding). */
double ir_dtype_lowest(ir_dtype t);
double ir_dtype_highest(ir_dtype t);

/* Compile-time evaluation (eval.c). A node is constant when no graph
 * input reaches it. ir_eval computes its value into a fresh buffer of
 * ir_shape_numel * ir_dtype_size bytes owned by the caller. */
bool ir_is_const(const ir_graph *g, ir_ref r);
int ir_eval(ir_graph *g, ir_ref r, void **out);
/* Read element i of a buffer of dtype t as double / int64. */
double ir_elem_f(ir_dtype t, const void *buf, int64_t i);
int64_t ir_elem_i(ir_dtype t, const void *buf, int64_t i);
void ir_elem_set_f(ir_dtype t, void *buf, int64_t i, double v);
void ir_elem_set_i(ir_dtype t, void *buf, int64_t i, int64_t v);

/* float16 and bfloat16 (half.c). In the graph IR_F16 and IR_BF16 only
 * hold 16-bit patterns at the edges (graph inputs and outputs) and in
 * CASTs: every computation is in float32. ir_half_from_double rounds to
 * nearest even, with subnormals, overflow to inf and NaN (quiet, sign
 * kept); `t` is IR_F16 or IR_BF16. */
uint16_t ir_half_from_double(ir_dtype t, double v);
double ir_half_to_double(ir_dtype t, uint16_t h);

/* Marks the reduction under `r` (through views) as a strict one-hot: an
 * index out of range is an error in the rewritten read (ONNX Gather). */
void ir_mark_index_strict(ir_graph *g, ir_ref r);
/* Marks reduction `r` as the one-row MatMulNBits sum over codes of `bits`
 * bits (ir_node.nbits_row); no effect on anything but a reduction. */
void ir_mark_nbits_row(ir_graph *g, ir_ref r, int bits);
/* The names of the weights that sum reads (importer/op_nbits.c makes them,
 * codegen/nbits_dot.c finds them among its kernel's buffers) */
#define IR_NBITS_CODES "nbits_codes"
#define IR_NBITS_SCALES "nbits_scales"
#define IR_NBITS_MINUS_ZERO_POINTS "nbits_minus_zero_points"
/* `e` (int64 indices) unchanged where 0 <= e < bound; elsewhere the index
 * error (at run time, or at compile time for constants). Made of a strict
 * gather view of a one-element zero (rendered as the check) added to e,
 * so it holds whether or not the gather rewrite runs and for every
 * component of a tuple of indices (GatherND, ScatterND). */
ir_ref ir_check_index(ir_graph *g, ir_ref e, int64_t bound);

/* The gather rewrite (rewrite.c): a reduction over one axis v of
 * WHERE(EQ(iota_v, e), X, 0) (or X * CAST(EQ(..)), operands in either
 * order, through broadcast views), with e independent of v and X a view
 * of a buffer, becomes the indexed read X[.., e, ..]: Theta(output) work
 * instead of Theta(output * V). Returns the number of rewrites. */
int ir_rewrite_gather(ir_graph *g);
/* Weights are constants: a strided (permuted, sliced) view of a weight is
 * evaluated at compile time into a new weight laid out as the view reads it
 * (broadcast axes kept as views), so kernels read weights with unit stride
 * along their innermost axis (e.g. MatMul's B as B^T). A matmul operand
 * read along its n and k axes only, of `in_place_bytes` or more, is left
 * as it is: the scheduler packs it into panels straight from the original
 * (mapped) bytes (UINT64_MAX: never). Returns the number of weights
 * repacked. */
int ir_rewrite_weight_layout(ir_graph *g, uint64_t in_place_bytes);

/* A sum over k of x * y, with y a view of a computed value that has unit
 * stride along k but not along the output's innermost axis (attention's
 * keys in Q.K^T), reads y from a transposed copy instead, so the matmul can
 * load consecutive output columns (layout.c). Returns the number of
 * operands given a copy. */
int ir_rewrite_matmul_operands(ir_graph *g);

/* Element-wise nodes over an unmasked view that selects part (at least
 * half) of a single-use computed value P, with constants as their only
 * other operands, are computed over P instead and read through the same
 * view (sink_region.c): a convolution's activation over its wide rows,
 * HardSwish's whole DAG at once. Runs before ir_rewrite_sink_views, which
 * moves single ops with a broadcast operand (a bias) and would leave such
 * a DAG half moved. Returns the number of views made. */
int ir_rewrite_sink_regions(ir_graph *g);

/* An element-wise op on a strided view that drops elements of a reduction
 * (a windowed convolution's wide result) whose other operands are
 * constants or broadcasts along axes the view keeps (a bias) runs on the
 * reduction's axes instead, so it joins the reduction's kernel; its
 * readers read it through the composed view (sink.c). Returns the number
 * of ops moved. */
int ir_rewrite_sink_views(ir_graph *g);

/* An ADD, MUL or MAX after a Concat of reductions (a convolution's row
 * bands: masked views tiling the output), its other operands constants or
 * broadcasts each band reads at its own elements, runs on every band
 * instead, as its kernel's epilogue; the Concat then only moves data
 * (sink_concat.c). Runs after ir_rewrite_sink_views. Returns the number
 * of ops moved. */
int ir_rewrite_sink_concats(ir_graph *g);

/* A copy MOVE(v) of a value x padded with zeros (a convolution's padded
 * input) computes x itself: the pad moves below x's element-wise ops that
 * give 0 on zeros (a residual block's Relu(conv + x)) onto the buffers
 * they read, and x's other readers (the next residual Add) read the
 * interior of the copy, when v keeps x's axis order (pad_share.c).
 * Returns the number of copies rewritten. */
int ir_rewrite_pad_share(ir_graph *g);

/* Renumbers the nodes in a topological order and drops those no output
 * needs (graph inputs stay). Node references held elsewhere are invalid
 * afterwards. Rewrites that add nodes call it to keep the invariant that a
 * node's sources have smaller references. */
void ir_compact(ir_graph *g);

/* Text dump of the nodes reachable from the outputs (dump.c). */
void ir_dump(const ir_graph *g, void *file);
/* Checks types, shapes and references; 0 or -1 with the graph error set. */
int ir_verify(ir_graph *g);

#endif
