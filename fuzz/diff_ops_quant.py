"""diff_ops_quant.py — the quantized ops as exporters write them, for
fuzz/diff_gen.py."""
import numpy as np
from onnx import TensorProto as T, helper as h

from diff_base import BLOCK_SIZES, conv_out


def quant_params(g, qt, n=None):
    """A scale (not a power of two: a requantization tie would need one) and
    a zero point of type qt (uint8 or int8), scalars or n of them."""
    lo, hi = (0, 255) if qt == T.UINT8 else (-128, 127)
    shape = [] if n is None else [n]
    sc = g.np.uniform(0.01, 0.07, size=shape).astype(np.float32)
    zp = g.np.integers(lo, hi + 1, size=shape).astype(np.uint8 if qt == T.UINT8 else np.int8)
    return g.init(sc, "s"), g.init(zp, "z")


def quant_conv(g, s, lo, hi, npw):
    """(weight, window attributes, output shape) of a 2-D quantized
    convolution over s, its codes in [lo, hi), or None when the window does
    not fit."""
    c, m = s[1], g.r.choice((1, 3, 8, 16, 17))
    ks = [g.r.choice((1, 3)) for _ in range(2)]
    st = [g.r.choice((1, 2)) for _ in range(2)]
    pads = [g.r.choice((0, 1)) for _ in range(4)]
    outs = [conv_out(s[2 + i], ks[i], st[i], 1, pads[i], pads[i + 2]) for i in range(2)]
    if min(outs) <= 0:
        return None
    w = g.init(g.np.integers(lo, hi, size=[m, c] + ks).astype(npw), "q")
    return w, dict(kernel_shape=ks, strides=st, pads=pads), [s[0], m] + outs


def op_quant(g):
    """Quantized ops as exporters write them: QuantizeLinear/DequantizeLinear
    (per tensor or per axis, uint8 or int8; on a grid of exact ties half the
    time, for round-half-to-even), DynamicQuantizeLinear, MatMulInteger,
    ConvInteger, QLinearMatMul and QLinearConv (uint8 activations, weights
    of either type), each ending in a float. The codes are integers, so the
    results are exact functions of exact inputs."""
    kind = g.r.choice(("qdq", "qdq", "dynamic", "matmulinteger", "convinteger", "qlinearmatmul",
                       "qlinearconv"))
    if kind == "qdq":
        qt = g.r.choice((T.UINT8, T.INT8))
        if g.r.random() < 0.5:  # x / 0.125 on halves: ties in both directions, and saturation
            shape = [g.r.randint(1, 6), g.r.randint(1, 40)]
            x, s, e = g.init((g.np.integers(-700, 700, size=shape) / 16.0).astype(np.float32)), shape, True
            sc, zp = g.init(np.array(0.125, np.float32), "s"), g.init(np.array(
                g.r.choice((0, 3, 128, 255)) if qt == T.UINT8 else g.r.choice((0, -3, 5)),
                np.uint8 if qt == T.UINT8 else np.int8), "z")
            attrs = {}
        else:
            t = g.pick(lambda s, e: e)
            if t is None:
                return None
            x, s, e = t
            ax = g.r.randrange(len(s)) if g.r.random() < 0.4 else None
            sc, zp = quant_params(g, qt, None if ax is None else s[ax])
            attrs = {} if ax is None else {"axis": ax}
        q = g.aux("QuantizeLinear", [x, sc, zp], **attrs)
        return g.node("DequantizeLinear", [q, sc, zp], s, True, **attrs)
    if kind in ("dynamic", "matmulinteger", "qlinearmatmul"):
        t = g.pick(lambda s, e: e and len(s) >= (1 if kind == "dynamic" else 2))
    else:
        t = g.pick(lambda s, e: e and len(s) == 4)
    if t is None:
        return None
    x, s, _ = t
    if kind in ("dynamic", "matmulinteger", "convinteger"):
        y, ys, yz = g.name("a"), g.name("a"), g.name("a")
        g.nodes.append(h.make_node("DynamicQuantizeLinear", [x], [y, ys, yz]))
        if kind == "dynamic":
            return g.node("DequantizeLinear", [y, ys, yz], s, True)
        if kind == "matmulinteger":
            k, n = s[-1], g.r.choice(BLOCK_SIZES)
            wt = g.r.choice((np.uint8, np.int8))
            lo, hi = (0, 256) if wt == np.uint8 else (-128, 128)
            w = g.init(g.np.integers(lo, hi, size=[k, n]).astype(wt), "q")
            ins = [y, w, yz]
            if g.r.random() < 0.6:
                ins.append(g.init(g.np.integers(lo, hi, size=g.r.choice(([], [n]))).astype(wt), "z"))
            acc = g.aux("MatMulInteger", ins)
            shape = s[:-1] + [n]
        else:
            cw = quant_conv(g, s, 0, 256, np.uint8)
            if cw is None:
                return None
            w, attrs, shape = cw
            ins = [y, w, yz] + ([g.init(np.array(g.r.randint(0, 255), np.uint8), "z")] if g.r.random() < 0.6 else [])
            acc = g.aux("ConvInteger", ins, **attrs)
        f = g.aux("Cast", [acc], to=T.FLOAT)
        return g.node("Mul", [f, ys], shape, True)
    # QLinearMatMul / QLinearConv: activations in and out uint8 (weights
    # uint8 or int8) or int8 (weights int8), as onnxruntime's kernels pair them
    at = g.r.choice((T.UINT8, T.UINT8, T.INT8))
    xs, xz = quant_params(g, at)
    q = g.aux("QuantizeLinear", [x, xs, xz])
    wt = g.r.choice((T.UINT8, T.INT8)) if at == T.UINT8 else T.INT8
    lo, hi = (0, 256) if wt == T.UINT8 else (-128, 128)
    npw = np.uint8 if wt == T.UINT8 else np.int8
    ys, yz = g.init(np.array(g.r.uniform(0.05, 0.4), np.float32), "s"), g.init(
        np.array(g.r.randint(0, 255), np.uint8) if at == T.UINT8 else np.array(g.r.randint(-128, 127), np.int8), "z")
    if kind == "qlinearmatmul":
        k, n = s[-1], g.r.choice(BLOCK_SIZES)
        w = g.init(g.np.integers(lo, hi, size=[k, n]).astype(npw), "q")
        ws, wz = quant_params(g, wt)
        out = g.aux("QLinearMatMul", [q, xs, xz, w, ws, wz, ys, yz])
        shape = s[:-1] + [n]
    else:
        cw = quant_conv(g, s, lo, hi, npw)
        if cw is None:
            return None
        w, attrs, shape = cw
        m = shape[1]
        per = g.r.random() < 0.5 and wt == T.INT8  # per output channel (onnxruntime: int8 weights)
        ws, wz = quant_params(g, wt, m if per else None)
        if per:  # onnxruntime's QLinearConv takes per-channel zero points of 0 only
            wz = g.init(np.zeros([m], np.int8), "z")
        ins = [q, xs, xz, w, ws, wz, ys, yz]
        if g.r.random() < 0.5:
            ins.append(g.init(g.np.integers(-2000, 2000, size=[m]).astype(np.int32), "b"))
        out = g.aux("QLinearConv", ins, **attrs)
    return g.node("DequantizeLinear", [out, ys, yz], shape, True)
