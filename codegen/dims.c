/* dims.c — what symbolic dimensions add to the generated code.
 *
 * Kernels take the symbols they use as int64_t parameters (found in their
 * printed body: symbols' C names never clash with the generated code's own
 * identifiers, see ir/dim.c), so identical layers still share one
 * definition; a non-affine extent that isl names o2c_e<i> becomes a local
 * computed from the symbols. The entry function takes every symbol of the
 * model, refuses values outside what the code was compiled for, and lays
 * out the arena at run time (scheduler/arena.c). */
#include "codegen_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXT_PREFIX_LEN (sizeof SCHED_EXT_PREFIX - 1)

static bool ident_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_';
}

/* Calls fn on every identifier token of `s`. */
static void each_ident(const char *s, void (*fn)(const char *id, size_t n, void *arg), void *arg) {
  for (size_t i = 0; s && s[i];) {
    if (!ident_char(s[i]) || (s[i] >= '0' && s[i] <= '9')) {
      /* skip numbers whole (1e5f, 0x1p3 are not identifiers) */
      if (s[i] >= '0' && s[i] <= '9')
        while (ident_char(s[i])) i++;
      else
        i++;
      continue;
    }
    size_t j = i;
    while (ident_char(s[j])) j++;
    fn(s + i, j - i, arg);
    i = j;
  }
}

typedef struct {
  const sched_program *p;
  uint32_t syms;
  bool *ext;
} scan;

/* The model's input symbols, and the floor symbols made from them. */
static uint32_t input_syms(const sched_program *p) {
  uint32_t m = 0;
  for (int i = 0; i < ir_sym_count(p->g); i++) m |= 1u << ir_sym(p->g, i);
  return m;
}

static uint32_t derived_syms(const sched_program *p) {
  uint32_t in = input_syms(p), m = 0;
  int64_t num, den;
  for (int k = 0; k < IR_MAX_SYMS; k++)
    if (ir_dim_sym_def(k, &num, &den) && in && !(ir_dim_base_syms(ir_dim_syms(num)) & ~in)) m |= 1u << k;
  return m;
}

static void note_ident(const char *id, size_t n, void *arg) {
  scan *sc = arg;
  uint32_t all = input_syms(sc->p) | derived_syms(sc->p);
  for (int k = 0; k < IR_MAX_SYMS; k++) {
    const char *cn = ir_dim_sym_cname(k);
    if (all >> k & 1 && strlen(cn) == n && !strncmp(cn, id, n)) sc->syms |= 1u << k;
  }
  /* o2c_e<digits> only: o2c_exp2f is no extent */
  if (n > EXT_PREFIX_LEN && !strncmp(id, SCHED_EXT_PREFIX, EXT_PREFIX_LEN) &&
      strspn(id + EXT_PREFIX_LEN, "0123456789") == n - EXT_PREFIX_LEN) {
    int e = atoi(id + EXT_PREFIX_LEN);
    if (e >= 0 && e < sc->p->next) sc->ext[e] = true;
  }
}

/* `d` printed whole by `fn` (ir_dim_to_c, ir_dim_bound_c, ir_dim_str). */
static char *dim_text(size_t (*fn)(int64_t, char *, size_t), int64_t d) {
  size_t n = fn(d, NULL, 0) + 1;
  char *s = malloc(n);
  if (!s) abort();
  fn(d, s, n);
  return s;
}

void cg_dim(cg_buf *b, int64_t d, bool bound) {
  char *s = dim_text(bound ? ir_dim_bound_c : ir_dim_to_c, d);
  cg_printf(b, "%s", s);
  free(s);
}

/* A dimension with the symbols' model names, as comment text. */
static void dim_comment(cg_buf *b, int64_t d) {
  char *s = dim_text(ir_dim_str, d);
  cg_text(b, s, false);
  free(s);
}

/* Prints `b` to `f` and empties it. */
static void flush(FILE *f, cg_buf *b) {
  if (b->s) fputs(b->s, f);
  free(b->s);
  memset(b, 0, sizeof *b);
}

uint32_t cg_dims_used(const sched_program *p, cg_buf *body) {
  if (!p->symbolic) return 0;
  scan sc = {p, 0, calloc((size_t)p->next + 1, sizeof(bool))};
  if (!sc.ext) abort();
  each_ident(body->s, note_ident, &sc);
  cg_buf pre = {0};
  for (int e = 0; e < p->next; e++) {
    if (!sc.ext[e]) continue;
    cg_printf(&pre, "  const int64_t " SCHED_EXT_PREFIX "%d = ", e);
    cg_dim(&pre, p->ext[e], false);
    cg_printf(&pre, ";\n");
    sc.syms |= ir_dim_syms(p->ext[e]);
  }
  if (pre.s) {
    cg_printf(&pre, "%s", body->s ? body->s : "");
    free(body->s);
    *body = pre;
  }
  free(sc.ext);
  return sc.syms;
}

void cg_dims_params(cg_buf *o, uint32_t syms) {
  for (int k = 0; k < IR_MAX_SYMS; k++)
    if (syms & (1u << k)) cg_printf(o, ", int64_t %s", ir_dim_sym_cname(k));
}

void cg_dims_args(cg_buf *o, uint32_t syms) {
  for (int k = 0; k < IR_MAX_SYMS; k++)
    if (syms & (1u << k)) cg_printf(o, ", %s", ir_dim_sym_cname(k));
}

/* "int64_t batch, int64_t seq" (decl) or "batch, seq", every symbol of the
 * model in entry order; `from` "dims": "dims[0], dims[1]". */
static void entry_params(FILE *f, const sched_program *p, bool decl, const char *from) {
  for (int i = 0; i < ir_sym_count(p->g); i++) {
    const char *sep = i ? ", " : "";
    if (from)
      fprintf(f, "%s%s[%d]", sep, from, i);
    else
      fprintf(f, "%s%s%s", sep, decl ? "int64_t " : "", ir_dim_sym_cname(ir_sym(p->g, i)));
  }
}

static int64_t bytes_of(const sched_buf *b) {
  return ir_dim_mul(b->numel, (int64_t)ir_dtype_size(b->dtype));
}

static void c_dim(cg_buf *b, int64_t d) {
  if (ir_dim_is_sym(d))
    cg_dim(b, d, false);
  else
    cg_printf(b, "INT64_C(%lld)", (long long)d);
}

/* The floor symbols, each from its definition: `check` (o2c_dims_ok) first
 * bounds the numerator's terms (no overflow) and then checks the value is
 * one the code was compiled for. */
static void emit_derived(FILE *c, const sched_program *p, bool check) {
  uint32_t m = derived_syms(p);
  for (int k = 0; k < IR_MAX_SYMS; k++) {
    int64_t num, den;
    if (!(m >> k & 1) || !ir_dim_sym_def(k, &num, &den)) continue;
    const char *s = ir_dim_sym_cname(k);
    cg_buf b = {0};
    if (check) {
      cg_printf(&b, "  if (!(");
      cg_dim(&b, num, true);
      cg_printf(&b, " <= 2305843009213693952.0)) return 0;\n");
    }
    cg_printf(&b, "  const int64_t %s = o2c_floordiv(", s);
    cg_dim(&b, num, false);
    cg_printf(&b, ", INT64_C(%lld)); /* ", (long long)den);
    cg_text(&b, ir_dim_sym_name(k), false);
    cg_printf(&b, " */\n  (void)%s;\n", s);
    if (check) cg_printf(&b, "  if (%s < 1 || %s > INT64_C(%lld)) return 0;\n", s, s, (long long)IR_DIM_SYM_MAX);
    flush(c, &b);
  }
}

void cg_dims_derived(FILE *c, const sched_program *p) {
  emit_derived(c, p, false);
}

/* o2c_dims_ok: the symbols' range, no buffer (nor other polynomial of the
 * code) over 2^61 bytes, so that no index or size computation can
 * overflow, then the assumptions of the compile. */
static void emit_dims_ok(FILE *c, const sched_program *p) {
  fprintf(c,
          "/* Are these dimensions ones the code was compiled for? Symbols in 1..%lld;\n"
          " * every size below 2^61 (summing the magnitudes of its terms, so that no\n"
          " * index or size computation can overflow); the assumptions of the compile. */\n",
          (long long)IR_DIM_SYM_MAX);
  if (derived_syms(p))
    fprintf(c, "/* floor(a / b), b > 0 */\nstatic int64_t o2c_floordiv(int64_t a, int64_t b) {\n"
               "  return a >= 0 ? a / b : -((-a + b - 1) / b);\n}\n\n");
  fprintf(c, "static int o2c_dims_ok(");
  entry_params(c, p, true, NULL);
  fprintf(c, ") {\n");
  for (int i = 0; i < ir_sym_count(p->g); i++) {
    const char *s = ir_dim_sym_cname(ir_sym(p->g, i));
    fprintf(c, "  if (%s < 1 || %s > INT64_C(%lld)) return 0;\n", s, s, (long long)IR_DIM_SYM_MAX);
  }
  emit_derived(c, p, true);
  int n = 0, cap = p->nbufs + ir_assumption_count(p->g) + p->next + 1;
  int64_t *seen = malloc((size_t)cap * sizeof *seen);
  if (!seen) abort();
  for (int i = 0; i < cap - 1; i++) {
    int64_t d = i < p->nbufs ? bytes_of(&p->bufs[i])
                : i < p->nbufs + ir_assumption_count(p->g)
                    ? ir_assumption(p->g, i - p->nbufs, NULL)
                    : p->ext[i - p->nbufs - ir_assumption_count(p->g)];
    bool dup = !ir_dim_is_sym(d);
    for (int j = 0; j < n && !dup; j++) dup = seen[j] == d;
    if (dup) continue;
    seen[n++] = d;
    cg_buf s = {0};
    cg_printf(&s, "  if (!(");
    cg_dim(&s, d, true);
    cg_printf(&s, " <= 2305843009213693952.0)) return 0;\n");
    flush(c, &s);
  }
  free(seen);
  for (int i = 0; i < ir_assumption_count(p->g); i++) {
    const char *why;
    int64_t a = ir_assumption(p->g, i, &why);
    cg_buf s = {0};
    cg_printf(&s, "  if (");
    cg_dim(&s, a, false);
    cg_printf(&s, " < 0) return 0; /* ");
    dim_comment(&s, a);
    cg_printf(&s, " >= 0: ");
    cg_text(&s, why, false);
    cg_printf(&s, " */\n");
    flush(c, &s);
  }
  fprintf(c, "  return 1;\n}\n\n");
}

/* o2c_plan: the temporaries' offsets in p->plan order (arena.c), and the
 * arena's size. */
static void emit_plan(FILE *c, const sched_program *p) {
  if (p->nplan) /* unused otherwise: a warning in the user's build */
    fprintf(c, "static int64_t o2c_max(int64_t a, int64_t b) {\n  return a > b ? a : b;\n}\n\n"
               "/* The end of `n` bytes at `o`, rounded up to 64. */\n"
               "static int64_t o2c_end(int64_t o, int64_t n) {\n  return (o + n + 63) / 64 * 64;\n}\n\n");
  fprintf(c, "/* The arena at these dimensions: each temporary starts past the end of\n"
             " * those it lies above (they are alive at the same time), in this order. */\n"
             "static int64_t o2c_plan(");
  entry_params(c, p, true, NULL);
  fprintf(c, ", int64_t *off) {\n  int64_t end = 0;\n  (void)off;\n");
  for (int i = 0; i < ir_sym_count(p->g); i++)
    fprintf(c, "  (void)%s;\n", ir_dim_sym_cname(ir_sym(p->g, i)));
  emit_derived(c, p, false);
  for (int i = 0; i < p->nplan; i++) {
    const sched_buf *b = &p->bufs[p->plan[i]];
    if (!b->nbelow) fprintf(c, "  off[%d] = 0;\n", i);
    for (int j = 0; j < b->nbelow; j++) {
      const sched_buf *o = &p->bufs[b->below[j]];
      cg_buf s = {0};
      if (j)
        cg_printf(&s, "  off[%d] = o2c_max(off[%d], o2c_end(off[%d], ", i, i, o->plan);
      else
        cg_printf(&s, "  off[%d] = o2c_end(off[%d], ", i, o->plan);
      c_dim(&s, bytes_of(o));
      cg_printf(&s, j ? "));\n" : ");\n");
      flush(c, &s);
    }
  }
  for (int i = 0; i < p->nplan; i++) {
    cg_buf s = {0};
    cg_printf(&s, "  end = o2c_max(end, o2c_end(off[%d], ", i);
    c_dim(&s, bytes_of(&p->bufs[p->plan[i]]));
    cg_printf(&s, "));\n");
    flush(c, &s);
  }
  fprintf(c, "  return end;\n}\n\n");
}

void cg_dims_entry_begin(FILE *c, const sched_program *p, const char *N) {
  emit_dims_ok(c, p);
  emit_plan(c, p);
  fprintf(c,
          "int %s_run(const void *const *inputs, void *const *outputs, const void *weights, void "
          "*arena, ",
          N);
  entry_params(c, p, true, NULL);
  fprintf(
      c, ") {\n  const uint8_t *w = (const uint8_t *)weights;\n  uint8_t *a = (uint8_t *)arena;\n");
  fprintf(c, "  int64_t off[%d];\n  if (!o2c_dims_ok(", p->nplan ? p->nplan : 1);
  entry_params(c, p, false, NULL);
  fprintf(c, ")) return %s_ERR_SHAPE;\n  o2c_plan(", N);
  entry_params(c, p, false, NULL);
  fprintf(c, ", off);\n  (void)inputs, (void)outputs, (void)w, (void)a;\n");
  emit_derived(c, p, false);
}

void cg_dims_entry_end(FILE *c, const sched_program *p, const char *N) {
  fprintf(c, "  return %s_OK;\n}\n\n", N);
  fprintf(c,
          "int %s_run_dims(const void *const *inputs, void *const *outputs, const void *weights, "
          "void *arena,\n"
          "    const int64_t *dims) {\n  return %s_run(inputs, outputs, weights, arena, ",
          N, N);
  entry_params(c, p, false, "dims");
  fprintf(c, ");\n}\n\nsize_t %s_arena_size(", N);
  entry_params(c, p, true, NULL);
  fprintf(c, ") {\n  int64_t off[%d];\n  if (!o2c_dims_ok(", p->nplan ? p->nplan : 1);
  entry_params(c, p, false, NULL);
  fprintf(c, ")) return 0;\n  return (size_t)o2c_plan(");
  entry_params(c, p, false, NULL);
  fprintf(c,
          ", off);\n}\n\nsize_t %s_arena_size_dims(const int64_t *dims) {\n  return %s_arena_size(",
          N, N);
  entry_params(c, p, false, "dims");
  fprintf(c, ");\n}\n");
}

void cg_dims_header(FILE *h, const sched_program *p, const char *N, bool embed) {
  fprintf(h,
          "/* Generated by onnx2c-caten. */\n#ifndef %s_H\n#define %s_H\n\n#include "
          "<stddef.h>\n#include <stdint.h>\n\n",
          N, N);
  fprintf(h,
          "#define %s_NUM_INPUTS %d\n#define %s_NUM_OUTPUTS %d\n#define %s_WEIGHTS_SIZE %lld\n\n",
          N, ir_input_count(p->g), N, ir_output_count(p->g), N, (long long)p->weights_size);
  fprintf(h,
          "/* Symbolic dimensions: one compiled model serves every value of them. They are\n"
          " * the last arguments of %s_run, in this order. A dimension the model leaves\n"
          " * unnamed (neither a size nor a name) is named INPUT_dimK: axis K of input\n"
          " * INPUT. */\n#define %s_NUM_DIMS %d\n#define "
          "%s_DIM_NAMES {",
          N, N, ir_sym_count(p->g), N);
  for (int i = 0; i < ir_sym_count(p->g); i++) {
    if (i) fprintf(h, ", ");
    cg_ftext(h, ir_dim_sym_name(ir_sym(p->g, i)), true);
  }
  fprintf(h, "}\n\nenum { %s_OK = 0, %s_ERR_INDEX = 1, %s_ERR_SHAPE = 2 };\n\n/* Runs the model.\n",
          N, N, N);
  for (int i = 0; i < ir_input_count(p->g); i++) {
    ir_ref r = ir_input_ref(p->g, i);
    cg_io_comment(h, p, "input", r, i, ir_node_get(p->g, r)->name);
  }
  for (int i = 0; i < ir_output_count(p->g); i++)
    cg_io_comment(h, p, "output", ir_output(p->g, i), i, ir_output_name(p->g, i));
  cg_io_notes(h, p);
  fprintf(h, " * Dimensions: ");
  for (int i = 0; i < ir_sym_count(p->g); i++) {
    fprintf(h, "%s", i ? ", " : "");
    cg_ftext(h, ir_dim_sym_name(ir_sym(p->g, i)), false);
    fprintf(h, " (`%s`)", ir_dim_sym_cname(ir_sym(p->g, i)));
  }
  fprintf(h, ", each in 1..%lld", (long long)IR_DIM_SYM_MAX);
  for (int i = 0; i < ir_assumption_count(p->g); i++) {
    const char *why;
    cg_buf s = {0};
    cg_printf(&s, "%s", i ? "; " : ";\n *   the code was compiled assuming ");
    dim_comment(&s, ir_assumption(p->g, i, &why));
    cg_printf(&s, " >= 0 (");
    cg_text(&s, why, false);
    cg_printf(&s, ")");
    flush(h, &s);
  }
  fprintf(h,
          ".\n * `weights`: the contents of the .weights file, 64-byte aligned;\n"
          " * `arena`: %s_arena_size(dims...) bytes of scratch memory, 64-byte aligned.\n"
          " * Returns %s_OK, %s_ERR_INDEX (an index out of range), or %s_ERR_SHAPE: the\n"
          " * dimensions are outside what the code was compiled for (nothing is read or\n"
          " * written). */\n",
          N, N, N, N);
  fprintf(h,
          "int %s_run(const void *const *inputs, void *const *outputs, const void *weights, void "
          "*arena,\n    ",
          N);
  entry_params(h, p, true, NULL);
  fprintf(h, ");\n/* The same with the dimensions in an array (%s_NUM_DIMS values, in order). */\n",
          N);
  fprintf(h,
          "int %s_run_dims(const void *const *inputs, void *const *outputs, const void *weights, "
          "void *arena,\n"
          "    const int64_t *dims);\n",
          N);
  fprintf(h,
          "/* Bytes of arena %s_run needs at these dimensions; 0 when it would refuse them. "
          "*/\nsize_t %s_arena_size(",
          N, N);
  entry_params(h, p, true, NULL);
  fprintf(h, ");\nsize_t %s_arena_size_dims(const int64_t *dims);\n\n", N);
  cg_typed_header(h, p, N, embed);
  fprintf(h, "#endif\n");
}
