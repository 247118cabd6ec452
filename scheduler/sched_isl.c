/* sched_isl.c — the isl model of a kernel and its loop nest.
 *
 * A kernel's domain dimensions are the axes of its iteration space with
 * size other than 1 (size-1 axes always index 0). Statements: for each
 * reduction stage i, I<i> (initialise the accumulator, over the outer axes)
 * and U<i> (update it, over all axes); then F, the final store, over all
 * axes or over the outer axes. The schedule keeps the outer axes outermost
 * and shared, then a phase number, then the reduced axes:
 *   I<i>[o] -> [o, 2i, 0..], U<i>[o, r] -> [o, 2i+1, r], F[o(, r)] -> [o, 2k, r or 0..]
 * so each accumulator lives in a scalar while its reduction loop runs.
 * Hoisted gather indices X<i>[o] come first, at phases before all these
 * (shifting them); without stages the outer axes are then the axes the
 * indices depend on, and the rest (the copied rows) run inside. */
#include "sched_impl.h"

#include <isl/ast_build.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <stdarg.h>
#include <string.h>

typedef struct {
  char *s;
  size_t n, cap;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    SCHED_ASSERT(k >= 0);
    if (b->s && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    b->cap = (b->cap + (size_t)k + 1) * 2;
    b->s = realloc(b->s, b->cap);
    SCHED_ASSERT(b->s);
  }
}

/* "{ NAME[i0,..] : 0 <= i0 < d0 and .. }" over the listed axes. */
static void domain_str(strbuf *b, const char *name, const sched_kernel *k, const int *ax, int n) {
  sb_printf(b, "%s[", name);
  for (int i = 0; i < n; i++) sb_printf(b, "%si%d", i ? "," : "", ax[i]);
  sb_printf(b, "]");
  for (int i = 0; i < n; i++)
    sb_printf(b, "%s0 <= i%d < %lld", i ? " and " : " : ", ax[i], (long long)k->space.d[ax[i]]);
}

sched_stmt_kind sched_stmt_of(const char *name, int *stage) {
  *stage = name[0] && name[1] ? atoi(name + 1) : 0;
  switch (name[0]) {
  case 'X': return SCHED_STMT_INDEX;
  case 'I': return SCHED_STMT_INIT;
  case 'U': return SCHED_STMT_UPDATE;
  default: return SCHED_STMT_FINAL;
  }
}

/* One statement: its domain over all axes or the outer ones, and its
 * schedule at `phase`. */
static void statement(strbuf *dom, strbuf *sch, const sched_kernel *k, const char *name, bool all,
                      int phase) {
  const int *ax = all ? k->axes : k->outer;
  int nax = all ? k->naxes : k->nouter;
  domain_str(dom, name, k, ax, nax);
  sb_printf(dom, "; ");
  sb_printf(sch, "%s[", name);
  for (int i = 0; i < nax; i++) sb_printf(sch, "%si%d", i ? "," : "", ax[i]);
  sb_printf(sch, "] -> [");
  for (int i = 0; i < k->nouter; i++) sb_printf(sch, "i%d,", k->outer[i]);
  sb_printf(sch, "%d", phase);
  for (int i = 0; i < k->nred; i++)
    if (all) sb_printf(sch, ",i%d", k->red[i]);
    else sb_printf(sch, ",0");
  sb_printf(sch, "]; ");
}

int sched_kernel_build_ast(sched_program *p, sched_kernel *k, char *err, size_t errlen) {
  strbuf dom = {0}, sch = {0};
  sb_printf(&dom, "{ ");
  sb_printf(&sch, "{ ");
  char name[16];
  int h = k->ngathers;
  for (int i = 0; i < h; i++) {
    snprintf(name, sizeof name, "X%d", i);
    statement(&dom, &sch, k, name, false, i);
  }
  for (int i = 0; i < k->nstages; i++) {
    snprintf(name, sizeof name, "I%d", i);
    statement(&dom, &sch, k, name, false, h + 2 * i);
    snprintf(name, sizeof name, "U%d", i);
    statement(&dom, &sch, k, name, true, h + 2 * i + 1);
  }
  statement(&dom, &sch, k, "F", k->final_full, h + 2 * k->nstages);
  sb_printf(&dom, "}");
  sb_printf(&sch, "}");
  isl_union_set *d = isl_union_set_read_from_str(p->ctx, dom.s);
  isl_union_map *m = isl_union_map_read_from_str(p->ctx, sch.s);
  int rc = 0;
  if (!d || !m) {
    rc = -1;
    snprintf(err, errlen, "internal: isl rejected kernel %d model: %s / %s", k->root, dom.s, sch.s);
    isl_union_set_free(d);
    isl_union_map_free(m);
  } else {
    m = isl_union_map_intersect_domain(m, d);
    isl_ast_build *b = isl_ast_build_alloc(p->ctx);
    k->ast = isl_ast_build_node_from_schedule_map(b, m);
    isl_ast_build_free(b);
    if (!k->ast) {
      rc = -1;
      snprintf(err, errlen, "internal: isl could not build the loop nest of kernel %d", k->root);
    }
  }
  free(dom.s);
  free(sch.s);
  return rc;
}

void sched_dump(const sched_program *p, void *file) {
  FILE *f = file;
  for (int i = 0; i < p->nkernels; i++) {
    const sched_kernel *k = &p->kernels[i];
    const ir_node *r = ir_node_get(p->g, k->root);
    fprintf(f, "kernel %d: %%%d %s%s (%s), %d buffers, %d reduction stages\n", i, k->root,
            ir_op_name(r->op), r->reduce ? ".reduce" : "", r->label ? r->label : "-", k->nargs,
            k->nstages);
    char *c = isl_ast_node_to_C_str(k->ast);
    fprintf(f, "%s", c ? c : "");
    free(c);
  }
  fprintf(f, "arena: %lld bytes (naive sum %lld), weights: %lld bytes\n", (long long)p->arena_size,
          (long long)p->arena_naive, (long long)p->weights_size);
}
