"""diff_ops_conv.py — Conv, ConvTranspose, the pools, Resize and the
recurrent ops (LSTM, GRU), for fuzz/diff_gen.py."""
import numpy as np
from onnx import TensorProto as T, helper as h

from diff_base import BLOCK_SIZES, conv_out, numel


def op_conv(g):
    t = g.pick(lambda s, e: len(s) in (3, 4))
    x, s, _ = t if t else g.new_input(4)
    sp = len(s) - 2
    c = s[1]
    grp = g.r.choice([d for d in (1, 2, 3, 4, c) if c % d == 0])
    m = grp * g.r.choice((1, 2, 3, 5, 8)) if grp > 1 and g.r.random() < 0.5 else g.r.choice(BLOCK_SIZES[:14])
    if m % grp:
        m = grp * max(1, m // grp)
    ks = [g.r.choice((1, 1, 2, 3, 3, 5)) for _ in range(sp)]
    st = [g.r.choice((1, 1, 2, 3)) for _ in range(sp)]
    dil = [g.r.choice((1, 1, 2)) for _ in range(sp)]
    pads = [g.r.choice((0, 0, 1, 2)) for _ in range(2 * sp)]
    outs = [conv_out(s[2 + i], ks[i], st[i], dil[i], pads[i], pads[i + sp]) for i in range(sp)]
    if min(outs) <= 0:
        return x
    w = g.rand([m, c // grp] + ks, (c // grp * numel(ks)) ** -0.5)
    ins = [x, w] + ([g.rand([m])] if g.r.random() < 0.6 else [])
    return g.node("Conv", ins, [s[0], m] + outs, group=grp, kernel_shape=ks, strides=st, dilations=dil, pads=pads)


def op_convtranspose(g):
    t = g.pick(lambda s, e: len(s) in (3, 4))
    x, s, _ = t if t else g.new_input(4)
    sp = len(s) - 2
    c = s[1]
    grp = g.r.choice([d for d in (1, 2, c) if c % d == 0])
    mg = g.r.choice((1, 2, 3, 8))
    ks = [g.r.choice((1, 2, 3, 4)) for _ in range(sp)]
    st = [g.r.choice((1, 2, 2, 3)) for _ in range(sp)]
    dil = [g.r.choice((1, 1, 2)) for _ in range(sp)]
    pads = [g.r.choice((0, 0, 1)) for _ in range(2 * sp)]
    outs = [(s[2 + i] - 1) * st[i] + dil[i] * (ks[i] - 1) + 1 - pads[i] - pads[i + sp] for i in range(sp)]
    if min(outs) <= 0:
        return x
    w = g.rand([c, mg] + ks, (c * numel(ks)) ** -0.5)
    ins = [x, w] + ([g.rand([mg * grp])] if g.r.random() < 0.5 else [])
    return g.node("ConvTranspose", ins, [s[0], mg * grp] + outs, group=grp, kernel_shape=ks, strides=st,
                  dilations=dil, pads=pads)


def op_pool(g):
    t = g.pick(lambda s, e: len(s) in (3, 4))
    x, s, e = t if t else g.new_input(4)
    sp = len(s) - 2
    # onnxruntime pools float64 only by MaxPool
    op = g.r.choice(("MaxPool",) if g.dt == T.DOUBLE else
                    ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"))
    if op.startswith("Global"):
        return g.node(op, [x], s[:2] + [1] * sp, e and op == "GlobalMaxPool")
    ks = [g.r.choice((1, 2, 3)) for _ in range(sp)]
    st = [g.r.choice((1, 2)) for _ in range(sp)]
    pads = [g.r.randint(0, k - 1) for k in ks] * 2 if g.r.random() < 0.5 else [0] * (2 * sp)
    ceil = g.r.choice((0, 0, 1))
    outs = []
    for i in range(sp):
        num = s[2 + i] + pads[i] + pads[i + sp] - ks[i]
        if num < 0:
            return x  # a window larger than the padded input: refused, as PyTorch does
        o = (num + (st[i] - 1 if ceil else 0)) // st[i] + 1
        if ceil and (o - 1) * st[i] >= s[2 + i] + pads[i]:
            ceil = 0  # ONNX's shape inference and onnxruntime differ on a window wholly in the right pad
        outs.append(o)
    if not ceil:
        outs = [(s[2 + i] + pads[i] + pads[i + sp] - ks[i]) // st[i] + 1 for i in range(sp)]
    if min(outs) <= 0:
        return x
    attrs = dict(kernel_shape=ks, strides=st, pads=pads, ceil_mode=ceil)
    if op == "AveragePool":
        attrs["count_include_pad"] = g.r.choice((0, 1))
    return g.node(op, [x], s[:2] + outs, e and op == "MaxPool", **attrs)


def op_resize(g):
    t = g.pick(lambda s, e: len(s) in (3, 4))
    x, s, e = t if t else g.new_input(4)
    # onnxruntime's cubic takes 2-D images only
    mode = g.r.choice(("nearest", "linear", "cubic") if len(s) == 4 else ("nearest", "linear"))
    scales = [1.0, 1.0] + [g.r.choice((0.5, 2.0, 1.5, 3.0, 0.75)) for _ in s[2:]]
    shape = s[:2] + [int(d * f) for d, f in zip(s[2:], scales[2:])]
    if min(shape) <= 0:
        return x
    ctm = g.r.choice(("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"))
    attrs = dict(mode=mode, coordinate_transformation_mode=ctm)
    if mode == "nearest":
        attrs["nearest_mode"] = g.r.choice(("round_prefer_floor", "floor", "ceil"))
    if g.r.random() < 0.5:  # sizes instead of scales
        return g.node("Resize", [x, "", "", g.i64(shape)], shape, e and mode == "nearest", **attrs)
    return g.node("Resize", [x, "", g.init(np.array(scales, np.float32))], shape, e and mode == "nearest", **attrs)


def recurrent_inputs(g, x, s, gates, hid, dirs):
    """X [seq, batch, input], W, R and (7 times in 10) B of an LSTM, GRU or
    RNN of `gates` gates."""
    sc = (s[2] + hid) ** -0.5
    ins = [x, g.rand([dirs, gates * hid, s[2]], sc), g.rand([dirs, gates * hid, hid], sc)]
    if g.r.random() < 0.7:
        ins.append(g.rand([dirs, 2 * gates * hid], 0.1))
    return ins


def op_recurrent(g):
    """LSTM or GRU over a 3-D tensor read as [seq, batch, input]."""
    t = g.pick(lambda s, e: len(s) == 3)
    if t is None:
        return None
    x, s, _ = t
    op = g.r.choice(("LSTM", "GRU"))
    hid, gates = g.r.choice((1, 3, 8, 17)), 4 if op == "LSTM" else 3
    dirs = g.r.choice((1, 2))
    ins = recurrent_inputs(g, x, s, gates, hid, dirs)
    attrs = dict(hidden_size=hid, direction=("forward", "bidirectional")[dirs - 1] if g.r.random() < 0.8
                 else ("reverse" if dirs == 1 else "bidirectional"))
    if op == "GRU":
        attrs["linear_before_reset"] = g.r.choice((0, 1))
    out = g.name("t")
    g.nodes.append(h.make_node(op, ins, [out], **attrs))
    y = [s[0], dirs, s[1], hid]
    g.pool.append((out, y, False))
    return out
