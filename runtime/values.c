/* values.c — graph inputs and outputs of sequence and optional type at
 * the entry: the compiled code takes and returns each element as a tensor
 * of its own (NAME[K]; an optional tensor as NAME), so given values are
 * flattened into those tensors and the outputs grouped back into values
 * (the model's io, from imp_load, says where each one's tensors are). */
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool rt_value_spec(const char *name, const imp_tensor *t, char *out, size_t n) {
  size_t k = (size_t)snprintf(out, n, "%s=%s", name, t->kind == IMP_IO_OPTIONAL && !t->present ? "none" : "");
  for (int i = 0; i < t->nelem && k < n; i++) {
    const ir_shape *s = &t->elem[i].shape;
    k += (size_t)snprintf(out + k, n - k, "%s[", i ? "," : "");
    for (int a = 0; a < s->rank && k < n; a++)
      k += (size_t)snprintf(out + k, n - k, "%s%lld", a ? "," : "", (long long)s->d[a]);
    if (k < n) k += (size_t)snprintf(out + k, n - k, "]");
  }
  return k < n;
}

/* The model input a value `v` (the k-th given) is for: by name, else the
 * k-th input that is not frozen; -1 when none. */
static int input_of(const imp_io *io, const imp_tensor *v, int k) {
  for (int j = 0; j < io->nin; j++)
    if (!io->in[j].frozen && v->name && !strcmp(v->name, io->in[j].name)) return j;
  for (int j = 0; j < io->nin; j++)
    if (!io->in[j].frozen && k-- == 0) return j;
  return -1;
}

int rt_flatten_inputs(const rt_model *m, const imp_tensor *ins, int nin, imp_tensor **flat, int *nflat, char *err,
                      size_t n) {
  int cap = 1;
  for (int k = 0; k < nin; k++) cap += ins[k].kind == IMP_IO_TENSOR ? 1 : ins[k].nelem;
  imp_tensor *f = calloc((size_t)cap, sizeof *f);
  if (!f) abort();
  int cnt = 0, rc = 0;
  for (int k = 0; k < nin && !rc; k++) {
    const imp_tensor *v = &ins[k];
    if (v->kind == IMP_IO_TENSOR) {
      f[cnt] = *v;
      f[cnt].elem = NULL, f[cnt].nelem = 0;
      if (!(f[cnt++].name = strdup(v->name ? v->name : ""))) abort();
      continue;
    }
    int j = input_of(&m->io, v, k);
    const char *base = j >= 0 ? m->io.in[j].name : v->name ? v->name : "";
    int want = j >= 0 ? m->io.in[j].count : v->nelem;
    if (want != (v->present ? v->nelem : 0)) {
      rc = (snprintf(err, n, "input '%s' has %d elements%s, the model was compiled for %d", base, v->nelem,
                     v->present ? "" : " (an empty optional)", want), -1);
      break;
    }
    bool plain = v->kind == IMP_IO_OPTIONAL && !v->of_seq; /* an optional tensor keeps its name */
    for (int e = 0; e < v->nelem && v->present; e++) {
      char name[1100];
      snprintf(name, sizeof name, plain ? "%.1000s" : "%.1000s[%d]", base, e);
      f[cnt] = v->elem[e];
      if (!(f[cnt++].name = strdup(name))) abort();
    }
  }
  if (rc) {
    rt_flat_free(f, cnt);
    return -1;
  }
  *flat = f, *nflat = cnt;
  return 0;
}

void rt_flat_free(imp_tensor *flat, int n) {
  for (int i = 0; i < n; i++) free(flat[i].name);
  free(flat);
}

void rt_group_outputs(const rt_model *m, imp_tensor *outs, imp_tensor **vals, int *nvals) {
  int no = rt_output_count(m), nv = m->io.nout ? m->io.nout : no; /* length outputs come last: not here */
  imp_tensor *v = calloc((size_t)nv + 1, sizeof *v);
  if (!v) abort();
  for (int j = 0; j < nv; j++) {
    const imp_io_value *d = m->io.nout ? &m->io.out[j] : NULL;
    int first = d ? d->first : j, count = d ? d->count : 1;
    if (first < 0 || count < 0 || first + count > no) continue; /* not compiled: left empty */
    if (!d || d->kind == IMP_IO_TENSOR) {
      v[j] = outs[first];
      memset(&outs[first], 0, sizeof outs[first]);
      continue;
    }
    v[j].kind = d->kind, v[j].present = d->present, v[j].of_seq = d->of_seq;
    if (!(v[j].name = strdup(d->name))) abort();
    v[j].elem = calloc((size_t)count + 1, sizeof *v[j].elem);
    if (!v[j].elem) abort();
    for (int e = 0; e < count; e++) v[j].elem[e] = outs[first + e], memset(&outs[first + e], 0, sizeof *outs);
    v[j].nelem = count;
  }
  *vals = v, *nvals = nv;
}
