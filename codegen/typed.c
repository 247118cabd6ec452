/* typed.c — the typed part of the header: what a host needs to know about
 * each input and output without reading a comment.
 *
 * Per tensor, macros PREFIX_IN<i>_NAME (the model's name as an escaped
 * string literal), _DTYPE (the ONNX TensorProto data type), _CTYPE, _RANK,
 * and for static shapes _SHAPE, _NUMEL, _BYTES. Functions give the same at
 * given dimensions (symbolic models; static ones ignore `dims`), which is
 * what a wrapper loading the shared object reads. A static model whose
 * tensors all have elements also gets PREFIX_run_typed, taking C arrays of
 * the exact shapes (parameter names are generated: in0, out0...). */
#include "codegen_impl.h"

#include <stdlib.h>
#include <string.h>

/* The ONNX TensorProto.DataType number of `t`. */
static int onnx_dtype(ir_dtype t) {
  switch (t) {
  case IR_F32: return 1;
  case IR_U8: return 2;
  case IR_I8: return 3;
  case IR_U16: return 4;
  case IR_I16: return 5;
  case IR_I32: return 6;
  case IR_I64: return 7;
  case IR_BOOL: return 9;
  case IR_F16: return 10;
  case IR_F64: return 11;
  case IR_U32: return 12;
  case IR_U64: return 13;
  default: return 0;
  }
}

static const ir_node *io_node(const sched_program *p, bool out, int i) {
  return ir_node_get(p->g, out ? ir_output(p->g, i) : ir_input_ref(p->g, i));
}

static const char *io_name(const sched_program *p, bool out, int i) {
  return out ? ir_output_name(p->g, i) : ir_node_get(p->g, ir_input_ref(p->g, i))->name;
}

static bool all_static(const sched_program *p, bool need_elements) {
  for (int o = 0; o < 2; o++)
    for (int i = 0; i < (o ? ir_output_count(p->g) : ir_input_count(p->g)); i++) {
      const ir_shape *s = &io_node(p, o, i)->shape;
      for (int k = 0; k < s->rank; k++)
        if (ir_dim_is_sym(s->d[k]) || (need_elements && s->d[k] < 1)) return false;
    }
  return true;
}

static void shape_list(FILE *f, const ir_shape *s, const char *open, const char *sep, const char *close) {
  fputs(open, f);
  for (int k = 0; k < s->rank; k++) fprintf(f, "%s%lld", k ? sep : "", (long long)s->d[k]);
  fputs(close, f);
}

static void header_macros(FILE *h, const sched_program *p, const char *N, bool out, int i) {
  const ir_node *x = io_node(p, out, i);
  const char *T = out ? "OUT" : "IN";
  fprintf(h, "#define %s_%s%d_NAME ", N, T, i);
  cg_ftext(h, io_name(p, out, i), true);
  fprintf(h, "\n#define %s_%s%d_DTYPE %d /* %s */\n", N, T, i, onnx_dtype(x->dtype), ir_dtype_name(x->dtype));
  fprintf(h, "#define %s_%s%d_CTYPE %s\n#define %s_%s%d_RANK %d\n", N, T, i, cg_ctype(x->dtype), N, T, i,
          x->shape.rank);
  if (!ir_shape_is_static(&x->shape)) return;
  int64_t numel = ir_shape_numel(&x->shape);
  if (x->shape.rank) {
    fprintf(h, "#define %s_%s%d_SHAPE ", N, T, i);
    shape_list(h, &x->shape, "{", ", ", "}\n");
  }
  fprintf(h, "#define %s_%s%d_NUMEL %lld\n#define %s_%s%d_BYTES %lld\n", N, T, i, (long long)numel, N, T, i,
          (long long)(numel * (int64_t)ir_dtype_size(x->dtype)));
}

/* The typed entry's parameter list: "const int64_t in0[1][16], float
 * out0[1][16][256], const void *weights, void *arena". */
static void typed_params(FILE *f, const sched_program *p) {
  for (int o = 0; o < 2; o++)
    for (int i = 0; i < (o ? ir_output_count(p->g) : ir_input_count(p->g)); i++) {
      const ir_node *x = io_node(p, o, i);
      fprintf(f, "%s%s %s%s%d", o ? "" : "const ", cg_ctype(x->dtype), x->shape.rank ? "" : "*", o ? "out" : "in", i);
      if (x->shape.rank) shape_list(f, &x->shape, "[", "][", "]");
      fprintf(f, ", ");
    }
  fprintf(f, "const void *weights, void *arena");
}

void cg_typed_header(FILE *h, const sched_program *p, const char *N, bool embed) {
  fprintf(h,
          "/* Inputs and outputs. DTYPE is the ONNX TensorProto data type, CTYPE its C\n"
          " * type; SHAPE, NUMEL and BYTES are given for static shapes. */\n");
  for (int i = 0; i < ir_input_count(p->g); i++) header_macros(h, p, N, false, i);
  for (int i = 0; i < ir_output_count(p->g); i++) header_macros(h, p, N, true, i);
  fprintf(h, "\n/* The same at given dimensions (%s): the name,\n", ir_sym_count(p->g) ? "`dims`: NUM_DIMS values" : "`dims`: none, NULL");
  fprintf(h,
          " * the dtype, the rank, the shape written to `shape` (returns the rank), the element\n"
          " * count and the bytes; -1 (NULL) for a tensor that does not exist or\n"
          " * dimensions the model refuses. %s_input_axis_dim: the symbol (index in\n"
          " * `dims`) that axis `a` of input `i` is, or -1. %s_output_length: the\n"
          " * output holding the actual length of output `i` along *axis (an output\n"
          " * whose shape depends on the values), or -1. */\n",
          N, N);
  for (int o = 0; o < 2; o++) {
    const char *fn = o ? "output" : "input";
    fprintf(h, "const char *%s_%s_name(int i);\nint %s_%s_dtype(int i);\nint %s_%s_rank(int i);\n", N, fn, N, fn,
            N, fn);
    fprintf(h, "int %s_%s_shape(int i, const int64_t *dims, int64_t *shape);\n", N, fn);
    fprintf(h, "int64_t %s_%s_numel(int i, const int64_t *dims);\n", N, fn);
    fprintf(h, "int64_t %s_%s_bytes(int i, const int64_t *dims);\n", N, fn);
  }
  fprintf(h, "int %s_input_axis_dim(int i, int a);\nint %s_output_length(int i, int *axis);\n", N, N);
  if (!p->symbolic && all_static(p, true)) {
    fprintf(h, "\n/* %s_run with C arrays of the exact shapes (in<i>, out<i>: the tensors\n * above). */\nint %s_run_typed(",
            N, N);
    typed_params(h, p);
    fprintf(h, ");\n");
  }
  if (embed)
    fprintf(h,
            "\n/* The weights, linked in (%s_weights.c, 64-byte aligned, %s_WEIGHTS_SIZE\n"
            " * bytes): pass them as `weights`. */\nextern const uint8_t %s_weights[];\n",
            N, N, N);
  fprintf(h, "\n");
}

int cg_emit_embedded(const sched_program *p, const cg_options *o, FILE *f, char *err, size_t errlen) {
  for (const char *s = o->embed; *s; s++) /* the path goes into a C string: no escapes, no ??/ */
    if (*s == '"' || *s == '\\' || *s == '?' || (unsigned char)*s < 32 || (unsigned char)*s > 126)
      return snprintf(err, errlen, "--embed-weights: the path %s has a character the assembler cannot take", o->embed), -1;
  const char *N = o->name;
  /* %%object and no @: ARM's assembler reads @ as a comment */
  fprintf(f,
          "/* Generated by onnx2c-caten: the weights as the array %s_weights, for\n"
          " * targets without files (flash). The assembler reads them from the\n"
          " * weights file at build time (ELF targets: GCC, Clang). */\n"
          "#include \"%s.h\"\n\n"
          "__asm__(\".section .rodata.%s_weights,\\\"a\\\"\\n\"\n"
          "        \".balign 64\\n\"\n"
          "        \".global %s_weights\\n\"\n"
          "        \".type %s_weights, %%object\\n\"\n"
          "        \"%s_weights:\\n\"\n"
          "        \".incbin \\\"%s\\\"\\n\"\n"
          "        \".size %s_weights, %lld\\n\"\n"
          "        \".previous\\n\");\n",
          N, N, N, N, N, N, o->embed, N, (long long)p->weights_size);
  return ferror(f) ? (snprintf(err, errlen, "write error"), -1) : 0;
}

/* The shape of every tensor of one kind, a case each, as C over the
 * symbols (locals named as the entry's parameters). */
static void shape_cases(FILE *c, const sched_program *p, bool out) {
  for (int i = 0; i < (out ? ir_output_count(p->g) : ir_input_count(p->g)); i++) {
    const ir_shape *s = &io_node(p, out, i)->shape;
    fprintf(c, "  case %d:\n", i);
    for (int k = 0; k < s->rank; k++) {
      cg_buf d = {0};
      cg_printf(&d, "    shape[%d] = ", k);
      if (ir_dim_is_sym(s->d[k])) cg_dim(&d, s->d[k], false); /* whole, however long */
      else cg_printf(&d, "%lld", (long long)s->d[k]);
      fprintf(c, "%s;\n", d.s);
      free(d.s);
    }
    fprintf(c, "    return %d;\n", s->rank);
  }
}

void cg_typed_source(FILE *c, const sched_program *p, const char *N) {
  int max_rank = 1;
  fprintf(c, "\n/* Inputs and outputs at given dimensions (the header says what). */\n");
  for (int o = 0; o < 2; o++) {
    const char *fn = o ? "output" : "input";
    int n = o ? ir_output_count(p->g) : ir_input_count(p->g);
    for (int i = 0; i < n; i++)
      if (io_node(p, o, i)->shape.rank > max_rank) max_rank = io_node(p, o, i)->shape.rank;
    /* No inputs (a model of constants): no tables to read, and no
     * `i >= 0 && i < 0`, a test clang warns about (-Wtautological-overlap-compare) */
    if (n) {
      fprintf(c, "static const char *const o2c_%s_names[%d] = {", fn, n + 1);
      for (int i = 0; i < n; i++) {
        cg_ftext(c, io_name(p, o, i), true);
        fprintf(c, ", ");
      }
      fprintf(c, "0};\nstatic const int o2c_%s_dtypes[%d] = {", fn, n + 1);
      for (int i = 0; i < n; i++) fprintf(c, "%d, ", onnx_dtype(io_node(p, o, i)->dtype));
      fprintf(c, "0};\nstatic const int o2c_%s_ranks[%d] = {", fn, n + 1);
      for (int i = 0; i < n; i++) fprintf(c, "%d, ", io_node(p, o, i)->shape.rank);
      fprintf(c, "0};\n");
    }
    fprintf(c, "static const int o2c_%s_sizes[%d] = {", fn, n + 1);
    for (int i = 0; i < n; i++) fprintf(c, "%d, ", (int)ir_dtype_size(io_node(p, o, i)->dtype));
    fprintf(c, "0};\n\n");
    /* the accessors of those tables: NAME_input_name(i) reads o2c_input_names */
    static const struct {
      const char *type, *fn, *table, *none;
    } acc[3] = {{"const char *", "name", "names", "0"}, {"int ", "dtype", "dtypes", "-1"}, {"int ", "rank", "ranks", "-1"}};
    for (int w = 0; w < 3; w++) {
      fprintf(c, "%s%s_%s_%s(int i) {\n", acc[w].type, N, fn, acc[w].fn);
      if (n)
        fprintf(c, "  return i >= 0 && i < %d ? o2c_%s_%s[i] : %s;\n}\n\n", n, fn, acc[w].table, acc[w].none);
      else
        fprintf(c, "  (void)i;\n  return %s;\n}\n\n", acc[w].none);
    }
    fprintf(c, "int %s_%s_shape(int i, const int64_t *dims, int64_t *shape) {\n", N, fn);
    for (int k = 0; k < ir_sym_count(p->g); k++)
      fprintf(c, "  int64_t %s = dims[%d];\n", ir_dim_sym_cname(ir_sym(p->g, k)), k);
    if (p->symbolic) {
      fprintf(c, "  if (!o2c_dims_ok(");
      for (int k = 0; k < ir_sym_count(p->g); k++)
        fprintf(c, "%s%s", k ? ", " : "", ir_dim_sym_cname(ir_sym(p->g, k)));
      fprintf(c, ")) return -1;\n");
      cg_dims_derived(c, p);
    }
    fprintf(c, "  (void)dims, (void)shape;\n  switch (i) {\n");
    shape_cases(c, p, o);
    fprintf(c, "  }\n  return -1;\n}\n\n");
    fprintf(c,
            "int64_t %s_%s_numel(int i, const int64_t *dims) {\n  int64_t s[%d], n = 1;\n"
            "  int r = %s_%s_shape(i, dims, s);\n  if (r < 0) return -1;\n"
            "  for (int k = 0; k < r; k++) {\n    if (s[k] && n > INT64_MAX / s[k]) return -1;\n"
            "    n *= s[k];\n  }\n  return n;\n}\n\n",
            N, fn, max_rank, N, fn);
    fprintf(c,
            "int64_t %s_%s_bytes(int i, const int64_t *dims) {\n  int64_t n = %s_%s_numel(i, dims);\n"
            "  if (n < 0 || n > INT64_MAX / 8) return -1;\n  return n * o2c_%s_sizes[i];\n}\n\n",
            N, fn, N, fn, fn);
  }
  fprintf(c, "int %s_input_axis_dim(int i, int a) {\n  switch (i) {\n", N);
  for (int i = 0; i < ir_input_count(p->g); i++) {
    const ir_shape *s = &io_node(p, false, i)->shape;
    fprintf(c, "  case %d:\n    switch (a) {\n", i);
    for (int k = 0; k < s->rank; k++)
      if (ir_dim_sym_id(s->d[k]) >= 0)
        for (int j = 0; j < ir_sym_count(p->g); j++)
          if (ir_sym(p->g, j) == ir_dim_sym_id(s->d[k])) fprintf(c, "    case %d: return %d;\n", k, j);
    fprintf(c, "    }\n    return -1;\n");
  }
  fprintf(c, "  }\n  (void)a;\n  return -1;\n}\n\nint %s_output_length(int i, int *axis) {\n  switch (i) {\n", N);
  for (int i = 0, a; i < ir_output_count(p->g); i++)
    if (ir_output_len(p->g, i, &a) >= 0) fprintf(c, "  case %d:\n    *axis = %d;\n    return %d;\n", i, a, ir_output_len(p->g, i, &a));
  fprintf(c, "  }\n  (void)axis;\n  return -1;\n}\n");
  if (p->symbolic || !all_static(p, true)) return;
  fprintf(c, "\nint %s_run_typed(", N);
  typed_params(c, p);
  fprintf(c, ") {\n  const void *in[%d] = {", ir_input_count(p->g) + 1);
  for (int i = 0; i < ir_input_count(p->g); i++) fprintf(c, "in%d, ", i);
  fprintf(c, "0};\n  void *out[%d] = {", ir_output_count(p->g) + 1);
  for (int i = 0; i < ir_output_count(p->g); i++) fprintf(c, "out%d, ", i);
  fprintf(c, "0};\n  return %s_run(in, out, weights, arena);\n}\n", N);
}
