/* tensor_io.c — TensorProto files (.pb) and comparison. */
#include "runtime.h"
#include "onnx.pb-c.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rt_tensor_read(const char *path, imp_tensor *t, char *err, size_t n) {
  FILE *f = fopen(path, "rb");
  if (!f) return snprintf(err, n, "%s: cannot open file", path), -1;
  size_t cap = 1 << 16, len = 0;
  uint8_t *b = malloc(cap);
  for (;;) {
    if (!b) abort();
    len += fread(b + len, 1, cap - len, f);
    if (len < cap) break;
    b = realloc(b, cap *= 2);
  }
  fclose(f);
  char e[512];
  int rc = imp_tensor_decode(b, len, NULL, t, e, sizeof e);
  free(b);
  if (rc) snprintf(err, n, "%s: %s", path, e);
  return rc;
}

int rt_tensor_write(const char *path, const imp_tensor *t, char *err, size_t n) {
  Onnx__TensorProto p = ONNX__TENSOR_PROTO__INIT;
  int64_t dims[IR_MAX_RANK];
  for (int i = 0; i < t->shape.rank; i++) dims[i] = t->shape.d[i];
  p.n_dims = (size_t)t->shape.rank;
  p.dims = dims;
  p.has_data_type = 1;
  p.data_type = imp_dtype_to_onnx(t->dtype);
  p.name = t->name ? t->name : "";
  p.has_raw_data = 1;
  p.raw_data.len = t->bytes;
  p.raw_data.data = t->data;
  size_t len = onnx__tensor_proto__get_packed_size(&p);
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf) abort();
  onnx__tensor_proto__pack(&p, buf);
  FILE *f = fopen(path, "wb");
  int rc = 0;
  if (!f || fwrite(buf, 1, len, f) != len) rc = -1;
  if (f && fclose(f)) rc = -1;
  free(buf);
  if (rc) snprintf(err, n, "%s: cannot write file", path);
  return rc;
}

bool rt_dtype_matches(ir_dtype want, ir_dtype given) {
  return given == want || (want == IR_BF16 && given == IR_U16);
}

/* Floats within atol + rtol|b| (NaN only equal to NaN, infinities exact);
 * integers and bools exactly, as integers: through a double, 2^53 + 1 would
 * equal 2^53, and a relative tolerance would let 10000 pass for 10005.
 * bfloat16 also within one unit in its last place: two correct roundings
 * of one value differ by that much (ONNX 1.12's Cast test data truncates
 * float to bfloat16, where onnxruntime and later ONNX round to nearest
 * even, as this compiler does). */
/* The spacing of bfloat16 values at |b| (8 significant bits). */
static double bf16_ulp(double b) {
  int e;
  frexp(b, &e); /* |b| in [2^(e-1), 2^e) */
  return ldexp(1.0, (e - 1 < -126 ? -126 : e - 1) - 7);
}

bool rt_compare(const imp_tensor *got, const imp_tensor *want, double atol, double rtol, rt_diff *d) {
  memset(d, 0, sizeof *d);
  d->shape_ok = rt_dtype_matches(got->dtype, want->dtype) && ir_shape_eq(&got->shape, &want->shape);
  if (!d->shape_ok) return false;
  int64_t N = ir_shape_numel(&got->shape);
  bool fl = ir_dtype_is_float(got->dtype);
  for (int64_t i = 0; i < N; i++) {
    bool ok;
    if (!fl) {
      uint64_t a = (uint64_t)ir_elem_i(got->dtype, got->data, i), b = (uint64_t)ir_elem_i(want->dtype, want->data, i);
      double e = a == b ? 0 : (double)(a > b ? a - b : b - a);
      if (e > d->max_abs) d->max_abs = e;
      ok = a == b;
    } else {
      double a = ir_elem_f(got->dtype, got->data, i), b = ir_elem_f(got->dtype, want->data, i);
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
