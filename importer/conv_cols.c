/* conv_cols.c — Conv with the output channels as the register block's
 * columns (op_conv.c chooses): in bands of output rows, over the wide
 * form's positions, over the positions themselves (a copy per kernel
 * column) or over an im2col copy's. */
#include "importer_impl.h"

/* A constant weight wt [M, C, kh, kw] as one constant of panels of `nr`
 * output channels, [M / nr, C, kh, kw, nr]: the output channels of every
 * (c, kh, kw) step of a panel contiguous, read as the register block's
 * columns with unit stride, and each panel one run: a thread's panels are
 * then its own part of the weight (with the channels of every step as one
 * row, [C, kh, kw, M], a panel read 128 of every 1024 bytes, and at 2
 * threads the first half of the panels of CRNN's layers ran 13-30 %
 * slower than the second, whichever thread ran them; as runs, all at
 * their 1-thread speed: docs/DESIGN.md). With `kh_outer`, [M / nr, kh,
 * C, kw, nr]: the kernel rows of a band (cols_band) are then a contiguous
 * part of each panel, read where they lie, where the other layout's bands
 * each need a copy of their rows (CRNN: 4.9 MB of weights, not 9.8).
 * IR_NONE when wt is not a constant. */
static ir_ref cols_weight(ir_graph *g, ir_ref wt, bool kh_outer, int64_t nr) {
  if (ir_failed(g) || !ir_is_const(g, wt)) return IR_NONE;
  const ir_node *wn = ir_node_get(g, wt);
  ir_shape ws = wn->shape;
  ir_dtype dt = wn->dtype;
  if (nr < 1 || ws.d[0] % nr) return IR_NONE;
  ir_shape w5 = {.rank = 5, .d = {ws.d[0] / nr, nr, ws.d[1], ws.d[2], ws.d[3]}};
  int perm[5] = {0, 2, 3, 4, 1};
  if (kh_outer) perm[1] = 3, perm[2] = 2;
  ir_shape ts = {.rank = 5, .d = {w5.d[0], w5.d[perm[1]], w5.d[perm[2]], ws.d[3], nr}};
  void *data;
  if (ir_eval(g, ir_move(g, ir_view_permute(g, ir_view_reshape(g, wt, w5), perm)), &data)) return IR_NONE;
  return ir_const_take(g, "conv_cols", dt, ts, data);
}

/* Output channels as the columns (2-D, one group, a constant weight): the
 * padded input is copied once with its channels innermost, [N, Hp, Wp, C],
 * and output rows r0..r1 over kernel rows a..b are the sum over (c, kh, kw)
 * of the input under the window, broadcast (a block's rows are output
 * positions along the row, any stride), times a panel's row of output
 * channels (the block's columns, contiguous in cols_weight's layout):
 * [N, r1 - r0, out_w, M], channels innermost. With `kh_outer` (the
 * weight [M / nr, kh, C, kw, nr]) the sum runs over (kh, c, kw). */
static ir_ref cols_band(ir_graph *g, ir_ref xh, ir_ref wc, const imp_window *w, int64_t r0, int64_t r1, int64_t a,
                        int64_t b, bool kh_outer) {
  const ir_shape xs = ir_node_get(g, xh)->shape, ws = ir_node_get(g, wc)->shape;
  int64_t kb = b - a + 1, rows = r1 - r0;
  int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK], ln[IR_MAX_RANK];
  for (int i = 0; i < xs.rank; i++) sp[i] = 1, ln[i] = xs.d[i];
  st[4] = r0 * w->s[0] + a * w->d[0], ln[4] = (rows - 1) * w->s[0] + (kb - 1) * w->d[0] + 1;
  int64_t k[2] = {kb, w->k[1]}, out[2] = {rows, w->out[1]};
  /* [N, 1, 1, C, kb, kw, rows, out_w] */
  ir_ref xw = ir_view_window(g, ir_view_slice(g, xh, st, sp, ln), 2, k, w->s, w->d, out);
  int px[8] = {0, 6, 7, 1, 3, 4, 5, 2}, kax = kh_outer ? 1 : 2;
  if (kh_outer) px[4] = 4, px[5] = 3;
  xw = ir_view_permute(g, xw, px); /* [N, rows, out_w, 1, C, kb, kw, 1] (kh_outer: kb, C) */
  int64_t wst[IR_MAX_RANK] = {0}, wsp[IR_MAX_RANK], wln[IR_MAX_RANK];
  for (int i = 0; i < ws.rank; i++) wsp[i] = 1, wln[i] = ws.d[i];
  wst[kax] = a, wln[kax] = kb;
  ir_shape w8 = {.rank = 8, .d = {1, 1, 1, ws.d[0], kh_outer ? kb : ws.d[1], kh_outer ? ws.d[2] : kb, ws.d[3], ws.d[4]}};
  ir_ref wv = ir_view_reshape(g, ir_view_slice(g, wc, wst, wsp, wln), w8);
  /* [N, rows, out_w, M / nr, 1, 1, 1, nr] */
  ir_ref y = ir_reduce(g, IR_ADD, ir_binary(g, IR_MUL, xw, wv), 7u << 4);
  ir_shape ys = {.rank = 4, .d = {xs.d[0], rows, w->out[1], ws.d[0] * ws.d[4]}};
  return ir_view_reshape(g, y, ys);
}

/* Output channels as the columns (cols_band), in bands of output rows.
 * The sum runs over (kh, c, kw) on targets of 32 vector registers or more
 * (`regs`), where the bands then share one weight (cols_weight): CRNN on
 * AVX-512, every imp_conv_cols kernel 1-6 % faster, the model's kernels
 * 5.79-5.85 -> 5.68 M TSC cycles a run (Zen 5, 1 thread, rdtsc minima).
 * With 16 registers (AVX2) gcc kept an accumulator in memory across that
 * two-level loop (3x3/2, 32 -> 64 at 12 x 80: 662 -> 723 k cycles), so the
 * sum there stays (c, kh, kw) and each band keeps a copy of its rows. */
ir_ref imp_conv_cols(imp_node *n, ir_ref x5, ir_ref wt, const imp_window *w, int regs, int64_t nr) {
  ir_graph *g = n->g;
  bool kh_outer = regs >= 32;
  ir_ref wc = cols_weight(g, wt, kh_outer, nr);
  if (wc == IR_NONE || ir_failed(g)) return IR_NONE;
  int to_hwc[6] = {0, 1, 2, 4, 5, 3}, back[6] = {0, 1, 2, 5, 3, 4};
  ir_ref xh = ir_move(g, ir_view_permute(g, imp_pad_spatial(g, x5, w, 0.0), to_hwc));
  xh = ir_view_permute(g, xh, back); /* [N, 1, 1, C, Hp, Wp], channels innermost in memory */
  /* bands: the output rows whose kernel rows reach the padding take only
   * the kernel rows that read the input (as imp_conv_bands, conv_window.c) */
  ir_ref parts[8];
  int cnt = 0;
  int64_t k = w->k[0], s = w->s[0];
  bool bands = w->d[0] == 1 && w->out[0] <= 6;
  for (int64_t r0 = 0; r0 < w->out[0] && !ir_failed(g);) {
    int64_t a = 0, b = k - 1, r1 = w->out[0];
    if (bands) {
      int64_t top = r0 * s - w->pb[0];
      a = top < 0 ? -top : 0, b = w->in[0] - 1 - top < k - 1 ? w->in[0] - 1 - top : k - 1;
      if (a > b) a = 0, b = k - 1;
      for (r1 = r0 + 1; r1 < w->out[0]; r1++) {
        int64_t t1 = r1 * s - w->pb[0], a1 = t1 < 0 ? -t1 : 0, b1 = w->in[0] - 1 - t1 < k - 1 ? w->in[0] - 1 - t1 : k - 1;
        if (a1 > b1) a1 = 0, b1 = k - 1;
        if (a1 != a || b1 != b) break;
      }
    }
    parts[cnt++] = cols_band(g, xh, wc, w, r0, r1, a, b, kh_outer);
    r0 = r1;
  }
  if (ir_failed(g)) return IR_NONE;
  ir_ref y = cnt == 1 ? parts[0] : imp_concat(n, parts, cnt, 1);
  int to_chw[4] = {0, 3, 1, 2};
  return ir_view_permute(g, y, to_chw);
}

/* The product of xw [N, P, 1, C, k0, k1, 1] (an output position's window
 * of the input: the block's rows, broadcast) by the weight wt [M, C, k0,
 * k1] laid out at compile time as panels of nr columns, [M / nr, C, k0,
 * k1, nr] (one contiguous run per panel: the [C, kh, kw, M] rows of a
 * 512-wide weight are 2 KiB apart, and a panel's steps then fall into a
 * few cache sets), read in that order (a weight read out of order is laid
 * out again as read: ir_rewrite_weight_layout). The bias is the sum's
 * epilogue (*b taken). [N, M, P], channels innermost in memory. */
static ir_ref cols_panels(ir_graph *g, ir_ref xw, ir_ref wt, ir_ref *b, int64_t nr) {
  const ir_shape xs = ir_node_get(g, xw)->shape, ws = ir_node_get(g, wt)->shape;
  int64_t N = xs.d[0], P = xs.d[1], M = ws.d[0], C = ws.d[1], k0 = ws.d[2], k1 = ws.d[3];
  ir_shape w5 = {.rank = 5, .d = {M / nr, nr, C, k0, k1}};
  int pw[5] = {0, 2, 3, 4, 1};
  void *data;
  if (ir_eval(g, ir_move(g, ir_view_permute(g, ir_view_reshape(g, wt, w5), pw)), &data))
    return IR_NONE;
  ir_shape w7 = {.rank = 7, .d = {1, 1, M / nr, C, k0, k1, nr}};
  ir_ref wv = ir_const_take(g, "conv_wide_cols", ir_node_get(g, wt)->dtype, w7, data);
  /* [N, P, M / nr, 1, 1, 1, nr] */
  ir_ref y = ir_reduce(g, IR_ADD, ir_binary(g, IR_MUL, xw, wv), 7u << 3);
  ir_shape y4 = {.rank = 4, .d = {N, P, M / nr, nr}};
  y = ir_view_reshape(g, y, y4);
  if (b && *b != IR_NONE) {
    ir_shape bs = {.rank = 4, .d = {1, 1, M / nr, nr}};
    y = ir_binary(g, IR_ADD, y, ir_view_reshape(g, *b, bs));
    *b = IR_NONE;
  }
  ir_shape y3 = {.rank = 3, .d = {N, P, M}};
  int to_mp[3] = {0, 2, 1};
  return ir_view_permute(g, ir_view_reshape(g, y, y3), to_mp);
}

/* The input x5 [N, 1, 1, C, H, W] padded by w, its channels too: C plus
 * a cache line (*cs) when C floats are a multiple of four lines, so the
 * rows of a block broadcast from a copy with channels innermost do not
 * share cache sets. [N, 1, 1, Cs, Hp, Wp], a view. */
static ir_ref cols_padded_input(ir_graph *g, ir_ref x5, const imp_window *w, int64_t C, int64_t *cs) {
  int64_t line = 64 / (int64_t)sizeof(float), cb[IR_MAX_RANK] = {0}, ce[IR_MAX_RANK] = {0};
  *cs = C % (4 * line) ? C : C + line;
  ce[3] = *cs - C;
  return ir_view_pad(g, imp_pad_spatial(g, x5, w, 0.0), cb, ce, 0.0);
}

/* Output channels as the columns over the wide form's positions (2-D,
 * stride 1, one group, a constant weight), for a short map whose wide
 * columns round up to much more than its positions (3x3, 512 -> 512 at
 * 7x7 on AVX-512: 64 columns for 49 outputs, four vectors per output row
 * whatever the block). The rows of the register block are the padded rows
 * flattened, p = oh * Wp + ow (as the wide form's columns; 56 for 49), so a
 * block of rows spans output rows and tap (kh, kw) is the row p + kh * Wp +
 * kw of the padded input copied with its channels innermost, [N, Hp * Wp,
 * Cs], broadcast (Cs: cols_padded_input); the columns are the output
 * channels, read from the weight as panels of two vectors (cols_panels). The result [N, P, M] is read through a strided view
 * as [N, M, OH, OW]. The bias is the sum's epilogue (*b taken). Where a
 * panel is large against L2, the scheduler cuts the sum into slices of
 * channels and fetches the next one (scheduler/gemm_fetch.c:
 * sched_gemm_conv_slices). IR_NONE when it does not apply. */
ir_ref imp_conv_wide_cols(imp_node *n, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w0,
                          int64_t vf) {
  ir_graph *g = n->g;
  if (ir_failed(g) || !ir_is_const(g, wt)) return IR_NONE;
  imp_window w = *w0;
  const ir_shape xs = ir_node_get(g, x5)->shape;
  int64_t N = xs.d[0], C = xs.d[3], nr = 2 * vf, k0 = w.k[0], k1 = w.k[1];
  int64_t wp = imp_conv_wide_stride(&w), P = w.out[0] * wp;
  w.pe[1] -= imp_conv_shared_pad(&w);
  /* rows the furthest tap of the last position reads */
  int64_t need = (P - 1 + (k0 - 1) * wp + k1 - 1) / wp + 1,
          hp = w.in[0] + w.pb[0] + w.pe[0] + w.extra[0];
  if (need > hp) w.extra[0] += need - hp, hp = need;
  /* the input padded (and its channels), copied as [N, Hp, Wp, Cs] */
  int64_t cs;
  ir_ref xp = cols_padded_input(g, x5, &w, C, &cs);
  int to_hwc[6] = {0, 1, 2, 4, 5, 3};
  ir_ref xh = ir_move(g, ir_view_permute(g, xp, to_hwc));
  ir_shape fs = {.rank = 3, .d = {N, hp * wp, cs}};
  int to_cp[3] = {0, 2, 1};
  ir_ref xf = ir_view_permute(g, ir_view_reshape(g, xh, fs), to_cp); /* [N, Cs, Hp * Wp] */
  int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK] = {1, 1, 1}, ln[IR_MAX_RANK] = {N, C, hp * wp};
  xf = ir_view_slice(g, xf, st, sp, ln);
  int64_t one = 1, dh = wp, rows = hp * wp - (k0 - 1) * wp;
  ir_ref xw = ir_view_window(g, xf, 1, &w.k[0], &one, &dh, &rows); /* [N, C, k0, rows] */
  xw = ir_view_window(g, xw, 1, &w.k[1], &one, &one, &P);          /* [N, C, k0, k1, P] */
  int px[5] = {0, 4, 1, 2, 3};
  xw = ir_view_permute(g, xw, px); /* [N, P, C, k0, k1] */
  ir_shape x7 = {.rank = 7, .d = {N, P, 1, C, k0, k1, 1}};
  xw = ir_view_reshape(g, xw, x7);
  ir_ref y = cols_panels(g, xw, wt, b, nr); /* [N, M, P] */
  /* [N, M, P] read back as [N, M, out_w, out_h] (strides 1, Wp), then transposed */
  y = ir_view_window(g, y, 1, &w.out[1], &wp, &one, &w.out[0]);
  int perm[4] = {0, 1, 3, 2};
  return ir_failed(g) ? IR_NONE : ir_view_permute(g, y, perm);
}

/* Output channels as the columns over the output positions themselves
 * (2-D, stride and dilation 1, one group, a constant weight): the wide
 * form's rows (imp_conv_wide_cols) without its wrapped columns. The padded
 * input is copied once per kernel column kw, shifted by it and cut to the
 * output width, [N, k1, Hp * OW, Cs] (channels innermost, Cs: cols_padded_input), so
 * tap (kh, kw) of output position q = oh * OW + ow is row q + kh * OW of
 * copy kw: affine in q, and a block of rows spans output rows without a
 * column computed and never read (14x14: 196 rows for 196 outputs against
 * 210; 7x7: 49 against 56), for a copy k1 times the input's size. The
 * columns are the weight's panels (cols_panels); the result [N, P, M] is
 * read as [N, M, OH, OW]. The bias is the sum's epilogue (*b taken). */
ir_ref imp_conv_unfold_cols(imp_node *n, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w, int64_t vf) {
  ir_graph *g = n->g;
  if (ir_failed(g) || !ir_is_const(g, wt) || w->nsp != 2) return IR_NONE;
  const ir_shape xs = ir_node_get(g, x5)->shape;
  int64_t N = xs.d[0], C = xs.d[3], k0 = w->k[0], k1 = w->k[1], OH = w->out[0], OW = w->out[1], P, hw;
  int64_t hp = OH + k0 - 1; /* stride and dilation 1: the padded rows */
  if (ir_mul_ov(OH, OW, &P) || ir_mul_ov(hp, OW, &hw) || k1 > IMP_CONV_MAX_UNFOLD || w->s[0] != 1 ||
      w->s[1] != 1 || w->d[0] != 1 || w->d[1] != 1)
    return IR_NONE;
  int64_t cs, one = 1;
  ir_ref xp = cols_padded_input(g, x5, w, C, &cs); /* [N, 1, 1, Cs, Hp, Wp] */
  /* each kernel column's part a slice of the padded view (a window over
   * it is not one view: it would be copied twice) */
  ir_ref parts[IMP_CONV_MAX_UNFOLD];
  for (int64_t kw = 0; kw < k1; kw++) {
    int64_t st6[IR_MAX_RANK] = {0}, sp6[IR_MAX_RANK] = {1, 1, 1, 1, 1, 1}, ln6[IR_MAX_RANK] = {N, 1, 1, cs, hp, OW};
    st6[5] = kw;
    parts[kw] = ir_view_unsqueeze(g, ir_view_slice(g, xp, st6, sp6, ln6), 3); /* [N, 1, 1, 1, Cs, Hp, OW] */
  }
  ir_ref xu = imp_concat(n, parts, (int)k1, 3); /* [N, 1, 1, k1, Cs, Hp, OW] */
  int to_copy[7] = {0, 1, 2, 3, 5, 6, 4};
  xu = ir_move(g, ir_view_permute(g, xu, to_copy)); /* [N, 1, 1, k1, Hp, OW, Cs] */
  ir_shape fs = {.rank = 4, .d = {N, k1, hw, cs}};
  int to_cp[4] = {0, 1, 3, 2};
  ir_ref xf = ir_view_permute(g, ir_view_reshape(g, xu, fs), to_cp); /* [N, k1, Cs, Hp * OW] */
  int64_t st[IR_MAX_RANK] = {0}, sp[IR_MAX_RANK] = {1, 1, 1, 1}, ln[IR_MAX_RANK] = {N, k1, C, hw};
  xf = ir_view_slice(g, xf, st, sp, ln);
  ir_ref xw = ir_view_window(g, xf, 1, &k0, &one, &OW, &P); /* [N, k1, C, k0, P] */
  int px[5] = {0, 4, 2, 3, 1};
  xw = ir_view_permute(g, xw, px); /* [N, P, C, k0, k1] */
  ir_shape x7 = {.rank = 7, .d = {N, P, 1, C, k0, k1, 1}};
  xw = ir_view_reshape(g, xw, x7);
  ir_ref y = cols_panels(g, xw, wt, b, 2 * vf); /* [N, M, P] */
  ir_shape y4 = {.rank = 4, .d = {N, ir_node_get(g, wt)->shape.d[0], OH, OW}};
  return ir_failed(g) ? IR_NONE : ir_view_reshape(g, y, y4);
}

/* Output channels as the columns over an im2col copy's positions (2-D,
 * strided, one group, a constant weight), for a strided convolution whose
 * output rows are short (3x3/2, 256 -> 512 to 7x7 on AVX-512): the matrix
 * product of imp_conv_matmul with its operands swapped. There the output
 * channels are the block's rows and the positions its columns, 49 of them
 * as a block of 32 and one of 17 (16 + 1 wide code) over a weight read as
 * 8 broadcast rows 9 KiB apart; here the rows are the positions (the copy
 * [N, C, kh, kw, OH * OW], a block's rows one run of it per step) and the
 * columns the weight's panels (cols_panels), so every vector is whole and
 * the scheduler's slices and fetches of a windowed conv's panels apply
 * (the sum over c, kh, kw; one tap, 1x1/2: a plain product). The result [N, P, M] is read through a view as
 * [N, M, OH, OW]: the next layer's copy with channels innermost reads it
 * in order. The bias is the sum's epilogue (*b taken). */
ir_ref imp_conv_im2col_cols(imp_node *n, ir_ref x5, ir_ref wt, ir_ref *b, const imp_window *w,
                            int64_t vf) {
  ir_graph *g = n->g;
  if (ir_failed(g) || !ir_is_const(g, wt) || w->nsp != 2) return IR_NONE;
  const ir_shape xs = ir_node_get(g, x5)->shape;
  int64_t N = xs.d[0], C = xs.d[3], k0 = w->k[0], k1 = w->k[1], P;
  if (ir_mul_ov(w->out[0], w->out[1], &P)) return IR_NONE;
  /* [N, 1, 1, C, k0, k1, OH, OW] copied, then [N, P, 1, C, k0, k1, 1] */
  ir_ref win = ir_view_window(g, imp_pad_spatial(g, x5, w, 0.0), 2, w->k, w->s, w->d, w->out);
  ir_shape s5 = {.rank = 5, .d = {N, C, k0, k1, P}};
  ir_ref xc = ir_view_reshape(g, ir_move(g, win), s5);
  int px[5] = {0, 4, 1, 2, 3};
  ir_shape x7 = {.rank = 7, .d = {N, P, 1, C, k0, k1, 1}};
  ir_ref xw = ir_view_reshape(g, ir_view_permute(g, xc, px), x7);
  ir_ref y = cols_panels(g, xw, wt, b, 2 * vf); /* [N, M, P] */
  ir_shape y4 = {.rank = 4, .d = {N, ir_node_get(g, wt)->shape.d[0], w->out[0], w->out[1]}};
  return ir_failed(g) ? IR_NONE : ir_view_reshape(g, y, y4);
}
