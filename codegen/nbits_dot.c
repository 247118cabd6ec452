/* nbits_dot.c — a one-row 4-bit MatMulNBits kernel printed with integer
 * dot products (AVX512_VNNI's vpdpbusd) beside its float form.
 *
 * Why a hand-written kernel: the float form (importer/op_nbits.c) spends an
 * AND, a conversion and an FMA on every weight; at 1 thread on Zen 5 it
 * runs at the speed of its instructions, not of its stream. vpdpbusd
 * multiplies four bytes by four bytes and adds them to an int32 lane in one
 * instruction, a third of the float form's vector operations per weight,
 * but no C the primitives print makes gcc emit it (gcc vectorises a sum
 * along its loop into vpdpbusd, not four products within a lane). So the
 * kernel the scheduler built (loops over the column panels, threaded as
 * any other) gets, at the top of the function that runs its panels, a call
 * of o2c_nbits4_dot for the same panels, under `#if O2C_NBITS_DOT`: built
 * without AVX512_VNNI the float form runs, and so does a target without it
 * (sched_target.dot_u8s8). Exactness: A rounded to 24 bits per block
 * (docs/DESIGN.md, "int4 through vpdpbusd"): on the 1.1B model's w1 the
 * error against float64 2.5e-6 where the float form's is 3.3e-6.
 *
 * The call is printed only when the kernel is the one op_nbits.c builds:
 * its stage marked (ir_node.nbits_row == 4), a register block of one row
 * and 32 columns, the codes, scales and zero points as op_nbits.c named and
 * shaped them, A scaled as [kb][h][8], the output stored as summed, and the
 * outermost loop (or the threaded loop) the panels' from 0 in steps of 1.
 * Anything else keeps the float form alone. */
#include "codegen_impl.h"

#include <stdlib.h>
#include <string.h>

/* A column's words at most (K = 32768): the helper's digits live on its
 * stack, in arrays of this size (112 KB; the number is written in the text
 * above too) */
#define NBITS_MAX_WORDS 4096

const char cg_nbits_dot_src[] =
    "/* Integer dot products for one-row 4-bit MatMulNBits (vpdpbusd); without\n"
    " * AVX512_VNNI and AVX512BW at build time the float form runs instead. */\n"
    "#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && !defined(ONNX2C_NO_NBITS_DOT)\n"
    "#define O2C_NBITS_DOT 1\n"
    "#include <immintrin.h>\n"
    "/* One row of a 4-bit MatMulNBits with integer dot products (vpdpbusd),\n"
    " * over the panels [lo, hi) of importer/op_nbits.c's layout: codes\n"
    " * [np][kb][h][32] (word j of a block holds its codes j + h·p at nibble p),\n"
    " * scales and negated zero points [np][kb][32] (zw NULL: the default zero\n"
    " * point 8), A as that kernel reads it, [kb][h][8] with code p's element\n"
    " * times 2^-4p (p < 7). Per block, A is rounded to integers on a step of\n"
    " * max|A| / 8355711 (24 bits: as fine as float's own rounding of the\n"
    " * block's largest element) and cut into three signed bytes; the codes'\n"
    " * nibbles become bytes by an AND, a shift and an AND, and vpdpbusd sums\n"
    " * code x byte exactly in int32, four products per lane. So a weight costs\n"
    " * a third of the float form's vector operations and the kernel runs at\n"
    " * the speed of its stream (docs/DESIGN.md, \"int4 through vpdpbusd\"). A\n"
    " * block holding a NaN or an infinity gives NaN. Every line of codes,\n"
    " * scales and zero points is fetched ahead, threads or not: with one line\n"
    " * a 4 KiB page (the hardware streaming within it) the stream ran at\n"
    " * 34 GB/s on one Zen 5 core, ~80 % of a plain read (docs/DESIGN.md,\n"
    " * \"Every line fetched\"). */\n"
    "static void o2c_nbits4_dot(float *restrict out, const float *restrict as, const uint32_t *restrict codes,\n"
    "                           const float *restrict scales, const float *restrict zw, int64_t kb,\n"
    "                           int64_t h, int64_t lo, int64_t hi) {\n"
    "  enum { P = 32 };\n"
    "  const int64_t nw = kb * h; /* words of a column: at most 4096 (codegen's NBITS_MAX_WORDS) */\n"
    "  uint32_t dig[3][2 * 4096]; /* byte digit n of A for the low and high nibbles of word (b, j) */\n"
    "  float step[2048], zsum[2048]; /* per block (h >= 2): A's step, and step x the sum of its integers */\n"
    "  const __m512 place = _mm512_setr_ps(1, 16, 256, 4096, 65536, 1048576, 16777216, 1, 1, 16, 256, 4096, 65536,\n"
    "                                      1048576, 16777216, 1);\n"
    "  const __m512 top = _mm512_set1_ps(8355711.0f);\n"
    "  const __m512i lim = _mm512_set1_epi32(8355711), half = _mm512_set1_epi32(128), byte = _mm512_set1_epi32(255);\n"
    "  const __m128i order = _mm_setr_epi8(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15);\n"
    "  for (int64_t b = 0; b < kb; b++) {\n"
    "    const float *x = as + b * 8 * h;\n"
    "    __m512 mx = _mm512_setzero_ps();\n"
    "    __mmask16 nan = 0;\n"
    "    for (int64_t t = 0; t < h / 2; t++) {\n"
    "      __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + 16 * t), place);\n"
    "      nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);\n"
    "      mx = _mm512_max_ps(mx, _mm512_abs_ps(v));\n"
    "    }\n"
    "    float m = _mm512_reduce_max_ps(mx);\n"
    "    int ok = !nan && m > 0 && m <= 3.40282347e38f;\n"
    "    __m512 mv = _mm512_set1_ps(ok ? m : 1.0f);\n"
    "    __m512i sum = _mm512_setzero_si512();\n"
    "    for (int64_t t = 0; t < h / 2; t++) {\n"
    "      __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + 16 * t), place);\n"
    "      __m512i q = _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_div_ps(v, mv), top),\n"
    "                                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);\n"
    "      q = ok ? _mm512_max_epi32(_mm512_min_epi32(q, lim), _mm512_sub_epi32(_mm512_setzero_si512(), lim))\n"
    "             : _mm512_setzero_si512();\n"
    "      sum = _mm512_add_epi32(sum, q);\n"
    "      __m512i d[3];\n"
    "      d[2] = _mm512_sub_epi32(_mm512_and_si512(_mm512_add_epi32(q, half), byte), half);\n"
    "      __m512i r = _mm512_srai_epi32(_mm512_sub_epi32(q, d[2]), 8);\n"
    "      d[1] = _mm512_sub_epi32(_mm512_and_si512(_mm512_add_epi32(r, half), byte), half);\n"
    "      d[0] = _mm512_srai_epi32(_mm512_sub_epi32(r, d[1]), 8);\n"
    "      for (int n = 0; n < 3; n++)\n"
    "        _mm_storeu_si128((__m128i *)(dig[n] + 2 * (b * h + 2 * t)),\n"
    "                         _mm_shuffle_epi8(_mm512_cvtepi32_epi8(d[n]), order));\n"
    "    }\n"
    "    step[b] = ok ? m / 8355711.0f : m == 0 && !nan ? 0.0f : NAN;\n"
    "    zsum[b] = step[b] * (float)_mm512_reduce_add_epi32(sum);\n"
    "  }\n"
    "  const __m512i low = _mm512_set1_epi32(0x0F0F0F0F);\n"
    "  for (int64_t n = lo; n < hi; n++) {\n"
    "    const uint32_t *c = codes + n * nw * P;\n"
    "    const float *s = scales + n * kb * P, *z = zw ? zw + n * kb * P : NULL;\n"
    "    __m512 o0 = _mm512_setzero_ps(), o1 = o0;\n"
    "    for (int64_t b = 0; b < kb; b++) {\n"
    "      /* every line of the block, 6 KiB of codes ahead (scales and zero\n"
    "       * points 1.5 KiB: a quarter of the codes' rate); the addresses are\n"
    "       * formed as integers, as past the arrays' ends they may be (a prefetch\n"
    "       * does not fault; clamping them cost 11 %) */\n"
    "      int64_t cw = (n * nw + b * h) * P, sw = (n * kb + b) * P;\n"
    "      uintptr_t pc = (uintptr_t)(codes + cw) + 6144, ps = (uintptr_t)(scales + sw) + 1536;\n"
    "      for (int64_t q = 0; q < h * P * 4; q += 64) _mm_prefetch((const char *)(pc + q), _MM_HINT_NTA);\n"
    "      _mm_prefetch((const char *)ps, _MM_HINT_NTA);\n"
    "      _mm_prefetch((const char *)(ps + 64), _MM_HINT_NTA);\n"
    "      if (zw) {\n"
    "        uintptr_t pz = (uintptr_t)(zw + sw) + 1536;\n"
    "        _mm_prefetch((const char *)pz, _MM_HINT_NTA);\n"
    "        _mm_prefetch((const char *)(pz + 64), _MM_HINT_NTA);\n"
    "      }\n"
    "      __m512i a[3][2];\n"
    "      for (int i = 0; i < 3; i++) a[i][0] = a[i][1] = _mm512_setzero_si512();\n"
    "      for (int64_t j = 0; j < h; j++) {\n"
    "        const uint32_t *w = c + (b * h + j) * P;\n"
    "        __m512i w0 = _mm512_loadu_si512(w), w1 = _mm512_loadu_si512(w + 16);\n"
    "        __m512i l0 = _mm512_and_si512(w0, low), l1 = _mm512_and_si512(w1, low);\n"
    "        __m512i h0 = _mm512_and_si512(_mm512_srli_epi32(w0, 4), low);\n"
    "        __m512i h1 = _mm512_and_si512(_mm512_srli_epi32(w1, 4), low);\n"
    "        for (int i = 0; i < 3; i++) {\n"
    "          __m512i dl = _mm512_set1_epi32((int)dig[i][2 * (b * h + j)]);\n"
    "          __m512i dh = _mm512_set1_epi32((int)dig[i][2 * (b * h + j) + 1]);\n"
    "          a[i][0] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(a[i][0], l0, dl), h0, dh);\n"
    "          a[i][1] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(a[i][1], l1, dl), h1, dh);\n"
    "        }\n"
    "      }\n"
    "      __m512 st = _mm512_set1_ps(step[b]), st8 = _mm512_set1_ps(256.0f * step[b]), zs = _mm512_set1_ps(zsum[b]);\n"
    "      __m512 zp0 = z ? _mm512_mul_ps(_mm512_loadu_ps(z + b * P), zs) : _mm512_mul_ps(_mm512_set1_ps(-8.0f), zs);\n"
    "      __m512 zp1 = z ? _mm512_mul_ps(_mm512_loadu_ps(z + b * P + 16), zs) : zp0;\n"
    "      __m512 r0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_slli_epi32(a[0][0], 8), a[1][0])), st8, zp0);\n"
    "      __m512 r1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_slli_epi32(a[0][1], 8), a[1][1])), st8, zp1);\n"
    "      r0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a[2][0]), st, r0);\n"
    "      r1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a[2][1]), st, r1);\n"
    "      o0 = _mm512_fmadd_ps(r0, _mm512_loadu_ps(s + b * P), o0);\n"
    "      o1 = _mm512_fmadd_ps(r1, _mm512_loadu_ps(s + b * P + 16), o1);\n"
    "    }\n"
    "    _mm512_storeu_ps(out + n * P, o0);\n"
    "    _mm512_storeu_ps(out + n * P + 16, o1);\n"
    "  }\n"
    "}\n"
    "#else\n"
    "#define O2C_NBITS_DOT 0\n"
    "#endif\n"
    "\n";

static const char *weight_name(const sched_program *p, const sched_buf *b) {
  if (b->kind != SCHED_BUF_WEIGHT || b->pack) return NULL;
  const ir_node *n = ir_node_get(p->g, b->node);
  return n->op == IR_ALLOCATE && n->name ? n->name : NULL;
}

/* The call's arguments but the panel range ("o2c_nbits4_dot(b0, b2, b3,
 * b4, NULL, 64, 4, ") and the number of panels, or false. */
static bool dot_call(const cg_kernel *c, char *call, size_t n, int64_t *panels) {
  const sched_program *p = c->p;
  const sched_kernel *k = c->k;
  const sched_gemm *gm = &k->gemm;
  if (!p->opt.target.dot_u8s8 || k->nstages != 1 || !gm->on || gm->mr != 1 || gm->nr != 32 || gm->kc)
    return false;
  const ir_node *st = ir_node_get(p->g, k->stages[0]), *root = ir_node_get(p->g, k->root);
  if (st->nbits_row != 4 || st->dtype != IR_F32 || k->root == k->stages[0] ||
      root->op != IR_MOVE || root->src[0] != k->stages[0])
    return false;
  int codes = -1, scales = -1, zw = -1, as = -1;
  int64_t np = 0, kb = 0, h = 0;
  for (int a = 1; a < k->nargs; a++) {
    const sched_buf *b = &p->bufs[k->args[a]];
    const char *w = weight_name(p, b);
    const ir_node *x = ir_node_get(p->g, b->node);
    if (w && !strcmp(w, IR_NBITS_CODES) && b->dtype == IR_U32 && x->shape.rank == 4 && x->shape.d[3] == 32) {
      codes = a, np = x->shape.d[0], kb = x->shape.d[1], h = x->shape.d[2];
    } else if (w && !strcmp(w, IR_NBITS_SCALES) && b->dtype == IR_F32) {
      scales = a;
    } else if (w && !strcmp(w, IR_NBITS_MINUS_ZERO_POINTS) && b->dtype == IR_F32) {
      zw = a;
    }
  }
  if (codes < 0 || scales < 0 || np < 1 || kb < 1 || h < 2 || h % 2 || kb * h > NBITS_MAX_WORDS ||
      p->bufs[k->args[0]].dtype != IR_F32 || p->bufs[k->args[0]].numel != np * 32)
    return false;
  for (int a = 1; a < k->nargs; a++) {
    const sched_buf *b = &p->bufs[k->args[a]];
    if (a == codes || a == scales || a == zw) {
      if (b->numel != (a == codes ? np * kb * h * 32 : np * kb * 32)) return false;
    } else if (b->dtype == IR_F32 && b->numel == kb * h * 8 && as < 0) {
      as = a; /* A times 2^-4p, [kb][h][8] */
    } else if (!(b->dtype == IR_F32 && b->numel == kb * h)) {
      return false; /* only the words' zero-point sums may be read besides */
    }
  }
  if (as < 0) return false;
  char z[16] = "NULL";
  if (zw >= 0) snprintf(z, sizeof z, "b%d", zw);
  *panels = np;
  int w = snprintf(call, n, "o2c_nbits4_dot(b0, b%d, b%d, b%d, %s, %lld, %lld, ", as, codes, scales, z,
                   (long long)kb, (long long)h);
  return w > 0 && (size_t)w < n;
}

/* `add` inserted into `b` at byte `at`. */
static void insert(cg_buf *b, size_t at, const char *add) {
  cg_buf t = {0};
  cg_printf(&t, "%.*s%s%s", (int)at, b->s, add, b->s + at);
  free(b->s);
  *b = t;
}

bool cg_nbits_dot(cg_kernel *c, cg_buf *body, cg_buf *rows) {
  char call[160], loop[96], add[256];
  int64_t np;
  if (c->has_index || !body->s || !dot_call(c, call, sizeof call, &np)) return false;
  /* the kernel's first loop runs over the panels from 0 in steps of 1:
   * the whole loop, or (threads) the count of the threaded loop's chunks;
   * one panel has no loop of its own (and no threads) */
  const char *first = strstr(body->s, "for (");
  snprintf(loop, sizeof loop, "for (int64_t c0 = 0; c0 <= %lld; c0 += 1) %s", (long long)(np - 1),
           c->nrows ? "o2c_n++;" : "{");
  if (np > 1 && (!first || strncmp(first, loop, strlen(loop)))) return false;
  if (np == 1 && c->nrows) return false;
  if (!c->nrows) {
    snprintf(add, sizeof add, "#if O2C_NBITS_DOT\n  %s0, %lld);\n  return;\n#endif\n", call, (long long)np);
    insert(body, 0, add);
    return true;
  }
  /* one threaded loop, the panels' (its rows function: emit.c) */
  const char *ro = rows->s ? strstr(rows->s, "  O2C_ROWS_VOID\n") : NULL;
  if (c->nrows != 1 || !ro || !strstr(ro, "for (int64_t c0 = o2c_lo; c0 < o2c_hi; c0 += 1) {")) return false;
  snprintf(add, sizeof add, "#if O2C_NBITS_DOT\n  %so2c_lo, o2c_hi);\n  return err;\n#endif\n", call);
  insert(rows, (size_t)(ro - rows->s) + strlen("  O2C_ROWS_VOID\n"), add);
  return true;
}
