/* build_run.c — building generated C into a shared object, loading it,
 * and running it on tensors. */
#include "runtime.h"

#include <dlfcn.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
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
  m->run_dims = NULL;
  m->arena_size_dims = NULL;
  if (m->weights_len) munmap(m->weights, m->weights_len);
  else free(m->weights);
  m->weights = NULL;
  m->weights_len = 0;
}

/* The sanitizer named in `word` (-fsanitize=...) whose runtime this
 * process lacks, or NULL: the shared object is loaded into it, and ASan,
 * TSan, MSan want their runtime loaded first (ASan aborts the load with
 * "ASan runtime does not come first"); UBSan's loads late. */
static const char *host_lacks_sanitizer(const char *word) {
  static const char *const lacked[] = {
#ifndef __SANITIZE_ADDRESS__
      "address",
#endif
#ifndef __SANITIZE_THREAD__
      "thread",
#endif
      "memory", "hwaddress"};
  if (strncmp(word, "-fsanitize=", 11)) return NULL;
  for (const char *p = word + 11; *p; p += strcspn(p, ","), p += *p == ',')
    for (size_t i = 0; i < sizeof lacked / sizeof *lacked; i++) {
      size_t len = strlen(lacked[i]);
      if (!strncmp(p, lacked[i], len) && (p[len] == ',' || !p[len])) return lacked[i];
    }
  return NULL;
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
  if (!flags) return snprintf(err, n, "out of memory"), -1;
  bool std = false; /* the user's -std=… (gnu11: gcc contracts a*b+c into FMAs) */
  for (char *s = strtok(flags, " "); s; s = strtok(NULL, " ")) {
    const char *san = host_lacks_sanitizer(s);
    if (san)
      snprintf(err, n, "--cflags %s: the generated code runs inside onnx2c-caten, which is not built with the %s "
               "sanitizer (configure it with -DONNX2C_SANITIZE=ON for address, or build the C into a program of "
               "your own)", s, san);
    else if (k == 50) snprintf(err, n, "--cflags has more than %d words", k - 1);
    if (san || k == 50) return free(flags), -1;
    argv[k++] = s, std |= !strncmp(s, "-std=", 5);
  }
  if (!std) argv[k++] = "-std=c11";
  argv[k++] = "-fPIC";
  argv[k++] = "-shared";
  argv[k++] = "-o";
  argv[k++] = so;
  argv[k++] = c;
  if (m->threads > 1) argv[k++] = "-pthread";
  argv[k++] = "-lm";
  argv[k] = NULL;
  int rc = rt_spawn(argv);
  free(flags);
  if (rc) return snprintf(err, n, "%s: the C compiler failed (status %d)", c, rc), -1;
  /* NODELETE: the generated code's thread pool outlives dlclose (its workers run code of the object) */
  m->so = dlopen(so, RTLD_NOW | RTLD_LOCAL | (m->threads > 1 ? RTLD_NODELETE : 0));
  if (!m->so) return snprintf(err, n, "%s: cannot load: %s", so, dlerror()), -1;
  snprintf(sym, sizeof sym, "%s_run", m->name);
  *(void **)&m->run = dlsym(m->so, sym);
  if (!m->run) return snprintf(err, n, "%s: no symbol %s", so, sym), -1;
  if (ir_sym_count(m->g)) {
    snprintf(sym, sizeof sym, "%s_run_dims", m->name);
    *(void **)&m->run_dims = dlsym(m->so, sym);
    snprintf(sym, sizeof sym, "%s_arena_size_dims", m->name);
    *(void **)&m->arena_size_dims = dlsym(m->so, sym);
    if (!m->run_dims || !m->arena_size_dims) return snprintf(err, n, "%s: no symbol %s", so, sym), -1;
  }
  /* weights: the file mapped read-only (page-aligned, so 64-byte aligned;
   * a 4.4 GB model is not copied), a byte of aligned memory when empty */
  snprintf(c, sizeof c, "%s/%s.weights", m->dir, m->name);
  size_t size = (size_t)m->p->weights_size;
  if (!size) {
    m->weights = aligned_alloc(64, 64);
    return m->weights ? 0 : (snprintf(err, n, "out of memory for weights"), -1);
  }
  int fd = open(c, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != (uint64_t)size) {
    if (fd >= 0) close(fd);
    return snprintf(err, n, "%s: cannot read weights (missing, or not %zu bytes)", c, size), -1;
  }
  void *w = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (w == MAP_FAILED) return snprintf(err, n, "%s: cannot map weights", c), -1;
  m->weights = w;
  m->weights_len = size;
  return 0;
}

static int match_input(rt_model *m, const imp_tensor *ins, int nin, int i) {
  const char *name = ir_node_get(m->g, ir_input_ref(m->g, i))->name;
  for (int k = 0; k < nin; k++)
    if (ins[k].name && name && !strcmp(ins[k].name, name)) return k;
  return i < nin ? i : -1;
}

bool rt_shape_at(const ir_shape *s, const int64_t *vals, ir_shape *out) {
  *out = *s;
  for (int k = 0; k < s->rank; k++)
    if (!ir_dim_eval(s->d[k], vals, &out->d[k])) return false;
  return true;
}

int rt_bind_dims(const ir_graph *g, const ir_shape *shapes, int64_t *vals, char *err, size_t n) {
  int from[IR_MAX_SYMS];
  for (int k = 0; k < IR_MAX_SYMS; k++) from[k] = -1, vals[k] = 0;
  /* bare symbols bind, then every dimension must agree */
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < ir_input_count(g); i++) {
      const ir_node *x = ir_node_get(g, ir_input_ref(g, i));
      if (shapes[i].rank != x->shape.rank)
        return snprintf(err, n, "input '%s' must have rank %d, got %d", x->name, x->shape.rank, shapes[i].rank), -1;
      for (int a = 0; a < x->shape.rank; a++) {
        int64_t d = x->shape.d[a], want;
        int k = ir_dim_sym_id(d);
        if (!pass && k >= 0 && from[k] < 0) {
          vals[k] = shapes[i].d[a], from[k] = i;
          continue;
        }
        if (!pass) continue;
        char ds[96];
        ir_dim_str(d, ds, sizeof ds);
        if (!ir_dim_eval(d, vals, &want) || want != shapes[i].d[a]) {
          if (k >= 0)
            return snprintf(err, n, "input '%s' axis %d is %lld, but symbol '%s' is %lld (from input '%s')", x->name,
                            a, (long long)shapes[i].d[a], ds, (long long)vals[k],
                            ir_node_get(g, ir_input_ref(g, from[k]))->name), -1;
          return snprintf(err, n, "input '%s' axis %d is %lld, not %s", x->name, a, (long long)shapes[i].d[a], ds), -1;
        }
      }
    }
  return 0;
}

/* Fills a buffer the model is to write with a pattern no correct result
 * leaves behind, so that a kernel which never writes fails its test instead
 * of passing on zeroed memory: 0xFF bytes are NaN in every float width
 * (NaN survives any arithmetic, where 0xA5 bytes read as -2.9e-16 could
 * vanish within a tolerance), 0xA5 bytes in integers and bools (165 is not
 * a bool, nor a likely index or count). The arena gets 0xFF too. */
void rt_poison(void *buf, size_t bytes, ir_dtype dtype) {
  memset(buf, ir_dtype_is_float(dtype) ? 0xFF : 0xA5, bytes);
}

/* The output shapes at the symbols' values, as poisoned tensors to be
 * filled. A shape that cannot exist (overflow, negative) gets no buffer:
 * the entry function must refuse those dimensions before writing anything.
 * Outputs and arena together must fit the memory limit (--max-memory) and
 * be allocated, else run refuses before the call (a NULL buffer would be
 * written through). */
static int make_outputs(rt_model *m, const int64_t *vals, size_t asize, imp_tensor *outs, void **optr, char *err,
                        size_t n) {
  size_t total = asize;
  for (int i = 0; i < ir_output_count(m->g); i++) {
    const ir_node *x = ir_node_get(m->g, ir_output(m->g, i));
    memset(&outs[i], 0, sizeof outs[i]);
    outs[i].name = strdup(ir_output_name(m->g, i));
    outs[i].dtype = x->dtype;
    bool ok = rt_shape_at(&x->shape, vals, &outs[i].shape);
    uint64_t numel = 1;
    for (int k = 0; ok && k < outs[i].shape.rank; k++) {
      int64_t d = outs[i].shape.d[k];
      ok = d >= 0 && (!d || numel <= ((uint64_t)1 << 40) / (uint64_t)d);
      numel *= ok ? (uint64_t)d : 1;
    }
    if (!ok) continue;
    outs[i].bytes = (size_t)numel * ir_dtype_size(x->dtype);
    total = total + outs[i].bytes < total ? SIZE_MAX : total + outs[i].bytes;
    if (total > imp_mem_limit())
      return snprintf(err, n, "output '%s' needs %zu bytes (outputs and arena %zu): more than the memory limit "
                      "(%zu bytes, --max-memory)", outs[i].name, outs[i].bytes, total, imp_mem_limit()), -1;
    outs[i].data = malloc(outs[i].bytes + 1);
    if (!outs[i].data) return snprintf(err, n, "cannot allocate %zu bytes for output '%s'", outs[i].bytes, outs[i].name), -1;
    rt_poison(outs[i].data, outs[i].bytes, x->dtype);
    optr[i] = outs[i].data;
  }
  return 0;
}

int rt_output_count(const rt_model *m) {
  int k = 0;
  for (int i = 0; i < ir_output_count(m->g); i++) k += ir_output_len_of(m->g, i) < 0;
  return k;
}

/* Output `t` computed at its bound along `axis`, cut to the `len` entries
 * the model reported there (rows moved down in place: the destination never
 * passes the source). A length outside [0, bound] is an error. */
static int cut_output(imp_tensor *t, int axis, const imp_tensor *len, char *err, size_t n) {
  int64_t l = *(const int64_t *)len->data, bound = t->shape.d[axis];
  if (l < 0 || l > bound)
    return snprintf(err, n, "output '%s': the model reported length %lld along axis %d, outside 0..%lld", t->name,
                    (long long)l, axis, (long long)bound), -1;
  size_t inner = ir_dtype_size(t->dtype), outer = 1;
  for (int k = axis + 1; k < t->shape.rank; k++) inner *= (size_t)t->shape.d[k];
  for (int k = 0; k < axis; k++) outer *= (size_t)t->shape.d[k];
  uint8_t *d = t->data;
  for (size_t o = 0; o < outer; o++) memmove(d + o * (size_t)l * inner, d + o * (size_t)bound * inner, (size_t)l * inner);
  t->shape.d[axis] = l;
  t->bytes = outer * (size_t)l * inner;
  return 0;
}

/* The model's outputs in `outs` (rt_output_count of them), each
 * value-dependent one cut to its actual length; the length outputs are
 * consumed. */
static int cut_outputs(rt_model *m, imp_tensor *all, imp_tensor *outs, bool ok, char *err, size_t n) {
  int rc = 0, k = 0;
  for (int i = 0; i < ir_output_count(m->g); i++) {
    int axis, len = ir_output_len(m->g, i, &axis);
    if (ok && !rc && len >= 0) rc = cut_output(&all[i], axis, &all[len], err, n);
  }
  for (int i = 0; i < ir_output_count(m->g); i++) {
    if (ir_output_len_of(m->g, i) >= 0) imp_tensor_free(&all[i]);
    else outs[k++] = all[i];
  }
  return rc;
}

int rt_run(rt_model *m, const imp_tensor *ins, int nin, imp_tensor *outs, char *err, size_t n) {
  for (int k = 0; k < nin; k++)
    if (ins[k].kind != IMP_IO_TENSOR) { /* sequences, optionals: as their tensors (values.c) */
      imp_tensor *flat;
      int nflat;
      if (rt_flatten_inputs(m, ins, nin, &flat, &nflat, err, n)) return -1;
      int rc = rt_run(m, flat, nflat, outs, err, n); /* once: flat holds tensors only */
      rt_flat_free(flat, nflat);
      return rc;
    }
  int ni = ir_input_count(m->g), no = ir_output_count(m->g);
  imp_tensor *all = calloc((size_t)no + 1, sizeof *all);
  bool sym = ir_sym_count(m->g) > 0;
  const void **iptr = calloc((size_t)ni + 1, sizeof *iptr);
  void **optr = calloc((size_t)no + 1, sizeof *optr);
  ir_shape *shapes = calloc((size_t)ni + 1, sizeof *shapes);
  int64_t vals[IR_MAX_SYMS] = {0};
  int rc = 0;
  /* an input no output reads (CastLike's `like`: only its type counts) may
   * come in any shape; the ONNX tests give such inputs one element */
  char *read = ir_live_nodes(m->g);
  if (!iptr || !optr || !shapes || !read || !all) abort();
  for (int i = 0; i < ni && !rc; i++) {
    const ir_node *x = ir_node_get(m->g, ir_input_ref(m->g, i));
    int k = match_input(m, ins, nin, i);
    char a[128], b[128];
    if (k < 0) {
      rc = (snprintf(err, n, "no tensor given for input '%s'", x->name), -1);
    } else if (!rt_dtype_matches(x->dtype, ins[k].dtype) ||
               (!sym && read[ir_input_ref(m->g, i)] && !ir_shape_eq(&ins[k].shape, &x->shape))) {
      ir_shape_str(&x->shape, a, sizeof a);
      ir_shape_str(&ins[k].shape, b, sizeof b);
      rc = (snprintf(err, n, "input '%s' must be %s%s, got %s%s", x->name, ir_dtype_name(x->dtype), a,
                    ir_dtype_name(ins[k].dtype), b), -1);
    } else {
      iptr[i] = ins[k].data;
      shapes[i] = ins[k].shape;
    }
  }
  if (!rc && sym) rc = rt_bind_dims(m->g, shapes, vals, err, n);
  for (int i = 0; i < ir_sym_count(m->g); i++) m->dims[i] = vals[ir_sym(m->g, i)];
  /* the model says how much arena these dimensions need (0: it refuses them) */
  size_t asize = !sym ? (size_t)m->p->arena_size : rc ? 0 : m->arena_size_dims(m->dims);
  asize = asize > SIZE_MAX / 2 ? SIZE_MAX / 2 : (asize + 63) / 64 * 64 + 64;
  if (make_outputs(m, vals, asize, all, optr, rc ? NULL : err, rc ? 0 : n)) rc = -1;
  void *arena = rc ? NULL : aligned_alloc(64, asize);
  if (!rc && !arena) rc = (snprintf(err, n, "cannot allocate the arena (%zu bytes)", asize), -1);
  if (arena) rt_poison(arena, asize, IR_F32);
  if (!rc) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = sym ? m->run_dims(iptr, optr, m->weights, arena, m->dims) : m->run(iptr, optr, m->weights, arena);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    m->run_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (st == 1) rc = (snprintf(err, n, "the model reported an index out of range"), -1);
    else if (st == 2 && sym) {
      size_t k = (size_t)snprintf(err, n, "the model refused the dimensions (");
      for (int i = 0; i < ir_sym_count(m->g) && k < n; i++)
        k += (size_t)snprintf(err + k, n - k, "%s%s=%lld", i ? ", " : "", ir_dim_sym_name(ir_sym(m->g, i)),
                              (long long)m->dims[i]);
      if (k < n) snprintf(err + k, n - k, "): outside what it was compiled for (status %d, ERR_SHAPE)", st);
      rc = RT_ERR_DIMS;
    } else if (st) rc = (snprintf(err, n, "the model returned error status %d", st), -1);
  }
  if (cut_outputs(m, all, outs, !rc, err, n)) rc = -1;
  free(all);
  free(iptr);
  free(optr);
  free(shapes);
  free(read);
  free(arena);
  return rc;
}

int rt_ort_run(const char *onnx, const char *const *inputs, int nin, const char *outdir, char *err,
               size_t n) {
  const char *script = getenv("ONNX2C_ORT_SCRIPT");
  char def[4200];
  if ((!script || !*script) && rt_data_path("ort/ort_run.js", def, sizeof def))
    return snprintf(err, n, "ort/ort_run.js not found under share/onnx2c-caten/ beside the program "
                    "(install it, or set ONNX2C_ORT_SCRIPT)"), -1;
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
