/* Runs the model onnx2c_add_model compiled: loads its weights file and
 * prints the most likely next token after each position of a prompt. */
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>

int main(void) {
  static int64_t ids[1][16];
  static float logits[1][16][256];
  for (int t = 0; t < 16; t++) ids[0][t] = (t * 37 + 11) % 256;

  void *weights = aligned_alloc(64, (llama_WEIGHTS_SIZE + 63) / 64 * 64);
  void *arena = aligned_alloc(64, (llama_ARENA_SIZE + 63) / 64 * 64 + 64);
  FILE *f = fopen(WEIGHTS_FILE, "rb");
  if (!weights || !arena || !f || fread(weights, 1, llama_WEIGHTS_SIZE, f) != llama_WEIGHTS_SIZE) {
    fprintf(stderr, "cannot load %s\n", WEIGHTS_FILE);
    return 1;
  }
  fclose(f);

  const void *in[] = {ids};
  void *out[] = {logits};
  if (llama_run(in, out, weights, arena) != llama_OK) return 1;
  printf("next tokens:");
  for (int t = 0; t < 16; t++) {
    int best = 0;
    for (int v = 1; v < 256; v++)
      if (logits[0][t][v] > logits[0][t][best]) best = v;
    printf(" %d", best);
  }
  printf("\n");
  free(weights);
  free(arena);
  return 0;
}
