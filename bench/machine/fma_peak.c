/* fma_peak.c - FP32 FMA peak of the ISA this is compiled for (AVX-512,
 * AVX2+FMA, SSE, NEON or plain C: build with the target's -march, e.g.
 * -march=native, -march=x86-64-v3, -march=x86-64-v2, -march=armv8-a).
 * Each thread runs ACC independent vector FMA chains (enough to cover
 * latency x pipes) that, with the two constant operands, fit the register
 * file: 16 of 32 zmm on AVX-512, 12 of 16 ymm on AVX2 (16 ymm chains + 2
 * constants spill and measure about half the peak), 12 of 16 xmm on SSE
 * (no FMA: a multiply and an add, the 2 flops an FMA would count), 24 of 32
 * q registers on NEON, 8 scalar chains in plain C; so the loop is
 * throughput-bound on the FMA units. FLOPs = iters * ACC * lanes * 2.
 * Prints: fma_isa NAME, then fma_gflops THREADS VALUE per thread count.
 * Usage: fma_peak [THREADS...]   (default: 1 2). Best of 5 trials. */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__AVX512F__) || defined(__AVX2__) || defined(__SSE2__)
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#if defined(__AVX512F__)
#define ACC 16
#define ISA "avx512"
typedef __m512 vec;
#define LANES 16
#define VSET(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VSUM(v) _mm512_reduce_add_ps(v)
#define VADD(a, b) _mm512_add_ps(a, b)
#elif defined(__AVX2__) && defined(__FMA__)
#define ACC 12
#define ISA "avx2"
typedef __m256 vec;
#define LANES 8
#define VSET(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b) _mm256_add_ps(a, b)
static float VSUM(__m256 v) { float t[8]; _mm256_storeu_ps(t, v); float s = 0; for (int i = 0; i < 8; i++) s += t[i]; return s; }
#elif defined(__SSE2__)
#define ACC 12
#define ISA "sse"
typedef __m128 vec;
#define LANES 4
#define VSET(x) _mm_set1_ps(x)
#define VFMA(a, b, c) _mm_add_ps(_mm_mul_ps(a, b), c)
#define VADD(a, b) _mm_add_ps(a, b)
static float VSUM(__m128 v) { float t[4]; _mm_storeu_ps(t, v); return t[0] + t[1] + t[2] + t[3]; }
#elif defined(__ARM_NEON) && defined(__aarch64__)
#define ACC 24
#define ISA "neon"
typedef float32x4_t vec;
#define LANES 4
#define VSET(x) vdupq_n_f32(x)
#define VFMA(a, b, c) vfmaq_f32(c, a, b)
#define VADD(a, b) vaddq_f32(a, b)
#define VSUM(v) vaddvq_f32(v)
#else
#define ACC 8
#define ISA "scalar"
typedef float vec;
#define LANES 1
#define VSET(x) (x)
#define VFMA(a, b, c) ((a) * (b) + (c))
#define VADD(a, b) ((a) + (b))
#define VSUM(v) (v)
#endif

static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }

static float kernel(long iters, float seed) {
  vec acc[ACC];
  for (int i = 0; i < ACC; i++) acc[i] = VSET(seed + i * 1e-3f);
  const vec a = VSET(0.999999f), b = VSET(1e-7f);
  for (long it = 0; it < iters; it++) {
#pragma GCC unroll 24
    for (int i = 0; i < ACC; i++) acc[i] = VFMA(acc[i], a, b);
  }
  vec s = acc[0];
  for (int i = 1; i < ACC; i++) s = VADD(s, acc[i]);
  return VSUM(s);
}

int main(int argc, char **argv) {
  int defaults[] = {1, 2};
  int nt = argc > 1 ? argc - 1 : 2;
  const long iters = 100000000L; /* ~0.3-0.5 s per thread */
  volatile float sink = 0;
  printf("fma_isa %s\n", ISA);
  for (int k = 0; k < nt; k++) {
    int t = argc > 1 ? atoi(argv[k + 1]) : defaults[k];
    double best = 1e30;
    for (int trial = 0; trial < 5; trial++) {
      double t0 = now();
#pragma omp parallel num_threads(t)
      { float r = kernel(iters, (float)omp_get_thread_num()); 
#pragma omp atomic
        sink += r; }
      double dt = now() - t0;
      if (dt < best) best = dt;
    }
    double flops = (double)iters * ACC * LANES * 2.0 * t;
    printf("fma_gflops %d %.1f\n", t, flops / best / 1e9);
  }
  return sink == 12345.f;
}
