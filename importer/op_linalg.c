/* op_linalg.c — Det, by the Leibniz formula:
 *   det A = sum over permutations p of sign(p) * prod_i A[i, p(i)],
 * n! products of n entries, exact in the order written and free of
 * pivoting (so no branch on values): used for n <= 5 (120 terms), larger
 * matrices are refused rather than given an O(n!) expression. */
#include "importer_impl.h"

#define DET_MAX_N 5

/* Entry (i, j) of the trailing n x n matrices of `a` (shape [..., n, n]),
 * as a value of the leading shape. */
static ir_ref entry(ir_graph *g, ir_ref a, const ir_shape *s, int i, int j) {
  int64_t st[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], len[IR_MAX_RANK];
  for (int k = 0; k < s->rank; k++) step[k] = 1, len[k] = s->d[k];
  st[s->rank - 2] = i, st[s->rank - 1] = j, len[s->rank - 2] = len[s->rank - 1] = 1;
  ir_ref v = ir_view_slice(g, a, st, step, len);
  return ir_view_squeeze(g, ir_view_squeeze(g, v, s->rank - 1), s->rank - 2);
}

static int lower_det(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref a = imp_req(n, 0);
  if (a == IR_NONE) return -1;
  ir_shape s = *imp_shape(n, a);
  if (!ir_dtype_is_float(imp_dtype(n, a))) return imp_fail(n, "input type %s is not supported", ir_dtype_name(imp_dtype(n, a)));
  if (s.rank < 2 || s.d[s.rank - 1] != s.d[s.rank - 2]) return imp_fail(n, "the input must be [..., n, n]");
  int64_t N = s.d[s.rank - 1];
  if (N < 1 || N > DET_MAX_N) return imp_fail(n, "n = %lld: Det is computed for n from 1 to %d", (long long)N, DET_MAX_N);
  int nn = (int)N, p[DET_MAX_N];
  ir_ref sum = IR_NONE;
  /* every p in [0, n)^n, kept when it is a permutation (n^n <= 3125) */
  int total = 1;
  for (int i = 0; i < nn; i++) total *= nn;
  for (int code = 0; code < total; code++) {
    unsigned used = 0;
    int c = code, inversions = 0;
    bool perm = true;
    for (int i = 0; i < nn; i++, c /= nn) {
      p[i] = c % nn;
      perm &= !(used & (1u << p[i]));
      used |= 1u << p[i];
    }
    if (!perm) continue;
    for (int i = 0; i < nn; i++)
      for (int j = i + 1; j < nn; j++) inversions += p[i] > p[j];
    ir_ref term = entry(g, a, &s, 0, p[0]);
    for (int i = 1; i < nn; i++) term = ir_binary(g, IR_MUL, term, entry(g, a, &s, i, p[i]));
    if (sum == IR_NONE) sum = inversions & 1 ? ir_unary(g, IR_NEG, term) : term;
    else sum = inversions & 1 ? ir_sub(g, sum, term) : ir_binary(g, IR_ADD, sum, term);
  }
  return imp_set_out(n, 0, sum);
}

const imp_op_entry imp_ops_linalg[] = {
    {"Det", lower_det, 0},
    {NULL, NULL, 0},
};
