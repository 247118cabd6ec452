/* op_nbits.c — com.microsoft MatMulNBits (onnxruntime's contrib op for
 * block-quantized weights): Y = A · dequant(B)ᵀ (+ bias), lowered onto a
 * plain MatMul of A with the dequantized weight. */
#include "importer_impl.h"

#include <stdlib.h>

/* The `per` codes of `bits` bits packed in each byte of the uint8 tensor x
 * [.., L], low bits first: [.., L * per] (int32). */
static ir_ref unpack(ir_graph *g, ir_ref x, int bits) {
  int per = 8 / bits;
  ir_shape s = ir_node_get(g, x)->shape;
  ir_ref b = ir_cast(g, x, IR_I32);
  ir_shape u = s;
  u.d[u.rank++] = 1; /* [.., L, 1]: one slot per code, stacked below */
  ir_ref acc = IR_NONE;
  for (int j = 0; j < per; j++) {
    ir_ref c = ir_binary(g, IR_IDIV, b, ir_scalar(g, IR_I32, (double)(1 << (bits * j))));
    c = ir_binary(g, IR_MOD, c, ir_scalar(g, IR_I32, (double)(1 << bits)));
    int64_t pb[IR_MAX_RANK] = {0}, pe[IR_MAX_RANK] = {0};
    pb[u.rank - 1] = j, pe[u.rank - 1] = per - 1 - j;
    c = ir_view_pad(g, ir_view_reshape(g, c, u), pb, pe, 0.0);
    acc = j ? ir_binary(g, IR_ADD, acc, c) : c;
  }
  ir_shape o = s;
  o.d[o.rank - 1] = s.d[s.rank - 1] * per;
  return ir_view_reshape(g, acc, o);
}

/* A 1-D (or [N, kb]) per-block parameter as [N, kb, 1]. */
static ir_ref per_block(imp_node *n, ir_ref v, int64_t N, int64_t kb, const char *what) {
  if (v == IR_NONE) return IR_NONE;
  if (ir_shape_numel(imp_shape(n, v)) != N * kb)
    return imp_fail(n, "%s has %lld elements, expected N * k_blocks = %lld", what,
                    (long long)ir_shape_numel(imp_shape(n, v)), (long long)(N * kb)),
           IR_NONE;
  return ir_view_reshape(n->g, v, (ir_shape){.rank = 3, .d = {N, kb, 1}});
}

/* The zero points: packed uint8 [N * ceil(kb * bits / 8)], or the same
 * float type as the scales [N * kb]; absent, 2^(bits-1). As float [N, kb, 1]. */
static ir_ref zero_points(imp_node *n, ir_ref z, int64_t N, int64_t kb, int bits) {
  ir_graph *g = n->g;
  if (z == IR_NONE) return ir_scalar(g, IR_F32, (double)(1 << (bits - 1)));
  if (imp_dtype(n, z) == IR_F32) return per_block(n, z, N, kb, "zero_points");
  if (imp_dtype(n, z) != IR_U8) return imp_fail(n, "zero_points has type %s (uint8 or float)", ir_dtype_name(imp_dtype(n, z))), IR_NONE;
  int per = 8 / bits;
  int64_t row = (kb + per - 1) / per;
  if (ir_shape_numel(imp_shape(n, z)) != N * row)
    return imp_fail(n, "zero_points has %lld elements, expected %lld", (long long)ir_shape_numel(imp_shape(n, z)),
                    (long long)(N * row)),
           IR_NONE;
  ir_ref u = unpack(g, ir_view_reshape(g, z, (ir_shape){.rank = 2, .d = {N, row}}), bits);
  int64_t st[2] = {0, 0}, sp[2] = {1, 1}, ln[2] = {N, kb};
  u = ir_view_slice(g, u, st, sp, ln);
  return ir_cast(g, ir_view_reshape(g, u, (ir_shape){.rank = 3, .d = {N, kb, 1}}), IR_F32);
}

/* The bytes of a weight, or NULL when r is computed. */
static const void *weight_data(ir_graph *g, ir_ref r) {
  const ir_node *x = ir_node_get(g, r);
  return x->op == IR_ALLOCATE && x->origin == IR_ORIGIN_WEIGHT ? x->data : NULL;
}

/* The zero point of block b of column c, as given (packed uint8 or float)
 * or the default 2^(bits-1). */
static float zero_at(const ir_node *z, int64_t c, int64_t b, int64_t kb, int bits) {
  if (!z) return (float)(1 << (bits - 1));
  if (z->dtype == IR_F32) return ((const float *)z->data)[c * kb + b];
  int per = 8 / bits;
  uint8_t byte = ((const uint8_t *)z->data)[c * ((kb + per - 1) / per) + b / per];
  return (float)((byte >> (b % per * bits)) & ((1 << bits) - 1));
}

/* The sum [.., 1, np, 1, P] as A's shape with N columns (the padded
 * ones, up to Np, dropped). */
static ir_ref finish(ir_graph *g, ir_ref y, ir_shape as, int64_t N, int64_t Np) {
  int r = as.rank;
  ir_shape os = as;
  os.d[r - 1] = Np;
  y = ir_view_reshape(g, y, os);
  if (Np == N) return y;
  int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int i = 0; i < r; i++) sp[i] = 1, ln[i] = os.d[i];
  ln[r - 1] = N;
  return ir_view_slice(g, y, st, sp, ln);
}

/* A of several rows (a prefill; ap: A padded to the blocks, [.., M, kb *
 * bs]) times the packed codes cw [np, kb, h, P]: every code of a word
 * dequantized by one kernel, (q − zp)·s in float as onnxruntime does,
 * into one float buffer [np, kb, per, h, P], whose rows are A's k in
 * order (code p of word j of block b is k = b·bs + p·h + j), so the
 * product is a plain one over panels [np][K][P], each one contiguous run.
 * Code p of a word is masked in place, converted (unsigned: bit 31 is a
 * code's) and scaled by 2^-(p·bits), exactly. The 1.1B model's prefill at
 * S = 128 (Zen 5, 1 thread): 2.44-2.55 s -> 1.72-1.73 (docs/DESIGN.md);
 * before, each code place was a buffer of its own, laid out [kb, np, ..]
 * (a panel's blocks 720 KB apart, in a few sets of L2), the product
 * reading 8 column vectors a step. zw: the negated zero points [np, kb,
 * 1, P], or IR_NONE for the default one; sw the scales [np, kb, 1, P]. The
 * sum [.., M, np, P]. */
static ir_ref rows_product(ir_graph *g, ir_ref ap, ir_ref cw, ir_ref zw, ir_ref sw, int bits) {
  const ir_shape cs = ir_node_get(g, cw)->shape;
  int64_t np = cs.d[0], kb = cs.d[1], h = cs.d[2], P = cs.d[3];
  int per = 32 / bits;
  uint32_t *mk = malloc((size_t)per * sizeof *mk);
  float *pl = malloc((size_t)per * sizeof *pl);
  if (!mk || !pl) return free(mk), free(pl), ir_fail(g, "out of memory for the code places"), IR_NONE;
  for (int p = 0; p < per; p++)
    mk[p] = ((1u << bits) - 1) << (p * bits), pl[p] = 1.0f / (float)(1u << (p * bits));
  ir_shape c5 = {.rank = 5, .d = {np, kb, 1, h, P}}, p5 = {.rank = 5, .d = {1, 1, per, 1, 1}},
           s5 = {.rank = 5, .d = {np, kb, 1, 1, P}};
  ir_ref m = ir_const_take(g, "nbits_code_masks", IR_U32, (ir_shape){.rank = 1, .d = {per}}, mk);
  ir_ref q = ir_cast(g, ir_binary(g, IR_AND, ir_view_reshape(g, cw, c5), ir_view_reshape(g, m, p5)), IR_F32);
  ir_ref place = ir_const_take(g, "nbits_code_place", IR_F32, (ir_shape){.rank = 1, .d = {per}}, pl);
  q = ir_binary(g, IR_MUL, q, ir_view_reshape(g, place, p5));
  ir_ref zb = zw == IR_NONE ? ir_scalar(g, IR_F32, -(double)(1 << (bits - 1))) : ir_view_reshape(g, zw, s5);
  q = ir_move(g, ir_binary(g, IR_MUL, ir_binary(g, IR_ADD, q, zb), ir_view_reshape(g, sw, s5)));
  int to_k[3] = {1, 0, 2};
  ir_ref qk = ir_view_permute(g, ir_view_reshape(g, q, (ir_shape){.rank = 3, .d = {np, kb * per * h, P}}), to_k);
  return ir_move(g, imp_matmul_panels(g, ap, qk)); /* [.., M, np, P] */
}

/* Constant B, scales and zero points: the codes stay packed, `per` =
 * 32/bits of them in a 32-bit word, in panels [ceil(N/P)][k_blocks][h][P]
 * with h = block/per and P = min(N, imp_panel_columns): word (pn, b, j, c) holds the
 * codes j, j + h, .. of block b of column pn·P + c, low bits first. One
 * row (decode): its kernel runs the panels outside the blocks and streams
 * each panel's codes in order; more rows: rows_product, below.
 * A decode step streams the codes once, half a byte per 4-bit weight, and
 * the kernel unpacks a word per lane with a mask per code: no widening of
 * bytes (which gcc does through 16-bit steps). Scales and given zero
 * points (negated: added) are panels in the same order, [np][kb][P];
 * columns past N have scale 0.
 *
 * One row: the scale and the zero point are applied once per word (per
 * codes of one 32-bit word), not per weight: Σ_j A_j (q_j − zp) s =
 * s (Σ_j A_j q_j − zp Σ_j A_j), Σ_j A_j one sum per word of A, shared by
 * all columns. onnxruntime dequantizes each weight before its product;
 * the two differ in rounding only (the order of the sums and where the
 * scale multiplies). */
static ir_ref blocked(imp_node *n, ir_ref a, ir_ref b, ir_ref sc, ir_ref z, int64_t K, int64_t N, int bits,
                      int64_t bs) {
  ir_graph *g = n->g;
  int per = 32 / bits, pb8 = 8 / bits, mask = (1 << bits) - 1;
  int64_t kb = (K + bs - 1) / bs, h = bs / per, P = N < imp_panel_columns(n) ? N : imp_panel_columns(n);
  int64_t np = (N + P - 1) / P, ncode, nblk;
  /* kb * bs * N / per is B's own element count over 4 (checked by the
   * caller); the padded columns add at most P - 1 */
  if (ir_mul_ov(np * P, kb, &nblk) || ir_mul_ov(nblk, h, &ncode) || ncode > INT64_MAX / 8)
    return imp_fail(n, "the packed weight's size overflows"), IR_NONE;
  const uint8_t *B = weight_data(g, b);
  const float *S = weight_data(g, sc);
  const ir_node *zn = z != IR_NONE ? ir_node_get(g, z) : NULL;
  uint32_t *codes = calloc((size_t)ncode, sizeof *codes);
  float *zf = calloc((size_t)nblk, sizeof *zf), *sf = calloc((size_t)nblk, sizeof *sf);
  if (!codes || !zf || !sf) {
    free(codes), free(zf), free(sf);
    return imp_fail(n, "out of memory for the repacked weight (%lld words)", (long long)ncode), IR_NONE;
  }
  bool one_row = true;
  ir_shape as = *imp_shape(n, a);
  int r = as.rank;
  for (int i = 0; i < r - 1; i++) one_row = one_row && as.d[i] == 1;
  for (int64_t c = 0; c < N; c++)
    for (int64_t bl = 0; bl < kb; bl++) {
      int64_t bp = c / P * kb + bl; /* (panel, block) */
      int64_t pan = bp * P + c % P;
      sf[pan] = S[c * kb + bl];
      zf[pan] = -zero_at(zn, c, bl, kb, bits);
      const uint8_t *blk = B + (c * kb + bl) * (bs / pb8);
      uint32_t *out = codes + bp * h * P + c % P;
      for (int64_t j = 0; j < bs; j++) {
        uint32_t q = (uint32_t)(blk[j / pb8] >> (j % pb8 * bits)) & (uint32_t)mask;
        out[j % h * P] |= q << (j / h * bits);
      }
    }
  ir_ref cw = ir_const_take(g, IR_NBITS_CODES, IR_U32, (ir_shape){.rank = 4, .d = {np, kb, h, P}}, codes);
  /* without zero points, the default one is a constant: no stream of it */
  ir_ref zw = z != IR_NONE ? ir_const_take(g, IR_NBITS_MINUS_ZERO_POINTS, IR_F32,
                                           (ir_shape){.rank = 4, .d = {np, kb, 1, P}}, zf)
                           : (free(zf), ir_scalar(g, IR_F32, -(double)(1 << (bits - 1))));
  ir_ref sw = ir_const_take(g, IR_NBITS_SCALES, IR_F32, (ir_shape){.rank = 4, .d = {np, kb, 1, P}}, sf);
  /* A [.., K] (zeros past K) -> [.., 1, kb, per, h] -> [.., 1, kb, h,
   * per]: the slice p of the last axis multiplies the codes in bits
   * p·bits.. (more rows: rows_product) */
  int64_t pb[IR_MAX_RANK] = {0}, pe[IR_MAX_RANK] = {0};
  pe[r - 1] = kb * bs - K;
  ir_ref ap = pe[r - 1] ? ir_view_pad(g, a, pb, pe, 0.0) : a;
  if (!one_row)
    return finish(g, rows_product(g, ap, cw, z != IR_NONE ? zw : IR_NONE, sw, bits), as, N, np * P);
  ir_shape s5 = as;
  s5.d[r - 1] = 1, s5.d[r] = kb, s5.d[r + 1] = per, s5.d[r + 2] = h, s5.rank = r + 3;
  int perm[IR_MAX_RANK];
  for (int i = 0; i < r + 3; i++) perm[i] = i;
  perm[r + 1] = r + 2, perm[r + 2] = r + 1;
  ir_ref a5 = ir_view_permute(g, ir_view_reshape(g, ap, s5), perm);
  /* One row: code p (but the last, whose bit 31 would be a sign) is left
   * in place, q·2^(p·bits) (< 2^31: exact as int32 and as float), and
   * multiplies A·2^-(p·bits) (A is one row: scaled once per call, one
   * kernel): the same product (unless |A| < 2^-98 underflows) with no
   * shift per code, an AND, a convert and an FMA per weight (one 2048 ×
   * 5632 weight in L3: 34 against 28 G weights/s with a shift per code). */
  float *f = malloc((size_t)per * sizeof *f);
  if (!f) return imp_fail(n, "out of memory for the code places"), IR_NONE;
  for (int p = 0; p < per; p++) f[p] = p < per - 1 ? 1.0f / (float)(1u << (p * bits)) : 1.0f;
  ir_ref as5 = ir_binary(g, IR_MUL, a5, ir_const_take(g, "nbits_code_place", IR_F32, (ir_shape){.rank = 1, .d = {per}}, f));
  ir_ref t[32]; /* per <= 16 */
  for (int p = 0; p < per; p++) {
    int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK], ln[IR_MAX_RANK];
    for (int i = 0; i < r + 3; i++) sp[i] = 1, ln[i] = s5.d[i];
    ln[r + 1] = h, ln[r + 2] = 1, st[r + 2] = p;
    ir_ref ax = ir_view_slice(g, as5, st, sp, ln), q = cw; /* unsigned: the divisions are shifts */
    if (p < per - 1)
      q = ir_binary(g, IR_AND, q, ir_scalar(g, IR_U32, (double)((uint32_t)mask << (p * bits))));
    else /* the last code, shifted down (per >= 4) */
      q = ir_binary(g, IR_IDIV, q, ir_scalar(g, IR_U32, (double)(1u << (p * bits))));
    q = ir_cast(g, ir_cast(g, q, IR_I32), IR_F32); /* < 2^31: a signed conversion (AVX2 has no unsigned one) */
    t[p] = ir_binary(g, IR_MUL, ax, q); /* [.., np, kb, h, P] */
  }
  /* One row: a word's codes summed in two halves, the first after the
   * word's share of the zero point, −zp · Σ_p A_p (Σ_p A_p per word, [..,
   * 1, kb, h, 1], a kernel of its own), each half scaled into its own
   * partial sum (two FMAs more per word of 8 codes; one chain of 8 was
   * 3–5 % slower in cache, its latency). So the sum over the blocks and
   * the words is one register block (two reduced axes) over the panels,
   * which stream their codes and scales in order ([np][kb][..]). Before, a
   * kernel stored the scaled per-block sums [kb, N] (a 32nd of the
   * weights' count for blocks of 32: the LM head's 8.2 MB left the
   * caches) and another summed them over the blocks: the 1.1B int4 decode
   * step on a Zen 5 core (CPU time, loaded) 30.5 -> 29.5 ms, AVX2 53.9 ->
   * 44.5. */
  ir_ref sxw = ir_sum(g, a5, 1u << (r + 2), true);
  /* the default zero point multiplies in that kernel; given ones per column in the sum */
  ir_ref prod = z != IR_NONE ? ir_binary(g, IR_MUL, ir_move(g, sxw), zw)
                             : ir_move(g, ir_binary(g, IR_MUL, sxw, zw));
  for (int p = 0; p < per / 2; p++) prod = ir_binary(g, IR_ADD, prod, t[p]);
  ir_ref hi = t[per / 2];
  for (int p = per / 2 + 1; p < per; p++) hi = ir_binary(g, IR_ADD, hi, t[p]);
  ir_ref word = ir_binary(g, IR_ADD, ir_binary(g, IR_MUL, prod, sw), ir_binary(g, IR_MUL, hi, sw)); /* [.., np, kb, h, P] */
  /* [.., np, 1, 1, P], written by the sum's own kernel: its panel axes
   * would map onto a consumer's head axes ([.., heads, head_dim]) and the
   * fuser would then try the sum as that kernel's stage, fail at RoPE's
   * shifted reads and store the whole product instead */
  ir_ref y = ir_sum(g, word, 3u << r, true);
  ir_mark_nbits_row(g, y, bits);
  return finish(g, ir_move(g, y), as, N, np * P);
}

/* accuracy_level 4 lets the runtime quantize A "with the same block_size
 * to int8" (the contrib op's documentation), and onnxruntime 1.30 does on
 * x86-64 when B, the scales and the zero points (if any, packed) are
 * constants: 4 and 8 bits, and 2 bits in blocks of 32 or more (measured
 * for every combination of bits 2/4/8, blocks 16/32/128, zero points or
 * not, 1 or 3 rows: its outputs matched this rounding within 2.4e-7 of
 * their scale and the float product only 2.3e-3 to 6.9e-3 away). Levels
 * 0-3, B as a graph input and float zero points: A in float. */
static bool int8_a(imp_node *n, int64_t level, int bits, int64_t bs, ir_ref b, ir_ref sc, ir_ref z) {
  if (level != 4 || !weight_data(n->g, b) || !weight_data(n->g, sc)) return false;
  if (z != IR_NONE && (imp_dtype(n, z) != IR_U8 || !weight_data(n->g, z))) return false;
  return bits == 4 || bits == 8 || (bits == 2 && bs >= 32);
}

/* A [.., K] rounded to int8 per block of bs along K as onnxruntime's MLAS
 * quantizes it (QuantizeARow_CompInt8): scale = max|a| / 127, q =
 * a · (127 / max|a|) (0 for a zero block) rounded half to even, in
 * float32; A then reads q · scale, so the blocked kernels stay as they
 * are and the sums differ from onnxruntime's int32 ones in float rounding
 * only. */
static ir_ref a_int8_blocks(ir_graph *g, ir_ref a, int64_t K, int64_t bs) {
  ir_shape s = ir_node_get(g, a)->shape, bl = s;
  int r = s.rank;
  int64_t kb = (K + bs - 1) / bs, pb[IR_MAX_RANK] = {0}, pe[IR_MAX_RANK] = {0};
  pe[r - 1] = kb * bs - K;
  ir_ref ap = pe[r - 1] ? ir_view_pad(g, a, pb, pe, 0.0) : a;
  bl.d[r - 1] = kb, bl.d[r] = bs, bl.rank = r + 1;
  ir_ref ab = ir_view_reshape(g, ap, bl); /* [.., kb, bs] */
  ir_ref amax = ir_max_reduce(g, ir_abs(g, ab), 1u << r, true), zero = ir_scalar(g, IR_F32, 0.0);
  /* both quotients rounded as float32 divisions (ir_div multiplies by a
   * rounded reciprocal) */
  ir_ref k127 = ir_scalar(g, IR_F32, 127.0), scale = ir_cast(g, imp_div_f32(g, amax, k127), IR_F32);
  ir_ref inv = ir_where(g, ir_binary(g, IR_NEQ, amax, zero), ir_cast(g, imp_div_f32(g, k127, amax), IR_F32), zero);
  /* |a · inv| <= 127 needs no clamp (a NaN gives 0, as MLAS's
   * conversion). Not imp_requant: that turns FMA contraction off in the
   * whole file (for quantizations whose ties must fall as onnxruntime's
   * do), every matmul then a multiply and an add a product; here an exact
   * tie is rare, and a near one flips with any last-bit difference
   * upstream anyway (the 1.1B decode: layers 0-2 equal to 1e-6, then one
   * value at -93.50032 in onnxruntime and -93.49999 here: logits 0.022
   * apart) */
  ir_ref q = ir_cast(g, imp_round_even_f64(g, ir_cast(g, ir_binary(g, IR_MUL, ab, inv), IR_F64)), IR_F32);
  ir_shape fl = s;
  fl.d[r - 1] = kb * bs;
  ir_ref y = ir_view_reshape(g, ir_binary(g, IR_MUL, q, scale), fl);
  if (!pe[r - 1]) return y;
  int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int i = 0; i < r; i++) sp[i] = 1, ln[i] = s.d[i];
  return ir_view_slice(g, y, st, sp, ln); /* the block padding dropped: blocked() pads again */
}

static int lower_matmul_nbits(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref a = imp_req(n, 0), b = imp_req(n, 1), sc = imp_req(n, 2), z = imp_in(n, 3), bias = imp_in(n, 5);
  if (ir_failed(g)) return -1;
  if (imp_has_in(n, 4)) return imp_fail(n, "g_idx (input 4) is not supported");
  int64_t K = imp_attr_i(n, "K", 0), N = imp_attr_i(n, "N", 0), bits = imp_attr_i(n, "bits", 4);
  int64_t bs = imp_attr_i(n, "block_size", 0);
  if (bits != 2 && bits != 4 && bits != 8) return imp_fail(n, "bits = %lld is not supported (2, 4 or 8)", (long long)bits);
  if (bs < 16 || bs > 4096 || (bs & (bs - 1)))
    return imp_fail(n, "block_size = %lld is not a power of two in [16, 4096]", (long long)bs);
  if (K < 1 || N < 1 || K > INT32_MAX || N > INT32_MAX)
    return imp_fail(n, "K = %lld and N = %lld must be in [1, 2^31)", (long long)K, (long long)N);
  if (imp_dtype(n, a) != IR_F32 || imp_dtype(n, sc) != IR_F32)
    return imp_fail(n, "A and scales must be float32 (A is %s)", ir_dtype_name(imp_dtype(n, a)));
  if (imp_dtype(n, b) != IR_U8) return imp_fail(n, "B has type %s (uint8 only)", ir_dtype_name(imp_dtype(n, b)));
  const ir_shape *as = imp_shape(n, a), *bsh = imp_shape(n, b);
  if (as->rank < 1 || as->d[as->rank - 1] != K)
    return imp_fail(n, "the last axis of A must be K = %lld", (long long)K);
  int64_t kb = (K + bs - 1) / bs, blob = bs * bits / 8;
  if (bsh->rank != 3 || bsh->d[0] != N || bsh->d[1] != kb || bsh->d[2] != blob)
    return imp_fail(n, "B must have shape [N, k_blocks, blob] = [%lld, %lld, %lld]", (long long)N, (long long)kb,
                    (long long)blob);
  if (bias != IR_NONE && (ir_shape_numel(imp_shape(n, bias)) != N || imp_dtype(n, bias) != IR_F32))
    return imp_fail(n, "bias must be float32 with N = %lld elements", (long long)N);
  int arank = as->rank; /* `as` points into the graph: adding nodes moves it */
  if (int8_a(n, imp_attr_i(n, "accuracy_level", 0), (int)bits, bs, b, sc, z)) {
    if (arank >= IR_MAX_RANK) return imp_fail(n, "accuracy_level 4 with A of rank %d is not supported", arank);
    a = a_int8_blocks(g, a, K, bs);
  }
  /* checks the sizes of the scales and zero points (both forms read them) */
  ir_ref zq = zero_points(n, z, N, kb, (int)bits), sq = per_block(n, sc, N, kb, "scales");
  /* a refused size is recorded on the node, not the graph: stop before
   * the constant form reads the arrays at the expected sizes */
  if (ir_failed(g) || zq == IR_NONE || sq == IR_NONE) return -1;
  ir_ref y;
  if (weight_data(g, b) && weight_data(g, sc) && (z == IR_NONE || weight_data(g, z)) && arank + 3 <= IR_MAX_RANK) {
    y = blocked(n, a, b, sc, z, K, N, (int)bits, bs);
  } else {
    /* (code - zero point) * scale, in float as onnxruntime dequantizes */
    ir_ref codes = ir_cast(g, unpack(g, b, (int)bits), IR_F32); /* [N, kb, bs] */
    ir_ref w = ir_binary(g, IR_MUL, ir_sub(g, codes, zq), sq);
    w = ir_view_reshape(g, w, (ir_shape){.rank = 2, .d = {N, kb * bs}});
    int64_t st[2] = {0, 0}, sp[2] = {1, 1}, ln[2] = {N, K};
    w = ir_view_slice(g, w, st, sp, ln); /* the padding of the last block dropped */
    static const int swap[2] = {1, 0};
    y = ir_matmul(g, a, ir_view_permute(g, w, swap));
  }
  if (bias != IR_NONE) y = ir_binary(g, IR_ADD, y, bias);
  return imp_set_out(n, 0, y);
}

const imp_op_entry imp_ops_nbits[] = {
    {"MatMulNBits", lower_matmul_nbits, IMP_SYM | IMP_MS},
    {NULL, NULL, 0},
};
