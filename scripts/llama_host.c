/* llama_host.c — the host program of `make demo`: the tiny LLaMA's prefill
 * and its KV-cache decode step, each compiled once by onnx2c-caten with
 * symbolic dimensions (prefill: batch, seq; decode: past), linked into one
 * program under two prefixes. The prompt goes through prefill; then every
 * decode step takes the previous token, its position and the cache the
 * step before returned, and gives the next token (greedy) and the cache one
 * longer.
 *
 * Built by scripts/llama_demo.js:
 *   cc -O3 -march=native -fno-math-errno -fopenmp-simd -DONNX2C_OMP_SIMD \
 *      -I PREFILL_DIR -I DECODE_DIR llama_host.c PREFILL_DIR/prefill.c DECODE_DIR/decode.c -lm
 * Usage:
 *   llama_host PREFILL.weights DECODE.weights VOCAB KV_HEADS HEAD_DIM STEPS LOGITS.bin ID...
 * Prints "step K past P token T us U" per step (K = 0: the prefill) and
 * writes the logits each step chose from (float32, VOCAB per step) to
 * LOGITS.bin. Exit status 1 on any error, with a message. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"
#include "prefill.h"

#define LAYERS ((decode_NUM_INPUTS - 2) / 2)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Every buffer starts as 0xFF bytes (NaN as a float), never zeros: a cache
 * row or logit the model failed to write shows against onnxruntime. */
static void *xalloc(size_t n) {
  void *p = aligned_alloc(64, (n + 63) / 64 * 64 + 64);
  if (!p) fprintf(stderr, "llama_host: out of memory (%zu bytes)\n", n), exit(1);
  memset(p, 0xFF, (n + 63) / 64 * 64 + 64);
  return p;
}

/* The weights file is mapped read-only, not read: the 1.1B model's 4.4 GB
 * stay the page cache's (no copy; pages come in as the first step touches
 * them). The mapping is page-aligned, more than the 64 bytes the model
 * needs. */
static const void *map_weights(const char *path, size_t want) {
  if (!want) return xalloc(64);
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) || (size_t)st.st_size != want)
    fprintf(stderr, "llama_host: %s: cannot open, or not %zu bytes\n", path, want), exit(1);
  void *w = mmap(NULL, want, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (w == MAP_FAILED) fprintf(stderr, "llama_host: cannot map %s\n", path), exit(1);
  return w;
}

static int argmax(const float *v, int n) {
  int best = 0;
  for (int i = 1; i < n; i++)
    if (v[i] > v[best]) best = i;
  return best;
}

int main(int argc, char **argv) {
  if (argc < 9) {
    fprintf(stderr, "usage: llama_host PREFILL.weights DECODE.weights VOCAB KV_HEADS HEAD_DIM STEPS "
                    "LOGITS.bin ID...\n");
    return 1;
  }
  int vocab = atoi(argv[3]), kvh = atoi(argv[4]), hd = atoi(argv[5]), steps = atoi(argv[6]);
  int seq = argc - 8, maxpos = seq + steps + 1;
  if (vocab < 1 || kvh < 1 || hd < 1 || steps < 0) return fprintf(stderr, "llama_host: bad sizes\n"), 1;
  const void *pw = map_weights(argv[1], prefill_WEIGHTS_SIZE), *dw = map_weights(argv[2], decode_WEIGHTS_SIZE);
  FILE *out = fopen(argv[7], "wb");
  if (!out) return fprintf(stderr, "llama_host: cannot write %s\n", argv[7]), 1;
  int64_t *ids = xalloc((size_t)seq * sizeof *ids);
  for (int i = 0; i < seq; i++) ids[i] = atoll(argv[8 + i]);
  /* two caches of the longest length, swapped after every step: a step's
   * present_k/v [1, kvh, past+1, hd] is the next step's past_k/v as it is */
  size_t cache = (size_t)kvh * (size_t)maxpos * (size_t)hd * sizeof(float);
  float *kv[2][2 * LAYERS];
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < 2 * LAYERS; i++) kv[s][i] = xalloc(cache);
  float *logits = xalloc((size_t)seq * (size_t)vocab * sizeof(float));

  /* prefill: ids [1, seq] -> logits [1, seq, vocab], present_k/v_i [1, kvh, seq, hd] */
  int64_t pdims[2] = {1, seq};
  size_t arena_bytes = prefill_arena_size_dims(pdims); /* 0: these dimensions are refused */
  if (!arena_bytes) return fprintf(stderr, "llama_host: prefill refuses seq = %d\n", seq), 1;
  void *arena = xalloc(arena_bytes);
  const void *pin[1] = {ids};
  void *pout[1 + 2 * LAYERS];
  pout[0] = logits;
  for (int i = 0; i < 2 * LAYERS; i++) pout[1 + i] = kv[0][i];
  /* one untimed call first (the arena's and outputs' pages get touched) */
  int rc = prefill_run_dims(pin, pout, pw, arena, pdims);
  double t0 = now_us();
  rc |= prefill_run_dims(pin, pout, pw, arena, pdims);
  double t1 = now_us();
  if (rc != prefill_OK) return fprintf(stderr, "llama_host: prefill returned %d\n", rc), 1;
  const float *row = logits + (size_t)(seq - 1) * (size_t)vocab;
  int64_t token = argmax(row, vocab);
  fwrite(row, sizeof(float), (size_t)vocab, out);
  printf("step 0 past 0 token %lld us %.2f\n", (long long)token, t1 - t0);

  /* decode: ids [1, 1], position [1], past_k/v_i [1, kvh, past, hd] ->
   * logits [1, 1, vocab], present_k/v_i [1, kvh, past+1, hd] */
  int cur = 0;
  for (int step = 1; step <= steps; step++) {
    int64_t past = seq + step - 1, position = past, ddims[1] = {past};
    size_t need = decode_arena_size_dims(ddims);
    if (!need) return fprintf(stderr, "llama_host: decode refuses past = %lld\n", (long long)past), 1;
    if (need > arena_bytes) {
      free(arena);
      arena = xalloc(need);
      arena_bytes = need;
    }
    const void *din[2 + 2 * LAYERS];
    void *dout[1 + 2 * LAYERS];
    din[0] = &token, din[1] = &position, dout[0] = logits;
    for (int i = 0; i < 2 * LAYERS; i++) din[2 + i] = kv[cur][i], dout[1 + i] = kv[1 - cur][i];
    if (step == 1) rc = decode_run_dims(din, dout, dw, arena, ddims); /* untimed, as above */
    t0 = now_us();
    rc |= decode_run_dims(din, dout, dw, arena, ddims);
    t1 = now_us();
    if (rc != decode_OK) return fprintf(stderr, "llama_host: decode step %d returned %d\n", step, rc), 1;
    cur = 1 - cur;
    token = argmax(logits, vocab);
    fwrite(logits, sizeof(float), (size_t)vocab, out);
    printf("step %d past %lld token %lld us %.2f\n", step, (long long)past, (long long)token, t1 - t0);
  }
  if (fclose(out)) return fprintf(stderr, "llama_host: write error\n"), 1;
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < 2 * LAYERS; i++) free(kv[s][i]);
  free(logits), free(ids), free(arena); /* the weight mappings end with the process */
  return 0;
}
