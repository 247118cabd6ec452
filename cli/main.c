/* main.c — the onnx2c-caten command: compile, run and verify (the options
 * are parsed in args.c). */
#include "cli.h"
#include "runtime.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* SIGINT/SIGTERM/SIGHUP during a compile: the output set's temporaries
 * (NAME.c.XXXXXX beside the targets) go, then the signal is raised again
 * with its default action so the caller sees how we ended. */
static void stop_compile(int sig) {
  rt_outset_unlink_temporaries();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void on_stop_signals(void (*handler)(int)) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (int i = 0; i < 3; i++) {
    struct sigaction sa, prev;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[i], NULL, &prev);
    if (prev.sa_handler != SIG_IGN) sigaction(sigs[i], &sa, NULL); /* nohup stays nohup */
  }
}

static int cmd_compile(cli_args *a) {
  char err[2048];
  on_stop_signals(stop_compile);
  rt_model *m;
  rt_spec *spec = calloc(1, sizeof *spec);
  if (!spec) abort();
  int rc = rt_compile_for(a->model, a->outdir ? a->outdir : ".", &a->rt, NULL, NULL, 0, spec, &m, err, sizeof err);
  free(spec);
  if (rc) return cli_die(err);
  printf("%s: %d nodes, %d kernels, arena %lld bytes%s, weights %lld bytes -> %s/%s.{c,h,weights}%s\n", a->model,
         m->nodes, m->p->nkernels, (long long)m->p->arena_size, m->p->symbolic ? " (at the reference point)" : "",
         (long long)m->p->weights_size, m->dir, m->name, a->rt.embed_weights ? " and _weights.c" : "");
  rt_model_free(m);
  return 0;
}

static void free_tensors(imp_tensor *t, int n) {
  for (int i = 0; i < n; i++) imp_tensor_free(&t[i]);
  free(t);
}

/* One line on stderr when the code is specialised to given inputs (it then
 * serves those only): what was fixed, as the options that would fix it. */
static void note_specialised(const cli_args *a, const rt_spec *s) {
  char buf[8192];
  rt_spec_str(s, buf, sizeof buf);
  if (!a->nfreeze && !*buf) return;
  fprintf(stderr, "onnx2c-caten: specialised to these inputs:");
  for (int i = 0; i < a->nfreeze; i++) fprintf(stderr, " --freeze %s", a->freeze[i]);
  fprintf(stderr, "%s\n", buf);
}

/* Compiles and builds `a->model` (into a temporary directory) for the
 * input tensors in `files`: what the model needs fixed is specialised to
 * them (rt_compile_for). */
static int build_model(cli_args *a, const char *const *files, int nfiles, rt_model **m, rt_spec *spec, char *err,
                       size_t n) {
  imp_tensor *ins = calloc((size_t)nfiles + 1, sizeof *ins);
  if (!ins) abort();
  imp_io io;
  char rerr[1024];
  int rc = imp_model_io(a->model, &io, rerr, sizeof rerr); /* how to read each file */
  for (int i = 0; i < nfiles && !rc; i++) rc = rt_value_read(files[i], i < io.nin ? &io.in[i] : NULL, &ins[i], rerr, sizeof rerr);
  imp_io_free(&io);
  /* an unreadable input: the compiler's refusal of the model comes first */
  if (rc && !rt_compile(a->model, NULL, &a->rt, m, err, n)) rt_model_free(*m), *m = NULL, snprintf(err, n, "%s", rerr);
  if (!rc) rc = rt_compile_for(a->model, NULL, &a->rt, ins, files, nfiles, spec, m, err, n);
  free_tensors(ins, nfiles);
  if (rc) return -1;
  note_specialised(a, spec);
  if (!rt_build(*m, a->cflags, err, n)) return 0;
  rt_model_free(*m);
  *m = NULL;
  return -1;
}

/* The --dim values that pin every symbol of `m` to what its last run was
 * given: a symbolic build whose entry refused the inputs' dimensions
 * (RT_ERR_DIMS: a case the compiler assumed away, such as a Slice's end
 * inside a symbolic axis) is built again for them, as run and verify do
 * for what a model needs fixed. */
typedef struct {
  char dim[IR_MAX_SYMS][RT_SPEC_LEN];
  int base;            /* a->ndims before */
  char refusal[2048];  /* the symbolic build's */
  char line[4096];     /* " --dim N=V ..." */
} pinned;

static int pin_symbols(cli_args *a, const rt_model *m, const char *refusal, pinned *p) {
  int k = ir_sym_count(m->g);
  p->base = a->ndims;
  if (k <= 0 || a->ndims + k > MAX_FILES) return -1;
  snprintf(p->refusal, sizeof p->refusal, "%s", refusal);
  p->line[0] = 0;
  for (int i = 0; i < k; i++) {
    snprintf(p->dim[i], RT_SPEC_LEN, "%s=%lld", ir_dim_sym_name(ir_sym(m->g, i)), (long long)m->dims[i]);
    a->dims[a->ndims++] = p->dim[i];
    size_t l = strlen(p->line);
    snprintf(p->line + l, sizeof p->line - l, " --dim %s", p->dim[i]);
  }
  a->rt.imp.dims = a->dims, a->rt.imp.ndims = a->ndims;
  return 0;
}

/* After the pinned build: its note on success; on failure, one error that
 * says both why the symbolic build refused and why the pinned one failed. */
static void pinned_outcome(const pinned *p, int rc, char *err, size_t n) {
  char shown[4096], again[2048];
  if (!rc) {
    fprintf(stderr, "onnx2c-caten: the symbolic build refused these dimensions; specialised to these inputs:%s\n",
            cli_shown(p->line, shown, sizeof shown));
    return;
  }
  snprintf(again, sizeof again, "%s", err);
  snprintf(err, n, "%s; compiled for them (%s): %s", p->refusal, p->line + 1, again);
}

static void unpin_symbols(cli_args *a, const pinned *p) {
  a->ndims = p->base;
  a->rt.imp.ndims = a->ndims;
}

/* Runs built model `m` on `ins`; the model's output values go to *outs. */
static int run_built(cli_args *a, rt_model *m, const imp_tensor *ins, int nin, imp_tensor **outs, int *nout, char *err,
                     size_t n) {
  int no = rt_output_count(m);
  imp_tensor *flat = calloc((size_t)no + 1, sizeof *flat);
  int rc = rt_run(m, ins, nin, flat, err, n);
  if (!rc && a->rt.verbose) fprintf(stderr, "onnx2c-caten: run       %8.3f ms\n", m->run_ms);
  rt_group_outputs(m, flat, outs, nout); /* sequences: their tensors as one value */
  for (int i = 0; i < no; i++) imp_tensor_free(&flat[i]);
  free(flat);
  return rc;
}

/* One set of input files and expected outputs for run. */
typedef struct {
  char *inputs[MAX_FILES], *expects[MAX_FILES];
  int nin, nexp;
  const char *dir; /* --data-set DIR, or NULL for -i / -e */
} data_set;

static void free_set(data_set *d) {
  for (int i = 0; i < d->nin; i++) free(d->inputs[i]);
  for (int i = 0; i < d->nexp; i++) free(d->expects[i]);
}

/* DIR/PREFIX_J.pb for J = 0, 1, ... while the files exist. */
static int list_files(const char *dir, const char *prefix, char **out) {
  int n = 0;
  for (; n < MAX_FILES; n++) {
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s_%d.pb", dir, prefix, n);
    if (stat(p, &st)) break;
    out[n] = strdup(p);
  }
  return n;
}

/* The sets run uses: one of -i / -e, then one per --data-set. */
static data_set *collect_sets(cli_args *a, int *nsets) {
  data_set *sets = calloc((size_t)a->nsets + 2, sizeof *sets);
  int n = 0;
  if (a->nin || a->nexp) {
    for (int i = 0; i < a->nin; i++) sets[n].inputs[sets[n].nin++] = strdup(a->inputs[i]);
    for (int i = 0; i < a->nexp; i++) sets[n].expects[sets[n].nexp++] = strdup(a->expects[i]);
    n++;
  }
  for (int k = 0; k < a->nsets; k++, n++) {
    sets[n].dir = a->sets[k];
    sets[n].nin = list_files(a->sets[k], "input", sets[n].inputs);
    sets[n].nexp = list_files(a->sets[k], "output", sets[n].expects);
  }
  *nsets = n;
  return sets;
}

/* Runs one set: writes the outputs to `outdir` (if any) and compares them
 * with the expected ones; 0, 1 (mismatch) or -1 (error, in err). */
static int run_set(cli_args *a, rt_model *m, const rt_spec *spec, const data_set *d, const char *outdir, char *err,
                   size_t n) {
  imp_tensor *ins = calloc((size_t)d->nin + 1, sizeof *ins), *outs = NULL;
  int nout = 0, nin = 0, rc = d->dir && !d->nin ? (snprintf(err, n, "%s: no input_0.pb", d->dir), -1) : 0;
  for (int i = 0; i < d->nin && !rc; i++) /* frozen inputs are constants now */
    if (i >= 64 || !(spec->frozen >> i & 1))
      rc = rt_value_read(d->inputs[i], i < m->io.nin ? &m->io.in[i] : NULL, &ins[nin++], err, n);
  if (!rc) rc = run_built(a, m, ins, nin, &outs, &nout, err, n);
  if (!rc && outdir) {
    mkdir(outdir, 0777);
    for (int i = 0; i < nout && !rc; i++) {
      char p[4200];
      snprintf(p, sizeof p, "%s/output_%d.pb", outdir, i);
      rc = rt_value_write(p, &outs[i], err, n);
    }
  }
  if (!rc && d->nexp) {
    if (d->nexp != nout) rc = (snprintf(err, n, "%d expected outputs given, the model has %d", d->nexp, nout), -1);
    for (int i = 0; i < nout && rc >= 0; i++) {
      imp_tensor want;
      if (rt_value_read(d->expects[i], i < m->io.nout ? &m->io.out[i] : NULL, &want, err, n)) {
        rc = -1;
        break;
      }
      rt_diff df;
      bool ok = rt_value_compare(&outs[i], &want, a->atol, a->rtol, &df);
      char line[4096], name[1024];
      rt_diff_str(&outs[i], &want, &df, ok, "expected", true, line, sizeof line);
      if (d->dir) printf("%s: ", d->dir);
      printf("output %d '%s'%s\n", i, cli_shown(outs[i].name, name, sizeof name), line);
      if (!ok) {
        rc = 1;
        fprintf(stderr, "onnx2c-caten: %s%soutput %d '%s' differs from the expected values (%lld of %lld%s)\n",
                d->dir ? d->dir : "", d->dir ? ": " : "", i, name, (long long)df.mismatches,
                (long long)ir_shape_numel(&want.shape), df.shape_ok ? "" : ", dtype or shape");
      }
      imp_tensor_free(&want);
    }
  }
  free_tensors(ins, nin);
  free_tensors(outs, nout);
  return rc;
}

/* run: one compile and build, then every data set in turn (an error in one
 * set is reported and the others still run). A model specialised to the
 * first set's inputs is compiled again for each set. */
static int cmd_run(cli_args *a) {
  char err[2048];
  int nsets, status = 0;
  data_set *sets = collect_sets(a, &nsets);
  rt_model *m = NULL;
  rt_spec *spec = calloc(1, sizeof *spec);
  if (!spec) abort();
  if (!nsets) status = cli_die("run needs inputs: -i FILE... or --data-set DIR");
  for (int k = 0; k < nsets; k++) {
    bool again = !m || spec->ndims || spec->nfreeze || spec->nvalues;
    if (again) rt_model_free(m), m = NULL;
    if (again && build_model(a, (const char *const *)sets[k].inputs, sets[k].nin, &m, spec, err, sizeof err)) {
      char msg[4096];
      if (sets[k].dir) fprintf(stderr, "onnx2c-caten: %s: %s\n", sets[k].dir, cli_shown(err, msg, sizeof msg));
      else cli_die(err);
      status = 1;
      continue;
    }
    char dir[4300], msg[4096];
    if (a->outdir && nsets > 1) mkdir(a->outdir, 0777), snprintf(dir, sizeof dir, "%s/%d", a->outdir, k);
    else if (a->outdir) snprintf(dir, sizeof dir, "%s", a->outdir);
    int rc = run_set(a, m, spec, &sets[k], a->outdir ? dir : NULL, err, sizeof err);
    pinned *pins = rc == RT_ERR_DIMS ? calloc(1, sizeof *pins) : NULL;
    if (pins && !pin_symbols(a, m, err, pins)) { /* this set's dimensions, this set only */
      rt_model_free(m), m = NULL;
      rc = build_model(a, (const char *const *)sets[k].inputs, sets[k].nin, &m, spec, err, sizeof err);
      if (!rc) rc = run_set(a, m, spec, &sets[k], a->outdir ? dir : NULL, err, sizeof err);
      pinned_outcome(pins, rc < 0 ? -1 : 0, err, sizeof err);
      unpin_symbols(a, pins);
      rt_model_free(m), m = NULL; /* the next set builds the symbolic model again */
    }
    free(pins);
    if (rc < 0 && sets[k].dir) fprintf(stderr, "onnx2c-caten: %s: %s\n", sets[k].dir, cli_shown(err, msg, sizeof msg));
    else if (rc < 0) cli_die(err);
    if (rc) status = 1;
  }
  rt_model_free(m);
  free(spec);
  for (int k = 0; k < nsets; k++) free_set(&sets[k]);
  free(sets);
  return status;
}

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s;
}

/* Symbols --sym gave no value (the others are pinned by random_inputs). */
static int sym_missing(const ir_graph *g, char *err, size_t n) {
  if (!ir_sym_count(g)) return 0;
  const char *name = ir_dim_sym_name(ir_sym(g, 0));
  return snprintf(err, n, "verify makes random inputs: give symbol '%s' a value with --sym %s=N (or --dim %s=N to pin it)",
                  name, name, name), -1;
}

/* Random inputs for verify: floats in [-1, 1), integers in [0, 4), booleans. */
static int random_inputs(cli_args *a, const char *dir, char paths[][4200], int *n, char *err, size_t errlen) {
  ir_graph *g;
  /* The inputs' shapes at the --sym values: loaded with those pinned, so a
   * model that would need them pinned anyway still loads. */
  const char *dims[2 * MAX_FILES];
  imp_options o = a->rt.imp;
  int nd = 0;
  for (int i = 0; i < a->ndims; i++) dims[nd++] = a->dims[i];
  for (int i = 0; i < a->nsyms; i++) {
    char *end;
    const char *eq = strchr(a->syms[i], '=');
    long long v = strtoll(eq + 1, &end, 10);
    if (*end || end == eq + 1 || v < 0 || v > 1 << 20)
      return snprintf(err, errlen, "--sym %s: the value must be a whole number in 0..%d", a->syms[i], 1 << 20), -1;
    dims[nd++] = a->syms[i];
  }
  o.dims = dims, o.ndims = nd;
  if (imp_load(a->model, &o, &g, err, errlen)) return -1;
  uint64_t s = 0x9E3779B97F4A7C15ull ^ a->seed;
  int64_t vals[IR_MAX_SYMS] = {0};
  *n = ir_input_count(g) < MAX_FILES ? ir_input_count(g) : MAX_FILES;
  int rc = sym_missing(g, err, errlen);
  for (int i = 0; i < *n && !rc; i++) {
    const ir_node *x = ir_node_get(g, ir_input_ref(g, i));
    imp_tensor t = {.name = (char *)x->name, .dtype = x->dtype};
    if (!rt_shape_at(&x->shape, vals, &t.shape)) {
      rc = (snprintf(err, errlen, "input '%s' is too large at these --sym values", x->name), -1);
      break;
    }
    int64_t N = ir_shape_numel(&t.shape);
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

static int cmd_verify(cli_args *a) {
  char err[2048], dir[4096], paths[MAX_FILES][4200], outdir[4200];
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/onnx2c-verify-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return cli_die("cannot create a temporary directory");
  int nin = a->nin, rc = 0;
  if (!nin) rc = random_inputs(a, dir, paths, &nin, err, sizeof err);
  else
    for (int i = 0; i < nin; i++) snprintf(paths[i], sizeof paths[i], "%s", a->inputs[i]);
  const char *files[MAX_FILES];
  for (int i = 0; i < nin; i++) files[i] = paths[i];
  imp_tensor *ins = calloc((size_t)(nin > 0 ? nin : 0) + 1, sizeof *ins), *outs = NULL;
  int nout = 0, nrun = 0;
  rt_model *m = NULL;
  rt_spec *spec = calloc(1, sizeof *spec);
  if (!spec) abort();
  pinned *pins = calloc(1, sizeof *pins);
  if (!pins) abort();
  for (int round = 0; round < 2; round++) { /* round 1: the symbols pinned */
    if (!rc) rc = build_model(a, files, nin, &m, spec, err, sizeof err);
    for (int i = 0; !rc && i < m->io.nin + m->io.nout; i++) {
      const imp_io_value *v = i < m->io.nin ? &m->io.in[i] : &m->io.out[i - m->io.nin];
      if (v->kind != IMP_IO_TENSOR)
        rc = (snprintf(err, sizeof err, "%s '%s' is a %s: onnxruntime-node passes tensors only (use run with --expect)",
                       i < m->io.nin ? "input" : "output", v->name, v->kind == IMP_IO_SEQUENCE ? "sequence" : "optional"), -1);
    }
    for (int i = 0; i < nin && !rc; i++) /* frozen inputs are constants now */
      if (i >= 64 || !(spec->frozen >> i & 1)) rc = rt_tensor_read(files[i], &ins[nrun++], err, sizeof err);
    if (!rc) rc = run_built(a, m, ins, nrun, &outs, &nout, err, sizeof err);
    if (round) pinned_outcome(pins, rc, err, sizeof err);
    if (rc != RT_ERR_DIMS || round || pin_symbols(a, m, err, pins)) break;
    for (int i = 0; i < nrun; i++) imp_tensor_free(&ins[i]);
    free_tensors(outs, nout);
    outs = NULL, nrun = 0, nout = 0, rc = 0;
    rt_model_free(m), m = NULL;
  }
  free(pins);
  free(spec);
  rt_model_free(m);
  snprintf(outdir, sizeof outdir, "%s/ort", dir);
  if (!rc) rc = rt_ort_run(a->model, files, nin, outdir, err, sizeof err);
  bool all = true;
  for (int i = 0; i < nout && !rc; i++) {
    char p[4300], line[4096], name[1024];
    imp_tensor want;
    snprintf(p, sizeof p, "%s/output_%d.pb", outdir, i);
    if ((rc = rt_tensor_read(p, &want, err, sizeof err))) break;
    rt_diff d;
    bool ok = rt_compare(&outs[i], &want, a->atol, a->rtol, &d);
    rt_diff_str(&outs[i], &want, &d, ok, "onnxruntime's", false, line, sizeof line);
    printf("output %d '%s'%s\n", i, cli_shown(outs[i].name, name, sizeof name), line);
    all &= ok;
    remove(p);
    imp_tensor_free(&want);
  }
  free_tensors(ins, nrun);
  free_tensors(outs, nout);
  if (!a->nin)
    for (int i = 0; i < nin; i++) remove(paths[i]);
  rmdir(outdir);
  rmdir(dir);
  if (rc) return cli_die(err);
  return all ? 0 : 1;
}

static int run_fn(void *a) {
  return cmd_run(a);
}

static int verify_fn(void *a) {
  return cmd_verify(a);
}

int main(int argc, char **argv) {
  cli_args a;
  memset(&a, 0, sizeof a);
  if (cli_parse(argc, argv, &a)) return 1;
  bool run = !strcmp(a.cmd, "run");
  if (!run && strcmp(a.cmd, "verify")) return cmd_compile(&a);
  /* run and verify: their temporaries never outlive them (scratch.c) */
  char err[256];
  int rc = cli_in_scratch(run ? run_fn : verify_fn, &a, err, sizeof err);
  return rc < 0 ? cli_die(err) : rc;
}
