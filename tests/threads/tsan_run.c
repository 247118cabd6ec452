/* tsan_run.c — runs a model compiled with --threads (built with
 * -fsanitize=thread by tsan.sh): 24 calls from this thread (through the
 * entry's probes of threaded and lone calls: codegen/pool_calls.c), then two
 * threads calling at once (the second call finds the pool busy and runs on
 * its own thread). Inputs and weights are zero bytes (any index is then
 * row 0); the test is about data races, not values (verify checks those).
 * The calling thread's CPU affinity must be the same after the calls (the
 * pool moves a caller off a shared CPU by narrowing its mask for a moment,
 * then restores it).
 * Exit status: 0, or 1 when a call fails, the outputs of the calls differ
 * or the caller's affinity changed. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_EQUAL */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define SYM(s) CAT(TSAN_NAME, s)
#include TSAN_HDR

typedef struct {
  void *in[SYM(_NUM_INPUTS) + 1], *out[SYM(_NUM_OUTPUTS) + 1], *arena;
  int rc;
} call;

static void *weights;

static void *zeros(int64_t n) {
  void *p = calloc(1, n > 0 ? (size_t)n : 1);
  if (!p) {
    fprintf(stderr, "tsan_run: out of memory\n");
    exit(1);
  }
  return p;
}

static void setup(call *c) {
  for (int i = 0; i < SYM(_NUM_INPUTS); i++) c->in[i] = zeros(SYM(_input_bytes)(i, NULL));
  for (int i = 0; i < SYM(_NUM_OUTPUTS); i++) c->out[i] = zeros(SYM(_output_bytes)(i, NULL));
  c->arena = zeros(SYM(_ARENA_SIZE));
}

static void teardown(call *c) {
  for (int i = 0; i < SYM(_NUM_INPUTS); i++) free(c->in[i]);
  for (int i = 0; i < SYM(_NUM_OUTPUTS); i++) free(c->out[i]);
  free(c->arena);
}

static void *run(void *v) {
  call *c = v;
  c->rc = SYM(_run)((const void *const *)c->in, c->out, weights, c->arena);
  return NULL;
}

int main(void) {
#ifdef __linux__
  cpu_set_t mask0, mask1;
  if (sched_getaffinity(0, sizeof mask0, &mask0)) return fprintf(stderr, "tsan_run: no affinity\n"), 1;
#endif
  weights = zeros(SYM(_WEIGHTS_SIZE));
  call a, b;
  setup(&a), setup(&b);
  for (int i = 0; i < 24 && !a.rc; i++) run(&a);
  pthread_t t;
  if (pthread_create(&t, NULL, run, &b)) return fprintf(stderr, "tsan_run: no thread\n"), 1;
  run(&a);
  pthread_join(t, NULL);
  int bad = a.rc || b.rc;
  for (int i = 0; i < SYM(_NUM_OUTPUTS) && !bad; i++)
    bad = memcmp(a.out[i], b.out[i], (size_t)SYM(_output_bytes)(i, NULL)) != 0;
  printf("calls %s\n", bad ? "differ or failed" : "agree");
#ifdef __linux__
  if (sched_getaffinity(0, sizeof mask1, &mask1) || !CPU_EQUAL(&mask0, &mask1))
    bad = 1, printf("the caller's CPU affinity changed\n");
#endif
  teardown(&a), teardown(&b);
  free(weights);
  return bad;
}
