/* dim.c — symbolic dimensions: interned polynomials over the symbols.
 *
 * A polynomial is a sum of monomials c * s0^e0 * s1^e1 ..., kept in a
 * canonical order (exponent vectors in descending lexicographic order, equal
 * ones merged, zero coefficients dropped) and interned by a hash of that
 * form, so two dimensions are equal exactly when their int64 values are.
 * A polynomial without symbols is returned as its plain value. Decisions
 * over them (ir_dim_cmp, assumptions): dim_range.c. */
#include "ir_impl.h"

#include <string.h>

typedef ir_mono mono;

typedef struct {
  int start, n; /* monomials in T.mono */
  uint64_t hash;
} poly;

/* A polynomial being computed (not interned yet); `bad` after an overflow. */
typedef struct {
  mono *m;
  int n, cap;
  bool bad;
} mlist;

static struct {
  mono *mono;
  int nmono, capmono;
  poly *poly;
  int npoly, cappoly;
  int *slot; /* hash table of poly ids + 1 (0: empty), power-of-two size */
  int nslot;
  char *name[IR_MAX_SYMS], *cname[IR_MAX_SYMS];
  /* a derived symbol k (den[k] > 1) stands for floor(num[k] / den[k]), num
   * a polynomial over lower-numbered symbols; den[k] = 0: an input symbol */
  int64_t num[IR_MAX_SYMS], den[IR_MAX_SYMS];
  int nsym;
  int users;
} T;

void ir_dim_retain(void) {
  T.users++;
}

void ir_dim_release(void) {
  if (--T.users > 0) return;
  free(T.mono);
  free(T.poly);
  free(T.slot);
  for (int i = 0; i < T.nsym; i++) free(T.name[i]), free(T.cname[i]);
  memset(&T, 0, sizeof T);
}

/* ---- building polynomials ---- */

/* The polynomial a tag names; NULL for IR_DIM_INVALID and for values in the
 * tag range that name nothing (forged by a model, or overflowed into it). */
static const poly *poly_of(int64_t d) {
  if (!ir_dim_is_sym(d) || d == IR_DIM_INVALID || d - IR_DIM_TAG_BASE >= T.npoly) return NULL;
  return &T.poly[d - IR_DIM_TAG_BASE];
}

bool ir_dim_valid(int64_t d) {
  return !ir_dim_is_sym(d) || poly_of(d);
}

int ir_dim_monos(int64_t d, const ir_mono **m) {
  const poly *p = poly_of(d);
  if (!p) return -1;
  *m = &T.mono[p->start];
  return p->n;
}

static void ml_push(mlist *l, const mono *m) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 8;
    l->m = realloc(l->m, (size_t)l->cap * sizeof *l->m);
    IR_ASSERT(l->m);
  }
  l->m[l->n++] = *m;
}

static mlist ml_of(int64_t d) {
  mlist l = {0};
  const poly *p = poly_of(d);
  if (p) {
    for (int i = 0; i < p->n; i++) ml_push(&l, &T.mono[p->start + i]);
  } else if (ir_dim_is_sym(d)) {
    l.bad = true;
  } else if (d) {
    mono m = {d, {0}};
    ml_push(&l, &m);
  }
  return l;
}

static int cmp_mono(const void *a, const void *b) {
  const mono *x = a, *y = b;
  for (int k = 0; k < IR_MAX_SYMS; k++)
    if (x->e[k] != y->e[k]) return x->e[k] > y->e[k] ? -1 : 1;
  return 0;
}

bool ir_mono_is_const(const ir_mono *m) {
  for (int k = 0; k < IR_MAX_SYMS; k++)
    if (m->e[k]) return false;
  return true;
}

/* Sorts, merges equal monomials and drops zero ones. */
static void ml_canon(mlist *l) {
  if (l->bad || !l->n) return;
  qsort(l->m, (size_t)l->n, sizeof *l->m, cmp_mono);
  int k = 0;
  for (int i = 0; i < l->n; i++) {
    if (k && !cmp_mono(&l->m[k - 1], &l->m[i])) {
      if (__builtin_add_overflow(l->m[k - 1].c, l->m[i].c, &l->m[k - 1].c)) l->bad = true;
    } else {
      l->m[k++] = l->m[i];
    }
  }
  int j = 0;
  for (int i = 0; i < k; i++)
    if (l->m[i].c) l->m[j++] = l->m[i];
  l->n = j;
}

static uint64_t hash_monos(const mono *m, int n) {
  uint64_t h = 1469598103934665603ull;
  const unsigned char *b = (const unsigned char *)m;
  for (size_t i = 0; i < (size_t)n * sizeof *m; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

static bool same_poly(const poly *p, const mlist *l) {
  return p->n == l->n && !memcmp(&T.mono[p->start], l->m, (size_t)l->n * sizeof *l->m);
}

static void rehash(int nslot) {
  free(T.slot);
  T.nslot = nslot;
  T.slot = calloc((size_t)nslot, sizeof *T.slot);
  IR_ASSERT(T.slot);
  for (int id = 0; id < T.npoly; id++) {
    int i = (int)(T.poly[id].hash & (uint64_t)(nslot - 1));
    while (T.slot[i]) i = (i + 1) & (nslot - 1);
    T.slot[i] = id + 1;
  }
}

/* The dimension of a canonical list (consumed): a plain value, a tag, or
 * IR_DIM_INVALID. Plain values never fall into the tag range. */
static int64_t ml_intern(mlist *l) {
  int64_t r;
  if (l->bad) {
    r = IR_DIM_INVALID;
  } else if (!l->n) {
    r = 0;
  } else if (l->n == 1 && ir_mono_is_const(&l->m[0])) {
    r = ir_dim_is_sym(l->m[0].c) ? IR_DIM_INVALID : l->m[0].c;
  } else {
    uint64_t h = hash_monos(l->m, l->n);
    if (2 * (T.npoly + 1) > T.nslot) rehash(T.nslot ? 2 * T.nslot : 256);
    int i = (int)(h & (uint64_t)(T.nslot - 1));
    for (; T.slot[i]; i = (i + 1) & (T.nslot - 1))
      if (T.poly[T.slot[i] - 1].hash == h && same_poly(&T.poly[T.slot[i] - 1], l)) break;
    if (T.slot[i]) {
      r = IR_DIM_TAG_BASE + T.slot[i] - 1;
    } else if (T.npoly + 1 >= IR_DIM_TAG_COUNT) {
      r = IR_DIM_INVALID;
    } else {
      if (T.npoly == T.cappoly) {
        T.cappoly = T.cappoly ? 2 * T.cappoly : 64;
        T.poly = realloc(T.poly, (size_t)T.cappoly * sizeof *T.poly);
        IR_ASSERT(T.poly);
      }
      while (T.nmono + l->n > T.capmono) {
        T.capmono = T.capmono ? 2 * T.capmono : 256;
        T.mono = realloc(T.mono, (size_t)T.capmono * sizeof *T.mono);
        IR_ASSERT(T.mono);
      }
      memcpy(&T.mono[T.nmono], l->m, (size_t)l->n * sizeof *l->m);
      T.poly[T.npoly] = (poly){T.nmono, l->n, h};
      T.nmono += l->n;
      T.slot[i] = ++T.npoly;
      r = IR_DIM_TAG_BASE + T.npoly - 1;
    }
  }
  free(l->m);
  return r;
}

/* ---- symbols ---- */

/* A symbol's C identifier and isl parameter: generated, so that no model
 * name can collide with the code's own identifiers or C's (a dim_param
 * "model_OK", "max_i64", "int") nor be too long or not an identifier. */
static char *make_cname(int id) {
  char *s = malloc(24);
  IR_ASSERT(s);
  snprintf(s, 24, "o2c_sym%d", id);
  return s;
}

int64_t ir_dim_sym(const char *name) {
  int id = -1;
  for (int i = 0; i < T.nsym && id < 0; i++)
    if (!T.den[i] && !strcmp(T.name[i], name)) id = i; /* a model name never finds a derived symbol */
  if (id < 0) {
    int inputs = 0;
    for (int i = 0; i < T.nsym; i++) inputs += !T.den[i];
    if (T.nsym == IR_MAX_SYMS || inputs == IR_MAX_INPUT_SYMS) return IR_DIM_INVALID;
    id = T.nsym;
    T.name[id] = strdup(name);
    IR_ASSERT(T.name[id]);
    T.cname[id] = make_cname(id);
    T.nsym++;
  }
  mlist l = {0};
  mono m = {1, {0}};
  m.e[id] = 1;
  ml_push(&l, &m);
  return ml_intern(&l);
}

const char *ir_dim_sym_name(int id) {
  return id >= 0 && id < T.nsym ? T.name[id] : "?";
}

const char *ir_dim_sym_cname(int id) {
  return id >= 0 && id < T.nsym ? T.cname[id] : "?";
}

/* ---- derived symbols: floor divisions ---- */

int64_t ir_dim_of_sym(int id) {
  mlist l = {0};
  mono m = {1, {0}};
  m.e[id] = 1;
  ml_push(&l, &m);
  return ml_intern(&l);
}

bool ir_dim_sym_def(int id, int64_t *num, int64_t *den) {
  if (id < 0 || id >= T.nsym || !T.den[id]) return false;
  *num = T.num[id], *den = T.den[id];
  return true;
}

uint32_t ir_dim_base_syms(uint32_t mask) {
  for (int k = T.nsym - 1; k >= 0; k--) /* definitions use lower ids only */
    if (mask >> k & 1 && T.den[k]) mask = (mask & ~(1u << k)) | ir_dim_syms(T.num[k]);
  return mask;
}

int64_t ir_dim_floordiv(ir_graph *g, int64_t a, int64_t b) {
  int64_t q;
  if (!ir_dim_valid(a) || ir_dim_is_sym(b) || b < 1) return IR_DIM_INVALID;
  if (!ir_dim_is_sym(a)) return a >= 0 ? a / b : a == INT64_MIN ? IR_DIM_INVALID : -((-a + b - 1) / b);
  if (ir_dim_div_exact(a, b, &q)) return q;
  /* floor((b*P + R + b*c + r) / b) = P + c + floor((R + r) / b): monomials
   * whose coefficients b divides and the constant's multiple of b come out;
   * what stays is canonical, so equal floors are one symbol */
  mlist l = ml_of(a), rest = {0}, out = {0};
  for (int i = 0; i < l.n; i++) {
    mono m = l.m[i];
    if (ir_mono_is_const(&m)) {
      int64_t c = m.c >= 0 ? m.c / b : -((-(m.c + 1)) / b) - 1, r = m.c - c * b;
      mono mc = {c, {0}}, mr = {r, {0}};
      if (c) ml_push(&out, &mc);
      if (r) ml_push(&rest, &mr);
    } else if (m.c % b == 0) {
      m.c /= b;
      ml_push(&out, &m);
    } else {
      ml_push(&rest, &m);
    }
  }
  free(l.m);
  rest.bad = out.bad = l.bad;
  ml_canon(&rest);
  int64_t num = ml_intern(&rest), lo, hi;
  ml_canon(&out);
  int64_t whole = ml_intern(&out);
  if (!ir_dim_valid(num) || !ir_dim_valid(whole)) return IR_DIM_INVALID;
  if (!ir_dim_is_sym(num)) return ir_dim_add(whole, num / b); /* 0 <= num < b */
  /* every symbol is >= 1: so is the floor, from what is known now, with
   * as few multiples of b moved back into num as that takes */
  ir_dim_range(g, num, &lo, &hi);
  if (lo < b) {
    int64_t j, back;
    if (lo <= -(INT64_C(1) << 40) || ir_mul_ov((b - lo + b - 1) / b, b, &back)) return IR_DIM_INVALID;
    j = back / b;
    num = ir_dim_add(num, back), whole = ir_dim_sub(whole, j);
    if (!ir_dim_valid(num) || !ir_dim_valid(whole)) return IR_DIM_INVALID;
    ir_dim_range(g, num, &lo, &hi);
    if (lo < b) return IR_DIM_INVALID;
  }
  int id = -1;
  for (int k = 0; k < T.nsym && id < 0; k++)
    if (T.den[k] == b && T.num[k] == num) id = k;
  if (id < 0) {
    if (T.nsym == IR_MAX_SYMS) return IR_DIM_INVALID;
    id = T.nsym;
    size_t n = ir_dim_str(num, NULL, 0) + 48;
    T.name[id] = malloc(n);
    IR_ASSERT(T.name[id]);
    char *t = malloc(n);
    IR_ASSERT(t);
    ir_dim_str(num, t, n);
    snprintf(T.name[id], n, "floor((%s)/%lld)", t, (long long)b);
    free(t);
    T.cname[id] = make_cname(id);
    T.num[id] = num, T.den[id] = b;
    T.nsym++;
  }
  g->sym_lo[id] = lo / b;
  g->sym_hi[id] = hi / b < IR_DIM_SYM_MAX ? hi / b : IR_DIM_SYM_MAX;
  return ir_dim_add(whole, ir_dim_of_sym(id));
}

/* ---- arithmetic ---- */

int64_t ir_dim_add(int64_t a, int64_t b) {
  int64_t r;
  if (!ir_dim_is_sym(a) && !ir_dim_is_sym(b))
    return __builtin_add_overflow(a, b, &r) || ir_dim_is_sym(r) ? IR_DIM_INVALID : r;
  mlist l = ml_of(a), m = ml_of(b);
  for (int i = 0; i < m.n; i++) ml_push(&l, &m.m[i]);
  l.bad |= m.bad;
  free(m.m);
  ml_canon(&l);
  return ml_intern(&l);
}

int64_t ir_dim_neg(int64_t a) {
  if (!ir_dim_is_sym(a)) return a == INT64_MIN ? IR_DIM_INVALID : -a;
  mlist l = ml_of(a);
  for (int i = 0; i < l.n; i++) {
    if (l.m[i].c == INT64_MIN) l.bad = true;
    l.m[i].c = -l.m[i].c;
  }
  return ml_intern(&l);
}

int64_t ir_dim_sub(int64_t a, int64_t b) {
  int64_t r;
  if (!ir_dim_is_sym(a) && !ir_dim_is_sym(b))
    return __builtin_sub_overflow(a, b, &r) || ir_dim_is_sym(r) ? IR_DIM_INVALID : r;
  return ir_dim_add(a, ir_dim_neg(b));
}

static mlist ml_mul(const mlist *a, const mlist *b) {
  mlist l = {0};
  l.bad = a->bad || b->bad;
  for (int i = 0; i < a->n && !l.bad; i++)
    for (int j = 0; j < b->n && !l.bad; j++) {
      mono m;
      if (__builtin_mul_overflow(a->m[i].c, b->m[j].c, &m.c)) l.bad = true;
      for (int k = 0; k < IR_MAX_SYMS; k++) {
        unsigned e = (unsigned)a->m[i].e[k] + b->m[j].e[k];
        if (e > 255) l.bad = true;
        m.e[k] = (uint8_t)e;
      }
      ml_push(&l, &m);
    }
  ml_canon(&l);
  return l;
}

int64_t ir_dim_mul(int64_t a, int64_t b) {
  int64_t r;
  if (!ir_dim_is_sym(a) && !ir_dim_is_sym(b))
    return __builtin_mul_overflow(a, b, &r) || ir_dim_is_sym(r) ? IR_DIM_INVALID : r;
  mlist x = ml_of(a), y = ml_of(b), l = ml_mul(&x, &y);
  free(x.m);
  free(y.m);
  return ml_intern(&l);
}

/* Multivariate division by leading terms (lex order): exact when the
 * remainder vanishes. Over an integral domain the leading term of q*b is
 * LT(q)*LT(b), so an exact quotient is always found this way. */
bool ir_dim_div_exact(int64_t a, int64_t b, int64_t *q) {
  if (!ir_dim_valid(a) || !ir_dim_valid(b) || b == 0) return false;
  if (!ir_dim_is_sym(a) && !ir_dim_is_sym(b)) {
    if ((a == INT64_MIN && b == -1) || a % b) return false;
    *q = a / b;
    return true;
  }
  mlist r = ml_of(a), d = ml_of(b), quo = {0};
  bool ok = true;
  for (int steps = 0; r.n && ok; steps++) {
    mono t = r.m[0];
    for (int k = 0; k < IR_MAX_SYMS && ok; k++) {
      if (t.e[k] < d.m[0].e[k]) ok = false;
      t.e[k] = (uint8_t)(t.e[k] - d.m[0].e[k]);
    }
    if (!ok || steps > 1000 || (t.c == INT64_MIN && d.m[0].c == -1) || t.c % d.m[0].c) {
      ok = false;
      break;
    }
    t.c /= d.m[0].c;
    ml_push(&quo, &t);
    /* r -= t * d */
    mlist tl = {0};
    mono nt = t;
    nt.c = t.c == INT64_MIN ? 0 : -t.c;
    if (t.c == INT64_MIN) ok = false;
    ml_push(&tl, &nt);
    mlist prod = ml_mul(&tl, &d);
    free(tl.m);
    for (int i = 0; i < prod.n; i++) ml_push(&r, &prod.m[i]);
    r.bad |= prod.bad;
    free(prod.m);
    ml_canon(&r);
    if (r.bad) ok = false;
  }
  free(r.m);
  free(d.m);
  if (!ok) return free(quo.m), false;
  ml_canon(&quo);
  int64_t v = ml_intern(&quo);
  if (v == IR_DIM_INVALID) return false;
  *q = v;
  return true;
}

static bool mono_eval(const mono *m, const int64_t *values, int64_t *out) {
  int64_t v = m->c;
  for (int k = 0; k < IR_MAX_SYMS; k++)
    for (int e = 0; e < m->e[k]; e++)
      if (__builtin_mul_overflow(v, values[k], &v)) return false;
  *out = v;
  return true;
}

static bool poly_eval(const poly *p, const int64_t *values, int64_t *out) {
  int64_t s = 0, t;
  for (int i = 0; i < p->n; i++)
    if (!mono_eval(&T.mono[p->start + i], values, &t) || __builtin_add_overflow(s, t, &s)) return false;
  *out = s;
  return true;
}

bool ir_dim_eval(int64_t d, const int64_t *values, int64_t *out) {
  if (!ir_dim_is_sym(d)) return *out = d, true;
  const poly *p = poly_of(d);
  if (!p) return false;
  /* derived symbols from their definitions (lower ids first: a definition
   * only uses lower ones), whatever the caller put there */
  int64_t v[IR_MAX_SYMS];
  uint32_t bad = 0;
  memcpy(v, values, sizeof v);
  for (int k = 0; k < T.nsym; k++) {
    if (!T.den[k]) continue;
    int64_t x = 0;
    const poly *q = poly_of(T.num[k]);
    if (q ? !poly_eval(q, v, &x) : (x = T.num[k], ir_dim_is_sym(x))) bad |= 1u << k;
    if (x == INT64_MIN) x = 0, bad |= 1u << k;
    v[k] = x >= 0 ? x / T.den[k] : -((-x + T.den[k] - 1) / T.den[k]); /* floor */
  }
  if (ir_dim_syms(d) & bad) return false;
  return poly_eval(p, v, out);
}

bool ir_dim_is_affine(int64_t d) {
  const poly *p = poly_of(d);
  if (!p) return !ir_dim_is_sym(d);
  for (int i = 0; i < p->n; i++) {
    const mono *m = &T.mono[p->start + i];
    int deg = 0;
    for (int k = 0; k < IR_MAX_SYMS; k++) deg += m->e[k];
    if (deg > 1 || m->c > INT32_MAX || m->c < -INT32_MAX) return false;
  }
  return true;
}

uint32_t ir_dim_syms(int64_t d) {
  const poly *p = poly_of(d);
  if (!p) return 0;
  uint32_t mask = 0;
  for (int i = 0; i < p->n; i++)
    for (int k = 0; k < IR_MAX_SYMS; k++)
      if (T.mono[p->start + i].e[k]) mask |= 1u << k;
  return mask;
}

int ir_dim_sym_id(int64_t d) {
  const poly *p = poly_of(d);
  if (!p) return -1;
  if (p->n != 1 || T.mono[p->start].c != 1) return -1;
  int id = -1;
  for (int k = 0; k < IR_MAX_SYMS; k++) {
    uint8_t e = T.mono[p->start].e[k];
    if (!e) continue;
    if (e != 1 || id >= 0) return -1;
    id = k;
  }
  return id;
}

int ir_dim_first_sym(int64_t d) {
  uint32_t m = ir_dim_base_syms(ir_dim_syms(d));
  for (int k = 0; k < IR_MAX_SYMS; k++)
    if (m & (1u << k)) return k;
  return -1;
}

bool ir_shape_is_static(const ir_shape *s) {
  for (int i = 0; i < s->rank; i++)
    if (ir_dim_is_sym(s->d[i])) return false;
  return true;
}

int ir_shape_first_sym(const ir_shape *s) {
  for (int i = 0; i < s->rank; i++) {
    int k = ir_dim_first_sym(s->d[i]);
    if (k >= 0) return k;
  }
  return -1;
}

/* ---- printing ---- */

typedef struct {
  char *buf;
  size_t n, k;
} out;

/* Appends what fits; o->k counts the whole text (the length returned). */
static void put(out *o, const char *s) {
  size_t l = strlen(s);
  if (o->k + 1 < o->n) {
    size_t c = l < o->n - 1 - o->k ? l : o->n - 1 - o->k;
    memcpy(o->buf + o->k, s, c);
    o->buf[o->k + c] = 0;
  }
  o->k += l;
}

/* A magnitude; in C, INT64_C() when it does not fit an int. */
static void put_u(out *o, uint64_t v, bool c) {
  char s[48];
  if (c && v > (uint64_t)INT32_MAX)
    snprintf(s, sizeof s, "INT64_C(%llu)", (unsigned long long)v);
  else
    snprintf(s, sizeof s, "%llu", (unsigned long long)v);
  put(o, s);
}

typedef enum { PRINT_STR, PRINT_C, PRINT_BOUND } print_mode;

/* One printer for three forms: names joined tightly (STR); the symbols' C
 * identifiers with spaces, parenthesised unless a bare symbol (C); the sum
 * of the monomials' magnitudes in double (BOUND). */
static size_t print_dim(int64_t d, char *buf, size_t n, print_mode mode) {
  out o = {buf, n, 0};
  bool c = mode != PRINT_STR, bound = mode == PRINT_BOUND;
  if (n) buf[0] = 0;
  if (ir_dim_is_sym(d) && !poly_of(d)) return put(&o, "?"), o.k;
  if (!ir_dim_is_sym(d)) {
    if (d == INT64_MIN)
      return put(&o, bound ? "9223372036854775808.0" : c ? "INT64_MIN" : "-9223372036854775808"), o.k;
    if (d < 0 && !bound) put(&o, "-");
    put_u(&o, d < 0 ? 0 - (uint64_t)d : (uint64_t)d, c && !bound);
    if (bound) put(&o, ".0");
    return o.k;
  }
  const poly *p = poly_of(d);
  bool bare = ir_dim_sym_id(d) >= 0 && !bound;
  if (c && !bare) put(&o, "(");
  for (int i = 0; i < p->n; i++) {
    const mono *m = &T.mono[p->start + i];
    bool neg = m->c < 0 && !bound, constant = ir_mono_is_const(m), first = true;
    uint64_t mag = m->c < 0 ? 0 - (uint64_t)m->c : (uint64_t)m->c;
    if (i)
      put(&o, c ? (neg ? " - " : " + ") : (neg ? "-" : "+"));
    else if (neg)
      put(&o, "-");
    if (mag != 1 || constant || bound) {
      put_u(&o, mag, c && !bound), first = false;
      if (bound) put(&o, ".0");
    }
    for (int s = 0; s < IR_MAX_SYMS; s++)
      for (int e = 0; e < m->e[s]; e++) {
        if (!first) put(&o, c ? " * " : "*");
        if (bound) put(&o, "(double)");
        put(&o, c ? ir_dim_sym_cname(s) : ir_dim_sym_name(s));
        first = false;
      }
  }
  if (c && !bare) put(&o, ")");
  return o.k;
}

size_t ir_dim_str(int64_t d, char *buf, size_t n) {
  return print_dim(d, buf, n, PRINT_STR);
}

size_t ir_dim_to_c(int64_t d, char *buf, size_t n) {
  return print_dim(d, buf, n, PRINT_C);
}

size_t ir_dim_bound_c(int64_t d, char *buf, size_t n) {
  return print_dim(d, buf, n, PRINT_BOUND);
}
