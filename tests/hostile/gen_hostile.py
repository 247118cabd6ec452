#!/usr/bin/python3
"""gen_hostile.py OUTDIR — writes the hostile models named in cases.txt.

Everything is generated (onnx.helper, or byte edits of a generated model),
so nothing binary is committed. Deterministic: fixed seeds."""
import os
import random
import shutil
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT
I64 = TensorProto.INT64


def model(nodes, inputs, outputs, inits=(), opset=13, domain_opsets=()):
    g = h.make_graph(nodes, "hostile", inputs, outputs, initializer=list(inits))
    ops = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in domain_opsets]
    m = h.make_model(g, opset_imports=ops, producer_name="hostile")
    m.ir_version = 8
    return m


def save(name, m, sub=None):
    d = os.path.join(out, sub) if sub else out
    os.makedirs(d, exist_ok=True)
    data = m if isinstance(m, (bytes, bytearray)) else m.SerializeToString()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def vi(name, dt=F, shape=(2, 3)):
    return h.make_tensor_value_info(name, dt, list(shape))


def ints(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def raw_tensor(name, dt, dims, raw=None, **fields):
    t = TensorProto()
    t.name = name
    t.data_type = dt
    t.dims.extend(dims)
    if raw is not None:
        t.raw_data = raw
    for k, v in fields.items():
        getattr(t, k).extend(v)
    return t


def relu_model():
    return model([h.make_node("Relu", ["x"], ["y"])], [vi("x")], [vi("y")])


# A valid model with some weight bytes, for truncation.
w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "w")
valid = model([h.make_node("MatMul", ["x", "w"], ["t"]), h.make_node("Relu", ["t"], ["y"])],
              [vi("x", F, (2, 8))], [vi("y", F, (2, 8))], [w])
save("valid.onnx", valid)
vb = valid.SerializeToString()

# ---- bytes ----
save("empty.onnx", b"")
save("random.onnx", bytes(random.Random(1).getrandbits(8) for _ in range(4096)))
for pct in (10, 50, 90):
    save("trunc%d.onnx" % pct, vb[: len(vb) * pct // 100])
# ModelProto.producer_name (field 2, a string) written as a varint;
# ModelProto.ir_version (field 1, an int64) written as length-delimited.
save("wrongtype_string.onnx", b"\x10\x05" + vb)
save("wrongtype_varint.onnx", b"\x0a\x03abc" + vb)
# GraphProto (field 7) as a varint.
save("wrongtype_graph.onnx", b"\x08\x08\x38\x01")
# A length prefix far beyond the end of the data.
save("badlength.onnx", b"\x3a\xff\xff\xff\xff\x0f" + vb[:64])
# A valid protobuf that is no model: no graph.
save("nograph.onnx", b"\x08\x08")

# ---- tensors ----
save("dims_overflow.onnx", model([h.make_node("Relu", ["w"], ["y"])], [], [vi("y")],
                                 [raw_tensor("w", F, [1 << 62, 1 << 62], raw=b"")]))
save("dims_overflow_input.onnx", model([h.make_node("Relu", ["x"], ["y"])],
                                       [vi("x", F, (1 << 40, 1 << 40))], [vi("y")]))
save("dims_negative.onnx", model([h.make_node("Relu", ["w"], ["y"])], [], [vi("y")],
                                 [raw_tensor("w", F, [-3, 2], raw=b"")]))
save("dims_negative_input.onnx", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", F, (2, -5))], [vi("y")]))
save("init_short.onnx", model([h.make_node("Relu", ["w"], ["y"])], [], [vi("y")],
                              [raw_tensor("w", F, [2, 3], raw=b"\0" * 20)]))
save("init_long.onnx", model([h.make_node("Relu", ["w"], ["y"])], [], [vi("y")],
                             [raw_tensor("w", F, [2, 3], raw=b"\0" * 28)]))
save("init_values_short.onnx", model([h.make_node("Relu", ["w"], ["y"])], [], [vi("y")],
                                     [raw_tensor("w", F, [2, 3], float_data=[1.0, 2.0])]))
# 2^36 floats declared, none given: must be refused without allocating 256 GiB.
save("init_huge_nodata.onnx", model([h.make_node("Relu", ["w"], ["y"])], [], [vi("y")],
                                    [raw_tensor("w", F, [1 << 18, 1 << 18])]))
save("init_string.onnx", model([h.make_node("Identity", ["w"], ["y"])], [], [vi("y")],
                               [raw_tensor("w", TensorProto.STRING, [1], string_data=[b"x"])]))
save("rank13_init.onnx", model([h.make_node("Relu", ["w"], ["y"])], [], [vi("y")],
                               [raw_tensor("w", F, [1] * 13, raw=b"\0" * 4)]))
save("rank13_input.onnx", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", F, [1] * 13)], [vi("y")]))
save("input_string.onnx", model([h.make_node("Identity", ["x"], ["y"])],
                                [vi("x", TensorProto.STRING, (2,))], [vi("y", TensorProto.STRING, (2,))]))
save("input_complex.onnx", model([h.make_node("Identity", ["x"], ["y"])],
                                 [vi("x", TensorProto.COMPLEX64, (2,))], [vi("y", TensorProto.COMPLEX64, (2,))]))
save("input_badtype.onnx", model([h.make_node("Identity", ["x"], ["y"])], [vi("x", 77, (2,))], [vi("y", 77, (2,))]))

# ---- graph structure ----
save("undefined_input.onnx", model([h.make_node("Add", ["x", "nothing"], ["y"])], [vi("x")], [vi("y")]))
save("cycle.onnx", model([h.make_node("Relu", ["b"], ["a"], name="A"), h.make_node("Relu", ["a"], ["b"], name="B"),
                          h.make_node("Add", ["x", "b"], ["y"])], [vi("x")], [vi("y")]))
save("self_loop.onnx", model([h.make_node("Add", ["x", "y"], ["y"])], [vi("x")], [vi("y")]))
save("duplicate_output.onnx", model([h.make_node("Relu", ["x"], ["t"], name="first"),
                                     h.make_node("Neg", ["x"], ["t"], name="second"),
                                     h.make_node("Identity", ["t"], ["y"])], [vi("x")], [vi("y")]))
save("duplicate_input.onnx", model([h.make_node("Relu", ["x"], ["x"], name="shadow"),
                                    h.make_node("Identity", ["x"], ["y"])], [vi("x")], [vi("y")]))
save("duplicate_init.onnx", model([h.make_node("Add", ["x", "w"], ["y"])], [vi("x", F, (2,))], [vi("y", F, (2,))],
                                  [numpy_helper.from_array(np.ones(2, np.float32), "w"),
                                   numpy_helper.from_array(np.ones(3, np.float32), "w")]))
save("no_outputs.onnx", model([h.make_node("Relu", ["x"], ["y"])], [vi("x")], []))
save("output_missing.onnx", model([h.make_node("Relu", ["x"], ["y"])], [vi("x")], [vi("z")]))
save("unknown_op.onnx", model([h.make_node("FrobnicateTensor", ["x"], ["y"])], [vi("x")], [vi("y")]))
save("unknown_domain.onnx", model([h.make_node("Relu", ["x"], ["y"], domain="com.example.evil")], [vi("x")], [vi("y")],
                                  domain_opsets=[("com.example.evil", 1)]))
# com.microsoft: only its MatMulNBits; a default-domain op name in that
# domain is not found, and MatMulNBits' attributes must match its inputs
MS = [("com.microsoft", 1)]
save("ms_relu.onnx", model([h.make_node("Relu", ["x"], ["y"], domain="com.microsoft")], [vi("x")], [vi("y")],
                           domain_opsets=MS))


def nbits_model(k=64, n=8, bs=32, bits=4, b_dims=None, zp=None):
    kb = (k + bs - 1) // bs if 0 < k < 1 << 20 else 2
    blob = bs * bits // 8 if bits in (2, 4, 8) else bs // 2
    b = np.zeros(b_dims or (n if n < 1 << 20 else 8, kb, blob), np.uint8)
    inits = [numpy_helper.from_array(b, "b"), numpy_helper.from_array(np.ones(b.shape[0] * kb, np.float32), "s")]
    ins = ["x", "b", "s"]
    if zp is not None:
        inits.append(numpy_helper.from_array(np.zeros(zp, np.uint8), "z"))
        ins.append("z")
    node = h.make_node("MatMulNBits", ins, ["y"], domain="com.microsoft", K=k, N=n, bits=bits, block_size=bs)
    return model([node], [vi("x", shape=(1, 64))], [vi("y", shape=(1, 8))], inits, domain_opsets=MS)


save("nbits_b_shape.onnx", nbits_model(b_dims=(8, 3, 16)))
save("nbits_bits3.onnx", nbits_model(bits=3))
save("nbits_k_huge.onnx", nbits_model(k=1 << 40))
save("nbits_block_odd.onnx", nbits_model(bs=48))
save("nbits_zp_count.onnx", nbits_model(zp=5))
save("opset_new.onnx", model([h.make_node("Relu", ["x"], ["y"])], [vi("x")], [vi("y")], opset=99))
save("opset_huge.onnx", model([h.make_node("Relu", ["x"], ["y"])], [vi("x")], [vi("y")], opset=1 << 40))
save("attr_wrong_type.onnx", model([h.make_node("Softmax", ["x"], ["y"], axis="one")], [vi("x")], [vi("y")]))
save("attr_wrong_type_ints.onnx", model([h.make_node("Transpose", ["x"], ["y"], perm=[1.0, 0.0])], [vi("x")],
                                        [vi("y", F, (3, 2))]))
save("attr_axis_range.onnx", model([h.make_node("Softmax", ["x"], ["y"], axis=1 << 40)], [vi("x")], [vi("y")]))

# ---- folded sizes ----
def shape_op(op, data_shape, const_vals, extra_inputs=(), **attrs):
    inits = [ints("s", const_vals)]
    return model([h.make_node(op, ["x", "s"] + list(extra_inputs), ["y"], name="hostile_" + op, **attrs)],
                 [vi("x", F, data_shape)], [vi("y", F, ())], inits)


# 2^40 * 2^40 overflows int64 (2^62 and up are the symbol tags: not sizes)
save("reshape_overflow.onnx", shape_op("Reshape", (2, 3), [1 << 40, 1 << 40, 1]))
save("reshape_negative.onnx", shape_op("Reshape", (2, 3), [-2, -3]))
save("reshape_two_minus1.onnx", shape_op("Reshape", (2, 3), [-1, -1]))
save("reshape_mismatch.onnx", shape_op("Reshape", (2, 3), [7]))
save("expand_overflow.onnx", shape_op("Expand", (1, 1), [1 << 40, 1 << 40]))
save("expand_negative.onnx", shape_op("Expand", (1, 1), [-5, 3]))
save("tile_overflow.onnx", shape_op("Tile", (2, 3), [1 << 62, 4]))
save("tile_negative.onnx", shape_op("Tile", (2, 3), [-1, 2]))


def range_model(start, limit, delta, dt=I64):
    inits = [numpy_helper.from_array(np.array(v, dtype=np.int64 if dt == I64 else np.float32), n)
             for n, v in (("a", start), ("b", limit), ("c", delta))]
    return model([h.make_node("Range", ["a", "b", "c"], ["y"], name="hostile_range")], [], [vi("y", dt, (None,))],
                 inits, opset=13)


save("range_overflow.onnx", range_model(0, 1 << 62, 1))
save("range_span_overflow.onnx", range_model(-(1 << 62), 1 << 62, 1))
save("range_zero_delta.onnx", range_model(0, 10, 0))
save("range_float_huge.onnx", range_model(0.0, 3e38, 1e-38, F))
save("range_float_nan.onnx", range_model(0.0, float("nan"), 1.0, F))

cos = lambda shape, name="huge_fill": model(
    [h.make_node("ConstantOfShape", ["s"], ["y"], name=name)], [], [vi("y", F, (None,))], [ints("s", shape)])
save("constantofshape_huge.onnx", cos([1000000, 1000000]))           # 1e12 floats = 4 TB
save("constantofshape_overflow.onnx", cos([1 << 62, 1 << 62]))
save("constantofshape_negative.onnx", cos([-4]))

# ---- external data: each model in its own folder ----
def ext_model(location, offset=None, length=None, nbytes=24):
    t = raw_tensor("w", F, [2, 3])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return model([h.make_node("Relu", ["w"], ["y"])], [], [vi("y")], [t])


def ext_case(name, location, offset=None, length=None, setup=None):
    d = os.path.join(out, "ext_" + name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(b"\0" * 24)
    if setup:
        setup(d)
    save("model.onnx", ext_model(location, offset, length), "ext_" + name)


ext_case("dotdot", "../../etc/passwd")
ext_case("dotdot_inner", "sub/../../weights.bin")
ext_case("absolute", "/etc/passwd")
ext_case("symlink", "link.bin", setup=lambda d: os.symlink("/etc/passwd", os.path.join(d, "link.bin")))
ext_case("symlink_dir", "up/passwd", setup=lambda d: os.symlink("/etc", os.path.join(d, "up")))
ext_case("missing", "nothere.bin")
ext_case("empty_location", "")
ext_case("directory", ".", )
ext_case("offset_beyond", "weights.bin", offset=1000000)
ext_case("offset_huge", "weights.bin", offset=1 << 62)
ext_case("offset_negative", "weights.bin", offset=-8)
ext_case("length_beyond", "weights.bin", length=1 << 40)
ext_case("length_short", "weights.bin", length=8)
ext_case("offset_garbage", "weights.bin", offset="12abc")

# ---- a 100000-node chain of Relu (must not exhaust the stack) ----
N = 100000
nodes = [h.make_node("Relu", ["x" if i == 0 else "t%d" % (i - 1)], ["y" if i == N - 1 else "t%d" % i])
         for i in range(N)]
save("deep_chain.onnx", model(nodes, [vi("x", F, (4,))], [vi("y", F, (4,))]))
# The same chain, listed in reverse order (the importer's ordering must cope).
save("deep_chain_reversed.onnx", model(list(reversed(nodes[:2000])) + [h.make_node("Identity", ["t1999"], ["y2"])],
                                       [vi("x", F, (4,))], [vi("y2", F, (4,))]))
# All 100000 in reverse order: ordering them must take linear time (the
# repeated passes over all nodes took minutes; tests/CMakeLists.txt times it).
save("deep_chain_reversed_100000.onnx", model(nodes[::-1], [vi("x", F, (4,))], [vi("y", F, (4,))]))
# A deep chain of constants folded at import (eval recursion).
cn = [h.make_node("Neg", ["c" if i == 0 else "k%d" % (i - 1)], ["k%d" % i]) for i in range(N)]
cn.append(h.make_node("Add", ["x", "k%d" % (N - 1)], ["y"]))
save("deep_const_chain.onnx", model(cn, [vi("x", F, (4,))], [vi("y", F, (4,))],
                                    [numpy_helper.from_array(np.ones(4, np.float32), "c")]))

# ---- symbolic dimensions ----
# Ops that do not handle symbols, comparisons that cannot be decided, values
# that would forge a symbol: each a one-line refusal naming the symbol.
def svi(name, dims, dt=F):
    return h.make_tensor_value_info(name, dt, list(dims))


sx = svi("x", ["N", 3])
save("sym_unsupported_op.onnx", model([h.make_node("Det", ["x"], ["y"])], [svi("x", ["N", 2, 2])], [vi("y")]))
save("sym_value_to_unsupported.onnx", model([h.make_node("Shape", ["x"], ["s"]), h.make_node("Tile", ["w", "s"], ["y"])],
                                            [sx], [vi("y")], [numpy_helper.from_array(np.ones((2, 2), np.float32), "w")]))
save("sym_forged_initializer.onnx", model([h.make_node("Reshape", ["x", "s"], ["y"])], [sx], [vi("y")],
                                          [ints("s", [1 << 62, 3])]))
save("sym_forged_attribute.onnx", model([h.make_node("Flatten", ["x"], ["y"], axis=(1 << 62) + 1)], [sx], [vi("y")]))
# 2^61 * 2 computed by the folder would land in the tag range
save("sym_forged_by_folding.onnx", model([h.make_node("Mul", ["a", "b"], ["s"]), h.make_node("Reshape", ["x", "s"], ["y"])],
                                         [sx], [vi("y")], [ints("a", [1 << 61, 3]), ints("b", [2, 1])]))
save("sym_shape_as_output.onnx", model([h.make_node("Shape", ["x"], ["y"])], [sx], [vi("y", I64)]))
save("sym_broadcast_undecidable.onnx", model([h.make_node("Add", ["x", "z"], ["y"])], [sx, vi("z", F, (16, 3))], [vi("y")]))
save("sym_reshape_undecidable.onnx", model([h.make_node("Reshape", ["x", "s"], ["y"])], [sx], [vi("y")],
                                           [ints("s", [-1, 2])]))
save("sym_equal_undecidable.onnx", model([h.make_node("Shape", ["x"], ["s"]), h.make_node("Equal", ["s", "k"], ["e"]),
                                          h.make_node("Where", ["e", "k", "s"], ["t"]),
                                          h.make_node("Reshape", ["x", "t"], ["y"])],
                                         [sx], [vi("y")], [ints("k", [16, 3])]))
save("sym_divide_inexact.onnx", model([h.make_node("Shape", ["x"], ["s"]), h.make_node("Div", ["s", "k"], ["t"]),
                                       h.make_node("Reshape", ["x", "t"], ["y"])],
                                      [sx], [vi("y")], [ints("k", [2, 1])]))
save("sym_squeeze_no_axes.onnx", model([h.make_node("Squeeze", ["x"], ["y"])], [sx], [vi("y")]))
save("sym_too_many.onnx", model([h.make_node("Relu", ["x"], ["y"])], [svi("x", ["s%d" % i for i in range(12)])],
                                [vi("y")]))
save("sym_too_many_inputs.onnx", model([h.make_node("Sum", ["x%d" % i for i in range(3)], ["y"])],
                                       [svi("x%d" % i, ["s%d_%d" % (i, j) for j in range(6)]) for i in range(3)], [vi("y")]))
save("sym_float_cast.onnx", model([h.make_node("Shape", ["x"], ["s"]), h.make_node("Cast", ["s"], ["f"], to=F),
                                   h.make_node("Add", ["x", "f2"], ["y"]), h.make_node("Slice", ["f", "z", "o"], ["f2"])],
                                  [sx], [vi("y")], [ints("z", [0]), ints("o", [1])]))

# A shape cast to int32 (paddle2onnx) keeps its symbols only through the
# ops that compute shapes, and never as data; N*N in int32 wraps past N =
# 46340 in onnxruntime, so the entry refuses such N (the _in0.pb is 46341).
I32 = TensorProto.INT32
sh32 = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Cast", ["s"], ["s32"], to=I32)]
save("sym_int32_as_output.onnx", model(sh32, [sx], [vi("s32", I32, (2,))]))
save("sym_int32_to_float.onnx", model(sh32 + [h.make_node("Cast", ["s32"], ["f"], to=F),
                                             h.make_node("Slice", ["f", "z", "o"], ["f1"]),
                                             h.make_node("Add", ["x", "f1"], ["y"])],
                                      [sx], [vi("y")], [ints("z", [0]), ints("o", [1])]))
save("sym_int32_to_int16.onnx", model([h.make_node("Shape", ["x"], ["s"]), h.make_node("Cast", ["s"], ["s16"], to=TensorProto.INT16),
                                       h.make_node("Cast", ["s16"], ["s64"], to=I64),
                                       h.make_node("Reshape", ["x", "s64"], ["y"])], [sx], [vi("y")]))
save("sym_int32_to_pad.onnx", model(sh32 + [h.make_node("Pad", ["s32", "p"], ["t"]),
                                           h.make_node("Cast", ["t"], ["t64"], to=I64),
                                           h.make_node("Reshape", ["x", "t64"], ["y"])],
                                    [sx], [vi("y")], [ints("p", [0, 0])]))
save("sym_int32_overflow.onnx", model(sh32 + [h.make_node("Slice", ["s32", "z", "o"], ["n"]),
                                             h.make_node("Mul", ["n", "n"], ["nn"]),
                                             h.make_node("Div", ["nn", "n"], ["n2"]),
                                             h.make_node("Concat", ["n2", "three"], ["t"], axis=0),
                                             h.make_node("Cast", ["t"], ["t64"], to=I64),
                                             h.make_node("Reshape", ["x", "t64"], ["y"])],
                                      [sx], [vi("y", F, ("N", 3))],
                                      [ints("z", [0]), ints("o", [1]),
                                       numpy_helper.from_array(np.array([3], np.int32), "three")]))
with open(os.path.join(out, "sym_int32_overflow_in0.pb"), "wb") as f:
    f.write(numpy_helper.from_array(np.zeros((46341, 3), np.float32), "x").SerializeToString())

# RoiAlign with sampling_ratio 0 computes ceil(H / bins) + 1 samples per
# bin at most: a roi 25 times the image needs 100 and is the index error.
save("roialign_adaptive_large.onnx",
     model([h.make_node("RoiAlign", ["x", "r", "b"], ["y"], sampling_ratio=0, output_height=1, output_width=1)],
           [vi("x", F, (1, 1, 4, 4)), vi("r", F, (1, 4))], [vi("y", F, (1, 1, 1, 1))],
           [ints("b", [0])], opset=16))
with open(os.path.join(out, "roialign_adaptive_large_in0.pb"), "wb") as f:
    f.write(numpy_helper.from_array(np.ones((1, 1, 4, 4), np.float32), "x").SerializeToString())
with open(os.path.join(out, "roialign_adaptive_large_in1.pb"), "wb") as f:
    f.write(numpy_helper.from_array(np.array([[0, 0, 100, 100]], np.float32), "r").SerializeToString())

# Run-time dimensions the compiled tiny LLaMA refuses (tests/CMakeLists.txt):
# seq 65 > the 64 rows of the position tables, seq 0, inconsistent pasts.
def write_pb(name, arr, tname):
    with open(os.path.join(out, name), "wb") as f:
        f.write(numpy_helper.from_array(arr, tname).SerializeToString())


write_pb("ids_1x65.pb", np.zeros((1, 65), np.int64), "ids")
write_pb("ids_1x0.pb", np.zeros((1, 0), np.int64), "ids")
for k in ("k", "v"):
    for layer in (0, 1):
        write_pb("past_%s_%d_7.pb" % (k, layer), np.zeros((1, 2, 7, 16), np.float32), "past_%s_%d" % (k, layer))
write_pb("past_v_0_8.pb", np.zeros((1, 2, 8, 16), np.float32), "past_v_0")

# run's own checks (tests/CMakeLists.txt, run_*): integers compare exactly
# (10005 is not 10000 within rtol 1e-3, 2^53 is not 2^53 + 1); outputs whose
# expected values are all zeros, for a model that never writes them (the
# outputs are poisoned, not zeroed).
save("run_i64.onnx", model([h.make_node("Identity", ["x"], ["y"])], [vi("x", I64, (2,))], [vi("y", I64, (2,))]))
write_pb("run_i64_in.pb", np.array([10000, (1 << 53) + 1], np.int64), "x")
write_pb("run_i64_want.pb", np.array([10005, 1 << 53], np.int64), "y")
save("run_zeros_f32.onnx", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", F, (4,))], [vi("y", F, (4,))]))
write_pb("run_zeros_f32_in.pb", np.array([-1, -2, -3, -4], np.float32), "x")
write_pb("run_zeros_f32_want.pb", np.zeros(4, np.float32), "y")
write_pb("run_zeros_i64_in.pb", np.zeros(2, np.int64), "x")
write_pb("run_zeros_i64_want.pb", np.zeros(2, np.int64), "y")
# What run --expect's line says when an output differs: its shape (f32[4]
# against an expected f32[5]); NaN on one side only (Sqrt of -1 and -9
# against 0, a number against an expected NaN); a small value off by 0.02
# in an output reaching 320 (the error against the output's scale).
write_pb("run_zeros_f32_want5.pb", np.zeros(5, np.float32), "y")
save("run_sqrt.onnx", model([h.make_node("Sqrt", ["x"], ["y"])], [vi("x", F, (2, 2))], [vi("y", F, (2, 2))]))
write_pb("run_sqrt_in_neg.pb", np.array([[-1, 4], [-9, 16]], np.float32), "x")
write_pb("run_sqrt_want_nan.pb", np.array([[0, np.nan], [0, 4]], np.float32), "y")
write_pb("run_sqrt_in_320.pb", np.array([[102400, 10000], [1, 0.25]], np.float32), "x")
write_pb("run_sqrt_want_320.pb", np.array([[320, 100], [1, 0.5196]], np.float32), "y")
# z[N, M] = x[N, 1] + y[1, M] at N = 2^16, M = 2^15: an 8 GiB output that
# run must refuse before the call (hostile case run_output_8gib, flag "run":
# the inputs are MODEL_in*.pb).
save("run_output_8gib.onnx", model([h.make_node("Add", ["x", "y"], ["z"])],
                                   [vi("x", F, ("N", 1)), vi("y", F, (1, "M"))], [vi("z", F, ("N", "M"))]))
write_pb("run_output_8gib_in0.pb", np.zeros((1 << 16, 1), np.float32), "x")
write_pb("run_output_8gib_in1.pb", np.zeros((1, 1 << 15), np.float32), "y")

# ---- importer hardening (issue #12: 3-6, 8-10, 13) ----
# Einsum: five ellipses on a rank-12 operand (60 label codes for a 16-slot
# array), one term per operand for 16 operands.
e12 = [vi("e%d" % i, F, [1] * 12) for i in range(16)]
save("einsum_ellipses.onnx", model([h.make_node("Einsum", ["e%d" % i for i in range(16)], ["y"],
                                                equation=",".join(["..." * 5] * 16))], e12, [vi("y", F, ())],
                                   opset=12))


# Raw wire format (protobuf refuses to serialize these depths itself).
def varint(v):
    b = bytearray()
    while True:
        b.append((v & 0x7f) | (0x80 if v > 0x7f else 0))
        v >>= 7
        if not v:
            return bytes(b)


def ld(field, payload):  # a length-delimited field
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def raw_model(graph):  # ir_version 8, opset 13, the graph bytes
    return b"\x08\x08" + ld(8, b"\x10\x0d") + ld(7, graph)


# If -> then_branch graph -> node, 3000 levels (protobuf-c recursed per level).
nest = b""
for _ in range(3000):
    nest = ld(4, b"If") + ld(5, ld(1, b"then_branch") + b"\xa0\x01\x05" + ld(6, ld(1, nest)))
save("nesting_if_3000.onnx", raw_model(ld(1, nest)))
# TypeProto.sequence_type.elem_type ... 8000 deep, on a graph input.
tp = ld(1, b"\x08\x01")  # tensor_type { elem_type: FLOAT }
for _ in range(8000):
    tp = ld(4, ld(1, tp))
save("nesting_type_8000.onnx", raw_model(ld(11, ld(1, b"x") + ld(2, tp))))
# 10 million empty NodeProtos (20 MB): each decodes to a ~200-byte struct.
save("empty_nodes_20mb.onnx", raw_model(b"\x0a\x00" * 10000000))

# ---- model text in the generated C (issue 12, findings 1 and 2) ----
# EVIL is what every string field carries: comment and line ends, a
# preprocessor line, a trigraph splice, backslashes (one before a newline),
# quotes, and four bytes that are not UTF-8. Python's protobuf only takes
# UTF-8 strings, so the fields get MARK (four UTF-8 bytes) and the
# serialised model has it replaced, byte for byte, by BAD.
MARK, BAD = "\u00ff\u00fe", b"\xff\xfe\x80\xc0"
assert len(MARK.encode()) == len(BAD)


def evil(tag):
    return ('%s */ ??/\n#error %s\n\\\n"q" \'c\' /* ' % (tag, tag)) + MARK + '\\'


def save_marked(name, m):
    data = m.SerializeToString()
    assert MARK.encode() in data
    save(name, data.replace(MARK.encode(), BAD))


def tensor_pb(name, arr):
    with open(os.path.join(out, name), "wb") as f:
        f.write(numpy_helper.from_array(arr, "t").SerializeToString())


# The example: code in a node name would run inside `run` and in
# every program linking the C.
save("inject_node.onnx", model([h.make_node("Relu", ["x"], ["y"], name='n */ __attribute__((constructor)) static '
                                            'void p(void){puts("INJECTED");} /* ')], [vi("x")], [vi("y")]))
xs = np.random.default_rng(11).standard_normal((2, 3)).astype(np.float32)
tensor_pb("inject_node_x.pb", xs)
tensor_pb("inject_node_y.pb", np.maximum(xs, 0))
# Every model string field at once; y = relu(x + w) at N = 3, checked by run
# --expect against numpy (onnxruntime does not take names that are not UTF-8).
N_, X_, W_, T_, Y_ = evil("dim"), evil("input"), evil("init"), evil("value"), evil("output")
g = h.make_graph([h.make_node("Add", [X_, W_], [T_], name=evil("node1"), doc_string=evil("doc1")),
                  h.make_node("Relu", [T_], [Y_], name=evil("node2"), doc_string=evil("doc2"))],
                 evil("graph"), [h.make_tensor_value_info(X_, F, [N_, 3], doc_string=evil("vdoc"))],
                 [h.make_tensor_value_info(Y_, F, [N_, 3])],
                 initializer=[numpy_helper.from_array(np.array([0.5, -1.0, 2.0], np.float32), W_)],
                 doc_string=evil("gdoc"), value_info=[h.make_tensor_value_info(T_, F, [N_, 3])])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name=evil("producer"),
                 doc_string=evil("mdoc"), domain=evil("domain"), producer_version=evil("version"))
m.ir_version = 8
h.set_model_props(m, {evil("key"): evil("value")})
save_marked("inject_corpus.onnx", m)
xs = np.random.default_rng(12).standard_normal((3, 3)).astype(np.float32)
tensor_pb("inject_x.pb", xs)
tensor_pb("inject_y.pb", np.maximum(xs + np.array([0.5, -1.0, 2.0], np.float32), 0))
# The strings the importer refuses must still give one line.
save_marked("inject_op_type.onnx", model([h.make_node(evil("op"), ["x"], ["y"])], [vi("x")], [vi("y")]))
save_marked("inject_domain.onnx", model([h.make_node("Relu", ["x"], ["y"], domain=evil("dom"))], [vi("x")], [vi("y")],
                                        domain_opsets=[(evil("dom"), 1)]))
# Symbols named like the generated code's identifiers (the status model_OK,
# the helper max_i64, here used by an int64 Max), and two of 260 characters
# (their product was cut at 512 characters): each runs, checked.
for tag, dims in (("model_ok", ["model_OK", 3]), ("max_i64", ["max_i64", 3]), ("long", ["s" * 260, "t" * 260])):
    save("sym_name_%s.onnx" % tag, model([h.make_node("Relu", ["x"], ["t"]), h.make_node("Mul", ["t", "t"], ["y"]),
                                          h.make_node("Max", ["i", "k"], ["j"])],
                                         [svi("x", dims), svi("i", dims, I64)], [svi("y", dims), svi("j", dims, I64)],
                                         [ints("k", [1])]))
xs = np.random.default_rng(13).standard_normal((4, 3)).astype(np.float32)
ks = np.arange(12, dtype=np.int64).reshape(4, 3) - 6
tensor_pb("sym_x.pb", xs)
tensor_pb("sym_i.pb", ks)
tensor_pb("sym_y.pb", np.maximum(xs, 0) ** 2)
tensor_pb("sym_j.pb", np.maximum(ks, 1))
# Accepted silently before: a graph input declared twice, an initializer
# that contradicts its declared input, two default-domain opset imports.
save("dup_graph_input.onnx", model([h.make_node("Add", ["x", "x"], ["y"])], [vi("x"), vi("x", F, (5,))], [vi("y")]))
save("init_input_dtype.onnx", model([h.make_node("Add", ["x", "w"], ["y"])], [vi("x"), vi("w", I64)], [vi("y")],
                                    [numpy_helper.from_array(np.ones((2, 3), np.float32), "w")]))
save("init_input_shape.onnx", model([h.make_node("Add", ["x", "w"], ["y"])], [vi("x"), vi("w", F, (2, 3))], [vi("y")],
                                    [numpy_helper.from_array(np.ones((1, 3), np.float32), "w")]))
two_opsets = model([h.make_node("Relu", ["x"], ["y"])], [vi("x")], [vi("y")])
two_opsets.opset_import.extend([h.make_opsetid("ai.onnx", 9)])
save("two_default_opsets.onnx", two_opsets)
# Slice with a step of INT64_MAX / INT64_MIN: ONNX gives one element
# (checked against onnxruntime by hostile_slice_step_* in tests/CMakeLists.txt).
for nm, st, s0, e0 in (("max", (1 << 63) - 1, 1, 6), ("min", -(1 << 63), 4, -7)):
    save("slice_step_%s.onnx" % nm, model([h.make_node("Slice", ["x", "s", "e", "a", "p"], ["y"])],
                                          [vi("x", F, (2, 6))], [vi("y", F, (2, 1))],
                                          [ints("s", [s0]), ints("e", [e0]), ints("a", [1]), ints("p", [st])]))
# Sizes from attributes that overflowed int64 (SIGFPE, UBSan reports).
x4 = vi("x", F, (1, 4, 2, 2))
save("depthtospace_2pow32.onnx", model([h.make_node("DepthToSpace", ["x"], ["y"], blocksize=1 << 32)], [x4],
                                       [vi("y", F, ())]))
save("eyelike_kmin.onnx", model([h.make_node("EyeLike", ["x"], ["y"], k=-(1 << 63))], [vi("x", F, (3, 4))],
                                [vi("y", F, (3, 4))], opset=9))
save("maxpool_pads_huge.onnx", model([h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                                                  pads=[(1 << 62)] * 4)], [x4], [vi("y", F, ())]))
save("maxpool_dilation_huge.onnx", model([h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                                                      dilations=[1 << 62, 1])], [x4], [vi("y", F, ())], opset=12))
save("convinteger_pads_huge.onnx", model([h.make_node("ConvInteger", ["xq", "wq"], ["y"], pads=[(1 << 62)] * 4)],
                                         [vi("xq", TensorProto.UINT8, (1, 1, 3, 3))], [vi("y", TensorProto.INT32, ())],
                                         [numpy_helper.from_array(np.ones((1, 1, 2, 2), np.uint8), "wq")], opset=10))
save("maxunpool_strides_huge.onnx", model([h.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2],
                                                       strides=[1 << 62, 1 << 62])], [x4, vi("i", I64, (1, 4, 2, 2))],
                                          [vi("y", F, ())], opset=11))
save("split_overflow.onnx", model([h.make_node("Split", ["x", "s"], ["a", "b"], axis=1)], [vi("x", F, (2, 6))],
                                  [vi("a"), vi("b")], [ints("s", [(1 << 63) - 1, 7])]))
save("convtranspose_strides_huge.onnx",
     model([h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[1 << 62, 1 << 62])], [x4], [vi("y", F, ())],
           [numpy_helper.from_array(np.ones((4, 1, 2, 2), np.float32), "w")]))
# Col2Im: pads that overflow the padded image, a block of 2^40 taps (one
# graph node each), blocks that do not match the input's L
for name, blk, pads, L in [("col2im_pads_huge.onnx", [2, 2], [1 << 62] * 4, 9),
                           ("col2im_block_huge.onnx", [1 << 20, 1 << 20], [0] * 4, 1),
                           ("col2im_blocks_mismatch.onnx", [2, 2], [0] * 4, 7)]:
    save(name, model([h.make_node("Col2Im", ["x", "img", "blk"], ["y"], pads=pads)], [vi("x", F, (1, 4, L))],
                     [vi("y", F, ())], [ints("img", [4, 4]), ints("blk", blk)], opset=18))
# Attributes that expand into one graph node per tap (MaxPool 2^24, LRN
# 2^40): refused before building, not at 3 GB.
save("maxpool_kernel_2pow24.onnx", model([h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[1 << 24],
                                                      pads=[1 << 24, 1 << 24])], [vi("x", F, (1, 1, 4))],
                                         [vi("y", F, ())]))
save("lrn_size_huge.onnx", model([h.make_node("LRN", ["x"], ["y"], size=1 << 40)], [x4], [vi("y", F, ())]))
# Indices checked per component against their own axis (GatherND took
# [[0,5]] of data[3,4] as flat offset 5 = data[1][1]; ScatterND the same,
# [[3,0]] was dropped; Gather with --no-rewrite read 0): the index error at
# run time (tests/CMakeLists.txt, hostile_index_*).
d34 = vi("d", F, (3, 4))
save("gathernd_idx.onnx", model([h.make_node("GatherND", ["d", "i"], ["y"])], [d34, vi("i", I64, (1, 2))],
                                [vi("y", F, (1,))]))
save("scatternd_idx.onnx", model([h.make_node("ScatterND", ["d", "i", "u"], ["y"])], [d34, vi("i", I64, (1, 2))],
                                 [vi("y", F, (3, 4))], [numpy_helper.from_array(np.ones(1, np.float32), "u")]))
save("gather_idx.onnx", model([h.make_node("Gather", ["d", "i"], ["y"], axis=1)], [d34, vi("i", I64, (2,))],
                              [vi("y", F, (3, 2))]))
write_pb("index_d.pb", np.arange(12, dtype=np.float32).reshape(3, 4), "d")
for nm, tup in (("0_5", [[0, 5]]), ("2_m8", [[2, -8]]), ("3_0", [[3, 0]])):
    write_pb("index_nd_%s.pb" % nm, np.array(tup, np.int64), "i")
write_pb("index_gather_4.pb", np.array([1, 4], np.int64), "i")
# Resize: a 4096 -> 262144 linear upsample (1 MiB output) took a dense
# 8 GiB weight matrix at compile time; 2^31 -> 2^30 wrapped in * out.
def resize_model(name, n_in, n_out, mode):
    save(name, model([h.make_node("Resize", ["x", "", "", "s"], ["y"], mode=mode)], [vi("x", F, (1, n_in))],
                     [vi("y", F, (1, n_out))], [ints("s", [1, n_out])]))


resize_model("resize_4096_262144.onnx", 4096, 262144, "linear")
resize_model("resize_wrap.onnx", 1 << 31, 1 << 30, "nearest")

# An input of valid.onnx (the output-file and run clean-up cases).
tensor_pb("valid_x.pb", np.ones((2, 8), np.float32))

# External data that is no regular file (issue 12, 12): a FIFO (opening it
# waited for a writer forever), a folder; a name with ".." inside that is
# no ".." component is fine.
ext_case("fifo", "pipe.bin", setup=lambda d: os.mkfifo(os.path.join(d, "pipe.bin")))
ext_case("subdir", "sub", setup=lambda d: os.mkdir(os.path.join(d, "sub")))
ext_case("dotdot_name", "w..bin", setup=lambda d: shutil.copy(os.path.join(d, "weights.bin"), os.path.join(d, "w..bin")))
# mapped from a page boundary below the offset: a tensor 4 bytes into the
# file is accepted; 4 bytes short of its end is refused
def ext_bytes(n):
    return lambda d: open(os.path.join(d, "weights.bin"), "wb").write(b"\0" * n)


ext_case("unaligned", "weights.bin", offset=4, length=24, setup=ext_bytes(28))
ext_case("unaligned_short", "weights.bin", offset=4, length=24)

# Pad: INT64_MIN has no negation (the crop); 2^62 on both sides overflows.
for nm, pv in (("pad_int64_min", [-(1 << 63), 0, 0, 0]), ("pad_huge", [0, 1 << 62, 0, 1 << 62])):
    save(nm + ".onnx", model([h.make_node("Pad", ["x", "p"], ["y"])], [vi("x")], [vi("y", F, ())], [ints("p", pv)]))

# Sampling and text ops: an iteration space past int64 (the broadcast of
# two shapes that fit), too many TfIdf window comparisons, a mel filter
# bank past the memory limit and one with NaN edges.
save("gridsample_big.onnx", model([h.make_node("GridSample", ["x", "g"], ["y"])],
                                  [vi("x", F, (1, 1, 65536, 65536)), vi("g", F, (1, 65536, 65536, 2))],
                                  [vi("y", F, ())], opset=16))
save("roialign_big.onnx", model([h.make_node("RoiAlign", ["x", "r", "b"], ["y"], sampling_ratio=1024,
                                             output_height=1 << 20, output_width=1 << 20)],
                                [vi("x", F, (1, 1, 4, 4)), vi("r", F, (1 << 30, 4)), vi("b", I64, (1 << 30,))],
                                [vi("y", F, ())], opset=16))
save("tfidf_skips.onnx", model([h.make_node("TfIdfVectorizer", ["x"], ["y"], max_gram_length=64, max_skip_count=1024,
                                            ngram_counts=[0] * 64, ngram_indexes=[0], pool_int64s=[1] * 64)],
                               [vi("x", I64, (4, 1 << 20))], [vi("y", F, ())], opset=9))
for nm, mels, dft, lo in (("mel_big", 1 << 20, 1 << 30, 0.0), ("mel_nan", 4, 16, float("nan"))):
    save(nm + ".onnx", model([h.make_node("MelWeightMatrix", ["m", "n", "r", "lo", "hi"], ["y"])], [], [vi("y", F, ())],
                             [ints("m", mels), ints("n", dft), ints("r", 16000),
                              numpy_helper.from_array(np.float32(lo), "lo"),
                              numpy_helper.from_array(np.float32(8000), "hi")], opset=17))

# An integer attribute at INT64_MAX that becomes a constant of the graph
# (found by the fuzzer, 2026-12-06): NegativeLogLikelihoodLoss's
# ignore_index went through a double, whose cast back to int64 is UB past
# 2^63; it must compile exactly (and, under UBSan, without a report).
save("nll_ignore_max.onnx", model([h.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], reduction="mean",
                                               ignore_index=(1 << 63) - 1)],
                                  [vi("x", F, (3, 5)), vi("t", TensorProto.INT64, (3,))], [vi("y", F, ())]))

# A type's highest value as a constant of the graph: INT64_MAX and
# UINT64_MAX reach ir_load as doubles that round up to 2^63 and 2^64, whose
# cast was UB (and gave INT64_MIN on x86: a min-reduction's start value
# below every element). The uint64 ReduceMin's input, its expected output
# (numpy) and the int64 ScatterElements(min) model are checked at test time.
U64 = TensorProto.UINT64
save("reduce_min_u64.onnx", model([h.make_node("ReduceMin", ["x"], ["y"], axes=[1], keepdims=0)],
                                  [vi("x", U64, (2, 3))], [vi("y", U64, (2,))]))
xu = np.array([[2**64 - 1, 2**63 + 5, 7], [2**63, 2**64 - 2, 2**63 + 1]], dtype=np.uint64)
with open(os.path.join(out, "reduce_min_u64_in.pb"), "wb") as f:
    f.write(numpy_helper.from_array(xu, "x").SerializeToString())
with open(os.path.join(out, "reduce_min_u64_want.pb"), "wb") as f:
    f.write(numpy_helper.from_array(xu.min(axis=1), "y").SerializeToString())
I64 = TensorProto.INT64
# A negative int64 through uint32 and back is a value in [2^31, 2^32): its
# ReduceMax against numpy (onnxruntime 1.30's int64 ReduceMax returns wrong
# maxima of such values: max(2^31, 0, 1) = 1; the differential fuzzer's seed
# 44586 met it)
save("reduce_max_u32_wrap.onnx", model([h.make_node("Cast", ["x"], ["u"], to=TensorProto.UINT32),
                                        h.make_node("Cast", ["u"], ["w"], to=I64),
                                        h.make_node("ReduceMax", ["w"], ["y"], keepdims=0)],
                                       [vi("x", I64, (7, 1))], [vi("y", I64, ())]))
xw = np.array([[-17], [0], [2], [-1], [5], [2**31 - 1], [-2**31]], dtype=np.int64)
with open(os.path.join(out, "reduce_max_u32_wrap_in.pb"), "wb") as f:
    f.write(numpy_helper.from_array(xw, "x").SerializeToString())
with open(os.path.join(out, "reduce_max_u32_wrap_want.pb"), "wb") as f:
    f.write(numpy_helper.from_array(np.array(xw.astype(np.uint32).astype(np.int64).max()), "y").SerializeToString())
save("scatter_min_i64.onnx", model([h.make_node("ScatterElements", ["d", "i", "u"], ["y"], axis=1, reduction="min")],
                                   [vi("d", I64, (2, 4)), vi("i", I64, (2, 4)), vi("u", I64, (2, 4))],
                                   [vi("y", I64, (2, 4))], opset=18))

# Duplicate indices under reduction "none": the last update wins, as
# onnxruntime applies them in order (compiled as a sum of them before
# 2026-12-06: torch 1.13 exports scatter_add at opset 14 as ScatterElements
# onto zeros). Symbolic extents, a negative index, int32 and bool data;
# checked against onnxruntime at test time on these inputs.
B = TensorProto.BOOL
I32 = TensorProto.INT32
dup_inputs = {
    "scatter_dup_f32": [("d", np.zeros((2, 5), np.float32)), ("i", np.array([[1, 1, 1, 3], [4, 0, -1, 4]], np.int64)),
                        ("u", np.array([[10, 20, 30, 40], [1, 2, 3, 4]], np.float32))],
    "scatternd_dup_i32": [("d", np.arange(15, dtype=np.int32).reshape(5, 3)),
                          ("i", np.array([[1], [3], [1], [-1], [1], [4]], np.int64)),
                          ("u", np.arange(100, 118, dtype=np.int32).reshape(6, 3))],
    "scatter_dup_bool": [("d", np.array([[1, 0], [0, 1], [1, 1], [0, 0]], bool)),
                         ("i", np.array([[2, 0], [2, 0], [1, 0], [2, 3]], np.int64)),
                         ("u", np.array([[1, 1], [0, 0], [1, 0], [1, 1]], bool))],
}
save("scatter_dup_f32.onnx", model([h.make_node("ScatterElements", ["d", "i", "u"], ["y"], axis=1)],
                                   [vi("d", F, ("b", 5)), vi("i", I64, ("b", "j")), vi("u", F, ("b", "j"))],
                                   [vi("y", F, ("b", 5))]))
save("scatternd_dup_i32.onnx", model([h.make_node("ScatterND", ["d", "i", "u"], ["y"])],
                                     [vi("d", I32, ("n", 3)), vi("i", I64, ("m", 1)), vi("u", I32, ("m", 3))],
                                     [vi("y", I32, ("n", 3))]))
save("scatter_dup_bool.onnx", model([h.make_node("ScatterElements", ["d", "i", "u"], ["y"], axis=0)],
                                    [vi("d", B, (4, 2)), vi("i", I64, ("j", 2)), vi("u", B, ("j", 2))],
                                    [vi("y", B, (4, 2))]))
for name, ins in dup_inputs.items():
    for k, (nm, arr) in enumerate(ins):
        with open(os.path.join(out, f"{name}_in{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, nm).SerializeToString())

# MaxUnpool of overlapping windows (stride 1 < kernel 3: the 9 windows of a
# 5x5 plane pick the same maximum) and of indices given with duplicates:
# the last input wins, as onnxruntime writes them in order (the sum of the
# duplicates before 2026-12-06: 45 for a maximum of 5).
save("maxunpool_overlap.onnx", model([h.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=[3, 3], strides=[1, 1]),
                                      h.make_node("MaxUnpool", ["p", "i"], ["y"], kernel_shape=[3, 3], strides=[1, 1])],
                                     [vi("x", F, (1, 2, 5, 5))], [vi("y", F, (1, 2, 5, 5))]))
save("maxunpool_dup.onnx", model([h.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
                                 [vi("x", F, (1, 1, 2, 3)), vi("i", I64, (1, 1, 2, 3))], [vi("y", F, (1, 1, 4, 6))]))
xo = np.zeros((1, 2, 5, 5), np.float32)
xo[0, 0, 2, 2], xo[0, 0, 0, 0], xo[0, 1, 1, 3], xo[0, 1, 4, 0] = 5, 1, -2, 7
xo[0, 1] -= 3
# MaxPool -> MaxUnpool back to the pooled input's shape (output_shape, from
# Shape): 8 x 10 pools 3x3/2 to 3 x 4, whose default unpooled shape is 7 x 9.
# The indices are positions in that input, as onnxruntime reads them (they
# were placed in the 7 x 9 plane, then padded: the differential fuzzer).
save("maxunpool_shape.onnx", model([h.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=[3, 3], strides=[2, 2]),
                                    h.make_node("Shape", ["x"], ["s"]),
                                    h.make_node("MaxUnpool", ["p", "i", "s"], ["y"], kernel_shape=[3, 3],
                                                strides=[2, 2])],
                                   [vi("x", F, (2, 3, 8, 10))], [vi("y", F, (2, 3, 8, 10))], opset=11))
# SplitToSequence into 600 pieces, stacked back: the node array grows (and
# moves) while the pieces are cut (a read of the input's shape through a
# pointer into it was a use after free; the differential fuzzer).
save("seq_split_long.onnx", model([h.make_node("SplitToSequence", ["x"], ["q"], axis=1, keepdims=0),
                                   h.make_node("ConcatFromSequence", ["q"], ["y"], axis=0, new_axis=1)],
                                  [vi("x", F, (2, 600))], [vi("y", F, (600, 2))]))
# NonZero of a constant mask of 15,840 elements, gathered from x
# (masked_select): its coordinates are counted at compile time (the
# pairwise form's folding asked for 12.6 GB and was refused).
mask = np.random.default_rng(5).random((15, 33, 32)) < 0.5
save("nonzero_const_mask.onnx", model([h.make_node("NonZero", ["m"], ["nz"]), h.make_node("Transpose", ["nz"], ["i"]),
                                       h.make_node("GatherND", ["x", "i"], ["y"])],
                                      [vi("x", F, (15, 33, 32))], [vi("y", F, (int(mask.sum()),))],
                                      [numpy_helper.from_array(mask, "m")]))
unpool_inputs = {"maxunpool_overlap": [("x", xo)],
                 "maxunpool_dup": [("x", np.array([[[[1, 2, 3], [4, 5, 6]]]], np.float32)),
                                   ("i", np.array([[[[7, 7, 0], [23, 7, 0]]]], np.int64))]}
for name, ins in unpool_inputs.items():
    for k, (nm, arr) in enumerate(ins):
        with open(os.path.join(out, f"{name}_in{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, nm).SerializeToString())

# TopK over NaN: NaN ranks above every number (torch.topk's order), ties by
# the lower index (the spec). With plain compares a NaN and the largest
# number both took rank 0 and the slot summed them: index 5 on an axis of
# 4 (before 2026-12-06). Expected outputs from numpy's lexsort; onnxruntime
# is not the reference here (its order depends on where the NaN sits).
xt = np.array([[1, np.nan, 3, 2, -np.inf], [np.inf, np.nan, np.inf, -1, np.nan], [5, 5, np.nan, np.nan, 0],
               [0, -0.0, 2, 2, -2]], np.float32)
for name, largest in (("topk_nan", 1), ("topk_nan_smallest", 0)):
    save(name + ".onnx", model([h.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)],
                               [vi("x", F, (4, 5))], [vi("v", F, (4, 3)), vi("i", I64, (4, 3))], [ints("k", [3])]))
    nan = np.isnan(xt)
    order = np.stack([np.lexsort((np.arange(5), -np.nan_to_num(r) if largest else np.nan_to_num(r),
                                  ~n if largest else n)) for r, n in zip(xt, nan)])[:, :3]
    for k, arr in enumerate((np.take_along_axis(xt, order, 1), order.astype(np.int64))):
        with open(os.path.join(out, f"{name}_want{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, "vi"[k]).SerializeToString())
with open(os.path.join(out, "topk_nan_in.pb"), "wb") as f:
    f.write(numpy_helper.from_array(xt, "x").SerializeToString())

# Unique over NaN: each NaN its own entry, after every number and in the
# order they occur when sorted (numpy's unique with equal_nan=False; with
# plain compares a NaN shared the smallest entry's place: garbage values
# and an index past the input before 2026-12-06). Sorted and in order of
# first occurrence, expected outputs from numpy.
xu_nan = np.array([3, np.nan, 1, 3, np.nan, -2, 1, -0.0, 0], np.float32)
uy, ui, uinv, uc = np.unique(xu_nan, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
occ = np.argsort(ui, kind="stable")  # the entries in order of first occurrence
rank = np.empty_like(occ)
rank[occ] = np.arange(len(occ))
for name, srt, want in (("unique_nan", 1, (uy, ui, uinv, uc)),
                        ("unique_nan_unsorted", 0, (uy[occ], ui[occ], rank[uinv], uc[occ]))):
    save(name + ".onnx", model([h.make_node("Unique", ["x"], ["y", "i", "inv", "c"], sorted=srt)], [vi("x", F, (9,))],
                               [vi("y", F, ("k",)), vi("i", I64, ("k",)), vi("inv", I64, (9,)), vi("c", I64, ("k",))]))
    for k, arr in enumerate(want):
        with open(os.path.join(out, f"{name}_want{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr.astype(np.float32 if k == 0 else np.int64), ("y", "i", "inv", "c")[k]).SerializeToString())
with open(os.path.join(out, "unique_nan_in.pb"), "wb") as f:
    f.write(numpy_helper.from_array(xu_nan, "x").SerializeToString())
