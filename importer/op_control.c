/* op_control.c — control flow: If, and Loop unrolled.
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
    if (imp_lower_subgraph(n, br[take], names[take], NULL, 0, outs[take], nout)) return -1;
    for (int i = 0; i < nout; i++)
      if (imp_set_out(n, i, outs[take][i])) return -1;
    return 0;
  }
  for (int b = 0; b < 2; b++) {
    const char *op = strict_op(br[b]);
    if (op)
      return imp_fail(n, "the condition is known only at run time and %s has a %s, whose index error in the "
                         "branch not taken would be reported (freeze the condition's inputs)", names[b], op);
    if (imp_lower_subgraph(n, br[b], names[b], NULL, 0, outs[b], nout)) return -1;
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

/* Loop with a trip count and a condition known at compile time: the body
 * is lowered once per iteration (unrolled), its carried values passed on,
 * its scan outputs stacked. Bounded: at most MAX_UNROLL iterations and
 * MAX_UNROLL_NODES nodes of IR for the whole loop. A condition computed at
 * run time is refused (its iterations would have no known count). */
#define MAX_UNROLL 1024
#define MAX_UNROLL_NODES 200000
#define MAX_LOOP_VALUES 64

static int lower_loop(imp_node *n) {
  ir_graph *g = n->g;
  const Onnx__GraphProto *body = imp_attr_graph(n, "body");
  int ncar = imp_nin(n) - 2, nscan = imp_nout(n) - ncar;
  if (!body) return -1;
  if (ncar < 0 || nscan < 0 || ncar > MAX_LOOP_VALUES || nscan > MAX_LOOP_VALUES)
    return imp_fail(n, "%d inputs and %d outputs do not make a Loop (at most %d values)", imp_nin(n), imp_nout(n),
                    MAX_LOOP_VALUES);
  int64_t m = 0, c = 1;
  if (!imp_has_in(n, 0)) return imp_fail(n, "a Loop without a trip count is not supported (it would run until a run-time condition)");
  if (imp_const_ints(n, 0, &m, 1) != 1) return -1;
  if (imp_has_in(n, 1) && imp_const_ints(n, 1, &c, 1) != 1) return -1;
  if (m > MAX_UNROLL && c) return imp_fail(n, "trip count %lld: loops are unrolled, at most %d iterations", (long long)m, MAX_UNROLL);
  ir_ref ins[2 + MAX_LOOP_VALUES], outs[1 + 2 * MAX_LOOP_VALUES];
  for (int i = 0; i < ncar; i++)
    if ((ins[2 + i] = imp_req(n, 2 + i)) == IR_NONE) return -1;
  ir_ref *scans = calloc((size_t)(nscan ? nscan : 1) * (size_t)(m > 0 ? m : 1), sizeof *scans);
  if (!scans) return imp_fail(n, "out of memory");
  int start = ir_graph_count(g), rc = 0;
  int64_t it = 0;
  for (; it < m && c && !rc; it++) {
    uint8_t b = 1;
    ins[0] = ir_const(g, "iteration", IR_I64, ir_shape_make(0, NULL), &it);
    ins[1] = ir_const(g, "condition", IR_BOOL, ir_shape_make(0, NULL), &b);
    char what[64];
    snprintf(what, sizeof what, "body (iteration %lld)", (long long)it);
    rc = imp_lower_subgraph(n, body, what, ins, 2 + ncar, outs, 1 + ncar + nscan);
    if (!rc && !ir_is_const(g, outs[0]))
      rc = imp_fail(n, "the loop's condition is computed at run time (loops are unrolled: the trip count must be known)");
    if (!rc) {
      void *v;
      if (ir_eval(g, outs[0], &v)) rc = imp_fail(n, "the condition: %s", ir_error(g));
      else c = ir_elem_i(ir_node_get(g, outs[0])->dtype, v, 0) != 0, free(v);
    }
    for (int i = 0; i < ncar && !rc; i++) ins[2 + i] = outs[1 + i];
    for (int k = 0; k < nscan && !rc; k++) scans[k * m + it] = ir_view_unsqueeze(g, outs[1 + ncar + k], 0);
    if (!rc && ir_graph_count(g) - start > MAX_UNROLL_NODES)
      rc = imp_fail(n, "the unrolled loop needs more than %d IR nodes (at iteration %lld)", MAX_UNROLL_NODES, (long long)it);
  }
  for (int i = 0; i < ncar && !rc; i++) rc = imp_set_out(n, i, ins[2 + i]);
  for (int k = 0; k < nscan && !rc; k++)
    rc = it ? imp_set_out(n, ncar + k, imp_concat(n, scans + k * m, (int)it, 0))
            : imp_fail(n, "a scan output of a loop that runs no iteration has no known shape");
  free(scans);
  return rc;
}

const imp_op_entry imp_ops_control[] = {
    {"If", lower_if, 0},
    {"Loop", lower_loop, 0},
    {NULL, NULL, 0},
};
