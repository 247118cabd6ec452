#!/usr/bin/python3
"""Makes models/resize/bilinear.onnx (Debian's /usr/bin/python3): linear
Resizes of x [1, 4, 37, 53] along H and W, the case onnxruntime computes as
four weight products summed in a fixed order (docs/DESIGN.md, Resize),
which must match it bit for bit (`verify --atol 0 --rtol 0`):
  up_sizes    half_pixel, sizes [1, 4, 80, 101] (scales 80/37, 101/53)
  up2         half_pixel, scales [1, 1, 2, 2] (the segmentation nets' case)
  down        half_pixel, sizes [1, 4, 19, 70] (down in H, up in W)
  pytorch     pytorch_half_pixel, sizes [1, 4, 1, 29] (one output row)
  asym        asymmetric, scales [1, 1, 1.5, 0.75]
and models/resize/coords.onnx: Resizes of x [1, 2, 7, 10] whose output
lengths and source coordinates hang on float32 arithmetic as onnxruntime
(and PyTorch) do it (docs/DESIGN.md, "Resize as onnxruntime computes it"):
  near_floor  nearest, asymmetric, floor, scales [1, 1, 0.6, 0.7]: 10 x
              0.7f is 7 in float32 (6 exactly), 3 / 0.6f is 5 (4.9999998)
  near_half   nearest, half_pixel, round_prefer_floor, scales 0.7 and 1.3
  ac_linear   linear, align_corners, scales 1.5 and 2.5: divided by the
              output's length less one, not in x scale less one
  ac_cubic    cubic, align_corners, scales 0.7 and 1.5
  cubic_half  cubic, half_pixel, scales 0.7 and 1.3
whose `verify` must match onnxruntime (nearest: exactly)."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "resize")
os.makedirs(HERE, exist_ok=True)
F = TensorProto.FLOAT
shape = [1, 4, 37, 53]
cases = [  # name, coordinate mode, sizes or None, scales or None
    ("up_sizes", "half_pixel", [1, 4, 80, 101], None),
    ("up2", "half_pixel", None, [1, 1, 2, 2]),
    ("down", "half_pixel", [1, 4, 19, 70], None),
    ("pytorch", "pytorch_half_pixel", [1, 4, 1, 29], None),
    ("asym", "asymmetric", None, [1, 1, 1.5, 0.75]),
]
nodes, ini, outs = [], [], []
for name, ctm, sizes, scales in cases:
    if sizes:
        ini.append(numpy_helper.from_array(np.int64(sizes), name + "_sizes"))
        ins = ["x", "", "", name + "_sizes"]
        out = sizes
    else:
        ini.append(numpy_helper.from_array(np.float32(scales), name + "_scales"))
        ins = ["x", "", name + "_scales"]
        out = [int(np.floor(d * np.float32(s))) for d, s in zip(shape, scales)]
    nodes.append(helper.make_node("Resize", ins, [name], mode="linear", coordinate_transformation_mode=ctm))
    outs.append(helper.make_tensor_value_info(name, F, out))


def save(name, shape, nodes, outs, ini):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", F, shape)], outs, ini)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))


save("bilinear", shape, nodes, outs, ini)

# ---- coords.onnx: output lengths and coordinates in float32
xs = [1, 2, 7, 10]
coords = [  # name, mode, coordinate mode, nearest mode, scales
    ("near_floor", "nearest", "asymmetric", "floor", [1, 1, 0.6, 0.7]),
    ("near_half", "nearest", "half_pixel", "round_prefer_floor", [1, 1, 0.7, 1.3]),
    ("ac_linear", "linear", "align_corners", None, [1, 1, 1.5, 2.5]),
    ("ac_cubic", "cubic", "align_corners", None, [1, 1, 0.7, 1.5]),
    ("cubic_half", "cubic", "half_pixel", None, [1, 1, 0.7, 1.3]),
]
nodes, ini, outs = [], [], []
for name, mode, ctm, nm, scales in coords:
    ini.append(numpy_helper.from_array(np.float32(scales), name + "_scales"))
    kw = {"nearest_mode": nm} if nm else {}
    nodes.append(helper.make_node("Resize", ["x", "", name + "_scales"], [name], mode=mode,
                                  coordinate_transformation_mode=ctm, **kw))
    out = [int(np.float32(d) * np.float32(sc)) for d, sc in zip(xs, scales)]  # float32, as onnxruntime
    outs.append(helper.make_tensor_value_info(name, F, out))
save("coords", xs, nodes, outs, ini)
