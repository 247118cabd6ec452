#!/usr/bin/python3
"""Makes the Gather / embedding test models in models/gather/ and their
index inputs (.pb). Run with Debian's /usr/bin/python3.
  embedding.onnx   Gather(W[V=50,D=8], ids[2,3] int64), axis 0
  wide.onnx        Gather(W[V=40,D=512], ids[1,160]): enough work for --threads
  axis1.onnx       Gather(x[4,6,5], idx[2,2] int64), axis 1
  idx_i32.onnx     axis 0, int32 indices
  idx_rank0.onnx   a scalar index
  idx_rank3.onnx   indices [2,2,2]
  onehot.onnx      the one-hot written by hand: ReduceSum(W * Cast(Equal(Range(V), ids)))
  nested.onnx      Gather(W[10,8], Gather(table[6] int64, ids[2,3])): an index read
                   through another gather (both fused in one kernel)
Inputs: ids.pb (in range), neg.pb (negative indices), oob.pb (out of range)."""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gather")
rng = np.random.default_rng(7)


def save(name, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))


def tensor(name, arr):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(numpy_helper.from_array(arr, "ids" if arr.ndim or True else "").SerializeToString())


def weight(shape, gen=None):
    return (gen or rng).standard_normal(shape).astype(np.float32)


def fork():
    """A generator at rng's state that leaves rng where it is: a model added
    between others draws from one, so the models after it (committed before
    it) keep their weights."""
    g = np.random.default_rng()
    g.bit_generator.state = rng.bit_generator.state
    return g


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def gather_model(name, data_shape, idx_shape, idx_type, axis, gen=None):
    w = numpy_helper.from_array(weight(data_shape, gen), "W")
    out_shape = list(data_shape[:axis]) + list(idx_shape) + list(data_shape[axis + 1:])
    save(name, [helper.make_node("Gather", ["W", "ids"], ["y"], axis=axis, name="embed")],
         [vi("ids", idx_type, list(idx_shape))], [vi("y", TensorProto.FLOAT, out_shape)], [w])


def idx(name, arr, t=np.int64):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(numpy_helper.from_array(np.array(arr, dtype=t), "ids").SerializeToString())


gather_model("embedding", (50, 8), (2, 3), TensorProto.INT64, 0)
idx("embedding_ids.pb", [[1, 49, 7], [0, 0, 23]])
idx("embedding_neg.pb", [[-1, -50, 3], [4, -7, 0]])
idx("embedding_oob.pb", [[1, 50, 7], [0, 0, 23]])
gather_model("wide", (40, 512), (1, 160), TensorProto.INT64, 0, fork())
idx("wide_ids.pb", [[(i * 7) % 40 - (20 if i % 3 == 0 else 0) for i in range(160)]])
idx("wide_oob.pb", [[40 if i == 101 else i % 40 for i in range(160)]])
gather_model("axis1", (4, 6, 5), (2, 2), TensorProto.INT64, 1)
idx("axis1_ids.pb", [[5, 0], [-1, 2]])
gather_model("idx_i32", (50, 8), (2, 3), TensorProto.INT32, 0)
idx("idx_i32_ids.pb", [[3, -2, 7], [49, 0, 11]], np.int32)
gather_model("idx_rank0", (50, 8), (), TensorProto.INT64, 0)
idx("idx_rank0_ids.pb", 17)
gather_model("idx_rank3", (50, 8), (2, 2, 2), TensorProto.INT64, 0)
idx("idx_rank3_ids.pb", [[[1, 2], [3, -4]], [[5, 6], [49, 0]]])

# the one-hot pattern written out by hand: sum_v W[v, :] * (v == ids)
V, D = 50, 8
w = numpy_helper.from_array(weight((V, D)), "W")
nodes = [
    helper.make_node("Range", ["start", "limit", "delta"], ["iota"]),
    helper.make_node("Unsqueeze", ["ids", "ax"], ["ids3"]),           # [B,S,1]
    helper.make_node("Equal", ["ids3", "iota"], ["hit"]),            # [B,S,V]
    helper.make_node("Cast", ["hit"], ["hitf"], to=TensorProto.FLOAT),
    helper.make_node("Unsqueeze", ["hitf", "ax"], ["hit4"]),         # [B,S,V,1]
    helper.make_node("Mul", ["hit4", "W"], ["prod"]),                 # [B,S,V,D]
    helper.make_node("ReduceSum", ["prod", "red"], ["y"], keepdims=0),
]
consts = [numpy_helper.from_array(np.array(0, np.int64), "start"),
          numpy_helper.from_array(np.array(V, np.int64), "limit"),
          numpy_helper.from_array(np.array(1, np.int64), "delta"),
          numpy_helper.from_array(np.array([-1], np.int64), "ax"),
          numpy_helper.from_array(np.array([2], np.int64), "red")]
save("onehot", nodes, [vi("ids", TensorProto.INT64, [2, 3])], [vi("y", TensorProto.FLOAT, [2, 3, D])], [w] + consts)
idx("onehot_ids.pb", [[1, 49, 7], [0, 0, 23]])

# an index read through another gather: the kernel computes the table's
# checked index before the one that reads it (scheduler/fuse.c,
# find_gathers; the other order read it unset and gave wrong rows)
table = numpy_helper.from_array(np.array([5, 0, 9, 2, -3, 7], np.int64), "table")
save("nested", [helper.make_node("Gather", ["table", "ids"], ["j"], name="lookup"),
                helper.make_node("Gather", ["W", "j"], ["y"], name="embed")],
     [vi("ids", TensorProto.INT64, [2, 3])], [vi("y", TensorProto.FLOAT, [2, 3, 8])],
     [numpy_helper.from_array(weight((10, 8)), "W"), table])
idx("nested_ids.pb", [[0, 5, 2], [-1, 3, 1]])
print("wrote", HERE)
