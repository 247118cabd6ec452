/* sched_isl.c — the isl model of a kernel and its loop nest.
 *
 * A kernel's domain dimensions are the axes of its iteration space with
 * size other than 1 (size-1 axes always index 0). An element-wise kernel is
 * one statement S0 over all of them. A reduction is three statements, the
 * accumulator kept in a scalar: S0 (init) and S2 (store) over the kept
 * axes, S1 (update) over all axes, scheduled as
 *   S0[o] -> [o, 0, 0..], S1[o, r] -> [o, 1, r], S2[o] -> [o, 2, 0..]
 * so that the reduced axes are the innermost loops. */
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

sched_stmt_kind sched_stmt_of(const sched_kernel *k, const char *name) {
  (void)k;
  if (!strcmp(name, "S0")) return SCHED_STMT_COMPUTE;
  if (!strcmp(name, "R0")) return SCHED_STMT_INIT;
  if (!strcmp(name, "R1")) return SCHED_STMT_UPDATE;
  return SCHED_STMT_STORE;
}

int sched_kernel_build_ast(sched_program *p, sched_kernel *k, char *err, size_t errlen) {
  const ir_node *root = ir_node_get(p->g, k->root);
  strbuf dom = {0}, sch = {0};
  if (!root->reduce) {
    sb_printf(&dom, "{ ");
    domain_str(&dom, "S0", k, k->axes, k->naxes);
    sb_printf(&dom, " }");
    sb_printf(&sch, "{ S0[");
    for (int i = 0; i < k->naxes; i++) sb_printf(&sch, "%si%d", i ? "," : "", k->axes[i]);
    sb_printf(&sch, "] -> [0");
    for (int i = 0; i < k->naxes; i++) sb_printf(&sch, ",i%d", k->axes[i]);
    sb_printf(&sch, "] }");
  } else {
    int outer[IR_MAX_RANK], red[IR_MAX_RANK], no = 0, nr = 0;
    for (int i = 0; i < k->naxes; i++) {
      int a = k->axes[i];
      if (root->shape.d[a] == 1) red[nr++] = a;
      else outer[no++] = a;
    }
    sb_printf(&dom, "{ ");
    domain_str(&dom, "R0", k, outer, no);
    sb_printf(&dom, "; ");
    domain_str(&dom, "R1", k, k->axes, k->naxes);
    sb_printf(&dom, "; ");
    domain_str(&dom, "R2", k, outer, no);
    sb_printf(&dom, " }");
    sb_printf(&sch, "{ ");
    for (int s = 0; s < 3; s++) {
      const int *ax = s == 1 ? k->axes : outer;
      int nax = s == 1 ? k->naxes : no;
      sb_printf(&sch, "%sR%d[", s ? "; " : "", s);
      for (int i = 0; i < nax; i++) sb_printf(&sch, "%si%d", i ? "," : "", ax[i]);
      sb_printf(&sch, "] -> [");
      for (int i = 0; i < no; i++) sb_printf(&sch, "i%d,", outer[i]);
      sb_printf(&sch, "%d", s);
      for (int i = 0; i < nr; i++)
        if (s == 1) sb_printf(&sch, ",i%d", red[i]);
        else sb_printf(&sch, ",0");
      sb_printf(&sch, "]");
    }
    sb_printf(&sch, " }");
  }
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
    fprintf(f, "kernel %d: %%%d %s%s (%s), %d buffers\n", i, k->root, ir_op_name(r->op),
            r->reduce ? ".reduce" : "", r->label ? r->label : "-", k->nargs);
    char *c = isl_ast_node_to_C_str(k->ast);
    fprintf(f, "%s", c ? c : "");
    free(c);
  }
  fprintf(f, "arena: %lld bytes (naive sum %lld), weights: %lld bytes\n", (long long)p->arena_size,
          (long long)p->arena_naive, (long long)p->weights_size);
}
