/* dump.c — text form of the primitive graph and the verifier. */
#include "ir_impl.h"

#include <stdio.h>
#include <string.h>

/* A dimension as its value or polynomial, after `sep`. */
static void pd(FILE *f, const char *sep, int64_t d) {
  char s[128];
  ir_dim_str(d, s, sizeof s);
  fprintf(f, "%s%s", sep, s);
}

static void dump_node(const ir_graph *g, ir_ref r, FILE *f) {
  const ir_node *n = &g->nodes[r];
  char sh[256];
  ir_shape_str(&n->shape, sh, sizeof sh);
  fprintf(f, "%%%d = %s%s %s%s", r, ir_op_name(n->op), n->reduce ? ".reduce" : "",
          ir_dtype_name(n->dtype), sh);
  for (int k = 0; k < n->nsrc; k++) fprintf(f, "%s%%%d", k ? ", " : " ", n->src[k]);
  switch (n->op) {
  case IR_ALLOCATE:
    fprintf(f, " %s '%s'", n->origin == IR_ORIGIN_INPUT ? "input" : "weight", n->name ? n->name : "");
    break;
  case IR_LOAD:
    if (ir_dtype_is_float(n->dtype)) fprintf(f, " value=%.9g", n->fval);
    else if (n->sym_value) pd(f, " value=", n->ival);
    else fprintf(f, " value=%lld", (long long)n->ival);
    break;
  case IR_INDEX_COMPONENTS:
    pd(f, " base=", n->base);
    fprintf(f, " coef=(");
    for (int i = 0; i < n->shape.rank; i++) pd(f, i ? "," : "", n->coef[i]);
    fprintf(f, ")");
    break;
  case IR_VIEW:
    pd(f, " offset=", n->view.offset);
    fprintf(f, " strides=(");
    for (int i = 0; i < n->shape.rank; i++) pd(f, i ? "," : "", n->view.stride[i]);
    fprintf(f, ")");
    if (n->view.gather) {
      pd(f, " gather(stride=", n->view.gstride);
      pd(f, ", bound=", n->view.gbound);
      fprintf(f, ", %s)", n->view.gstrict ? "strict" : "else 0");
    }
    if (n->view.masked) {
      fprintf(f, " valid=(");
      for (int i = 0; i < n->shape.rank; i++) pd(f, i ? "," : "", n->view.lo[i]), pd(f, ":", n->view.hi[i]);
      fprintf(f, ") pad=%g", n->view.pad_value);
    }
    break;
  default: break;
  }
  if (n->label) fprintf(f, "  ; %s", n->label);
  fputc('\n', f);
}

/* Nodes reachable from the outputs, in creation order (a topological order). */
char *ir_live_nodes(const ir_graph *g) {
  char *live = calloc((size_t)g->nnodes + 1, 1);
  IR_ASSERT(live);
  for (int i = 0; i < g->noutputs; i++) live[g->outputs[i]] = 1;
  for (int r = g->nnodes - 1; r >= 0; r--)
    if (live[r])
      for (int k = 0; k < g->nodes[r].nsrc; k++) live[g->nodes[r].src[k]] = 1;
  return live;
}

void ir_dump(const ir_graph *g, void *file) {
  FILE *f = file;
  char *live = ir_live_nodes(g);
  for (int r = 0; r < g->nnodes; r++)
    if (live[r]) dump_node(g, r, f);
  for (int i = 0; i < g->noutputs; i++)
    fprintf(f, "output '%s' = %%%d\n", g->output_names[i], g->outputs[i]);
  for (int i = 0; i < g->nsyms; i++) {
    int k = g->syms[i];
    fprintf(f, "symbol '%s' >= %lld", ir_dim_sym_name(k), (long long)g->sym_lo[k]);
    fprintf(f, ", <= %lld", (long long)g->sym_hi[k]);
    fputc('\n', f);
  }
  for (int i = 0; i < g->nassume; i++) {
    pd(f, "assume ", g->assume[i].p);
    fprintf(f, " >= 0  ; %s\n", g->assume[i].why ? g->assume[i].why : "");
  }
  free(live);
}

int ir_verify(ir_graph *g) {
  if (g->failed) return -1;
  for (int r = 0; r < g->nnodes; r++) {
    const ir_node *n = &g->nodes[r];
    for (int k = 0; k < n->nsrc; k++) {
      if (n->src[k] < 0 || n->src[k] >= r)
        return ir_fail(g, "verify: %%%d (%s) has a dangling source", r, ir_op_name(n->op));
      const ir_node *s = &g->nodes[n->src[k]];
      bool same = ir_shape_eq(&s->shape, &n->shape);
      if (n->op == IR_VIEW) same = ir_shape_numel(&s->shape) >= 0;
      if (n->reduce) {
        same = s->shape.rank == n->shape.rank;
        for (int i = 0; same && i < n->shape.rank; i++)
          same = n->shape.d[i] == s->shape.d[i] || n->shape.d[i] == 1;
      }
      if (!same) return ir_fail(g, "verify: %%%d (%s) has a source of another shape", r, ir_op_name(n->op));
    }
  }
  for (int i = 0; i < g->noutputs; i++)
    if (g->outputs[i] < 0 || g->outputs[i] >= g->nnodes) return ir_fail(g, "verify: dangling output");
  return 0;
}
