/* tensor_io.c — TensorProto files (.pb), SequenceProto and OptionalProto
 * files of the values of those types (compare.c compares them). */
#include "runtime.h"
#include "onnx.pb-c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file at `path` into *b (malloc'd). */
static int read_bytes(const char *path, uint8_t **out, size_t *outlen, char *err, size_t n) {
  FILE *f = fopen(path, "rb");
  if (!f) return snprintf(err, n, "%s: cannot open file", path), -1;
  size_t cap = 1 << 16, len = 0;
  uint8_t *b = malloc(cap);
  for (;;) {
    if (!b) abort();
    len += fread(b + len, 1, cap - len, f);
    if (len < cap) break;
    b = realloc(b, cap *= 2);
  }
  fclose(f);
  *out = b, *outlen = len;
  return 0;
}

int rt_tensor_read(const char *path, imp_tensor *t, char *err, size_t n) {
  uint8_t *b;
  size_t len;
  if (read_bytes(path, &b, &len, err, n)) return -1;
  char e[512];
  int rc = imp_tensor_decode(b, len, NULL, t, e, sizeof e);
  free(b);
  if (rc) snprintf(err, n, "%s: %s", path, e);
  return rc;
}

/* The serialized TensorProto of `t` (malloc'd, *len bytes). */
static uint8_t *pack_tensor(const imp_tensor *t, size_t *len) {
  Onnx__TensorProto p = ONNX__TENSOR_PROTO__INIT;
  int64_t dims[IR_MAX_RANK];
  for (int i = 0; i < t->shape.rank; i++) dims[i] = t->shape.d[i];
  p.n_dims = (size_t)t->shape.rank;
  p.dims = dims;
  p.has_data_type = 1;
  p.data_type = imp_dtype_to_onnx(t->dtype);
  p.name = t->name ? t->name : "";
  p.has_raw_data = 1;
  p.raw_data.len = t->bytes;
  p.raw_data.data = t->data;
  *len = onnx__tensor_proto__get_packed_size(&p);
  uint8_t *buf = malloc(*len ? *len : 1);
  if (!buf) abort();
  onnx__tensor_proto__pack(&p, buf);
  return buf;
}

static int write_bytes(const char *path, const uint8_t *buf, size_t len, char *err, size_t n) {
  FILE *f = fopen(path, "wb");
  int rc = 0;
  if (!f || fwrite(buf, 1, len, f) != len) rc = -1;
  if (f && fclose(f)) rc = -1;
  if (rc) snprintf(err, n, "%s: cannot write file", path);
  return rc;
}

int rt_tensor_write(const char *path, const imp_tensor *t, char *err, size_t n) {
  size_t len;
  uint8_t *buf = pack_tensor(t, &len);
  int rc = write_bytes(path, buf, len, err, n);
  free(buf);
  return rc;
}

int rt_value_read(const char *path, const imp_io_value *decl, imp_tensor *t, char *err, size_t n) {
  if (!decl || decl->kind == IMP_IO_TENSOR) return rt_tensor_read(path, t, err, n);
  uint8_t *b;
  size_t len;
  char e[512];
  if (read_bytes(path, &b, &len, err, n)) return -1;
  int rc = imp_value_decode(b, len, decl->kind, decl->of_seq, t, e, sizeof e);
  free(b);
  if (rc) snprintf(err, n, "%s: %s", path, e);
  return rc;
}

/* Protobuf wire encoding of the few fields a SequenceProto or an
 * OptionalProto has (onnx-data.proto, not in libonnx-dev's schema). */
static void put_varint(uint8_t **p, uint64_t v) {
  for (; v >= 0x80; v >>= 7) *(*p)++ = (uint8_t)(v | 0x80);
  *(*p)++ = (uint8_t)v;
}

static void put_bytes(uint8_t **p, int field, const void *data, size_t len) {
  put_varint(p, (uint64_t)field << 3 | 2);
  put_varint(p, len);
  if (len) memcpy(*p, data, len);
  *p += len;
}

/* A SequenceProto of t->elem (name: t->name when `named`) at *p. */
static void put_sequence(uint8_t **p, const imp_tensor *t, bool named) {
  if (named && t->name && *t->name) put_bytes(p, 1, t->name, strlen(t->name));
  put_varint(p, 2 << 3), put_varint(p, 1); /* elem_type TENSOR */
  for (int i = 0; i < t->nelem; i++) {
    size_t len;
    uint8_t *b = pack_tensor(&t->elem[i], &len);
    put_bytes(p, 3, b, len);
    free(b);
  }
}

int rt_value_write(const char *path, const imp_tensor *t, char *err, size_t n) {
  if (t->kind == IMP_IO_TENSOR) return rt_tensor_write(path, t, err, n);
  size_t cap = 64 + 2 * (t->name ? strlen(t->name) : 0);
  for (int i = 0; i < t->nelem; i++) {
    size_t len;
    free(pack_tensor(&t->elem[i], &len));
    cap += len + 32;
  }
  uint8_t *buf = malloc(cap), *p = buf;
  if (!buf) abort();
  if (t->kind == IMP_IO_SEQUENCE) {
    put_sequence(&p, t, true);
  } else {
    if (t->name && *t->name) put_bytes(&p, 1, t->name, strlen(t->name));
    put_varint(&p, 2 << 3), put_varint(&p, !t->present ? 0 : t->of_seq ? 3 : 1); /* SEQUENCE, TENSOR */
    if (t->present && t->of_seq) {
      uint8_t *inner = malloc(cap), *q = inner;
      if (!inner) abort();
      put_sequence(&q, t, false);
      put_bytes(&p, 5, inner, (size_t)(q - inner));
      free(inner);
    } else if (t->present && t->nelem == 1) {
      size_t len;
      uint8_t *b = pack_tensor(&t->elem[0], &len);
      put_bytes(&p, 3, b, len);
      free(b);
    }
  }
  int rc = write_bytes(path, buf, (size_t)(p - buf), err, n);
  free(buf);
  return rc;
}
