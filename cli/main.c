/* main.c — the onnx2c-caten command: argument parsing and reporting. */
#include "runtime.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILES 64

static const char usage[] =
    "usage: onnx2c-caten [compile] MODEL.onnx [-o DIR] [--name PREFIX] [options]\n"
    "       onnx2c-caten run MODEL.onnx -i IN.pb... -o OUTDIR [--expect OUT.pb...]\n"
    "       onnx2c-caten verify MODEL.onnx [-i IN.pb...] [--seed N]\n"
    "\n"
    "compile  writes DIR/PREFIX.c, PREFIX.h and PREFIX.weights (default: ./PREFIX.*)\n"
    "run      compiles into a temporary directory, builds with the C compiler, runs\n"
    "         on the inputs and writes OUTDIR/output_K.pb; with --expect, compares\n"
    "         each output (|a-b| <= atol + rtol|b|) and fails on a mismatch\n"
    "verify   runs the model and onnxruntime on the same inputs (random with a\n"
    "         fixed seed when none are given) and prints PASS/FAIL per output\n"
    "\n"
    "options:\n"
    "  -o, --output DIR        output directory (compile, run)\n"
    "  -n, --name PREFIX       symbol prefix and file stem (default: model)\n"
    "  -i, --input FILE        an input tensor (.pb); repeat in input order\n"
    "  -e, --expect FILE       an expected output tensor (.pb) for run\n"
    "  -d, --dim NAME=VALUE    value of a symbolic input dimension (repeatable)\n"
    "      --freeze [NAME=]FILE.pb  fix graph input NAME (default: the tensor's\n"
    "                          name) to the constant in FILE: specialises the model\n"
    "      --dump WHAT         print to stderr: ir-lowered (primitives as lowered),\n"
    "                          ir (after rewrites) or schedule (kernels, loop nests);\n"
    "                          dot=FILE writes the kernel graph for Graphviz\n"
    "      --no-rewrite        keep Gather as the O(V) one-hot reduction\n"
    "      --no-fuse           one primitive per kernel (debugging)\n"
    "      --no-tile           matmuls as one dot product per output: no register\n"
    "                          blocks, packed weight panels or transposed keys\n"
    "      --threads N         OpenMP with N threads over the outer loop of large\n"
    "                          kernels (build the C with -fopenmp; run does)\n"
    "      --cflags FLAGS      C compiler flags for run/verify (default: -O2)\n"
    "      --max-memory SIZE   refuse models whose tensors or constants need more\n"
    "                          (e.g. 512M, 2G; default: the machine's RAM)\n"
    "      --seed N            seed of verify's random inputs (default: 1)\n"
    "      --atol X, --rtol X  tolerances of run --expect and verify: |a-b| <= atol +\n"
    "                          rtol|b| (defaults 1e-5 and 1e-3)\n"
    "  -v, --verbose           per-stage timing on stderr\n"
    "  -h, --help              this text\n"
    "      --version           print the version\n";

typedef struct {
  const char *cmd, *model, *outdir, *cflags;
  const char *inputs[MAX_FILES], *expects[MAX_FILES], *dims[MAX_FILES], *freeze[MAX_FILES];
  int nin, nexp, ndims, nfreeze;
  unsigned seed;
  double atol, rtol;
  rt_options rt;
} args;

static int die(const char *msg) {
  fprintf(stderr, "onnx2c-caten: %s\n", msg);
  return 1;
}

static int parse(int argc, char **argv, args *a) {
  static const struct option longopts[] = {
      {"output", required_argument, 0, 'o'}, {"name", required_argument, 0, 'n'},
      {"input", required_argument, 0, 'i'},  {"expect", required_argument, 0, 'e'},
      {"dim", required_argument, 0, 'd'},    {"dump", required_argument, 0, 'D'},
      {"no-fuse", no_argument, 0, 'F'},      {"cflags", required_argument, 0, 'C'},
      {"seed", required_argument, 0, 'S'},   {"verbose", no_argument, 0, 'v'},
      {"freeze", required_argument, 0, 'Z'},  {"no-rewrite", no_argument, 0, 'R'},
      {"atol", required_argument, 0, 'A'},    {"rtol", required_argument, 0, 'T'},
      {"threads", required_argument, 0, 'j'},  {"max-memory", required_argument, 0, 'M'},
      {"no-tile", no_argument, 0, 'B'},       {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},
      {0, 0, 0, 0}};
  a->seed = 1;
  a->atol = 1e-5;
  a->rtol = 1e-3;
  int c;
  while ((c = getopt_long(argc, argv, "o:n:i:e:d:vh", longopts, NULL)) != -1) {
    switch (c) {
    case 'o': a->outdir = optarg; break;
    case 'n': a->rt.name = optarg; break;
    case 'i':
      if (a->nin == MAX_FILES) return die("too many inputs"), -1;
      a->inputs[a->nin++] = optarg;
      break;
    case 'e':
      if (a->nexp == MAX_FILES) return die("too many expected outputs"), -1;
      a->expects[a->nexp++] = optarg;
      break;
    case 'd':
      if (a->ndims == MAX_FILES || !strchr(optarg, '=')) return die("--dim takes NAME=VALUE"), -1;
      a->dims[a->ndims++] = optarg;
      break;
    case 'D':
      if (strcmp(optarg, "ir") && strcmp(optarg, "ir-lowered") && strcmp(optarg, "schedule") &&
          strncmp(optarg, "dot=", 4))
        return die("--dump takes ir-lowered, ir, schedule or dot=FILE"), -1;
      a->rt.dump = optarg;
      break;
    case 'Z':
      if (a->nfreeze == MAX_FILES) return die("too many --freeze"), -1;
      a->freeze[a->nfreeze++] = optarg;
      break;
    case 'F': a->rt.sched.no_fuse = true; break;
    case 'B': a->rt.sched.no_tile = true; break;
    case 'R': a->rt.no_rewrite = true; break;
    case 'A': a->atol = strtod(optarg, NULL); break;
    case 'M': {
      char *end;
      double v = strtod(optarg, &end);
      double unit = *end == 'K' || *end == 'k' ? 1024.0 : *end == 'M' ? 1048576.0 : *end == 'G' ? 1073741824.0 : 1;
      if (unit != 1) end++;
      if (end == optarg || *end || v <= 0) return die("--max-memory takes a size such as 512M or 2G"), -1;
      imp_set_mem_limit((size_t)(v * unit));
      break;
    }
    case 'j':
      a->rt.threads = atoi(optarg);
      if (a->rt.threads < 1 || a->rt.threads > 1024) return die("--threads takes 1..1024"), -1;
      break;
    case 'T': a->rtol = strtod(optarg, NULL); break;
    case 'C': a->cflags = optarg; break;
    case 'S': a->seed = (unsigned)strtoul(optarg, NULL, 10); break;
    case 'v': a->rt.verbose = true; break;
    case 'h': fputs(usage, stdout); exit(0);
    case 'V': printf("onnx2c-caten %s\n", ONNX2C_VERSION); exit(0);
    default: fputs(usage, stderr); return -1;
    }
  }
  int k = optind;
  if (k < argc && (!strcmp(argv[k], "compile") || !strcmp(argv[k], "run") || !strcmp(argv[k], "verify")))
    a->cmd = argv[k++];
  else a->cmd = "compile";
  if (k >= argc) return fputs(usage, stderr), -1;
  a->model = argv[k++];
  if (k < argc) return die("too many arguments (options go before or after MODEL, files with -i)"), -1;
  a->rt.imp.dims = a->dims;
  a->rt.imp.ndims = a->ndims;
  a->rt.imp.freeze = a->freeze;
  a->rt.imp.nfreeze = a->nfreeze;
  return 0;
}

static int cmd_compile(args *a) {
  char err[2048];
  rt_model *m;
  if (rt_compile(a->model, a->outdir ? a->outdir : ".", &a->rt, &m, err, sizeof err)) return die(err);
  printf("%s: %d nodes, %d kernels, arena %lld bytes, weights %lld bytes -> %s/%s.{c,h,weights}\n", a->model,
         m->nodes, m->p->nkernels, (long long)m->p->arena_size, (long long)m->p->weights_size, m->dir, m->name);
  rt_model_free(m);
  return 0;
}

static void free_tensors(imp_tensor *t, int n) {
  for (int i = 0; i < n; i++) imp_tensor_free(&t[i]);
  free(t);
}

/* Compiles, builds and runs `a->model` on `ins`; outputs go to *outs. */
static int run_model(args *a, const imp_tensor *ins, int nin, imp_tensor **outs, int *nout, char *err, size_t n) {
  rt_model *m;
  if (rt_compile(a->model, NULL, &a->rt, &m, err, n)) return -1;
  int rc = rt_build(m, a->cflags ? a->cflags : "-O2", err, n);
  *nout = ir_output_count(m->g);
  *outs = calloc((size_t)*nout + 1, sizeof **outs);
  if (!rc) rc = rt_run(m, ins, nin, *outs, err, n);
  if (!rc && a->rt.verbose) fprintf(stderr, "onnx2c-caten: run       %8.3f ms\n", m->run_ms);
  rt_model_free(m);
  return rc;
}

static int read_inputs(args *a, imp_tensor **ins, char *err, size_t n) {
  *ins = calloc((size_t)a->nin + 1, sizeof **ins);
  for (int i = 0; i < a->nin; i++)
    if (rt_tensor_read(a->inputs[i], &(*ins)[i], err, n)) return -1;
  return 0;
}

static int cmd_run(args *a) {
  char err[2048];
  imp_tensor *ins, *outs = NULL;
  int nout = 0, rc = read_inputs(a, &ins, err, sizeof err);
  if (!rc) rc = run_model(a, ins, a->nin, &outs, &nout, err, sizeof err);
  if (!rc && a->outdir) {
    mkdir(a->outdir, 0777);
    for (int i = 0; i < nout && !rc; i++) {
      char p[4200];
      snprintf(p, sizeof p, "%s/output_%d.pb", a->outdir, i);
      rc = rt_tensor_write(p, &outs[i], err, sizeof err);
    }
  }
  if (!rc && a->nexp) {
    if (a->nexp != nout) rc = (snprintf(err, sizeof err, "%d expected outputs given, the model has %d", a->nexp, nout), -1);
    for (int i = 0; i < nout && !rc; i++) {
      imp_tensor want;
      if ((rc = rt_tensor_read(a->expects[i], &want, err, sizeof err))) break;
      rt_diff d;
      bool ok = rt_compare(&outs[i], &want, a->atol, a->rtol, &d);
      char sh[128];
      ir_shape_str(&want.shape, sh, sizeof sh);
      printf("output %d '%s' %s%s: max abs %.3g, max rel %.3g, %lld mismatches: %s\n", i, outs[i].name,
             ir_dtype_name(want.dtype), sh, d.max_abs, d.max_rel, (long long)d.mismatches,
             ok ? "PASS" : d.shape_ok ? "FAIL" : "FAIL (dtype or shape differs)");
      if (!ok) rc = 1;
      imp_tensor_free(&want);
    }
  }
  free_tensors(ins, a->nin);
  free_tensors(outs, nout);
  if (rc < 0) return die(err);
  return rc;
}

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s;
}

/* Random inputs for verify: floats in [-1, 1), integers in [0, 4), booleans. */
static int random_inputs(args *a, const char *dir, char paths[][4200], int *n, char *err, size_t errlen) {
  ir_graph *g;
  if (imp_load(a->model, &a->rt.imp, &g, err, errlen)) return -1;
  uint64_t s = 0x9E3779B97F4A7C15ull ^ a->seed;
  *n = ir_input_count(g) < MAX_FILES ? ir_input_count(g) : MAX_FILES;
  int rc = 0;
  for (int i = 0; i < *n && !rc; i++) {
    const ir_node *x = ir_node_get(g, ir_input_ref(g, i));
    imp_tensor t = {.name = (char *)x->name, .dtype = x->dtype, .shape = x->shape};
    int64_t N = ir_shape_numel(&x->shape);
    t.bytes = (size_t)N * ir_dtype_size(x->dtype);
    t.data = malloc(t.bytes + 1);
    for (int64_t k = 0; k < N; k++) {
      uint64_t r = rng_next(&s);
      if (ir_dtype_is_float(x->dtype)) ir_elem_set_f(x->dtype, t.data, k, (double)(r >> 11) / 4503599627370496.0 - 1.0);
      else ir_elem_set_i(x->dtype, t.data, k, (int64_t)(r % (x->dtype == IR_BOOL ? 2 : 4)));
    }
    snprintf(paths[i], 4200, "%s/input_%d.pb", dir, i);
    rc = rt_tensor_write(paths[i], &t, err, errlen);
    free(t.data);
  }
  ir_graph_free(g);
  return rc;
}

static int cmd_verify(args *a) {
  char err[2048], dir[4096], paths[MAX_FILES][4200], outdir[4200];
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/onnx2c-verify-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return die("cannot create a temporary directory");
  int nin = a->nin, rc = 0;
  if (!nin) rc = random_inputs(a, dir, paths, &nin, err, sizeof err);
  else
    for (int i = 0; i < nin; i++) snprintf(paths[i], sizeof paths[i], "%s", a->inputs[i]);
  const char *files[MAX_FILES];
  for (int i = 0; i < nin; i++) files[i] = paths[i];
  imp_tensor *ins = calloc((size_t)nin + 1, sizeof *ins), *outs = NULL;
  int nout = 0;
  for (int i = 0; i < nin && !rc; i++) rc = rt_tensor_read(files[i], &ins[i], err, sizeof err);
  if (!rc) rc = run_model(a, ins, nin, &outs, &nout, err, sizeof err);
  snprintf(outdir, sizeof outdir, "%s/ort", dir);
  if (!rc) rc = rt_ort_run(a->model, files, nin, outdir, err, sizeof err);
  bool all = true;
  for (int i = 0; i < nout && !rc; i++) {
    char p[4300], sh[128];
    imp_tensor want;
    snprintf(p, sizeof p, "%s/output_%d.pb", outdir, i);
    if ((rc = rt_tensor_read(p, &want, err, sizeof err))) break;
    rt_diff d;
    bool ok = rt_compare(&outs[i], &want, a->atol, a->rtol, &d);
    ir_shape_str(&want.shape, sh, sizeof sh);
    printf("output %d '%s' %s%s: max abs err %.3g, max rel err %.3g: %s\n", i, outs[i].name,
           ir_dtype_name(want.dtype), sh, d.max_abs, d.max_rel, ok ? "PASS" : "FAIL");
    all &= ok;
    remove(p);
    imp_tensor_free(&want);
  }
  free_tensors(ins, nin);
  free_tensors(outs, nout);
  if (!a->nin)
    for (int i = 0; i < nin; i++) remove(paths[i]);
  rmdir(outdir);
  rmdir(dir);
  if (rc) return die(err);
  return all ? 0 : 1;
}

int main(int argc, char **argv) {
  args a;
  memset(&a, 0, sizeof a);
  if (parse(argc, argv, &a)) return 1;
  if (!strcmp(a.cmd, "run")) return cmd_run(&a);
  if (!strcmp(a.cmd, "verify")) return cmd_verify(&a);
  return cmd_compile(&a);
}
