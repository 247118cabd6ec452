/* half.c — float16 (IEEE binary16) and bfloat16 conversions for the
 * compiler and the runtime. The generated code has its own (faster, bit
 * twiddling) versions, printed by codegen/program.c and checked against
 * these in tests/unit/test_half.c; these are written to be obviously right
 * rather than fast: scale to the target's quantum, round the integer. */
#include "ir_impl.h"

#include <math.h>

typedef struct {
  int mbits, ebits;
} half_fmt;

static half_fmt fmt(ir_dtype t) {
  return t == IR_BF16 ? (half_fmt){7, 8} : (half_fmt){10, 5};
}

uint16_t ir_half_from_double(ir_dtype t, double v) {
  half_fmt f = fmt(t);
  int bias = (1 << (f.ebits - 1)) - 1, emin = 1 - bias;
  uint16_t sign = signbit(v) ? 0x8000u : 0, expmask = (uint16_t)(((1u << f.ebits) - 1) << f.mbits);
  if (isnan(v)) return (uint16_t)(sign | expmask | (1u << (f.mbits - 1)));
  double a = fabs(v);
  if (isinf(a)) return sign | expmask;
  if (a == 0) return sign;
  int e;
  frexp(a, &e); /* a = m 2^e, m in [1/2, 1): the binade is 2^(e-1) */
  int ex = e - 1 < emin ? emin : e - 1;
  double q = ldexp(1.0, ex - f.mbits); /* the spacing of the target's values there */
  double s = a / q, r = floor(s), frac = s - r; /* exact: q is a power of two */
  if (frac > 0.5 || (frac == 0.5 && fmod(r, 2.0) == 1.0)) r += 1;
  double one = ldexp(1.0, f.mbits);
  if (r >= 2 * one) r /= 2, ex++; /* rounded up into the next binade */
  if (r < one) return (uint16_t)(sign | (uint16_t)r); /* subnormal (ex == emin) */
  int biased = ex + bias;
  if (biased >= (1 << f.ebits) - 1) return sign | expmask; /* overflow */
  return (uint16_t)(sign | (unsigned)biased << f.mbits | (uint16_t)(r - one));
}

double ir_half_to_double(ir_dtype t, uint16_t h) {
  half_fmt f = fmt(t);
  int bias = (1 << (f.ebits - 1)) - 1;
  unsigned e = (h >> f.mbits) & ((1u << f.ebits) - 1), m = h & ((1u << f.mbits) - 1);
  double v;
  if (e == (1u << f.ebits) - 1) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexp((double)m, 1 - bias - f.mbits);
  else v = ldexp((double)(m | 1u << f.mbits), (int)e - bias - f.mbits);
  return (h & 0x8000u) ? -v : v;
}
