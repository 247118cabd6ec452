/* build_run.c — building generated C into a shared object, loading it,
 * and running it on tensors. */
#include "runtime.h"

#include <dlfcn.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

int rt_spawn(char *const *argv) {
  pid_t pid;
  if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ)) return -1;
  int st;
  if (waitpid(pid, &st, 0) < 0) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

void rt_unload(rt_model *m) {
  if (m->so) dlclose(m->so);
  m->so = NULL;
  m->run = NULL;
  free(m->weights);
  m->weights = NULL;
}

int rt_build(rt_model *m, const char *cflags, char *err, size_t n) {
  char c[4300], so[4300], sym[200];
  snprintf(c, sizeof c, "%s/%s.c", m->dir, m->name);
  snprintf(so, sizeof so, "%s/%s.so", m->dir, m->name);
  const char *cc = getenv("CC");
  char *argv[64];
  int k = 0;
  argv[k++] = (char *)(cc && *cc ? cc : "cc");
  char *flags = strdup(cflags ? cflags : "-O2");
  for (char *s = strtok(flags, " "); s && k < 50; s = strtok(NULL, " ")) argv[k++] = s;
  argv[k++] = "-std=c11";
  argv[k++] = "-fPIC";
  argv[k++] = "-shared";
  argv[k++] = "-o";
  argv[k++] = so;
  argv[k++] = c;
  if (m->threads > 1) argv[k++] = "-fopenmp";
  argv[k++] = "-lm";
  argv[k] = NULL;
  int rc = rt_spawn(argv);
  free(flags);
  if (rc) return snprintf(err, n, "%s: the C compiler failed (status %d)", c, rc), -1;
  /* NODELETE: an OpenMP thread pool may outlive dlclose (it runs code of the object) */
  m->so = dlopen(so, RTLD_NOW | RTLD_LOCAL | (m->threads > 1 ? RTLD_NODELETE : 0));
  if (!m->so) return snprintf(err, n, "%s: cannot load: %s", so, dlerror()), -1;
  snprintf(sym, sizeof sym, "%s_run", m->name);
  *(void **)&m->run = dlsym(m->so, sym);
  if (!m->run) return snprintf(err, n, "%s: no symbol %s", so, sym), -1;
  /* weights: read the file into 64-byte aligned memory */
  snprintf(c, sizeof c, "%s/%s.weights", m->dir, m->name);
  size_t size = (size_t)m->p->weights_size;
  m->weights = aligned_alloc(64, (size + 63) / 64 * 64 + 64);
  if (!m->weights) return snprintf(err, n, "out of memory for weights"), -1;
  FILE *f = fopen(c, "rb");
  if (!f || fread(m->weights, 1, size, f) != size) {
    if (f) fclose(f);
    return snprintf(err, n, "%s: cannot read weights", c), -1;
  }
  fclose(f);
  return 0;
}

static int match_input(rt_model *m, const imp_tensor *ins, int nin, int i) {
  const char *name = ir_node_get(m->g, ir_input_ref(m->g, i))->name;
  for (int k = 0; k < nin; k++)
    if (ins[k].name && name && !strcmp(ins[k].name, name)) return k;
  return i < nin ? i : -1;
}

int rt_run(rt_model *m, const imp_tensor *ins, int nin, imp_tensor *outs, char *err, size_t n) {
  int ni = ir_input_count(m->g), no = ir_output_count(m->g);
  const void **iptr = calloc((size_t)ni + 1, sizeof *iptr);
  void **optr = calloc((size_t)no + 1, sizeof *optr);
  void *arena = aligned_alloc(64, (size_t)m->p->arena_size + 64);
  int rc = 0;
  if (!iptr || !optr || !arena) abort();
  for (int i = 0; i < ni && !rc; i++) {
    const ir_node *x = ir_node_get(m->g, ir_input_ref(m->g, i));
    int k = match_input(m, ins, nin, i);
    char a[128], b[128];
    if (k < 0) {
      rc = (snprintf(err, n, "no tensor given for input '%s'", x->name), -1);
    } else if (ins[k].dtype != x->dtype || !ir_shape_eq(&ins[k].shape, &x->shape)) {
      ir_shape_str(&x->shape, a, sizeof a);
      ir_shape_str(&ins[k].shape, b, sizeof b);
      rc = (snprintf(err, n, "input '%s' must be %s%s, got %s%s", x->name, ir_dtype_name(x->dtype), a,
                    ir_dtype_name(ins[k].dtype), b), -1);
    } else {
      iptr[i] = ins[k].data;
    }
  }
  for (int i = 0; i < no; i++) {
    const ir_node *x = ir_node_get(m->g, ir_output(m->g, i));
    memset(&outs[i], 0, sizeof outs[i]);
    outs[i].name = strdup(ir_output_name(m->g, i));
    outs[i].dtype = x->dtype;
    outs[i].shape = x->shape;
    outs[i].bytes = (size_t)ir_shape_numel(&x->shape) * ir_dtype_size(x->dtype);
    outs[i].data = calloc(1, outs[i].bytes + 1);
    optr[i] = outs[i].data;
  }
  if (!rc) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = m->run(iptr, optr, m->weights, arena);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    m->run_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (st == 1) rc = (snprintf(err, n, "the model reported an index out of range"), -1);
    else if (st) rc = (snprintf(err, n, "the model returned error status %d", st), -1);
  }
  free(iptr);
  free(optr);
  free(arena);
  return rc;
}

int rt_ort_run(const char *onnx, const char *const *inputs, int nin, const char *outdir, char *err,
               size_t n) {
  const char *script = getenv("ONNX2C_ORT_SCRIPT");
  char def[4200];
  snprintf(def, sizeof def, "%s/runtime/ort/ort_run.js", ONNX2C_SOURCE_DIR);
  if (!script || !*script) script = def;
  char **argv = calloc((size_t)nin + 8, sizeof *argv);
  if (!argv) abort();
  int k = 0;
  argv[k++] = "node";
  argv[k++] = (char *)script;
  argv[k++] = (char *)onnx;
  argv[k++] = (char *)outdir;
  for (int i = 0; i < nin; i++) argv[k++] = (char *)inputs[i];
  argv[k] = NULL;
  int rc = rt_spawn(argv);
  free(argv);
  if (rc) return snprintf(err, n, "onnxruntime (node %s) failed with status %d", script, rc), -1;
  return 0;
}
