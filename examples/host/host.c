/* Calls a compiled model twice: loads the weights file once, then runs two
 * prompts through the typed entry with one arena, and prints each
 * position's most likely next token. The sizes come from the header. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>

static int64_t ids[1][16];
static float logits[1][16][256];

static int run(const void *weights, void *arena, int seed) {
  for (int t = 0; t < 16; t++) ids[0][t] = (t * 31 + seed) % 256;
  int st = model_run_typed(ids, logits, weights, arena);
  if (st != model_OK) return fprintf(stderr, "model_run: status %d\n", st), 1;
  printf("prompt %d, next tokens:", seed);
  for (int t = 0; t < 16; t++) {
    int best = 0;
    for (int v = 1; v < 256; v++)
      if (logits[0][t][v] > logits[0][t][best]) best = v;
    printf(" %d", best);
  }
  printf("\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) return fprintf(stderr, "usage: host MODEL.weights\n"), 2;
  /* input "ids" int64 [1,16] -> output "logits" float [1,16,256] */
  _Static_assert(sizeof ids == model_IN0_BYTES && sizeof logits == model_OUT0_BYTES, "model shapes");
  void *weights = aligned_alloc(64, (model_WEIGHTS_SIZE + 63) / 64 * 64);
  void *arena = aligned_alloc(64, (model_ARENA_SIZE + 63) / 64 * 64 + 64);
  FILE *f = fopen(argv[1], "rb");
  if (!weights || !arena || !f || fread(weights, 1, model_WEIGHTS_SIZE, f) != model_WEIGHTS_SIZE)
    return fprintf(stderr, "cannot load %s\n", argv[1]), 1;
  fclose(f);
  int rc = run(weights, arena, 1) || run(weights, arena, 2);
  free(weights);
  free(arena);
  return rc;
}
