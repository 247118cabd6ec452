"""diff_ops_rest.py — the ops no other family of fuzz/diff_gen.py makes:
IsInf, IsNaN, Ceil, CastLike, Size, ReduceLogSum, Det, Dropout, RNN,
NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, MaxPool's indices and
MaxUnpool, RoiAlign, STFT, MelWeightMatrix, NonZero of a constant mask,
com.microsoft MatMulNBits (float graphs); BitShift, Size, CastLike
(integer graphs)."""
import numpy as np
from onnx import TensorProto as T, helper as h

from diff_base import conv_out, numel
from diff_ops_conv import recurrent_inputs

UINT = {T.INT32: (T.UINT32, np.uint32), T.INT64: (T.UINT64, np.uint64)}  # the same width, unsigned


def rest_int(g, x, s, e):
    op = g.r.choice(("BitShift", "Size", "CastLike"))
    if op == "BitShift":  # on the unsigned type of the same width, wrapping
        ut, unp = UINT[g.dt]
        # of |x|: a negative x is near 2^32 unsigned, its shift cast back
        # near 2^31, and a later sum of such past the type's range is
        # undefined (seed 40191: onnxruntime's int32 ReduceMean does not wrap)
        u = g.aux("Cast", [g.aux("Abs", [x])], to=ut)
        sh = g.init(g.np.integers(0, 6, size=g.broadcast_shape(s)).astype(unp))
        return g.node("Cast", [g.aux("BitShift", [u, sh], direction=g.r.choice(("LEFT", "RIGHT")))], s, True, to=g.dt)
    if op == "Size":
        return g.node("Add", [x, g.aux("Cast", [g.aux("Size", [x])], to=g.dt)], s, True)
    # through the other integer width (a float would round past 2^24, and a
    # float past the type's range has no defined integer)
    like = g.init(np.zeros([1], np.int64 if g.dt == T.INT32 else np.int32))
    return g.node("CastLike", [g.aux("CastLike", [x, like]), g.init(np.zeros([2], g.npdt))], s, True)


def side(g, name, dt, shape):
    """A graph output of a value-dependent length (its axis named here): not
    offered to later ops, whose shapes are static."""
    g.side.append(h.make_tensor_value_info(name, dt, shape))


def value_lengths(g, op):
    """Ops whose output length depends on the values (an exact tensor's),
    as graph outputs: NonMaxSuppression (its scores), Unique (and x rebuilt
    from its values and inverse indices), NonZero of a comparison."""
    t = g.pick(lambda s2, e2: e2 and numel(s2) <= 64)
    if t is None:
        return None
    x, s, _ = t
    n = numel(s)
    if op == "NMS":  # scores [1, 1, n] of boxes [1, n, 4] (corners, or centres and sizes)
        cpb = g.r.choice((0, 1))
        c, wh = g.np.uniform(0, 4, size=[n, 2]), g.np.uniform(0.5, 3, size=[n, 2])
        boxes = np.concatenate([c, wh if cpb else c + wh * g.np.choice((-1, 1), size=[n, 2])], 1)
        sc = g.aux("Reshape", [x, g.i64([1, 1, n])])
        ins = [g.init(boxes[None].astype(np.float32)), sc, g.init(np.array([g.r.randint(1, n)], np.int64), "c"),
               g.init(np.array([g.r.choice((0.3, 0.5, 0.7))], np.float32)), g.init(np.array([0.0], np.float32))]
        sel = g.aux("NonMaxSuppression", ins, center_point_box=cpb)
        return side(g, sel, T.INT64, ["n_" + sel, 3])
    if op == "Unique":
        u, idx, inv, cnt = g.name("a"), g.name("a"), g.name("a"), g.name("a")
        g.nodes.append(h.make_node("Unique", [g.aux("Reshape", [x, g.i64([-1])])], [u, idx, inv, cnt],
                                   sorted=g.r.choice((0, 1))))
        side(g, u, g.dt, ["n_" + u])
        side(g, g.r.choice((idx, cnt)), T.INT64, ["n_" + u])
        return g.node("Reshape", [g.aux("Gather", [u, inv]), g.i64(s)], s, True)
    nz = g.aux("NonZero", [g.aux("Greater", [x, g.k(0.0)])])
    return side(g, nz, T.INT64, [len(s), "n_" + nz])


def op_rest(g):
    x, s, e = g.pick()
    if not g.flt:
        return rest_int(g, x, s, e)
    op = g.r.choice(("IsInf", "IsNaN", "Ceil", "CastLike", "Size", "ReduceLogSum", "Det", "Dropout", "RNN", "NLL",
                     "SCE", "MaxUnpool", "RoiAlign", "STFT", "Mel", "NonZero", "MatMulNBits", "NMS", "Unique",
                     "NonZeroRT"))
    if op in ("NMS", "Unique", "NonZeroRT"):
        return value_lengths(g, op)
    if op in ("IsInf", "IsNaN", "Ceil", "CastLike"):  # steps: exact inputs
        t = g.pick(lambda s2, e2: e2)
        if t is None:
            return None
        x, s, _ = t
        if op == "IsInf":  # log(0) = -inf where the Relu gave 0
            y = g.aux("Log", [g.aux("Relu", [x])])
            kw = dict(detect_positive=g.r.choice((0, 1)), detect_negative=g.r.choice((0, 1)))
            return g.node("Where", [g.aux("IsInf", [y], **kw), g.k(-2.0), x], s, True)
        if op == "IsNaN":  # sqrt of the negatives
            return g.node("Where", [g.aux("IsNaN", [g.aux("Sqrt", [x])]), g.k(0.5), x], s, True)
        if op == "Ceil":
            return g.node("Ceil", [g.aux("Mul", [x, g.k(2.0)])], s, True)
        to = g.init(np.zeros([1], g.r.choice((np.int32, np.int64, np.float16))))
        return g.node("CastLike", [g.aux("CastLike", [x, to]), g.k(0.0)], s, True)
    if op == "Size":
        return g.node("Mul", [x, g.aux("Cast", [g.aux("Size", [x])], to=T.FLOAT)], s, e)
    if op == "ReduceLogSum":
        ax = sorted(g.r.sample(range(len(s)), g.r.randint(1, len(s))))
        keep = g.r.choice((0, 1))
        y = g.aux("Add", [g.aux("Abs", [x]), g.k(0.5)])
        return g.node(op, [y], [1 if i in ax else d for i, d in enumerate(s) if keep or i not in ax], axes=ax,
                      keepdims=keep)
    if op == "Det":  # x times a constant [n, n] well away from singular
        n = s[-1]
        if n > 5 or len(s) > 3:  # Det is computed for n up to 5
            return None
        y = g.aux("Add", [g.aux("Unsqueeze", [g.aux("Mul", [x, g.k(0.25)]), g.i64([-1])]),
                          g.init(np.eye(n, dtype=np.float32) * 2)])
        return g.node("Det", [y], s[:-1])
    if op == "Dropout":  # inference: the identity, the mask all true
        y, mask = g.name("t"), g.name("a")
        ins = [x] + ([g.k(0.3)] if g.r.random() < 0.5 else [])
        g.nodes.append(h.make_node("Dropout", ins, [y, mask] if g.r.random() < 0.5 else [y]))
        g.pool.append((y, list(s), e))
        return y
    if op == "RNN":
        if len(s) != 3:
            return None
        hid, dirs = g.r.choice((1, 4, 9)), g.r.choice((1, 2))
        ins = recurrent_inputs(g, x, s, 1, hid, dirs)
        acts = [g.r.choice(("Tanh", "Relu", "Sigmoid"))] * dirs
        d = ("forward", "bidirectional")[dirs - 1] if g.r.random() < 0.7 else ("reverse" if dirs == 1 else "bidirectional")
        return g.node("RNN", ins, [s[0], dirs, s[1], hid], hidden_size=hid, direction=d, activations=acts)
    if op in ("NLL", "SCE"):
        if len(s) < 2 or len(s) > 3:
            return None
        c = s[1]
        tgt = g.np.integers(0, c, size=[s[0]] + s[2:]).astype(np.int64)
        attrs = {"reduction": g.r.choice(("none", "sum", "mean"))}
        if g.r.random() < 0.4:
            attrs["ignore_index"] = int(tgt.flat[0])
        ins = [x if op == "SCE" else g.aux("LogSoftmax", [x], axis=1), g.init(tgt, "i")]
        if g.r.random() < 0.5:
            ins.append(g.init(g.np.uniform(0.5, 1.5, size=[c]).astype(np.float32)))
        shape = [s[0]] + s[2:] if attrs["reduction"] == "none" else []
        return g.node("NegativeLogLikelihoodLoss" if op == "NLL" else "SoftmaxCrossEntropyLoss", ins, shape, **attrs)
    if op == "MaxUnpool":  # MaxPool's indices; ties only where the input has them
        if len(s) != 4 or min(s[2:]) < 2:
            return None
        k = g.r.choice((2, 3))
        st = g.r.choice((1, 2, k))
        outs = [conv_out(d, k, st, 1, 0, 0) for d in s[2:]]
        if min(outs) < 1:
            return None
        y, idx = g.name("a"), g.name("a")
        g.nodes.append(h.make_node("MaxPool", [x], [y, idx], kernel_shape=[k, k], strides=[st, st]))
        up = [(o - 1) * st + k for o in outs]
        ins = [y, idx]
        if up != s[2:] or g.r.random() < 0.3:  # indices past the default size: the input's shape given
            ins.append(g.i64(s))
            up = s[2:]
        return g.node("MaxUnpool", ins, s[:2] + up, e, kernel_shape=[k, k], strides=[st, st])
    if op == "RoiAlign":
        if len(s) != 4:
            return None
        n = g.r.randint(1, 3)
        lo = g.np.uniform(-1, max(s[2:]) * 0.6, size=[n, 2])
        rois = np.concatenate([lo, lo + g.np.uniform(0.5, max(s[2:]), size=[n, 2])], 1).astype(np.float32)
        bi = g.np.integers(0, s[0], size=[n]).astype(np.int64)
        oh, ow = g.r.randint(1, 4), g.r.randint(1, 4)
        return g.node(op, [x, g.init(rois), g.init(bi, "i")], [n, s[1], oh, ow], mode="avg", output_height=oh,
                      output_width=ow, sampling_ratio=g.r.choice((0, 1, 2)), spatial_scale=g.r.choice((1.0, 0.5)),
                      coordinate_transformation_mode=g.r.choice(("half_pixel", "output_half_pixel")))
    if op == "STFT":  # a real signal [b, n, 1]
        if len(s) != 2 or s[1] < 4 or g.sym:  # ONNX infers no batch dimension of a symbol
            return None
        fl = g.r.randint(2, min(s[1], 16))
        step = g.r.randint(1, fl)
        y = g.aux("Unsqueeze", [x, g.i64([2])])
        win = g.aux("HannWindow", [g.init(np.array(fl, np.int64), "c")])
        frames = (s[1] - fl) // step + 1
        # onnx 1.12's shape inference counts onesided frames of fl // 2 + 1
        one = g.r.choice((0, 1)) if (s[1] - fl // 2 - 1) // step + 1 == frames else 0
        return g.node(op, [y, g.init(np.array(step, np.int64), "c"), win], [s[0], frames, fl // 2 + 1 if one else fl, 2],
                      onesided=one)
    if op == "Mel":
        if s[-1] < 2:
            return None
        dft = 2 * (s[-1] - 1)
        bins = g.r.randint(1, 8)
        mel = g.aux("MelWeightMatrix", [g.init(np.array(v, np.int64), "c") for v in (bins, dft, 16000)] +
                    [g.init(np.array(v, np.float32)) for v in (g.r.choice((0.0, 100.0)), g.r.choice((4000.0, 8000.0)))])
        return g.node("MatMul", [x, mel], s[:-1] + [bins])
    if op == "NonZero":  # masked_select with a constant mask
        mask = g.np.random(size=s) < 0.5
        if not mask.any():
            return None
        idx = g.aux("Transpose", [g.aux("NonZero", [g.init(mask, "i")])])
        return g.node("GatherND", [x, idx], [int(mask.sum())], e)
    if op == "MatMulNBits":
        k = s[-1]
        n = g.r.choice((1, 5, 16, 33))
        bs = g.r.choice((16, 32, 64))
        nb = (k + bs - 1) // bs
        codes = g.np.integers(0, 256, size=[n, nb, bs // 2]).astype(np.uint8)
        ins = [x, g.init(codes, "i"), g.init(g.np.uniform(0.01, 0.1, size=[n * nb]).astype(np.float32))]
        if g.r.random() < 0.5:
            ins.append(g.init(g.np.integers(0, 256, size=[n * ((nb + 1) // 2)]).astype(np.uint8), "i"))
        return g.node("MatMulNBits", ins, s[:-1] + [n], domain="com.microsoft", K=k, N=n, bits=4, block_size=bs)
    return None
