#!/usr/bin/python3
"""Makes models/elementwise/model.onnx: a small chain of element-wise ops
with broadcasting and a weight, the model `make demo` compiles.
Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy)."""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
w = numpy_helper.from_array(rng.standard_normal((1, 16)).astype(np.float32), "w")
nodes = [
    helper.make_node("Mul", ["x", "w"], ["t0"], name="scale"),
    helper.make_node("Add", ["t0", "y"], ["t1"], name="shift"),
    helper.make_node("Relu", ["t1"], ["t2"], name="relu"),
    helper.make_node("Sigmoid", ["t2"], ["t3"], name="gate"),
    helper.make_node("Mul", ["t1", "t3"], ["t4"], name="silu"),
    helper.make_node("Sqrt", ["t2"], ["t5"], name="root"),
    helper.make_node("Sub", ["t4", "t5"], ["z"], name="out"),
]
graph = helper.make_graph(
    nodes, "elementwise",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16]),
     helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 1])],
    [helper.make_tensor_value_info("z", TensorProto.FLOAT, [8, 16])],
    initializer=[w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "elementwise", "model.onnx")
onnx.save(model, out)
print(out)
