/* runtime.h — what a host needs around generated code: the compile
 * pipeline, building the C into a shared object and running it, tensor
 * files (.pb), comparison with tolerances, and onnxruntime as reference. */
#ifndef RUNTIME_H
#define RUNTIME_H

#include "codegen.h"
#include "importer.h"
#include "scheduler.h"

#include <stdbool.h>

/* The longest --name accepted (longer ones are refused, never cut). */
#define RT_NAME_MAX 64
#define RT_NAME_MAX_STR "64"

typedef struct {
  const char *name;       /* symbol prefix and file stem (default "model"; reserved
                           * C names are refused) */
  imp_options imp;
  sched_options sched;
  const char *dump;       /* NULL, "ir-lowered", "ir", "schedule" (to stderr) or "dot=FILE" */
  bool no_rewrite;        /* skip the gather rewrite (keeps the one-hot form) */
  int threads;            /* > 1: a thread pool in the generated code (build with -pthread) */
  bool threads_all;       /* threads also for kernels too small to gain (testing) */
  bool verbose;           /* per-stage timing on stderr */
  bool embed_weights;     /* also NAME_weights.c: the weights linked in */
  const char *report;     /* non-NULL: write the kernel report (JSON) there */
} rt_options;

typedef struct {
  ir_graph *g;
  sched_program *p;
  char dir[4096];
  char name[RT_NAME_MAX + 1];
  int nodes;              /* graph nodes after lowering */
  int rewrites;           /* gather rewrites applied */
  int threads;            /* as compiled (rt_build adds -pthread when > 1) */
  bool threads_all;
  double run_ms;          /* wall time of the last rt_run's call into the model */
  void *so;               /* dlopen handle once built */
  int (*run)(const void *const *, void *const *, const void *, void *);
  /* models with symbolic dimensions: the entry taking them as an array, the
   * arena size at given dimensions, and the values of the last rt_run (in
   * entry order, ir_sym) */
  int (*run_dims)(const void *const *, void *const *, const void *, void *, const int64_t *);
  size_t (*arena_size_dims)(const int64_t *);
  int64_t dims[IR_MAX_SYMS];
  void *weights;
  size_t weights_len; /* weights mapped from the .weights file (0: allocated) */
  bool own_dir;           /* dir is a temporary to remove */
  imp_io io;              /* graph inputs and outputs: kinds, and their tensors */
} rt_model;

/* import -> verify -> schedule -> emit: writes DIR/NAME.{c,h,weights}.
 * `outdir` NULL: a fresh temporary directory, removed by rt_model_free. */
int rt_compile(const char *onnx, const char *outdir, const rt_options *o, rt_model **out, char *err,
               size_t errlen);
/* What rt_compile_for specialised: "NAME=VALUE" dimensions and
 * "NAME=FILE" frozen inputs; `frozen` has bit p for the p-th input tensor
 * (now a constant: rt_run must not be given it). */
#define RT_MAX_SPEC 48
#define RT_SPEC_LEN 4400
typedef struct {
  char dims[RT_MAX_SPEC][RT_SPEC_LEN], freeze[RT_MAX_SPEC][RT_SPEC_LEN];
  char standin[RT_MAX_SPEC][RT_SPEC_LEN]; /* compile's search: "NAME=" (zeros) */
  char values[RT_MAX_SPEC][RT_SPEC_LEN];  /* sequences and optionals: "NAME=SHAPES" (--seq) */
  int ndims, nfreeze, nstandins, nvalues;
  uint64_t frozen;
} rt_spec;

/* rt_compile for the input tensors `ins` (read from `files`, in the order
 * of the graph inputs that are not initializers): where the model cannot
 * keep a symbol general or needs an input's values at compile time
 * (imp_needs), the symbol is pinned to the tensor's size and the input
 * frozen to its file, and the model compiled again. With `ins` NULL
 * (compile) nothing is specialised, and the error names every --dim and
 * --freeze found to be needed. */
int rt_compile_for(const char *onnx, const char *outdir, const rt_options *o, const imp_tensor *ins,
                   const char *const *files, int nin, rt_spec *spec, rt_model **out, char *err, size_t errlen);
/* " --dim H=320 --freeze shape=FILE --seq x=[2],[3]" (empty when nothing
 * was specialised). */
void rt_spec_str(const rt_spec *s, char *buf, size_t n);
/* Builds the emitted C with the system compiler and loads it. */
int rt_build(rt_model *m, const char *cflags, char *err, size_t errlen);
/* Runs a built model. Inputs match graph inputs by name, else by position.
 * `outs` receives rt_output_count tensors (caller frees each): the model's
 * outputs, a value-dependent one (NonZero...) cut to the actual length its
 * length output reports (ir_mark_output_len; those are not returned). With
 * symbolic dimensions, their values are read off the inputs' shapes (which
 * must agree) and the outputs' shapes computed from them; dimensions the
 * compiled code refuses (PREFIX_ERR_SHAPE) are an error. */
/* Fills `bytes` of a buffer the model will write with a poison pattern:
 * NaN for float dtypes, 0xA5 bytes otherwise (build_run.c says why). */
void rt_poison(void *buf, size_t bytes, ir_dtype dtype);
int rt_run(rt_model *m, const imp_tensor *ins, int nin, imp_tensor *outs, char *err, size_t errlen);
/* rt_run's status when the entry refused the dimensions (PREFIX_ERR_SHAPE
 * of a symbolic build: a case the compiler assumed away, checked there);
 * err says which; m->dims holds the values. */
#define RT_ERR_DIMS (-2)
int rt_output_count(const rt_model *m);
void rt_model_free(rt_model *m);
/* Unloads the shared object and the weights (rt_model_free does it too). */
void rt_unload(rt_model *m);

/* The values of the graph's symbols (by symbol id, in vals) that make the
 * tensor shapes `shapes` (one per graph input, in input order) fit the
 * inputs' declared shapes; -1 with `err` when they disagree. */
int rt_bind_dims(const ir_graph *g, const ir_shape *shapes, int64_t *vals, char *err, size_t errlen);
/* `s` with the symbols at `vals` (by id); false when a value overflows. */
bool rt_shape_at(const ir_shape *s, const int64_t *vals, ir_shape *out);

/* The files of a compile (DIR/NAME.c, .h, .weights, and _weights.c when
 * embedded) written as one set (outset.c): open checks that every target
 * can be replaced and creates exclusive temporaries (never following a
 * planted symlink); commit puts all of them in place or, on any failure,
 * leaves the old set; abort removes the temporaries. */
#define RT_OUTSET_FILES 4
typedef struct {
  char path[RT_OUTSET_FILES][4200], tmp[RT_OUTSET_FILES][4300];
  FILE *f[RT_OUTSET_FILES];
  int n;
} rt_outset;
int rt_outset_open(rt_outset *s, const char *dir, const char *name, const char *const *suffix, int nfiles,
                   char *err, size_t errlen);
int rt_outset_commit(rt_outset *s, char *err, size_t errlen);
void rt_outset_abort(rt_outset *s);
/* Unlinks the temporaries of the set being written, if any: for the CLI's
 * SIGINT/SIGTERM/SIGHUP handler (async-signal-safe: unlink only). */
void rt_outset_unlink_temporaries(void);

int rt_tensor_read(const char *path, imp_tensor *t, char *err, size_t errlen);
int rt_tensor_write(const char *path, const imp_tensor *t, char *err, size_t errlen);


/* A comparison's findings (compare.c). The odd kinds: elements NaN on one
 * side only (RT_NAN_*), else an infinity the other side does not have
 * (RT_INF_*): ours (GOT) or the reference's (WANT). */
enum { RT_NAN_GOT, RT_NAN_WANT, RT_INF_GOT, RT_INF_WANT, RT_ODD_KINDS };
typedef struct {
  double max_abs, max_rel;      /* over the pairs of finite values */
  double max_want;              /* the largest finite |reference value|: the output's scale */
  int64_t mismatches;           /* every kind */
  int64_t odd[RT_ODD_KINDS];    /* how many of each odd kind (also in mismatches) */
  int64_t odd_at[RT_ODD_KINDS]; /* the first one's flat index */
  int odd_elem[RT_ODD_KINDS];   /* and the element of a sequence it is in */
  int bad_elem;                 /* !shape_ok in a sequence: the first element whose dtype or
                                 * shape differs (-1: a tensor, or the kinds or lengths differ) */
  bool shape_ok;
} rt_diff;
/* Does a tensor of dtype `given` serve where `want` is expected? The same
 * dtype, or uint16 bit patterns for bfloat16 (numpy has no bfloat16, and
 * the ONNX test data stores bfloat16 tensors as uint16). */
bool rt_dtype_matches(ir_dtype want, ir_dtype given);
/* |got - want| <= atol + rtol*|want| elementwise (bfloat16: or one unit in
 * its last place); NaN and Inf must match. */
bool rt_compare(const imp_tensor *got, const imp_tensor *want, double atol, double rtol, rt_diff *d);
/* rt_compare over values: kind, presence and length must agree, then
 * every tensor. */
bool rt_value_compare(const imp_tensor *got, const imp_tensor *want, double atol, double rtol, rt_diff *d);
/* The rest of a comparison's line after "output K 'NAME'" (d and ok from
 * rt_value_compare(got, want)), naming the reference `ref`:
 *   " f32[2,3]: max abs err 1e-07, max rel err 2e-07: PASS"
 *   ": shape f32[1,1,6], onnxruntime's f32[1,1,7]: FAIL"
 *   " f32[8]: 8 NaN, numbers in onnxruntime's (first at [0]): FAIL"
 *   " f32[4]: max abs err 0.0196, max rel err 0.0377, scaled err 6.12e-05
 *     (max |onnxruntime's| 320): FAIL"
 * `run_form`: run's words ("max abs", "max rel", then the count of
 * mismatches) where verify says "max abs err", "max rel err". */
void rt_diff_str(const imp_tensor *got, const imp_tensor *want, const rt_diff *d, bool ok, const char *ref,
                 bool run_form, char *buf, size_t n);

/* Values of sequence and optional type (values.c): imp_tensor with kind,
 * and the tensors in elem. A file is read as `decl` declares it (NULL: a
 * tensor), a value written as its kind. */
int rt_value_read(const char *path, const imp_io_value *decl, imp_tensor *t, char *err, size_t errlen);
int rt_value_write(const char *path, const imp_tensor *t, char *err, size_t errlen);
/* The spec of --seq for value `t`: "NAME=[2,3],[4]", "NAME=none"; false
 * when it does not fit in `n`. */
bool rt_value_spec(const char *name, const imp_tensor *t, char *out, size_t n);
/* The given values as the entry's tensors (the elements of a sequence in
 * order, named NAME[K]), shallow copies in *flat (free only the array and
 * names with rt_flat_free); model inputs matched by name, else in order. */
int rt_flatten_inputs(const rt_model *m, const imp_tensor *ins, int nin, imp_tensor **flat, int *nflat, char *err,
                      size_t errlen);
void rt_flat_free(imp_tensor *flat, int n);
/* The entry's outputs `outs` (ir_output_count, moved out) as the model's
 * output values (m->io.nout of them) in *vals. */
void rt_group_outputs(const rt_model *m, imp_tensor *outs, imp_tensor **vals, int *nvals);
/* Runs onnxruntime (runtime/ort/ort_run.js) on .pb inputs into OUTDIR/output_K.pb. */
int rt_ort_run(const char *onnx, const char *const *inputs, int nin, const char *outdir, char *err,
               size_t errlen);
/* DATA/`rel` in `out`, where DATA is share/onnx2c-caten/ beside the running
 * program (installed: BIN/../share, build tree: BUILD/share); -1 if absent. */
int rt_data_path(const char *rel, char *out, size_t n);
/* Runs argv; returns its exit status, or -1 when it could not start. */
int rt_spawn(char *const *argv);

#endif
