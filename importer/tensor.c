/* tensor.c — TensorProto decoding: raw_data, the typed repeated fields and
 * external data files next to the model. */
#include "importer_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The most memory one tensor of the model may need: the machine's RAM
 * (sysconf), or ONNX2C_MEM_LIMIT bytes when set. Larger values are refused
 * before anything is allocated. Declared in load_impl.h for the loader. */
size_t imp_mem_limit(void);
static size_t limit;

void imp_set_mem_limit(size_t bytes) {
  limit = bytes;
}

size_t imp_mem_limit(void) {
  if (!limit) {
    const char *env = getenv("ONNX2C_MEM_LIMIT");
    char *end;
    unsigned long long v = env && *env ? strtoull(env, &end, 10) : 0;
    if (v && !*end) {
      limit = (size_t)v;
    } else {
      long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
      limit = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)1 << 32;
    }
  }
  return limit;
}

/* A whole decimal number in 0..INT64_MAX, nothing else. */
static bool parse_nonneg(const char *s, long long *v) {
  char *end;
  if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return false;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || *end || x < 0) return false;
  *v = x;
  return true;
}

int imp_dtype_from_onnx(int t) {
  switch (t) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return IR_F32;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return IR_U8;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return IR_I8;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: return IR_U16;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: return IR_I16;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return IR_I32;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return IR_I64;
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return IR_BOOL;
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return IR_F16;
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return IR_F64;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: return IR_U32;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: return IR_U64;
  case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return IR_BF16;
  default: return -1;
  }
}

int imp_dtype_to_onnx(ir_dtype t) {
  for (int o = 1; o <= 16; o++)
    if (imp_dtype_from_onnx(o) == (int)t) return o;
  return -1;
}

static const char *dtype_onnx_name(int t) {
  static const char *names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
                                "COMPLEX128", "BFLOAT16"};
  return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "unknown";
}

void imp_tensor_free_data(imp_tensor *t) {
  if (t->map) munmap(t->map, t->map_len);
  else free(t->data);
  t->data = t->map = NULL;
  t->map_len = 0;
}

void imp_tensor_free(imp_tensor *t) {
  if (!t) return;
  free(t->name);
  imp_tensor_free_data(t);
  for (int i = 0; i < t->nelem && t->elem; i++) imp_tensor_free(&t->elem[i]); /* elements are plain: depth 1 */
  free(t->elem);
  memset(t, 0, sizeof *t);
}

/* Does path `loc` have a ".." component? ("w..bin" is a plain name.) */
static bool has_dotdot(const char *loc) {
  for (const char *c = loc; *c;) {
    size_t k = strcspn(c, "/");
    if (k == 2 && c[0] == '.' && c[1] == '.') return true;
    c += k;
    if (*c) c++;
  }
  return false;
}

/* External data must be a regular file inside the model's folder: opened
 * without blocking (a FIFO would wait for a writer forever) and without
 * following a symlink, then checked with fstat. Its bytes are mapped
 * read-only, not copied (a 1.1B-parameter model's 4.4 GB): `*map`,
 * `*map_len` is the mapping, `*dst` the tensor inside it. (A file truncated
 * by someone else while the compiler runs makes the read fault: SIGBUS.) */
static int map_external(const Onnx__TensorProto *t, const char *base_dir, size_t bytes, void **dst, void **map,
                        size_t *map_len, char *err, size_t n) {
  const char *loc = NULL;
  long long off = 0, len = -1;
  for (size_t i = 0; i < t->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = t->external_data[i];
    if (!e->key || !e->value) continue;
    if (!strcmp(e->key, "location")) loc = e->value;
    else if ((!strcmp(e->key, "offset") && !parse_nonneg(e->value, &off)) ||
             (!strcmp(e->key, "length") && !parse_nonneg(e->value, &len)))
      return snprintf(err, n, "tensor '%s': external data %s '%s' is not a valid number", t->name ? t->name : "",
                      e->key, e->value), -1;
  }
  if (!base_dir) return snprintf(err, n, "tensor '%s': external data is not allowed here", t->name ? t->name : ""), -1;
  if (!loc || !*loc || loc[0] == '/' || has_dotdot(loc))
    return snprintf(err, n, "tensor '%s': external data location '%s' is outside the model's folder",
                    t->name ? t->name : "", loc ? loc : ""), -1;
  if (off < 0 || (len >= 0 && (size_t)len != bytes))
    return snprintf(err, n, "tensor '%s': external data offset/length do not match its size", t->name ? t->name : ""), -1;
  char path[PATH_MAX], real[PATH_MAX], realbase[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", base_dir, loc);
  if (!realpath(path, real) || !realpath(base_dir, realbase) ||
      strncmp(real, realbase, strlen(realbase)) || real[strlen(realbase)] != '/')
    return snprintf(err, n, "tensor '%s': external data file '%s' is missing or outside the model's folder",
                    t->name ? t->name : "", loc), -1;
  int fd = open(real, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
    close(fd);
    return snprintf(err, n, "tensor '%s': external data '%s' is not a regular file", t->name ? t->name : "", loc), -1;
  }
  if (fd < 0) return snprintf(err, n, "tensor '%s': cannot open external data '%s'", t->name ? t->name : "", loc), -1;
  /* off and bytes are each below 2^63 (parse_nonneg, the memory limit) */
  if (st.st_size < 0 || (unsigned long long)off > (unsigned long long)st.st_size ||
      (unsigned long long)st.st_size - (unsigned long long)off < bytes) {
    close(fd);
    return snprintf(err, n, "tensor '%s': external data '%s' is shorter than offset %lld + %zu bytes",
                    t->name ? t->name : "", loc, off, bytes), -1;
  }
  long page = sysconf(_SC_PAGE_SIZE);
  size_t lead = (size_t)off % (size_t)(page > 0 ? page : 4096);
  void *m = bytes ? mmap(NULL, bytes + lead, PROT_READ, MAP_PRIVATE, fd, (off_t)(off - (long long)lead)) : NULL;
  close(fd);
  if (!bytes) {
    *dst = calloc(1, 1);
    if (!*dst) return snprintf(err, n, "tensor '%s': out of memory", t->name ? t->name : ""), -1;
    return 0;
  }
  if (m == MAP_FAILED)
    return snprintf(err, n, "tensor '%s': cannot map external data '%s' (%s)", t->name ? t->name : "", loc,
                    strerror(errno)), -1;
  *map = m;
  *map_len = bytes + lead;
  *dst = (char *)m + lead;
  return 0;
}

int imp_tensor_from_proto(const Onnx__TensorProto *t, const char *base_dir, imp_tensor *out,
                          char *err, size_t n) {
  memset(out, 0, sizeof *out);
  const char *name = t->name ? t->name : "";
  int dt = imp_dtype_from_onnx(t->data_type);
  if (dt < 0) return snprintf(err, n, "tensor '%s': data type %s is not supported", name, dtype_onnx_name(t->data_type)), -1;
  if (t->n_dims > IR_MAX_RANK) return snprintf(err, n, "tensor '%s': rank %zu exceeds %d", name, t->n_dims, IR_MAX_RANK), -1;
  ir_shape s = {.rank = (int)t->n_dims};
  uint64_t numel = 1;
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0) return snprintf(err, n, "tensor '%s': negative dimension %lld", name, (long long)t->dims[i]), -1;
    s.d[i] = t->dims[i];
    if (s.d[i] && numel > (UINT64_MAX >> 8) / (uint64_t)s.d[i])
      return snprintf(err, n, "tensor '%s': dimensions overflow", name), -1;
    numel *= (uint64_t)s.d[i];
  }
  size_t es = ir_dtype_size((ir_dtype)dt);
  if (numel > SIZE_MAX / 16 || numel * es > imp_mem_limit())
    return snprintf(err, n, "tensor '%s': %llu elements is more than the memory limit (%zu bytes)", name,
                    (unsigned long long)numel, imp_mem_limit()), -1;
  size_t bytes = (size_t)numel * es;
  bool external = t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  size_t have = 0;
  /* Sizes are checked before the allocation: a header must not make us
   * allocate what the file does not hold. */
  if (external) {
  } else if (t->has_raw_data) {
    if (t->raw_data.len != bytes)
      return snprintf(err, n, "tensor '%s': raw_data has %zu bytes, its dims need %zu", name, t->raw_data.len, bytes), -1;
  } else {
    switch (dt) {
    case IR_F32: have = t->n_float_data; break;
    case IR_F64: have = t->n_double_data; break;
    case IR_I64: have = t->n_int64_data; break;
    case IR_U32: case IR_U64: have = t->n_uint64_data; break;
    default: have = t->n_int32_data; break;
    }
    if (have != numel)
      return snprintf(err, n, "tensor '%s': has %zu values, its dims need %llu", name, have, (unsigned long long)numel), -1;
  }
  if (external) {
    if (map_external(t, base_dir, bytes, &out->data, &out->map, &out->map_len, err, n)) return -1;
    out->name = strdup(name);
    out->dtype = (ir_dtype)dt;
    out->shape = s;
    out->bytes = bytes;
    return 0;
  }
  void *data = calloc(1, bytes ? bytes : 1);
  if (!data) return snprintf(err, n, "tensor '%s': out of memory for %zu bytes", name, bytes), -1;
  if (t->has_raw_data) {
    if (bytes) memcpy(data, t->raw_data.data, bytes);
  } else {
    for (size_t i = 0; i < numel; i++) switch (dt) {
      case IR_F32: ((float *)data)[i] = t->float_data[i]; break;
      case IR_F64: ((double *)data)[i] = t->double_data[i]; break;
      case IR_I64: ((int64_t *)data)[i] = t->int64_data[i]; break;
      case IR_U32: ((uint32_t *)data)[i] = (uint32_t)t->uint64_data[i]; break;
      case IR_U64: ((uint64_t *)data)[i] = t->uint64_data[i]; break;
      /* 16-bit floats: int32_data holds their bit patterns */
      case IR_F16: case IR_BF16: ((uint16_t *)data)[i] = (uint16_t)t->int32_data[i]; break;
      default: ir_elem_set_i((ir_dtype)dt, data, (int64_t)i, t->int32_data[i]);
      }
  }
  out->name = strdup(name);
  out->dtype = (ir_dtype)dt;
  out->shape = s;
  out->data = data;
  out->bytes = bytes;
  return 0;
}

int imp_tensor_decode(const uint8_t *buf, size_t len, const char *base_dir, imp_tensor *out,
                      char *err, size_t errlen) {
  if (imp_wire_check(buf, len, &onnx__tensor_proto__descriptor, err, errlen)) return -1;
  Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, len, buf);
  if (!t) return snprintf(err, errlen, "not a valid TensorProto (corrupt or truncated protobuf)"), -1;
  int rc = imp_tensor_from_proto(t, base_dir, out, err, errlen);
  onnx__tensor_proto__free_unpacked(t, NULL);
  return rc;
}
