/* half.c — the float16/bfloat16 conversions printed into generated code
 * that stores or reads 16-bit floats (graph inputs and outputs, and the
 * rounding of each 16-bit value; importer/load.c). Checked against
 * ir_half_from_double on every midpoint and bit pattern that matters by
 * tests/unit/test_half.c, as printed. Each function is printed only where
 * used, with those it calls: clang warns about an unused static function
 * even when it is inline. */
#include "codegen_impl.h"

#include <stdio.h>

static const char half_intro[] =
    "/* float16 / bfloat16 <-> float, branch-free so that loops vectorise. All\n"
    " * round to nearest even, keep subnormals, give inf on overflow and a quiet\n"
    " * NaN for NaN. (Subnormal float16 go through float multiplication: a build\n"
    " * that flushes subnormals, -ffast-math, would flush them too.) */\n";

/* in the order printed: a function after those it calls */
static const char *const half_fn[] = {
    /* o2c_h2f */
    "static inline float o2c_h2f(uint16_t h) {\n"
    "  /* the 15 bits below the sign, shifted to a float's place, are the value\n"
    "   * times 2^-112 (subnormals included); inf and NaN get the float's exponent */\n"
    "  union { uint32_t u; float f; } v = {(uint32_t)(h & 0x7fffu) << 13}, k = {0x77800000u};\n"
    "  v.f *= k.f;\n"
    "  v.u |= (0u - (uint32_t)((h & 0x7c00u) == 0x7c00u)) & 0x7f800000u;\n"
    "  v.u |= (uint32_t)(h & 0x8000u) << 16;\n"
    "  return v.f;\n"
    "}\n",
    /* o2c_f2h */
    "static inline uint16_t o2c_f2h(float x) {\n"
    "  union { float f; uint32_t u; } v = {x}, s;\n"
    "  uint32_t a = v.u & 0x7fffffffu, sign = (v.u >> 16) & 0x8000u;\n"
    "  /* |x| < 2^-14: adding 1/2 puts the float16 subnormal's bits at the\n"
    "   * bottom of the mantissa, rounded to nearest even by the addition */\n"
    "  s.u = a;\n"
    "  s.f += 0.5f;\n"
    "  uint32_t sub = s.u - 0x3f000000u;\n"
    "  /* normal: rebias the exponent (-112), round half to even on the bits */\n"
    "  uint32_t nor = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;\n"
    "  uint32_t r = a < 0x38800000u ? sub : nor;\n"
    "  r = a >= 0x47800000u ? 0x7c00u : r; /* >= 2^16 and inf */\n"
    "  r = a > 0x7f800000u ? 0x7e00u : r;  /* NaN */\n"
    "  return (uint16_t)(r | sign);\n"
    "}\n",
    /* o2c_b2f */
    "static inline float o2c_b2f(uint16_t h) {\n"
    "  union { uint32_t u; float f; } v = {(uint32_t)h << 16};\n"
    "  return v.f;\n"
    "}\n",
    /* o2c_f2b */
    "static inline uint16_t o2c_f2b(float x) {\n"
    "  union { float f; uint32_t u; } v = {x};\n"
    "  uint32_t r = (v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16;\n"
    "  r = (v.u & 0x7fffffffu) > 0x7f800000u ? (v.u >> 16) | 0x40u : r;\n"
    "  return (uint16_t)r;\n"
    "}\n",
    /* o2c_d2f_odd */
    "/* double -> float rounded to odd (truncated, last bit set when inexact):\n"
    " * rounding that to float16/bfloat16 gives the correctly rounded result\n"
    " * (float keeps more than two extra bits), where plain (float) would round twice */\n"
    "static inline float o2c_d2f_odd(double x) {\n"
    "  union { float f; uint32_t u; } v = {(float)x};\n"
    "  uint32_t inexact = (double)v.f != x && x == x;\n"
    "  uint32_t over = x > 0 ? (double)v.f > x : (double)v.f < x;\n"
    "  v.u -= inexact & over;\n"
    "  v.u |= inexact;\n"
    "  return v.f;\n"
    "}\n",
    /* o2c_d2h */
    "static inline uint16_t o2c_d2h(double x) { return o2c_f2h(o2c_d2f_odd(x)); }\n",
    /* o2c_d2b */
    "static inline uint16_t o2c_d2b(double x) { return o2c_f2b(o2c_d2f_odd(x)); }\n",
};

void cg_half_print(FILE *f, unsigned need) {
  if (need & (CG_HALF_D2H | CG_HALF_D2B)) need |= CG_HALF_D2F_ODD;
  if (need & CG_HALF_D2H) need |= CG_HALF_F2H;
  if (need & CG_HALF_D2B) need |= CG_HALF_F2B;
  if (!need) return;
  fputs(half_intro, f);
  for (unsigned i = 0; i < sizeof half_fn / sizeof *half_fn; i++)
    if (need & (1u << i)) fputs(half_fn[i], f);
}
