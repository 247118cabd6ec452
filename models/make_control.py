#!/usr/bin/python3
"""Makes the control-flow models of models/control/ (Debian's /usr/bin/python3).
  if_runtime.onnx  a torch.jit.script module whose `if` on the input's sum
                   exports as an If chosen at run time (x[4, 8] -> y[4, 8]):
                   y = relu(x W1) when sum(x) > 0, else tanh(x W2) - x
  if_shape.onnx    an If on a shape test (x.size(0) > 2), known at compile
                   time: only the branch taken is lowered
  if_const.onnx    if_runtime with a constant condition (true) and an op that
                   is not supported (Bernoulli) in its else branch: compiles
                   only if the branch not taken is never lowered
  if_pos.pb, if_neg.pb  inputs that take each branch of if_runtime
  if_small.pb      x[2, 8]: the other branch of if_shape
  loop.onnx        a torch.jit.script module with an `if` on a value and a
                   `for i in range(x.size(0))` (a Loop whose trip count is
                   the batch, known once the input is: unrolled), dynamic
                   batch: run at if_pos (4 iterations) and if_small (2)
  if_shapes_differ.onnx  a run-time If whose branches give [2] and [3]: refused
  if_deep.onnx     Ifs nested 9 deep: refused (8 is the limit)
  loop_long.onnx   a Loop of 5000 iterations: refused (unrolled, 1024 at most)
  scan.onnx        a Scan (unrolled) with a running sum as its state, one scan
                   input read backwards along axis 1 and one forwards along
                   axis 0, a scan output stacked along axis 2, one reversed"""
import os
import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "control")
os.makedirs(HERE, exist_ok=True)
torch.manual_seed(3)


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)

    def forward(self, x):
        if bool(x.sum() > 0):
            y = torch.relu(self.a(x))
        else:
            y = torch.tanh(self.b(x)) - x
        return y


class ShapeTest(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)

    def forward(self, x):
        if x.size(0) > 2:
            y = self.a(x) * 2.0
        else:
            y = self.a(x) - 1.0
        return y


class Looped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)

    def forward(self, x):
        if bool(x.mean() > 0):
            y = x * 0.5
        else:
            y = -x
        for i in range(x.size(0)):
            y = torch.tanh(self.a(y)) + x[i] * float(i)
        return y


def export(module, name, dynamic=False):
    path = os.path.join(HERE, name + ".onnx")
    torch.onnx.export(torch.jit.script(module), (torch.randn(4, 8),), path, opset_version=15,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}} if dynamic else None)
    onnx.checker.check_model(onnx.load(path))
    return path


export(Branchy().eval(), "if_runtime")
export(ShapeTest().eval(), "if_shape", dynamic=True)
export(Looped().eval(), "loop", dynamic=True)
x = np.random.default_rng(4).standard_normal((4, 8)).astype(np.float32)
onnx.save_tensor(numpy_helper.from_array(np.abs(x), "x"), os.path.join(HERE, "if_pos.pb"))
onnx.save_tensor(numpy_helper.from_array(-np.abs(x), "x"), os.path.join(HERE, "if_neg.pb"))
onnx.save_tensor(numpy_helper.from_array(x[:2], "x"), os.path.join(HERE, "if_small.pb"))

m = onnx.load(os.path.join(HERE, "if_runtime.onnx"))
g = m.graph
iff = [n for n in g.node if n.op_type == "If"][0]
g.node.insert(0, helper.make_node("Constant", [], ["always"], value=helper.make_tensor("t", TensorProto.BOOL, [], [True])))
iff.input[0] = "always"
els = [a for a in iff.attribute if a.name == "else_branch"][0].g
out = els.output[0].name
els.node.append(helper.make_node("Bernoulli", [out], ["coin"]))
els.node.append(helper.make_node("Add", [out, "coin"], ["noisy"]))
els.output[0].name = "noisy"
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "if_const.onnx"))


def const_branch(name, vals):
    return helper.make_graph([helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
        np.array(vals, np.float32), name + "_v"))], name + "_g", [], [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)])


def save_if(name, then_g, else_g):
    g = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)], name,
                          [helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])  # refused models: not checked
    onnx.save(m, os.path.join(HERE, name + ".onnx"))


save_if("if_shapes_differ", const_branch("a", [1, 2]), const_branch("b", [1, 2, 3]))
inner = const_branch("leaf", [1.0])
for d in range(9):
    inner = helper.make_graph([helper.make_node("If", ["c"], ["o%d" % d], then_branch=inner,
                                                else_branch=const_branch("e%d" % d, [0.0]))], "lvl%d" % d, [],
                              [helper.make_tensor_value_info("o%d" % d, TensorProto.FLOAT, None)])
save_if("if_deep", inner, const_branch("top", [0.0]))

body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Add", ["v_in", "v_in"], ["v_out"])],
                         "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                                  helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                                  helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [2])],
                         [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
                          helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [2])])
g = helper.make_graph([helper.make_node("Loop", ["M", "", "v"], ["y"], body=body)], "loop_long",
                      [helper.make_tensor_value_info("v", TensorProto.FLOAT, [2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
                      initializer=[numpy_helper.from_array(np.array(5000, np.int64), "M")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "loop_long.onnx"))

V = TensorProto.FLOAT
body = helper.make_graph([helper.make_node("Add", ["s_in", "xt"], ["s_out"]),
                          helper.make_node("Mul", ["s_out", "wt"], ["yt"]),
                          helper.make_node("Sub", ["s_out", "wt"], ["zt"])],
                         "scan_body", [helper.make_tensor_value_info("s_in", V, [4, 2]),
                                       helper.make_tensor_value_info("xt", V, [4, 2]),
                                       helper.make_tensor_value_info("wt", V, [2])],
                         [helper.make_tensor_value_info("s_out", V, [4, 2]),
                          helper.make_tensor_value_info("yt", V, [4, 2]),
                          helper.make_tensor_value_info("zt", V, [4, 2])])
g = helper.make_graph([helper.make_node("Scan", ["s0", "x", "w"], ["s", "y", "z"], body=body, num_scan_inputs=2,
                                        scan_input_axes=[1, 0], scan_input_directions=[1, 0],
                                        scan_output_axes=[2, 0], scan_output_directions=[0, 1])], "scan",
                      [helper.make_tensor_value_info("s0", V, [4, 2]), helper.make_tensor_value_info("x", V, [4, 6, 2]),
                       helper.make_tensor_value_info("w", V, [6, 2])],
                      [helper.make_tensor_value_info("s", V, [4, 2]), helper.make_tensor_value_info("y", V, [4, 2, 6]),
                       helper.make_tensor_value_info("z", V, [6, 4, 2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "scan.onnx"))
