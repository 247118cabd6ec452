/* harness.c - times one onnx2c-caten generated model in-process.
 *
 * Built once per model, together with the generated NAME.c:
 *   cc -O3 -march=native -DBENCH_NAME=NAME -DBENCH_HDR='"NAME.h"' -I DIR \
 *      harness.c DIR/NAME.c -lm [-fopenmp] -o harness
 *
 * Usage:
 *   harness WEIGHTS --in FILE... --out-bytes N... [options]
 *     --in FILE        raw bytes of graph input K (in graph order)
 *     --out-bytes N    size in bytes of graph output K (in graph order)
 *     --warmup W       warm-up runs (default 20)
 *     --runs R         timed runs (default 50)
 *     --memcpy         also time a memcpy as large as output 0 (same R, W)
 *     --cpu-time       time with the thread's CPU clock instead of the wall clock
 *                      (excludes time the thread was not running: for A/B runs on a
 *                      busy machine; the interleaved bench uses the wall clock)
 *     --dump DIR       write output K after the runs to DIR/out_K.bin
 *     --dims V,V,..    a model with symbolic dimensions: their values (in the
 *                      order of NAME_DIM_NAMES); it runs through NAME_run_dims
 *     --serve          command mode (for the interleaved driver), stdin lines:
 *                        warm N   -> N untimed runs, replies "ok"
 *                        time N   -> N timed runs, replies "times t1 ... tN" (ms)
 *                        timec N  -> the same, replies "times w1,c1 ... wN,cN":
 *                                    wall ms of each run, and the process's CPU ms
 *                                    in it (every thread: a pool worker's too),
 *                                    read outside the wall interval
 *                        dump DIR -> writes DIR/out_K.bin, replies "ok"
 *                        quit
 * Default mode prints:  ours_median_ms X / ours_min_ms X / memcpy_median_ms X
 * Timing: clock_gettime(CLOCK_MONOTONIC) around each NAME_run call.
 * All buffers are 64-byte aligned; WEIGHTS is mapped read-only (page
 * aligned, prefaulted), as a host would map a 4.4 GB model. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include BENCH_HDR

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define SYM(s) CAT(BENCH_NAME, s)

#define STR_(x) #x
#define STR(x) STR_(x)
#define MAXIO 64

static clockid_t clock_id = CLOCK_MONOTONIC;

/* NAME_NUM_DIMS is defined (> 0) only for models with symbolic dimensions */
#if SYM(_NUM_DIMS) + 0 > 0
#define HAS_DIMS 1
static int64_t dims[SYM(_NUM_DIMS)];
#endif

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(clock_id, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Buffers the model writes (outputs, arena) are filled with 0xFF bytes
 * (NaN as a float) rather than zeros, so that a kernel which never writes
 * shows in the check against onnxruntime, as in `run`. */
static void *xalloc_fill(size_t n, int byte) {
  size_t r = (n + 63) / 64 * 64;
  void *p = aligned_alloc(64, r ? r : 64);
  if (!p) { fprintf(stderr, "harness: out of memory (%zu bytes)\n", n); exit(1); }
  memset(p, byte, r ? r : 64);
  return p;
}

static void *xalloc(size_t n) {
  return xalloc_fill(n, 0);
}

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "harness: cannot open %s\n", path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *p = xalloc((size_t)n);
  if (n > 0 && fread(p, 1, (size_t)n, f) != (size_t)n) { fprintf(stderr, "harness: short read %s\n", path); exit(1); }
  fclose(f);
  *size = (size_t)n;
  return p;
}

static void *map_weights(const char *path, size_t want) {
  if (!want) return xalloc(64);
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) || (size_t)st.st_size != want) {
    fprintf(stderr, "harness: %s: cannot open, or not %zu bytes\n", path, want);
    exit(1);
  }
  void *w = mmap(NULL, want, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (w == MAP_FAILED) { fprintf(stderr, "harness: cannot map %s\n", path); exit(1); }
  return w;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
  qsort(v, n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static const void *inputs[MAXIO];
static void *outputs[MAXIO];
static size_t out_bytes[MAXIO];
static int n_in, n_out;
static void *weights, *arena;

static void run_once(void) {
#ifdef HAS_DIMS
  int rc = SYM(_run_dims)(inputs, outputs, weights, arena, dims);
#else
  int rc = SYM(_run)(inputs, outputs, weights, arena);
#endif
  if (rc != 0) { fprintf(stderr, "harness: %s_run returned %d\n", STR(BENCH_NAME), rc); exit(2); }
}

static void dump(const char *dir) {
  for (int k = 0; k < n_out; k++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/out_%d.bin", dir, k);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(outputs[k], 1, out_bytes[k], f) != out_bytes[k]) { fprintf(stderr, "harness: cannot write %s\n", path); exit(1); }
    fclose(f);
  }
}

/* CPU time of the whole process (every thread), ms: the driver sets it
 * beside the wall clock so that a row shows how much of its wall time
 * the process did not run (other load) and how much was work. */
static double process_cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int serve(void) {
  char line[4096];
  setvbuf(stdout, NULL, _IOLBF, 0);
  while (fgets(line, sizeof line, stdin)) {
    char cmd[32], arg[4000];
    arg[0] = 0;
    if (sscanf(line, "%31s %3999s", cmd, arg) < 1) continue;
    if (!strcmp(cmd, "warm")) {
      int n = atoi(arg);
      for (int i = 0; i < n; i++) run_once();
      printf("ok\n");
    } else if (!strcmp(cmd, "time") || !strcmp(cmd, "timec")) {
      int n = atoi(arg), with_cpu = !strcmp(cmd, "timec");
      printf("times");
      for (int i = 0; i < n; i++) {
        double c0 = with_cpu ? process_cpu_ms() : 0;
        double t0 = now_ms();
        run_once();
        double t1 = now_ms();
        if (with_cpu) printf(" %.5f,%.5f", t1 - t0, process_cpu_ms() - c0);
        else printf(" %.5f", t1 - t0);
      }
      printf("\n");
    } else if (!strcmp(cmd, "dump")) {
      dump(arg);
      printf("ok\n");
    } else if (!strcmp(cmd, "quit")) {
      break;
    } else {
      printf("error unknown command %s\n", cmd);
    }
    fflush(stdout);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: harness WEIGHTS --in FILE... --out-bytes N... [--warmup W] [--runs R] [--memcpy] [--cpu-time] [--dump DIR] [--serve]\n"); return 1; }
  int warmup = 20, runs = 50, do_memcpy = 0, do_serve = 0;
  const char *dump_dir = NULL;
  weights = map_weights(argv[1], (size_t)SYM(_WEIGHTS_SIZE));
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--in") && i + 1 < argc) { size_t n; inputs[n_in++] = read_file(argv[++i], &n); }
    else if (!strcmp(argv[i], "--out-bytes") && i + 1 < argc) { out_bytes[n_out] = strtoull(argv[++i], NULL, 10); outputs[n_out] = xalloc_fill(out_bytes[n_out], 0xFF); n_out++; }
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dump") && i + 1 < argc) dump_dir = argv[++i];
    else if (!strcmp(argv[i], "--memcpy")) do_memcpy = 1;
    else if (!strcmp(argv[i], "--cpu-time")) clock_id = CLOCK_THREAD_CPUTIME_ID;
    else if (!strcmp(argv[i], "--serve")) do_serve = 1;
#ifdef HAS_DIMS
    else if (!strcmp(argv[i], "--dims") && i + 1 < argc) {
      char *p = argv[++i];
      for (int k = 0; k < SYM(_NUM_DIMS); k++) {
        dims[k] = strtoll(p, &p, 10);
        if (*p == ',') p++;
        else if (k + 1 < SYM(_NUM_DIMS)) { fprintf(stderr, "harness: --dims needs %d values\n", SYM(_NUM_DIMS)); return 1; }
      }
    }
#endif
    else { fprintf(stderr, "harness: bad argument %s\n", argv[i]); return 1; }
  }
  if (n_in != SYM(_NUM_INPUTS) || n_out != SYM(_NUM_OUTPUTS)) {
    fprintf(stderr, "harness: model has %d inputs / %d outputs, got %d / %d\n", SYM(_NUM_INPUTS), SYM(_NUM_OUTPUTS), n_in, n_out);
    return 1;
  }
#ifdef HAS_DIMS
  size_t asize = SYM(_arena_size_dims)(dims);
  if (!asize) { fprintf(stderr, "harness: the model refuses these --dims\n"); return 1; }
  arena = xalloc_fill(asize, 0xFF);
#else
  arena = xalloc_fill((size_t)SYM(_ARENA_SIZE), 0xFF);
#endif
  if (do_serve) return serve();

  double *t = malloc(sizeof(double) * (runs > 0 ? runs : 1));
  for (int i = 0; i < warmup; i++) run_once();
  for (int i = 0; i < runs; i++) { double t0 = now_ms(); run_once(); t[i] = now_ms() - t0; }
  double mn = t[0];
  for (int i = 1; i < runs; i++) if (t[i] < mn) mn = t[i];
  printf("ours_median_ms %.5f\nours_min_ms %.5f\n", median(t, runs), mn);
  if (dump_dir) dump(dump_dir);
  if (do_memcpy && n_out > 0) {
    /* a plain copy of output-0-many bytes, from a fresh source buffer into
     * the same output buffer: B bytes read + B bytes written per call */
    size_t n = out_bytes[0];
    void *src = xalloc(n);
    memset(src, 1, n);
    int mruns = runs > 5 ? runs : 5;
    double *m = malloc(sizeof(double) * mruns);
    for (int i = 0; i < (warmup > 3 ? warmup : 3); i++) memcpy(outputs[0], src, n);
    for (int i = 0; i < mruns; i++) {
      double t0 = now_ms();
      memcpy(outputs[0], src, n);
      __asm__ volatile("" ::"r"(outputs[0]) : "memory");
      m[i] = now_ms() - t0;
    }
    printf("memcpy_median_ms %.5f\n", median(m, mruns));
    free(m); free(src);
  }
  free(t);
  return 0;
}
