/* emit.c — prints kernels as C from their isl ASTs.
 *
 * Loops come from isl; statements are rendered by render_value, and every
 * address (plain buffer, view with strides/offset/mask, INDEX_COMPONENTS)
 * by render_address, so indexing is spelled in one place. */
#include "codegen_impl.h"

#include <isl/ast.h>
#include <isl/id.h>
#include <isl/val.h>
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

/* Is axis k of `v` read over its whole extent? (Bounds keep 0 <= lo <= hi
 * <= d, so for symbolic ones that is lo == 0 and hi == d.) */
static bool unmasked_axis(const ir_view *v, int k) {
  if (ir_dim_is_sym(v->lo[k]) || ir_dim_is_sym(v->hi[k]) || ir_dim_is_sym(v->shape.d[k]))
    return v->lo[k] == 0 && v->hi[k] == v->shape.d[k];
  return v->lo[k] <= 0 && v->hi[k] >= v->shape.d[k];
}

static void render_mask(cg_buf *o, const ir_view *v, char *const *idx) {
  bool first = true;
  for (int k = 0; k < v->shape.rank; k++) {
    if (unmasked_axis(v, k)) continue;
    cg_printf(o, "%s%s >= ", first ? "" : " && ", idx[k]);
    D(o, v->lo[k]);
    cg_printf(o, " && %s < ", idx[k]);
    D(o, v->hi[k]);
    first = false;
  }
}

static void render_value(cg_kernel *c, cg_buf *o, ir_ref r, char *const *idx, bool is_root);

/* A float max reduction: kept as a plain max plus a NaN flag nan<stage>. */
static bool is_float_max(const cg_kernel *c, int stage) {
  const ir_node *r = ir_node_get(c->p->g, c->k->stages[stage]);
  return r->op == IR_MAX && ir_dtype_is_float(r->dtype);
}

static void render_buffer_read(cg_kernel *c, cg_buf *o, ir_ref r, char *const *idx) {
  const ir_node *n = ir_node_get(c->p->g, r);
  int64_t st[IR_MAX_RANK];
  ir_contiguous_strides(&n->shape, st);
  cg_printf(o, "b%d[", cg_kernel_arg(c, c->p->buf_of[r]));
  render_address(o, 0, st, &n->shape, idx);
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
  if (n->view.masked) {
    cg_printf(o, "((");
    render_mask(o, &n->view, idx);
    cg_printf(o, ") ? ");
  }
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
  if (n->view.masked) {
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
  c->out->half = true;
  if (is_half(from)) {
    const char *f = from == IR_F16 ? "o2c_h2f" : "o2c_b2f";
    if (is_half(to))
      cg_printf(o, "%s(%s(%s))", to == IR_F16 ? "o2c_f2h" : "o2c_f2b", f, x);
    else if (to == IR_BOOL)
      cg_printf(o, "(%s(%s) != 0)", f, x);
    else if (!ir_dtype_is_float(to))
      cg_printf(o, "cast_f32_%s(%s(%s))", ir_dtype_name(to), f, x), cg_need_cast(c->out, IR_F32, to);
    else
      cg_printf(o, "((%s)%s(%s))", cg_ctype(to), f, x);
  } else if (from == IR_F32) {
    cg_printf(o, "%s(%s)", to == IR_F16 ? "o2c_f2h" : "o2c_f2b", x);
  } else {
    cg_printf(o, "%s((double)%s)", to == IR_F16 ? "o2c_d2h" : "o2c_d2b", x);
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
  case IR_MAX:
    cg_printf(o, "max_%s(%s, %s)", ir_dtype_name(n->dtype), a[0].s, a[1].s);
    cg_need_helper(c->out, n->dtype);
    break;
  case IR_IDIV:
    cg_printf(o, "idiv_%s(%s, %s)", ir_dtype_name(n->dtype), a[0].s, a[1].s);
    cg_need_helper(c->out, n->dtype);
    break;
  case IR_MOD:
    if (fl)
      cg_printf(o, "fmod%s(%s, %s)", fsuffix(n->dtype), a[0].s, a[1].s);
    else {
      cg_printf(o, "imod_%s(%s, %s)", ir_dtype_name(n->dtype), a[0].s, a[1].s);
      cg_need_helper(c->out, n->dtype);
    }
    break;
  case IR_AND: cg_printf(o, "((%s)(%s & %s))", T, a[0].s, a[1].s); break;
  case IR_OR: cg_printf(o, "((%s)(%s | %s))", T, a[0].s, a[1].s); break;
  case IR_XOR: cg_printf(o, "((%s)(%s ^ %s))", T, a[0].s, a[1].s); break;
  case IR_LT: cg_printf(o, "(%s < %s)", a[0].s, a[1].s); break;
  case IR_NEQ: cg_printf(o, "(%s != %s)", a[0].s, a[1].s); break;
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
  int var = c->nvars++;
  cg_line(&c->pre, c->depth, "const %s v%d = %s;", cg_ctype(n->dtype), var, e.s);
  free(e.s);
  if (c->nmemo == c->capmemo) {
    c->capmemo = c->capmemo ? 2 * c->capmemo : 16;
    c->memo = realloc(c->memo, (size_t)c->capmemo * sizeof *c->memo);
    if (!c->memo) abort();
  }
  c->memo[c->nmemo++] = (cg_memo){r, key.s, var};
  cg_printf(o, "v%d", var);
}

/* The value of node `r` at element `idx` of its shape. */
static void render_value(cg_kernel *c, cg_buf *o, ir_ref r, char *const *idx, bool is_root) {
  const ir_node *n = ir_node_get(c->p->g, r);
  if (!is_root && sched_gemm_packed_buf(c->k, r) >= 0) {
    render_panel_read(c, o, sched_gemm_packed_buf(c->k, r)); /* a one-byte weight read whole */
    return;
  }
  if (!is_root && c->p->buf_of[r] >= 0) {
    render_buffer_read(c, o, r, idx);
    return;
  }
  int stage = sched_stage_of(c->k, r);
  if (stage >= 0 && is_float_max(c, stage)) {
    cg_printf(o, "(nan%d ? %sNAN : acc%d)", stage, n->dtype == IR_F32 ? "" : "(double)", stage);
    return;
  }
  if (stage >= 0) {
    cg_printf(o, "acc%d%s", stage, c->acc_sub);
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

/* One statement at iteration `space_idx` (one expression per axis of the
 * kernel's space). */
static void statement_begin(cg_kernel *c) {
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

static void render_stmt(cg_kernel *c, sched_stmt_kind kind, int stage, char *const *space_idx) {
  const ir_node *root = ir_node_get(c->p->g, c->k->root);
  cg_buf v = {0}, line = {0};
  statement_begin(c);
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
    cg_printf(&line, "acc%d%s = %s;", stage, c->acc_sub, v.s);
    if (is_float_max(c, stage)) cg_printf(&line, " nan%d = 0;", stage);
  } else if (kind == SCHED_STMT_UPDATE) {
    const ir_node *r = ir_node_get(c->p->g, c->k->stages[stage]);
    render_value(c, &v, r->src[0], space_idx, false);
    if (is_float_max(c, stage)) {
      /* the plain max (a reduction compilers vectorise) and, apart, whether a
       * NaN was seen: the stage reads as NaN then (render_value) */
      int m = c->nvars++;
      cg_line(&c->pre, c->depth, "const %s v%d = %s;", cg_ctype(r->dtype), m, v.s);
      cg_printf(&line, "acc%d = v%d > acc%d ? v%d : acc%d; nan%d |= v%d != v%d;", stage, m, stage,
                m, stage, stage, m, m);
    } else if (r->op == IR_MAX) {
      cg_printf(&line, "acc%d = max_%s(acc%d, %s);", stage, ir_dtype_name(r->dtype), stage, v.s);
      cg_need_helper(c->out, r->dtype);
    } else {
      if (ir_dtype_is_float(r->dtype))
        cg_printf(&line, "acc%d%s = (%s)(acc%d%s %s %s);", stage, c->acc_sub, cg_ctype(r->dtype),
                  stage, c->acc_sub, r->op == IR_ADD ? "+" : "*", v.s);
      else
        cg_printf(&line, "acc%d = (%s)((%s)acc%d %s (%s)%s);", stage, cg_ctype(r->dtype),
                  wide_unsigned(r->dtype), stage, r->op == IR_ADD ? "+" : "*",
                  wide_unsigned(r->dtype), v.s);
    }
  } else {
    char *ridx[IR_MAX_RANK];
    int64_t st[IR_MAX_RANK];
    for (int i = 0; i < root->shape.rank; i++)
      ridx[i] = c->k->root_axis[i] >= 0 ? space_idx[c->k->root_axis[i]] : "0";
    cg_buf addr = {0};
    ir_contiguous_strides(&root->shape, st);
    render_address(&addr, 0, st, &root->shape, ridx);
    render_value(c, &v, c->k->root, ridx, true);
    cg_printf(&line, "b0[%s] = %s;", addr.s, v.s);
    free(addr.s);
  }
  statement_end(c, line.s);
  c->depth--;
  free(line.s);
  free(v.s);
}

static void print_expr(cg_buf *o, isl_ast_expr *e);

static void print_op(cg_buf *o, isl_ast_expr *e) {
  int n = isl_ast_expr_op_get_n_arg(e);
  isl_ast_expr *a[3] = {0};
  for (int i = 0; i < n && i < 3; i++) a[i] = isl_ast_expr_op_get_arg(e, i);
  static const struct {
    enum isl_ast_expr_op_type t;
    const char *s;
  } bin[] = {
      {isl_ast_expr_op_and, "&&"},   {isl_ast_expr_op_or, "||"},    {isl_ast_expr_op_add, "+"},
      {isl_ast_expr_op_sub, "-"},    {isl_ast_expr_op_mul, "*"},    {isl_ast_expr_op_div, "/"},
      {isl_ast_expr_op_pdiv_q, "/"}, {isl_ast_expr_op_pdiv_r, "%"}, {isl_ast_expr_op_zdiv_r, "%"},
      {isl_ast_expr_op_eq, "=="},    {isl_ast_expr_op_le, "<="},    {isl_ast_expr_op_lt, "<"},
      {isl_ast_expr_op_ge, ">="},    {isl_ast_expr_op_gt, ">"}};
  enum isl_ast_expr_op_type t = isl_ast_expr_op_get_type(e);
  const char *sym = NULL;
  for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++)
    if (bin[i].t == t) sym = bin[i].s;
  if (sym && n == 2) {
    cg_printf(o, "(");
    print_expr(o, a[0]);
    cg_printf(o, " %s ", sym);
    print_expr(o, a[1]);
    cg_printf(o, ")");
  } else if (t == isl_ast_expr_op_minus) {
    cg_printf(o, "(-");
    print_expr(o, a[0]);
    cg_printf(o, ")");
  } else if ((t == isl_ast_expr_op_max || t == isl_ast_expr_op_min) && n == 2) {
    cg_printf(o, "(");
    print_expr(o, a[0]);
    cg_printf(o, t == isl_ast_expr_op_max ? " > " : " < ");
    print_expr(o, a[1]);
    cg_printf(o, " ? ");
    print_expr(o, a[0]);
    cg_printf(o, " : ");
    print_expr(o, a[1]);
    cg_printf(o, ")");
  } else if (t == isl_ast_expr_op_fdiv_q) {
    cg_printf(o, "floord(");
    print_expr(o, a[0]);
    cg_printf(o, ", ");
    print_expr(o, a[1]);
    cg_printf(o, ")");
  } else if ((t == isl_ast_expr_op_cond || t == isl_ast_expr_op_select) && n == 3) {
    cg_printf(o, "(");
    print_expr(o, a[0]);
    cg_printf(o, " ? ");
    print_expr(o, a[1]);
    cg_printf(o, " : ");
    print_expr(o, a[2]);
    cg_printf(o, ")");
  } else {
    char *s = isl_ast_expr_to_C_str(e);
    cg_printf(o, "%s", s);
    free(s);
  }
  for (int i = 0; i < 3; i++) isl_ast_expr_free(a[i]);
}

static void print_expr(cg_buf *o, isl_ast_expr *e) {
  switch (isl_ast_expr_get_type(e)) {
  case isl_ast_expr_id: {
    isl_id *id = isl_ast_expr_get_id(e);
    cg_printf(o, "%s", isl_id_get_name(id));
    isl_id_free(id);
    break;
  }
  case isl_ast_expr_int: {
    isl_val *v = isl_ast_expr_get_val(e);
    cg_printf(o, "%lld", (long long)isl_val_get_num_si(v));
    isl_val_free(v);
    break;
  }
  default: print_op(o, e);
  }
}

static void arg_str(cg_buf *o, isl_ast_expr *call, int i) {
  isl_ast_expr *a = isl_ast_expr_op_get_arg(call, i);
  print_expr(o, a);
  isl_ast_expr_free(a);
}

/* A statement of a register-blocked kernel: strip-mined axes come as
 * (tile, position in tile) argument pairs (scheduler/tile.c). */
static void print_tiled_user(cg_kernel *c, isl_ast_expr *call, sched_stmt_kind kind, int stage) {
  const sched_kernel *k = c->k;
  const sched_gemm *gm = &k->gemm;
  bool all = kind == SCHED_STMT_UPDATE;
  const int *ax = all ? k->axes : k->outer;
  int nax = all ? k->naxes : k->nouter, arg = 1;
  char *idx[IR_MAX_RANK];
  cg_buf val[IR_MAX_RANK] = {{0}}, tile = {0}, pos[2] = {{0}}, sub = {0}, mtile = {0};
  for (int i = 0; i < IR_MAX_RANK; i++) idx[i] = "0";
  for (int i = 0; i < nax; i++) {
    int a = ax[i], t = a == gm->n ? gm->nr : a == gm->m ? gm->mr : 0;
    if (!t) {
      arg_str(&val[i], call, arg++);
    } else {
      cg_buf *p = &pos[a == gm->n];
      if (a == gm->n)
        arg_str(&tile, call, arg++);
      else
        arg_str(&val[i], call, arg), arg_str(&mtile, call, arg++);
      arg_str(p, call, arg++);
      const char *ts = a == gm->n ? tile.s : val[i].s;
      cg_buf v = {0};
      cg_printf(&v, "(%d * %s + %s)", t, ts, p->s);
      free(val[i].s);
      val[i] = v;
    }
    idx[a] = val[i].s;
  }
  cg_printf(&sub, "[%s][%s]", gm->m >= 0 ? pos[0].s : "0", pos[1].s);
  if (kind == SCHED_STMT_LOAD || kind == SCHED_STMT_SAVE) {
    /* between slices of k: the block from or to its slot in the partial sums */
    if (kind == SCHED_STMT_LOAD)
      cg_line(c->body, c->depth, "acc%d%s = part%d[%s]%s;", stage, sub.s, stage, mtile.s, sub.s);
    else
      cg_line(c->body, c->depth, "part%d[%s]%s = acc%d%s;", stage, mtile.s, sub.s, stage, sub.s);
  } else {
    c->acc_sub = sub.s, c->col_tile = tile.s, c->col = pos[1].s, c->red = all ? idx[gm->k] : NULL;
    render_stmt(c, kind, stage, idx);
    c->acc_sub = "", c->col_tile = c->col = c->red = NULL;
  }
  for (int i = 0; i < nax; i++) free(val[i].s);
  free(tile.s), free(pos[0].s), free(pos[1].s), free(sub.s), free(mtile.s);
}

static void print_user(cg_kernel *c, isl_ast_node *node) {
  isl_ast_expr *call = isl_ast_node_user_get_expr(node);
  isl_ast_expr *fn = isl_ast_expr_op_get_arg(call, 0);
  isl_id *id = isl_ast_expr_get_id(fn);
  int stage;
  sched_stmt_kind kind = sched_stmt_of(isl_id_get_name(id), &stage);
  isl_id_free(id);
  isl_ast_expr_free(fn);
  if (c->k->gemm.on) {
    print_tiled_user(c, call, kind, stage);
    isl_ast_expr_free(call);
    return;
  }
  /* domain dimensions -> axes of the iteration space */
  bool all = kind == SCHED_STMT_UPDATE || (kind == SCHED_STMT_FINAL && c->k->final_full);
  /* X<i>, I<i> and F over the outer axes take the outer axes as arguments */
  const int *ax = all ? c->k->axes : c->k->outer;
  int nax = all ? c->k->naxes : c->k->nouter;
  char *idx[IR_MAX_RANK];
  for (int i = 0; i < IR_MAX_RANK; i++) idx[i] = "0";
  cg_buf args[IR_MAX_RANK] = {{0}};
  for (int i = 0; i < nax; i++) {
    isl_ast_expr *a = isl_ast_expr_op_get_arg(call, i + 1);
    print_expr(&args[i], a);
    isl_ast_expr_free(a);
    idx[ax[i]] = args[i].s;
  }
  render_stmt(c, kind, stage, idx);
  for (int i = 0; i < nax; i++) free(args[i].s);
  isl_ast_expr_free(call);
}

/* The innermost loop of a sum accumulates in a scalar: let the compiler
 * vectorise it by reassociating that sum (O2C_SIMD_SUM, see program.c). */
/* Is the body of `loop` statements only (no loop inside)? */
static bool innermost(isl_ast_node *loop) {
  isl_ast_node *body = isl_ast_node_for_get_body(loop);
  bool only = isl_ast_node_get_type(body) == isl_ast_node_user;
  if (isl_ast_node_get_type(body) == isl_ast_node_block) {
    isl_ast_node_list *l = isl_ast_node_block_get_children(body);
    only = true;
    for (int i = 0; i < isl_ast_node_list_n_ast_node(l) && only; i++) {
      isl_ast_node *ch = isl_ast_node_list_get_ast_node(l, i);
      only = isl_ast_node_get_type(ch) == isl_ast_node_user;
      isl_ast_node_free(ch);
    }
    isl_ast_node_list_free(l);
  }
  isl_ast_node_free(body);
  return only;
}

static void simd_pragma(cg_kernel *c, isl_ast_node *loop) {
  if (c->k->gemm.on) {
    /* the columns of a register block: vectorised, never peeled into
     * scalars first (short loops are, and then get vectorised badly) */
    if (innermost(loop)) cg_line(c->body, c->depth, "O2C_SIMD"), c->out->simd = true;
    return;
  }
  isl_ast_node *body = isl_ast_node_for_get_body(loop);
  if (isl_ast_node_get_type(body) == isl_ast_node_user) {
    isl_ast_expr *call = isl_ast_node_user_get_expr(body);
    isl_ast_expr *fn = isl_ast_expr_op_get_arg(call, 0);
    isl_id *id = isl_ast_expr_get_id(fn);
    int stage;
    sched_stmt_kind kind = sched_stmt_of(isl_id_get_name(id), &stage);
    if (kind == SCHED_STMT_UPDATE && ir_node_get(c->p->g, c->k->stages[stage])->op == IR_ADD &&
        ir_dtype_is_float(ir_node_get(c->p->g, c->k->stages[stage])->dtype)) {
      cg_line(c->body, c->depth, "O2C_SIMD_SUM(acc%d)", stage);
      c->out->simd = true;
    } else if (kind == SCHED_STMT_UPDATE && is_float_max(c, stage)) {
      cg_line(c->body, c->depth, "O2C_SIMD_MAX(acc%d, nan%d)", stage, stage);
      c->out->simd = true;
    }
    isl_id_free(id);
    isl_ast_expr_free(fn);
    isl_ast_expr_free(call);
  }
  isl_ast_node_free(body);
}

/* The outermost loop of a kernel runs over outer axes only (every
 * statement of the kernel is inside it; iterations write disjoint outputs
 * and read inputs), so it is parallel; in a register-blocked kernel it runs
 * over tiles, and isl has checked that no dependence leaves a tile
 * (scheduler/tile.c). Only kernels with enough work get threads: a parallel
 * region costs microseconds. Tiles are handed out one at a time: cores of a
 * VM need not run at the same speed, and a tile is tens of microseconds. */
/* Adds the kind of user statement `node` (if it is one) to the bit set `kinds`. */
static isl_bool note_kind(__isl_keep isl_ast_node *node, void *kinds) {
  if (isl_ast_node_get_type(node) != isl_ast_node_user) return isl_bool_true;
  isl_ast_expr *call = isl_ast_node_user_get_expr(node);
  isl_ast_expr *fn = isl_ast_expr_op_get_arg(call, 0);
  isl_id *id = isl_ast_expr_get_id(fn);
  int stage;
  *(unsigned *)kinds |= 1u << sched_stmt_of(isl_id_get_name(id), &stage);
  isl_id_free(id);
  isl_ast_expr_free(fn);
  isl_ast_expr_free(call);
  return isl_bool_false;
}

/* In a register-blocked kernel only a loop over tiles may be threaded: its
 * body holds every statement of a tile (clear, sum, store). With a single
 * tile there is no such loop, and the loops at the top are the k loop (which
 * carries the accumulators) and the point loops. */
static bool whole_tiles(isl_ast_node *loop) {
  unsigned kinds = 0;
  isl_ast_node_foreach_descendant_top_down(loop, note_kind, &kinds);
  return (kinds & (1u << SCHED_STMT_UPDATE)) && (kinds & (1u << SCHED_STMT_FINAL));
}

/* Threads only where they pay: a parallel region costs microseconds (fork
 * and join; far more when the other core is busy), so a kernel gets them
 * when its estimated time on one core is at least 20 us: its FLOPs at 64
 * per ns in a register block, 16 elsewhere, plus its compulsory bytes at
 * 16 per ns (symbolic sizes at their reference point). The tiny LLaMA
 * (0.035 ms in all) then runs on one thread; a decode step's projections
 * (weights streamed, 2.4 MB each) keep two. */
static bool wants_threads(const cg_kernel *c) {
  if (c->threads < 2 || !c->k->nouter || ir_dim_ref(c->p->g, c->k->space.d[c->k->outer[0]]) < 2)
    return false;
  int64_t flops, bytes;
  sched_kernel_cost(c->p, c->k, &flops, &bytes);
  double ns = (double)ir_dim_ref(c->p->g, flops) / (c->k->gemm.on ? 64 : 16) +
              (double)ir_dim_ref(c->p->g, bytes) / 16;
  return ns >= 20000 || c->threads_all;
}

static void parallel_pragma(cg_kernel *c, bool rows) {
  cg_buf priv = {0};
  for (int i = 0; i < c->k->nstages && !rows; i++) {
    cg_printf(&priv, "%sacc%d", priv.n ? ", " : "", i);
    if (c->k->gemm.on && c->k->gemm.kc) cg_printf(&priv, ", part%d", i);
    if (is_float_max(c, i)) cg_printf(&priv, ", nan%d", i);
  }
  for (int i = 0; i < c->k->ngathers && !rows; i++)
    cg_printf(&priv, "%sg%d", priv.n ? ", " : "", i);
  cg_line(c->body, 0, "#ifdef _OPENMP");
  /* O2C_ERR_CLAUSE: filled in once the kernel is printed (program.c) */
  cg_line(c->body, c->depth,
          "#pragma omp parallel for num_threads(%d) schedule(%s)%s%s%sO2C_ERR_CLAUSE", c->threads,
          c->k->gemm.on ? "dynamic, 1" : "static", priv.n ? " private(" : "", priv.n ? priv.s : "",
          priv.n ? ")" : "");
  cg_line(c->body, 0, "#endif");
  free(priv.s);
}

static void print_node(cg_kernel *c, isl_ast_node *node);

/* Finds the first user statement of kind `want` under `node`. */
typedef struct {
  sched_stmt_kind want;
  isl_ast_expr *call;
} find_stmt;

static isl_bool find_user(__isl_keep isl_ast_node *node, void *user) {
  find_stmt *f = user;
  if (f->call) return isl_bool_false;
  if (isl_ast_node_get_type(node) != isl_ast_node_user) return isl_bool_true;
  isl_ast_expr *call = isl_ast_node_user_get_expr(node);
  isl_ast_expr *fn = isl_ast_expr_op_get_arg(call, 0);
  isl_id *id = isl_ast_expr_get_id(fn);
  int stage;
  if (sched_stmt_of(isl_id_get_name(id), &stage) == f->want)
    f->call = call;
  else
    isl_ast_expr_free(call);
  isl_id_free(id);
  isl_ast_expr_free(fn);
  return isl_bool_false;
}

/* At the top of a register block's k loop: each packed weight's line for
 * this k in the next column panel is fetched into cache, so the first row
 * block of that panel does not wait for memory (where the scheduler asks
 * for it: gemm.c). The next panel of the last one is itself. */
static void prefetch_next_panels(cg_kernel *c, isl_ast_node *kloop) {
  const sched_kernel *k = c->k;
  const sched_gemm *gm = &k->gemm;
  int64_t K = k->space.d[gm->k], N = k->space.d[gm->n];
  if (!gm->prefetch || !gm->npacked || ir_dim_is_sym(K) || ir_dim_is_sym(N)) return;
  int64_t npan = (N + gm->nr - 1) / gm->nr;
  if (npan < 2) return;
  find_stmt f = {SCHED_STMT_UPDATE, NULL};
  isl_ast_node_foreach_descendant_top_down(kloop, find_user, &f);
  if (!f.call) return;
  cg_buf tile = {0}, red = {0};
  for (int i = 0, arg = 1; i < k->naxes; i++) {
    int a = k->axes[i];
    if (a == gm->n) arg_str(&tile, f.call, arg);
    if (a == gm->k) arg_str(&red, f.call, arg);
    arg += a == gm->n || a == gm->m ? 2 : 1;
  }
  isl_ast_expr_free(f.call);
  for (int i = 0; i < gm->npacked; i++) {
    bool seen = false;
    for (int j = 0; j < i; j++) seen |= gm->packed_buf[j] == gm->packed_buf[i];
    if (seen || !tile.s || !red.s) continue;
    cg_line(c->body, c->depth, "O2C_PREFETCH(&b%d[%lld * (%s + 1 < %lld ? %s + 1 : %s) + %d * %s]);",
            cg_kernel_arg(c, gm->packed_buf[i]), (long long)(K * gm->nr), tile.s,
            (long long)npan, tile.s, tile.s, gm->nr, red.s);
    c->out->prefetch = true;
  }
  free(tile.s), free(red.s);
}

/* The threaded loop of a kernel that is not register-blocked, its body put
 * in the kernel's rows function (c->rows; program.c names it): gcc loses
 * the restrict of pointers captured into an OpenMP region, and then does
 * not vectorise some of the loops inside (the softmax's last loop, at one
 * third of its speed); as parameters of a function they keep it. */
static void print_rows_loop(cg_kernel *c, isl_ast_node *node, const char *it, const char *init,
                            const char *cond, const char *inc) {
  parallel_pragma(c, true);
  cg_line(c->body, c->depth, "for (int64_t %s = %s; %s; %s += %s)", it, init, cond, it, inc);
  cg_buf *outer = c->body;
  c->body = c->rows;
  c->in_rows = true; /* its loops are printed at depth 1 again, but not threaded */
  isl_ast_node *body = isl_ast_node_for_get_body(node);
  print_node(c, body);
  isl_ast_node_free(body);
  c->in_rows = false;
  c->body = outer;
  /* O2C_ROWS_FN, O2C_ROWS_ARGS: the function and the kernel's parameters (program.c) */
  if (c->has_index)
    cg_line(c->body, c->depth + 1, "if (O2C_ROWS_FN(O2C_ROWS_ARGS, %s)) err = 1;", it);
  else
    cg_line(c->body, c->depth + 1, "O2C_ROWS_FN(O2C_ROWS_ARGS, %s);", it);
  snprintf(c->rows_iter, sizeof c->rows_iter, "%s", it);
  c->rows_split = true;
}

static void print_node(cg_kernel *c, isl_ast_node *node) {
  switch (isl_ast_node_get_type(node)) {
  case isl_ast_node_for: {
    isl_ast_expr *it = isl_ast_node_for_get_iterator(node), *init = isl_ast_node_for_get_init(node),
                 *cond = isl_ast_node_for_get_cond(node), *inc = isl_ast_node_for_get_inc(node);
    cg_buf i = {0}, b = {0}, cd = {0}, s = {0};
    print_expr(&i, it);
    print_expr(&b, init);
    print_expr(&cd, cond);
    print_expr(&s, inc);
    /* OpenMP's canonical loop form wants the bare comparison */
    if (cd.s[0] == '(' && cd.s[cd.n - 1] == ')') {
      memmove(cd.s, cd.s + 1, cd.n - 2);
      cd.s[cd.n - 2] = 0;
    }
    bool threads = c->depth == 1 && !c->in_rows && !c->in_slices && c->worth_threads &&
                   (!c->k->gemm.on || whole_tiles(node));
    if (threads && c->rows && !c->k->gemm.on) {
      print_rows_loop(c, node, i.s, b.s, cd.s, s.s);
      free(i.s), free(b.s), free(cd.s), free(s.s);
      isl_ast_expr_free(it), isl_ast_expr_free(init), isl_ast_expr_free(cond),
          isl_ast_expr_free(inc);
      break;
    }
    bool kloop = c->k_loop;
    if (!kloop) simd_pragma(c, node);
    c->k_loop = false;
    if (threads) parallel_pragma(c, false);
    cg_line(c->body, c->depth, "for (int64_t %s = %s; %s; %s += %s) {", i.s, b.s, cd.s, i.s, s.s);
    free(i.s), free(b.s), free(cd.s), free(s.s);
    isl_ast_expr_free(it), isl_ast_expr_free(init), isl_ast_expr_free(cond), isl_ast_expr_free(inc);
    isl_ast_node *body = isl_ast_node_for_get_body(node);
    c->depth++;
    if (kloop && c->k->gemm.on) prefetch_next_panels(c, node);
    print_node(c, body);
    c->depth--;
    isl_ast_node_free(body);
    cg_line(c->body, c->depth, "}");
    break;
  }
  case isl_ast_node_block: {
    isl_ast_node_list *l = isl_ast_node_block_get_children(node);
    for (int i = 0; i < isl_ast_node_list_n_ast_node(l); i++) {
      isl_ast_node *ch = isl_ast_node_list_get_ast_node(l, i);
      print_node(c, ch);
      isl_ast_node_free(ch);
    }
    isl_ast_node_list_free(l);
    break;
  }
  case isl_ast_node_if: {
    isl_ast_expr *cond = isl_ast_node_if_get_cond(node);
    cg_buf cd = {0};
    print_expr(&cd, cond);
    isl_ast_expr_free(cond);
    cg_line(c->body, c->depth, "if (%s) {", cd.s);
    free(cd.s);
    isl_ast_node *t = isl_ast_node_if_get_then_node(node);
    c->depth++;
    print_node(c, t);
    c->depth--;
    isl_ast_node_free(t);
    if (isl_ast_node_if_has_else_node(node)) {
      cg_line(c->body, c->depth, "} else {");
      isl_ast_node *e = isl_ast_node_if_get_else_node(node);
      c->depth++;
      print_node(c, e);
      c->depth--;
      isl_ast_node_free(e);
    }
    cg_line(c->body, c->depth, "}");
    break;
  }
  case isl_ast_node_user: print_user(c, node); break;
  case isl_ast_node_mark: {
    isl_id *id = isl_ast_node_mark_get_id(node);
    isl_ast_node *b = isl_ast_node_mark_get_node(node);
    if (!strcmp(isl_id_get_name(id), SCHED_MARK_REDUCTION)) {
      cg_line(c->body, c->depth, "O2C_NOUNROLL");
      c->out->nounroll = true;
      c->k_loop = isl_ast_node_get_type(b) == isl_ast_node_for;
    }
    bool sliced = !strcmp(isl_id_get_name(id), SCHED_MARK_KSLICES), in_slices = c->in_slices;
    c->in_slices |= sliced;
    isl_id_free(id);
    print_node(c, b);
    c->in_slices = in_slices;
    isl_ast_node_free(b);
    break;
  }
  default: c->error = true;
  }
}

int cg_kernel_body(cg_kernel *c) {
  c->depth = 1;
  c->acc_sub = "";
  c->worth_threads = wants_threads(c);
  cg_buf decl = {0}, main = {0}, *out = c->body;
  for (int i = 0; i < c->k->nstages; i++) {
    const char *T = cg_ctype(ir_node_get(c->p->g, c->k->stages[i])->dtype);
    if (c->k->gemm.on && c->k->gemm.kc)
      cg_line(&decl, 1, "%s part%d[%d][%d][%d];", T, i, c->k->gemm.mtiles, c->k->gemm.mr,
              c->k->gemm.nr);
    if (c->k->gemm.on)
      cg_line(&decl, 1, "%s acc%d[%d][%d];", T, i, c->k->gemm.mr, c->k->gemm.nr);
    else
      cg_line(&decl, 1, "%s acc%d;", T, i);
    if (is_float_max(c, i)) cg_line(&decl, 1, "int nan%d;", i);
  }
  for (int i = 0; i < c->k->ngathers; i++) cg_line(&decl, 1, "int64_t g%d;", i);
  /* a rows function only for a kernel that is one loop nest */
  if (isl_ast_node_get_type(c->k->ast) != isl_ast_node_for) c->rows = NULL;
  cg_buf rows = {0}, *rows_out = c->rows;
  if (c->rows) c->rows = &rows;
  c->body = &main;
  print_node(c, c->k->ast);
  c->body = out;
  cg_printf(c->rows_split ? rows_out : out, "%s", decl.s ? decl.s : "");
  if (c->rows_split) cg_printf(rows_out, "%s", rows.s ? rows.s : "");
  cg_printf(out, "%s", main.s ? main.s : "");
  c->rows = rows_out;
  free(decl.s), free(main.s), free(rows.s);
  statement_begin(c);
  free(c->memo);
  free(c->pre.s);
  return c->error ? -1 : 0;
}
