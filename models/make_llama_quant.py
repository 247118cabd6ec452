#!/usr/bin/python3
"""Quantizes a LLaMA export of make_llama.py with numpy (weights only).

Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy).

Every MatMul whose second input is a 2-D float initializer [K, N] (the
q/k/v/o projections and the MLP) is rewritten; the embedding (Gather) and the
LM head (the MatMul producing the output `logits`) stay float, unless
--quantize-head: then the LM head takes the same form. A decode step streams
every weight it multiplies once, and a float head is most of that stream
once the layers are int8 (TinyLlama's shape: 262 MB of 1.23 GB; base
LLaMA decode step, one Sapphire Rapids core: 15.6 ms with a float head, 9.x
with an int8 one, fp32 30.8), so the int8 bench rows quantize it.

Forms (--form):
  qdq       B = DequantizeLinear(int8 W, scale, zero point) -> MatMul.
            --per-tensor: one scale and an int8 zero point for the whole
            weight (asymmetric, -128..127); default per output channel
            (axis 1, symmetric, zero points 0).
  dynamic   what onnxruntime's quantize_dynamic writes for a MatMul:
            DynamicQuantizeLinear(A) -> (a_q uint8, a_scale, a_zp);
            MatMulInteger(a_q, W int8, a_zp, w_zp) -> int32;
            Mul(a_scale, w_scale) -> multiplier; Cast(int32 -> float);
            Mul(cast, multiplier). W is int8 symmetric, per tensor (zero
            point 0), or per channel with --per-channel.
  nbits     com.microsoft MatMulNBits (bits 4): B uint8 [N, k_blocks,
            block_size/2], codes low nibble first along K; scales float
            [N * k_blocks]; with --zero-points, asymmetric codes and packed
            uint8 zero points [N * ceil(k_blocks / 2)] (low nibble = even
            block); without, symmetric codes around the default zero point
            8. K need not be a multiple of --block-size (32, 64 or 128): the
            last block is padded with the zero point.

Output: OUT/model.onnx. The inputs of the float model's test_data_set_*
are valid inputs of the quantized one (tests/CMakeLists.txt runs `verify`
with them: onnxruntime on the same quantized graph is the reference).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def rne(x):
    return np.round(x)  # numpy rounds half to even


def q_int8_channel(w):
    """Symmetric int8 per output channel (axis 1 of [K, N])."""
    amax = np.abs(w).max(axis=0)
    s = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    q = np.clip(rne(w / s), -127, 127).astype(np.int8)
    return q, s, np.zeros(w.shape[1], np.int8)


def q_int8_tensor(w, symmetric):
    if symmetric:
        amax = float(np.abs(w).max())
        s = np.float32(amax / 127.0 if amax > 0 else 1.0)
        return np.clip(rne(w / s), -127, 127).astype(np.int8), s, np.int8(0)
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    s = np.float32((hi - lo) / 255.0 if hi > lo else 1.0)
    zp = int(np.clip(rne(-128 - lo / s), -128, 127))
    q = np.clip(rne(w / s) + zp, -128, 127).astype(np.int8)
    return q, s, np.int8(zp)


def q_nbits(w, bs, zero_points):
    """w [K, N] -> (B [N, kb, bs/2] uint8, scales [N*kb], zp packed or None)."""
    k, n = w.shape
    kb = (k + bs - 1) // bs
    wt = np.zeros((n, kb * bs), np.float32)
    wt[:, :k] = w.T
    blk = wt.reshape(n, kb, bs)
    if zero_points:
        lo = np.minimum(blk.min(axis=2), 0.0)
        hi = np.maximum(blk.max(axis=2), 0.0)
        s = np.where(hi > lo, (hi - lo) / 15.0, 1.0).astype(np.float32)
        zp = np.clip(rne(-lo / s), 0, 15).astype(np.uint8)
    else:
        amax = np.abs(blk).max(axis=2)
        s = np.where(amax > 0, amax / 8.0, 1.0).astype(np.float32)
        zp = np.full((n, kb), 8, np.uint8)
    q = np.clip(rne(blk / s[:, :, None]) + zp[:, :, None], 0, 15).astype(np.uint8)
    # the padding past K holds the zero point: it dequantizes to 0
    q.reshape(n, kb * bs)[:, k:] = np.repeat(zp[:, -1:], kb * bs - k, axis=1)
    packed = (q[:, :, 0::2] | (q[:, :, 1::2] << 4)).astype(np.uint8)
    zpk = None
    if zero_points:
        zpad = np.full((n, kb + (kb & 1)), 8, np.uint8)
        zpad[:, :kb] = zp
        zpk = (zpad[:, 0::2] | (zpad[:, 1::2] << 4)).reshape(-1).astype(np.uint8)
    return packed, s.reshape(-1), zpk


def quantize(model, a, base_dir):
    g = model.graph
    init = {t.name: t for t in g.initializer}
    outputs = {o.name for o in g.output}
    nodes, new_inits, drop, dql = [], [], set(), set()
    count = 0
    for node in g.node:
        w = init.get(node.input[1]) if node.op_type == "MatMul" else None
        if (w is None or len(w.dims) != 2 or w.data_type != TensorProto.FLOAT
                or (node.output[0] in outputs and not a.quantize_head)):
            nodes.append(node)
            continue
        count += 1
        W = numpy_helper.to_array(w, base_dir).astype(np.float32)
        K, N = W.shape
        x, y, p = node.input[0], node.output[0], f"{node.input[1]}_q"
        drop.add(node.input[1])

        def add(arr, name):
            new_inits.append(numpy_helper.from_array(np.asarray(arr), name=name))
            return name
        if a.form == "qdq":
            q, s, z = q_int8_tensor(W, False) if a.per_tensor else q_int8_channel(W)
            at = {} if a.per_tensor else {"axis": 1}
            nodes.append(helper.make_node("DequantizeLinear", [add(q, p), add(s, p + "_scale"), add(z, p + "_zp")],
                                          [p + "_dq"], name=node.name + "_dq", **at))
            nodes.append(helper.make_node("MatMul", [x, p + "_dq"], [y], name=node.name))
        elif a.form == "dynamic":
            q, s, z = q_int8_channel(W) if a.per_channel else q_int8_tensor(W, True)
            n = node.name
            if x not in dql:  # one DynamicQuantizeLinear per activation, as quantize_dynamic does
                dql.add(x)
                nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [x + "_q", x + "_s", x + "_z"],
                                              name=x + "_dql"))
            nodes += [
                helper.make_node("MatMulInteger", [x + "_q", add(q, p), x + "_z", add(z, p + "_zp")],
                                 [y + "_i32"], name=n + "_mmi"),
                helper.make_node("Mul", [x + "_s", add(s, p + "_scale")], [y + "_mult"], name=n + "_scales_mul"),
                helper.make_node("Cast", [y + "_i32"], [y + "_f"], name=n + "_cast", to=TensorProto.FLOAT),
                helper.make_node("Mul", [y + "_f", y + "_mult"], [y], name=n + "_mul"),
            ]
        else:
            b, s, z = q_nbits(W, a.block_size, a.zero_points)
            ins = [x, add(b, p), add(s, p + "_scale")]
            if z is not None:
                ins.append(add(z, p + "_zp"))
            nodes.append(helper.make_node("MatMulNBits", ins, [y], name=node.name, domain="com.microsoft",
                                          K=K, N=N, bits=4, block_size=a.block_size, **level_attr(a)))
    keep = [t for t in g.initializer if t.name not in drop]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    if a.form == "nbits":
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return count


def b_input_model(path):
    """One MatMulNBits whose B is a graph input (not a weight): K 40 (blocks
    of 16, the last one padded), N 24, packed zero points."""
    k, n, bs = 40, 24, 16
    kb = (k + bs - 1) // bs
    rng = np.random.default_rng(1)
    node = helper.make_node("MatMulNBits", ["a", "b", "s", "z"], ["y"], domain="com.microsoft",
                            K=k, N=n, bits=4, block_size=bs)
    g = helper.make_graph([node], "nbits_b_input",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, k]),
                           helper.make_tensor_value_info("b", TensorProto.UINT8, [n, kb, bs // 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, n])],
                          [numpy_helper.from_array((rng.random(n * kb) * 0.1 + 0.01).astype(np.float32), "s"),
                           numpy_helper.from_array(rng.integers(0, 256, n * ((kb + 1) // 2)).astype(np.uint8), "z")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    onnx.save(m, path)
    print(f"{path}: MatMulNBits with B as a graph input")


def level_attr(a):
    """accuracy_level, when given: 4 lets onnxruntime quantize A to int8 per
    block (its CPU kernels do for 4 and 8 bits), and we then do the same."""
    return {} if a.accuracy_level is None else {"accuracy_level": a.accuracy_level}


def const_node_model(path, bits, a):
    """One MatMulNBits with constant B, scales and packed zero points and
    --rows rows of A (1: the decode form): K --k (75: blocks of
    --block-size, default 16, the last one padded), N --n (40), `bits`
    bits."""
    k, n, bs, rows = a.k, a.n, a.block_size, a.rows
    kb, per = (k + bs - 1) // bs, 8 // bits
    rng = np.random.default_rng(bits)
    codes = rng.integers(0, 1 << bits, (n, kb, bs // per, per))
    b = np.zeros((n, kb, bs // per), np.uint8)
    for j in range(per):  # code j of a byte in bits j*bits.., low bits first
        b |= (codes[..., j] << (j * bits)).astype(np.uint8)
    zrow = (kb + per - 1) // per
    zc = rng.integers(0, 1 << bits, (n, zrow, per))
    z = np.zeros((n, zrow), np.uint8)
    for j in range(per):
        z |= (zc[..., j] << (j * bits)).astype(np.uint8)
    node = helper.make_node("MatMulNBits", ["a", "b", "s", "z"], ["y"], domain="com.microsoft",
                            K=k, N=n, bits=bits, block_size=bs, **level_attr(a))
    g = helper.make_graph([node], f"nbits{bits}_node",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [rows, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, n])],
                          [numpy_helper.from_array(b, "b"),
                           numpy_helper.from_array((rng.random(n * kb) * 0.1 + 0.01).astype(np.float32), "s"),
                           numpy_helper.from_array(z.reshape(-1), "z")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    onnx.save(m, path)
    print(f"{path}: MatMulNBits, {bits} bits, constant B, {rows} row(s), blocks of {bs}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--in", dest="inp", help="float model.onnx (make_llama.py)")
    p.add_argument("--out", help="output directory (model.onnx)")
    p.add_argument("--form", choices=["qdq", "dynamic", "nbits"])
    p.add_argument("--per-tensor", action="store_true", help="qdq: one scale per weight")
    p.add_argument("--per-channel", action="store_true", help="dynamic: one scale per column")
    p.add_argument("--block-size", type=int, choices=[16, 32, 64, 128, 256],
                   help="nbits: block size (default 32; --node: 16)")
    p.add_argument("--zero-points", action="store_true", help="nbits: asymmetric, with zero points")
    p.add_argument("--quantize-head", action="store_true", help="the LM head (the MatMul giving an output) too")
    p.add_argument("--b-input", metavar="PATH", help="instead: write a one-node MatMulNBits model whose B is an input")
    p.add_argument("--node", metavar="PATH", help="instead: write a one-node MatMulNBits model with constant B, --bits")
    p.add_argument("--bits", type=int, default=4, choices=[2, 4, 8], help="--node: bits per code")
    p.add_argument("--rows", type=int, default=1, help="--node: rows of A")
    p.add_argument("--k", type=int, default=75, help="--node: K")
    p.add_argument("--n", type=int, default=40, help="--node: N")
    p.add_argument("--accuracy-level", type=int, choices=[0, 1, 2, 3, 4],
                   help="nbits, --node: the MatMulNBits nodes' accuracy_level (default: unset)")
    a = p.parse_args()
    if a.b_input:
        return b_input_model(a.b_input)
    if a.node:
        a.block_size = a.block_size or 16
        return const_node_model(a.node, a.bits, a)
    a.block_size = a.block_size or 32
    if not a.inp or not a.form:
        p.error("--in and --form are required")
    # external data is read one tensor at a time (a 4.4 GB model never
    # whole in memory); the float tensors left are loaded to be saved anew
    base = os.path.dirname(os.path.abspath(a.inp))
    model = onnx.load(a.inp, load_external_data=False)
    external = any(t.data_location == TensorProto.EXTERNAL for t in model.graph.initializer)
    n = quantize(model, a, base)
    if external:
        for t in model.graph.initializer:
            if t.data_location == TensorProto.EXTERNAL:
                t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t, base), t.name))
    if a.form != "nbits":  # the checker knows no com.microsoft schema
        onnx.checker.check_model(model)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "model.onnx")
    if external:  # stays external: the result may pass protobuf's 2 GB
        onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                  location="model.onnx.data", size_threshold=1024)
    else:
        onnx.save(model, path)
    print(f"{path}: {os.path.getsize(path)} bytes, {n} MatMuls quantized ({a.form})")


if __name__ == "__main__":
    main()
