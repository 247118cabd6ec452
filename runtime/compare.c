/* compare.c — outputs against reference values (run --expect, verify):
 * the comparison with tolerances, and the line that says what differs. */
#include "runtime.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool rt_dtype_matches(ir_dtype want, ir_dtype given) {
  return given == want || (want == IR_BF16 && given == IR_U16);
}

/* The spacing of bfloat16 values at |b| (8 significant bits). */
static double bf16_ulp(double b) {
  int e;
  frexp(b, &e); /* |b| in [2^(e-1), 2^e) */
  return ldexp(1.0, (e - 1 < -126 ? -126 : e - 1) - 7);
}

/* Which of rt_diff's odd kinds the pair (a, b) is, or -1: a NaN or an
 * infinity the other side does not have. They are counted apart because
 * they leave max_abs untouched (a difference with them is no number). */
static int odd_kind(double a, double b) {
  if (isnan(a) != isnan(b)) return isnan(a) ? RT_NAN_GOT : RT_NAN_WANT;
  if (isnan(a) || a == b) return -1;
  if (isinf(a)) return RT_INF_GOT;
  return isinf(b) ? RT_INF_WANT : -1;
}

/* Floats within atol + rtol|b| (NaN only equal to NaN, infinities exact);
 * integers and bools exactly, as integers: through a double, 2^53 + 1 would
 * equal 2^53, and a relative tolerance would let 10000 pass for 10005.
 * bfloat16 also within one unit in its last place: two correct roundings
 * of one value differ by that much (ONNX 1.12's Cast test data truncates
 * float to bfloat16, where onnxruntime and later ONNX round to nearest
 * even, as this compiler does). */
bool rt_compare(const imp_tensor *got, const imp_tensor *want, double atol, double rtol, rt_diff *d) {
  memset(d, 0, sizeof *d);
  d->bad_elem = -1;
  d->shape_ok = rt_dtype_matches(got->dtype, want->dtype) && ir_shape_eq(&got->shape, &want->shape);
  if (!d->shape_ok) return false;
  int64_t N = ir_shape_numel(&got->shape);
  bool fl = ir_dtype_is_float(got->dtype);
  for (int64_t i = 0; i < N; i++) {
    bool ok;
    if (!fl) {
      /* signed values with the sign bit flipped keep their order as
       * unsigned, so the difference of -5 and 3 is 8, not 2^64 - 8 */
      uint64_t flip = ir_dtype_is_signed(got->dtype) ? UINT64_C(1) << 63 : 0;
      uint64_t a = (uint64_t)ir_elem_i(got->dtype, got->data, i) ^ flip,
               b = (uint64_t)ir_elem_i(want->dtype, want->data, i) ^ flip;
      double e = a == b ? 0 : (double)(a > b ? a - b : b - a);
      if (e > d->max_abs) d->max_abs = e;
      int64_t v = ir_elem_i(want->dtype, want->data, i);
      double w = flip ? fabs((double)v) : (double)(uint64_t)v;
      if (w > d->max_want) d->max_want = w;
      ok = a == b;
    } else {
      double a = ir_elem_f(got->dtype, got->data, i), b = ir_elem_f(got->dtype, want->data, i);
      int k = odd_kind(a, b);
      if (isfinite(b) && fabs(b) > d->max_want) d->max_want = fabs(b);
      if (k >= 0 && !d->odd[k]++) d->odd_at[k] = i;
      if (isnan(a) || isnan(b)) ok = isnan(a) && isnan(b);
      else if (isinf(a) || isinf(b)) ok = a == b;
      else {
        double e = fabs(a - b);
        if (e > d->max_abs) d->max_abs = e;
        if (b != 0 && e / fabs(b) > d->max_rel) d->max_rel = e / fabs(b);
        ok = e <= atol + rtol * fabs(b) || (got->dtype == IR_BF16 && e <= bf16_ulp(b));
      }
    }
    if (!ok) d->mismatches++;
  }
  return d->mismatches == 0;
}

bool rt_value_compare(const imp_tensor *got, const imp_tensor *want, double atol, double rtol, rt_diff *d) {
  if (got->kind == IMP_IO_TENSOR && want->kind == IMP_IO_TENSOR) return rt_compare(got, want, atol, rtol, d);
  memset(d, 0, sizeof *d);
  d->bad_elem = -1;
  if (got->kind != want->kind || got->present != want->present || got->nelem != want->nelem) return false;
  d->shape_ok = true;
  for (int i = 0; i < got->nelem; i++) {
    rt_diff e;
    rt_compare(&got->elem[i], &want->elem[i], atol, rtol, &e);
    if (!e.shape_ok && d->shape_ok) d->bad_elem = i;
    d->shape_ok &= e.shape_ok;
    d->mismatches += e.mismatches;
    d->max_abs = e.max_abs > d->max_abs ? e.max_abs : d->max_abs;
    d->max_rel = e.max_rel > d->max_rel ? e.max_rel : d->max_rel;
    d->max_want = e.max_want > d->max_want ? e.max_want : d->max_want;
    for (int k = 0; k < RT_ODD_KINDS; k++)
      if (e.odd[k] && !d->odd[k]) d->odd[k] = e.odd[k], d->odd_at[k] = e.odd_at[k], d->odd_elem[k] = i;
      else d->odd[k] += e.odd[k];
  }
  return d->shape_ok && !d->mismatches;
}

/* Appends to buf[n] at *k (snprintf's truncation: *k may pass n). */
static void put(char *buf, size_t n, size_t *k, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t n, size_t *k, const char *fmt, ...) {
  if (*k >= n) return;
  va_list ap;
  va_start(ap, fmt);
  *k += (size_t)vsnprintf(buf + *k, n - *k, fmt, ap);
  va_end(ap);
}

/* "f32[2,3]"; a sequence or an optional as "f32 sequence of 2" (the first
 * element's dtype) — the form run has always printed before the colon. */
static void value_str(const imp_tensor *v, char *buf, size_t n) {
  char sh[128];
  ir_shape_str(&v->shape, sh, sizeof sh);
  if (v->kind != IMP_IO_TENSOR)
    snprintf(sh, sizeof sh, " %s of %d",
             v->kind == IMP_IO_SEQUENCE ? "sequence" : v->present ? "optional" : "empty optional", v->nelem);
  snprintf(buf, n, "%s%s", ir_dtype_name(v->kind != IMP_IO_TENSOR && v->nelem ? v->elem[0].dtype : v->dtype), sh);
}

/* Flat index `at` of a tensor of shape `s` as "[i,j,k]". */
static void index_str(const ir_shape *s, int64_t at, char *buf, size_t n) {
  int64_t idx[IR_MAX_RANK];
  for (int a = s->rank - 1; a >= 0; a--) {
    idx[a] = s->d[a] > 0 ? at % s->d[a] : 0;
    at = s->d[a] > 0 ? at / s->d[a] : 0;
  }
  size_t k = 0;
  put(buf, n, &k, "[");
  for (int a = 0; a < s->rank; a++) put(buf, n, &k, "%s%lld", a ? "," : "", (long long)idx[a]);
  put(buf, n, &k, "]");
}

/* ": shape f32[6], onnxruntime's f32[7]" (the word is "dtype" when only
 * the dtype differs); in a sequence, the first element that differs. */
static void put_shapes(const imp_tensor *got, const imp_tensor *want, const rt_diff *d, const char *ref, char *buf,
                       size_t n, size_t *k) {
  char g[160], w[160];
  int e = d->bad_elem;
  if (e >= 0) got = &got->elem[e], want = &want->elem[e], put(buf, n, k, ": element %d", e);
  value_str(got, g, sizeof g);
  value_str(want, w, sizeof w);
  bool same_shape = got->kind != IMP_IO_TENSOR || ir_shape_eq(&got->shape, &want->shape);
  const char *what = got->kind != IMP_IO_TENSOR ? ""
                     : same_shape                 ? "dtype "
                     : got->dtype == want->dtype  ? "shape "
                                                  : "dtype and shape ";
  put(buf, n, k, "%s%s%s, %s %s", e >= 0 ? " " : ": ", what, g, ref, w);
}

/* "8 NaN, numbers in onnxruntime's (first at [0])" for each odd kind
 * present, joined by ", "; *k unchanged when there is none. */
static void put_odd(const imp_tensor *want, const rt_diff *d, const char *ref, char *buf, size_t n, size_t *k) {
  static const char *const what[RT_ODD_KINDS][2] = {
      [RT_NAN_GOT] = {"NaN, numbers in ", ""},
      [RT_NAN_WANT] = {"NaN in ", ", numbers here"},
      [RT_INF_GOT] = {"inf, other values in ", ""},
      [RT_INF_WANT] = {"inf in ", ", other values here"},
  };
  const char *sep = "";
  for (int o = 0; o < RT_ODD_KINDS; o++) {
    if (!d->odd[o]) continue;
    const imp_tensor *t = want->kind == IMP_IO_TENSOR ? want : &want->elem[d->odd_elem[o]];
    char at[IR_MAX_RANK * 24 + 4];
    index_str(&t->shape, d->odd_at[o], at, sizeof at);
    put(buf, n, k, "%s%lld %s%s%s (first at %s", sep, (long long)d->odd[o], what[o][0], ref, what[o][1], at);
    if (want->kind != IMP_IO_TENSOR) put(buf, n, k, " of element %d", d->odd_elem[o]);
    put(buf, n, k, ")");
    sep = ", ";
  }
}

void rt_diff_str(const imp_tensor *got, const imp_tensor *want, const rt_diff *d, bool ok, const char *ref,
                 bool run_form, char *buf, size_t n) {
  size_t k = 0;
  *buf = 0;
  if (!d->shape_ok) {
    put_shapes(got, want, d, ref, buf, n, &k);
    put(buf, n, &k, ": FAIL");
    return;
  }
  char v[160];
  value_str(want, v, sizeof v);
  put(buf, n, &k, " %s: ", v);
  int64_t odd = 0;
  for (int o = 0; o < RT_ODD_KINDS; o++) odd += d->odd[o];
  put_odd(want, d, ref, buf, n, &k);
  /* the finite values' errors: beside NaN or inf alone they would read
   * "max abs err 0", which hid what failed */
  bool values = ok || d->mismatches > odd;
  if (values)
    put(buf, n, &k, "%s%s %.3g, %s %.3g", odd ? ", " : "", run_form ? "max abs" : "max abs err", d->max_abs,
        run_form ? "max rel" : "max rel err", d->max_rel);
  if (run_form) put(buf, n, &k, ", %lld mismatches", (long long)d->mismatches);
  /* on a large output a correct float32 answer may be off by more than
   * atol where a value is small (0.02 on outputs reaching 320): the error
   * against the output's scale tells rounding from a wrong answer */
  if (!ok && values && d->max_want > 0)
    put(buf, n, &k, ", scaled err %.3g (max |%s| %.3g)", d->max_abs / d->max_want, ref, d->max_want);
  put(buf, n, &k, ": %s", ok ? "PASS" : "FAIL");
}
