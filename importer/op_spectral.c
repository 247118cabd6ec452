/* op_spectral.c — signal processing: DFT, STFT and the window functions
 * (Hann, Hamming, Blackman) and the mel filter bank (MelWeightMatrix). */
#include "importer_impl.h"

#include <math.h>
#include <stdlib.h>

#define PI 3.14159265358979323846

/* --------------------------------------------------------------- windows */

static ir_dtype onnx_dtype(int64_t t, bool *ok) {
  *ok = true;
  switch (t) {
  case 1: return IR_F32;
  case 2: return IR_U8;
  case 3: return IR_I8;
  case 4: return IR_U16;
  case 5: return IR_I16;
  case 6: return IR_I32;
  case 7: return IR_I64;
  case 11: return IR_F64;
  case 12: return IR_U32;
  case 13: return IR_U64;
  default: *ok = false; return IR_F32;
  }
}

/* w[k] = a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N), N = size (periodic)
 * or size - 1 (symmetric), computed in float64 from an iota. */
static int window(imp_node *n, double a0, double a1, double a2) {
  ir_graph *g = n->g;
  int64_t size;
  if (imp_const_ints(n, 0, &size, 1) != 1) return imp_fail(n, "size must be a compile-time constant scalar");
  if (size < 0) return imp_fail(n, "negative size");
  bool ok;
  ir_dtype ot = onnx_dtype(imp_attr_i(n, "output_datatype", 1), &ok);
  if (!ok) return imp_fail(n, "output_datatype not supported");
  bool periodic = imp_attr_i(n, "periodic", 1) != 0;
  double N = periodic ? (double)size : (double)(size - 1);
  ir_shape s = ir_shape_make(1, &size);
  ir_ref k = ir_cast(g, ir_iota(g, s, 0), IR_F64);
  /* a symmetric window of one element divides 0 by size - 1 = 0: NaN by
   * ONNX's definition, and onnxruntime's (numpy and PyTorch give 1) */
  ir_ref ang = ir_binary(g, IR_MUL, k, ir_scalar(g, IR_F64, N > 0 ? 2 * PI / N : NAN));
  /* cos(t) = sin(t + pi/2) */
  ir_ref c1 = ir_unary(g, IR_SIN, ir_binary(g, IR_ADD, ang, ir_scalar(g, IR_F64, PI / 2)));
  ir_ref c2 = ir_unary(g, IR_SIN, ir_binary(g, IR_ADD, ir_binary(g, IR_MUL, ang, ir_scalar(g, IR_F64, 2)),
                                             ir_scalar(g, IR_F64, PI / 2)));
  ir_ref w = ir_binary(g, IR_ADD, ir_scalar(g, IR_F64, a0), ir_binary(g, IR_MUL, c1, ir_scalar(g, IR_F64, -a1)));
  if (a2 != 0) w = ir_binary(g, IR_ADD, w, ir_binary(g, IR_MUL, c2, ir_scalar(g, IR_F64, a2)));
  return imp_set_out(n, 0, ir_cast(g, w, ot));
}

static int lower_hann(imp_node *n) {
  return window(n, 0.5, 0.5, 0);
}
static int lower_hamming(imp_node *n) {
  return window(n, 25.0 / 46.0, 21.0 / 46.0, 0);
}
static int lower_blackman(imp_node *n) {
  return window(n, 0.42, 0.5, 0.08);
}

/* ---------- DFT / STFT ---------- */

/* cos or sin of 2*pi*j*k/L for j < L rows and k < nk columns, float64;
 * j*k is reduced mod L in integers first so the angle stays small. */
static ir_ref twiddle(ir_graph *g, int64_t L, int64_t nk, bool cosine) {
  ir_shape s = {.rank = 2, .d = {L, nk}};
  ir_ref jk = ir_binary(g, IR_MOD, imp_mul(g, ir_iota(g, s, 0), ir_iota(g, s, 1)), ir_scalar(g, IR_I64, (double)L));
  ir_ref ang = imp_mul(g, ir_cast(g, jk, IR_F64), ir_scalar(g, IR_F64, 2 * PI / (double)L));
  if (cosine) ang = imp_add(g, ang, ir_scalar(g, IR_F64, PI / 2));
  return ir_unary(g, IR_SIN, ang);
}

/* DFT over the second-to-last axis of x [..., n, 1|2] (float64), after
 * zero-padding or cutting that axis to L; returns [..., nk, 2]. */
static ir_ref dft_last(ir_graph *g, ir_ref x, int64_t L, int64_t nk, bool inverse) {
  ir_shape s = imp_gshape(g, x);
  int ax = s.rank - 2;
  int64_t nin = s.d[ax];
  if (nin > L) x = imp_take(g, x, ax, 0, L);
  else if (nin < L) x = imp_pad_crop(g, x, ax, 0, L - nin);
  ir_ref xr = ir_view_squeeze(g, imp_take(g, x, ax + 1, 0, 1), ax + 1);
  ir_ref xi = s.d[ax + 1] == 2 ? ir_view_squeeze(g, imp_take(g, x, ax + 1, 1, 1), ax + 1) : IR_NONE;
  /* (xr + i xi) e^{-+i theta}: forward uses -sin, inverse +sin (and 1/L) */
  ir_ref cs = twiddle(g, L, nk, true), sn = twiddle(g, L, nk, false);
  if (!inverse) sn = ir_unary(g, IR_NEG, sn);
  ir_ref re = ir_matmul(g, xr, cs), im = ir_matmul(g, xr, sn);
  if (xi != IR_NONE) {
    re = ir_sub(g, re, ir_matmul(g, xi, sn));
    im = imp_add(g, im, ir_matmul(g, xi, cs));
  }
  if (inverse) {
    ir_ref inv = ir_scalar(g, IR_F64, 1.0 / (double)L);
    re = imp_mul(g, re, inv), im = imp_mul(g, im, inv);
  }
  int r = imp_gshape(g, re).rank;
  ir_ref parts[2] = {ir_view_unsqueeze(g, re, r), ir_view_unsqueeze(g, im, r)};
  return imp_stack(g, parts, 2, r);
}

/* [..., n, ..., c] with `axis` moved right before the last (complex) axis. */
static void axis_perm(int rank, int axis, int *perm) {
  int j = 0;
  for (int i = 0; i < rank - 1; i++)
    if (i != axis) perm[j++] = i;
  perm[j++] = axis;
  perm[j] = rank - 1;
}

static int lower_dft(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (ir_failed(g)) return -1;
  ir_dtype dt = imp_gdtype(g, x);
  if (!ir_dtype_is_float(dt) || dt == IR_F16) return imp_fail(n, "input type %s is not supported", ir_dtype_name(dt));
  ir_shape s = imp_gshape(g, x);
  if (s.rank < 2 || (s.d[s.rank - 1] != 1 && s.d[s.rank - 1] != 2))
    return imp_fail(n, "input must end with a dimension of 1 or 2");
  int64_t axis = imp_attr_i(n, "axis", 1);
  if (n->opset >= 20) {
    axis = -2;
    if (imp_has_in(n, 2)) {
      int64_t v[1];
      if (imp_const_ints(n, 2, v, 1) != 1) return imp_fail(n, "axis must be a constant scalar");
      axis = v[0];
    }
  }
  int ax = imp_axis(n, axis, s.rank);
  if (ax < 0) return -1;
  if (ax == s.rank - 1) return imp_fail(n, "axis cannot be the complex axis");
  int64_t L = s.d[ax];
  if (imp_has_in(n, 1)) {
    int64_t v[1];
    if (imp_const_ints(n, 1, v, 1) != 1) return imp_fail(n, "dft_length must be a constant scalar");
    L = v[0];
  }
  bool inverse = imp_attr_i(n, "inverse", 0) != 0, onesided = imp_attr_i(n, "onesided", 0) != 0;
  if (inverse && onesided) return imp_fail(n, "onesided inverse DFT is not supported");
  int64_t nk = onesided ? L / 2 + 1 : L;
  int perm[IR_MAX_RANK], back[IR_MAX_RANK];
  axis_perm(s.rank, ax, perm);
  for (int i = 0; i < s.rank; i++) back[perm[i]] = i;
  ir_ref xp = ir_view_permute(g, ir_cast(g, x, IR_F64), perm);
  ir_ref y = dft_last(g, xp, L, nk, inverse);
  return imp_set_out(n, 0, ir_cast(g, ir_view_permute(g, y, back), dt));
}

/* STFT: frames [B, F, fl, c] stacked from strided slices, times the
 * window, then a DFT over the frame axis. */
static int lower_stft(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0), win = imp_in(n, 2);
  if (ir_failed(g)) return -1;
  ir_dtype dt = imp_gdtype(g, x);
  if (!ir_dtype_is_float(dt) || dt == IR_F16) return imp_fail(n, "input type %s is not supported", ir_dtype_name(dt));
  ir_shape s = imp_gshape(g, x);
  if (s.rank != 3) return imp_fail(n, "signal must be [batch, length, 1|2]");
  int64_t v[1], step, fl = -1;
  if (imp_const_ints(n, 1, v, 1) != 1) return imp_fail(n, "frame_step must be a constant scalar");
  step = v[0];
  if (imp_has_in(n, 3)) {
    if (imp_const_ints(n, 3, v, 1) != 1) return imp_fail(n, "frame_length must be a constant scalar");
    fl = v[0];
  }
  if (win != IR_NONE) {
    int64_t wl = imp_gshape(g, win).d[0];
    if (fl >= 0 && fl != wl) return imp_fail(n, "frame_length differs from the window length");
    fl = wl;
  }
  if (fl < 1 || step < 1 || fl > s.d[1]) return imp_fail(n, "frame_length or frame_step is invalid");
  int64_t F = (s.d[1] - fl) / step + 1;
  if (F > 4096) return imp_fail(n, "too many frames (%lld)", (long long)F);
  bool onesided = imp_attr_i(n, "onesided", 1) != 0;
  if (onesided && s.d[2] == 2) return imp_fail(n, "onesided STFT of a complex signal is not supported");
  ir_ref xd = ir_cast(g, x, IR_F64);
  ir_ref frames[4096];
  for (int64_t f = 0; f < F; f++) frames[f] = ir_view_unsqueeze(g, imp_take(g, xd, 1, f * step, fl), 1);
  ir_ref fr = imp_stack(g, frames, (int)F, 1); /* [B, F, fl, c] */
  if (win != IR_NONE)
    fr = imp_mul(g, fr, ir_view_reshape(g, ir_cast(g, win, IR_F64), (ir_shape){.rank = 2, .d = {fl, 1}}));
  ir_ref y = dft_last(g, fr, fl, onesided ? fl / 2 + 1 : fl, false);
  return imp_set_out(n, 0, ir_cast(g, y, dt));
}


/* --------------------------------------------------------- MelWeightMatrix */

/* The triangular mel filter bank as ONNX's reference and onnxruntime's
 * kernel compute it: num_mel_bins + 2 points from lower_edge_hertz on the
 * mel scale mel(f) = 2595 log10(1 + f/700), spaced by (mel(upper) -
 * mel(lower)) / (num_mel_bins + 2) (so the last one falls short of
 * upper_edge_hertz), each mapped to the spectrogram bin floor((dft_length
 * + 1) f / sample_rate); filter i rises from point i to point i+1 and
 * falls to point i+2. Computed at compile time in double, so every input
 * must be a constant (run freezes them to the given values). */
static int lower_mel_weight_matrix(imp_node *n) {
  int64_t mels, dft, rate;
  double lo, hi;
  if (imp_const_ints(n, 0, &mels, 1) != 1 || imp_const_ints(n, 1, &dft, 1) != 1 ||
      imp_const_ints(n, 2, &rate, 1) != 1 || imp_const_floats(n, 3, &lo, 1) != 1 ||
      imp_const_floats(n, 4, &hi, 1) != 1)
    return imp_fail(n, "every input must be a compile-time constant scalar");
  if (mels < 1 || mels > (1 << 20) || dft < 1 || dft > (1 << 30) || rate < 1)
    return imp_fail(n, "num_mel_bins must be in 1..2^20, dft_length in 1..2^30, sample_rate positive");
  bool ok;
  ir_dtype ot = onnx_dtype(imp_attr_i(n, "output_datatype", 1), &ok);
  if (!ok) return imp_fail(n, "output_datatype not supported");
  int64_t bins = dft / 2 + 1, numel = bins * mels; /* < 2^50 */
  if ((uint64_t)numel * ir_dtype_size(ot) > imp_mem_limit()) return imp_fail(n, "the matrix is larger than the memory limit");
  int64_t *pt = malloc((size_t)(mels + 2) * sizeof *pt);
  void *y = calloc((size_t)numel, ir_dtype_size(ot));
  if (!pt || !y) abort();
  double mlo = 2595 * log10(1 + lo / 700), mhi = 2595 * log10(1 + hi / 700), step = (mhi - mlo) / (double)(mels + 2);
  int rc = 0;
  for (int64_t i = 0; i < mels + 2 && !rc; i++) {
    double hz = 700 * (pow(10, (mlo + step * (double)i) / 2595) - 1), b = floor((double)(dft + 1) * hz / (double)rate);
    if (!(b >= 0 && b < (double)bins))
      rc = imp_fail(n, "mel point %lld falls outside the %lld spectrogram bins (check the edges against sample_rate / 2)",
                    (long long)i, (long long)bins);
    pt[i] = rc ? 0 : (int64_t)b;
  }
  for (int64_t i = 0; i < mels && !rc; i++) {
    int64_t l = pt[i], c = pt[i + 1], h = pt[i + 2];
    if (c == l) ir_elem_set_f(ot, y, c * mels + i, 1);
    for (int64_t j = l; c > l && j <= c; j++) ir_elem_set_f(ot, y, j * mels + i, (double)(j - l) / (double)(c - l));
    for (int64_t j = c; j < h; j++) ir_elem_set_f(ot, y, j * mels + i, (double)(h - j) / (double)(h - c));
  }
  free(pt);
  if (rc) return free(y), rc;
  int64_t d[2] = {bins, mels};
  return imp_set_out(n, 0, ir_const_take(n->g, "mel_weight_matrix", ot, ir_shape_make(2, d), y));
}

const imp_op_entry imp_ops_spectral[] = {
    {"MelWeightMatrix", lower_mel_weight_matrix, 0},
    {"DFT", lower_dft, 0},
    {"STFT", lower_stft, 0},
    {"HannWindow", lower_hann, 0},
    {"HammingWindow", lower_hamming, 0},
    {"BlackmanWindow", lower_blackman, 0},
    {NULL, NULL, 0},
};
