#!/usr/bin/python3
"""A small conv net in the form onnxruntime's quantize_dynamic gives a Conv.

Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy).

Each Conv (random seeded float weights, quantized here with numpy) becomes
  DynamicQuantizeLinear(x) -> (x_q uint8, x_scale, x_zp)
  ConvInteger(x_q, W_q int8, x_zp, w_zp) -> int32
  Mul(x_scale, w_scale) -> multiplier; Cast(int32 -> float); Mul; Add(bias)
then Relu. Layers: 3 -> 8 channels 3x3 pad 1; 8 -> 16 3x3 stride 2 pad 1
with a nonzero weight zero point; 16 -> 16 1x1; then
GlobalAveragePool. Input x [1, 3, H, W] with H and W symbolic.

Output: OUT/model.onnx, OUT/x.pb and OUT/x2.pb, inputs [1, 3, 12, 16] and
[1, 3, 21, 9] (onnxruntime is
the reference at test time: `onnx2c-caten verify`).

Also OUT/seg.onnx and OUT/seg_x.pb: layers shaped like the int8
segmentation net's (tests/realmodels seg_int8: uint8 weights with zero
points, 3x3 dilated by 1, 2 and 4, a stride-2 3x3, a 1x1, an int8 weight,
a single-channel 3x3 head, Sigmoid), static [1, 3, S, S] (--seg-size, 64),
every ConvInteger's int32 result an output of its own so that `verify`
compares them exactly.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T


def quant_weight(w, asymmetric):
    """int8 weights per tensor (onnxruntime's ConvInteger takes no
    per-channel zero point): symmetric, or asymmetric with a zero point."""
    if not asymmetric:
        s = np.float32(np.abs(w).max() / 127.0)
        return np.clip(np.round(w / s), -127, 127).astype(np.int8), s, np.int8(0)
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    s = np.float32((hi - lo) / 255.0)
    zp = int(np.clip(np.round(-128 - lo / s), -128, 127))
    return np.clip(np.round(w / s) + zp, -128, 127).astype(np.int8), s, np.int8(zp)


def quant_weight_u8(w):
    """uint8 weights with a zero point, as the segmentation net stores them."""
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    s = np.float32((hi - lo) / 255.0)
    zp = int(np.clip(np.round(-lo / s), 0, 255))
    return np.clip(np.round(w / s) + zp, 0, 255).astype(np.uint8), s, np.uint8(zp)


def seg_model(rng, size):
    """The segmentation net's ConvInteger layers in small (see the docstring)."""
    nodes, inits, outs = [], [], []
    x = "x"
    # (in, out, kernel, stride, dilation, uint8 weight)
    layers = [(3, 16, 3, 1, 1, True), (16, 32, 3, 2, 1, True), (32, 32, 3, 1, 2, True),
              (32, 64, 1, 1, 1, True), (64, 32, 3, 1, 4, False), (32, 32, 3, 1, 1, True),
              (32, 1, 3, 1, 1, True)]
    for i, (ci, co, k, st, dl, u8) in enumerate(layers):
        w = (rng.standard_normal((co, ci, k, k)) / np.sqrt(ci * k * k)).astype(np.float32)
        b = (0.1 * rng.standard_normal(co)).astype(np.float32)
        q, s, z = quant_weight_u8(w) if u8 else quant_weight(w, True)
        n = f"s{i}"
        pad = dl * (k - 1) // 2
        inits += [nh.from_array(q, n + "_wq"), nh.from_array(np.asarray(s), n + "_ws"),
                  nh.from_array(np.asarray(z), n + "_wz"), nh.from_array(b.reshape(co, 1, 1), n + "_b")]
        last = i == len(layers) - 1
        nodes += [
            h.make_node("DynamicQuantizeLinear", [x], [n + "_xq", n + "_xs", n + "_xz"], name=n + "_dql"),
            h.make_node("ConvInteger", [n + "_xq", n + "_wq", n + "_xz", n + "_wz"], [n + "_i32"], name=n,
                        kernel_shape=[k, k], strides=[st, st], pads=[pad] * 4, dilations=[dl, dl]),
            h.make_node("Mul", [n + "_xs", n + "_ws"], [n + "_mult"], name=n + "_scales_mul"),
            h.make_node("Cast", [n + "_i32"], [n + "_f"], name=n + "_cast", to=T.FLOAT),
            h.make_node("Mul", [n + "_f", n + "_mult"], [n + "_y"], name=n + "_mul"),
            h.make_node("Add", [n + "_y", n + "_b"], [n + "_yb"], name=n + "_bias"),
            h.make_node("Sigmoid" if last else "Relu", [n + "_yb"], ["y" if last else n + "_r"], name=n + "_act"),
        ]
        o = size // (2 if i >= 1 else 1)
        outs.append(h.make_tensor_value_info(n + "_i32", T.INT32, [1, co, o, o]))
        x = n + "_r"
    outs.insert(0, h.make_tensor_value_info("y", T.FLOAT, [1, 1, size // 2, size // 2]))
    g = h.make_graph(nodes, "convinteger_seg", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, size, size])],
                     outs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="make_convinteger")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seg-size", type=int, default=64, help="H = W of seg.onnx's input")
    p.add_argument("--seg-only", action="store_true", help="write seg.onnx and seg_x.pb only")
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    os.makedirs(a.out, exist_ok=True)
    srng = np.random.default_rng(a.seed + 1)
    onnx.save(seg_model(srng, a.seg_size), os.path.join(a.out, "seg.onnx"))
    xin = srng.standard_normal((1, 3, a.seg_size, a.seg_size)).astype(np.float32)
    with open(os.path.join(a.out, "seg_x.pb"), "wb") as f:
        f.write(nh.from_array(xin, "x").SerializeToString())
    print(f"{a.out}/seg.onnx: input [1, 3, {a.seg_size}, {a.seg_size}]")
    if a.seg_only:
        return
    nodes, inits = [], []
    x = "x"
    layers = [(3, 8, 3, 1, 1, False), (8, 16, 3, 2, 1, True), (16, 16, 1, 1, 0, False)]
    for i, (ci, co, k, st, pad, asym) in enumerate(layers):
        w = (rng.standard_normal((co, ci, k, k)) / np.sqrt(ci * k * k)).astype(np.float32)
        b = (0.1 * rng.standard_normal(co)).astype(np.float32)
        q, s, z = quant_weight(w, asym)
        n = f"c{i}"
        inits += [nh.from_array(q, n + "_wq"), nh.from_array(np.asarray(s), n + "_ws"),
                  nh.from_array(np.asarray(z), n + "_wz"), nh.from_array(b.reshape(co, 1, 1), n + "_b")]
        nodes += [
            h.make_node("DynamicQuantizeLinear", [x], [n + "_xq", n + "_xs", n + "_xz"], name=n + "_dql"),
            h.make_node("ConvInteger", [n + "_xq", n + "_wq", n + "_xz", n + "_wz"], [n + "_i32"], name=n,
                        kernel_shape=[k, k], strides=[st, st], pads=[pad] * 4),
            h.make_node("Mul", [n + "_xs", n + "_ws"], [n + "_mult"], name=n + "_scales_mul"),
            h.make_node("Cast", [n + "_i32"], [n + "_f"], name=n + "_cast", to=T.FLOAT),
            h.make_node("Mul", [n + "_f", n + "_mult"], [n + "_y"], name=n + "_mul"),
            h.make_node("Add", [n + "_y", n + "_b"], [n + "_yb"], name=n + "_bias"),
            h.make_node("Relu", [n + "_yb"], [n + "_r"], name=n + "_relu"),
        ]
        x = n + "_r"
    nodes.append(h.make_node("GlobalAveragePool", [x], ["y"], name="pool"))
    g = h.make_graph(nodes, "convinteger", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, "H", "W"])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 16, 1, 1])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="make_convinteger")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(a.out, "model.onnx"))
    for name, hw in (("x.pb", (12, 16)), ("x2.pb", (21, 9))):
        xin = rng.standard_normal((1, 3) + hw).astype(np.float32)
        with open(os.path.join(a.out, name), "wb") as f:
            f.write(nh.from_array(xin, "x").SerializeToString())
    print(f"{a.out}/model.onnx: {len(nodes)} nodes")


if __name__ == "__main__":
    main()
