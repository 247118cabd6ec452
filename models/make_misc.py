#!/usr/bin/python3
"""Makes small test models in models/misc/ (Debian's /usr/bin/python3).
  view_reshape.onnx   the PyTorch x.view(batch, -1) pattern: Shape -> Gather ->
                      Unsqueeze -> Concat -> Reshape, then a MatMul
  tied.onnx           tied embeddings: W[V,D] feeds a Gather and, as the
                      separate initializer W^T[D,V] torch's export makes, the
                      LM-head MatMul; the weights file must hold W once
  layers_L.onnx       L residual blocks of x + relu(LayerNorm(x) W1) W2 on
                      [16,64] (L = 2, 12): the C text must not grow with L
  matmuls.onnx        a MatMul-heavy model for --threads"""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "misc")
rng = np.random.default_rng(11)
os.makedirs(HERE, exist_ok=True)


def w(name, shape, scale=0.1):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def i64(name, vals):
    return numpy_helper.from_array(np.array(vals, np.int64), name)


def save(name, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
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

with open(os.path.join(HERE, "tied_ids.pb"), "wb") as f:
    f.write(numpy_helper.from_array(np.array([[0, 5, 299, 17, 4], [1, 2, 3, 250, 9]], np.int64), "ids").SerializeToString())
print("wrote", HERE)
