/* op_control.c — control flow: If, and Loop and Scan unrolled.
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
    if (op) imp_need_value(n, cond); /* run/verify: the condition's inputs, frozen, fold it */
    if (op)
      return imp_fail(n, "the condition is known only at run time and %s has a %s, whose index error in the "
                         "branch not taken would be reported (freeze the condition's inputs)", names[b], op);
    if (imp_lower_subgraph(n, br[b], names[b], NULL, 0, outs[b], nout)) return -1;
  }
  ir_ref c = ir_cast(n->g, cond, IR_BOOL);
  for (int i = 0; i < nout; i++) {
    if (imp_is_seq(outs[0][i]) || imp_is_seq(outs[1][i])) { /* sequences, optionals: element-wise */
      if (imp_set_out(n, i, imp_seq_where(n, c, outs[0][i], outs[1][i]))) return -1;
      continue;
    }
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
  for (int i = 0; i < ncar; i++) /* carried values may be sequences */
    if ((ins[2 + i] = imp_in_value(n, 2 + i)) == IR_NONE) return imp_fail(n, "input %d is missing", 2 + i);
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

/* An attribute list of per-value integers (axes, directions), default 0. */
static int scan_attr(imp_node *n, const char *name, int64_t *v, int cnt) {
  for (int i = 0; i < cnt; i++) v[i] = 0;
  int k = imp_attr_ints(n, name, v, cnt);
  if (k >= 0 && k != cnt) return imp_fail(n, "attribute '%s' has %d values, %d expected", name, k, cnt);
  for (int i = 0; i < cnt; i++)
    if (!strstr(name, "axes") && v[i] != 0 && v[i] != 1) return imp_fail(n, "attribute '%s' must hold 0 or 1", name);
  return 0;
}

/* Element `at` of `x` along `axis`, that axis removed (a view). */
static ir_ref take(ir_graph *g, ir_ref x, int axis, int64_t at) {
  const ir_shape *s = &ir_node_get(g, x)->shape;
  int64_t st[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK];
  for (int k = 0; k < s->rank; k++) step[k] = 1, len[k] = s->d[k];
  st[axis] = at, len[axis] = 1;
  return ir_view_squeeze(g, ir_view_slice(g, x, st, step, len), axis);
}

/* The unrolled scan: states st[nst] and scan inputs xs[nsi] (scanned along
 * iax, which must be static and of one length), into res: the final
 * states, then the nso scan outputs stacked along oax (normalised here).
 * Iteration t reads element t (T-1-t, reversed) of each scan input. */
static int scan_run(imp_node *n, const Onnx__GraphProto *body, int nst, int nsi, int nso, const ir_ref *st,
                    const ir_ref *xs, int64_t *iax, const int64_t *idir, int64_t *oax, const int64_t *odir, ir_ref *res) {
  ir_graph *g = n->g;
  ir_ref ins[2 * MAX_LOOP_VALUES], outs[2 * MAX_LOOP_VALUES];
  int64_t T = -1;
  for (int i = 0; i < nst; i++) ins[i] = st[i];
  for (int j = 0; j < nsi; j++) {
    const ir_shape *s = imp_shape(n, xs[j]);
    int a = imp_axis(n, iax[j], s->rank);
    if (a < 0) return -1;
    iax[j] = a;
    if (ir_dim_is_sym(s->d[a])) return imp_fail(n, "the scan axis of scan input %d is symbolic (give it with --dim)", j);
    if (T >= 0 && s->d[a] != T) return imp_fail(n, "scan inputs differ in length (%lld and %lld)", (long long)T, (long long)s->d[a]);
    T = s->d[a];
  }
  if (T < 1 || T > MAX_UNROLL) return imp_fail(n, "scan length %lld: scans are unrolled, 1 to %d iterations", (long long)T, MAX_UNROLL);
  ir_ref *scans = calloc((size_t)(nso ? nso : 1) * (size_t)T, sizeof *scans);
  if (!scans) return imp_fail(n, "out of memory");
  int start = ir_graph_count(g), rc = 0;
  for (int64_t t = 0; t < T && !rc; t++) {
    for (int j = 0; j < nsi; j++) ins[nst + j] = take(g, xs[j], (int)iax[j], idir[j] ? T - 1 - t : t);
    char what[64];
    snprintf(what, sizeof what, "body (iteration %lld)", (long long)t);
    rc = imp_lower_subgraph(n, body, what, ins, nst + nsi, outs, nst + nso);
    for (int i = 0; i < nst && !rc; i++) ins[i] = outs[i];
    for (int k = 0; k < nso && !rc; k++) {
      int a = imp_axis(n, oax[k], imp_shape(n, outs[nst + k])->rank + 1);
      if (a < 0) rc = -1;
      else scans[k * T + (odir[k] ? T - 1 - t : t)] = ir_view_unsqueeze(g, outs[nst + k], a), oax[k] = a;
    }
    if (!rc && ir_graph_count(g) - start > MAX_UNROLL_NODES)
      rc = imp_fail(n, "the unrolled scan needs more than %d IR nodes (at iteration %lld)", MAX_UNROLL_NODES, (long long)t);
  }
  for (int i = 0; i < nst && !rc; i++) res[i] = ins[i];
  for (int k = 0; k < nso && !rc; k++)
    if ((res[nst + k] = imp_concat(n, scans + k * T, (int)T, (int)oax[k])) == IR_NONE) rc = -1;
  free(scans);
  return rc;
}

/* Scan, unrolled like Loop over the scan axis, whose length is static.
 * Opset 8 has a batch axis 0 on every input and output and an optional
 * first input sequence_lens: each batch element is scanned on its own (its
 * lengths must all be the full axis) and the results stacked. */
static int lower_scan(imp_node *n) {
  ir_graph *g = n->g;
  bool batch = n->opset < 9;
  const Onnx__GraphProto *body = imp_attr_graph(n, "body");
  int nsi = (int)imp_attr_i(n, "num_scan_inputs", 0), nst = imp_nin(n) - nsi - batch, nso = imp_nout(n) - nst;
  if (!body) return -1;
  if (nsi < 1 || nst < 0 || nso < 0 || nsi > MAX_LOOP_VALUES || nst > MAX_LOOP_VALUES || nso > MAX_LOOP_VALUES)
    return imp_fail(n, "%d inputs, %d outputs and %d scan inputs do not make a Scan (at most %d values)", imp_nin(n),
                    imp_nout(n), nsi, MAX_LOOP_VALUES);
  int64_t iax[MAX_LOOP_VALUES], idir[MAX_LOOP_VALUES], oax[MAX_LOOP_VALUES], odir[MAX_LOOP_VALUES];
  for (int i = 0; i < MAX_LOOP_VALUES; i++) iax[i] = oax[i] = odir[i] = 0; /* opset 8 has directions only */
  if (batch ? scan_attr(n, "directions", idir, nsi)
            : scan_attr(n, "scan_input_axes", iax, nsi) || scan_attr(n, "scan_input_directions", idir, nsi) ||
                  scan_attr(n, "scan_output_axes", oax, nso) || scan_attr(n, "scan_output_directions", odir, nso))
    return -1;
  ir_ref st[MAX_LOOP_VALUES], xs[MAX_LOOP_VALUES], res[2 * MAX_LOOP_VALUES];
  for (int i = 0; i < nst; i++)
    if ((st[i] = imp_req(n, batch + i)) == IR_NONE) return -1;
  for (int j = 0; j < nsi; j++)
    if ((xs[j] = imp_req(n, batch + nst + j)) == IR_NONE) return -1;
  if (!batch) {
    if (scan_run(n, body, nst, nsi, nso, st, xs, iax, idir, oax, odir, res)) return -1;
    for (int i = 0; i < nst + nso; i++)
      if (imp_set_out(n, i, res[i])) return -1;
    return 0;
  }
  int64_t B = imp_shape(n, xs[0])->rank ? imp_shape(n, xs[0])->d[0] : 0;
  if (B < 1 || B > MAX_UNROLL || ir_dim_is_sym(B)) return imp_fail(n, "the batch axis must be static, 1 to %d", MAX_UNROLL);
  for (int i = 0; i < nst + nsi; i++) {
    const ir_shape *s = imp_shape(n, i < nst ? st[i] : xs[i - nst]);
    if (!s->rank || s->d[0] != B) return imp_fail(n, "input %d has no batch axis of %lld", batch + i, (long long)B);
  }
  if (imp_has_in(n, 0)) { /* sequence_lens: only the full length */
    int64_t lens[MAX_UNROLL];
    int k = imp_const_ints(n, 0, lens, MAX_UNROLL);
    if (k < 0) return -1;
    for (int b = 0; b < k; b++)
      if (lens[b] != imp_shape(n, xs[0])->d[1]) return imp_fail(n, "sequence_lens shorter than the scan axis are not supported");
  }
  for (int j = 0; j < nsi; j++) iax[j] = 0; /* axis 1 of the batched input */
  ir_ref *all = calloc((size_t)(nst + nso) * (size_t)B, sizeof *all);
  if (!all) return imp_fail(n, "out of memory");
  int rc = 0;
  for (int64_t b = 0; b < B && !rc; b++) {
    ir_ref sb[MAX_LOOP_VALUES], xb[MAX_LOOP_VALUES];
    for (int i = 0; i < nst; i++) sb[i] = take(g, st[i], 0, b);
    for (int j = 0; j < nsi; j++) xb[j] = take(g, xs[j], 0, b);
    rc = scan_run(n, body, nst, nsi, nso, sb, xb, iax, idir, oax, odir, res);
    for (int i = 0; i < nst + nso && !rc; i++) all[i * B + b] = ir_view_unsqueeze(g, res[i], 0);
  }
  for (int i = 0; i < nst + nso && !rc; i++) rc = imp_set_out(n, i, imp_concat(n, all + i * B, (int)B, 0));
  free(all);
  return rc;
}

const imp_op_entry imp_ops_control[] = {
    {"If", lower_if, 0},
    {"Loop", lower_loop, 0},
    {"Scan", lower_scan, 0},
    {NULL, NULL, 0},
};
