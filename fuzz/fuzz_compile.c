/* fuzz_compile.c — libFuzzer target over the compile path, as rt_compile
 * runs it: imp_load -> ir_verify -> sched_build -> cg_emit, with the three
 * outputs going to /dev/null. The C compiler is never run.
 *
 * The input is written to a model file in a private temporary folder (the
 * importer reads files; external data resolves inside that folder only).
 * The input's length picks one of four builds, so that every mutation
 * also meets the other register blocks and the threaded code: the host
 * as `onnx2c-caten` compiles by default, --threads 2 --threads-all,
 * --target x86-64-v3 (16 registers of 8 floats), --target aarch64
 * --threads 2. */
#include "runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char model_path[4200];
static FILE *devnull[3];
static sched_target avx2, neon;

static void setup(void) {
  static char dir[4096];
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/onnx2c-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) abort();
  snprintf(model_path, sizeof model_path, "%s/model.onnx", dir);
  for (int i = 0; i < 3; i++)
    if (!(devnull[i] = fopen("/dev/null", "wb"))) abort();
  /* the compiler's own limit, well under libFuzzer's -malloc_limit_mb and
   * -rss_limit_mb: what a model may make it allocate is refused first */
  imp_set_mem_limit((size_t)256 << 20);
  char err[256];
  if (sched_target_get("x86-64-v3", &avx2, err, sizeof err) ||
      sched_target_get("aarch64", &neon, err, sizeof err))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!model_path[0]) setup();
  FILE *f = fopen(model_path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);

  char err[2048];
  ir_graph *g = NULL;
  sched_program *p = NULL;
  imp_options io = {0};
  sched_options so = {0};
  cg_options co = {.name = "model"};
  switch (size % 4) {
  case 1: so.threads = co.threads = 2, co.threads_all = true; break;
  case 2: so.target = avx2; break;
  case 3: so.target = neon, so.threads = co.threads = 2; break;
  default: break;
  }
  if (imp_load(model_path, &io, &g, err, sizeof err)) return 0;
  int rc = ir_verify(g);
  if (!rc) rc = sched_build(g, &so, &p, err, sizeof err);
  if (!rc) {
    cg_emit(p, &co, devnull[0], devnull[1], devnull[2], err, sizeof err);
  }
  sched_free(p);
  ir_graph_free(g);
  return 0;
}
