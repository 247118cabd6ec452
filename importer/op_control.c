/* op_control.c — control flow: If.
 *
 * A condition known at compile time selects its branch, and only that
 * branch is lowered (its nodes read the outer values by name). Otherwise
 * both branches are lowered and each output is Where(cond, then, else):
 * both are computed, which is sound because the lowered ops have no side
 * effects, except that an index error in the branch not taken would still
 * be reported, so branches with Gather-family reads are refused. Outputs
 * must have the same shape and dtype in both branches. */
#include "importer_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IF_OUTPUTS 64

/* Ops whose index errors are reported at run time (a strict read). */
static const char *strict_op(const Onnx__GraphProto *g) {
  static const char *ops[] = {"Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Scatter"};
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
      if (g->node[i]->op_type && !strcmp(g->node[i]->op_type, ops[k])) return ops[k];
  return NULL;
}

static int lower_if(imp_node *n) {
  ir_ref cond = imp_req(n, 0);
  const Onnx__GraphProto *br[2] = {imp_attr_graph(n, "then_branch"), imp_attr_graph(n, "else_branch")};
  static const char *names[2] = {"then_branch", "else_branch"};
  int nout = imp_nout(n);
  if (cond == IR_NONE || !br[0] || !br[1]) return -1;
  if (nout > MAX_IF_OUTPUTS) return imp_fail(n, "more than %d outputs", MAX_IF_OUTPUTS);
  if (ir_shape_numel(imp_shape(n, cond)) != 1) return imp_fail(n, "the condition must have one element");
  ir_ref outs[2][MAX_IF_OUTPUTS];
  if (ir_is_const(n->g, cond)) {
    void *v;
    if (ir_eval(n->g, cond, &v)) return imp_fail(n, "the condition: %s", ir_error(n->g));
    int take = ir_elem_i(imp_dtype(n, cond), v, 0) ? 0 : 1;
    free(v);
    if (imp_lower_subgraph(n, br[take], names[take], outs[take], nout)) return -1;
    for (int i = 0; i < nout; i++)
      if (imp_set_out(n, i, outs[take][i])) return -1;
    return 0;
  }
  for (int b = 0; b < 2; b++) {
    const char *op = strict_op(br[b]);
    if (op)
      return imp_fail(n, "the condition is known only at run time and %s has a %s, whose index error in the "
                         "branch not taken would be reported (freeze the condition's inputs)", names[b], op);
    if (imp_lower_subgraph(n, br[b], names[b], outs[b], nout)) return -1;
  }
  ir_ref c = ir_cast(n->g, cond, IR_BOOL);
  for (int i = 0; i < nout; i++) {
    const ir_shape *a = imp_shape(n, outs[0][i]), *b = imp_shape(n, outs[1][i]);
    if (!ir_shape_eq(a, b) || imp_dtype(n, outs[0][i]) != imp_dtype(n, outs[1][i])) {
      char sa[128], sb[128];
      ir_shape_str(a, sa, sizeof sa), ir_shape_str(b, sb, sizeof sb);
      return imp_fail(n, "the condition is known only at run time and output %d differs between the branches "
                         "(%s%s in then_branch, %s%s in else_branch)", i, ir_dtype_name(imp_dtype(n, outs[0][i])), sa,
                      ir_dtype_name(imp_dtype(n, outs[1][i])), sb);
    }
    if (imp_set_out(n, i, ir_where(n->g, c, outs[0][i], outs[1][i]))) return -1;
  }
  return 0;
}

const imp_op_entry imp_ops_control[] = {
    {"If", lower_if, 0},
    {NULL, NULL, 0},
};
