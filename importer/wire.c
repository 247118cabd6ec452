/* wire.c — a check of a serialized message before protobuf-c unpacks it.
 *
 * protobuf-c recurses once per nested message and allocates the whole tree
 * at once, so a hostile file could overflow the stack (an If -> graph ->
 * node chain, a TypeProto nested thousands deep) or make a small file
 * expand to gigabytes (millions of empty NodeProtos, two bytes each). This
 * walk follows the wire format with an explicit stack, guided by the
 * protobuf-c descriptors (which length-delimited fields are messages), and
 * refuses a nesting deeper than IMP_MAX_NESTING or a decoded size past the
 * memory limit before anything is unpacked. */
#include "importer_impl.h"

#include <stdbool.h>
#include <stdio.h>

/* What one decoded element costs besides its own bytes: protobuf-c's scan
 * record for the field occurrence and the pointer or slot in its array
 * (an upper bound, so the check errs on the safe side). */
#define WIRE_FIELD_COST 48

typedef struct {
  const ProtobufCMessageDescriptor *desc;
  size_t end;
} wire_frame;

static int varint(const uint8_t *b, size_t len, size_t *pos, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= len) return -1;
    uint8_t c = b[(*pos)++];
    *v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) return 0;
  }
  return -1;
}

int imp_wire_check(const uint8_t *buf, size_t len, const ProtobufCMessageDescriptor *root, char *err,
                   size_t errlen) {
  wire_frame stack[IMP_MAX_NESTING + 1];
  int depth = 0;
  stack[0] = (wire_frame){root, len};
  uint64_t cost = root->sizeof_message, limit = imp_mem_limit();
  size_t pos = 0;
  while (depth > 0 || pos < len) {
    if (pos == stack[depth].end) {
      depth--;
      continue;
    }
    uint64_t tag, v;
    if (varint(buf, stack[depth].end, &pos, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
      return snprintf(err, errlen, "not an ONNX model (corrupt or truncated protobuf: bad field tag)"), -1;
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field(stack[depth].desc, (unsigned)(tag >> 3));
    size_t room = stack[depth].end - pos;
    cost += WIRE_FIELD_COST;
    switch (tag & 7) {
    case 0:
      if (varint(buf, stack[depth].end, &pos, &v)) goto truncated;
      break;
    case 1:
      if (room < 8) goto truncated;
      pos += 8;
      break;
    case 5:
      if (room < 4) goto truncated;
      pos += 4;
      break;
    case 2:
      if (varint(buf, stack[depth].end, &pos, &v) || v > stack[depth].end - pos) goto truncated;
      if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
        if (depth == IMP_MAX_NESTING)
          return snprintf(err, errlen, "the model nests messages more than %d deep (refused: see docs/DESIGN.md)",
                          IMP_MAX_NESTING), -1;
        const ProtobufCMessageDescriptor *d = f->descriptor;
        cost += d->sizeof_message;
        stack[++depth] = (wire_frame){d, pos + (size_t)v};
      } else {
        /* strings and bytes are copied; a packed array of varints may
         * decode to 8 bytes per byte */
        bool varints = f && f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_BYTES &&
                       f->type != PROTOBUF_C_TYPE_FLOAT && f->type != PROTOBUF_C_TYPE_DOUBLE &&
                       f->type != PROTOBUF_C_TYPE_FIXED32 && f->type != PROTOBUF_C_TYPE_FIXED64 &&
                       f->type != PROTOBUF_C_TYPE_SFIXED32 && f->type != PROTOBUF_C_TYPE_SFIXED64;
        cost += (varints ? 8 * v : v) + 1;
        pos += (size_t)v;
      }
      break;
    default: /* groups (3, 4) are not used by ONNX; 6, 7 do not exist */
      return snprintf(err, errlen, "not an ONNX model (corrupt or truncated protobuf: wire type %d)",
                      (int)(tag & 7)), -1;
    }
    if (cost > limit)
      return snprintf(err, errlen,
                      "decoding the model needs more than the memory limit (%llu bytes; see --max-memory)",
                      (unsigned long long)limit), -1;
  }
  return 0;
truncated:
  return snprintf(err, errlen, "not an ONNX model (corrupt or truncated protobuf)"), -1;
}
