/* importer.h — ONNX models and tensors in, primitive graphs out.
 *
 * Decoding uses protobuf-c code generated at build time from Debian's
 * onnx.proto; nothing outside importer/ and runtime/ sees protobuf. Every
 * ONNX node is lowered by one function of its op family (op_*.c) onto the
 * caten primitives through the ir builder. Sub-graphs that only depend on
 * constants (shape computations of PyTorch exports) are folded while
 * lowering, so later nodes (Reshape, Expand, ...) see their values. */
#ifndef IMPORTER_H
#define IMPORTER_H

#include "ir.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What would lift a refusal: symbols to pin (--dim) and graph inputs whose
 * values a lowering needs at compile time (--freeze). imp_load fills it when
 * it fails for want of them, each with where a caller that holds the input
 * tensors finds the value: `input` counts the graph inputs that are not
 * initializers (the order of run's -i), `axis` the symbol's axis there. */
#define IMP_MAX_NEEDS 32
typedef struct {
  int nsyms, ninputs;
  struct {
    char name[128];
    int input, axis;
  } sym[IR_MAX_SYMS];
  struct {
    char name[256];
    int input;
  } in[IMP_MAX_NEEDS];
  /* graph inputs of sequence or optional type whose elements' shapes are
   * not given (imp_options.values) */
  int nvalues;
  struct {
    char name[256];
    int input;
  } value[IMP_MAX_NEEDS];
} imp_needs;

/* Graph inputs and outputs of sequence and optional type. Their lengths
 * (and an optional's presence) are fixed at compile time: the generated
 * entry takes and returns each element as a tensor of its own, named
 * NAME[K] (an optional tensor keeps its name; an empty optional has none). */
typedef enum { IMP_IO_TENSOR, IMP_IO_SEQUENCE, IMP_IO_OPTIONAL } imp_io_kind;
typedef struct {
  char *name;
  imp_io_kind kind;
  int elem_type;    /* ONNX element type of the tensors (0: not declared) */
  bool of_seq;      /* OPTIONAL: holds a sequence */
  bool present;     /* OPTIONAL: holds a value (imp_load) */
  bool frozen;      /* input: a constant now (--freeze) */
  int first, count; /* imp_load: its tensors among the entry's inputs (outputs) */
} imp_io_value;
typedef struct {
  int nin, nout;    /* graph inputs that are not initializers; outputs */
  imp_io_value *in, *out;
} imp_io;
/* The declared kinds of the model's graph inputs (not initializers) and
 * outputs (first and count unset): -1 with `err` on a decode error. */
int imp_model_io(const char *path, imp_io *io, char *err, size_t errlen);
void imp_io_free(imp_io *io);

typedef struct {
  const char *const *dims; /* "NAME=VALUE": values of symbolic input dimensions */
  int ndims;
  /* "FILE.pb" or "NAME=FILE.pb": graph inputs fixed to a constant tensor
   * (the tensor's own name says which input when NAME is not given). The
   * model is specialised: the input disappears from the generated code. */
  const char *const *freeze;
  int nfreeze;
  /* Graph inputs that become constants of zeros (static declared shape):
   * stand-ins with which compile looks for further needs; a model built
   * with them is never emitted. */
  const char *const *standins;
  int nstandins;
  imp_needs *needs; /* NULL, or filled (and cleared first) by imp_load */
  /* "NAME=SHAPES": the elements of sequence or optional graph input NAME,
   * e.g. "x=[2,3],[4]" ("x=" an empty sequence, "x=none" an empty
   * optional); element types are the model's. */
  const char *const *values;
  int nvalues;
  imp_io *io; /* NULL, or filled by imp_load (free with imp_io_free) */
  /* floats in one vector register of the target (0: 16, AVX-512): sizes
   * the column panels of MatMulNBits' packed codes */
  int vector_floats;
  /* vector registers of the target (0: 32): with vector_floats, the
   * register blocks a windowed convolution's columns are rounded for */
  int vector_regs;
  /* threads of the generated code's pool (0 or 1: none): on a target of
   * 16-float vectors Winograd's convolutions are taken on one thread only
   * (op_conv.c) */
  int threads;
  bool no_winograd; /* no 3x3 convolution as Winograd's F(2x2, 3x3) */
} imp_options;

/* Loads the model at `path` into a new graph owned by the caller. On error
 * returns -1 with `err` = "PATH: node 'NAME' (OP, opset N): what". */
int imp_load(const char *path, const imp_options *o, ir_graph **out, char *err, size_t errlen);

/* A decoded TensorProto; or, read by the runtime for a graph input or
 * output of sequence or optional type (kind), that value: its tensors in
 * `elem` (an optional: present, and its tensor or its sequence's). */
typedef struct imp_tensor {
  char *name;
  ir_dtype dtype;
  ir_shape shape;
  void *data; /* numel * dtype size bytes, little-endian */
  size_t bytes;
  void *map;  /* external data: `data` lies in this read-only mapping (else NULL, data is malloc'd) */
  size_t map_len;
  imp_io_kind kind; /* IMP_IO_TENSOR (0) for a plain tensor */
  bool present, of_seq; /* an optional: holds a value; a sequence */
  int nelem;
  struct imp_tensor *elem; /* plain tensors */
} imp_tensor;

/* Decodes a serialized TensorProto. `base_dir` resolves external data
 * (NULL: external data is an error). */
int imp_tensor_decode(const uint8_t *buf, size_t len, const char *base_dir, imp_tensor *out,
                      char *err, size_t errlen);
void imp_tensor_free(imp_tensor *t);
/* Frees (unmaps) only the data. */
void imp_tensor_free_data(imp_tensor *t);
/* Decodes a serialized value of `kind`: a TensorProto, a SequenceProto of
 * tensors (IMP_IO_SEQUENCE) or an OptionalProto (a tensor, or with
 * `of_seq` a sequence of tensors). The file formats cannot be told apart
 * by their bytes: the model's declared type says which it is. */
int imp_value_decode(const uint8_t *buf, size_t len, imp_io_kind kind, bool of_seq, imp_tensor *out, char *err,
                     size_t errlen);
/* ONNX TensorProto.DataType <-> ir dtype; -1 when unsupported. */
int imp_dtype_from_onnx(int onnx_type);
int imp_dtype_to_onnx(ir_dtype t);

/* The distinct op types used by the model at `path`, space-separated, in
 * `out` (for labelling tests); -1 with `err` on a decode error. */
int imp_model_op_types(const char *path, char *out, size_t outlen, char *err, size_t errlen);

/* Bounds what the compiler may hold: any one tensor, and all constant data
 * together (default: the machine's RAM, or ONNX2C_MEM_LIMIT). A model that
 * needs more is refused with an error naming the limit (--max-memory). */
void imp_set_mem_limit(size_t bytes);
size_t imp_mem_limit(void);

/* The ONNX op types the importer can lower, NULL-terminated. */
const char *const *imp_supported_ops(void);

#endif
