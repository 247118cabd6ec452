/* prim.c — constructors for the leaves and the compute primitives. */
#include "ir_impl.h"

#include <string.h>

static ir_node node_init(ir_op op, ir_dtype t, ir_shape s) {
  ir_node n;
  memset(&n, 0, sizeof n);
  n.op = op;
  n.dtype = t;
  n.shape = s;
  return n;
}

bool ir_shape_ok(ir_graph *g, const ir_shape *s) {
  if (s->rank < 0 || s->rank > IR_MAX_RANK)
    return ir_fail(g, "rank %d is outside 0..%d", s->rank, IR_MAX_RANK), false;
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->d[i] == IR_DIM_INVALID) return ir_fail(g, "tensor size overflows (dimension %d)", i), false;
    if (ir_dim_is_sym(s->d[i]) && (!g->nsyms || !ir_dim_valid(s->d[i])))
      return ir_fail(g, "tensor size overflows (dimension %d)", i), false;
    if (ir_dim_is_sym(s->d[i])) continue; /* checked at run time, with the symbols' values */
    if (s->d[i] < 0) return ir_fail(g, "negative dimension %lld", (long long)s->d[i]), false;
    if (s->d[i] && n > INT64_MAX / 16 / s->d[i])
      return ir_fail(g, "tensor size overflows (dimension %d)", i), false;
    n *= s->d[i];
  }
  return true;
}

ir_ref ir_input(ir_graph *g, const char *name, ir_dtype t, ir_shape s) {
  if (g->failed) return IR_NONE;
  ir_note_syms(g, &s); /* inputs introduce the symbols */
  if (!ir_shape_ok(g, &s)) return IR_NONE;
  ir_node n = node_init(IR_ALLOCATE, t, s);
  n.origin = IR_ORIGIN_INPUT;
  n.io_index = g->ninputs;
  n.name = ir_strdup(g, name);
  ir_ref r = ir_add_node(g, &n);
  g->inputs = realloc(g->inputs, (size_t)(g->ninputs + 1) * sizeof *g->inputs);
  IR_ASSERT(g->inputs);
  g->inputs[g->ninputs++] = r;
  return r;
}

/* Constant data has a static size. */
static bool static_ok(ir_graph *g, const ir_shape *s) {
  if (!ir_shape_ok(g, s)) return false;
  if (!ir_shape_is_static(s)) return ir_fail(g, "internal: a constant of symbolic shape"), false;
  return true;
}

ir_ref ir_const(ir_graph *g, const char *name, ir_dtype t, ir_shape s, const void *data) {
  if (g->failed || !static_ok(g, &s)) return IR_NONE;
  ir_node n = node_init(IR_ALLOCATE, t, s);
  n.origin = IR_ORIGIN_WEIGHT;
  n.name = ir_strdup(g, name);
  size_t bytes = (size_t)ir_shape_numel(&s) * ir_dtype_size(t);
  void *copy = ir_alloc(g, bytes);
  if (bytes) memcpy(copy, data, bytes);
  n.data = copy;
  return ir_add_node(g, &n);
}

ir_ref ir_const_take(ir_graph *g, const char *name, ir_dtype t, ir_shape s, void *data) {
  if (g->failed || !static_ok(g, &s)) return free(data), IR_NONE;
  ir_node n = node_init(IR_ALLOCATE, t, s);
  n.origin = IR_ORIGIN_WEIGHT;
  n.name = ir_strdup(g, name);
  ir_own(g, data);
  n.data = data;
  return ir_add_node(g, &n);
}

ir_ref ir_const_mapped(ir_graph *g, const char *name, ir_dtype t, ir_shape s, const void *data, void *base,
                       size_t len) {
  ir_own_mapping(g, data, base, len);
  if (g->failed || !static_ok(g, &s)) return IR_NONE;
  ir_node n = node_init(IR_ALLOCATE, t, s);
  n.origin = IR_ORIGIN_WEIGHT;
  n.name = ir_strdup(g, name);
  n.data = data;
  return ir_add_node(g, &n);
}

/* An integer constant's value saturated at int64's range (uint64's for
 * IR_U64, held as its bits): a cast outside it is UB, and a type's highest
 * value comes here as a double that rounds up (INT64_MAX as 2^63). */
static int64_t saturated_int(ir_dtype t, double v) {
  if (t == IR_U64 && v >= 0x1p63) return v >= 0x1p64 ? -1 : (int64_t)(uint64_t)v;
  return v >= 0x1p63 ? INT64_MAX : v < -0x1p63 ? INT64_MIN : (int64_t)v;
}

ir_ref ir_load(ir_graph *g, ir_dtype t, ir_shape s, double value) {
  if (g->failed || !ir_shape_ok(g, &s)) return IR_NONE;
  if (!ir_dtype_is_float(t) && value != value)
    return ir_fail(g, "the constant NaN has no %s value", ir_dtype_name(t)), IR_NONE;
  ir_node n = node_init(IR_LOAD, t, s);
  n.fval = value;
  n.ival = ir_dtype_is_float(t) ? 0 : saturated_int(t, value);
  if (t == IR_BOOL) n.ival = value != 0;
  if (g->nsyms && ir_dim_is_sym(n.ival))
    return ir_fail(g, "the value %.17g is in the range reserved for symbolic dimensions", value), IR_NONE;
  return ir_add_node(g, &n);
}

ir_ref ir_load_int(ir_graph *g, ir_dtype t, ir_shape s, int64_t value) {
  if (g->failed || !ir_shape_ok(g, &s)) return IR_NONE;
  bool sym = g->nsyms && ir_dim_is_sym(value);
  if (sym && (t != IR_I64 || !ir_dim_valid(value)))
    return ir_fail(g, "a value in the range reserved for symbolic dimensions (%s)", ir_dtype_name(t)), IR_NONE;
  ir_node n = node_init(IR_LOAD, t, s);
  n.sym_value = sym;
  n.ival = t == IR_BOOL ? value != 0 : value;
  n.fval = (double)value;
  return ir_add_node(g, &n);
}

ir_ref ir_scalar(ir_graph *g, ir_dtype t, double value) {
  ir_shape s = {0};
  return ir_load(g, t, s, value);
}

ir_ref ir_index(ir_graph *g, ir_shape s, const int64_t *coef, int64_t base) {
  if (g->failed || !ir_shape_ok(g, &s)) return IR_NONE;
  ir_node n = node_init(IR_INDEX_COMPONENTS, IR_I64, s);
  for (int i = 0; i < s.rank; i++) n.coef[i] = s.d[i] == 1 ? 0 : coef[i];
  n.base = base;
  return ir_add_node(g, &n);
}

ir_ref ir_iota(ir_graph *g, ir_shape s, int axis) {
  int64_t coef[IR_MAX_RANK] = {0};
  if (axis < 0 || axis >= s.rank) return ir_fail(g, "iota axis %d out of range", axis), IR_NONE;
  coef[axis] = 1;
  return ir_index(g, s, coef, 0);
}

static bool unary_dtype_ok(ir_op op, ir_dtype t) {
  switch (op) {
  case IR_RECIP: case IR_SQRT: case IR_EXP2: case IR_LOG2: case IR_SIN:
    return ir_dtype_is_float(t);
  case IR_NOT: return t == IR_BOOL;
  case IR_NEG: return t != IR_BOOL;
  default: return false;
  }
}

ir_ref ir_unary(ir_graph *g, ir_op op, ir_ref a) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  const ir_node *na = &g->nodes[a];
  if (!unary_dtype_ok(op, na->dtype))
    return ir_fail(g, "%s does not apply to %s", ir_op_name(op), ir_dtype_name(na->dtype)),
           IR_NONE;
  ir_node n = node_init(op, na->dtype, na->shape);
  n.nsrc = 1;
  n.src[0] = a;
  return ir_add_node(g, &n);
}

ir_ref ir_cast(ir_graph *g, ir_ref a, ir_dtype t) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  if (g->nodes[a].dtype == t) return a;
  ir_node n = node_init(IR_CAST, t, g->nodes[a].shape);
  n.nsrc = 1;
  n.src[0] = a;
  return ir_add_node(g, &n);
}

/* Broadcasting where equal sizes are different expressions (ir_dim_unify):
 * `s` becomes the common shape, taking its own sizes. */
static bool broadcast_unify(ir_graph *g, ir_shape *s, const ir_shape *b) {
  if (s->rank != b->rank) return false;
  ir_shape o = *s;
  for (int i = 0; i < s->rank; i++) {
    int64_t da = s->d[i], db = b->d[i];
    if (da == db || db == 1) continue;
    if (da == 1) o.d[i] = db;
    else if (!ir_dim_is_sym(da) && !ir_dim_is_sym(db)) return false;
    else if (ir_dim_unify(g, da, db)) return false;
  }
  *s = o;
  return true;
}

/* Broadcast `n` references to their common shape (views where needed). */
static bool broadcast_all(ir_graph *g, int n, ir_ref *refs, ir_shape *out) {
  ir_shape s = g->nodes[refs[0]].shape;
  for (int i = 1; i < n; i++) {
    char a[128], b[128];
    if (!ir_shape_broadcast(&s, &g->nodes[refs[i]].shape, &s) && !broadcast_unify(g, &s, &g->nodes[refs[i]].shape)) {
      if (g->failed) return false;
      ir_shape_str(&g->nodes[refs[0]].shape, a, sizeof a);
      ir_shape_str(&g->nodes[refs[i]].shape, b, sizeof b);
      ir_fail(g, "shapes %s and %s do not broadcast", a, b);
      return false;
    }
  }
  /* operands that fit may broadcast to a size that does not (the views
   * below compute its strides) */
  if (!ir_shape_ok(g, &s)) return false;
  for (int i = 0; i < n; i++)
    if (!ir_shape_eq(&g->nodes[refs[i]].shape, &s)) refs[i] = ir_view_expand(g, refs[i], s);
  *out = s;
  return !g->failed;
}

ir_ref ir_binary(ir_graph *g, ir_op op, ir_ref a, ir_ref b) {
  ir_ref r[2] = {a, b};
  if (!ir_refs_ok(g, 2, r)) return IR_NONE;
  ir_dtype t = g->nodes[a].dtype;
  if (t != g->nodes[b].dtype)
    return ir_fail(g, "%s operands have different dtypes (%s, %s)", ir_op_name(op),
                   ir_dtype_name(t), ir_dtype_name(g->nodes[b].dtype)),
           IR_NONE;
  bool logic = op == IR_AND || op == IR_OR || op == IR_XOR;
  if ((logic || op == IR_IDIV) && ir_dtype_is_float(t))
    return ir_fail(g, "%s does not apply to %s", ir_op_name(op), ir_dtype_name(t)), IR_NONE;
  ir_shape s;
  if (!broadcast_all(g, 2, r, &s)) return IR_NONE;
  ir_dtype out = (op == IR_LT || op == IR_NEQ) ? IR_BOOL : t;
  ir_node n = node_init(op, out, s);
  n.nsrc = 2;
  n.src[0] = r[0];
  n.src[1] = r[1];
  return ir_add_node(g, &n);
}

ir_ref ir_where(ir_graph *g, ir_ref c, ir_ref x, ir_ref y) {
  ir_ref r[3] = {c, x, y};
  if (!ir_refs_ok(g, 3, r)) return IR_NONE;
  if (g->nodes[c].dtype != IR_BOOL)
    return ir_fail(g, "WHERE condition must be bool, not %s", ir_dtype_name(g->nodes[c].dtype)),
           IR_NONE;
  if (g->nodes[x].dtype != g->nodes[y].dtype)
    return ir_fail(g, "WHERE branches have different dtypes (%s, %s)",
                   ir_dtype_name(g->nodes[x].dtype), ir_dtype_name(g->nodes[y].dtype)),
           IR_NONE;
  ir_shape s;
  if (!broadcast_all(g, 3, r, &s)) return IR_NONE;
  ir_node n = node_init(IR_WHERE, g->nodes[x].dtype, s);
  n.nsrc = 3;
  memcpy(n.src, r, sizeof r);
  return ir_add_node(g, &n);
}

ir_ref ir_reduce(ir_graph *g, ir_op op, ir_ref a, uint32_t axes) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  if (op != IR_ADD && op != IR_MUL && op != IR_MAX)
    return ir_fail(g, "internal: %s cannot reduce", ir_op_name(op)), IR_NONE;
  ir_node n = node_init(op, g->nodes[a].dtype, g->nodes[a].shape);
  bool any = false;
  for (int i = 0; i < n.shape.rank; i++)
    if (axes & (1u << i) && n.shape.d[i] != 1) {
      n.shape.d[i] = 1;
      any = true;
    }
  if (!any) return a; /* reducing size-1 axes is the identity */
  n.reduce = true;
  n.nsrc = 1;
  n.src[0] = a;
  return ir_add_node(g, &n);
}

ir_ref ir_move(ir_graph *g, ir_ref a) {
  if (!ir_refs_ok(g, 1, &a)) return IR_NONE;
  ir_node n = node_init(IR_MOVE, g->nodes[a].dtype, g->nodes[a].shape);
  n.nsrc = 1;
  n.src[0] = a;
  return ir_add_node(g, &n);
}
