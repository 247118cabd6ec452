/* op_einsum.c — Einsum as broadcast MUL + SUM over the labels. */
#include "importer_impl.h"

#include <string.h>

/* ----------------------------------------------------------------- Einsum */

#define EIN_LABELS 64
#define EIN_ELL 52

/* Label code of a subscript letter: 'A'..'Z' -> 0..25, 'a'..'z' -> 26..51
 * (ASCII order, as the implicit output sorts them). */
static int ein_code(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + c - 'a';
  return -1;
}

/* Parses one term into at most `cap` label codes; "..." (at most once, as
 * in ONNX) expands to the `nell` trailing ellipsis codes of the `maxell` in
 * the equation (-1 rank: nell = maxell). Returns the label count, or -1 for
 * a malformed term or one with more labels than `cap` (every write into
 * `codes` is checked against it: the term comes from the model). */
static int ein_term(const char *p, size_t len, int rank, int maxell, int *codes, int cap, int *nell_out) {
  int letters = 0, ells = 0;
  for (size_t i = 0; i < len; i++)
    if (p[i] == '.') {
      if (i + 2 >= len || p[i + 1] != '.' || p[i + 2] != '.') return -1;
      ells++, i += 2;
    } else if (ein_code(p[i]) >= 0) letters++;
    else return -1;
  if (ells > 1) return -1;
  int nell = ells ? (rank >= 0 ? rank - letters : maxell) : 0;
  if (nell < 0 || nell > IR_MAX_RANK || (rank >= 0 && !ells && letters != rank)) return -1;
  if (letters + nell > cap) return -1;
  if (nell_out) *nell_out = nell;
  int k = 0;
  for (size_t i = 0; i < len; i++) {
    if (p[i] == '.') {
      for (int e = 0; e < nell; e++) codes[k++] = EIN_ELL + maxell - nell + e;
      i += 2;
    } else codes[k++] = ein_code(p[i]);
  }
  return k;
}

/* Removes repeated labels of one operand by taking the diagonal:
 * WHERE(iota_p == iota_q, x, 0) summed over q. */
static ir_ref ein_diagonal(imp_node *n, ir_ref x, int *codes, int *cnt) {
  ir_graph *g = n->g;
  for (int p = 0; p < *cnt; p++)
    for (int q = p + 1; q < *cnt; q++) {
      if (codes[p] != codes[q]) continue;
      ir_shape s = imp_nshape(n, x);
      if (s.d[p] != s.d[q]) return imp_fail(n, "repeated label with different sizes"), IR_NONE;
      ir_shape u = imp_unit_shape(s.rank, p, s.d[p]);
      u.d[q] = s.d[q];
      ir_ref hit = ir_eq(g, ir_iota(g, u, p), ir_iota(g, u, q));
      x = ir_view_squeeze(g, imp_select_sum(n, hit, x, q), q);
      for (int k = q; k + 1 < *cnt; k++) codes[k] = codes[k + 1];
      (*cnt)--, q--;
      if (x == IR_NONE) return IR_NONE;
    }
  return x;
}

/* Einsum: every operand is diagonalised, permuted to the global label
 * order (output labels first) and broadcast; their product is summed over
 * the contracted labels. */
static int lower_einsum(imp_node *n) {
  ir_graph *g = n->g;
  const char *eq0 = imp_attr_s(n, "equation", "");
  char eq[256];
  size_t el = 0;
  for (const char *c = eq0; *c && el + 1 < sizeof eq; c++)
    if (*c != ' ') eq[el++] = *c;
  eq[el] = 0;
  int nin = imp_nin(n);
  if (nin < 1 || nin > 16) return imp_fail(n, "unsupported operand count %d", nin);
  const char *arrow = strstr(eq, "->");
  size_t lhs_len = arrow ? (size_t)(arrow - eq) : el;
  ir_ref ops[16];
  int codes[16][IR_MAX_RANK + 4], cnt[16], maxell = 0, nell[16];
  const char *p = eq;
  for (int i = 0; i < nin; i++) {
    const char *end = memchr(p, ',', lhs_len - (size_t)(p - eq));
    size_t len = end ? (size_t)(end - p) : lhs_len - (size_t)(p - eq);
    if ((i + 1 < nin) != (end != NULL)) return imp_fail(n, "equation '%s' does not match %d inputs", eq0, nin);
    if ((ops[i] = imp_req(n, i)) == IR_NONE) return -1;
    int rank = imp_nshape(n, ops[i]).rank;
    if (len > IR_MAX_RANK + 3) return imp_fail(n, "term too long");
    if ((cnt[i] = ein_term(p, len, rank, 0, codes[i], IR_MAX_RANK + 4, &nell[i])) < 0)
      return imp_fail(n, "cannot parse term %d of '%s'", i, eq0);
    if (nell[i] > maxell) maxell = nell[i];
    p = end ? end + 1 : p + len;
  }
  /* re-parse with the common ellipsis count so codes are right-aligned */
  p = eq;
  for (int i = 0; i < nin; i++) {
    const char *end = memchr(p, ',', lhs_len - (size_t)(p - eq));
    size_t len = end ? (size_t)(end - p) : lhs_len - (size_t)(p - eq);
    ein_term(p, len, imp_nshape(n, ops[i]).rank, maxell, codes[i], IR_MAX_RANK + 4, NULL);
    p = end ? end + 1 : p + len;
  }
  int out[EIN_LABELS], nout = 0, seen[EIN_LABELS] = {0};
  for (int i = 0; i < nin; i++)
    for (int k = 0; k < cnt[i]; k++) seen[codes[i][k]]++;
  if (arrow) {
    const char *o = arrow + 2;
    if (strlen(o) > IR_MAX_RANK + 3) return imp_fail(n, "output term too long");
    if ((nout = ein_term(o, strlen(o), -1, maxell, out, EIN_LABELS, NULL)) < 0) return imp_fail(n, "cannot parse output of '%s'", eq0);
  } else {
    for (int e = 0; e < maxell; e++) out[nout++] = EIN_ELL + e;
    for (int c = 0; c < EIN_ELL; c++)
      if (seen[c] == 1) out[nout++] = c;
  }
  /* global order: output labels, then the contracted ones */
  int pos[EIN_LABELS], R = 0;
  int64_t size[EIN_LABELS];
  for (int c = 0; c < EIN_LABELS; c++) pos[c] = -1, size[c] = 1;
  for (int k = 0; k < nout; k++) {
    if (pos[out[k]] >= 0 || !seen[out[k]]) return imp_fail(n, "bad output label in '%s'", eq0);
    pos[out[k]] = R++;
  }
  for (int i = 0; i < nin; i++)
    for (int k = 0; k < cnt[i]; k++)
      if (pos[codes[i][k]] < 0) pos[codes[i][k]] = R++;
  if (R > IR_MAX_RANK) return imp_fail(n, "too many labels (%d)", R);
  ir_ref prod = IR_NONE;
  for (int i = 0; i < nin; i++) {
    if (imp_dtype(n, ops[i]) == IR_F16) return imp_fail(n, "float16 dtype not supported");
    ir_ref x = ein_diagonal(n, ops[i], codes[i], &cnt[i]);
    if (x == IR_NONE) return -1;
    ir_shape s = imp_nshape(n, x);
    int perm[IR_MAX_RANK], c = 0;
    for (int gp = 0; gp < R; gp++)
      for (int k = 0; k < cnt[i]; k++)
        if (pos[codes[i][k]] == gp) perm[c++] = k;
    ir_shape full = {.rank = R};
    for (int gp = 0; gp < R; gp++) full.d[gp] = 1;
    for (int k = 0; k < cnt[i]; k++) {
      full.d[pos[codes[i][k]]] = s.d[k];
      if (s.d[k] != 1) {
        if (size[codes[i][k]] != 1 && size[codes[i][k]] != s.d[k]) return imp_fail(n, "label sizes differ");
        size[codes[i][k]] = s.d[k];
      }
    }
    x = ir_view_reshape(g, ir_view_permute(g, x, perm), full);
    prod = prod == IR_NONE ? x : ir_binary(g, IR_MUL, prod, x);
  }
  uint32_t axes = 0;
  for (int k = nout; k < R; k++) axes |= 1u << k;
  ir_ref r = axes ? ir_sum(g, prod, axes, false) : prod;
  /* output labels of size 1 in every operand but broadcast elsewhere */
  ir_shape os = {.rank = nout};
  for (int k = 0; k < nout; k++) os.d[k] = size[out[k]];
  r = ir_view_expand(g, r, os);
  return imp_set_out(n, 0, nin == 1 && !axes ? ir_move(g, r) : r);
}


const imp_op_entry imp_ops_einsum[] = {
    {"Einsum", lower_einsum, IMP_SYM},
    {NULL, NULL, 0},
};
