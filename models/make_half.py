#!/usr/bin/python3
"""Makes the 16-bit float models of models/half/ (Debian's /usr/bin/python3).
  cnn_fp16.onnx    a small CNN (Conv, BatchNorm, ReLU, MaxPool, a residual
                   Add, GlobalAveragePool, Gemm, Softmax) exported from
                   PyTorch in float32 and converted as `.half()` would store
                   it: every float initializer, Constant, graph input and
                   output float16 (torch 1.13 cannot run a half Conv on the
                   CPU, which tracing needs), x[1, 3, 32, 32]
  casts.onnx       x float32 -> Cast to float16 / bfloat16 -> Cast back, and
                   a float16 Add/Mul chain: the rounding of each conversion
  edges.pb         inputs for casts.onnx that decide rounding: the midpoint
                   of every pair of neighbouring float16 values near 1 and in
                   the subnormals (ties go to even), bfloat16 midpoints, the
                   overflow thresholds, inf, NaN, -0
  placement.onnx   where onnxruntime keeps float16 values as float16 (and so
                   rounds them): x float32 -> Cast to float16 (dropped:
                   its readers compute in float32) -> r = 3x; s = Cast to
                   float16 of x * 0.7 (in float32), kept (a float16 kernel reads it);
                   Concat(s, r) (a float16 kernel: both rounded there) and
                   Concat(r, r) between float32 ops ("isolated": run in
                   float32, not rounded), each minus the same values made
                   by float32-only ops (Pad, Tile), times 1024: the
                   rounding error, or 0, made large"""
import os
import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "half")
os.makedirs(HERE, exist_ok=True)
torch.manual_seed(5)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        y = torch.relu(self.bn(self.c1(x)))
        y = torch.nn.functional.max_pool2d(y, 2)
        y = y + torch.relu(self.c2(y))
        y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return torch.softmax(self.fc(y), dim=-1)


def to_fp16(m):
    """Stores every float32 tensor of the graph as float16 (what a model
    exported after .half() holds)."""
    g = m.graph
    for t in list(g.initializer):
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    for v in list(g.input) + list(g.output):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    del g.value_info[:]
    return m


net = Net().eval()
with torch.no_grad():  # non-trivial BatchNorm statistics
    net.bn.running_mean.uniform_(-0.2, 0.2)
    net.bn.running_var.uniform_(0.5, 1.5)
path = os.path.join(HERE, "cnn_fp16.onnx")
torch.onnx.export(net, torch.randn(1, 3, 32, 32), path, opset_version=17,
                  input_names=["x"], output_names=["probs"])
m = to_fp16(onnx.load(path))
onnx.checker.check_model(m)
onnx.save(m, path)

vi = helper.make_tensor_value_info
F, H, B = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16
N = 64
nodes = [
    helper.make_node("Cast", ["x"], ["h"], to=H),
    helper.make_node("Cast", ["h"], ["to_f16"], to=F),
    helper.make_node("Cast", ["x"], ["b"], to=B),
    helper.make_node("Cast", ["b"], ["to_bf16"], to=F),
    helper.make_node("Mul", ["h", "h"], ["hh"]),  # rounded after each op
    helper.make_node("Add", ["hh", "h"], ["f16_out"]),
]
g = helper.make_graph(nodes, "casts", [vi("x", F, [N])],
                      [vi("to_f16", F, [N]), vi("to_bf16", F, [N]), vi("f16_out", H, [N])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "casts.onnx"))


def mid16(a):  # midpoint of float16 a and its upper neighbour, as float32 (exact)
    a = np.float16(a)
    return np.float32((np.float64(a) + np.float64(np.nextafter(a, np.float16(np.inf)))) / 2)


vals = [mid16(1.0), mid16(np.nextafter(np.float16(1), np.float16(2))), mid16(2.0 ** -24),
        mid16(2.0 ** -23), mid16(3 * 2.0 ** -24), mid16(2.0 ** -14 - 2.0 ** -24), 65504.0, 65519.99,
        65520.0, 1e-8, -2.0 ** -25, 3 * 2.0 ** -26, np.inf, -np.inf, np.nan, -0.0, 1 + 2.0 ** -8,
        1 + 3 * 2.0 ** -8, 1 + 2.0 ** -8 + 2.0 ** -20, 3.3961e38, 3.4e38, 1.1754942e-38, 9.2e-41]
vals = np.array(vals + list(np.linspace(-3, 3, N - len(vals))), np.float32)
onnx.save_tensor(numpy_helper.from_array(vals, "x"), os.path.join(HERE, "edges.pb"))

# placement.onnx (see the docstring): outputs 1024 (Concat(s, r) - Pad(s)
# - Pad(r)) and 1024 (Concat(r, r) - Tile(r, 2)).
N = 64
ini = [numpy_helper.from_array(np.float16([3]), "three"), numpy_helper.from_array(np.float16([1024]), "big"),
       numpy_helper.from_array(np.int64([0, N]), "pads"), numpy_helper.from_array(np.int64([N, 0]), "pads2"),
       numpy_helper.from_array(np.int64([2]), "reps"), numpy_helper.from_array(np.float32([0.7]), "seven_tenths")]
nodes = [
    helper.make_node("Cast", ["x"], ["h"], to=H),
    helper.make_node("Mul", ["h", "three"], ["r"]),
    helper.make_node("Mul", ["x", "seven_tenths"], ["s32"]),  # float32, exact in both
    helper.make_node("Cast", ["s32"], ["s"], to=H),
    helper.make_node("Concat", ["s", "r"], ["kept"], axis=0),  # rounds s and r
    helper.make_node("Pad", ["s", "pads"], ["ps"]),
    helper.make_node("Pad", ["r", "pads2"], ["pr"]),
    helper.make_node("Add", ["ps", "pr"], ["padded"]),
    helper.make_node("Sub", ["kept", "padded"], ["d1"]),
    helper.make_node("Mul", ["d1", "big"], ["rounded"]),
    helper.make_node("Concat", ["r", "r"], ["iso"], axis=0),  # isolated: float32
    helper.make_node("Tile", ["r", "reps"], ["tiled"]),
    helper.make_node("Sub", ["iso", "tiled"], ["d2"]),
    helper.make_node("Mul", ["d2", "big"], ["not_rounded"]),
]
g = helper.make_graph(nodes, "placement", [vi("x", F, [N])], [vi("rounded", H, [2 * N]), vi("not_rounded", H, [2 * N])],
                      ini)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "placement.onnx"))
