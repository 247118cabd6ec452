#!/usr/bin/python3
"""Makes small test models in models/misc/ (Debian's /usr/bin/python3).
  col2im.onnx         Col2Im (PyTorch's F.fold, opset 18): overlapping
                      blocks (3x3 at stride 2, padded), gaps (2x2 at
                      strides (3, 4)), dilated with asymmetric pads, 1-D,
                      3-D, batches of 2
  view_reshape.onnx   the PyTorch x.view(batch, -1) pattern: Shape -> Gather ->
                      Unsqueeze -> Concat -> Reshape, then a MatMul
  tied.onnx           tied embeddings: W[V,D] feeds a Gather and, as the
                      separate initializer W^T[D,V] torch's export makes, the
                      LM-head MatMul; the weights file must hold W once
  layers_L.onnx       L residual blocks of x + relu(LayerNorm(x) W1) W2 on
                      [16,64] (L = 2, 12): the C text must not grow with L
  matmuls.onnx        a MatMul-heavy model for --threads
  symbolic_ops.onnx   x[batch, seq, 8] with the symbols kept: positions
                      Range(0, seq) gathered from a table, a mean and a
                      softmax over seq, x reshaped to [batch*seq, 8] (an
                      extent isl takes as a parameter of its own) for a
                      MatMul and back through Shape/Concat, LayerNormalization,
                      ConstantOfShape and Where on shape values, a Slice of
                      the last position (x[:, -1:])
  symbolic_int32.onnx x[batch, seq, 8] reshaped as paddle2onnx exports do:
                      Shape cast to int32, sliced, gathered, unsqueezed,
                      multiplied and divided with int32 constants,
                      concatenated and cast back to int64 for Reshape to
                      [batch, 4*seq, 2]; the channel count (a plain int32
                      from the same shape) scales it
  symbolic_more.onnx  x[batch, seq, 8], ids[batch, seq]: CumSum, OneHot,
                      GatherElements, QuantizeLinear/DequantizeLinear,
                      Einsum, ThresholdedRelu, Shrink, DepthToSpace, an
                      LSTM (over 3 steps), TopK with k = seq, a Cast of
                      seq - 1 to float, reflect and edge Pads, bilinear
                      and nearest Resizes (by scales and to sizes read
                      from the shape), a float Range(0, seq) (a float
                      torch.arange(seq)), with the symbols kept
  symbolic_padconv.onnx  x[1, 2, t]: Pads of the symbolic axis on one side
                      or both (a value of 0.5 once) read by Conv1ds,
                      unpadded (a causal TCN block: 8 left, k3 dilated 4),
                      strided, dilated, padded again, and by an
                      AveragePool: each valid from t = 1
  symbolic_padconv2d.onnx  the same over x[1, 2, H, W] with 3x3 Conv2ds
                      (top only, left and right at strides (1, 2), all
                      four sides dilated 2): valid from H = W = 1
  symbolic_padconv_k5.onnx  Pad 2 left, Conv1d k5: valid from t = 3;
                      symbolic_padconv_k5_t2.pb is an input it refuses
  conv_k1_pads.onnx   1-wide convolutions padded and strided so that they
                      have as many outputs as inputs (1-D and 2-D, 4 to 16
                      output channels): the outputs wholly in the padding
                      are the bias
  slice_runtime.onnx  Slices whose bounds are values known only at run time
                      (input k, an ArgMax): x[k:] (then doubled), x[:i+1]
                      for i the ArgMax of column 0, x[:, k:-7:-2];
                      slice_k*.pb are the inputs the tests run it on
  convs.onnx          convolutions on the register-blocked path: 3x3 padded,
                      3x3 stride 2, 1x1, depthwise, dilated 3x3 with a
                      residual Add (per-tap form), 3x3 stride 2 on short rows
                      (im2col form), then a Gemm to 33 outputs (one column
                      past a full block of 32)
  convs_window.onnx   the windowed conv forms: grouped 3x3 (wide), stride
                      (2, 1) (rows), unpadded 3x3 (wide, in place), 1-D
  upsample.onnx       upsampling: ConvTransposes whose kernel is their
                      stride (2-D with bias, 2-D grouped 2x3/(2,3), 1-D 4/4:
                      a matrix product and a shuffle) and a 3x3/2 padded one
                      (the general form); Resize nearest by whole scales
                      (asymmetric/floor, half_pixel/round_prefer_floor: a
                      repeat), nearest to a size that is no multiple, linear
  depthwise.onnx      depthwise convolutions over flattened rows: 5x5
                      stride 2 padded, 3x3 dilated 2 unpadded, 3x3 with two
                      outputs per channel (M/G = 2) and a residual Add, a
                      Relu epilogue, 7-wide rows; a 3x3 stride-2 stem over
                      3 channels (stride phases, not im2col)
  convs_cols.onnx     convolutions with output channels as the columns (short
                      maps): padded 3x3, bands at stride (2, 1), stride 2,
                      dilated 2 read transposed as an output and by a
                      CRNN-like MatMul head
  convs_wide_cols.onnx  output channels as the columns over the positions
                      of 7x7 maps (a copy per kernel column), k-sliced
                      (464 -> 64) and not, a 2x2 padded on one side
  convs_wide_cols14.onnx  the same on a 14x14 map (232 -> 128), a residual Add
  convs_im2col_cols.onnx  output channels as the columns over an im2col
                      copy's positions: 3x3/2 to 7x7 (240 -> 64, k-sliced)
                      with a bias and Relu, 3x3/2 dilated 2 with asymmetric
                      pads to 14x14 (40 -> 32) and a residual Add, 1x1/2
                      to 7x7 (240 -> 64)
  convt_head.onnx     a DBNet-like probability head: ConvTranspose 2x2/2
                      with a bias, BatchNormalization, Relu, ConvTranspose
                      2x2/2 with a bias, Sigmoid as the output (the ops
                      after each shuffle move in front of it, ir/sink.c)
  convs_pads.onnx     convolutions with asymmetric pads: wide 3x3s padded
                      left 2 right 1 (rows share their padding), right
                      past left, top past bottom and bottom past top,
                      dilated 2 left 3 right 1; stride 2 (im2col, 64-wide
                      rows in blocks of 32, a stem over RGB by stride
                      phases, SAME_UPPER and SAME_LOWER); stride (2, 1)
                      rows; depthwise (3x3 at strides 1 and 2, 5x5/2);
                      a short map (bands, output channels as the columns);
                      1-D
  conv_chunks.onnx    columns larger than L2 in chunks (1x1 with a
                      residual, a product of two inputs; a wide 3x3 not)
  convs_stem.onnx     many taps over few channels strided along the row
                      (rows unfolded along the row, no im2col): a 7x7/2
                      RGB stem with Relu and MaxPool, a 5x5 at strides
                      (3, 2) dilated (1, 2) with asymmetric pads, a 7x7/2
                      over two groups
  pads_long.onnx      masks split out of the innermost loop (codegen/emit.c:
                      split_loop) over rows of 256 and more: a wide 3x3
                      padded [1, 2, 1, 1], a 3x3/2 (im2col) and an RGB
                      3x3/2 stem (stride phases) over 300-wide rows, a 1-D
                      conv strided 2 over 700 samples, two Pads of one
                      input by other widths added (the range where both
                      masks hold), a Pad with a value past a Relu
  pools.onnx          MaxPools strided along the row as two passes (kernel
                      rows, then columns: op_pool.c pool_separable): 3x3/2
                      padded after a Relu (ties at 0), ceil_mode with odd
                      sizes, 2x2/2 unpadded, dilated (2, 1) at strides
                      (1, 2) with asymmetric pads, 3x3/2 with its indices,
                      a 3x3/(2, 1) one that keeps the phase form, and a
                      3x3/2 over 150-wide rows (the rows pass's masks
                      split out of its loop, codegen/emit.c)
  convs_winograd.onnx 3x3 convolutions as Winograd's F(2x2, 3x3): a batch
                      of 2, odd rows and columns, asymmetric pads, with and
                      without a bias, a Relu and a residual Add after"""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "misc")
rng = np.random.default_rng(11)
os.makedirs(HERE, exist_ok=True)


def w(name, shape, scale=0.1, gen=None):
    return numpy_helper.from_array(((gen or rng).standard_normal(shape) * scale).astype(np.float32), name)


def fork():
    """A generator at rng's state that leaves rng where it is. Weights added
    to a model after the models below it were committed come from one (or
    from a generator of their own), so those models keep their weights:
    tests/models/check_generated.sh fails when a committed file is not what
    this script writes."""
    g = np.random.default_rng()
    g.bit_generator.state = rng.bit_generator.state
    return g


def i64(name, vals):
    return numpy_helper.from_array(np.array(vals, np.int64), name)


def save(name, nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    if opset <= 17:  # Debian's onnx checks opsets up to 17 (Col2Im is 18's)
        onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))


vi = helper.make_tensor_value_info
F = TensorProto.FLOAT

# x.view(batch, -1) @ W
save("view_reshape", [
    helper.make_node("Shape", ["x"], ["shape"]),
    helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
    helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"]),
    helper.make_node("Concat", ["batch1", "minus1"], ["newshape"], axis=0),
    helper.make_node("Reshape", ["x", "newshape"], ["flat"]),
    helper.make_node("MatMul", ["flat", "W"], ["y"]),
], [vi("x", F, [3, 4, 5])], [vi("y", F, [3, 7])],
    [i64("zero", 0), i64("axes0", [0]), i64("minus1", [-1]), w("W", (20, 7))])

# tied embeddings
V, D = 300, 32
emb = (rng.standard_normal((V, D)) * 0.1).astype(np.float32)
save("tied", [
    helper.make_node("Gather", ["E", "ids"], ["h"], axis=0),
    helper.make_node("MatMul", ["h", "ET"], ["logits"]),
], [vi("ids", TensorProto.INT64, [2, 5])], [vi("logits", F, [2, 5, V])],
    [numpy_helper.from_array(emb, "E"), numpy_helper.from_array(np.ascontiguousarray(emb.T), "ET")])


def layers(L):
    nodes, inits, x = [], [], "x"
    for l in range(L):
        p = f"l{l}_"
        nodes += [
            helper.make_node("LayerNormalization", [x, p + "g", p + "b"], [p + "n"], axis=-1, epsilon=1e-5),
            helper.make_node("MatMul", [p + "n", p + "w1"], [p + "h"]),
            helper.make_node("Relu", [p + "h"], [p + "r"]),
            helper.make_node("MatMul", [p + "r", p + "w2"], [p + "o"]),
            helper.make_node("Add", [x, p + "o"], [p + "x"]),
        ]
        inits += [numpy_helper.from_array(np.ones(64, np.float32), p + "g"),
                  numpy_helper.from_array(np.zeros(64, np.float32), p + "b"),
                  w(p + "w1", (64, 128)), w(p + "w2", (128, 64))]
        x = p + "x"
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    save(f"layers_{L}", nodes, [vi("x", F, [16, 64])], [vi("y", F, [16, 64])], inits)


layers(2)
layers(12)

save("matmuls", [
    helper.make_node("MatMul", ["x", "A"], ["h"]),
    helper.make_node("Relu", ["h"], ["r"]),
    helper.make_node("MatMul", ["r", "B"], ["y"]),
], [vi("x", F, [64, 256])], [vi("y", F, [64, 256])], [w("A", (256, 512)), w("B", (512, 256))])

# symbolic dimensions through the ops the symbolic lowerings handle
I64 = TensorProto.INT64
save("symbolic_ops", [
    helper.make_node("Shape", ["x"], ["shape"]),
    helper.make_node("Gather", ["shape", "one"], ["seq"], axis=0),
    helper.make_node("Range", ["zero", "seq", "one"], ["pos"]),
    helper.make_node("Gather", ["table", "pos"], ["pe"], axis=0),
    helper.make_node("Add", ["x", "pe"], ["h"]),
    helper.make_node("ReduceMean", ["h"], ["mean"], axes=[1], keepdims=1),
    helper.make_node("Sub", ["h", "mean"], ["hc"]),
    helper.make_node("Softmax", ["hc"], ["sm"], axis=1),
    helper.make_node("Reshape", ["sm", "flat2"], ["flat"]),
    helper.make_node("MatMul", ["flat", "W"], ["proj"]),
    helper.make_node("Slice", ["shape", "zero1", "two1"], ["bs"]),
    helper.make_node("Concat", ["bs", "four1"], ["oshape"], axis=0),
    helper.make_node("Reshape", ["proj", "oshape"], ["p3"]),
    helper.make_node("LayerNormalization", ["p3", "g", "b"], ["ln"], axis=-1),
    helper.make_node("Equal", ["oshape", "minus1"], ["isneg"]),
    helper.make_node("Where", ["isneg", "ones3", "oshape"], ["eshape"]),
    helper.make_node("ConstantOfShape", ["eshape"], ["half"],
                     value=numpy_helper.from_array(np.array([0.5], np.float32))),
    helper.make_node("Mul", ["ln", "half"], ["y"]),
    helper.make_node("Slice", ["y", "minus1_1", "big1", "one1"], ["last"]),
], [vi("x", F, ["batch", "seq", 8])], [vi("y", F, ["batch", "seq", 4]), vi("last", F, ["batch", 1, 4])],
    [i64("zero", 0), i64("one", 1), w("table", (64, 8)), i64("flat2", [-1, 8]), w("W", (8, 4)),
     i64("zero1", [0]), i64("two1", [2]), i64("four1", [4]), i64("minus1", [-1, -1, -1]),
     i64("ones3", [1, 1, 1]), numpy_helper.from_array(np.ones(4, np.float32), "g"),
     numpy_helper.from_array(np.zeros(4, np.float32), "b"), i64("minus1_1", [-1]),
     i64("big1", [9223372036854775807]), i64("one1", [1])])

# symbolic dimensions through int32 shape arithmetic (importer/narrow.c)
I32 = TensorProto.INT32


def i32(name, vals):
    return numpy_helper.from_array(np.array(vals, np.int32), name)


save("symbolic_int32", [
    helper.make_node("Shape", ["x"], ["s64"]),
    helper.make_node("Cast", ["s64"], ["s"], to=I32),
    helper.make_node("Slice", ["s", "zero1", "one1"], ["b"]),
    helper.make_node("Gather", ["s", "one"], ["q"], axis=0),
    helper.make_node("Unsqueeze", ["q", "zero1"], ["q1"]),
    helper.make_node("Mul", ["q1", "eight"], ["q8"]),
    helper.make_node("Div", ["q8", "two"], ["q4"]),
    helper.make_node("Concat", ["b", "q4", "two"], ["t"], axis=0),
    helper.make_node("Cast", ["t"], ["t64"], to=I64),
    helper.make_node("Reshape", ["x", "t64"], ["r"]),
    helper.make_node("Slice", ["s", "two1", "three1"], ["c"]),
    helper.make_node("Cast", ["c"], ["cf"], to=F),
    helper.make_node("Mul", ["r", "cf"], ["y"]),
], [vi("x", F, ["batch", "seq", 8])], [vi("y", F, ["batch", "seq4", 2])],
    [i64("zero1", [0]), i64("one1", [1]), i64("one", 1), i64("two1", [2]), i64("three1", [3]),
     i32("eight", [8]), i32("two", [2])])

# convolutions: x[1, 8, 6, 70]; rows of 70 and 35 take the per-tap form, the
# last one (2 x 18) the im2col form
save("convs", [
    helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("Conv", ["r1", "c2w", "c2b"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Conv", ["c2", "c3w"], ["c3"]),
    helper.make_node("Clip", ["c3", "lo", "hi"], ["r3"]),
    helper.make_node("Conv", ["r3", "c4w", "c4b"], ["c4"], pads=[1, 1, 1, 1], group=33),
    helper.make_node("Conv", ["c4", "c5w"], ["c5"], pads=[2, 2, 2, 2], dilations=[2, 2]),
    helper.make_node("Add", ["c5", "r3"], ["res"]),
    helper.make_node("Conv", ["res", "c6w", "c6b"], ["c6"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Flatten", ["c6"], ["flat"], axis=1),
    helper.make_node("Gemm", ["flat", "fcw", "fcb"], ["y"], transB=1),
], [vi("x", F, [1, 8, 6, 70])], [vi("y", F, [1, 33])],
    [w("c1w", (16, 8, 3, 3), 0.3), w("c1b", (16,)), w("c2w", (24, 16, 3, 3), 0.2), w("c2b", (24,)),
     w("c3w", (33, 24, 1, 1), 0.3), numpy_helper.from_array(np.array(0, np.float32), "lo"),
     numpy_helper.from_array(np.array(6, np.float32), "hi"), w("c4w", (33, 1, 3, 3), 0.5),
     w("c4b", (33,)), w("c5w", (33, 33, 3, 3), 0.1), w("c6w", (16, 33, 3, 3), 0.1), w("c6b", (16,)),
     w("fcw", (33, 16 * 2 * 18), 0.05), w("fcb", (33,))])

# the windowed conv forms (importer/conv_window.c): x[1, 16, 9, 40] through a
# grouped 3x3 (wide: padded rows flattened), a 3x3 with stride (2, 1) and no
# padding (rows form), an unpadded 3x3 on 2-row output (wide, read in place)
# with a residual-free Relu; z[1, 8, 50] through a padded 1-D conv (rows);
# q[1, 16, 5, 75] through a padded 3x3 with stride (2, 1) (rows: 75 columns
# rounded to 80, one block of 5 vectors across on AVX-512; the first conv's
# 38 to 48, 3 vectors); p[1, 16, 4, 36] through a 3x3 padded 2 above and 1
# below, 5 output rows (bands: row 0 reads kernel row 2 alone, row 1 rows
# 1-2, rows 2-3 the whole kernel (wide), row 4 rows 0-1); r[1, 8, 80, 80]
# through a padded 3x3 to 16 channels (wide: 6558 columns rounded to 6624,
# whole 8 x 48 blocks on AVX-512); v[1, 8, 6, 80] through a padded 3x3
# stride 2 (im2col, 40-wide output rows: the positions one axis, 120
# columns); u[1, 8, 4, 128] through a padded 3x3 stride 2 (im2col, 64-wide
# output rows: on AVX-512 the copy stores the columns by blocks of 32);
# the weights from p1w on from a fork of the stream or generators of their
# own, so the models after this one keep theirs
cw_inits = [w("g1w", (16, 8, 3, 3), 0.3), w("g1b", (16,)), w("s2w", (12, 16, 3, 3), 0.2), w("s2b", (12,)),
            w("u3w", (8, 12, 3, 3), 0.2), w("d1w", (24, 8, 3), 0.3), w("d1b", (24,)),
            w("q1w", (20, 16, 3, 3), 0.2), w("q1b", (20,))]
pg = fork()
save("convs_window", [
    helper.make_node("Conv", ["x", "g1w", "g1b"], ["g1"], pads=[1, 1, 1, 1], group=2),
    helper.make_node("Relu", ["g1"], ["r1"]),
    helper.make_node("Conv", ["r1", "s2w", "s2b"], ["s2"], strides=[2, 1]),
    helper.make_node("Conv", ["s2", "u3w"], ["u3"]),
    helper.make_node("Relu", ["u3"], ["y"]),
    helper.make_node("Conv", ["z", "d1w", "d1b"], ["d1"], pads=[1, 1]),
    helper.make_node("Relu", ["d1"], ["yz"]),
    helper.make_node("Conv", ["q", "q1w", "q1b"], ["q1"], strides=[2, 1], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["q1"], ["yq"]),
    helper.make_node("Conv", ["p", "p1w", "p1b"], ["p1"], pads=[2, 1, 1, 1]),
    helper.make_node("Relu", ["p1"], ["yp"]),
    helper.make_node("Conv", ["r", "r1w", "r1b"], ["rc"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["rc"], ["yr"]),
    helper.make_node("Conv", ["v", "v1w"], ["vc"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Relu", ["vc"], ["yv"]),
    helper.make_node("Conv", ["u", "u1w"], ["uc"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Relu", ["uc"], ["yu"]),
], [vi("x", F, [1, 16, 9, 40]), vi("z", F, [1, 8, 50]), vi("q", F, [1, 16, 5, 75]), vi("p", F, [1, 16, 4, 36]),
    vi("r", F, [1, 8, 80, 80]), vi("v", F, [1, 8, 6, 80]), vi("u", F, [1, 8, 4, 128])],
    [vi("y", F, [1, 8, 2, 36]), vi("yz", F, [1, 24, 50]), vi("yq", F, [1, 20, 3, 75]), vi("yp", F, [1, 24, 5, 36]),
     vi("yr", F, [1, 16, 80, 80]), vi("yv", F, [1, 16, 3, 40]), vi("yu", F, [1, 16, 2, 64])],
    cw_inits + [w("p1w", (24, 16, 3, 3), 0.2, pg), w("p1b", (24,), gen=pg),
     numpy_helper.from_array((np.random.default_rng(12).standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32), "r1w"),
     numpy_helper.from_array((np.random.default_rng(13).standard_normal(16) * 0.1).astype(np.float32), "r1b"),
     numpy_helper.from_array((np.random.default_rng(14).standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32), "v1w"),
     numpy_helper.from_array((np.random.default_rng(15).standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32), "u1w")])

# upsampling: x[1, 8, 10, 12], z[1, 4, 9]
def resize(name, src, scales, **kw):
    return helper.make_node("Resize", [src, "", scales], [name], **kw)


save("upsample", [
    helper.make_node("ConvTranspose", ["x", "t1w", "t1b"], ["t1"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Relu", ["t1"], ["r1"]),
    helper.make_node("ConvTranspose", ["r1", "t2w"], ["y1"], kernel_shape=[2, 3], strides=[2, 3], group=2),
    helper.make_node("ConvTranspose", ["z", "t3w", "t3b"], ["y2"], kernel_shape=[4], strides=[4]),
    helper.make_node("ConvTranspose", ["x", "t4w"], ["y3"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                     output_padding=[1, 1]),
    resize("y4", "x", "s2", mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    resize("y5", "x", "s3", mode="nearest", coordinate_transformation_mode="half_pixel",
           nearest_mode="round_prefer_floor"),
    helper.make_node("Resize", ["x", "", "", "sz"], ["y6"], mode="nearest"),
    resize("y7", "x", "s2", mode="linear", coordinate_transformation_mode="half_pixel"),
], [vi("x", F, [1, 8, 10, 12]), vi("z", F, [1, 4, 9])],
    [vi("y1", F, [1, 6, 40, 72]), vi("y2", F, [1, 5, 36]), vi("y3", F, [1, 6, 20, 24]), vi("y4", F, [1, 8, 20, 24]),
     vi("y5", F, [1, 8, 30, 36]), vi("y6", F, [1, 8, 15, 17]), vi("y7", F, [1, 8, 20, 24])],
    [w("t1w", (8, 12, 2, 2), 0.3), w("t1b", (12,)), w("t2w", (12, 3, 2, 3), 0.3), w("t3w", (4, 5, 4), 0.3),
     w("t3b", (5,)), w("t4w", (8, 6, 3, 3), 0.3),
     numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s2"),
     numpy_helper.from_array(np.array([1, 1, 3, 3], np.float32), "s3"), i64("sz", [1, 8, 15, 17])])

# depthwise: x[1, 12, 14, 15]
save("depthwise", [
    helper.make_node("Conv", ["x", "d1w", "d1b"], ["d1"], pads=[2, 2, 2, 2], strides=[2, 2], group=12),
    helper.make_node("Relu", ["d1"], ["y1"]),
    helper.make_node("Conv", ["x", "d2w"], ["y2"], dilations=[2, 2], group=12),
    helper.make_node("Conv", ["x", "d3w", "d3b"], ["d3"], pads=[1, 1, 1, 1], group=12),
    helper.make_node("Conv", ["d3", "d4w"], ["d4"], pads=[1, 1, 1, 1], group=24),
    helper.make_node("Add", ["d4", "d3"], ["y3"]),
    helper.make_node("Conv", ["rgb", "s1w", "s1b"], ["y4"], pads=[1, 1, 1, 1], strides=[2, 2]),
], [vi("x", F, [1, 12, 14, 15]), vi("rgb", F, [1, 3, 20, 70])],
    [vi("y1", F, [1, 12, 7, 8]), vi("y2", F, [1, 12, 10, 11]), vi("y3", F, [1, 24, 14, 15]), vi("y4", F, [1, 8, 10, 35])],
    [w("d1w", (12, 1, 5, 5), 0.3), w("d1b", (12,)), w("d2w", (12, 1, 3, 3), 0.3), w("d3w", (24, 1, 3, 3), 0.3),
     w("d3b", (24,)), w("d4w", (24, 1, 3, 3), 0.3), w("s1w", (8, 3, 3, 3), 0.3), w("s1b", (8,))])

# Slices at run-time bounds (importer/op_select.c imp_slice_runtime)
save("slice_runtime", [
    helper.make_node("Slice", ["x", "k", "big1", "zero1"], ["a"]),
    helper.make_node("Mul", ["a", "two_f"], ["y1"]),
    helper.make_node("Slice", ["x", "zero1", "one1", "one1"], ["col0"]),
    helper.make_node("ArgMax", ["col0"], ["am"], axis=0, keepdims=1),
    helper.make_node("Reshape", ["am", "one1"], ["am1"]),
    helper.make_node("Add", ["am1", "one1"], ["e"]),
    helper.make_node("Slice", ["x", "zero1", "e", "zero1"], ["y2"]),
    helper.make_node("Slice", ["x", "k", "minus7", "one1", "minus2"], ["y3"]),
], [vi("x", F, [10, 6]), vi("k", I64, [1])],
    [vi("y1", F, ["n1", 6]), vi("y2", F, ["n2", 6]), vi("y3", F, [10, "n3"])],
    [i64("zero1", [0]), i64("one1", [1]), i64("big1", [9223372036854775807]), i64("minus7", [-7]),
     i64("minus2", [-2]), numpy_helper.from_array(np.array(2, np.float32), "two_f")])
with open(os.path.join(HERE, "slice_x.pb"), "wb") as f:
    f.write(numpy_helper.from_array(rng.standard_normal((10, 6)).astype(np.float32), "x").SerializeToString())
for k in (3, -2, 20):
    with open(os.path.join(HERE, "slice_k%d.pb" % k), "wb") as f:
        f.write(numpy_helper.from_array(np.array([k], np.int64), "k").SerializeToString())

# the DBNet-like head: x[1, 8, 6, 20] -> [1, 1, 24, 80]
save("convt_head", [
    helper.make_node("ConvTranspose", ["x", "h1w", "h1b"], ["t1"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("BatchNormalization", ["t1", "bns", "bnb", "bnm", "bnv"], ["bn"]),
    helper.make_node("Relu", ["bn"], ["r1"]),
    helper.make_node("ConvTranspose", ["r1", "h2w", "h2b"], ["t2"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Sigmoid", ["t2"], ["y"]),
], [vi("x", F, [1, 8, 6, 20])], [vi("y", F, [1, 1, 24, 80])],
    [w("h1w", (8, 12, 2, 2), 0.3), w("h1b", (12,)), w("bns", (12,), 1.0), w("bnb", (12,)),
     w("bnm", (12,)), numpy_helper.from_array(rng.uniform(0.5, 2.0, 12).astype(np.float32), "bnv"),
     w("h2w", (12, 1, 2, 2), 0.5), w("h2b", (1,))])

# output channels as the columns (importer/conv_cols.c): x[1, 16, 7, 80]
# through a padded 3x3 to 32 channels (7 rows: one band, the padded kernel
# rows included), a 3x3 with stride (2, 1) to 64 (4 rows: bands), a 3x3
# with stride 2 to 64 (2 x 40), a 3x3 dilated 2 to 32 with a residual-free
# Relu as an output (read transposed), and a CRNN-like head (the map
# reshaped to [1, 32 * 2, 40], transposed, a MatMul)
save("convs_cols", [
    helper.make_node("Conv", ["x", "k1w", "k1b"], ["k1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["k1"], ["r1"]),
    helper.make_node("Conv", ["r1", "k2w", "k2b"], ["k2"], pads=[1, 1, 1, 1], strides=[2, 1]),
    helper.make_node("Relu", ["k2"], ["r2"]),
    helper.make_node("Conv", ["r2", "k3w"], ["k3"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Clip", ["k3", "lo", "hi"], ["r3"]),
    helper.make_node("Conv", ["r3", "k4w", "k4b"], ["k4"], pads=[2, 2, 2, 2], dilations=[2, 2]),
    helper.make_node("Relu", ["k4"], ["y"]),
    helper.make_node("Reshape", ["y", "hshape"], ["h1"]),
    helper.make_node("Transpose", ["h1"], ["h2"], perm=[0, 2, 1]),
    helper.make_node("MatMul", ["h2", "fcw"], ["yh"]),
], [vi("x", F, [1, 16, 7, 80])], [vi("y", F, [1, 32, 2, 40]), vi("yh", F, [1, 40, 10])],
    [w("k1w", (32, 16, 3, 3), 0.3), w("k1b", (32,)), w("k2w", (64, 32, 3, 3), 0.2), w("k2b", (64,)),
     w("k3w", (64, 64, 3, 3), 0.1), numpy_helper.from_array(np.array(0, np.float32), "lo"),
     numpy_helper.from_array(np.array(6, np.float32), "hi"), w("k4w", (32, 64, 3, 3), 0.1), w("k4b", (32,)),
     i64("hshape", [1, 64, 40]), w("fcw", (64, 10), 0.2)])

# asymmetric pads ([top, left, bottom, right]) through every conv form:
# x[1, 16, 16, 30] through a chain of wide 3x3s (14 rows or more: not the
# short-map forms) padded [1, 2, 1, 1] (left past right: the rows share
# their padding, one wrapped column), [0, 2, 0, 1] (the same, no padded
# row: the zero row below), [1, 1, 1, 2], [2, 2, 0, 0], [0, 1, 2, 0], a
# dilated 3x3 padded [2, 3, 2, 1], 3x3/2 padded [0, 0, 1, 1] (im2col) and
# SAME_LOWER (top and left 1); u[1, 16, 6, 64] stride (2, 1) padded [1, 2,
# 1, 1]; v[1, 8, 6, 128] 3x3/2 padded [0, 0, 1, 1] (64-wide output rows);
# rgb[1, 3, 20, 70] a 3x3/2 stem SAME_UPPER (bottom and right 1);
# d[1, 12, 14, 15] depthwise 3x3 [1, 2, 1, 0], 3x3/2 [0, 0, 1, 1], 5x5/2
# [2, 1, 1, 3]; p[1, 16, 4, 36] 3x3s padded [2, 2, 1, 1] (5 rows: bands)
# and [1, 0, 1, 2] to 32 channels (the columns); z[1, 8, 50] padded [2, 0].
# Weights from a generator of their own.
pr = np.random.default_rng(21)


def wp(name, shape, scale=0.2):
    return numpy_helper.from_array((pr.standard_normal(shape) * scale).astype(np.float32), name)


save("convs_pads", [
    helper.make_node("Conv", ["x", "a1w", "a1b"], ["a1"], pads=[1, 2, 1, 1]),
    helper.make_node("Relu", ["a1"], ["r1"]),
    helper.make_node("Conv", ["r1", "a2w"], ["a2"], pads=[0, 2, 0, 1]),
    helper.make_node("Relu", ["a2"], ["r2"]),
    helper.make_node("Conv", ["r2", "a3w"], ["a3"], pads=[1, 1, 1, 2]),
    helper.make_node("Relu", ["a3"], ["r3"]),
    helper.make_node("Conv", ["r3", "a4w", "a4b"], ["a4"], pads=[2, 2, 0, 0]),
    helper.make_node("Relu", ["a4"], ["r4"]),
    helper.make_node("Conv", ["r4", "a6w", "a6b"], ["a6"], pads=[0, 1, 2, 0]),
    helper.make_node("Relu", ["a6"], ["y1"]),
    helper.make_node("Conv", ["x", "a5w"], ["y2"], pads=[2, 3, 2, 1], dilations=[2, 2]),
    helper.make_node("Conv", ["x", "b1w", "b1b"], ["y3"], pads=[0, 0, 1, 1], strides=[2, 2]),
    helper.make_node("Conv", ["x", "b2w"], ["y4"], auto_pad="SAME_LOWER", strides=[2, 2]),
    helper.make_node("Conv", ["u", "b3w", "b3b"], ["yu"], pads=[1, 2, 1, 1], strides=[2, 1]),
    helper.make_node("Conv", ["v", "b4w"], ["yv"], pads=[0, 0, 1, 1], strides=[2, 2]),
    helper.make_node("Conv", ["rgb", "s1w", "s1b"], ["yrgb"], auto_pad="SAME_UPPER", strides=[2, 2]),
    helper.make_node("Conv", ["d", "e1w", "e1b"], ["yd1"], pads=[1, 2, 1, 0], group=12),
    helper.make_node("Conv", ["d", "e2w"], ["yd2"], pads=[0, 0, 1, 1], strides=[2, 2], group=12),
    helper.make_node("Conv", ["d", "e3w", "e3b"], ["yd3"], pads=[2, 1, 1, 3], strides=[2, 2], group=12),
    helper.make_node("Conv", ["p", "c1w", "c1b"], ["yp"], pads=[2, 2, 1, 1]),
    helper.make_node("Conv", ["p", "c2w"], ["yc"], pads=[1, 0, 1, 2]),
    helper.make_node("Conv", ["z", "z1w", "z1b"], ["yz"], pads=[2, 0]),
], [vi("x", F, [1, 16, 16, 30]), vi("u", F, [1, 16, 6, 64]), vi("v", F, [1, 8, 6, 128]), vi("rgb", F, [1, 3, 20, 70]),
    vi("d", F, [1, 12, 14, 15]), vi("p", F, [1, 16, 4, 36]), vi("z", F, [1, 8, 50])],
    [vi("y1", F, [1, 24, 14, 32]), vi("y2", F, [1, 24, 16, 30]), vi("y3", F, [1, 24, 8, 15]),
     vi("y4", F, [1, 24, 8, 15]), vi("yu", F, [1, 24, 3, 65]), vi("yv", F, [1, 16, 3, 64]),
     vi("yrgb", F, [1, 8, 10, 35]), vi("yd1", F, [1, 12, 14, 15]), vi("yd2", F, [1, 12, 7, 7]),
     vi("yd3", F, [1, 12, 7, 8]), vi("yp", F, [1, 24, 5, 37]), vi("yc", F, [1, 32, 4, 36]),
     vi("yz", F, [1, 24, 50])],
    [wp("a1w", (24, 16, 3, 3)), wp("a1b", (24,)), wp("a2w", (24, 24, 3, 3)), wp("a3w", (16, 24, 3, 3)),
     wp("a4w", (24, 16, 3, 3)), wp("a4b", (24,)), wp("a6w", (24, 24, 3, 3)), wp("a6b", (24,)), wp("a5w", (24, 16, 3, 3)),
     wp("b1w", (24, 16, 3, 3)), wp("b1b", (24,)), wp("b2w", (24, 16, 3, 3)), wp("b3w", (24, 16, 3, 3)),
     wp("b3b", (24,)), wp("b4w", (16, 8, 3, 3)), wp("s1w", (8, 3, 3, 3), 0.3), wp("s1b", (8,)),
     wp("e1w", (12, 1, 3, 3), 0.3), wp("e1b", (12,)), wp("e2w", (12, 1, 3, 3), 0.3),
     wp("e3w", (12, 1, 5, 5), 0.3), wp("e3b", (12,)), wp("c1w", (24, 16, 3, 3)), wp("c1b", (24,)),
     wp("c2w", (32, 16, 3, 3)), wp("z1w", (24, 8, 3), 0.3), wp("z1b", (24,))])

# output channels as the columns over a 7x7 map's positions, one copy of
# the input per kernel column (AVX-512: conv_cols.c imp_conv_unfold_cols,
# not the wide form's 56 rows for 49): 464 -> 64 channels (two weight
# panels of 534 KB, threaded over them: k slices of 32 channels where four
# panels exceed L2, 1 MiB native or the x86-64-v4 preset's 2 MiB; the last
# slice 16 short), the next slice fetched (past the first panel's last:
# the second's first); its bias and Relu, then 64 -> 64 (not sliced) with
# a residual Add, and a 2x2 64 -> 64 padded below and right only (two
# copies, the last column and row of each from the padding), the output
rw = np.random.default_rng(12)
save("convs_wide_cols", [
    helper.make_node("Conv", ["x", "q1w", "q1b"], ["q1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["q1"], ["r1"]),
    helper.make_node("Conv", ["r1", "q2w"], ["q2"], pads=[1, 1, 1, 1]),
    helper.make_node("Add", ["q2", "r1"], ["a1"]),
    helper.make_node("Conv", ["r1", "q3w"], ["q3"], pads=[0, 0, 1, 1]),
    helper.make_node("Add", ["a1", "q3"], ["y"]),
], [vi("x", F, [1, 464, 7, 7])], [vi("y", F, [1, 64, 7, 7])],
    [w("q1w", (64, 464, 3, 3), 0.05, rw), w("q1b", (64,), 0.1, rw), w("q2w", (64, 64, 3, 3), 0.1, rw),
     w("q3w", (64, 64, 2, 2), 0.1, rw)])

# the same form on a 14x14 map, which it takes for computing 1/16 fewer
# products than the wide form there (op_conv.c wide_cols_fits; 128 output
# channels: 224 wide columns x 132 rows against 216 x 128): 232 -> 128, k
# slices of its 267 KB panels on 1 MiB of L2, 18 row blocks of 12 over the
# 210 wide positions; its bias and Relu, then a residual Add of another
# input reading the result transposed, as the output
rw = np.random.default_rng(13)
save("convs_wide_cols14", [
    helper.make_node("Conv", ["x", "q1w", "q1b"], ["q1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["q1"], ["r1"]),
    helper.make_node("Add", ["r1", "s"], ["y"]),
], [vi("x", F, [1, 232, 14, 14]), vi("s", F, [1, 128, 14, 14])], [vi("y", F, [1, 128, 14, 14])],
    [w("q1w", (128, 232, 3, 3), 0.05, rw), w("q1b", (128,), 0.1, rw)])

# column chunks (scheduler/gemm_order.c: sched_gemm_chunk_columns): columns over 4/5 of L2
# (native here, the x86-64-v3 preset's 512 KiB) read in chunks that take an
# eighth of it, row blocks inside: a 1x1 convolution over 90 rows of 100
# (864 KB of columns, a last partial chunk, 60 rows: a partial row block)
# with a residual Add and Relu, a wide 3x3 over the same input (windowed
# sums keep the panel order), and a product of two inputs (chunks of
# column panels)
rc = np.random.default_rng(13)
save("conv_chunks", [
    helper.make_node("Conv", ["x", "k1w", "k1b"], ["k1"]),
    helper.make_node("Add", ["k1", "z"], ["k1z"]),
    helper.make_node("Relu", ["k1z"], ["y1"]),
    helper.make_node("Conv", ["x", "k2w", "k2b"], ["y2"], pads=[1, 1, 1, 1]),
    helper.make_node("MatMul", ["a", "b"], ["y3"]),
], [vi("x", F, [1, 24, 90, 100]), vi("z", F, [1, 60, 90, 100]), vi("a", F, [200, 48]), vi("b", F, [48, 5000])],
    [vi("y1", F, [1, 60, 90, 100]), vi("y2", F, [1, 20, 90, 100]), vi("y3", F, [200, 5000])],
    [w("k1w", (60, 24, 1, 1), 0.2, rc), w("k1b", (60,), 0.1, rc), w("k2w", (20, 24, 3, 3), 0.1, rc),
     w("k2b", (20,), 0.1, rc)])

# many taps over few channels, strided along the row (conv_matmul.c:
# imp_conv_row_unfold, the rows unfolded along the row once, read through a
# window across rows): a ResNet-like 7x7/2 stem over RGB padded 3 with 20
# output channels (two row blocks on AVX-512, a remainder elsewhere), its
# bias, Relu and a 3x3/2 MaxPool; a 5x5 at strides (3, 2), dilated (1, 2),
# padded [1, 2, 2, 0] over 2 channels; a 7x7/2 with two groups of 3
rs = np.random.default_rng(14)
save("convs_stem", [
    helper.make_node("Conv", ["x", "t1w", "t1b"], ["t1"], pads=[3, 3, 3, 3], strides=[2, 2]),
    helper.make_node("Relu", ["t1"], ["r1"]),
    helper.make_node("MaxPool", ["r1"], ["y1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Conv", ["u", "t2w"], ["y2"], pads=[1, 2, 2, 0], strides=[3, 2], dilations=[1, 2]),
    helper.make_node("Conv", ["v", "t3w", "t3b"], ["y3"], pads=[3, 3, 3, 3], strides=[2, 2], group=2),
], [vi("x", F, [1, 3, 40, 70]), vi("u", F, [1, 2, 30, 80]), vi("v", F, [1, 6, 24, 66])],
    [vi("y1", F, [1, 20, 10, 18]), vi("y2", F, [1, 16, 10, 37]), vi("y3", F, [1, 16, 12, 33])],
    [w("t1w", (20, 3, 7, 7), 0.1, rs), w("t1b", (20,), 0.1, rs), w("t2w", (16, 2, 5, 5), 0.2, rs),
     w("t3w", (16, 3, 7, 7), 0.1, rs), w("t3b", (16,), 0.1, rs)])

# masks split out of the innermost loop (codegen/emit.c: split_loop): every
# padded copy over rows of at least 256 elements, 1-D and 2-D, and the sum
# of two views padded by other widths (their common range)
rl = np.random.default_rng(15)
save("pads_long", [
    helper.make_node("Conv", ["x", "l1w", "l1b"], ["l1"], pads=[1, 2, 1, 1]),
    helper.make_node("Relu", ["l1"], ["y1"]),
    helper.make_node("Conv", ["x", "l2w"], ["y2"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Conv", ["rgb", "l3w", "l3b"], ["y3"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Conv", ["z", "l4w", "l4b"], ["y4"], pads=[3, 2], strides=[2]),
    helper.make_node("Pad", ["q", "pq1"], ["q1"]),
    helper.make_node("Pad", ["q", "pq2"], ["q2"]),
    helper.make_node("Add", ["q1", "q2"], ["y5"]),
    helper.make_node("Relu", ["q"], ["qr"]),
    helper.make_node("Pad", ["qr", "pq3", "pv"], ["y6"]),
], [vi("x", F, [1, 8, 6, 300]), vi("rgb", F, [1, 3, 8, 300]), vi("z", F, [1, 8, 700]), vi("q", F, [2, 3, 280])],
    [vi("y1", F, [1, 16, 6, 301]), vi("y2", F, [1, 16, 3, 150]), vi("y3", F, [1, 8, 4, 150]),
     vi("y4", F, [1, 16, 351]), vi("y5", F, [2, 3, 284]), vi("y6", F, [2, 3, 287])],
    [w("l1w", (16, 8, 3, 3), 0.2, rl), w("l1b", (16,), 0.1, rl), w("l2w", (16, 8, 3, 3), 0.2, rl),
     w("l3w", (8, 3, 3, 3), 0.3, rl), w("l3b", (8,), 0.1, rl), w("l4w", (16, 8, 4), 0.2, rl),
     w("l4b", (16,), 0.1, rl), i64("pq1", [0, 0, 1, 0, 0, 3]), i64("pq2", [0, 0, 2, 0, 0, 2]),
     i64("pq3", [0, 0, 4, 0, 0, 3]), numpy_helper.from_array(np.array(0.5, np.float32), "pv")])

# grouped-query attention: keys and values [1, 2, 5, 8] repeated 3 times
# (Unsqueeze, Expand, Reshape to [1, 6, 5, 8], as LLaMA's repeat_kv) for 6
# query heads of 3 rows: the matmuls read the unrepeated cache
# (ir_view_unrepeat); the repeated values are an output too (the copy
# stays for it), and q1, one head broadcast over all six, keeps the copy
save("gqa", [
    helper.make_node("Unsqueeze", ["k", "ax2"], ["ku"]),
    helper.make_node("Expand", ["ku", "rep"], ["ke"]),
    helper.make_node("Reshape", ["ke", "heads"], ["kr"]),
    helper.make_node("Transpose", ["kr"], ["kt"], perm=[0, 1, 3, 2]),
    helper.make_node("MatMul", ["q", "kt"], ["s"]),
    helper.make_node("Softmax", ["s"], ["p"], axis=-1),
    helper.make_node("Unsqueeze", ["v", "ax2"], ["vu"]),
    helper.make_node("Expand", ["vu", "rep"], ["ve"]),
    helper.make_node("Reshape", ["ve", "heads"], ["vr"]),
    helper.make_node("MatMul", ["p", "vr"], ["o"]),
    helper.make_node("MatMul", ["q1", "kt"], ["s1"]),
], [vi("q", F, [1, 6, 3, 8]), vi("k", F, [1, 2, 5, 8]), vi("v", F, [1, 2, 5, 8]), vi("q1", F, [1, 1, 3, 8])],
    [vi("o", F, [1, 6, 3, 8]), vi("vr", F, [1, 6, 5, 8]), vi("s1", F, [1, 6, 3, 5])],
    [i64("ax2", [2]), i64("rep", [1, 2, 3, 5, 8]), i64("heads", [1, 6, 5, 8])])

# MaxPools strided along the row as two passes (op_pool.c pool_separable):
# the kernel rows combined in one copy, the columns as strided reads of it
save("pools", [
    helper.make_node("Relu", ["x"], ["r"]),
    helper.make_node("MaxPool", ["r"], ["y1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("MaxPool", ["x"], ["y2"], kernel_shape=[3, 3], pads=[1, 0, 0, 1], strides=[2, 2], ceil_mode=1),
    helper.make_node("MaxPool", ["x"], ["y3"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("MaxPool", ["x"], ["y4"], kernel_shape=[3, 2], pads=[2, 1, 1, 0], strides=[1, 2], dilations=[2, 1]),
    helper.make_node("MaxPool", ["x"], ["y5", "i5"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("MaxPool", ["x"], ["y6"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 1]),
    helper.make_node("MaxPool", ["xw"], ["y7"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
], [vi("x", F, [1, 6, 23, 37]), vi("xw", F, [1, 4, 9, 150])],
    [vi("y1", F, [1, 6, 12, 19]), vi("y2", F, [1, 6, 12, 19]), vi("y3", F, [1, 6, 11, 18]),
     vi("y4", F, [1, 6, 22, 19]), vi("y5", F, [1, 6, 12, 19]), vi("i5", TensorProto.INT64, [1, 6, 12, 19]),
     vi("y6", F, [1, 6, 12, 37]), vi("y7", F, [1, 4, 5, 75])], [])

# output channels as the columns over an im2col copy's positions (AVX-512:
# conv_cols.c imp_conv_im2col_cols, op_conv.c im2col_cols_fits): a 3x3/2,
# 240 -> 64 to 7x7 (its 276 KB panels k-sliced on 1 MiB of L2, 7 row blocks
# of 7: gemm_block.c takes rows that divide 49) with its bias and Relu as an
# output, and a 3x3/2
# dilated 2 with asymmetric pads, 40 -> 32 to 14x14 (196 positions), read
# transposed by a residual Add of another input, and a 1x1/2, 240 -> 64 to
# 7x7 with a bias as an output (a plain product over 7 row blocks of 7)
rq = np.random.default_rng(14)
save("convs_im2col_cols", [
    helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Relu", ["c1"], ["y1"]),
    helper.make_node("Conv", ["x2", "c2w"], ["c2"], pads=[2, 1, 1, 2], strides=[2, 2], dilations=[2, 2]),
    helper.make_node("Add", ["c2", "s"], ["y2"]),
    helper.make_node("Conv", ["x", "c3w", "c3b"], ["y3"], strides=[2, 2]),
], [vi("x", F, [1, 240, 14, 14]), vi("x2", F, [1, 40, 29, 29]), vi("s", F, [1, 32, 14, 14])],
    [vi("y1", F, [1, 64, 7, 7]), vi("y2", F, [1, 32, 14, 14]), vi("y3", F, [1, 64, 7, 7])],
    [w("c1w", (64, 240, 3, 3), 0.05, rq), w("c1b", (64,), 0.1, rq), w("c2w", (32, 40, 3, 3), 0.1, rq),
     w("c3w", (64, 240, 1, 1), 0.1, rq), w("c3b", (64,), 0.1, rq)])

# symbolic batch and seq through the ops that took only static shapes
# before (2026-12-06): CumSum along seq, OneHot of the ids (a constant
# depth) into a MatMul, GatherElements by the ids, a QuantizeLinear /
# DequantizeLinear pair, Einsum, DepthToSpace over [batch, 8, seq, 1],
# ThresholdedRelu and Shrink, an LSTM over the first 3 positions
# (transposed to [3, batch, 8]) with a symbolic batch (its steps are
# unrolled: seq >= 3), a TopK of k = seq read from the shape (a sort, as
# torch.sort exports it), a sum divided by the float of seq - 1,
# reflect and edge padding of the symbolic axes, and bilinear Resizes of
# [batch, 1, seq, 8] (x2 half-pixel, x3 along seq asymmetric, and to the
# size [batch, 1, seq + 1, 9] read from its shape: half-pixel and
# align_corners)
rs = np.random.default_rng(15)
U8 = TensorProto.UINT8
# nearest Resizes of [batch, 1, seq, 8] to sizes read from its shape, one
# per coordinate and rounding mode: up to [batch, 1, seq + 1, 9] ("sz") and
# down to [batch, 1, seq, 5] ("szd")
NEAREST_CASES = [("asym_floor", "sz", "asymmetric", "floor"),
                 ("half_prefer_floor", "sz", "half_pixel", "round_prefer_floor"),
                 ("pytorch_prefer_ceil", "sz", "pytorch_half_pixel", "round_prefer_ceil"),
                 ("align_ceil", "sz", "align_corners", "ceil"),
                 ("tf_nn_down", "szd", "tf_half_pixel_for_nn", "round_prefer_floor"),
                 ("half_down", "szd", "half_pixel", "round_prefer_ceil")]
save("symbolic_more", [
    helper.make_node("CumSum", ["x", "one"], ["cs"]),
    helper.make_node("OneHot", ["ids", "depth", "onoff"], ["oh"], axis=-1),
    helper.make_node("MatMul", ["oh", "Woh"], ["ohp"]),
    helper.make_node("Add", ["cs", "ohp"], ["y_cs"]),
    helper.make_node("Unsqueeze", ["ids", "two1"], ["ids3"]),
    helper.make_node("GatherElements", ["x", "ids3"], ["y_ge"], axis=2),
    helper.make_node("QuantizeLinear", ["x", "qs", "qz"], ["xq"]),
    helper.make_node("DequantizeLinear", ["xq", "qs", "qz"], ["y_qdq"]),
    helper.make_node("Einsum", ["x", "We"], ["ein"], equation="bsd,de->bse"),
    helper.make_node("ThresholdedRelu", ["ein"], ["tr"], alpha=0.05),
    helper.make_node("Shrink", ["tr"], ["y_ein"], lambd=0.02, bias=0.01),
    helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
    helper.make_node("Unsqueeze", ["xt", "three1"], ["x4"]),
    helper.make_node("DepthToSpace", ["x4"], ["y_d2s"], blocksize=2, mode="CRD"),
    helper.make_node("Slice", ["x", "zero1", "three1", "one1"], ["x3"]),
    helper.make_node("Transpose", ["x3"], ["x3t"], perm=[1, 0, 2]),
    helper.make_node("LSTM", ["x3t", "lw", "lr", "lb"], ["y_lstm", "h_lstm"], hidden_size=5),
    helper.make_node("Shape", ["x"], ["shape"]),
    helper.make_node("Gather", ["shape", "one1"], ["seq1"], axis=0),
    helper.make_node("TopK", ["cs", "seq1"], ["y_sort", "i_sort"], axis=1, largest=0),
    helper.make_node("Sub", ["seq1", "one1"], ["seqm1"]),
    helper.make_node("Cast", ["seqm1"], ["cnt"], to=F),
    helper.make_node("ReduceSum", ["x", "one1"], ["xsum"], keepdims=1),
    helper.make_node("Div", ["xsum", "cnt"], ["y_div"]),
    helper.make_node("Pad", ["x", "pads_r"], ["y_reflect"], mode="reflect"),
    helper.make_node("Pad", ["x", "pads_e"], ["y_edge"], mode="edge"),
    helper.make_node("Unsqueeze", ["x", "one1"], ["x1"]),
    helper.make_node("Resize", ["x1", "", "sc22"], ["y_bilinear"], mode="linear"),
    helper.make_node("Resize", ["x1", "", "sc31"], ["y_bilinear_asym"], mode="linear",
                     coordinate_transformation_mode="asymmetric"),
    helper.make_node("Shape", ["x1"], ["shape4"]),
    helper.make_node("Add", ["shape4", "grow"], ["sz"]),
    helper.make_node("Resize", ["x1", "", "", "sz"], ["y_resize_size"], mode="linear"),
    helper.make_node("Resize", ["x1", "", "", "sz"], ["y_resize_ac"], mode="linear",
                     coordinate_transformation_mode="align_corners"),
    helper.make_node("Add", ["shape4", "shrink"], ["szd"]),
    helper.make_node("Gather", ["shape", "one"], ["seq0"], axis=0),
    helper.make_node("Cast", ["seq0"], ["seqf"], to=F),
    helper.make_node("Range", ["f0", "seqf", "f1"], ["y_pos"]),
] + [helper.make_node("Resize", ["x1", "", "", size], ["y_near_" + name], mode="nearest",
                      coordinate_transformation_mode=ctm, nearest_mode=nm) for name, size, ctm, nm in NEAREST_CASES
], [vi("x", F, ["batch", "seq", 8]), vi("ids", I64, ["batch", "seq"])],
    [vi("y_cs", F, ["batch", "seq", 8]), vi("y_ge", F, ["batch", "seq", 1]), vi("y_qdq", F, ["batch", "seq", 8]),
     vi("y_ein", F, ["batch", "seq", 6]), vi("y_d2s", F, ["batch", 2, "seq2", 2]),
     vi("y_lstm", F, [3, 1, "batch", 5]), vi("h_lstm", F, [1, "batch", 5]), vi("y_sort", F, ["batch", "seq", 8]),
     vi("i_sort", I64, ["batch", "seq", 8]), vi("y_div", F, ["batch", 1, 8]), vi("y_reflect", F, ["batch", "seq3", 8]),
     vi("y_edge", F, ["batch2", "seq", 9]), vi("y_bilinear", F, ["batch", 1, "seq2", 16]),
     vi("y_bilinear_asym", F, ["batch", 1, "seq3", 8]), vi("y_resize_size", F, ["batch", 1, "seq1", 9]),
     vi("y_resize_ac", F, ["batch", 1, "seq1", 9]), vi("y_pos", F, ["seq"])] +
    [vi("y_near_" + name, F, ["batch", 1, "seqn", "wn"]) for name, _, _, _ in NEAREST_CASES],
    [i64("one", 1), i64("depth", 6), numpy_helper.from_array(np.array([0.0, 1.0], np.float32), "onoff"),
     w("Woh", (6, 8), 1.0, rs), i64("two1", [2]), i64("three1", [3]), i64("zero1", [0]), i64("one1", [1]),
     numpy_helper.from_array(np.array(0.02, np.float32), "qs"), numpy_helper.from_array(np.array(128, np.uint8), "qz"),
     w("We", (8, 6), 0.5, rs), w("lw", (1, 20, 8), 0.5, rs), w("lr", (1, 20, 5), 0.5, rs), w("lb", (1, 40), 0.1, rs),
     i64("pads_r", [0, 1, 0, 0, 2, 0]), i64("pads_e", [2, 0, 1, 0, 0, 0]),
     numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc22"),
     numpy_helper.from_array(np.array([1, 1, 3, 1], np.float32), "sc31"), i64("grow", [0, 0, 1, 1]),
     i64("shrink", [0, 0, 0, -3]), numpy_helper.from_array(np.array(0.0, np.float32), "f0"),
     numpy_helper.from_array(np.array(1.0, np.float32), "f1")])

# Col2Im (opset 18): name, N, C, image, block, dilations, pads, strides
COL2IM = [
    ("c2i_overlap", 1, 2, [7, 8], [3, 3], [1, 1], [1, 1, 1, 1], [2, 2]),
    ("c2i_gaps", 2, 3, [9, 10], [2, 2], [1, 1], [0, 0, 0, 0], [3, 4]),
    ("c2i_dilated", 1, 2, [11, 9], [3, 2], [2, 3], [2, 0, 1, 3], [1, 2]),
    ("c2i_1d", 2, 4, [20], [5], [1], [3, 1], [2]),
    ("c2i_3d", 1, 2, [5, 6, 4], [2, 3, 2], [1, 1, 1], [1, 0, 0, 1, 1, 0], [2, 1, 1]),
]


def col2im_blocks(img, blk, dil, pads, st):
    nsp = len(img)
    return int(np.prod([(img[i] + pads[i] + pads[nsp + i] - (dil[i] * (blk[i] - 1) + 1)) // st[i] + 1
                        for i in range(nsp)]))


save("col2im", [
    helper.make_node("Col2Im", ["x_" + nm, nm + "_img", nm + "_blk"], ["y_" + nm], dilations=d, pads=p, strides=st)
    for nm, _, _, _, _, d, p, st in COL2IM
], [vi("x_" + nm, F, [N, C * int(np.prod(b)), col2im_blocks(im, b, d, p, st)]) for nm, N, C, im, b, d, p, st in COL2IM],
    [vi("y_" + nm, F, [N, C] + im) for nm, N, C, im, _, _, _, _ in COL2IM],
    [i64(nm + "_img", im) for nm, _, _, im, _, _, _, _ in COL2IM] +
    [i64(nm + "_blk", b) for nm, _, _, _, b, _, _, _ in COL2IM], opset=18)

# Pads of a symbolic axis read by a window: the taps read the padded view
# under masks whose bounds cross for short lengths (ir/view.c slice_mask);
# every length whose padded axis holds the window must run, a shorter one
# be refused (ERR_SHAPE). Weights from a generator of their own.
rp = np.random.default_rng(16)


def pad_conv(tag, pads, w_shape, value, conv):
    """Pad x by `pads` (with `value`, None: 0), then a Conv with weight
    w_shape, a bias and the attributes `conv`: y_TAG."""
    pad_in = ["x", "pads_" + tag] + (["v_" + tag] if value is not None else [])
    inits = [i64("pads_" + tag, pads), w("w_" + tag, w_shape, 0.5, rp), w("b_" + tag, w_shape[:1], 0.5, rp)]
    if value is not None:
        inits.append(numpy_helper.from_array(np.array(value, np.float32), "v_" + tag))
    return ([helper.make_node("Pad", pad_in, ["xp_" + tag]),
             helper.make_node("Conv", ["xp_" + tag, "w_" + tag, "b_" + tag], ["y_" + tag], **conv)], inits)


def pad_conv_model(name, x_dims, cases, extra=([], [], [])):
    """x[1, 2, x_dims...] through pad_conv's cases, and `extra` (nodes,
    initializers, outputs) reading x too."""
    nodes, inits, outs = list(extra[0]), list(extra[1]), list(extra[2])
    for tag, pads, w_shape, value, conv in cases:
        n, i = pad_conv(tag, pads, w_shape, value, conv)
        nodes += n
        inits += i
        outs.append(vi("y_" + tag, F, [1, w_shape[0]] + ["%s_o%d" % (tag, k) for k in range(len(x_dims))]))
    save(name, nodes, [vi("x", F, [1, 2] + x_dims)], outs, inits)


pad_conv_model("symbolic_padconv", ["t"], [
    ("left", [0, 0, 2, 0, 0, 0], (3, 2, 3), None, {}),
    ("right", [0, 0, 0, 0, 0, 2], (3, 2, 3), None, {}),
    ("both_d2", [0, 0, 2, 0, 0, 2], (3, 2, 3), None, {"dilations": [2]}),
    ("tcn", [0, 0, 8, 0, 0, 0], (4, 2, 3), None, {"dilations": [4]}),
    ("left_s2", [0, 0, 2, 0, 0, 0], (3, 2, 3), None, {"strides": [2]}),
    ("both_s2d2", [0, 0, 3, 0, 0, 1], (3, 2, 3), None, {"strides": [2], "dilations": [2]}),
    ("padded", [0, 0, 2, 0, 0, 0], (3, 2, 3), None, {"pads": [1, 1]}),
    ("value", [0, 0, 2, 0, 0, 1], (3, 2, 3), 0.5, {}),
], ([helper.make_node("Pad", ["x", "pads_pool"], ["xp_pool"]),
     helper.make_node("AveragePool", ["xp_pool"], ["y_pool"], kernel_shape=[3], strides=[2])],
    [i64("pads_pool", [0, 0, 2, 0, 0, 0])], [vi("y_pool", F, [1, 2, "pool_o0"])]))
pad_conv_model("symbolic_padconv2d", ["H", "W"], [
    ("top", [0, 0, 2, 0, 0, 0, 0, 0], (3, 2, 3, 3), None, {"pads": [0, 1, 0, 1]}),
    ("sides_s12", [0, 0, 0, 2, 0, 0, 0, 1], (3, 2, 3, 3), None, {"pads": [1, 0, 1, 0], "strides": [1, 2]}),
    ("all_d2", [0, 0, 1, 2, 0, 0, 3, 2], (3, 2, 3, 3), None, {"dilations": [2, 2]}),
])
pad_conv_model("symbolic_padconv_k5", ["t"], [("left", [0, 0, 2, 0, 0, 0], (3, 2, 5), None, {})])
with open(os.path.join(HERE, "symbolic_padconv_k5_t2.pb"), "wb") as f:
    f.write(numpy_helper.from_array(np.linspace(-1, 1, 4, dtype=np.float32).reshape(1, 2, 2), "x").SerializeToString())

# 1-wide kernels whose padding and stride give as many outputs as inputs
# (the outputs wholly in the padding must be the bias): name, x shape, M,
# pads, strides
K1 = [("k1_s2", [1, 1, 3], 8, [1, 1], [2]), ("k1_s3", [1, 2, 3], 9, [2, 2], [3]),
      ("k1_2d", [1, 2, 3, 3], 16, [1, 1, 1, 1], [2, 2]), ("k1_few", [1, 1, 3], 4, [1, 1], [2])]
rk = np.random.default_rng(31)
save("conv_k1_pads", [helper.make_node("Conv", ["x_" + nm, nm + "_w", nm + "_b"], ["y_" + nm], pads=p, strides=st)
                      for nm, _, _, p, st in K1],
     [vi("x_" + nm, F, xs) for nm, xs, _, _, _ in K1], [vi("y_" + nm, F, [xs[0], M] + xs[2:]) for nm, xs, M, _, _ in K1],
     [numpy_helper.from_array(rk.standard_normal([M, xs[1]] + [1] * (len(xs) - 2)).astype(np.float32), nm + "_w")
      for nm, xs, M, _, _ in K1] +
     [numpy_helper.from_array(rk.standard_normal(M).astype(np.float32), nm + "_b") for nm, _, M, _, _ in K1])

# x[6:9] of a symbolic axis, then y * 2: the compiler assumes n >= 9 and
# the entry checks it; run and verify build it again for a shorter n.
save("slice_end_sym", [helper.make_node("Slice", ["x", "s_start", "s_end", "s_axes"], ["xs"]),
                       helper.make_node("Add", ["xs", "xs"], ["y"])],
     [vi("x", F, ["n", 3])], [vi("y", F, ["m", 3])], [i64("s_start", [6]), i64("s_end", [9]), i64("s_axes", [0])])
for n in (12, 7, 16):  # run's data sets: symbolic, pinned, symbolic again
    d = os.path.join(HERE, "slice_end_sym_sets", "n%d" % n)
    os.makedirs(d, exist_ok=True)
    x = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
    for nm, arr in (("input_0", x), ("output_0", x[6:9] * 2)):
        with open(os.path.join(d, nm + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, "x" if nm == "input_0" else "y").SerializeToString())

# Comparisons of a tensor with itself (found by the differential fuzzer:
# an integer Min(x, x) printed `acc0 < acc0`, which gcc's -Werror
# rejects): integer Min, Max, Less, Greater, Equal, LessOrEqual, Where;
# float Less, Equal (false at NaN: self_compare_in1.pb holds NaNs)
I32 = TensorProto.INT32
B = TensorProto.BOOL
SELF = [("Min", "x", I32), ("Max", "x", I32), ("Less", "x", B), ("Greater", "x", B), ("Equal", "x", B),
        ("LessOrEqual", "x", B), ("Less", "f", B), ("Equal", "f", B)]
save("self_compare", [helper.make_node(op, [src, src], ["y%d" % i]) for i, (op, src, _) in enumerate(SELF)] +
     [helper.make_node("Less", ["x", "x"], ["lt"]), helper.make_node("Where", ["lt", "x", "x"], ["y_where"]),
      helper.make_node("ReduceMax", ["x"], ["r"], axes=[1], keepdims=1), helper.make_node("Min", ["r", "r"], ["y_rmin"]),
      helper.make_node("ReduceMin", ["x"], ["r2"], axes=[1], keepdims=1), helper.make_node("Less", ["r2", "r2"], ["y_rlt"])],
     [vi("x", I32, [2, 5]), vi("f", F, [6])],
     [vi("y%d" % i, t, [2, 5] if src == "x" else [6]) for i, (_, src, t) in enumerate(SELF)] +
     [vi("y_where", I32, [2, 5]), vi("y_rmin", I32, [2, 1]), vi("y_rlt", B, [2, 1])], [])
for i, arr in enumerate((np.array([[3, -7, 0, 2147483647, -2147483648], [1, 1, 5, -5, 9]], np.int32),
                         np.array([0.5, np.nan, -1.0, np.inf, np.nan, -0.0], np.float32))):
    with open(os.path.join(HERE, "self_compare_in%d.pb" % i), "wb") as f:
        f.write(numpy_helper.from_array(arr, "xf"[i]).SerializeToString())

# A 15 x 6 by 6 x 33 product: on 2 threads its register blocks of 8 rows
# split 8 + 7, the 8th row cleared and summed under `if (c1 == 0)`, which
# gcc -O3 -Werror rejected as "maybe uninitialized" (differential fuzzer)
rm = np.random.default_rng(41)
save("matmul_rows15", [helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", F, [15, 6])],
     [vi("y", F, [15, 33])], [numpy_helper.from_array(rm.standard_normal((6, 33)).astype(np.float32), "w")])

with open(os.path.join(HERE, "tied_ids.pb"), "wb") as f:
    f.write(numpy_helper.from_array(np.array([[0, 5, 299, 17, 4], [1, 2, 3, 250, 9]], np.int64), "ids").SerializeToString())
print("wrote", HERE)

# Quantized twice, Q -> DQ -> Q -> DQ (differential fuzzer): computed as
# written, each value rounded to the first scale, then to the second.
# onnxruntime's DoubleQDQPairsRemover drops the middle pair, which moves
# values by one or two steps of the second scale (ort_run.js disables it).
save("double_qdq", [helper.make_node("QuantizeLinear", ["x", "s1", "z1"], ["q1"]),
                    helper.make_node("DequantizeLinear", ["q1", "s1", "z1"], ["d1"]),
                    helper.make_node("QuantizeLinear", ["d1", "s2", "z2"], ["q2"]),
                    helper.make_node("DequantizeLinear", ["q2", "s2", "z2"], ["y"])],
     [vi("x", F, [4, 40])], [vi("y", F, [4, 40])],
     [numpy_helper.from_array(np.array(0.125, np.float32), "s1"), numpy_helper.from_array(np.array(128, np.uint8), "z1"),
      numpy_helper.from_array(np.array(0.0521509, np.float32), "s2"), numpy_helper.from_array(np.array(211, np.uint8), "z2")])
with open(os.path.join(HERE, "double_qdq_x.pb"), "wb") as f:  # -20 to 20 in steps of 1/4, and the ties between
    f.write(numpy_helper.from_array((np.arange(-80, 80, dtype=np.float32) / 4 + 1 / 16).reshape(4, 40), "x")
            .SerializeToString())

# LpPool and GlobalLpPool (p = 1, 2, 3; pads, strides, 1-D and 2-D; a
# symbolic batch): (sum of |x|^p over the window)^(1/p), the padding adding 0
LP = [("lp1", [3, 3], [1, 1, 1, 1], [2, 2], 1), ("lp2", [2, 3], [0, 1, 1, 0], [1, 2], 2),
      ("lp3", [3, 2], [1, 0, 0, 1], [2, 1], 3)]
save("lppool", [helper.make_node("LpPool", ["x"], ["y_" + nm], kernel_shape=k, pads=pd, strides=st, p=p)
                for nm, k, pd, st, p in LP] +
     [helper.make_node("LpPool", ["x1"], ["y_1d"], kernel_shape=[3], pads=[1, 1], strides=[2], p=2),
      helper.make_node("GlobalLpPool", ["x"], ["y_g2"], p=2), helper.make_node("GlobalLpPool", ["x1"], ["y_g3"], p=3)],
     [vi("x", F, ["n", 3, 9, 8]), vi("x1", F, ["n", 2, 11])],
     [vi("y_" + nm, F, ["n", 3] + hw) for (nm, _, _, _, _), hw in zip(LP, ([5, 4], [9, 4], [4, 8]))] +
     [vi("y_1d", F, ["n", 2, 6]), vi("y_g2", F, ["n", 3, 1, 1]), vi("y_g3", F, ["n", 2, 1])], [])

# LpNormalization of vectors of zeros (zeros, as onnxruntime gives; 0 / 0
# was NaN) and a NaN (NaN), p = 1 and 2; the window functions of one
# element, symmetric (NaN by ONNX's definition, 0 / (size - 1), and
# onnxruntime's) and periodic (differential fuzzer)
save("lpnorm_zeros", [helper.make_node("LpNormalization", ["x"], ["y1"], axis=1, p=1),
                      helper.make_node("LpNormalization", ["x"], ["y2"], axis=-1, p=2),
                      helper.make_node("LpNormalization", ["x"], ["y0"], axis=0, p=2)] +
     [helper.make_node(w, ["one"], ["w_%s_%d" % (w, per)], periodic=per)
      for w in ("HannWindow", "HammingWindow", "BlackmanWindow") for per in (0, 1)],
     [vi("x", F, [4, 5])], [vi(o, F, [4, 5]) for o in ("y1", "y2", "y0")] +
     [vi("w_%s_%d" % (w, per), F, [1]) for w in ("HannWindow", "HammingWindow", "BlackmanWindow") for per in (0, 1)],
     [numpy_helper.from_array(np.array(1, np.int64), "one")])
with open(os.path.join(HERE, "lpnorm_zeros_x.pb"), "wb") as f:
    f.write(numpy_helper.from_array(np.array([[0, 0, 0, 0, 0], [1, -2, 0, 3, 0.5], [0, 0, np.nan, 0, 0],
                                              [0, -0.0, 0, 0, 0]], np.float32), "x").SerializeToString())

# x[1:3] of a symbolic axis, then y[0:-2:-1] of it, then TopK(k = 1): the
# symbolic build assumes n >= 3, under which y is empty and TopK refused;
# run and verify compile for the inputs' n instead (differential fuzzer:
# n = 2 was refused), compile names the assumption
save("slice_assumed", [helper.make_node("Slice", ["x", "a_start", "a_end", "a_axes"], ["xs"]),
                       helper.make_node("Slice", ["xs", "b_start", "b_end", "b_axes", "b_steps"], ["y"]),
                       helper.make_node("TopK", ["y", "k"], ["v", "i"], axis=0)],
     [vi("x", F, ["n"])], [vi("v", F, [1]), vi("i", TensorProto.INT64, [1])],
     [i64("a_start", [1]), i64("a_end", [3]), i64("a_axes", [0]), i64("b_start", [0]), i64("b_end", [-2]),
      i64("b_axes", [0]), i64("b_steps", [-1]), i64("k", [1])])

# Pads of rows of 2 (x[15, 2] by 3 rows before and 2 after, 0.25; the
# same of an int64 copy): gcc 12 at -O3 with AVX2 or AVX-512 vectorised
# the row loop over the unrolled pair with masked loads and gave 6 values
# of 0 (a mask reused across vector iterations); the loop is now split
# where its masks hold (codegen/emit.c, split_loop; differential fuzzer)
save("pad_pairs", [helper.make_node("Pad", ["x", "pads", "v"], ["y"]),
                   helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT64),
                   helper.make_node("Pad", ["xi", "pads", "vi"], ["yi"])],
     [vi("x", F, [15, 2])], [vi("y", F, [20, 2]), vi("yi", TensorProto.INT64, [20, 2])],
     [i64("pads", [3, 0, 2, 0]), numpy_helper.from_array(np.array(0.25, np.float32), "v"),
      numpy_helper.from_array(np.array(7, np.int64), "vi")])

# float64 through LayerNormalization and a MatMul scaled by a constant
# (differential fuzzer, float64 graphs, compared at --rtol 1e-9): the
# statistics were computed in float32 (stash_type's, as ONNX's function
# body casts), 2e-7 of the scale from onnxruntime, ONNX's reference and
# PyTorch, which normalise float64 in float64; Mean and InvStdDev stay
# float32. onnxruntime's MatMulScaleFusion rounds the scale to float32
# (ort_run.js disables it).
D = TensorProto.DOUBLE
rng_f64 = np.random.default_rng(64)
save("f64_precision", [helper.make_node("LayerNormalization", ["x", "ln_s", "ln_b"], ["ln", "mean", "inv"], axis=-1),
                       helper.make_node("MatMul", ["x", "w"], ["xw"]),
                       helper.make_node("Mul", ["xw", "scale"], ["y"])],
     [vi("x", D, ["n", 33])], [vi("ln", D, ["n", 33]), vi("mean", F, ["n", 1]), vi("inv", F, ["n", 1]),
                               vi("y", D, ["n", 17])],
     [numpy_helper.from_array(rng_f64.standard_normal(33), "ln_s"),
      numpy_helper.from_array(rng_f64.standard_normal(33), "ln_b"),
      numpy_helper.from_array(rng_f64.standard_normal((33, 17)), "w"),
      numpy_helper.from_array(np.array(0.3217), "scale")])

# float64 rounded to float32 and back (Cast, Cast), 858 values and 3, and
# the 3 doubled: gcc 12.2 at -O3 vectorised a pair of (double)(float)x by
# SLP without the conversions (the last 2 of 858 values, 2 of the 3 kept
# their float64 digits); the kernels that round float64 to float32 now
# carry O2C_NO_SLP (codegen/program.c; differential fuzzer, float64 graphs)
save("f64_round_trip", [helper.make_node("Cast", ["x"], ["xf"], to=F),
                        helper.make_node("Cast", ["xf"], ["y"], to=D),
                        helper.make_node("Cast", ["s"], ["sf"], to=F),
                        helper.make_node("Cast", ["sf"], ["sd"], to=D),
                        helper.make_node("Mul", ["sd", "two"], ["z"])],
     [vi("x", D, [2, 429]), vi("s", D, [3])], [vi("y", D, [2, 429]), vi("z", D, [3])],
     [numpy_helper.from_array(np.array(2.0), "two")])

# Two float64 halves along an axis of 16 rows of 4 (Concat), each row a
# loop of 4: gcc 12 at -O3 with AVX-512 vectorised the threaded rows
# function's loop over the two masked reads wrongly (1612 of 1984 values;
# int64 over rows of 8 likewise); such a loop whose masks share no range is
# now cut where each holds or fails (codegen/emit.c, split_loop;
# differential fuzzer, seed 31337)
save("concat_halves_f64", [helper.make_node("Relu", ["x"], ["r"]),
                           helper.make_node("Concat", ["r", "x"], ["y"], axis=1),
                           helper.make_node("Neg", ["xi"], ["ri"]),
                           helper.make_node("Concat", ["ri", "xi"], ["yi"], axis=1)],
     [vi("x", D, [31, 8, 4]), vi("xi", TensorProto.INT64, [31, 3, 8])],
     [vi("y", D, [31, 16, 4]), vi("yi", TensorProto.INT64, [31, 6, 8])], [])

# float16 rows of 5 and 8 padded by 3 rows before and 2 after (7.0): read
# as float and stored through o2c_f2h, gcc 12 at -O3 with AVX-512
# vectorised the loop over the rows wrongly (max abs err 3.5); loops over
# rows of up to 8 are now split where their masks hold (codegen/emit.c,
# SPLIT_INNER_MAX; a sweep of Pad and Concat over types and row lengths)
H = TensorProto.FLOAT16
save("pad_rows_f16", [helper.make_node("Pad", ["x", "pads", "v"], ["y"]),
                      helper.make_node("Pad", ["x8", "pads", "v"], ["y8"])],
     [vi("x", H, [31, 6, 5]), vi("x8", H, [31, 6, 8])], [vi("y", H, [31, 11, 5]), vi("y8", H, [31, 11, 8])],
     [i64("pads", [0, 3, 0, 0, 2, 0]), numpy_helper.from_array(np.array(7, np.float16), "v")])

# float64 rows of 6 reflected into rows of 11 (pads 2 and 3): gcc 12.2
# with AVX-512 vectorised the loop over the rows with permutations of 8
# doubles, one of which it turned into vpermilpd (within pairs; elements
# 2 and 3 came from elsewhere): 9 of 341 values wrong. A kernel computing
# in float64 now asks for 256-bit vectors (O2C_F64_YMM, codegen/program.c;
# fuzz/sweep_masks.py --kinds copies)
save("pad_reflect_f64", [helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")],
     [vi("x", D, [31, 6, 1])], [vi("y", D, [31, 11, 1])], [i64("pads", [0, 2, 0, 0, 3, 0])])

# 3x3 convolutions as Winograd's F(2x2, 3x3) (importer/conv_winograd.c;
# single-threaded builds, 48 channels or more, more than 12 output rows and
# columns): a batch of 2 over x[2, 48, 15, 29] (odd rows and columns: the
# last tile's second row and column never read) padded 1 to 64 channels
# with a bias and a Relu, then padded [0, 2, 1, 0] (asymmetric) to 48
# channels without a bias as an output; and from x padded [2, 1, 0, 1] to
# 48 with a bias, a residual Add of x and a Relu. Weights from a generator
# of their own.
wr = np.random.default_rng(33)
save("convs_winograd", [
    helper.make_node("Conv", ["x", "g1w", "g1b"], ["g1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["g1"], ["r1"]),
    helper.make_node("Conv", ["r1", "g2w"], ["y1"], pads=[0, 2, 1, 0]),
    helper.make_node("Conv", ["x", "g3w", "g3b"], ["g3"], pads=[2, 1, 0, 1]),
    helper.make_node("Add", ["g3", "x"], ["s3"]),
    helper.make_node("Relu", ["s3"], ["y2"]),
], [vi("x", F, [2, 48, 15, 29])], [vi("y1", F, [2, 48, 14, 29]), vi("y2", F, [2, 48, 15, 29])],
    [w("g1w", (64, 48, 3, 3), gen=wr), w("g1b", (64,), gen=wr), w("g2w", (48, 64, 3, 3), gen=wr),
     w("g3w", (48, 48, 3, 3), gen=wr), w("g3b", (48,), gen=wr)])
