/* compile.c — the compiler as one straight function, and the files it writes. */
#include "runtime.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Progress on a terminal: one line on stderr, rewritten per stage and
 * cleared at the end (NULL); nothing when stderr is not a terminal or -v
 * prints its timings. */
static void progress(const rt_options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const rt_options *o, const char *fmt, ...) {
  static int tty = -1;
  if (tty < 0) tty = isatty(STDERR_FILENO);
  if (!tty || o->verbose) return;
  fputs("\r\033[K", stderr);
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    fputs("onnx2c-caten: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
  }
  fflush(stderr);
}

static void stage_done(const rt_options *o, const char *stage, double *t) {
  double n = now_ms();
  if (o->verbose) fprintf(stderr, "onnx2c-caten: %-9s %8.2f ms\n", stage, n - *t);
  *t = n;
}

/* --name becomes the prefix of every exported identifier (NAME_run,
 * NAME_OK, the guard NAME_H...) and the files' stem. Refused, not cut or
 * changed: not an identifier, longer than RT_NAME_MAX, C's reserved forms
 * (leading underscore, "__", keywords, the library's future names that a
 * NAME_... identifier would fall into), the generated code's own prefix
 * o2c, and names whose NAME_OK is a libc macro (R_OK of <unistd.h>). NULL
 * when fine, else why. */
static const char *name_problem(const char *s) {
  static const char *const keywords[] = {
      "auto",     "break",  "case",     "char",    "const",    "continue", "default",  "do",
      "double",   "else",   "enum",     "extern",  "float",    "for",      "goto",     "if",
      "inline",   "int",    "long",     "register", "restrict", "return",   "short",    "signed",
      "sizeof",   "static", "struct",   "switch",  "typedef",  "union",    "unsigned", "void",
      "volatile", "while",  "asm",      "typeof",  "bool",     "true",     "false",    "R",
      "W",        "X",      "F"};
  static const char *const lower_prefix[] = {"is", "to", "str", "mem", "wcs"}; /* + [a-z] */
  static const char *const prefix[] = {"o2c", "O2C", "LC_", "SIG", "FE_", "PRI", "SCN", "atomic_",
                                       "cnd_", "mtx_", "thrd_", "tss_", "memory_order_", "TIME_"};
  size_t n = strlen(s);
  if (!n || (*s >= '0' && *s <= '9')) return "is not a C identifier";
  for (const char *c = s; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
      return "is not a C identifier";
  if (n > RT_NAME_MAX) return "is too long (at most " RT_NAME_MAX_STR " characters)";
  if (s[0] == '_' || strstr(s, "__")) return "is reserved by C (a leading underscore or \"__\")";
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
    if (!strcmp(s, keywords[i])) return "is reserved (a C keyword, or NAME_OK is a libc macro)";
  if (s[0] == 'E' && ((s[1] >= 'A' && s[1] <= 'Z') || (s[1] >= '0' && s[1] <= '9')))
    return "is reserved by C (E and a capital or digit: <errno.h>)";
  for (size_t i = 0; i < sizeof lower_prefix / sizeof lower_prefix[0]; i++) {
    size_t m = strlen(lower_prefix[i]);
    if (!strncmp(s, lower_prefix[i], m) && s[m] >= 'a' && s[m] <= 'z')
      return "is reserved by C (a future library name)";
  }
  for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
    if (!strncmp(s, prefix[i], strlen(prefix[i])))
      return "is reserved (a library or generated-code prefix)";
  return NULL;
}

/* The C, the header and the weights (with `embed`, NAME_weights.c too,
 * which names the weights file by its absolute path: the assembler reads
 * it), as one set (outset.c). */
static int emit_files(rt_model *m, bool embed, char *err, size_t n) {
  static const char *const ext[4] = {".c", ".h", ".weights", "_weights.c"};
  char wabs[4200] = "";
  char *dir = embed ? realpath(m->dir, NULL) : NULL;
  if (dir) snprintf(wabs, sizeof wabs, "%s/%s.weights", dir, m->name);
  free(dir);
  if (embed && !*wabs) return snprintf(err, n, "%s: cannot resolve the directory", m->dir), -1;
  rt_outset set;
  if (rt_outset_open(&set, m->dir, m->name, ext, embed ? 4 : 3, err, n)) return -1;
  cg_options co = {m->name, m->threads, embed ? wabs : NULL, m->threads_all};
  int rc = cg_emit(m->p, &co, set.f[0], set.f[1], set.f[2], err, n);
  if (!rc && embed) rc = cg_emit_embedded(m->p, &co, set.f[3], err, n);
  if (rc) {
    rt_outset_abort(&set);
    return -1;
  }
  return rt_outset_commit(&set, err, n);
}

/* Matmul weights of 16 MiB or more are packed into panels from where they
 * lie, not copied to their transpose first (ir_rewrite_weight_layout):
 * a large model is then never held twice. ONNX2C_PACK_IN_PLACE=BYTES sets
 * the bound (the tests use 0, so small models take that path too). */
static uint64_t pack_in_place_bytes(void) {
  const char *env = getenv("ONNX2C_PACK_IN_PLACE");
  char *end;
  unsigned long long v = env && *env ? strtoull(env, &end, 10) : 0;
  return env && *env && !*end ? (uint64_t)v : (uint64_t)16 << 20;
}

int rt_compile(const char *onnx, const char *outdir, const rt_options *o, rt_model **out, char *err,
               size_t n) {
  *out = NULL;
  const char *name = o->name ? o->name : "model";
  const char *why = name_problem(name);
  if (why) return snprintf(err, n, "--name '%.80s%s' %s", name, strlen(name) > 80 ? "..." : "", why), -1;
  rt_model *m = calloc(1, sizeof *m);
  if (!m) abort();
  snprintf(m->name, sizeof m->name, "%s", name);
  m->threads = o->threads;
  m->threads_all = o->threads_all;
  if (outdir) {
    snprintf(m->dir, sizeof m->dir, "%s", outdir);
    if (mkdir(outdir, 0777) && errno != EEXIST) {
      snprintf(err, n, "%s: cannot create directory (%s)", outdir, strerror(errno));
      free(m);
      return -1;
    }
  } else {
    const char *tmp = getenv("TMPDIR");
    snprintf(m->dir, sizeof m->dir, "%s/onnx2c-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(m->dir)) {
      snprintf(err, n, "cannot create a temporary directory");
      free(m);
      return -1;
    }
    m->own_dir = true;
  }
  double t = now_ms();
  progress(o, "[1/4] reading %s and lowering its nodes...", onnx);
  imp_options io = o->imp;
  io.io = &m->io;
  int rc = imp_load(onnx, &io, &m->g, err, n);
  stage_done(o, "import", &t);
  if (!rc && ir_verify(m->g)) rc = -1, snprintf(err, n, "%s: %s", onnx, ir_error(m->g));
  if (!rc) m->nodes = ir_graph_count(m->g);
  if (!rc && o->dump && !strcmp(o->dump, "ir-lowered")) ir_dump(m->g, stderr);
  if (!rc) progress(o, "[2/4] rewriting %d primitives...", m->nodes);
  if (!rc && !o->no_rewrite) {
    m->rewrites = ir_rewrite_gather(m->g);
    ir_rewrite_sink_regions(m->g);
    ir_rewrite_sink_views(m->g);
    ir_rewrite_sink_concats(m->g);
    ir_rewrite_pad_share(m->g);
    ir_rewrite_weight_layout(m->g, o->sched.no_tile ? UINT64_MAX : pack_in_place_bytes());
    if (!o->sched.no_tile) ir_rewrite_matmul_operands(m->g);
    if (ir_verify(m->g)) rc = -1, snprintf(err, n, "%s: after rewrites: %s", onnx, ir_error(m->g));
    stage_done(o, "rewrite", &t);
  }
  if (!rc && o->dump && !strcmp(o->dump, "ir")) ir_dump(m->g, stderr);
  if (!rc) {
    progress(o, "[3/4] scheduling %d primitives into kernels (isl)...", ir_graph_count(m->g));
    sched_options so = o->sched;
    so.threads = o->threads; /* which loop a kernel's threads split (gemm.c) */
    rc = sched_build(m->g, &so, &m->p, err, n);
    stage_done(o, "schedule", &t);
  }
  if (!rc && o->dump && !strcmp(o->dump, "schedule")) sched_dump(m->p, stderr);
  if (!rc && o->verbose) sched_report_table(m->p, stderr);
  if (!rc && o->report) {
    FILE *f = fopen(o->report, "w");
    if (!f || sched_report_json(m->p, f) || fclose(f))
      rc = -1, snprintf(err, n, "%s: cannot write the report (%s)", o->report, strerror(errno));
  }
  if (!rc && o->dump && !strncmp(o->dump, "dot=", 4)) {
    FILE *f = fopen(o->dump + 4, "w");
    if (!f) rc = -1, snprintf(err, n, "%s: cannot write (%s)", o->dump + 4, strerror(errno));
    else sched_dump_dot(m->p, f), fclose(f);
  }
  if (!rc) {
    progress(o, "[4/4] writing the C of %d kernels and %lld bytes of weights...", m->p->nkernels,
             (long long)m->p->weights_size);
    rc = emit_files(m, o->embed_weights, err, n);
    stage_done(o, "emit", &t);
  }
  progress(o, NULL);
  if (rc) {
    rt_model_free(m);
    return -1;
  }
  *out = m;
  return 0;
}

void rt_model_free(rt_model *m) {
  if (!m) return;
  rt_unload(m);
  imp_io_free(&m->io);
  sched_free(m->p);
  ir_graph_free(m->g);
  if (m->own_dir) {
    const char *ext[] = {"c", "h", "weights", "so"};
    char p[4300];
    for (int i = 0; i < 4; i++) {
      snprintf(p, sizeof p, "%s/%s.%s", m->dir, m->name, ext[i]);
      remove(p);
    }
    rmdir(m->dir);
  }
  free(m);
}
