/* graph.c — node storage, dtypes and shapes, the sticky error. */
#include "ir_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ir_graph *ir_graph_new(void) {
  ir_graph *g = calloc(1, sizeof *g);
  IR_ASSERT(g);
  for (int k = 0; k < IR_MAX_SYMS; k++) g->sym_lo[k] = 1, g->sym_hi[k] = IR_DIM_SYM_MAX;
  ir_dim_retain();
  return g;
}

void ir_graph_free(ir_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->nblocks; i++) free(g->blocks[i]);
  free(g->blocks);
  ir_mappings_free(g);
  free(g->nodes);
  free(g->outputs);
  free(g->output_names);
  free(g->len_out);
  free(g->len_axis);
  free(g->len_of);
  free(g->inputs);
  free(g->assume);
  free(g->same);
  free(g->notes);
  free(g);
  ir_dim_release();
}

void ir_own(ir_graph *g, void *p) {
  if (g->nblocks == g->capblocks) {
    g->capblocks = g->capblocks ? 2 * g->capblocks : 64;
    g->blocks = realloc(g->blocks, (size_t)g->capblocks * sizeof *g->blocks);
    IR_ASSERT(g->blocks);
  }
  g->blocks[g->nblocks++] = p;
}

void ir_set_budget(ir_graph *g, size_t bytes) {
  g->budget = bytes;
}

/* Counts `bytes` more against the budget; past it, the sticky error. The
 * node or block is still made (callers need a valid result), and every
 * later builder call returns IR_NONE: growth stops at once. */
static void spend(ir_graph *g, size_t bytes) {
  g->used += bytes;
  if (g->budget && (g->used > g->budget || g->nnodes >= IR_MAX_NODES))
    ir_fail(g, "the graph needs more than the memory limit (%zu bytes, at most %d nodes; see --max-memory)",
            g->budget, IR_MAX_NODES);
}

int ir_reserve(ir_graph *g, int64_t nodes) {
  if (g->failed || !g->budget) return g->failed ? -1 : 0;
  int64_t bytes;
  size_t left = g->budget - (g->used < g->budget ? g->used : g->budget);
  if (nodes < 0 || nodes > IR_MAX_NODES - g->nnodes || ir_mul_ov(nodes, (int64_t)sizeof(ir_node), &bytes) ||
      (uint64_t)bytes > left)
    return ir_fail(g, "building this needs %lld more graph nodes, more than the memory limit allows (%zu bytes, "
                      "at most %d nodes; see --max-memory)",
                   (long long)nodes, g->budget, IR_MAX_NODES);
  return 0;
}

void *ir_alloc(ir_graph *g, size_t n) {
  void *p = calloc(1, n ? n : 1);
  IR_ASSERT(p);
  ir_own(g, p);
  spend(g, n);
  return p;
}

char *ir_strdup(ir_graph *g, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *p = ir_alloc(g, n);
  memcpy(p, s, n);
  return p;
}

void ir_add_note(ir_graph *g, const char *line) {
  const char **p = realloc(g->notes, (size_t)(g->nnotes + 1) * sizeof *p);
  IR_ASSERT(p);
  g->notes = p;
  g->notes[g->nnotes++] = ir_strdup(g, line);
}

int ir_note_count(const ir_graph *g) {
  return g->nnotes;
}

const char *ir_note(const ir_graph *g, int i) {
  return i >= 0 && i < g->nnotes ? g->notes[i] : NULL;
}

void ir_mark_rounds_computed(ir_graph *g) {
  g->rounds_computed = true;
}

bool ir_rounds_computed(const ir_graph *g) {
  return g->rounds_computed;
}

char *ir_strndup(ir_graph *g, const char *s, size_t n) {
  char *p = ir_alloc(g, n + 1);
  if (n) memcpy(p, s, n);
  p[n] = 0;
  return p;
}

const ir_node *ir_node_get(const ir_graph *g, ir_ref r) {
  IR_ASSERT(r >= 0 && r < g->nnodes);
  return &g->nodes[r];
}

int ir_graph_count(const ir_graph *g) {
  return g->nnodes;
}

bool ir_failed(const ir_graph *g) {
  return g->failed;
}

const char *ir_error(const ir_graph *g) {
  return g->err;
}

int ir_fail(ir_graph *g, const char *fmt, ...) {
  if (g->failed) return -1; /* keep the first, most specific message */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g->err, sizeof g->err, fmt, ap);
  va_end(ap);
  g->failed = true;
  return -1;
}

void ir_clear_error(ir_graph *g) {
  g->failed = false;
  g->err[0] = 0;
}

void ir_set_label(ir_graph *g, const char *label) {
  g->label = label ? ir_strdup(g, label) : NULL;
}

ir_ref ir_add_node(ir_graph *g, const ir_node *n) {
  IR_ASSERT(g->nnodes < INT32_MAX);
  spend(g, sizeof *n);
  if (g->nnodes == g->cap) {
    g->cap = g->cap ? 2 * g->cap : 256;
    g->nodes = realloc(g->nodes, (size_t)g->cap * sizeof *g->nodes);
    IR_ASSERT(g->nodes);
  }
  g->nodes[g->nnodes] = *n;
  ir_node *x = &g->nodes[g->nnodes];
  /* a value is a compile-time constant when no graph input reaches it and
   * its size and contents do not depend on symbols' run-time values */
  x->is_const = !(x->op == IR_ALLOCATE && x->origin == IR_ORIGIN_INPUT) && ir_shape_is_static(&x->shape) &&
                !x->sym_value;
  for (int k = 0; k < x->nsrc; k++) x->is_const &= g->nodes[x->src[k]].is_const;
  if (!g->nodes[g->nnodes].label) g->nodes[g->nnodes].label = g->label;
  return g->nnodes++;
}

bool ir_refs_ok(ir_graph *g, int n, const ir_ref *refs) {
  if (g->failed) return false;
  for (int i = 0; i < n; i++)
    if (refs[i] < 0 || refs[i] >= g->nnodes) {
      ir_fail(g, "internal: invalid node reference %d", refs[i]);
      return false;
    }
  return true;
}

int ir_output_count(const ir_graph *g) {
  return g->noutputs;
}
ir_ref ir_output(const ir_graph *g, int i) {
  return g->outputs[i];
}
const char *ir_output_name(const ir_graph *g, int i) {
  return g->output_names[i];
}
int ir_input_count(const ir_graph *g) {
  return g->ninputs;
}
ir_ref ir_input_ref(const ir_graph *g, int i) {
  return g->inputs[i];
}

int ir_mark_output(ir_graph *g, ir_ref r, const char *name) {
  if (!ir_refs_ok(g, 1, &r)) return -1;
  g->outputs = realloc(g->outputs, (size_t)(g->noutputs + 1) * sizeof *g->outputs);
  g->output_names =
      realloc(g->output_names, (size_t)(g->noutputs + 1) * sizeof *g->output_names);
  g->len_out = realloc(g->len_out, (size_t)(g->noutputs + 1) * sizeof *g->len_out);
  g->len_axis = realloc(g->len_axis, (size_t)(g->noutputs + 1) * sizeof *g->len_axis);
  g->len_of = realloc(g->len_of, (size_t)(g->noutputs + 1) * sizeof *g->len_of);
  IR_ASSERT(g->outputs && g->output_names && g->len_out && g->len_axis && g->len_of);
  g->outputs[g->noutputs] = r;
  g->output_names[g->noutputs] = ir_strdup(g, name ? name : "");
  g->len_out[g->noutputs] = g->len_axis[g->noutputs] = g->len_of[g->noutputs] = -1;
  g->noutputs++;
  return 0;
}

int ir_mark_output_len(ir_graph *g, int i, int axis, ir_ref len) {
  IR_ASSERT(i >= 0 && i < g->noutputs && g->len_out[i] < 0 && g->len_of[i] < 0);
  const ir_node *x = ir_node_get(g, g->outputs[i]);
  IR_ASSERT(axis >= 0 && axis < x->shape.rank);
  size_t n = strlen(g->output_names[i]);
  char *name = malloc(n + 8);
  IR_ASSERT(name);
  memcpy(name, g->output_names[i], n);
  memcpy(name + n, ".length", 8);
  int rc = ir_mark_output(g, len, name);
  free(name);
  if (rc) return -1;
  g->len_out[i] = g->noutputs - 1, g->len_axis[i] = axis, g->len_of[g->noutputs - 1] = i;
  return 0;
}

int ir_output_len(const ir_graph *g, int i, int *axis) {
  if (axis) *axis = g->len_axis[i];
  return g->len_out[i];
}

int ir_output_len_of(const ir_graph *g, int i) {
  return g->len_of[i];
}

void ir_set_output(ir_graph *g, int i, ir_ref r) {
  IR_ASSERT(i >= 0 && i < g->noutputs && r >= 0 && r < g->nnodes);
  g->outputs[i] = r;
}

void ir_replace_uses(ir_graph *g, ir_ref from, ir_ref to) {
  for (int i = 0; i < g->nnodes; i++)
    for (int k = 0; k < g->nodes[i].nsrc; k++)
      if (g->nodes[i].src[k] == from) g->nodes[i].src[k] = to;
  for (int i = 0; i < g->noutputs; i++)
    if (g->outputs[i] == from) g->outputs[i] = to;
}

/* ---- dtypes ---- */

static const struct {
  const char *name;
  size_t size;
  bool is_float, is_signed;
} dtypes[IR_DTYPE_COUNT] = {
    [IR_F32] = {"f32", 4, true, true},  [IR_F64] = {"f64", 8, true, true},
    [IR_F16] = {"f16", 2, true, true},  [IR_I8] = {"i8", 1, false, true},
    [IR_I16] = {"i16", 2, false, true}, [IR_I32] = {"i32", 4, false, true},
    [IR_I64] = {"i64", 8, false, true}, [IR_U8] = {"u8", 1, false, false},
    [IR_U16] = {"u16", 2, false, false}, [IR_U32] = {"u32", 4, false, false},
    [IR_U64] = {"u64", 8, false, false}, [IR_BOOL] = {"bool", 1, false, false},
    [IR_BF16] = {"bf16", 2, true, true},
};

size_t ir_dtype_size(ir_dtype t) {
  return dtypes[t].size;
}
const char *ir_dtype_name(ir_dtype t) {
  return dtypes[t].name;
}
bool ir_dtype_is_float(ir_dtype t) {
  return dtypes[t].is_float;
}
bool ir_dtype_is_signed(ir_dtype t) {
  return dtypes[t].is_signed;
}

double ir_dtype_lowest(ir_dtype t) {
  switch (t) {
  case IR_F32: case IR_F64: case IR_F16: case IR_BF16: return -INFINITY;
  case IR_I8: return INT8_MIN;
  case IR_I16: return INT16_MIN;
  case IR_I32: return INT32_MIN;
  case IR_I64: return (double)INT64_MIN;
  default: return 0;
  }
}

double ir_dtype_highest(ir_dtype t) {
  switch (t) {
  case IR_F32: case IR_F64: case IR_F16: case IR_BF16: return INFINITY;
  case IR_I8: return INT8_MAX;
  case IR_I16: return INT16_MAX;
  case IR_I32: return INT32_MAX;
  case IR_I64: return 9223372036854775807.0;
  case IR_U8: return UINT8_MAX;
  case IR_U16: return UINT16_MAX;
  case IR_U32: return UINT32_MAX;
  case IR_U64: return 18446744073709551615.0;
  case IR_BOOL: return 1;
  default: return 0;
  }
}

static const char *op_names[] = {
#define X(name, arity, kind) #name,
#include "ops.def"
#undef X
};
_Static_assert(sizeof op_names / sizeof op_names[0] == IR_OP_COUNT, "ops.def");

const char *ir_op_name(ir_op op) {
  return op_names[op];
}

/* ---- shapes ---- */

int64_t ir_shape_numel(const ir_shape *s) {
  int64_t n = 1;
  if (!ir_shape_is_static(s)) {
    for (int i = 0; i < s->rank; i++) n = ir_dim_mul(n, s->d[i]);
    return n;
  }
  /* saturates: a size past INT64_MAX is refused by whoever compares it */
  for (int i = 0; i < s->rank; i++)
    if (ir_mul_ov(n, s->d[i], &n)) return INT64_MAX;
  return n;
}

ir_shape ir_shape_make(int rank, const int64_t *dims) {
  ir_shape s = {0};
  IR_ASSERT(rank >= 0 && rank <= IR_MAX_RANK);
  s.rank = rank;
  for (int i = 0; i < rank; i++) s.d[i] = dims[i];
  return s;
}

bool ir_shape_eq(const ir_shape *a, const ir_shape *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->d[i] != b->d[i]) return false;
  return true;
}

bool ir_shape_broadcast(const ir_shape *a, const ir_shape *b, ir_shape *out) {
  int r = a->rank > b->rank ? a->rank : b->rank;
  ir_shape o = {.rank = r};
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->rank), ib = i - (r - b->rank);
    int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
    if (da != db && da != 1 && db != 1) return false;
    o.d[i] = da == 1 ? db : da;
  }
  *out = o;
  return true;
}

void ir_shape_str(const ir_shape *s, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < s->rank && k < n; i++) {
    char d[96];
    ir_dim_str(s->d[i], d, sizeof d);
    k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? "," : "", d);
  }
  if (k < n) snprintf(buf + k, n - k, "]");
}

/* ir_dim_mul: a size past INT64_MAX gives IR_DIM_INVALID, never overflows
 * (the shapes of nodes are checked; this may see one before it is) */
void ir_contiguous_strides(const ir_shape *s, int64_t *strides) {
  int64_t st = 1;
  for (int i = s->rank - 1; i >= 0; i--) {
    strides[i] = s->d[i] == 1 ? 0 : st;
    st = ir_dim_mul(st, s->d[i]);
  }
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

/* Frees the data of weights no output needs any more (newid < 0), unless a
 * live node shares it: weights replaced by rewrites do not stay in memory. */
static void release_dead_data(ir_graph *g, const int *newid) {
  int nlive = 0;
  const void **keep = malloc((size_t)(g->nnodes + 1) * sizeof *keep);
  IR_ASSERT(keep);
  for (int i = 0; i < g->nnodes; i++)
    if (newid[i] >= 0 && g->nodes[i].op == IR_ALLOCATE && g->nodes[i].data) keep[nlive++] = g->nodes[i].data;
  qsort(keep, (size_t)nlive, sizeof *keep, cmp_ptr);
  for (int i = 0; i < g->nnodes; i++) {
    const void *d = g->nodes[i].data;
    if (newid[i] >= 0 || g->nodes[i].op != IR_ALLOCATE || !d || bsearch(&d, keep, (size_t)nlive, sizeof *keep, cmp_ptr))
      continue;
    if (ir_mapping_release(g, d)) continue;
    for (int b = g->nblocks - 1; b >= 0; b--)
      if (g->blocks[b] == d) {
        free(g->blocks[b]);
        g->blocks[b] = g->blocks[--g->nblocks];
        break;
      }
  }
  free(keep);
}

/* Iterative post-order from the outputs (graph depth is input-controlled). */
void ir_compact(ir_graph *g) {
  int n = g->nnodes;
  int *newid = malloc((size_t)(n + 1) * sizeof *newid), *order = malloc((size_t)(n + 1) * sizeof *order);
  int *stack = malloc((size_t)(n + 1) * sizeof *stack), *next = calloc((size_t)n + 1, sizeof *next);
  IR_ASSERT(newid && order && stack && next);
  for (int i = 0; i < n; i++) newid[i] = -1;
  int m = 0;
  for (int root = 0; root < g->noutputs + g->ninputs; root++) {
    ir_ref r = root < g->ninputs ? g->inputs[root] : g->outputs[root - g->ninputs];
    if (newid[r] >= 0) continue;
    int sp = 0;
    stack[sp++] = r;
    newid[r] = -2; /* on the stack */
    while (sp) {
      ir_ref x = stack[sp - 1];
      if (next[x] < g->nodes[x].nsrc) {
        ir_ref s = g->nodes[x].src[next[x]++];
        if (newid[s] == -1) newid[s] = -2, stack[sp++] = s;
        continue;
      }
      sp--;
      newid[x] = m;
      order[m++] = x;
    }
  }
  release_dead_data(g, newid);
  ir_node *nodes = malloc((size_t)(m ? m : 1) * sizeof *nodes);
  IR_ASSERT(nodes);
  for (int i = 0; i < m; i++) {
    nodes[i] = g->nodes[order[i]];
    for (int k = 0; k < nodes[i].nsrc; k++) nodes[i].src[k] = newid[nodes[i].src[k]];
  }
  for (int i = 0; i < g->noutputs; i++) g->outputs[i] = newid[g->outputs[i]];
  for (int i = 0; i < g->ninputs; i++) g->inputs[i] = newid[g->inputs[i]];
  free(g->nodes);
  g->nodes = nodes;
  g->nnodes = g->cap = m;
  free(newid), free(order), free(stack), free(next);
}
