/* A bare-metal program around a compiled model: the weights are in flash
 * (model_weights, --embed-weights), the arena and the tensors are static
 * arrays sized by the header, nothing is allocated. */
#include "model.h"

static _Alignas(64) uint8_t arena[model_ARENA_SIZE];
static int64_t ids[1][16];
static float logits[1][16][256];
volatile int next_token; /* where a real firmware would act on the result */

int main(void) {
  for (int t = 0; t < 16; t++) ids[0][t] = (t * 31 + 1) % 256;
  if (model_run_typed((const int64_t(*)[16])ids, logits, model_weights, arena) != model_OK) return 1;
  int best = 0;
  for (int v = 1; v < 256; v++)
    if (logits[0][15][v] > logits[0][15][best]) best = v;
  next_token = best;
  return 0;
}
