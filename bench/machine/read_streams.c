/* read_streams.c - how fast one core reads weights that stream from memory,
 * with no arithmetic: the ceiling a one-row (decode) kernel could reach
 * (not part of `make bench`; bench/README.md, "The 1.1B LLaMA", cites it).
 *   cc -O2 -march=native -o read_streams bench/machine/read_streams.c
 *   taskset -c 0 ./read_streams
 * Reads 480 MB (far past any cache) in 64-byte vectors, best of 8 passes:
 *  - one stream, in order;
 *  - two streams as the 4-bit MatMulNBits kernel reads them (op_nbits.c):
 *    a panel's 32 KB of codes and its 8 KB of scales, 512 bytes of codes
 *    with 128 of scales at a time;
 * each without a software fetch, and with one line fetched per 4 KiB page
 * 8 KiB ahead (what the generated code does on targets with `fetch_page`,
 * scheduler/gemm_fetch.c). GCC vector extensions: any target gcc has. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef long long vec __attribute__((vector_size(64)));

enum { TOTAL = 480u << 20, PANEL_CODES = 32768, PANEL_SCALES = 8192, STEP = 512, AHEAD = 8192 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One pass; returns a value the reads feed, so none is dropped. */
static long long pass(const char *base, int two_streams, int fetch) {
  vec x = {0}, y = {0};
  if (!two_streams) {
    for (size_t i = 0; i < TOTAL; i += 128) {
      if (fetch && i % 4096 == 0) __builtin_prefetch(base + i + AHEAD, 0, 0);
      x ^= *(const vec *)(base + i);
      y ^= *(const vec *)(base + i + 64);
    }
  } else {
    const size_t panels = (size_t)TOTAL / (PANEL_CODES + PANEL_SCALES);
    const char *codes = base, *scales = base + panels * PANEL_CODES;
    for (size_t p = 0; p < panels; p++) {
      const char *c = codes + p * PANEL_CODES, *s = scales + p * PANEL_SCALES;
      for (size_t i = 0; i < PANEL_CODES; i += STEP) {
        if (fetch && i % 4096 == 0) __builtin_prefetch(c + i + AHEAD, 0, 0);
        if (fetch && (i / 4) % 4096 == 0) __builtin_prefetch(s + i / 4 + AHEAD, 0, 0);
        for (int k = 0; k < STEP; k += 64) x ^= *(const vec *)(c + i + k);
        y ^= *(const vec *)(s + i / 4);
        y ^= *(const vec *)(s + i / 4 + 64);
      }
    }
  }
  x ^= y;
  long long r = 0;
  for (int i = 0; i < 8; i++) r ^= x[i];
  return r;
}

int main(void) {
  /* AHEAD bytes past the end: the fetches of the last pages stay inside */
  char *base = aligned_alloc(4096, (size_t)TOTAL + AHEAD);
  if (!base) {
    fprintf(stderr, "read_streams: out of memory\n");
    return 1;
  }
  memset(base, 1, (size_t)TOTAL + AHEAD);
  long long sink = 0;
  for (int two = 0; two < 2; two++)
    for (int fetch = 0; fetch < 2; fetch++) {
      double best = 1e30;
      for (int r = 0; r < 8; r++) {
        double t = now();
        sink ^= pass(base, two, fetch);
        t = now() - t;
        if (t < best) best = t;
      }
      printf("%-28s %-22s %7.2f ms %6.1f GB/s\n", two ? "codes + scales (4:1)" : "one stream",
             fetch ? "a line per page ahead" : "no software fetch", best * 1e3, TOTAL / best / 1e9);
    }
  free(base);
  return sink == 42; /* never: keeps the reads */
}
