/* specialise.c — compiling for the inputs at hand: what the model cannot
 * keep general (a symbol an op needs as a number, an input whose values
 * decide a shape: imp_needs) is taken from the input tensors, and the model
 * compiled again; without inputs (compile), every need is named at once. */
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The options with the user's --dim/--freeze and the specialisation's. */
typedef struct {
  const char *dims[RT_MAX_SPEC + 64], *freeze[RT_MAX_SPEC + 64], *values[RT_MAX_SPEC + 64];
  char standin[RT_MAX_SPEC][RT_SPEC_LEN];
  const char *standins[RT_MAX_SPEC];
} merged;

static void merge(const rt_options *o, const rt_spec *s, rt_options *out, merged *m) {
  *out = *o;
  int nd = 0, nf = 0;
  for (int i = 0; i < o->imp.ndims && nd < RT_MAX_SPEC + 64; i++) m->dims[nd++] = o->imp.dims[i];
  for (int i = 0; i < s->ndims && nd < RT_MAX_SPEC + 64; i++) m->dims[nd++] = s->dims[i];
  for (int i = 0; i < o->imp.nfreeze && nf < RT_MAX_SPEC + 64; i++) m->freeze[nf++] = o->imp.freeze[i];
  for (int i = 0; i < s->nfreeze && nf < RT_MAX_SPEC + 64; i++) m->freeze[nf++] = s->freeze[i];
  out->imp.dims = m->dims, out->imp.ndims = nd;
  out->imp.freeze = m->freeze, out->imp.nfreeze = nf;
  int nv = 0;
  for (int i = 0; i < o->imp.nvalues && nv < RT_MAX_SPEC + 64; i++) m->values[nv++] = o->imp.values[i];
  for (int i = 0; i < s->nvalues && nv < RT_MAX_SPEC + 64; i++) m->values[nv++] = s->values[i];
  out->imp.values = m->values, out->imp.nvalues = nv;
  for (int i = 0; i < s->nstandins; i++) { /* "NAME=" -> "NAME" */
    snprintf(m->standin[i], RT_SPEC_LEN, "%.*s", (int)strlen(s->standin[i]) - 1, s->standin[i]);
    m->standins[i] = m->standin[i];
  }
  out->imp.standins = m->standins, out->imp.nstandins = s->nstandins;
}

static bool has_prefix(char (*list)[RT_SPEC_LEN], int n, const char *name) {
  size_t len = strlen(name);
  for (int i = 0; i < n; i++)
    if (!strncmp(list[i], name, len) && list[i][len] == '=') return true;
  return false;
}

/* Adds what `nd` asks for; false when nothing new could be added. */
static bool add_needs(const imp_needs *nd, const imp_tensor *ins, const char *const *files, int nin, rt_spec *s,
                      char *missing, size_t mlen) {
  bool added = false;
  for (int i = 0; i < nd->nsyms && s->ndims < RT_MAX_SPEC; i++) {
    if (has_prefix(s->dims, s->ndims, nd->sym[i].name)) continue;
    int p = nd->sym[i].input, k = nd->sym[i].axis;
    long long v = 64; /* compile: a stand-in value, to find the next needs */
    if (ins && (p >= nin || k >= ins[p].shape.rank)) continue;
    if (ins) v = (long long)ins[p].shape.d[k];
    else {
      size_t l = strlen(missing);
      snprintf(missing + l, mlen - l, " --dim %s=N", nd->sym[i].name);
    }
    snprintf(s->dims[s->ndims++], RT_SPEC_LEN, "%s=%lld", nd->sym[i].name, v);
    added = true;
  }
  for (int i = 0; i < nd->ninputs && s->nfreeze < RT_MAX_SPEC; i++) {
    if (has_prefix(s->freeze, s->nfreeze, nd->in[i].name)) continue;
    int p = nd->in[i].input;
    if (!files) { /* compile: zeros stand in for the values, to find the next needs */
      if (has_prefix(s->standin, s->nstandins, nd->in[i].name) || s->nstandins == RT_MAX_SPEC) continue;
      size_t l = strlen(missing);
      snprintf(missing + l, mlen - l, " --freeze %s=FILE.pb", nd->in[i].name);
      snprintf(s->standin[s->nstandins++], RT_SPEC_LEN, "%s=", nd->in[i].name);
      added = true;
      continue;
    }
    if (p >= nin) continue;
    snprintf(s->freeze[s->nfreeze++], RT_SPEC_LEN, "%s=%s", nd->in[i].name, files[p]);
    if (p < 64) s->frozen |= UINT64_C(1) << p;
    added = true;
  }
  /* sequences and optionals: their elements' shapes, from the given value */
  for (int i = 0; i < nd->nvalues && s->nvalues < RT_MAX_SPEC; i++) {
    int p = nd->value[i].input;
    if (has_prefix(s->values, s->nvalues, nd->value[i].name)) continue;
    if (!ins) {
      size_t l = strlen(missing);
      snprintf(missing + l, mlen - l, " --seq %s=[D,...],...", nd->value[i].name);
      continue;
    }
    if (p >= nin || ins[p].kind == IMP_IO_TENSOR || !rt_value_spec(nd->value[i].name, &ins[p], s->values[s->nvalues], RT_SPEC_LEN))
      continue;
    s->nvalues++;
    added = true;
  }
  return added;
}

int rt_compile_for(const char *onnx, const char *outdir, const rt_options *o, const imp_tensor *ins,
                   const char *const *files, int nin, rt_spec *spec, rt_model **out, char *err, size_t n) {
  memset(spec, 0, sizeof *spec);
  char first[2048] = "", missing[2048] = "";
  for (int round = 0; round <= IR_MAX_SYMS + IMP_MAX_NEEDS; round++) {
    rt_options oo;
    static merged m; /* large; the compiler is single-threaded */
    imp_needs nd;
    merge(o, spec, &oo, &m);
    oo.imp.needs = &nd;
    /* compile: a model built on stand-ins is never written where asked */
    if (!rt_compile(onnx, ins || !round ? outdir : NULL, &oo, out, err, n)) {
      if (!ins && round) break; /* compile: stand-ins are no answer */
      return 0;
    }
    if (!round) snprintf(first, sizeof first, "%s", err);
    if (!add_needs(&nd, ins, files, nin, spec, missing, sizeof missing)) break;
  }
  if (*out) rt_model_free(*out), *out = NULL;
  if (!ins && *missing)
    snprintf(err, n, "%s; to compile it, give%s (run and verify take these from their inputs)", first, missing);
  else if (*first) snprintf(err, n, "%s", first);
  return -1;
}

void rt_spec_str(const rt_spec *s, char *buf, size_t n) {
  buf[0] = 0;
  for (int i = 0; i < s->ndims; i++) {
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, " --dim %s", s->dims[i]);
  }
  for (int i = 0; i < s->nfreeze; i++) {
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, " --freeze %s", s->freeze[i]);
  }
  for (int i = 0; i < s->nvalues; i++) {
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, " --seq %s", s->values[i]);
  }
}
