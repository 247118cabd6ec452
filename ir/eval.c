/* eval.c — a plain interpreter of the primitives, for compile-time
 * folding (shape sub-graphs, constant chains) and as a reference in tests.
 * Floating types compute in double, integer types in int64; each node's
 * result is stored in its own dtype, so rounding matches generated code. */
#include "ir_impl.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

/* One ir_eval may allocate at most this much for intermediate values: half
 * the machine's RAM. A hostile model must get an error, not an OOM kill. */
static size_t eval_budget(void) {
  static size_t b;
  if (!b) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    b = pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 2 : (size_t)1 << 31;
  }
  return b;
}

double ir_elem_f(ir_dtype t, const void *b, int64_t i) {
  switch (t) {
  case IR_F32: return ((const float *)b)[i];
  case IR_F64: return ((const double *)b)[i];
  case IR_F16: case IR_BF16: return ir_half_to_double(t, ((const uint16_t *)b)[i]);
  default: return (double)ir_elem_i(t, b, i);
  }
}

int64_t ir_elem_i(ir_dtype t, const void *b, int64_t i) {
  switch (t) {
  case IR_I8: return ((const int8_t *)b)[i];
  case IR_I16: return ((const int16_t *)b)[i];
  case IR_I32: return ((const int32_t *)b)[i];
  case IR_I64: return ((const int64_t *)b)[i];
  case IR_U8: case IR_BOOL: return ((const uint8_t *)b)[i];
  case IR_U16: return ((const uint16_t *)b)[i];
  case IR_U32: return ((const uint32_t *)b)[i];
  case IR_U64: return (int64_t)((const uint64_t *)b)[i];
  case IR_F32: case IR_F64: case IR_F16: case IR_BF16: {
    double v = ir_elem_f(t, b, i);
    if (v != v || v >= 9.2e18 || v <= -9.2e18) return 0;
    return (int64_t)v;
  }
  default: return 0;
  }
}

void ir_elem_set_i(ir_dtype t, void *b, int64_t i, int64_t v) {
  switch (t) {
  case IR_I8: ((int8_t *)b)[i] = (int8_t)v; break;
  case IR_I16: ((int16_t *)b)[i] = (int16_t)v; break;
  case IR_I32: ((int32_t *)b)[i] = (int32_t)v; break;
  case IR_I64: ((int64_t *)b)[i] = v; break;
  case IR_U8: ((uint8_t *)b)[i] = (uint8_t)v; break;
  case IR_BOOL: ((uint8_t *)b)[i] = v != 0; break;
  case IR_U16: ((uint16_t *)b)[i] = (uint16_t)v; break;
  case IR_F16: case IR_BF16: ((uint16_t *)b)[i] = ir_half_from_double(t, (double)v); break;
  case IR_U32: ((uint32_t *)b)[i] = (uint32_t)v; break;
  case IR_U64: ((uint64_t *)b)[i] = (uint64_t)v; break;
  case IR_F32: ((float *)b)[i] = (float)v; break;
  case IR_F64: ((double *)b)[i] = (double)v; break;
  default: break;
  }
}

void ir_elem_set_f(ir_dtype t, void *b, int64_t i, double v) {
  if (t == IR_F32) ((float *)b)[i] = (float)v;
  else if (t == IR_F64) ((double *)b)[i] = v;
  else if (t == IR_BOOL) ((uint8_t *)b)[i] = v != 0;
  else if (t == IR_F16 || t == IR_BF16) ((uint16_t *)b)[i] = ir_half_from_double(t, v);
  else ir_elem_set_i(t, b, i, (v != v || fabs(v) >= 9.2e18) ? 0 : (int64_t)v);
}

bool ir_is_const(const ir_graph *g, ir_ref r) {
  return r >= 0 && r < g->nnodes && g->nodes[r].is_const;
}

static void unflatten(const ir_shape *s, int64_t f, int64_t *idx) {
  for (int k = s->rank - 1; k >= 0; k--) {
    idx[k] = s->d[k] ? f % s->d[k] : 0;
    f = s->d[k] ? f / s->d[k] : 0;
  }
}

static double fmax_nan(double a, double b) {
  return (a > b || a != a) ? a : b;
}

static double op_f(ir_op op, double a, double b) {
  switch (op) {
  case IR_NEG: return -a;
  case IR_RECIP: return 1.0 / a;
  case IR_SQRT: return sqrt(a);
  case IR_EXP2: return exp2(a);
  case IR_LOG2: return log2(a);
  case IR_SIN: return sin(a);
  case IR_ADD: return a + b;
  case IR_MUL: return a * b;
  case IR_MAX: return fmax_nan(a, b);
  case IR_MOD: return fmod(a, b);
  default: return 0;
  }
}

/* An unmasked view copied out in row-major order: an odometer over the
 * view's index instead of a division per element (weights of hundreds of
 * MB are repacked through here). */
static void view_copy(const ir_view *v, const void *src, void *dst, size_t es) {
  int64_t N = ir_shape_numel(&v->shape), idx[IR_MAX_RANK] = {0}, a = v->offset;
  int r = v->shape.rank;
  for (int64_t i = 0; i < N; i++) {
    switch (es) {
    case 1: ((uint8_t *)dst)[i] = ((const uint8_t *)src)[a]; break;
    case 2: ((uint16_t *)dst)[i] = ((const uint16_t *)src)[a]; break;
    case 4: ((uint32_t *)dst)[i] = ((const uint32_t *)src)[a]; break;
    default: ((uint64_t *)dst)[i] = ((const uint64_t *)src)[a]; break;
    }
    for (int k = r - 1; k >= 0; k--) {
      a += v->stride[k];
      if (++idx[k] < v->shape.d[k]) break;
      a -= v->stride[k] * v->shape.d[k];
      idx[k] = 0;
    }
  }
}

static int64_t op_i(ir_op op, int64_t a, int64_t b) {
  switch (op) {
  case IR_NEG: return (int64_t)(0 - (uint64_t)a);
  case IR_NOT: return !a;
  case IR_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
  case IR_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
  case IR_MAX: return a > b ? a : b;
  case IR_IDIV: return b == 0 || (b == -1 && a == INT64_MIN) ? 0 : a / b;
  case IR_MOD: return b == 0 || b == -1 ? 0 : a % b;
  case IR_AND: return a & b;
  case IR_OR: return a | b;
  case IR_XOR: return a ^ b;
  default: return 0;
  }
}

typedef struct {
  ir_graph *g;
  bool sym; /* the graph has symbols: int64 values may be symbolic dimensions */
  void **memo;
  size_t used;   /* bytes allocated for memo */
  ir_ref *touched; /* the memo entries set, to free and clear them */
  size_t ntouched, cap;
} evalctx;

/* a / b truncated toward zero (ONNX's integer Div, as C divides) for a
 * symbolic a and a plain b that do not divide: 0 where the graph proves
 * |a| < |b| (a U-Net's (skip - upsampled) // 2 with both from one W: in
 * {-1, 0}), else a floor symbol where the sign of a is proven. */
static bool trunc_div(ir_graph *g, int64_t a, int64_t b, int64_t *out) {
  if (!ir_dim_is_sym(a) || ir_dim_is_sym(b) || b == 0 || b == INT64_MIN) return false;
  int64_t m = b > 0 ? b : -b, q = IR_DIM_INVALID;
  unsigned sign = ir_dim_cmp(g, a, 0);
  if (ir_dim_cmp(g, a, -m) == IR_CMP_GT && ir_dim_cmp(g, a, m) == IR_CMP_LT) q = 0;
  else if (!(sign & IR_CMP_LT)) q = ir_dim_floordiv(g, a, m);
  else if (!(sign & IR_CMP_GT)) {
    q = ir_dim_floordiv(g, ir_dim_neg(a), m);
    if (q != IR_DIM_INVALID) q = ir_dim_neg(q);
  }
  if (q == IR_DIM_INVALID) return false;
  *out = b > 0 ? q : ir_dim_neg(q);
  return true;
}

/* Integer op `op` on values that may be symbolic dimensions (tags). Shape
 * arithmetic of exports (Shape -> Gather -> Mul -> Concat, Equal(shape, -1))
 * reaches here with tags: +, -, *, exact division and the comparisons the
 * graph can decide are computed symbolically; anything else is an error,
 * never a guess. A plain result that falls in the tag range is refused, so
 * that a model cannot forge a symbol. */
static int iop(evalctx *c, ir_op op, int64_t a, int64_t b, int64_t *out) {
  if (!c->sym || (!ir_dim_is_sym(a) && !ir_dim_is_sym(b))) {
    *out = op == IR_LT ? a < b : op == IR_NEQ ? a != b : op_i(op, a, b);
    if (c->sym && ir_dim_is_sym(*out))
      return ir_fail(c->g, "an integer result (%lld) falls in the range reserved for symbolic dimensions",
                     (long long)*out);
    return 0;
  }
  char x[96], y[96];
  ir_dim_str(a, x, sizeof x);
  ir_dim_str(b, y, sizeof y);
  unsigned k = op == IR_MAX || op == IR_LT || op == IR_NEQ ? ir_dim_cmp(c->g, a, b) : 0;
  int64_t r = 0;
  switch (op) {
  case IR_NEG: r = ir_dim_neg(a); break;
  case IR_ADD: r = ir_dim_add(a, b); break;
  case IR_MUL: r = ir_dim_mul(a, b); break;
  case IR_IDIV:
    if (!ir_dim_div_exact(a, b, &r) && !trunc_div(c->g, a, b, &r))
      return ir_fail(c->g, "cannot divide %s by %s exactly", x, y);
    break;
  case IR_MOD:
    if (ir_dim_is_sym(b) || !ir_dim_div_exact(a, b, &r)) return ir_fail(c->g, "cannot compute %s mod %s", x, y);
    r = 0;
    break;
  case IR_MAX:
    if (!(k & IR_CMP_LT)) r = a;
    else if (!(k & IR_CMP_GT)) r = b;
    else return ir_fail(c->g, "cannot decide max(%s, %s)", x, y);
    break;
  case IR_LT:
    if (k == IR_CMP_LT || !(k & IR_CMP_LT)) r = k == IR_CMP_LT;
    else return ir_fail(c->g, "cannot decide whether %s < %s", x, y);
    break;
  case IR_NEQ:
    if (k == IR_CMP_EQ || !(k & IR_CMP_EQ)) r = k != IR_CMP_EQ;
    else return ir_fail(c->g, "cannot decide whether %s == %s", x, y);
    break;
  default: return ir_fail(c->g, "%s of a symbolic dimension (%s) is not supported", ir_op_name(op), x);
  }
  if (!ir_dim_valid(r)) return ir_fail(c->g, "symbolic arithmetic overflows");
  *out = r;
  return 0;
}

/* A symbolic value may only stay int64 (a cast elsewhere would lose it). */
static int check_cast(evalctx *c, ir_dtype from, ir_dtype to, const void *src, int64_t i) {
  if (!c->sym || from != IR_I64 || to == IR_I64 || !ir_dim_is_sym(ir_elem_i(from, src, i))) return 0;
  char x[96];
  ir_dim_str(ir_elem_i(from, src, i), x, sizeof x);
  return ir_fail(c->g, "the symbolic value %s cannot be converted to %s", x, ir_dtype_name(to));
}

/* The value of an already evaluated node (a constant's own data). */
static const void *value_of(evalctx *c, ir_ref r) {
  const ir_node *n = &c->g->nodes[r];
  return n->op == IR_ALLOCATE ? n->data : c->memo[r];
}

/* Elements of one node whose sources are all evaluated. */
static int eval_compute(evalctx *c, const ir_node *n, void *out) {
  int64_t N = ir_shape_numel(&n->shape), idx[IR_MAX_RANK];
  const void *s[3] = {0};
  for (int k = 0; k < n->nsrc; k++)
    if (!(s[k] = value_of(c, n->src[k]))) return -1;
  ir_dtype st = n->nsrc ? c->g->nodes[n->src[0]].dtype : n->dtype;
  if (n->reduce) {
    const ir_node *x = &c->g->nodes[n->src[0]];
    double init = n->op == IR_ADD ? 0 : n->op == IR_MUL ? 1 : ir_dtype_lowest(n->dtype);
    bool fl = ir_dtype_is_float(n->dtype);
    for (int64_t i = 0; i < N; i++)
      if (fl || n->op != IR_MAX) ir_elem_set_f(n->dtype, out, i, init);
      else ir_elem_set_i(n->dtype, out, i, n->dtype == IR_I64 ? INT64_MIN : (int64_t)init);
    int64_t XN = ir_shape_numel(&x->shape);
    for (int64_t i = 0; i < XN; i++) {
      unflatten(&x->shape, i, idx);
      int64_t o = 0;
      for (int k = 0; k < n->shape.rank; k++) o = o * n->shape.d[k] + (n->shape.d[k] == 1 ? 0 : idx[k]);
      int64_t r;
      if (fl) ir_elem_set_f(n->dtype, out, o, op_f(n->op, ir_elem_f(n->dtype, out, o), ir_elem_f(st, s[0], i)));
      else if (iop(c, n->op, ir_elem_i(n->dtype, out, o), ir_elem_i(st, s[0], i), &r)) return -1;
      else ir_elem_set_i(n->dtype, out, o, r);
    }
    return 0;
  }
  for (int64_t i = 0; i < N; i++) {
    switch (n->op) {
    case IR_LOAD:
      if (ir_dtype_is_float(n->dtype)) ir_elem_set_f(n->dtype, out, i, n->fval);
      else ir_elem_set_i(n->dtype, out, i, n->ival);
      break;
    case IR_INDEX_COMPONENTS: {
      unflatten(&n->shape, i, idx);
      int64_t v = n->base;
      for (int k = 0; k < n->shape.rank; k++) v += n->coef[k] * idx[k];
      ir_elem_set_i(n->dtype, out, i, v);
      break;
    }
    case IR_VIEW: {
      if (!n->view.masked && !n->view.gather) {
        view_copy(&n->view, s[0], out, ir_dtype_size(n->dtype));
        return 0;
      }
      unflatten(&n->shape, i, idx);
      int64_t a = n->view.offset;
      bool valid = true, n_pad_zero = false;
      for (int k = 0; k < n->shape.rank; k++) {
        valid &= idx[k] >= n->view.lo[k] && idx[k] < n->view.hi[k];
        a += n->view.stride[k] * idx[k];
      }
      if (n->view.gather) {
        int64_t e = ir_elem_i(c->g->nodes[n->src[1]].dtype, s[1], i);
        if ((e < 0 || e >= n->view.gbound) && n->view.gstrict)
          return ir_fail(c->g, "index %lld is out of range [0, %lld)", (long long)e, (long long)n->view.gbound);
        if (e < 0 || e >= n->view.gbound) valid = false, n_pad_zero = true;
        else a += n->view.gstride * e;
      }
      if (!valid) ir_elem_set_f(n->dtype, out, i, n_pad_zero ? 0 : n->view.pad_value);
      else memcpy((char *)out + i * (int64_t)ir_dtype_size(n->dtype),
                  (const char *)s[0] + a * (int64_t)ir_dtype_size(n->dtype), ir_dtype_size(n->dtype));
      break;
    }
    case IR_MOVE:
      memcpy(out, s[0], (size_t)N * ir_dtype_size(n->dtype));
      return 0;
    case IR_CAST:
      if (check_cast(c, st, n->dtype, s[0], i)) return -1;
      if (ir_dtype_is_float(st)) ir_elem_set_f(n->dtype, out, i, ir_elem_f(st, s[0], i));
      else ir_elem_set_i(n->dtype, out, i, ir_elem_i(st, s[0], i));
      break;
    case IR_LT: case IR_NEQ: {
      bool v;
      if (ir_dtype_is_float(st)) {
        double a = ir_elem_f(st, s[0], i), b = ir_elem_f(st, s[1], i);
        v = n->op == IR_LT ? a < b : a != b;
      } else {
        int64_t a = ir_elem_i(st, s[0], i), b = ir_elem_i(st, s[1], i), r;
        if (iop(c, n->op, a, b, &r)) return -1;
        v = r != 0;
      }
      ir_elem_set_i(IR_BOOL, out, i, v);
      break;
    }
    case IR_WHERE: {
      bool cnd = ir_elem_i(IR_BOOL, s[0], i) != 0;
      memcpy((char *)out + i * (int64_t)ir_dtype_size(n->dtype),
             (const char *)s[cnd ? 1 : 2] + i * (int64_t)ir_dtype_size(n->dtype), ir_dtype_size(n->dtype));
      break;
    }
    default:
      if (ir_dtype_is_float(n->dtype)) {
        ir_elem_set_f(n->dtype, out, i,
                      op_f(n->op, ir_elem_f(st, s[0], i), n->nsrc > 1 ? ir_elem_f(st, s[1], i) : 0));
      } else {
        int64_t r;
        if (iop(c, n->op, ir_elem_i(st, s[0], i), n->nsrc > 1 ? ir_elem_i(st, s[1], i) : 0, &r)) return -1;
        ir_elem_set_i(n->dtype, out, i, r);
      }
    }
  }
  return 0;
}

/* Evaluates `root` and what it depends on, iteratively (an explicit stack,
 * no recursion: chains of any depth are fine). */
static void *eval_node(evalctx *c, ir_ref root) {
  size_t cap = 64, top = 0;
  ir_ref *stack = malloc(cap * sizeof *stack);
  IR_ASSERT(stack);
  stack[top++] = root;
  void *result = NULL;
  bool failed = false;
  while (top && !failed) {
    ir_ref r = stack[top - 1];
    const ir_node *n = &c->g->nodes[r];
    if (n->op == IR_ALLOCATE) {
      if (n->origin == IR_ORIGIN_INPUT) {
        ir_fail(c->g, "'%s' is not a compile-time constant (it depends on input '%s')",
                n->name ? n->name : "?", n->name ? n->name : "?");
        failed = true;
      }
      top--;
      continue;
    }
    if (c->memo[r]) {
      top--;
      continue;
    }
    bool ready = true;
    for (int k = 0; k < n->nsrc; k++) {
      ir_ref s = n->src[k];
      if (c->g->nodes[s].op == IR_ALLOCATE && c->g->nodes[s].origin != IR_ORIGIN_INPUT) continue;
      if (c->memo[s]) continue;
      if (top == cap) {
        stack = realloc(stack, (cap *= 2) * sizeof *stack);
        IR_ASSERT(stack);
      }
      stack[top++] = s;
      ready = false;
    }
    if (!ready) continue;
    if (!ir_shape_is_static(&n->shape)) {
      ir_fail(c->g, "internal: evaluating a value of symbolic size");
      failed = true;
      break;
    }
    size_t bytes = (size_t)ir_shape_numel(&n->shape) * ir_dtype_size(n->dtype);
    if (bytes > eval_budget() - c->used) {
      ir_fail(c->g, "constant folding needs more than %zu bytes", eval_budget());
      failed = true;
      break;
    }
    void *out = calloc(1, bytes ? bytes : 1);
    IR_ASSERT(out);
    c->used += bytes;
    c->memo[r] = out;
    if (c->ntouched == c->cap) {
      c->touched = realloc(c->touched, (c->cap = c->cap ? 2 * c->cap : 64) * sizeof *c->touched);
      IR_ASSERT(c->touched);
    }
    c->touched[c->ntouched++] = r;
    if (eval_compute(c, n, out)) failed = true;
    top--;
  }
  free(stack);
  if (!failed) result = (void *)value_of(c, root);
  return result;
}

int ir_eval(ir_graph *g, ir_ref r, void **out) {
  if (!ir_refs_ok(g, 1, &r)) return -1;
  /* The memo table is kept between calls (cleared entry by entry): the
   * importer folds after every node, and a fresh table per call made a long
   * chain quadratic. Not thread-safe, like the rest of the importer. */
  static void **memo;
  static int memo_cap;
  if (memo_cap < g->nnodes) {
    free(memo);
    memo_cap = g->nnodes * 2;
    memo = calloc((size_t)memo_cap, sizeof(void *));
  }
  if (!ir_shape_is_static(&g->nodes[r].shape)) return ir_fail(g, "internal: evaluating a value of symbolic size");
  evalctx c = {g, g->nsyms > 0, memo, 0, NULL, 0, 0};
  IR_ASSERT(c.memo);
  void *v = eval_node(&c, r);
  const ir_node *n = &g->nodes[r];
  size_t bytes = (size_t)ir_shape_numel(&n->shape) * ir_dtype_size(n->dtype);
  *out = NULL;
  if (v) {
    *out = malloc(bytes ? bytes : 1);
    IR_ASSERT(*out);
    memcpy(*out, v, bytes);
  }
  for (size_t i = 0; i < c.ntouched; i++) {
    free(c.memo[c.touched[i]]);
    c.memo[c.touched[i]] = NULL;
  }
  free(c.touched);
  return v ? 0 : -1;
}
