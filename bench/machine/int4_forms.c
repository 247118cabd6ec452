/* int4_forms.c - the one-row 4-bit MatMulNBits block in four forms, timed
 * on one core (not part of `make bench`; docs/DESIGN.md, "int4 through
 * vdpbf16ps" and "int4 through vpdpbusd" record what it measured). Needs
 * AVX512_BF16 and AVX512_VNNI:
 *   cc -O3 -march=native -o int4_forms bench/machine/int4_forms.c -lm
 *   ./int4_forms [COPIES]    (COPIES of the weight, streamed in turn;
 *                             1 = one 7.2 MB weight, read from cache)
 * The weight is the 1.1B LLaMA's w1 (K 2048, N 5632, blocks of 32, the
 * default zero point 8), its codes packed as op_nbits.c packs them for one
 * row: panels of P = 32 columns, [N/P][K/32][4 words][P], word j of a
 * block holding codes j + 4p at nibble p; scales [N/P][K/32][P].
 *  - float: the generated kernel's form: each code masked in place (q·2^4p,
 *    exact), converted, and multiplied by A·2^-4p; an AND, a convert and
 *    an FMA per weight.
 *  - bf16x2, bf16x3: two codes per float lane and instruction. A shift and
 *    a ternlog put codes p and p + 4 of each word under bf16's exponent
 *    of 1 (1 + q/16, exact), `vdpbf16ps` multiplies them by pairs of A's
 *    bf16 parts (A = hi + lo [+ lo2], each part rounded to bf16) and sums
 *    in float. The offset 1 is taken out with the sum of the same parts
 *    (not of A: its difference to the parts, times 16, would be the
 *    error), so sum·16 - 16·Σparts = Σ parts·q. Two parts keep 16 bits
 *    of A, three all 24.
 *  - vnni3: four codes per int32 lane and instruction. Per block, A is
 *    rounded to a 24-bit integer on the block's step (max|A| / 8355711:
 *    as fine as float's own rounding of the block's largest element) and
 *    cut into three signed bytes (balanced digits, |d| <= 127); an AND,
 *    a shift and an AND make each word's 8 codes 8 bytes (codes j + 8i
 *    and j + 4 + 8i), and `vpdpbusd` sums code × digit exactly in int32,
 *    one sum per digit; per block the three sums are converted, weighted
 *    (2^16, 2^8, 1) times the step, less 8 · step · Σ A_int (the zero
 *    point), and scaled. 24 `vpdpbusd`, 12 AND/shift and 10 epilogue
 *    operations per 16 columns and block of 32, against 104.
 * Every form fetches one line of the codes and of the scales per 4 KiB
 * page 8 KiB ahead, as the generated kernels do (-DNO_FETCH: none). The
 * forms run one after another over all the copies (run back to back on
 * one copy, every form after the first would read it from L3).
 * Prints the largest error of each form against a float64 reference and,
 * per round, the minimum time of each over 4·COPIES calls. */
#define _POSIX_C_SOURCE 200809L
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* as the generated kernels fetch: one line of each stream per 4 KiB page,
 * 8 KiB ahead (docs/DESIGN.md, "One line per 4 KiB page"); -DNO_FETCH: none */
#ifdef NO_FETCH
#define FETCH_PAGE(c, s, b) ((void)0)
#else
#define FETCH_PAGE(c, s, b)                                                    \
  do {                                                                         \
    if ((b)*H * P * 4 % 4096 == 0)                                             \
      _mm_prefetch((const char *)((c) + (b)*H * P) + 8192, _MM_HINT_NTA);      \
    if ((b)*P * 4 % 4096 == 0)                                                 \
      _mm_prefetch((const char *)((s) + (b)*P) + 8192, _MM_HINT_NTA);          \
  } while (0)
#endif

#if !defined(__AVX512BF16__) || !defined(__AVX512VNNI__)
#error                                                                         \
    "int4_forms.c needs AVX512_BF16 and AVX512_VNNI (-march=native on Zen 4/5, Sapphire Rapids)"
#endif

enum {
  K = 2048,
  N = 5632,
  P = 32,
  BS = 32,
  KB = K / BS,
  NP = N / P,
  H = BS / 8
};

static const uint32_t *codes;
static const float *scales;
static float A[K];
static float a_scaled[KB][H][8], a_sum[KB]; /* float form */
static uint32_t part[3][KB][H][4]; /* bf16 pairs (code p, code p + 4) */
static float part_sum[4][KB];      /* Σ of the first n parts, n = 2, 3 */
static uint32_t dig[KB][H][2][3];  /* vnni3: digit n of A, byte i: k = j + 8i
                                      (lo), j + 4 + 8i (hi) */
static float vsa[KB],
    vzp[KB]; /* vnni3: A's step per block; -8 · step · Σ A_int */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static uint16_t bf16_of(float x) { /* round to nearest even */
  uint32_t u;
  memcpy(&u, &x, 4);
  u += 0x7FFF + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

static float float_of(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* per call in the compiled model: A's scaled copies, parts and sums */
static void prepare(void) {
  for (int b = 0; b < KB; b++) {
    float s = 0, ps[4] = {0};
    for (int j = 0; j < H; j++) {
      for (int p = 0; p < 8; p++) {
        float a = A[b * BS + j + H * p];
        a_scaled[b][j][p] = p < 7 ? a * ldexpf(1, -4 * p) : a;
        s += a;
      }
      for (int i = 0; i < 4; i++) {
        float rest[2] = {A[b * BS + j + H * i], A[b * BS + j + H * (i + 4)]};
        for (int n = 0; n < 3; n++) {
          uint16_t h0 = bf16_of(rest[0]), h1 = bf16_of(rest[1]);
          part[n][b][j][i] = h0 | (uint32_t)h1 << 16;
          rest[0] -= float_of(h0), rest[1] -= float_of(h1);
        }
        for (int n = 2; n <= 3; n++) {
          float x = 0, y = 0;
          for (int m = 0; m < n; m++) {
            x += float_of((uint16_t)part[m][b][j][i]);
            y += float_of((uint16_t)(part[m][b][j][i] >> 16));
          }
          ps[n] += x + y;
        }
      }
    }
    a_sum[b] = s, part_sum[2][b] = ps[2], part_sum[3][b] = ps[3];
  }
}

/* per call: A's digits per block (vnni3) */
static void prepare_vnni(void) {
  for (int b = 0; b < KB; b++) {
    float mx = 0;
    for (int k = 0; k < BS; k++)
      mx = fmaxf(mx, fabsf(A[b * BS + k]));
    float sa = mx > 0 ? mx / 8355711.0f : 1.0f,
          inv = mx > 0 ? 8355711.0f / mx : 0;
    int32_t ai[BS];
    long long sum = 0;
    for (int k = 0; k < BS; k++) {
      long v = lrintf(A[b * BS + k] * inv);
      if (v > 8355711)
        v = 8355711;
      if (v < -8355711)
        v = -8355711;
      ai[k] = (int32_t)v, sum += v;
    }
    vsa[b] = sa, vzp[b] = (float)(-8.0 * (double)sa * (double)sum);
    for (int j = 0; j < H; j++)
      for (int hf = 0; hf < 2; hf++) {
        uint32_t d[3] = {0, 0, 0};
        for (int i = 0; i < 4; i++) {
          int32_t x = ai[j + 4 * hf + 8 * i];
          int32_t d3 = ((x + 128) & 255) - 128, r = (x - d3) / 256;
          int32_t d2 = ((r + 128) & 255) - 128, d1 = (r - d2) / 256;
          d[0] |= (uint32_t)(uint8_t)(int8_t)d1 << (8 * i);
          d[1] |= (uint32_t)(uint8_t)(int8_t)d2 << (8 * i);
          d[2] |= (uint32_t)(uint8_t)(int8_t)d3 << (8 * i);
        }
        for (int n = 0; n < 3; n++)
          dig[b][j][hf][n] = d[n];
      }
  }
}

static void form_vnni(float *out) {
  const __m512i m = _mm512_set1_epi32(0x0F0F0F0F);
  for (int np = 0; np < NP; np++) {
    __m512 o0 = _mm512_setzero_ps(), o1 = _mm512_setzero_ps();
    const uint32_t *c = codes + (size_t)np * KB * H * P;
    const float *s = scales + (size_t)np * KB * P;
    for (int b = 0; b < KB; b++) {
      FETCH_PAGE(c, s, b);
      __m512i acc[3][2];
      for (int n = 0; n < 3; n++)
        acc[n][0] = acc[n][1] = _mm512_setzero_si512();
      for (int j = 0; j < H; j++) {
        __m512i w0 = _mm512_loadu_si512(c + (b * H + j) * P),
                w1 = _mm512_loadu_si512(c + (b * H + j) * P + 16);
        __m512i l0 = _mm512_and_si512(w0, m), l1 = _mm512_and_si512(w1, m);
        __m512i h0 = _mm512_and_si512(_mm512_srli_epi32(w0, 4), m),
                h1 = _mm512_and_si512(_mm512_srli_epi32(w1, 4), m);
        for (int n = 0; n < 3; n++) {
          __m512i dl = _mm512_set1_epi32((int)dig[b][j][0][n]),
                  dh = _mm512_set1_epi32((int)dig[b][j][1][n]);
          acc[n][0] = _mm512_dpbusd_epi32(acc[n][0], l0, dl);
          acc[n][1] = _mm512_dpbusd_epi32(acc[n][1], l1, dl);
          acc[n][0] = _mm512_dpbusd_epi32(acc[n][0], h0, dh);
          acc[n][1] = _mm512_dpbusd_epi32(acc[n][1], h1, dh);
        }
      }
      __m512 sa = _mm512_set1_ps(vsa[b]),
             sa256 = _mm512_set1_ps(256.0f * vsa[b]),
             zp = _mm512_set1_ps(vzp[b]);
      __m512 r[2];
      for (int v = 0; v < 2; v++) {
        __m512i i12 =
            _mm512_add_epi32(_mm512_slli_epi32(acc[0][v], 8), acc[1][v]);
        r[v] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i12), sa256, zp);
        r[v] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[2][v]), sa, r[v]);
      }
      o0 = _mm512_fmadd_ps(r[0], _mm512_loadu_ps(s + b * P), o0);
      o1 = _mm512_fmadd_ps(r[1], _mm512_loadu_ps(s + b * P + 16), o1);
    }
    _mm512_storeu_ps(out + np * P, o0), _mm512_storeu_ps(out + np * P + 16, o1);
  }
}

static void form_float(float *out) {
  const __m512i m4 = _mm512_set1_epi32(0xF);
  for (int np = 0; np < NP; np++) {
    __m512 o0 = _mm512_setzero_ps(), o1 = _mm512_setzero_ps();
    const uint32_t *c = codes + (size_t)np * KB * H * P;
    const float *s = scales + (size_t)np * KB * P;
    for (int b = 0; b < KB; b++) {
      FETCH_PAGE(c, s, b);
      __m512 a0 = _mm512_setzero_ps(), a1 = a0, e0 = a0, e1 = a0;
      for (int j = 0; j < H; j++) {
        __m512i w0 = _mm512_loadu_si512(c + (b * H + j) * P),
                w1 = _mm512_loadu_si512(c + (b * H + j) * P + 16);
        for (int p = 0; p < 8; p++) {
          __m512i q0, q1;
          if (p < 7) {
            __m512i m = _mm512_slli_epi32(m4, 4 * p);
            q0 = _mm512_and_si512(w0, m), q1 = _mm512_and_si512(w1, m);
          } else {
            q0 = _mm512_srli_epi32(w0, 28), q1 = _mm512_srli_epi32(w1, 28);
          }
          __m512 f0 = _mm512_cvtepi32_ps(q0), f1 = _mm512_cvtepi32_ps(q1),
                 av = _mm512_set1_ps(a_scaled[b][j][p]);
          if (p & 1)
            e0 = _mm512_fmadd_ps(f0, av, e0), e1 = _mm512_fmadd_ps(f1, av, e1);
          else
            a0 = _mm512_fmadd_ps(f0, av, a0), a1 = _mm512_fmadd_ps(f1, av, a1);
        }
      }
      __m512 zp = _mm512_set1_ps(-8.0f * a_sum[b]);
      a0 = _mm512_add_ps(_mm512_add_ps(a0, e0), zp),
      a1 = _mm512_add_ps(_mm512_add_ps(a1, e1), zp);
      o0 = _mm512_fmadd_ps(a0, _mm512_loadu_ps(s + b * P), o0);
      o1 = _mm512_fmadd_ps(a1, _mm512_loadu_ps(s + b * P + 16), o1);
    }
    _mm512_storeu_ps(out + np * P, o0), _mm512_storeu_ps(out + np * P + 16, o1);
  }
}

/* nparts 2 or 3 (a constant where it is inlined); an accumulator per part
 * and per odd/even pair, 2 vectors: 8 or 12 independent chains */
static inline __attribute__((always_inline)) void form_bf16(float *out,
                                                            int nparts) {
  const __m512i keep = _mm512_set1_epi32(0x00780078),
                one = _mm512_set1_epi32(0x3F803F80);
  for (int np = 0; np < NP; np++) {
    __m512 o0 = _mm512_setzero_ps(), o1 = _mm512_setzero_ps();
    const uint32_t *c = codes + (size_t)np * KB * H * P;
    const float *s = scales + (size_t)np * KB * P;
    for (int b = 0; b < KB; b++) {
      FETCH_PAGE(c, s, b);
      __m512 acc[3][2][2];
      for (int n = 0; n < 3; n++)
        for (int e = 0; e < 2; e++)
          acc[n][e][0] = acc[n][e][1] = _mm512_setzero_ps();
      for (int j = 0; j < H; j++) {
        __m512i w0 = _mm512_loadu_si512(c + (b * H + j) * P),
                w1 = _mm512_loadu_si512(c + (b * H + j) * P + 16);
        for (int i = 0; i < 4; i++) {
          __m512i t0 =
              i ? _mm512_srli_epi32(w0, 4 * i - 3) : _mm512_slli_epi32(w0, 3);
          __m512i t1 =
              i ? _mm512_srli_epi32(w1, 4 * i - 3) : _mm512_slli_epi32(w1, 3);
          __m512bh q0 = (__m512bh)_mm512_ternarylogic_epi32(
              t0, keep, one, 0xEA); /* (t & keep) | one */
          __m512bh q1 =
              (__m512bh)_mm512_ternarylogic_epi32(t1, keep, one, 0xEA);
          for (int n = 0; n < nparts; n++) {
            __m512bh a = (__m512bh)_mm512_set1_epi32((int)part[n][b][j][i]);
            acc[n][i & 1][0] = _mm512_dpbf16_ps(acc[n][i & 1][0], q0, a);
            acc[n][i & 1][1] = _mm512_dpbf16_ps(acc[n][i & 1][1], q1, a);
          }
        }
      }
      __m512 zp =
                 _mm512_set1_ps(-16.0f * part_sum[nparts][b] - 8.0f * a_sum[b]),
             sixteen = _mm512_set1_ps(16.0f);
      __m512 r[2];
      for (int v = 0; v < 2; v++) {
        r[v] = _mm512_add_ps(acc[0][0][v], acc[0][1][v]);
        for (int n = 1; n < nparts; n++)
          r[v] = _mm512_add_ps(r[v], _mm512_add_ps(acc[n][0][v], acc[n][1][v]));
        r[v] = _mm512_fmadd_ps(r[v], sixteen, zp);
      }
      o0 = _mm512_fmadd_ps(r[0], _mm512_loadu_ps(s + b * P), o0);
      o1 = _mm512_fmadd_ps(r[1], _mm512_loadu_ps(s + b * P + 16), o1);
    }
    _mm512_storeu_ps(out + np * P, o0), _mm512_storeu_ps(out + np * P + 16, o1);
  }
}

static void form_bf16x2(float *out) { form_bf16(out, 2); }
static void form_bf16x3(float *out) { form_bf16(out, 3); }

int main(int argc, char **argv) {
  int copies = argc > 1 ? atoi(argv[1]) : 8;
  if (copies < 1 || copies > 64) {
    fprintf(stderr, "usage: int4_forms [COPIES 1..64]\n");
    return 2;
  }
  size_t nc = (size_t)NP * KB * H * P, ns = (size_t)NP * KB * P;
  uint32_t *c0 = aligned_alloc(64, nc * 4 * copies);
  float *s0 = aligned_alloc(64, ns * 4 * copies), *out[4];
  for (int f = 0; f < 4; f++)
    out[f] = malloc(N * sizeof(float));
  if (!c0 || !s0 || !out[0] || !out[1] || !out[2] || !out[3])
    return 1;
  srand(1);
  for (size_t i = 0; i < nc * copies; i++)
    c0[i] = (uint32_t)rand() ^ ((uint32_t)rand() << 16);
  for (size_t i = 0; i < ns * copies; i++)
    s0[i] = 0.01f + 0.02f * rand() / RAND_MAX;
  for (int k = 0; k < K; k++)
    A[k] = 2.0f * rand() / RAND_MAX - 1;
  prepare();
  prepare_vnni();
  void (*form[4])(float *) = {form_float, form_bf16x2, form_bf16x3, form_vnni};
  const char *name[4] = {"float", "bf16x2", "bf16x3", "vnni3"};
  codes = c0, scales = s0;
  double err[4] = {0}, big = 0;
  for (int f = 0; f < 4; f++)
    form[f](out[f]);
  for (int n = 0; n < N; n++) {
    double r = 0;
    int np = n / P, l = n % P;
    for (int b = 0; b < KB; b++)
      for (int j = 0; j < H; j++) {
        uint32_t w = c0[(((size_t)np * KB + b) * H + j) * P + l];
        for (int p = 0; p < 8; p++)
          r += s0[(size_t)np * KB * P + b * P + l] *
               (((w >> 4 * p) & 15) - 8.0) * A[b * BS + j + H * p];
      }
    for (int f = 0; f < 4; f++)
      err[f] = fmax(err[f], fabs(out[f][n] - r));
    big = fmax(big, fabs(r));
  }
  printf("largest |output| %.4g; error against float64: float %.3g, bf16x2 "
         "%.3g, bf16x3 %.3g, vnni3 %.3g\n",
         big, err[0], err[1], err[2], err[3]);
  for (int round = 0; round < 5; round++) {
    double best[4] = {1e9, 1e9, 1e9, 1e9};
    for (int f = 0; f < 4; f++)
      for (int it = 0; it < 4 * copies; it++) {
        codes = c0 + nc * (it % copies), scales = s0 + ns * (it % copies);
        double t0 = now();
        form[f](out[f]);
        best[f] = fmin(best[f], now() - t0);
      }
    printf("round %d:", round);
    for (int f = 0; f < 4; f++)
      printf("  %s %.1f us (%.1f G weights/s)", name[f], 1e6 * best[f],
             (double)K * N / best[f] / 1e9);
    printf("\n");
  }
  free(c0), free(s0), free(out[0]), free(out[1]), free(out[2]), free(out[3]);
  return 0;
}
