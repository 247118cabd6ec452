/* render.c — one statement of a kernel as C: its value (render_value over
 * the expression DAG, inline values bound to locals once) and every
 * address (plain buffer, view with strides/offset/mask, INDEX_COMPONENTS)
 * by render_address, so indexing is spelled in one place. */
#include "codegen_impl.h"

#include <math.h>
#include <string.h>

const char *cg_ctype(ir_dtype t) {
  switch (t) {
  case IR_F32: return "float";
  case IR_F64: return "double";
  case IR_F16: return "uint16_t";
  case IR_I8: return "int8_t";
  case IR_I16: return "int16_t";
  case IR_I32: return "int32_t";
  case IR_I64: return "int64_t";
  case IR_U8: return "uint8_t";
  case IR_U16: return "uint16_t";
  case IR_U32: return "uint32_t";
  case IR_U64: return "uint64_t";
  case IR_BOOL: return "uint8_t";
  case IR_BF16: return "uint16_t";
  default: return "void";
  }
}

/* An integer from a double without undefined behaviour (NaN, inf, range). */
static int64_t to_int(double f) {
  if (f != f) return 0;
  if (f >= 9.2e18) return INT64_MAX;
  if (f <= -9.2e18) return INT64_MIN;
  return (int64_t)f;
}

static void literal(cg_buf *o, ir_dtype t, double f, int64_t i) {
  if (ir_dtype_is_float(t)) {
    if (isnan(f))
      cg_printf(o, "%sNAN", t == IR_F32 ? "" : "(double)");
    else if (isinf(f))
      cg_printf(o, "%s%sINFINITY", f < 0 ? "-" : "", t == IR_F32 ? "" : "(double)");
    else {
      char s[64];
      snprintf(s, sizeof s, t == IR_F32 ? "%.9g" : "%.17g", f);
      cg_printf(o, "%s%s%s", s, strpbrk(s, ".e") ? "" : ".0", t == IR_F32 ? "f" : "");
    }
  } else if (t == IR_I64 && i == INT64_MIN) {
    cg_printf(o, "INT64_MIN");
  } else if (t == IR_I64 || t == IR_U64) {
    cg_printf(o, "INT64_C(%lld)", (long long)i);
  } else {
    cg_printf(o, "((%s)%lld)", cg_ctype(t), (long long)i);
  }
}

/* A dimension, stride, offset or bound as C: a number, or the expression
 * of a symbolic one over the symbols (kernel parameters, see dims.c). */
static void D(cg_buf *o, int64_t d) {
  if (ir_dim_is_sym(d))
    cg_dim(o, d, false);
  else
    cg_printf(o, "%lld", (long long)d);
}

/* A LOAD's value: a literal, or a symbolic dimension known at run time. */
static void render_load(cg_buf *o, const ir_node *n) {
  if (n->sym_value)
    cg_printf(o, "((int64_t)"), D(o, n->ival), cg_printf(o, ")");
  else
    literal(o, n->dtype, n->fval, n->ival);
}

/* Element `idx` (one C expression per axis of `shape`) of a buffer laid out
 * as `stride`/`offset`; axes of size 1 or stride 0 are left out. */
static void render_address(cg_buf *o, int64_t offset, const int64_t *stride, const ir_shape *shape,
                           char *const *idx) {
  bool any = false;
  if (offset) D(o, offset), any = true;
  for (int k = 0; k < shape->rank; k++) {
    if (shape->d[k] == 1 || stride[k] == 0 || !strcmp(idx[k], "0")) continue;
    cg_printf(o, "%s", any ? " + " : "");
    if (stride[k] == 1)
      cg_printf(o, "%s", idx[k]);
    else
      D(o, stride[k]), cg_printf(o, " * %s", idx[k]);
    any = true;
  }
  if (!any) cg_printf(o, "0");
}

/* Is axis k of `v` read over its whole extent? (Bounds keep 0 <= lo and
 * hi <= d, symbolic ones crossing only where the mask is empty (ir/view.c),
 * so for symbolic ones that is lo == 0 and hi == d.) */
static bool unmasked_axis(const ir_view *v, int k) {
  if (ir_dim_is_sym(v->lo[k]) || ir_dim_is_sym(v->hi[k]) || ir_dim_is_sym(v->shape.d[k]))
    return v->lo[k] == 0 && v->hi[k] == v->shape.d[k];
  return v->lo[k] <= 0 && v->hi[k] >= v->shape.d[k];
}

static void split_cut(cg_kernel *c, int64_t at) {
  if (at <= c->split_from || at >= c->split_to) return;
  for (int i = 0; i < c->split_ncuts && i < CG_SPLIT_CUTS; i++)
    if (c->split_cuts[i] == at) return;
  if (c->split_ncuts < CG_SPLIT_CUTS) c->split_cuts[c->split_ncuts] = at;
  c->split_ncuts++;
}

/* A condition on the iterator of a split loop (emit.c, split_loop): while
 * collecting, its range narrows the split's and its bounds are cuts; in
 * the middle loop it holds and is left out (1); in a piece between cuts
 * it holds (1) or fails everywhere (-1). 0: printed. */
static int split_cond(cg_kernel *c, const ir_view *v, int k, const char *ix) {
  if (!c->split_mode || !c->split_it || strcmp(ix, c->split_it)) return 0;
  if (c->split_mode == 2) return 1;
  if (c->split_mode == 3) return v->lo[k] <= c->split_pa && c->split_pb <= v->hi[k] ? 1 : -1;
  if (ir_dim_is_sym(v->lo[k]) || ir_dim_is_sym(v->hi[k])) {
    c->split_bad = true;
    return 0;
  }
  if (v->lo[k] > c->split_lo) c->split_lo = v->lo[k];
  if (v->hi[k] < c->split_hi) c->split_hi = v->hi[k];
  split_cut(c, v->lo[k]), split_cut(c, v->hi[k]);
  c->split_n++;
  return 0;
}

/* The view's conditions, "&&"-joined into `o` (nothing when all hold);
 * false, and nothing, when one fails wherever the piece of a split loop
 * runs. */
static bool render_mask(cg_kernel *c, cg_buf *o, const ir_view *v, char *const *idx) {
  bool first = true;
  for (int k = 0; k < v->shape.rank; k++) {
    int held = unmasked_axis(v, k) ? 1 : split_cond(c, v, k, idx[k]);
    if (held < 0) {
      o->n = 0;
      return false;
    }
    if (held) continue;
    if (c->split_mode == 1 && c->split_it && strcmp(idx[k], c->split_it)) c->split_other++;
    cg_printf(o, "%s%s >= ", first ? "" : " && ", idx[k]);
    D(o, v->lo[k]);
    cg_printf(o, " && %s < ", idx[k]);
    D(o, v->hi[k]);
    first = false;
  }
  return true;
}

static void render_value(cg_kernel *c, cg_buf *o, ir_ref r, char *const *idx, bool is_root);

/* A float max reduction: kept as a plain max plus a NaN flag nan<stage>. */
bool cg_is_float_max(const cg_kernel *c, int stage) {
  const ir_node *r = ir_node_get(c->p->g, c->k->stages[stage]);
  return r->op == IR_MAX && ir_dtype_is_float(r->dtype);
}

static void render_buffer_read(cg_kernel *c, cg_buf *o, ir_ref r, char *const *idx) {
  const ir_node *n = ir_node_get(c->p->g, r);
  int64_t st[IR_MAX_RANK], off = sched_node_layout(c->p, r, st);
  cg_printf(o, "b%d[", cg_kernel_arg(c, c->p->buf_of[r]));
  render_address(o, off, st, &n->shape, idx);
  cg_printf(o, "]");
}

/* The index of an indexed view, bound to a local and checked against its
 * bound: out of range returns the error status instead of reading. */
static const char *render_index(cg_kernel *c, ir_ref r, char *const *idx) {
  const ir_node *n = ir_node_get(c->p->g, r);
  int h = sched_gather_of(c->k, r);
  if (h >= 0) {
    snprintf(c->index_name, sizeof c->index_name, "g%d", h);
    return c->index_name;
  }
  cg_buf e = {0};
  render_value(c, &e, n->src[1], idx, false);
  int var = c->nvars++;
  cg_line(&c->pre, c->depth, "const int64_t v%d = (int64_t)%s;", var, e.s);
  if (n->view.gstrict) {
    /* out of range: flag the error and read row 0 instead (valid memory) */
    int ok = c->nvars++;
    cg_buf bound = {0};
    D(&bound, n->view.gbound);
    cg_line(&c->pre, c->depth, "const int64_t v%d = (v%d < 0 || v%d >= %s) ? (err = 1, 0) : v%d;",
            ok, var, var, bound.s, var);
    free(bound.s);
    var = ok;
    c->has_index = true;
  }
  free(e.s);
  snprintf(c->index_name, sizeof c->index_name, "v%d", var);
  return c->index_name;
}

/* A weight read from its packed copy: panels [ceil(N/nr)][K][nr] (gemm.c). */
static void render_panel_read(cg_kernel *c, cg_buf *o, int buf) {
  const sched_gemm *gm = &c->k->gemm;
  if (!c->red) {
    c->error = true; /* panels are read by the sums only */
    return;
  }
  cg_printf(o, "b%d[%lld * %s + %d * %s + %s]", cg_kernel_arg(c, buf),
            (long long)c->k->space.d[gm->k] * gm->nr, c->col_tile, gm->nr, c->red, c->col);
}

static void render_view(cg_kernel *c, cg_buf *o, ir_ref r, char *const *idx) {
  const ir_node *n = ir_node_get(c->p->g, r);
  const ir_node *src = ir_node_get(c->p->g, n->src[0]);
  int panel = sched_gemm_packed_buf(c->k, r);
  if (panel >= 0) {
    render_panel_read(c, o, panel);
    return;
  }
  /* no condition left: every one holds (a split loop's middle) */
  cg_buf mask = {0};
  if (n->view.masked && !render_mask(c, &mask, &n->view, idx)) { /* fails throughout a split loop's piece */
    literal(o, n->dtype, n->view.pad_value, to_int(n->view.pad_value));
    free(mask.s);
    return;
  }
  bool masked = mask.n > 0;
  if (masked) cg_printf(o, "((%s) ? ", mask.s);
  free(mask.s);
  if (src->op == IR_LOAD) {
    render_load(o, src);
  } else if (c->p->buf_of[n->src[0]] < 0) {
    /* an inline source through a broadcast or transpose (checked by the scheduler) */
    int map[IR_MAX_RANK];
    char *sidx[IR_MAX_RANK];
    if (!ir_view_axis_map(&n->view, &src->shape, map)) c->error = true;
    for (int j = 0; j < src->shape.rank; j++) sidx[j] = map[j] >= 0 ? idx[map[j]] : "0";
    render_value(c, o, n->src[0], sidx, false);
  } else {
    /* a view's strides address its source's own layout: never one stored
     * inside a copy (its only reader is that copy, which reads nothing) */
    if (c->p->store && c->p->store[n->src[0]].on) c->error = true;
    const char *e = n->view.gather ? render_index(c, r, idx) : NULL;
    char ev[32];
    if (e) snprintf(ev, sizeof ev, "%s", e);
    /* a lenient indexed read gives 0 out of range, as the one-hot it replaced */
    if (e && !n->view.gstrict)
      cg_printf(o, "((%s >= 0 && %s < ", ev, ev), D(o, n->view.gbound), cg_printf(o, ") ? ");
    cg_printf(o, "b%d[", cg_kernel_arg(c, c->p->buf_of[n->src[0]]));
    render_address(o, n->view.offset, n->view.stride, &n->shape, idx);
    if (e) cg_printf(o, " + "), D(o, n->view.gstride), cg_printf(o, " * %s", ev);
    cg_printf(o, "]");
    if (e && !n->view.gstrict) {
      cg_printf(o, " : ");
      literal(o, n->dtype, 0, 0);
      cg_printf(o, ")");
    }
  }
  if (masked) {
    cg_printf(o, " : ");
    literal(o, n->dtype, n->view.pad_value, to_int(n->view.pad_value));
    cg_printf(o, ")");
  }
}

/* The unsigned type integer arithmetic of `t` is done in. */
static const char *wide_unsigned(ir_dtype t) {
  return ir_dtype_size(t) == 8 ? "uint64_t" : "uint32_t";
}

static const char *fsuffix(ir_dtype t) {
  return t == IR_F32 ? "f" : "";
}

static bool is_half(ir_dtype t) {
  return t == IR_F16 || t == IR_BF16;
}

/* A CAST from or to a 16-bit float goes through float32 (program.c prints
 * the conversions, o2c_h2f ...); from anything wider than float it rounds
 * once, from double. */
static void render_half_cast(cg_kernel *c, cg_buf *o, ir_dtype from, ir_dtype to, const char *x) {
  unsigned *need = &c->out->half;
  const char *to_half = to == IR_F16 ? "o2c_f2h" : "o2c_f2b";
  unsigned to_bit = to == IR_F16 ? CG_HALF_F2H : CG_HALF_F2B;
  if (is_half(from)) {
    const char *f = from == IR_F16 ? "o2c_h2f" : "o2c_b2f";
    *need |= from == IR_F16 ? CG_HALF_H2F : CG_HALF_B2F;
    if (is_half(to))
      cg_printf(o, "%s(%s(%s))", to_half, f, x), *need |= to_bit;
    else if (to == IR_BOOL)
      cg_printf(o, "(%s(%s) != 0)", f, x);
    else if (!ir_dtype_is_float(to))
      cg_printf(o, "cast_f32_%s(%s(%s))", ir_dtype_name(to), f, x), cg_need_cast(c->out, IR_F32, to);
    else
      cg_printf(o, "((%s)%s(%s))", cg_ctype(to), f, x);
  } else if (from == IR_F32) {
    cg_printf(o, "%s(%s)", to_half, x), *need |= to_bit;
  } else {
    cg_printf(o, "%s((double)%s)", to == IR_F16 ? "o2c_d2h" : "o2c_d2b", x);
    *need |= to == IR_F16 ? CG_HALF_D2H : CG_HALF_D2B;
  }
}

static void render_op(cg_kernel *c, cg_buf *o, const ir_node *n, char *const *idx) {
  const char *T = cg_ctype(n->dtype);
  ir_dtype st = ir_node_get(c->p->g, n->src[0])->dtype;
  cg_buf a[3] = {{0}};
  for (int k = 0; k < n->nsrc; k++) render_value(c, &a[k], n->src[k], idx, false);
  bool fl = ir_dtype_is_float(st);
  switch (n->op) {
  case IR_NEG:
    if (fl) /* parenthesised: a negative literal operand would print "--" */
      cg_printf(o, "((%s)-(%s))", T, a[0].s);
    else
      cg_printf(o, "((%s)(0u - (%s)%s))", T, wide_unsigned(n->dtype), a[0].s);
    break;
  case IR_RECIP: cg_printf(o, "(1.0%s / %s)", fsuffix(n->dtype), a[0].s); break;
  case IR_SQRT: cg_printf(o, "sqrt%s(%s)", fsuffix(n->dtype), a[0].s); break;
  case IR_EXP2:
    /* float: our own vectorisable exp2 (program.c); libm's is a call per element */
    if (n->dtype == IR_F32)
      cg_printf(o, "o2c_exp2f(%s)", a[0].s), c->out->exp2 = true;
    else
      cg_printf(o, "exp2(%s)", a[0].s);
    break;
  case IR_LOG2: cg_printf(o, "log2%s(%s)", fsuffix(n->dtype), a[0].s); break;
  case IR_SIN: cg_printf(o, "sin%s(%s)", fsuffix(n->dtype), a[0].s); break;
  case IR_NOT: cg_printf(o, "(!%s)", a[0].s); break;
  case IR_CAST:
    if (st == IR_F64 && n->dtype == IR_F32) c->narrows_f64 = true;
    if (is_half(st) || is_half(n->dtype))
      render_half_cast(c, o, st, n->dtype, a[0].s);
    else if (n->dtype == IR_BOOL)
      cg_printf(o, "(%s != 0)", a[0].s);
    else if (fl && !ir_dtype_is_float(n->dtype))
      cg_printf(o, "cast_%s_%s(%s)", ir_dtype_name(st), ir_dtype_name(n->dtype), a[0].s),
          cg_need_cast(c->out, st, n->dtype);
    else
      cg_printf(o, "((%s)%s)", T, a[0].s);
    break;
  case IR_ADD:
  case IR_MUL:
    /* integers wrap: computed unsigned, so no promotion to int can overflow */
    if (fl || n->dtype == IR_BOOL)
      cg_printf(o, "((%s)(%s %s %s))", T, a[0].s, n->op == IR_ADD ? "+" : "*", a[1].s);
    else
      cg_printf(o, "((%s)((%s)%s %s (%s)%s))", T, wide_unsigned(n->dtype), a[0].s,
                n->op == IR_ADD ? "+" : "*", wide_unsigned(n->dtype), a[1].s);
    break;
  case IR_MAX: {
    /* float, outside a register-blocked kernel, of two values that are not
     * literals: maxs_T (program.c). Against a literal (Relu's 0) max_T is
     * one unordered compare per vector (the literal is no NaN), maxs_T
     * three. */
    const ir_node *x = ir_node_get(c->p->g, n->src[0]), *y = ir_node_get(c->p->g, n->src[1]);
    if (ir_dtype_is_float(n->dtype) && !c->k->gemm.on && x->op != IR_LOAD && y->op != IR_LOAD) {
      cg_printf(o, "maxs_%s(%s, %s)", ir_dtype_name(n->dtype), a[0].s, a[1].s);
      c->out->max_sel |= 1u << n->dtype;
    } else {
      cg_printf(o, "max_%s(%s, %s)", ir_dtype_name(n->dtype), a[0].s, a[1].s);
      cg_need_helper(c->out, CG_HELPER_MAX, n->dtype);
    }
    break;
  }
  case IR_IDIV:
    cg_printf(o, "idiv_%s(%s, %s)", ir_dtype_name(n->dtype), a[0].s, a[1].s);
    cg_need_helper(c->out, CG_HELPER_IDIV, n->dtype);
    break;
  case IR_MOD:
    if (fl)
      cg_printf(o, "fmod%s(%s, %s)", fsuffix(n->dtype), a[0].s, a[1].s);
    else {
      cg_printf(o, "imod_%s(%s, %s)", ir_dtype_name(n->dtype), a[0].s, a[1].s);
      cg_need_helper(c->out, CG_HELPER_IMOD, n->dtype);
    }
    break;
  case IR_AND: cg_printf(o, "((%s)(%s & %s))", T, a[0].s, a[1].s); break;
  case IR_OR: cg_printf(o, "((%s)(%s | %s))", T, a[0].s, a[1].s); break;
  case IR_XOR: cg_printf(o, "((%s)(%s ^ %s))", T, a[0].s, a[1].s); break;
  /* x < x is false, and so is x != x for integers (a float's is its NaN
   * test): printed as such, since gcc's -Wtautological-compare rejects the
   * self-comparison under -Werror (Min(x, x) of an integer tensor); x is
   * still named, or a local bound for it would be unused */
  case IR_LT:
    if (!strcmp(a[0].s, a[1].s)) cg_printf(o, "((void)%s, 0)", a[0].s);
    else cg_printf(o, "(%s < %s)", a[0].s, a[1].s);
    break;
  case IR_NEQ:
    if (!fl && !strcmp(a[0].s, a[1].s)) cg_printf(o, "((void)%s, 0)", a[0].s);
    else cg_printf(o, "(%s != %s)", a[0].s, a[1].s);
    break;
  case IR_WHERE:
    /* branch-free: with ?: compilers sink one operand's load into a branch
     * and then cannot vectorise the loop (a load there might trap) */
    cg_printf(o, "o2c_sel_%s(%s, %s, %s)", ir_dtype_name(n->dtype), a[0].s, a[1].s, a[2].s);
    c->out->selects |= 1u << n->dtype;
    break;
  default: cg_printf(o, "/* unsupported %s */ 0", ir_op_name(n->op)); c->error = true;
  }
  for (int k = 0; k < n->nsrc; k++) free(a[k].s);
}

static void render_op(cg_kernel *c, cg_buf *o, const ir_node *n, char *const *idx);

/* A local `v<N>` holding the value `e` of node r at the element named by
 * `key` (its index expressions; the memo takes it over). */
static int bind_value(cg_kernel *c, ir_ref r, char *key, const char *ctype, const char *e) {
  int var = c->nvars++;
  cg_line(&c->pre, c->depth, "const %s v%d = %s;", ctype, var, e);
  if (c->nmemo == c->capmemo) {
    c->capmemo = c->capmemo ? 2 * c->capmemo : 16;
    c->memo = realloc(c->memo, (size_t)c->capmemo * sizeof *c->memo);
    if (!c->memo) abort();
  }
  c->memo[c->nmemo++] = (cg_memo){r, key, var};
  return var;
}

/* Each inline value is computed once per statement and element: bound to
 * a local, so an expression DAG prints in linear size. */
static void render_shared(cg_kernel *c, cg_buf *o, ir_ref r, char *const *idx) {
  const ir_node *n = ir_node_get(c->p->g, r);
  cg_buf key = {0};
  for (int i = 0; i < n->shape.rank; i++) cg_printf(&key, "%s,", idx[i]);
  if (!key.s) cg_printf(&key, "%s", "");
  for (int i = 0; i < c->nmemo; i++)
    if (c->memo[i].r == r && !strcmp(c->memo[i].key, key.s)) {
      cg_printf(o, "v%d", c->memo[i].var);
      free(key.s);
      return;
    }
  cg_buf e = {0};
  render_op(c, &e, n, idx);
  int var = bind_value(c, r, key.s, cg_ctype(n->dtype), e.s);
  free(e.s);
  cg_printf(o, "v%d", var);
}

int cg_acc_parts(const cg_kernel *c, int stage) {
  int parts = c->k->gemm.parts, nt = parts > 1 && !c->k->gemm.kc ? cg_update_terms(c, stage) : 0;
  return nt < 2 ? 1 : parts < nt ? parts : nt;
}

/* Partial accumulator `j` of `stage` (acc<stage>, acc<stage>_<j>) at the
 * block's element `sub`. */
static void acc_part(cg_buf *o, int stage, int j, const char *sub) {
  if (j)
    cg_printf(o, "acc%d_%d%s", stage, j, sub);
  else
    cg_printf(o, "acc%d%s", stage, sub);
}

/* The stage's value: its partial accumulators added in pairs (at most 4). */
static void acc_sum(cg_buf *o, const cg_kernel *c, int stage) {
  int parts = cg_acc_parts(c, stage);
  if (parts == 1) {
    acc_part(o, stage, 0, c->acc_sub);
    return;
  }
  cg_printf(o, "(");
  for (int j = 0; j < parts; j += 2) {
    if (j) cg_printf(o, " + ");
    if (j + 1 < parts) cg_printf(o, "(");
    acc_part(o, stage, j, c->acc_sub);
    if (j + 1 < parts) cg_printf(o, " + "), acc_part(o, stage, j + 1, c->acc_sub), cg_printf(o, ")");
  }
  cg_printf(o, ")");
}

/* The value of node `r` at element `idx` of its shape. */
static void render_value(cg_kernel *c, cg_buf *o, ir_ref r, char *const *idx, bool is_root) {
  const ir_node *n = ir_node_get(c->p->g, r);
  if (n->dtype == IR_F64) c->has_f64 = true;
  if (!is_root && sched_gemm_packed_buf(c->k, r) >= 0) {
    render_panel_read(c, o, sched_gemm_packed_buf(c->k, r)); /* a one-byte weight read whole */
    return;
  }
  if (!is_root && c->p->buf_of[r] >= 0) {
    render_buffer_read(c, o, r, idx);
    return;
  }
  int stage = sched_stage_of(c->k, r);
  if (stage >= 0 && cg_is_float_max(c, stage)) {
    cg_printf(o, "(nan%d ? %sNAN : acc%d)", stage, n->dtype == IR_F32 ? "" : "(double)", stage);
    return;
  }
  if (stage >= 0) {
    acc_sum(o, c, stage);
    return;
  }
  if (!is_root && n->op != IR_LOAD && n->op != IR_INDEX_COMPONENTS && n->op != IR_VIEW &&
      n->op != IR_MOVE) {
    render_shared(c, o, r, idx);
    return;
  }
  switch (n->op) {
  case IR_LOAD: render_load(o, n); return;
  case IR_INDEX_COMPONENTS: {
    cg_printf(o, "((int64_t)");
    render_address(o, n->base, n->coef, &n->shape, idx);
    cg_printf(o, ")");
    return;
  }
  case IR_VIEW: render_view(c, o, r, idx); return;
  case IR_MOVE: render_value(c, o, n->src[0], idx, false); return;
  default: render_op(c, o, n, idx);
  }
}

static void init_literal(cg_buf *v, const ir_node *r) {
  if (r->op != IR_MAX)
    literal(v, r->dtype, r->op == IR_MUL, r->op == IR_MUL);
  else if (r->dtype == IR_I64)
    cg_printf(v, "INT64_MIN");
  else
    literal(v, r->dtype, ir_dtype_lowest(r->dtype), to_int(ir_dtype_lowest(r->dtype)));
}

int cg_update_terms(const cg_kernel *c, int stage) {
  ir_ref terms[SCHED_SUM_TERMS_MAX];
  int nt = c->k->gemm.on ? sched_stage_terms(c->p, c->k, stage, terms) : 0;
  return nt >= 2 ? nt : 0;
}

/* One statement at iteration `space_idx` (one expression per axis of the
 * kernel's space). */
void cg_statement_begin(cg_kernel *c) {
  for (int i = 0; i < c->nmemo; i++) free(c->memo[i].key);
  c->nmemo = 0;
  c->pre.n = 0;
  if (c->pre.s) c->pre.s[0] = 0;
}

/* Emits the statement line `line` after the locals it uses. */
static void statement_end(cg_kernel *c, const char *line) {
  if (c->pre.n) {
    cg_line(c->body, c->depth - 1, "{");
    cg_printf(c->body, "%s", c->pre.s);
    cg_printf(c->body, "%*s%s\n", 2 * c->depth, "", line);
    cg_line(c->body, c->depth - 1, "}");
  } else {
    cg_printf(c->body, "%*s%s\n", 2 * (c->depth - 1), "", line);
  }
}

/* The output element of the kernel's root at iteration `space_idx`. */
static void root_address(cg_kernel *c, cg_buf *addr, char *const *space_idx) {
  const ir_node *root = ir_node_get(c->p->g, c->k->root);
  char *ridx[IR_MAX_RANK];
  int64_t st[IR_MAX_RANK];
  for (int i = 0; i < root->shape.rank; i++)
    ridx[i] = c->k->root_axis[i] >= 0 ? space_idx[c->k->root_axis[i]] : "0";
  int64_t off = sched_node_layout(c->p, c->k->root, st);
  render_address(addr, off, st, &root->shape, ridx);
}

/* A padded copy whose interior its source's kernel wrote (scheduler/
 * interior.c): only the border, where the view's mask fails, gets the
 * pad value; nothing in a split loop's middle, where it holds. */
static void border_stmt(cg_kernel *c, cg_buf *line, const char *addr, char *const *ridx) {
  const ir_node *root = ir_node_get(c->p->g, c->k->root), *v = ir_node_get(c->p->g, root->src[0]);
  cg_buf mask = {0};
  if (!render_mask(c, &mask, &v->view, ridx)) { /* fails throughout a split loop's piece */
    cg_printf(line, "b0[%s] = ", addr);
    literal(line, root->dtype, v->view.pad_value, to_int(v->view.pad_value));
    cg_printf(line, ";");
    free(mask.s);
    return;
  }
  if (!mask.n) {
    free(mask.s);
    cg_printf(line, ";");
    return;
  }
  cg_printf(line, "if (!(%s)) b0[%s] = ", mask.s, addr);
  literal(line, root->dtype, v->view.pad_value, to_int(v->view.pad_value));
  cg_printf(line, ";");
  free(mask.s);
}

/* Partial accumulator `j` of `stage` plus the products terms[t] for t =
 * first, first + step, ... < end, added in turn: each addition in
 * parentheses, or `bare` (one product alone: acc + p). */
static void acc_update(cg_kernel *c, cg_buf *line, int stage, int j, ir_dtype dt, const ir_ref *terms, int first,
                       int end, int step, bool bare, char *const *space_idx) {
  acc_part(line, stage, j, c->acc_sub);
  cg_printf(line, " = (%s)(", cg_ctype(dt));
  for (int t = first; t < end && !bare; t += step) cg_printf(line, "(");
  acc_part(line, stage, j, c->acc_sub);
  for (int t = first; t < end; t += step) {
    cg_buf e = {0};
    render_value(c, &e, terms[t], space_idx, false);
    cg_printf(line, " + %s%s", e.s, bare ? "" : ")");
    free(e.s);
  }
  cg_printf(line, ");");
}

void cg_render_stmt(cg_kernel *c, sched_stmt_kind kind, int stage, char *const *space_idx) {
  const ir_node *root = ir_node_get(c->p->g, c->k->root);
  cg_buf v = {0}, line = {0};
  cg_statement_begin(c);
  c->depth++;
  if (kind == SCHED_STMT_INDEX) {
    const ir_node *gv = ir_node_get(c->p->g, c->k->gathers[stage]);
    char *gidx[IR_MAX_RANK];
    for (int j = 0; j < gv->shape.rank; j++)
      gidx[j] = c->k->gather_ids[stage][j] >= 0 ? space_idx[c->k->gather_ids[stage][j]] : "0";
    render_value(c, &v, gv->src[1], gidx, false);
    if (gv->view.gstrict) {
      cg_printf(&line, "g%d = (int64_t)%s;\n%*sif (g%d < 0 || g%d >= ", stage, v.s,
                2 * (c->depth - 1), "", stage, stage);
      D(&line, gv->view.gbound);
      cg_printf(&line, ") err = 1, g%d = 0;", stage);
      c->has_index = true;
    } else {
      cg_printf(&line, "g%d = (int64_t)%s;", stage, v.s);
    }
  } else if (kind == SCHED_STMT_INIT) {
    init_literal(&v, ir_node_get(c->p->g, c->k->stages[stage]));
    for (int j = 0; j < cg_acc_parts(c, stage); j++)
      cg_printf(&line, "%s", j ? " " : ""), acc_part(&line, stage, j, c->acc_sub), cg_printf(&line, " = %s;", v.s);
    if (cg_is_float_max(c, stage)) cg_printf(&line, " nan%d = 0;", stage);
  } else if (kind == SCHED_STMT_UPDATE) {
    const ir_node *r = ir_node_get(c->p->g, c->k->stages[stage]);
    ir_ref terms[SCHED_SUM_TERMS_MAX];
    /* A register block's step over a sum of products (the taps of a
     * strided per-tap convolution, summed over its channels) adds each
     * product to the accumulator in turn: one FMA per product, where adding
     * their sum took a multiply and an add more (3 taps: 4 vector ops for
     * 3 FMAs) */
    int nt = c->k->gemm.on ? sched_stage_terms(c->p, c->k, stage, terms) : 0;
    if (nt < 2) render_value(c, &v, r->src[0], space_idx, false);
    /* with partial accumulators (gm->parts), product t goes to sum t % parts */
    int parts = nt >= 2 ? cg_acc_parts(c, stage) : 1;
    if (nt >= 2 && c->one_term && c->term < nt) {
      /* one product of the step (emit.c: print_terms), the same addition
       * in the same order as the whole sum below makes it */
      acc_update(c, &line, stage, c->term % parts, r->dtype, terms, c->term, c->term + 1, 1, true, space_idx);
    } else if (nt >= 2) {
      for (int j = 0; j < parts; j++) {
        if (j) cg_printf(&line, "\n%*s", 2 * (c->depth - 1), "");
        acc_update(c, &line, stage, j, r->dtype, terms, j, nt, parts, false, space_idx);
      }
    } else if (cg_is_float_max(c, stage)) {
      /* the plain max (a reduction compilers vectorise) and, apart, whether a
       * NaN was seen: the stage reads as NaN then (render_value) */
      int m = c->nvars++;
      cg_line(&c->pre, c->depth, "const %s v%d = %s;", cg_ctype(r->dtype), m, v.s);
      cg_printf(&line, "acc%d = v%d > acc%d ? v%d : acc%d; nan%d |= v%d != v%d;", stage, m, stage,
                m, stage, stage, m, m);
    } else if (r->op == IR_MAX) {
      cg_printf(&line, "acc%d = max_%s(acc%d, %s);", stage, ir_dtype_name(r->dtype), stage, v.s);
      cg_need_helper(c->out, CG_HELPER_MAX, r->dtype);
    } else {
      if (c->k->stash == stage + 1) { /* kept for the final statement (sched.c, stash_summand) */
        cg_buf addr = {0};
        root_address(c, &addr, space_idx);
        cg_printf(&line, "b0[%s] = %s; ", addr.s, v.s);
        free(addr.s);
      }
      if (ir_dtype_is_float(r->dtype))
        cg_printf(&line, "acc%d%s = (%s)(acc%d%s %s %s);", stage, c->acc_sub, cg_ctype(r->dtype),
                  stage, c->acc_sub, r->op == IR_ADD ? "+" : "*", v.s);
      else
        cg_printf(&line, "acc%d%s = (%s)((%s)acc%d%s %s (%s)%s);", stage, c->acc_sub, cg_ctype(r->dtype),
                  wide_unsigned(r->dtype), stage, c->acc_sub, r->op == IR_ADD ? "+" : "*",
                  wide_unsigned(r->dtype), v.s);
    }
  } else {
    char *ridx[IR_MAX_RANK];
    for (int i = 0; i < root->shape.rank; i++)
      ridx[i] = c->k->root_axis[i] >= 0 ? space_idx[c->k->root_axis[i]] : "0";
    cg_buf addr = {0};
    root_address(c, &addr, space_idx);
    if (c->k->stash) {
      /* the summand the stage stored here: the root reads it at this very
       * element (the same index expressions), from the memo */
      cg_buf key = {0}, e = {0};
      for (int i = 0; i < root->shape.rank; i++) cg_printf(&key, "%s,", ridx[i]);
      if (!key.s) cg_printf(&key, "%s", "");
      cg_printf(&e, "b0[%s]", addr.s);
      bind_value(c, ir_node_get(c->p->g, c->k->stages[c->k->stash - 1])->src[0], key.s,
                 cg_ctype(root->dtype), e.s);
      free(e.s);
    }
    if (c->p->border_only && c->p->border_only[c->k->root]) {
      border_stmt(c, &line, addr.s, ridx);
    } else {
      render_value(c, &v, c->k->root, ridx, true);
      cg_printf(&line, "b0[%s] = %s;", addr.s, v.s);
    }
    free(addr.s);
  }
  statement_end(c, line.s);
  c->depth--;
  free(line.s);
  free(v.s);
}
