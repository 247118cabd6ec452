#!/usr/bin/python3
"""Makes models/resize/bilinear.onnx (Debian's /usr/bin/python3): linear
Resizes of x [1, 4, 37, 53] along H and W, the case onnxruntime computes as
four weight products summed in a fixed order (docs/DESIGN.md, Resize),
which must match it bit for bit (`verify --atol 0 --rtol 0`):
  up_sizes    half_pixel, sizes [1, 4, 80, 101] (scales 80/37, 101/53)
  up2         half_pixel, scales [1, 1, 2, 2] (the segmentation nets' case)
  down        half_pixel, sizes [1, 4, 19, 70] (down in H, up in W)
  pytorch     pytorch_half_pixel, sizes [1, 4, 1, 29] (one output row)
  asym        asymmetric, scales [1, 1, 1.5, 0.75]"""
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
g = helper.make_graph(nodes, "bilinear", [helper.make_tensor_value_info("x", F, shape)], outs, ini)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "bilinear.onnx"))
