/* program.c — the files around the kernels: the header, the entry
 * function, the helpers the kernels use, and the weights blob. */
#include "codegen_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cg_printf(cg_buf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) abort();
    if (b->s && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    b->cap = (b->cap + (size_t)k + 1) * 2;
    b->s = realloc(b->s, b->cap);
    if (!b->s) abort();
  }
}

void cg_line(cg_buf *b, int depth, const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *line = malloc((size_t)n + 1);
  if (n < 0 || !line) abort();
  vsnprintf(line, (size_t)n + 1, fmt, aq);
  va_end(aq);
  cg_printf(b, "%*s%s\n", 2 * depth, "", line);
  free(line);
}

/* Replaces every `what` in `b` by `with` (placeholders filled in once a
 * kernel is printed and what it needs is known). */
static void replace_all(cg_buf *b, const char *what, const char *with) {
  /* the search goes on after the replacement, which may contain `what` */
  for (size_t from = 0; b->s && strstr(b->s + from, what);) {
    char *at = strstr(b->s + from, what);
    cg_buf fixed = {0};
    cg_printf(&fixed, "%.*s%s%s", (int)(at - b->s), b->s, with, at + strlen(what));
    from = (size_t)(at - b->s) + strlen(with);
    free(b->s);
    *b = fixed;
  }
}

int cg_kernel_arg(const cg_kernel *c, int buf) {
  for (int i = 0; i < c->k->nargs; i++)
    if (c->k->args[i] == buf) return i;
  abort(); /* every buffer a kernel touches is in its argument list */
}

void cg_need_helper(cg_out *o, cg_helper h, ir_dtype t) {
  o->helpers[h] |= 1u << t;
}

void cg_need_cast(cg_out *o, ir_dtype from, ir_dtype to) {
  o->casts[from][to] = 1;
}

/* 2^x for float in plain C that compilers vectorise (see the comment it
 * is printed with); checked against exp2 in double over every float in
 * [-160, 140]: at most 1.8 ulp, exact inf, 0, NaN (tests/unit/test_exp2.c). */
const char cg_exp2f_src[] =
    "/* 2^x for float, in plain C that compilers vectorise (libm's exp2f is a\n"
    " * call per element): x = i + f with i = round(x), f in about [-1/2, 1/2],\n"
    " * 2^f by a degree-6 polynomial (max error 1.8 ulp), 2^i in two factors so\n"
    " * that results below 2^-126 underflow gradually and above 2^128 give inf.\n"
    " * x is clamped to [-151, 129] on its bits mapped to integers in the same\n"
    " * order: float compares may trap on NaN, and then compilers keep branches\n"
    " * and do not vectorise. NaN in, NaN out. */\n"
    "static inline float o2c_exp2f(float x) {\n"
    "  union { float f; uint32_t u; } in = {x}, c;\n"
    "  uint32_t flip = (0u - (in.u >> 31)) >> 1; /* negative floats: reverse the magnitude order "
    "*/\n"
    "  int32_t s = (int32_t)(in.u ^ flip);\n"
    "  s = s < -1125580801 ? -1125580801 : s; /* -151.0f */\n"
    "  s = s > 1124139008 ? 1124139008 : s;   /* 129.0f */\n"
    "  c.u = (uint32_t)s ^ ((0u - ((uint32_t)s >> 31)) >> 1);\n"
    "  int32_t i = (int32_t)(c.f + 256.5f) - 256; /* round: truncation of a positive value */\n"
    "  float f = c.f - (float)i;\n"
    "  float p = 1.537070493e-04f;\n"
    "  p = p * f + 1.339984825e-03f;\n"
    "  p = p * f + 9.618373588e-03f;\n"
    "  p = p * f + 5.550329015e-02f;\n"
    "  p = p * f + 2.402264774e-01f;\n"
    "  p = p * f + 6.931471825e-01f;\n"
    "  p = p * f + 1.0f;\n"
    "  /* i <= -151 (x < -150.5) rounds to 0: computed from 2^0 and then cleared, as a\n"
    "   * product that underflows costs a microcode assist (masked attention scores\n"
    "   * are all such: -inf) */\n"
    "  uint32_t zero = 0u - (uint32_t)(i < -150);\n"
    "  i = (int32_t)((uint32_t)i & ~zero);\n"
    "  int32_t h = i / 2;\n"
    "  union { uint32_t u; float f; } s1 = {(uint32_t)(h + 127) << 23}, s2 = {(uint32_t)(i - h + "
    "127) << 23};\n"
    "  union { float f; uint32_t u; } r = {p * s1.f * s2.f};\n"
    "  r.u &= ~zero;\n"
    "  uint32_t nan = 0u - (uint32_t)((in.u & 0x7fffffffu) > 0x7f800000u);\n"
    "  r.u = (r.u & ~nan) | (in.u & nan);\n"
    "  return r.f;\n"
    "}\n";

/* o2c_sel_T(c, a, b) = c ? a : b on the bits: both operands are computed
 * anyway, and nothing is left for a compiler to move into a branch. */
static void emit_select(FILE *f, ir_dtype t) {
  const char *T = cg_ctype(t), *n = ir_dtype_name(t),
             *U = ir_dtype_size(t) == 8 ? "uint64_t" : "uint32_t";
  fprintf(f, "static inline %s o2c_sel_%s(uint32_t c, %s a, %s b) {\n", T, n, T, T);
  if (ir_dtype_is_float(t)) {
    fprintf(f, "  union { %s v; %s u; } x = {a}, y = {b};\n", T, U);
    fprintf(f,
            "  %s m = (%s)0 - (%s)(c != 0);\n  x.u = (x.u & m) | (y.u & ~m);\n  return x.v;\n}\n",
            U, U, U);
  } else {
    fprintf(f, "  %s m = (%s)0 - (%s)(c != 0);\n", U, U, U);
    fprintf(f, "  return (%s)(((%s)a & m) | ((%s)b & ~m));\n}\n", T, U, U);
  }
}

static void emit_helpers(FILE *f, const cg_out *o) {
  if (o->exp2) fputs(cg_exp2f_src, f);
  cg_half_print(f, o->half);
  for (int t = 0; t < IR_DTYPE_COUNT; t++)
    if (o->selects & (1u << t)) emit_select(f, (ir_dtype)t);
  /* The same max (NaN from either side, b on ties) written as a NaN test
   * around `a > b ? a : b`, for the kernels that are not register-blocked.
   * gcc 12 made max_'s `(a > b || a != a)` a branch on the data wherever a
   * loop's remainder is scalar (a 56-wide row: 48 vector lanes and 8
   * scalar), mispredicted on Relu'd maps: ResNet-18's MaxPool columns pass
   * 0.46-0.50 M TSC cycles against 0.075 (Zen 5). The blocked kernels keep
   * max_ in their epilogues: with this form gcc allocated the AVX2 3x3
   * kernels' registers differently, a spill in the k loop (5.6 -> 7.5 M
   * cycles for some layers, others the reverse). */
  for (int t = 0; t < IR_DTYPE_COUNT; t++)
    if (o->max_sel & (1u << t)) {
      const char *T = cg_ctype((ir_dtype)t);
      fprintf(f, "static inline %s maxs_%s(%s a, %s b) { return a != a ? a : (a > b ? a : b); }\n", T,
              ir_dtype_name((ir_dtype)t), T, T);
    }
  for (int t = 0; t < IR_DTYPE_COUNT; t++) {
    const char *T = cg_ctype((ir_dtype)t), *n = ir_dtype_name((ir_dtype)t);
    bool is_signed = ir_dtype_is_signed((ir_dtype)t);
    if (o->helpers[CG_HELPER_MAX] & (1u << t))
      fprintf(f, "static inline %s max_%s(%s a, %s b) { return %s ? a : b; }\n", T, n, T, T,
              ir_dtype_is_float((ir_dtype)t) ? "(a > b || a != a)" : "a > b");
    if (o->helpers[CG_HELPER_IDIV] & (1u << t)) {
      fprintf(f, "static inline %s idiv_%s(%s a, %s b) { return b == 0 ? 0 : ", T, n, T, T);
      if (is_signed) fprintf(f, "b == -1 ? (%s)(0 - (uint64_t)a) : ", T);
      fprintf(f, "(%s)(a / b); }\n", T);
    }
    if (o->helpers[CG_HELPER_IMOD] & (1u << t)) {
      fprintf(f, "static inline %s imod_%s(%s a, %s b) { return b == 0 ? 0 : ", T, n, T, T);
      if (is_signed) fputs("b == -1 ? 0 : ", f);
      fprintf(f, "(%s)(a %% b); }\n", T);
    }
  }
  for (int a = 0; a < IR_DTYPE_COUNT; a++)
    for (int b = 0; b < IR_DTYPE_COUNT; b++) {
      if (!o->casts[a][b]) continue;
      const char *F = cg_ctype((ir_dtype)a), *T = cg_ctype((ir_dtype)b);
      double lo = ir_dtype_lowest((ir_dtype)b), hi = ir_dtype_highest((ir_dtype)b);
      /* float -> integer outside the range is undefined in C: saturate.
       * Into 8 and 16 bits the clamp is two selects on the float (its
       * bounds are exact) and the conversion unconditional, through int32:
       * gcc vectorises that, not a conversion inside a branch (quantizing
       * 1M floats to uint8: scalar code with branches before) */
      if (ir_dtype_size((ir_dtype)b) <= 2 && (ir_dtype)b != IR_BOOL) {
        fprintf(f,
                "static inline %s cast_%s_%s(%s x) { %s c = x > %.17g ? x : %.17g; c = c < %.17g ? c : %.17g; "
                "return x != x ? (%s)0 : (%s)(int32_t)c; }\n",
                T, ir_dtype_name((ir_dtype)a), ir_dtype_name((ir_dtype)b), F, F, lo, lo, hi, hi, T, T);
        continue;
      }
      fprintf(f,
              "static inline %s cast_%s_%s(%s x) { return x != x ? (%s)0 : x <= %.17g ? (%s)%.17g "
              ": x >= %.17g ? (%s)%.17g : (%s)x; }\n",
              T, ir_dtype_name((ir_dtype)a), ir_dtype_name((ir_dtype)b), F, T, lo, T, lo, hi, T, hi,
              T);
    }
}

static const char *buf_ptr(const sched_program *p, int b, char *s, size_t n) {
  const sched_buf *x = &p->bufs[b];
  const char *T = cg_ctype(x->dtype);
  switch (x->kind) {
  case SCHED_BUF_INPUT: snprintf(s, n, "(const %s *)inputs[%d]", T, x->io_index); break;
  case SCHED_BUF_OUTPUT: snprintf(s, n, "(%s *)outputs[%d]", T, x->io_index); break;
  case SCHED_BUF_WEIGHT: snprintf(s, n, "(const %s *)(w + %lld)", T, (long long)x->offset); break;
  case SCHED_BUF_TEMP:
    if (p->symbolic)
      snprintf(s, n, "(%s *)(a + off[%d])", T, x->plan); /* laid out at run time */
    else
      snprintf(s, n, "(%s *)(a + %lld)", T, (long long)x->offset);
    break;
  }
  return s;
}

void cg_io_comment(FILE *h, const sched_program *p, const char *what, ir_ref r, int i,
                   const char *name) {
  const ir_node *n = ir_node_get(p->g, r);
  char sh[256]; /* a comment: a long shape may be cut, it is escaped after */
  ir_shape_str(&n->shape, sh, sizeof sh);
  cg_buf b = {0};
  cg_printf(&b, " *   %s %d '", what, i);
  cg_text(&b, name, false);
  cg_printf(&b, "': %s ", ir_dtype_name(n->dtype));
  cg_text(&b, sh, false);
  fprintf(h, "%s\n", b.s);
  free(b.s);
  /* value-dependent shapes: the bound, and where the actual length is */
  int axis, len = strcmp(what, "output") ? -1 : ir_output_len(p->g, i, &axis);
  int of = strcmp(what, "output") ? -1 : ir_output_len_of(p->g, i);
  if (len >= 0)
    fprintf(h,
            " *     (its length along axis %d depends on the values: the shape above is its\n"
            " *     bound, output %d holds the actual length; past it the axis is padding)\n",
            axis, len);
  if (of >= 0) {
    ir_output_len(p->g, of, &axis);
    fprintf(h, " *     (the actual length of output %d along axis %d)\n", of, axis);
  }
}

void cg_io_notes(FILE *h, const sched_program *p) {
  for (int i = 0; i < ir_note_count(p->g); i++) {
    cg_buf b = {0};
    cg_printf(&b, " *   ");
    cg_text(&b, ir_note(p->g, i), false);
    fprintf(h, "%s\n", b.s);
    free(b.s);
  }
}

static void emit_header(FILE *h, const sched_program *p, const char *N, bool embed) {
  fprintf(h,
          "/* Generated by onnx2c-caten. */\n#ifndef %s_H\n#define %s_H\n\n#include <stdint.h>\n\n",
          N, N);
  fprintf(h, "#define %s_NUM_INPUTS %d\n#define %s_NUM_OUTPUTS %d\n", N, ir_input_count(p->g), N,
          ir_output_count(p->g));
  fprintf(h, "#define %s_ARENA_SIZE %lld\n#define %s_WEIGHTS_SIZE %lld\n\n", N,
          (long long)p->arena_size, N, (long long)p->weights_size);
  fprintf(h, "enum { %s_OK = 0, %s_ERR_INDEX = 1 };\n\n", N, N);
  fprintf(h, "/* Runs the model.\n");
  for (int i = 0; i < ir_input_count(p->g); i++) {
    ir_ref r = ir_input_ref(p->g, i);
    cg_io_comment(h, p, "input", r, i, ir_node_get(p->g, r)->name);
  }
  for (int i = 0; i < ir_output_count(p->g); i++)
    cg_io_comment(h, p, "output", ir_output(p->g, i), i, ir_output_name(p->g, i));
  cg_io_notes(h, p);
  fprintf(h,
          " * `weights`: the contents of the .weights file, 64-byte aligned;\n"
          " * `arena`: %s_ARENA_SIZE bytes of scratch memory, 64-byte aligned.\n"
          " * Returns %s_OK, or an error status. */\n",
          N, N);
  fprintf(h,
          "int %s_run(const void *const *inputs, void *const *outputs, const void *weights, void "
          "*arena);\n\n",
          N);
  cg_typed_header(h, p, N, embed);
  fprintf(h, "#endif\n");
}

/* The weights file, streamed: each weight chunk by chunk (a panelled one
 * panel at a time), its mapped source pages given back after it. */
static int write_weights(const sched_program *p, FILE *f) {
  static const char zeros[64];
  size_t scap = 0;
  void *scratch = NULL;
  int64_t at = 0;
  int rc = 0;
  for (int i = 0; i < p->nbufs && !rc; i++) {
    const sched_buf *b = &p->bufs[i];
    if (b->kind != SCHED_BUF_WEIGHT || b->shared || b->unused) continue;
    if (b->offset > at) fwrite(zeros, 1, (size_t)(b->offset - at), f);
    size_t sb = sched_buf_scratch_bytes(p, i);
    if (sb > scap) {
      free(scratch);
      scratch = malloc(scap = sb);
      if (!scratch) return -1;
    }
    int64_t nc = sched_buf_nchunks(p, i);
    for (int64_t k = 0; k < nc && !rc; k++) {
      size_t n;
      const void *d = sched_buf_chunk(p, i, k, scratch, &n);
      rc = n && fwrite(d, 1, n, f) != n;
    }
    sched_buf_done(p, i);
    at = b->offset + b->numel * (int64_t)ir_dtype_size(b->dtype);
  }
  free(scratch);
  if (!rc && p->weights_size > at) fwrite(zeros, 1, (size_t)(p->weights_size - at), f);
  return rc || ferror(f) ? -1 : 0;
}

/* Does C text `s` name buffer parameter b<a> (not b<a>0, nor ob<a>)? */
static bool mentions_buf(const char *s, int a) {
  char name[16];
  int n = snprintf(name, sizeof name, "b%d", a);
  for (const char *q = s; q && (q = strstr(q, name)); q += n)
    if ((q == s || !(isalnum((unsigned char)q[-1]) || q[-1] == '_')) &&
        !(isalnum((unsigned char)q[n]) || q[n] == '_'))
      return true;
  return false;
}

int cg_emit(const sched_program *p, const cg_options *o, FILE *c, FILE *h, FILE *weights, char *err,
            size_t errlen) {
  const char *N = o->name;
  cg_out out;
  memset(&out, 0, sizeof out);
  cg_buf kernels = {0}, entry = {0};
  /* kernel definitions printed so far, and which function each kernel calls:
   * identical definitions (every layer of a transformer) are emitted once */
  char **defs = calloc((size_t)p->nkernels + 1, sizeof *defs);
  int *fn = calloc((size_t)p->nkernels + 1, sizeof *fn), nunique = 0;
  bool *fails = calloc((size_t)p->nkernels + 1, sizeof *fails);
  if (!defs || !fn || !fails) abort();
  for (int i = 0; i < p->nkernels; i++) {
    const sched_kernel *k = &p->kernels[i];
    const ir_node *root = ir_node_get(p->g, k->root);
    cg_buf body = {0}, def = {0}, rows = {0};
    cg_kernel ck;
    memset(&ck, 0, sizeof ck);
    ck.p = p, ck.k = k, ck.body = &body, ck.out = &out, ck.threads = o->threads, ck.threads_all = o->threads_all, ck.rows = &rows;
    if (cg_kernel_body(&ck)) {
      snprintf(err, errlen, "internal: cannot print kernel %d", i);
      free(kernels.s), free(entry.s), free(body.s);
      for (int j = 0; j < nunique; j++) free(defs[j]);
      free(defs), free(fn), free(fails);
      return -1;
    }
    out.nbits_dot |= cg_nbits_dot(&ck, &body, &rows);
    /* a kernel with an indexed read returns non-zero on an index out of range */
    cg_buf params = {0}, args = {0};
    for (int a = 0; a < k->nargs; a++) {
      const sched_buf *b = &p->bufs[k->args[a]];
      cg_printf(&params, "%s%s%s *restrict b%d", a ? ", " : "", a ? "const " : "",
                cg_ctype(b->dtype), a);
      cg_printf(&args, "%sb%d", a ? ", " : "", a);
    }
    /* the symbols the kernel's sizes are made of */
    uint32_t syms = cg_dims_used(p, &body) | ck.rows_syms;
    cg_dims_params(&params, syms);
    cg_dims_args(&args, syms);
    if (ck.nrows) {
      /* the threaded loops' functions (emit.c) and the pool's view of the
       * kernel's parameters: a struct, with the loop's first value and step */
      cg_buf fields = {0}, targs = {0}, voids = {0};
      cg_printf(&fields, "%s", params.s);
      replace_all(&fields, ", ", ";\n  ");
      cg_printf(&targs, "a->%s", args.s);
      replace_all(&targs, ", ", ", a->");
      cg_printf(&voids, "(void)%s;", args.s); /* a loop need not use every parameter */
      replace_all(&voids, ", ", ", (void)");
      replace_all(&rows, "O2C_ROWS_PARAMS", params.s);
      replace_all(&rows, "O2C_TASK_ARGS", targs.s);
      replace_all(&rows, "O2C_ROWS_VOID", voids.s);
      cg_printf(&def, "typedef struct {\n  %s;\n  int64_t o2c_first, o2c_step;\n} O2C_KERNEL_FN_args;\n\n%s",
                fields.s, rows.s ? rows.s : "");
      free(fields.s), free(targs.s), free(voids.s);
      replace_all(&body, "O2C_ROWS_ARGS", args.s);
    }
    cg_buf attrs = {0};
    cg_fn_attrs(&attrs, &ck);
    cg_printf(&def, "static %s%s O2C_KERNEL_FN(%s", attrs.s ? attrs.s : "", ck.has_index ? "int" : "void",
              params.s);
    free(attrs.s);
    free(params.s), free(args.s), free(rows.s);
    /* an empty iteration domain prints no loop, a reduction over an empty
     * axis no read of its input: those buffers stay unread, which
     * -Wextra -Werror refuses (unused parameter) */
    cg_printf(&def, ") {\n%s", ck.has_index ? "  int err = 0;\n" : "");
    for (int a = 0; a < k->nargs; a++)
      if (!mentions_buf(body.s, a)) cg_printf(&def, "  (void)b%d;\n", a);
    cg_printf(&def, "%s%s}\n\n", body.s ? body.s : "", ck.has_index ? "  return err;\n" : "");
    free(body.s);
    int f = -1;
    for (int j = 0; j < nunique && f < 0; j++)
      if (fails[j] == ck.has_index && !strcmp(defs[j], def.s)) f = j;
    if (f < 0) {
      f = nunique++;
      defs[f] = def.s;
      fails[f] = ck.has_index;
      cg_printf(&kernels, "/* kernel %d: %s%s%s", f, ir_op_name(root->op),
                root->reduce ? ".reduce" : "", root->label ? " from " : "");
      if (root->label) cg_text(&kernels, root->label, false);
      cg_printf(&kernels, " */\n");
      cg_buf text = {0}, name = {0};
      cg_printf(&name, "k%d", f);
      cg_printf(&text, "%s", def.s);
      replace_all(&text, "O2C_KERNEL_FN", name.s); /* also k<f>_args, k<f>_rows<r>, k<f>_task<r> */
      cg_printf(&kernels, "%s", text.s);
      free(text.s), free(name.s);
    } else {
      free(def.s);
    }
    fn[i] = f;
    cg_printf(&entry, ck.has_index ? "  if (k%d(" : "  k%d(", f);
    for (int a = 0; a < k->nargs; a++) {
      char s[128];
      cg_printf(&entry, "%s%s", a ? ", " : "", buf_ptr(p, k->args[a], s, sizeof s));
    }
    cg_dims_args(&entry, syms);
    cg_printf(&entry, ck.has_index ? ")) return %s_ERR_INDEX;" : ");", N);
    if (root->label) cg_printf(&entry, " /* "), cg_text(&entry, root->label, false), cg_printf(&entry, " */");
    cg_printf(&entry, "\n");
  }
  for (int j = 0; j < nunique; j++) free(defs[j]);
  free(defs), free(fn), free(fails);
  fprintf(
      c,
      "/* Generated by onnx2c-caten: %d kernels (%d distinct), arena %lld bytes%s, weights %lld "
      "bytes. */\n",
      p->nkernels, nunique, (long long)p->arena_size, p->symbolic ? " at the reference point" : "",
      (long long)p->weights_size);
  char tgt[256];
  sched_target_describe(&p->opt.target, tgt, sizeof tgt);
  fprintf(c, "/* Target %s.\n * Build with: %s%s%s */\n", tgt, p->opt.target.cflags,
          out.pool ? " -pthread" : "",
          strcmp(p->opt.target.isa, "aarch64") ? "" : " (an aarch64 compiler)");
  fprintf(c, "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n#include \"%s.h\"\n\n",
          N);
  fprintf(c, "#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))\n\n");
  if (out.simd)
    fprintf(
        c,
        "/* Build with -fopenmp-simd -DONNX2C_OMP_SIMD (or -fopenmp) to let the compiler\n"
        " * vectorise sums by reassociating them (without, they stay in order) and\n"
        " * the columns of register blocks. */\n"
        "#if defined(_OPENMP) || defined(ONNX2C_OMP_SIMD)\n"
        "#define O2C_PRAGMA(x) _Pragma(#x)\n"
        "#define O2C_SIMD_SUM(v) O2C_PRAGMA(omp simd reduction(+ : v))\n"
        "#define O2C_SIMD O2C_PRAGMA(omp simd)\n"
        "#define O2C_SIMD_MAX(v, nan) O2C_PRAGMA(omp simd reduction(max : v) reduction(| : nan))\n"
        "#if defined(__clang__) /* it makes a memset of a block's clear loop, then warns */\n"
        "#pragma clang diagnostic ignored \"-Wpass-failed\" /* that it was not vectorised */\n"
        "#endif\n"
        "#else\n#define O2C_SIMD_SUM(v)\n#define O2C_SIMD\n#define O2C_SIMD_MAX(v, "
        "nan)\n#endif\n\n");
  if (out.nounroll)
    fprintf(c,
            "/* On the reduction loop of a register block: unrolled, a short loop gets\n"
            " * vectorised along the sum (with shuffles) instead of along the columns. */\n"
            "#if defined(__clang__)\n#define O2C_NOUNROLL _Pragma(\"clang loop unroll(disable)\")\n"
            "#elif defined(__GNUC__)\n#define O2C_NOUNROLL _Pragma(\"GCC unroll 1\")\n"
            "#else\n#define O2C_NOUNROLL\n#endif\n\n");
  if (out.block)
    fprintf(c, "/* On a register-blocked kernel: gcc makes memset and memcpy calls of the\n"
               " * block's clear and store loops (loop distribution), which keeps the block\n"
               " * in memory; with 16 vector registers one accumulator then stayed there\n"
               " * through the k loop, a store and a load on its FMA chain every step\n"
               " * (AVX2: attention's matmuls at half speed). */\n"
               "#if defined(__GNUC__) && !defined(__clang__)\n"
               "#define O2C_BLOCK __attribute__((optimize(\"no-tree-loop-distribute-patterns\")))\n"
               "#else\n#define O2C_BLOCK\n#endif\n"
               "/* A block's edge rows are cleared and summed under the same guard\n"
               " * (if (c1 == 0)); gcc -O3 does not pair the two and says they \"may be used\n"
               " * uninitialized\", an error under -Werror. */\n"
               "#if defined(__GNUC__) && !defined(__clang__)\n"
               "#pragma GCC diagnostic ignored \"-Wmaybe-uninitialized\"\n"
               "#endif\n\n");
  if (out.no_slp)
    fprintf(c, "/* On a kernel that rounds float64 values to float32: gcc 12.2 at -O2 and\n"
               " * -O3 (any x86 ISA) vectorises a pair of (double)(float)x by SLP without\n"
               " * the two conversions, and the rounding is lost (2 of a loop of 3 values\n"
               " * at -O2, the last 2 of 858 at -O3; the loop vectoriser keeps them). */\n"
               "#if defined(__GNUC__) && !defined(__clang__)\n"
               "#define O2C_NO_SLP __attribute__((optimize(\"no-tree-slp-vectorize\")))\n"
               "#else\n#define O2C_NO_SLP\n#endif\n\n");
  if (out.f64_ymm)
    fprintf(c, "/* On a kernel that computes in float64: gcc 12.2 with AVX-512 turns some\n"
               " * one-register permutations of 8 doubles (elements 2 and 3 drawn from\n"
               " * elsewhere, the others from their own pair) into vpermilpd, which stays\n"
               " * within pairs: the vectoriser makes such permutations for a loop over\n"
               " * short rows (a reflect Pad of rows of 6 into 11 was wrong). With\n"
               " * 256-bit vectors the same loops are right; not inlined, since the\n"
               " * caller's 512 would then apply. */\n"
               "#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)\n"
               "#define O2C_F64_YMM __attribute__((noinline, target(\"prefer-vector-width=256\")))\n"
               "#else\n#define O2C_F64_YMM\n#endif\n\n");
  if (out.prefetch)
    fprintf(c, "/* A hint that memory is read soon (nothing where the compiler has none). */\n"
               "#if defined(__GNUC__) || defined(__clang__)\n"
               "#define O2C_PREFETCH(p) __builtin_prefetch((p), 0, 2)\n"
               "#else\n#define O2C_PREFETCH(p) ((void)(p))\n#endif\n\n");
  /* a single row's weights, read as they lie (MatMulNBits' codes and
   * scales), are read once per call: fetched without temporal locality.
   * The 1.1B int4 decode step on Zen 5 (EPYC family 26 model 2), 2
   * threads, wall clock with the other sessions held off (SCHED_FIFO):
   * 18.1-19.4 ms against 20.9-21.8 with locality 2 (L2) */
  if (out.prefetch_once)
    fprintf(c, "/* A hint that memory is read soon, and once. */\n"
               "#if defined(__GNUC__) || defined(__clang__)\n"
               "#define O2C_PREFETCH_ONCE(p) __builtin_prefetch((p), 0, 0)\n"
               "#else\n#define O2C_PREFETCH_ONCE(p) ((void)(p))\n#endif\n\n");
  if (out.pool) fprintf(c, "#define O2C_POOL_SIZE %d\n%s%s", o->threads, cg_pool_src, p->symbolic ? "" : cg_pool_calls_src);
  emit_helpers(c, &out);
  if (out.nbits_dot) fputs(cg_nbits_dot_src, c);
  /* After the helpers: gcc gives the functions defined after `#pragma GCC
   * optimize` that option, the register-blocked kernels their own
   * optimize attribute (O2C_BLOCK) too, and it does not inline a helper
   * whose options differ from its caller's ("optimization level attribute
   * mismatch"): the blocked kernels of every such model were left scalar
   * (the 1.1B int4 decode at accuracy_level 4 took 582 ms against 29;
   * gcc's "no vectype" 46 times in models/convinteger's). Helpers defined before it
   * keep the command line's options and inline as in any other model; of
   * them only o2c_exp2f's polynomial may be contracted. */
  if (ir_rounds_computed(p->g))
    fprintf(c, "\n/* This model rounds computed floats to integers (quantization): a*b+c\n"
               " * contracted into one FMA is an ulp off onnxruntime's two roundings and\n"
               " * moves a tie by a whole code. GNU C mode contracts by default. */\n"
               "#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n"
               "#elif defined(__GNUC__)\n#pragma GCC optimize(\"fp-contract=off\")\n#endif\n");
  else /* each product is bound to a local of its own (render.c) */
    fprintf(c, "\n/* clang fuses a*b+c into one FMA only within a statement, and each\n"
               " * product here is a statement of its own: across them, as GNU C does. */\n"
               "#if defined(__clang__)\n#pragma clang fp contract(fast)\n#endif\n");
  fprintf(c, "\n%s", kernels.s ? kernels.s : "");
  if (p->symbolic) {
    cg_dims_entry_begin(c, p, N);
    fprintf(c, "%s", entry.s ? entry.s : "");
    cg_dims_entry_end(c, p, N);
    cg_dims_header(h, p, N, o->embed != NULL);
  } else {
    /* with threads, the kernels' calls run in a function of their own, and
     * the entry times whole calls threaded or alone (pool_calls.c) */
    fprintf(c,
            "%s %s_run%s(const void *const *inputs, void *const *outputs, const void *weights, void "
            "*arena) {\n",
            out.pool ? "static int" : "int", N, out.pool ? "_kernels" : "");
    fprintf(c,
            "  const uint8_t *w = (const uint8_t *)weights;\n  uint8_t *a = (uint8_t *)arena;\n");
    fprintf(c, "  (void)inputs, (void)outputs, (void)w, (void)a;\n%s  return %s_OK;\n}\n",
            entry.s ? entry.s : "", N);
    if (out.pool)
      fprintf(c,
              "\nint %s_run(const void *const *inputs, void *const *outputs, const void *weights, void *arena) {\n"
              "  int mine = o2c_pool_call_begin();\n"
              "  int rc = %s_run_kernels(inputs, outputs, weights, arena);\n"
              "  o2c_pool_call_end(mine, rc == %s_OK);\n"
              "  return rc;\n}\n",
              N, N, N);
    emit_header(h, p, N, o->embed != NULL);
  }
  cg_typed_source(c, p, N);
  free(kernels.s);
  free(entry.s);
  if (write_weights(p, weights)) {
    snprintf(err, errlen, "cannot write the weights file");
    return -1;
  }
  if (ferror(c) || ferror(h) || ferror(weights)) {
    snprintf(err, errlen, "write error while emitting C");
    return -1;
  }
  return 0;
}
