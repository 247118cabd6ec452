/* model_io.c — the model file: reading and decoding it, the op types it
 * uses, and the kinds of its graph inputs and outputs (tensor, sequence,
 * optional) as the runtime needs them to read and write their files. */
#include "importer_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int imp_read_file(const char *path, uint8_t **buf, size_t *len, char *err, size_t n) {
  FILE *f = fopen(path, "rb");
  if (!f) return snprintf(err, n, "%s: cannot open file", path), -1;
  struct stat st;
  if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
    fclose(f);
    return snprintf(err, n, "%s: not a regular file", path), -1;
  }
  size_t size = (size_t)st.st_size;
  uint8_t *b = malloc(size ? size : 1);
  if (!b) {
    fclose(f);
    return snprintf(err, n, "%s: out of memory for %zu bytes", path, size), -1;
  }
  size_t k = fread(b, 1, size, f);
  int bad = ferror(f) || k != size;
  fclose(f);
  if (bad) {
    free(b);
    return snprintf(err, n, "%s: read error", path), -1;
  }
  *buf = b;
  *len = k;
  return 0;
}

/* protobuf-c's allocations through malloc, noting a failure: a decode that
 * ran out of memory is reported as that, not as a corrupt file. */
static void *pb_alloc(void *failed, size_t size) {
  void *p = malloc(size);
  if (!p) *(bool *)failed = true;
  return p;
}

static void pb_free(void *unused, void *p) {
  (void)unused;
  free(p);
}

/* Reads and decodes the model at `path`: NULL with `err` when the file
 * is empty, unsound, nested too deep or too large to decode. */
Onnx__ModelProto *imp_read_model(const char *path, char *err, size_t errlen) {
  uint8_t *buf;
  size_t len;
  char e[256];
  if (imp_read_file(path, &buf, &len, err, errlen)) return NULL;
  if (!len) {
    free(buf);
    return snprintf(err, errlen, "%s: the file is empty", path), NULL;
  }
  if (imp_wire_check(buf, len, &onnx__model_proto__descriptor, e, sizeof e)) {
    free(buf);
    return snprintf(err, errlen, "%s: %s", path, e), NULL;
  }
  bool failed = false;
  ProtobufCAllocator a = {pb_alloc, pb_free, &failed};
  Onnx__ModelProto *m = onnx__model_proto__unpack(&a, len, buf);
  free(buf);
  if (!m && failed) snprintf(err, errlen, "%s: out of memory while decoding the model (%zu bytes)", path, len);
  else if (!m) snprintf(err, errlen, "%s: not an ONNX model (corrupt or truncated protobuf)", path);
  return m;
}

int imp_model_op_types(const char *path, char *out, size_t outlen, char *err, size_t errlen) {
  Onnx__ModelProto *m = imp_read_model(path, err, errlen);
  if (!m) return -1;
  if (!m->graph) {
    onnx__model_proto__free_unpacked(m, NULL);
    return snprintf(err, errlen, "%s: not an ONNX model", path), -1;
  }
  out[0] = 0;
  for (size_t i = 0; i < m->graph->n_node; i++) {
    const char *op = m->graph->node[i]->op_type ? m->graph->node[i]->op_type : "";
    char word[256];
    snprintf(word, sizeof word, " %s ", op);
    char padded[8192];
    snprintf(padded, sizeof padded, " %s ", out);
    if (strstr(padded, word)) continue;
    size_t k = strlen(out);
    snprintf(out + k, outlen - k, "%s%s", k ? " " : "", op);
  }
  onnx__model_proto__free_unpacked(m, NULL);
  return 0;
}

imp_io_kind imp_io_kind_of(const Onnx__TypeProto *tp, bool *of_seq, int *elem_type) {
  bool s = false;
  int et = 0;
  imp_io_kind k = IMP_IO_TENSOR;
  if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && tp->optional_type) {
    k = IMP_IO_OPTIONAL;
    tp = tp->optional_type->elem_type;
    s = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
  } else if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE) {
    k = IMP_IO_SEQUENCE;
  }
  if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE)
    tp = tp->sequence_type ? tp->sequence_type->elem_type : NULL;
  if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type) et = tp->tensor_type->elem_type;
  if (of_seq) *of_seq = s;
  if (elem_type) *elem_type = et;
  return k;
}

static bool listed_initializer(const Onnx__GraphProto *gp, const char *name) {
  for (size_t i = 0; i < gp->n_initializer; i++)
    if (gp->initializer[i]->name && !strcmp(gp->initializer[i]->name, name)) return true;
  return false;
}

static void declare(imp_io_value *v, const Onnx__ValueInfoProto *vi) {
  v->name = strdup(vi->name ? vi->name : "");
  if (!v->name) abort();
  v->kind = imp_io_kind_of(vi->type, &v->of_seq, &v->elem_type);
  v->present = true;
}

int imp_io_declare(const Onnx__GraphProto *gp, imp_io *io, char *err, size_t errlen) {
  memset(io, 0, sizeof *io);
  if (!gp) return snprintf(err, errlen, "the model has no graph"), -1;
  io->in = calloc(gp->n_input + 1, sizeof *io->in);
  io->out = calloc(gp->n_output + 1, sizeof *io->out);
  if (!io->in || !io->out) abort();
  for (size_t i = 0; i < gp->n_input; i++)
    if (!gp->input[i]->name || !listed_initializer(gp, gp->input[i]->name)) declare(&io->in[io->nin++], gp->input[i]);
  for (size_t i = 0; i < gp->n_output; i++) declare(&io->out[io->nout++], gp->output[i]);
  return 0;
}

int imp_model_io(const char *path, imp_io *io, char *err, size_t errlen) {
  memset(io, 0, sizeof *io);
  Onnx__ModelProto *m = imp_read_model(path, err, errlen);
  if (!m) return -1;
  int rc = imp_io_declare(m->graph, io, err, errlen);
  if (rc) snprintf(err, errlen, "%s: the model has no graph", path);
  onnx__model_proto__free_unpacked(m, NULL);
  return rc;
}

void imp_io_free(imp_io *io) {
  if (!io) return;
  for (int i = 0; i < io->nin; i++) free(io->in[i].name);
  for (int i = 0; i < io->nout; i++) free(io->out[i].name);
  free(io->in);
  free(io->out);
  memset(io, 0, sizeof *io);
}

/* SequenceProto and OptionalProto (onnx-data.proto, which libonnx-dev does
 * not ship) are read off the wire by hand: both are flat, their fields
 * are name = 1 (bytes), elem_type = 2 (varint), the tensor(s) = 3 and, in
 * an optional, a sequence = 5 (messages); other values (sparse tensors,
 * maps, nested sequences: 4, 5 in a sequence, 6, 7) are refused. */
typedef struct {
  const uint8_t *p, *end;
} wire;

static bool varint(wire *w, uint64_t *v) {
  *v = 0;
  for (int s = 0; s < 64 && w->p < w->end; s += 7) {
    uint8_t b = *w->p++;
    *v |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) return true;
  }
  return false;
}

/* The next field: its number, and for a length-delimited one its bytes;
 * 0 at the end, -1 when malformed. */
static int field(wire *w, int *num, wire *sub) {
  uint64_t key, v;
  if (w->p == w->end) return 0;
  if (!varint(w, &key) || key >> 3 == 0 || key >> 3 > 1000) return -1;
  *num = (int)(key >> 3);
  switch (key & 7) {
  case 0: return varint(w, &v) ? 1 : -1;
  case 1: return w->end - w->p >= 8 ? (w->p += 8, 1) : -1;
  case 5: return w->end - w->p >= 4 ? (w->p += 4, 1) : -1;
  case 2:
    if (!varint(w, &v) || v > (uint64_t)(w->end - w->p)) return -1;
    *sub = (wire){w->p, w->p + v};
    w->p += v;
    return 2;
  default: return -1;
  }
}

/* Appends the tensor in `t` to out->elem. */
static int add_elem(imp_tensor *out, wire t, char *err, size_t errlen) {
  if (out->nelem >= 1 << 16) return snprintf(err, errlen, "more than %d elements", 1 << 16), -1;
  imp_tensor *e = realloc(out->elem, (size_t)(out->nelem + 1) * sizeof *e);
  if (!e) abort();
  out->elem = e;
  char m[400];
  if (imp_tensor_decode(t.p, (size_t)(t.end - t.p), NULL, &e[out->nelem], m, sizeof m))
    return snprintf(err, errlen, "element %d: %s", out->nelem, m), -1;
  out->nelem++;
  return 0;
}

/* A SequenceProto (seq) or OptionalProto into `out`. */
static int decode_wire(wire w, bool seq, bool of_seq, imp_tensor *out, char *err, size_t errlen) {
  int num, k;
  wire sub = {0};
  while ((k = field(&w, &num, &sub)) > 0) {
    if (num == 1 && k == 2 && !out->name) {
      if (!(out->name = strndup((const char *)sub.p, (size_t)(sub.end - sub.p)))) abort();
    } else if (num == 3 && k == 2 && (seq || !of_seq) && (seq || !out->present)) {
      if (add_elem(out, sub, err, errlen)) return -1;
      out->present = true;
    } else if (num == 5 && k == 2 && !seq && of_seq && !out->present) {
      imp_tensor inner = {0};
      int rc = decode_wire(sub, true, false, &inner, err, errlen); /* depth 2 at most: seq is a leaf */
      free(inner.name);
      out->elem = inner.elem, out->nelem = inner.nelem, out->present = true;
      if (rc) return -1;
    } else if (num >= 3) {
      return snprintf(err, errlen, "the %s holds another kind of value than the model declares (field %d)",
                      seq ? "sequence" : "optional", num), -1;
    }
  }
  return k < 0 ? (snprintf(err, errlen, "not a valid %s (corrupt or truncated protobuf)",
                           seq ? "SequenceProto" : "OptionalProto"), -1) : 0;
}

int imp_value_decode(const uint8_t *buf, size_t len, imp_io_kind kind, bool of_seq, imp_tensor *out, char *err,
                     size_t errlen) {
  memset(out, 0, sizeof *out);
  if (kind == IMP_IO_TENSOR) return imp_tensor_decode(buf, len, NULL, out, err, errlen);
  out->kind = kind;
  out->of_seq = kind == IMP_IO_OPTIONAL && of_seq;
  int rc = decode_wire((wire){buf, buf + len}, kind == IMP_IO_SEQUENCE, of_seq, out, err, errlen);
  if (kind == IMP_IO_SEQUENCE) out->present = true;
  if (!rc && !out->name && !(out->name = strdup(""))) abort();
  if (rc) imp_tensor_free(out);
  return rc;
}
