#!/usr/bin/python3
"""Makes models/linalg/ (Debian's /usr/bin/python3).
  det.onnx   Det of x[3, 4, 4] and of y[5, 5] (the largest n computed)"""
import os
import onnx
from onnx import TensorProto, helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "linalg")
os.makedirs(HERE, exist_ok=True)
F = TensorProto.FLOAT
g = helper.make_graph([helper.make_node("Det", ["x"], ["dx"]), helper.make_node("Det", ["y"], ["dy"])], "det",
                      [helper.make_tensor_value_info("x", F, [3, 4, 4]), helper.make_tensor_value_info("y", F, [5, 5])],
                      [helper.make_tensor_value_info("dx", F, [3]), helper.make_tensor_value_info("dy", F, [])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "det.onnx"))
