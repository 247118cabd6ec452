#!/usr/bin/python3
"""gen_reduce.py OUTDIR — reductions at their edges, checked against
onnxruntime by tests/reduce/CMakeLists.txt:

- reduce_empty_{f32,i64}: every Reduce* over an axis of length 0 (a
  constant count of 0): ReduceMean gives 0 as onnxruntime and PyTorch
  (EmbeddingBag's empty bag) do, ReduceProd 1, ReduceMax/Min the type's
  lowest/highest (-inf/+inf), ReduceLogSum(Exp) -inf, the sums 0.
- reduce_count_range: each over Range(1, n) for a symbolic n, so the count
  n - 1 is known only at run time and is 0 at n = 1 (xr1.pb), 3 at n = 4.
- reduce_mean_sym: ReduceMean over [2, n] (a count >= 1 for every n: no
  guard in the generated C).
- reduce_min_lowest_{i8,i32,i64}: ReduceMin over the type's lowest value
  (which -x wrapped to itself, and min(INT_MIN, 5) gave 5).

Generated at test time, nothing binary committed; deterministic."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
FLOAT_ONLY = ("ReduceL2", "ReduceLogSum", "ReduceLogSumExp")
OPS = ("ReduceSum", "ReduceMean", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceSumSquare") + FLOAT_ONLY


def const(name, arr):
    return numpy_helper.from_array(np.array(arr, np.int64), name)


def save(name, nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)], producer_name="gen_reduce")
    m.ir_version = 8
    onnx.save(m, os.path.join(out, name + ".onnx"))


def write(name, arr, tname):
    with open(os.path.join(out, name), "wb") as f:
        f.write(numpy_helper.from_array(arr, tname).SerializeToString())


def reductions(src, keep, ops):
    """One node per op over the axes in initializer `axes`, outputs y_OP."""
    nodes = [h.make_node(op, [src, "axes"], ["y_" + op], keepdims=keep) for op in ops]
    return nodes, ["y_" + op for op in ops]


for dt, nm in ((T.FLOAT, "f32"), (T.INT64, "i64")):
    ops = [op for op in OPS if dt == T.FLOAT or op not in FLOAT_ONLY]
    nodes, ys = reductions("x", 0, ops)
    save("reduce_empty_" + nm, nodes, [h.make_tensor_value_info("x", dt, [2, 0])],
         [h.make_tensor_value_info(y, dt, [2]) for y in ys], [const("axes", [1])])

nodes = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "zero"], ["n"], axis=0),
         h.make_node("Range", ["one", "n", "one"], ["r"]), h.make_node("Cast", ["r"], ["rf"], to=T.FLOAT)]
more, ys = reductions("rf", 1, OPS)
save("reduce_count_range", nodes + more, [h.make_tensor_value_info("x", T.FLOAT, ["n"])],
     [h.make_tensor_value_info(y, T.FLOAT, [1]) for y in ys],
     [const("zero", 0), const("one", 1), const("axes", [0])])
for n in (1, 4):
    write("xr%d.pb" % n, np.arange(n, dtype=np.float32), "x")

save("reduce_mean_sym", [h.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0)],
     [h.make_tensor_value_info("x", T.FLOAT, [2, "n"])], [h.make_tensor_value_info("y", T.FLOAT, [2])],
     [const("axes", [1])])

for dt, npt, nm in ((T.INT8, np.int8, "i8"), (T.INT32, np.int32, "i32"), (T.INT64, np.int64, "i64")):
    save("reduce_min_lowest_" + nm, [h.make_node("ReduceMin", ["x", "axes"], ["y"], keepdims=0)],
         [h.make_tensor_value_info("x", dt, [2, 3])], [h.make_tensor_value_info("y", dt, [2])], [const("axes", [1])])
    lo, hi = np.iinfo(npt).min, np.iinfo(npt).max
    write("reduce_min_lowest_%s_in.pb" % nm, np.array([[5, lo, -1], [hi, 3, hi - 1]], npt), "x")
