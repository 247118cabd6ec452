/* stream_triad.c - STREAM triad bandwidth a[i] = b[i] + s*c[i] (double).
 * Bytes counted as in STREAM: 3 * 8 * N per pass (write-allocate traffic not
 * counted). N = 40M doubles per array (320 MB each), far beyond the caches.
 * Prints: triad_gbs THREADS VALUE (best of 10 passes).
 * Usage: stream_triad [THREADS...]  (default: 1 2) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }

int main(int argc, char **argv) {
  const long n = 40L * 1000 * 1000;
  double *a = aligned_alloc(64, n * sizeof(double));
  double *b = aligned_alloc(64, n * sizeof(double));
  double *c = aligned_alloc(64, n * sizeof(double));
  if (!a || !b || !c) { fprintf(stderr, "stream_triad: out of memory\n"); return 1; }
  int defaults[] = {1, 2};
  int nt = argc > 1 ? argc - 1 : 2;
  for (int k = 0; k < nt; k++) {
    int t = argc > 1 ? atoi(argv[k + 1]) : defaults[k];
    /* first touch by the same threads that run the triad */
#pragma omp parallel for num_threads(t) schedule(static)
    for (long i = 0; i < n; i++) { a[i] = 0; b[i] = 1.0; c[i] = 2.0; }
    double best = 1e30;
    const double s = 3.0;
    for (int pass = 0; pass < 10; pass++) {
      double t0 = now();
#pragma omp parallel for num_threads(t) schedule(static)
      for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
      double dt = now() - t0;
      if (dt < best) best = dt;
    }
    if (a[n / 2] != 7.0) { fprintf(stderr, "stream_triad: wrong result\n"); return 1; }
    printf("triad_gbs %d %.1f\n", t, 3.0 * 8.0 * n / best / 1e9);
  }
  free(a); free(b); free(c);
  return 0;
}
