/* op_col2im.c — Col2Im (opset 18; PyTorch's F.fold exports as it): the
 * column blocks of an im2col summed back into an image. */
#include "importer_impl.h"

/* Taps beyond this are refused: each is a view and an add in the graph. */
#define COL2IM_MAX_TAPS 1024

/* Output [N, C, image...] = for each tap kk of the block (C * K channels,
 * tap-minor, as im2col lays them out), the tap's columns [N, C, OL...]
 * placed at output position o * stride + kk * dilation - pad_begin on
 * each axis (a stride-dilated copy padded or cropped into the image), all
 * taps summed. Static shapes only. */
static int lower_col2im(imp_node *n) {
  ir_graph *g = n->g;
  ir_ref x = imp_req(n, 0);
  if (x == IR_NONE) return -1;
  ir_shape xs = imp_nshape(n, x);
  ir_dtype dt = imp_dtype(n, x);
  if (dt == IR_F16 || dt == IR_BF16 || dt == IR_BOOL) return imp_fail(n, "input type %s is not supported", ir_dtype_name(dt));
  if (xs.rank != 3) return imp_fail(n, "input must be [N, C * prod(block_shape), L], not of rank %d", xs.rank);
  for (int i = 0; i < 3; i++)
    if (ir_dim_is_sym(xs.d[i])) return imp_fail_sym(n, xs.d[i], "Col2Im over a symbolic axis");
  int64_t img[IMP_MAX_SP], blk[IMP_MAX_SP], dil[IMP_MAX_SP], str[IMP_MAX_SP], pads[2 * IMP_MAX_SP];
  int nsp = imp_const_ints(n, 1, img, IMP_MAX_SP);
  if (nsp < 0) return -1;
  if (nsp < 1 || nsp > IR_MAX_RANK - 3) return imp_fail(n, "image_shape has %d values (1 to %d)", nsp, IR_MAX_RANK - 3);
  if (imp_const_ints(n, 2, blk, IMP_MAX_SP) != nsp)
    return ir_failed(g) ? -1 : imp_fail(n, "block_shape must have %d values, as image_shape", nsp);
  if (imp_attr_ints_n(n, "dilations", nsp, dil, 1) || imp_attr_ints_n(n, "strides", nsp, str, 1) ||
      imp_attr_ints_n(n, "pads", 2 * nsp, pads, 0))
    return -1;
  int64_t taps = 1, cols = 1, ol[IMP_MAX_SP];
  for (int i = 0; i < nsp; i++) {
    int64_t span, room;
    if (img[i] < 1 || blk[i] < 1 || dil[i] < 1 || str[i] < 1 || pads[i] < 0 || pads[nsp + i] < 0)
      return imp_fail(n, "axis %d: image, block, dilation and stride must be >= 1 and pads >= 0", i);
    /* span = d (k - 1) + 1; room = image + pads - span: the outputs' last start */
    if (ir_mul_ov(taps, blk[i], &taps) || taps > COL2IM_MAX_TAPS)
      return imp_fail(n, "the block has more than %d taps", COL2IM_MAX_TAPS);
    if (ir_mul_ov(dil[i], blk[i] - 1, &span) || ir_add_ov(span, 1, &span) || ir_add_ov(img[i], pads[i], &room) ||
        ir_add_ov(room, pads[nsp + i], &room) || ir_sub_ov(room, span, &room))
      return imp_fail(n, "axis %d: the padded image's size overflows", i);
    if (room < 0) return imp_fail(n, "axis %d: the block (span %lld) is larger than the padded image", i, (long long)span);
    ol[i] = room / str[i] + 1;
    if (ir_mul_ov(cols, ol[i], &cols)) return imp_fail(n, "the number of blocks overflows");
  }
  if (cols != xs.d[2])
    return imp_fail(n, "input has %lld blocks (L), image_shape and the attributes give %lld", (long long)xs.d[2],
                    (long long)cols);
  if (xs.d[1] % taps) return imp_fail(n, "input's %lld channels are no multiple of the block's %lld taps",
                                      (long long)xs.d[1], (long long)taps);
  int64_t N = xs.d[0], C = xs.d[1] / taps;
  ir_ref x4 = ir_view_reshape(g, x, ir_shape_make(4, (int64_t[]){N, C, taps, cols}));
  ir_shape cs = {.rank = 2 + nsp, .d = {N, C}};
  for (int i = 0; i < nsp; i++) cs.d[2 + i] = ol[i];
  ir_ref sum = IR_NONE;
  int64_t kk[IMP_MAX_SP] = {0};
  for (int64_t t = 0; t < taps; t++) {
    ir_ref y = ir_view_reshape(g, imp_take(g, x4, 2, t, 1), cs);
    for (int i = 0; i < nsp; i++) {
      /* output o of this tap lands at o * s + kk * d - pad_begin */
      int64_t before = kk[i] * dil[i] - pads[i], placed = (ol[i] - 1) * str[i] + 1;
      y = imp_pad_crop(g, imp_dilate_axis(g, y, 2 + i, str[i]), 2 + i, before, img[i] - placed - before);
    }
    sum = t == 0 ? y : imp_add(g, sum, y);
    for (int i = nsp - 1; i >= 0 && ++kk[i] == blk[i]; i--) kk[i] = 0; /* the next tap, last axis fastest */
  }
  return imp_set_out(n, 0, sum);
}

const imp_op_entry imp_ops_col2im[] = {
    {"Col2Im", lower_col2im, 0},
    {NULL, NULL, 0},
};
