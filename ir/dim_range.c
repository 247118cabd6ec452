/* dim_range.c — decisions over symbolic dimensions: the range of a
 * polynomial over the symbols' bounds (interval arithmetic: every symbol is
 * >= 1, so a monomial's range over a box is reached at its corners), the
 * comparisons built on it, and the assumptions and equalities a graph
 * records about its symbols. The polynomials themselves: dim.c. */
#include "ir_impl.h"

/* Interval arithmetic with sticky infinities: lo saturates to INT64_MIN
 * (unbounded) below and is clamped above; hi the other way round, so both
 * stay sound (lo <= true minimum, hi >= true maximum). */
static int64_t add_lo(int64_t a, int64_t b) {
  int64_t r;
  if (a == INT64_MIN || b == INT64_MIN) return INT64_MIN;
  if (__builtin_add_overflow(a, b, &r)) return a < 0 ? INT64_MIN : INT64_MAX;
  return r;
}

static int64_t add_hi(int64_t a, int64_t b) {
  int64_t r;
  if (a == INT64_MAX || b == INT64_MAX) return INT64_MAX;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? INT64_MAX : INT64_MIN + 1;
  return r;
}

/* c * prod(v_k^e_k) for v_k >= 1 (INT64_MAX: unbounded), saturated at
 * +-INT64_MAX, reported as `inf` when any factor is unbounded. */
static int64_t mono_at(const ir_mono *m, const int64_t *v, bool *inf) {
  uint64_t mag = m->c < 0 ? 0 - (uint64_t)m->c : (uint64_t)m->c;
  int64_t p = mag > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)mag;
  *inf = false;
  for (int k = 0; k < IR_MAX_SYMS; k++)
    for (int e = 0; e < m->e[k]; e++) {
      if (v[k] == INT64_MAX)
        *inf = true;
      else if (__builtin_mul_overflow(p, v[k], &p))
        p = INT64_MAX, *inf = true;
    }
  return m->c < 0 ? -p : p;
}

void ir_dim_range(const ir_graph *g, int64_t d, int64_t *lo, int64_t *hi) {
  if (!ir_dim_is_sym(d)) {
    *lo = *hi = d;
    return;
  }
  const ir_mono *ms;
  int n = ir_dim_monos(d, &ms);
  if (n < 0) {
    *lo = INT64_MIN, *hi = INT64_MAX;
    return;
  }
  int64_t L = 0, H = 0, vlo[IR_MAX_SYMS], vhi[IR_MAX_SYMS];
  for (int k = 0; k < IR_MAX_SYMS; k++) {
    vlo[k] = g->sym_lo[k] >= 1 ? g->sym_lo[k] : 1;
    vhi[k] = g->sym_hi[k];
  }
  for (int i = 0; i < n; i++) {
    const ir_mono *m = &ms[i];
    bool inf_lo, inf_hi;
    int64_t a = mono_at(m, vlo, &inf_lo), b = mono_at(m, vhi, &inf_hi);
    if (m->c > 0) {
      L = add_lo(L, a);
      H = inf_hi ? INT64_MAX : add_hi(H, b);
    } else {
      L = inf_hi ? INT64_MIN : add_lo(L, b);
      H = add_hi(H, a);
    }
  }
  *lo = L, *hi = H;
}

/* A bound on `d` times a positive factor (an upper bound when `upper`),
 * with the floor symbols it holds linearly replaced by what their
 * definitions imply: den*q <= num and den*q >= num - den + 1 (highest
 * symbol first, as a definition only uses lower ones). IR_DIM_INVALID
 * when a floor symbol occurs in a product. */
static int64_t bound_floors(int64_t d, bool upper) {
  for (int it = 0; it <= IR_MAX_SYMS && ir_dim_is_sym(d); it++) {
    const ir_mono *ms;
    int n = ir_dim_monos(d, &ms);
    uint32_t m = ir_dim_syms(d);
    int k = -1;
    int64_t num = 0, den = 0;
    for (int j = IR_MAX_SYMS - 1; j >= 0 && k < 0; j--)
      if (m >> j & 1 && ir_dim_sym_def(j, &num, &den)) k = j;
    if (n < 0 || k < 0) return n >= 0 ? d : IR_DIM_INVALID;
    int64_t c = 0;
    for (int i = 0; i < n; i++) {
      const ir_mono *x = &ms[i];
      if (!x->e[k]) continue;
      for (int j = 0; j < IR_MAX_SYMS; j++)
        if (x->e[j] && (j != k || x->e[j] != 1)) return IR_DIM_INVALID;
      c = x->c;
    }
    int64_t cq = ir_dim_mul(ir_dim_mul(c, den), ir_dim_of_sym(k));
    int64_t rest = ir_dim_sub(ir_dim_mul(d, den), cq);
    int64_t sub = upper == (c > 0) ? num : ir_dim_add(num, 1 - den);
    d = ir_dim_add(rest, ir_dim_mul(c, sub));
  }
  return d;
}

unsigned ir_dim_cmp(const ir_graph *g, int64_t a, int64_t b) {
  if (a == b && ir_dim_valid(a)) return IR_CMP_EQ;
  if (g->nsame && ir_dim_same(g, a, b)) return IR_CMP_EQ;
  int64_t lo, hi;
  if (!ir_dim_is_sym(a) && !ir_dim_is_sym(b))
    return a < b ? IR_CMP_LT : a > b ? IR_CMP_GT : IR_CMP_EQ;
  bool floors = ir_dim_syms(a) != ir_dim_base_syms(ir_dim_syms(a)) || ir_dim_syms(b) != ir_dim_base_syms(ir_dim_syms(b));
  if (!ir_dim_is_sym(a) && !floors) {
    /* compare against b's range: no subtraction that could overflow */
    ir_dim_range(g, b, &lo, &hi);
    return (a < hi ? IR_CMP_LT : 0) | (lo <= a && a <= hi ? IR_CMP_EQ : 0) |
           (a > lo ? IR_CMP_GT : 0);
  }
  if (!ir_dim_is_sym(b) && !floors) {
    ir_dim_range(g, a, &lo, &hi);
    return (lo < b ? IR_CMP_LT : 0) | (lo <= b && b <= hi ? IR_CMP_EQ : 0) |
           (hi > b ? IR_CMP_GT : 0);
  }
  int64_t diff = ir_dim_sub(a, b);
  if (diff == IR_DIM_INVALID) return IR_CMP_LT | IR_CMP_EQ | IR_CMP_GT;
  ir_dim_range(g, diff, &lo, &hi);
  if (ir_dim_syms(diff) != ir_dim_base_syms(ir_dim_syms(diff))) { /* floor symbols: their definitions */
    int64_t u = bound_floors(diff, true), l = bound_floors(diff, false), ulo, uhi, llo, lhi;
    if (ir_dim_valid(u) && ir_dim_valid(l) && u != IR_DIM_INVALID && l != IR_DIM_INVALID) {
      ir_dim_range(g, u, &ulo, &uhi);
      ir_dim_range(g, l, &llo, &lhi);
      /* only the sign of a scaled bound counts */
      int64_t h = uhi < 0 ? -1 : 0, l0 = llo > 0 ? 1 : 0;
      if (uhi <= 0 && h < hi) hi = h;
      if (llo >= 0 && l0 > lo) lo = l0;
    }
  }
  return (lo < 0 ? IR_CMP_LT : 0) | (lo <= 0 && 0 <= hi ? IR_CMP_EQ : 0) | (hi > 0 ? IR_CMP_GT : 0);
}

int64_t ir_dim_ref(const ir_graph *g, int64_t d) {
  if (!ir_dim_is_sym(d)) return d;
  if (!ir_dim_valid(d)) return INT64_MAX / 4;
  int64_t v[IR_MAX_SYMS], r;
  for (int k = 0; k < IR_MAX_SYMS; k++) {
    v[k] = g->sym_hi[k] < IR_DIM_SYM_MAX ? g->sym_hi[k] : 64;
    if (v[k] < g->sym_lo[k]) v[k] = g->sym_lo[k];
  }
  return ir_dim_eval(d, v, &r) && r < INT64_MAX / 4 ? r : INT64_MAX / 4;
}

/* p = c + k*s for one symbol s: tightens s's bounds from p >= 0. */
static void tighten(ir_graph *g, int64_t p) {
  const ir_mono *ms;
  int n = ir_dim_monos(p, &ms);
  if (n < 0) return;
  int64_t c = 0, k = 0;
  int s = -1;
  for (int i = 0; i < n; i++) {
    const ir_mono *m = &ms[i];
    if (ir_mono_is_const(m)) {
      c = m->c;
      continue;
    }
    for (int j = 0; j < IR_MAX_SYMS; j++)
      if (m->e[j]) {
        if (m->e[j] != 1 || s >= 0) return;
        s = j;
      }
    k = m->c;
  }
  if (s < 0 || !k || k == INT64_MIN) return;
  if (k < 0) { /* s <= floor(c / -k) */
    int64_t b = c >= 0 ? c / -k : -((-c + -k - 1) / -k);
    if (b < g->sym_hi[s]) g->sym_hi[s] = b;
  } else { /* s >= ceil(-c / k) */
    int64_t b = -c >= 0 ? (-c + k - 1) / k : -(c / k);
    if (b > g->sym_lo[s]) g->sym_lo[s] = b;
  }
}

int ir_assume_nonneg(ir_graph *g, int64_t p, const char *why) {
  if (g->failed) return -1;
  if (!ir_dim_valid(p)) return ir_fail(g, "a size overflows");
  int64_t lo, hi;
  ir_dim_range(g, p, &lo, &hi);
  if (lo >= 0) return 0;
  char s[128];
  ir_dim_str(p, s, sizeof s);
  if (hi < 0) return ir_fail(g, "%s >= 0 never holds", s);
  for (int i = 0; i < g->nassume; i++)
    if (g->assume[i].p == p) return 0;
  g->assume = realloc(g->assume, (size_t)(g->nassume + 1) * sizeof *g->assume);
  IR_ASSERT(g->assume);
  g->assume[g->nassume++] = (ir_assumption_rec){p, ir_strdup(g, why ? why : g->label)};
  tighten(g, p);
  for (int k = 0; k < IR_MAX_SYMS; k++)
    if (g->sym_lo[k] > g->sym_hi[k])
      return ir_fail(g, "no value of symbol '%s' satisfies %s >= 0 and the other assumptions",
                     ir_dim_sym_name(k), s);
  return 0;
}

bool ir_dim_same(const ir_graph *g, int64_t a, int64_t b) {
  if (a == b) return true;
  for (int i = 0; i < g->nsame; i++)
    if ((g->same[i][0] == a && g->same[i][1] == b) || (g->same[i][0] == b && g->same[i][1] == a)) return true;
  return false;
}

int ir_dim_unify(ir_graph *g, int64_t a, int64_t b) {
  if (g->failed) return -1;
  if (ir_dim_same(g, a, b)) return 0;
  uint32_t sa = ir_dim_syms(a), sb = ir_dim_syms(b);
  char x[128], y[128];
  ir_dim_str(a, x, sizeof x);
  ir_dim_str(b, y, sizeof y);
  if ((sa == ir_dim_base_syms(sa) && sb == ir_dim_base_syms(sb)) || !(ir_dim_cmp(g, a, b) & IR_CMP_EQ))
    return ir_fail(g, "dimensions %s and %s differ", x, y);
  char why[300];
  snprintf(why, sizeof why, "%s = %s (%s)", x, y, g->label ? g->label : "?");
  if (ir_assume_nonneg(g, ir_dim_sub(a, b), why) || ir_assume_nonneg(g, ir_dim_sub(b, a), why)) return -1;
  g->same = realloc(g->same, (size_t)(g->nsame + 1) * sizeof *g->same);
  IR_ASSERT(g->same);
  g->same[g->nsame][0] = a, g->same[g->nsame][1] = b;
  g->nsame++;
  return 0;
}

int ir_assumption_count(const ir_graph *g) {
  return g->nassume;
}

int64_t ir_assumption(const ir_graph *g, int i, const char **why) {
  if (why) *why = g->assume[i].why;
  return g->assume[i].p;
}

int ir_sym_count(const ir_graph *g) {
  return g->nsyms;
}

int ir_sym(const ir_graph *g, int i) {
  return g->syms[i];
}

void ir_note_syms(ir_graph *g, const ir_shape *s) {
  for (int i = 0; i < s->rank; i++) {
    uint32_t m = ir_dim_syms(s->d[i]);
    for (int k = 0; k < IR_MAX_SYMS; k++) {
      if (!(m & (1u << k))) continue;
      bool have = false;
      for (int j = 0; j < g->nsyms; j++) have |= g->syms[j] == k;
      if (!have) g->syms[g->nsyms++] = k;
    }
  }
}
