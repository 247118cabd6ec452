"""diff_ops_more.py — the ops the other families leave out, for
fuzz/diff_gen.py."""
import numpy as np
from onnx import TensorProto as T, helper as h

from diff_base import numel


def more_data(g, op, x, s, e):
    """The ops of op_more that take any type (data movement, indices,
    shapes, logic), for float and integer graphs."""
    if op == "GatherND":
        bd = g.r.choice((0, 1)) if len(s) >= 2 else 0
        k = g.r.randint(1, len(s) - bd)
        lead = s[:bd] + [g.r.randint(1, 3)]
        idx = np.stack([g.np.integers(-d, d, size=lead) for d in s[bd:bd + k]], axis=-1).astype(np.int64)
        return g.node(op, [x, g.init(idx, "i")], lead + s[bd + k:], e, batch_dims=bd)
    if op == "OneHot":
        if len(s) < 2:  # the indices have rank 1 or more
            return None
        ax = g.r.choice((-1, 0))
        depth = s[-1] if ax == -1 else s[0]
        rest = s[:-1] if ax == -1 else s[1:]
        idx = g.np.integers(-depth, depth + 2, size=rest).astype(np.int64)  # onnxruntime: int32 only with an int32 depth
        values = np.array([-0.5, 2.0], g.npdt) if g.flt else np.array([-1, 2], np.int64)
        oh = g.aux("OneHot", [g.init(idx, "i"), g.init(np.array(depth, np.int64), "c"), g.init(values)], axis=ax)
        if g.dt == T.INT32:  # onnxruntime's integer OneHot: int64 values
            oh = g.aux("Cast", [oh], to=T.INT32)
        return g.node("Mul", [x, oh], s, e)
    if op == "Range":
        n = s[-1]
        st, dl = g.r.choice(((0.0, 1.0), (2.5, -0.5), (-1.0, 0.25)) if g.flt else ((0, 1), (3, -1), (-2, 2)))
        r = g.aux("Range", [g.k(st), g.k(st + dl * n - dl / 2 if g.flt else st + dl * n), g.k(dl)])
        return g.node("Add", [x, r], s, e)
    if op == "ConstantOfShape":
        c = g.aux("ConstantOfShape", [g.aux("Shape", [x])], value=h.make_tensor("v", g.dt, [1], [0.75 if g.flt else 3]))
        return g.node("Mul", [x, c], s, not g.flt)
    if op == "EyeLike":
        if len(s) != 2:
            return None
        return g.node("Mul", [x, g.aux("EyeLike", [x], k=g.r.randint(-2, 2))], s, e)
    if op == "Logical":  # comparisons of exact tensors, combined
        t = g.pick(lambda s2, e2: e2)
        if t is None:
            return None
        x, s, _ = t
        a = g.aux("Greater", [x, g.k(0.0)])
        b = g.aux(g.r.choice(("Less", "Equal")), [x, g.k(g.r.choice((0.5, 1.0, -0.25)))])
        c = g.aux(g.r.choice(("And", "Or", "Xor")), [a, b])
        if g.r.random() < 0.5:
            c = g.aux("Not", [c])
        return g.node("Where", [c, x, g.aux("Neg", [x])], s, True)
    if op == "Compress":
        ax = g.r.randrange(len(s))
        cond = g.np.integers(0, 2, size=s[ax]).astype(bool)
        cond[g.r.randrange(s[ax])] = True
        shape = list(s)
        shape[ax] = int(cond.sum())
        return g.node(op, [x, g.init(cond, "i")], shape, e, axis=ax)
    if op == "ReverseSequence":
        if len(s) < 2:
            return None
        ba, ta = g.r.choice(((1, 0), (0, 1)))
        lens = g.np.integers(1, s[ta] + 1, size=s[ba]).astype(np.int64)
        return g.node(op, [x, g.init(lens, "i")], s, e, batch_axis=ba, time_axis=ta)
    return None


# the ones onnxruntime's CPU kernels take in float64 (Shrink too, but it
# computes x ± bias in float32: 4/3 - 0.25 gives 1.0833333730697632)
DOUBLE_MORE = ("PRelu", "GatherND", "Range", "ConstantOfShape", "EyeLike", "ReduceProd", "LpNormalization",
               "Logical", "Compress", "ReverseSequence", "DFT", "HannWindow")


def op_more(g):
    """Ops the families above leave out: PRelu, Selu, Celu, ThresholdedRelu,
    Shrink, Softsign, inverse trigonometry, Hardmax, GatherND, OneHot,
    Range, ConstantOfShape, EyeLike, ReduceProd, LpNormalization,
    MeanVarianceNormalization, LRN, LpPool, logical ops, Compress,
    ReverseSequence, GridSample, DFT, HannWindow (float graphs)."""
    x, s, e = g.pick()
    if not g.flt:  # the ones of them that take integers
        op = g.r.choice(("GatherND", "OneHot", "Range", "ConstantOfShape", "EyeLike", "Logical", "Compress",
                         "ReverseSequence"))
        return more_data(g, op, x, s, e)
    op = g.r.choice(DOUBLE_MORE if g.dt == T.DOUBLE else
                    ("PRelu", "Selu", "Celu", "ThresholdedRelu", "Shrink", "Softsign", "Atrig", "Hardmax",
                     "GatherND", "OneHot", "Range", "ConstantOfShape", "EyeLike", "ReduceProd",
                     "LpNormalization", "MeanVarianceNormalization", "LRN", "LpPool", "Logical", "Compress",
                     "ReverseSequence", "GridSample", "DFT", "HannWindow"))
    if op == "PRelu":
        return g.node(op, [x, g.rand(g.broadcast_shape(s))], s)
    if op in ("Selu", "Celu", "Softsign"):
        attrs = {"Selu": {"alpha": 1.5, "gamma": 1.2}, "Celu": {"alpha": g.r.choice((0.5, 1.0, 2.0))}}.get(op, {})
        return g.node(op, [x], s, **attrs)
    if op in ("ThresholdedRelu", "Shrink", "Hardmax"):  # a step at the threshold: exact inputs
        t = g.pick(lambda s2, e2: e2)
        if t is None:
            return None
        x, s, _ = t
        if op == "ThresholdedRelu":
            return g.node(op, [x], s, True, alpha=g.r.choice((0.0, 0.5, 1.0)))
        if op == "Shrink":
            return g.node(op, [x], s, True, lambd=g.r.choice((0.0, 0.5)), bias=g.r.choice((0.0, 0.25)))
        return g.node(op, [x], s, True, axis=g.r.randrange(-len(s), len(s)))
    if op == "Atrig":
        f = g.r.choice(("Atan", "Asinh", "Asin", "Acos", "Sinh", "Cosh", "Tan", "Atanh", "Acosh"))
        y = x
        if f in ("Asin", "Acos", "Atanh", "Tan", "Sinh", "Cosh"):  # inside (-0.9, 0.9)
            y = g.aux("Mul", [g.aux("Tanh", [x]), g.k(0.9)])
        elif f == "Acosh":
            y = g.aux("Add", [g.aux("Abs", [x]), g.k(1.25)])
        return g.node(f, [y], s)
    if op == "ReduceProd":  # factors near 1
        ax = sorted(g.r.sample(range(len(s)), g.r.randint(1, len(s))))
        keep = g.r.choice((0, 1))
        y = g.aux("Add", [g.aux("Mul", [g.aux("Tanh", [x]), g.k(0.2)]), g.k(1.0)])
        return g.node(op, [y], [1 if i in ax else d for i, d in enumerate(s) if keep or i not in ax], axes=ax,
                      keepdims=keep)
    if op == "LpNormalization":
        return g.node(op, [x], s, axis=g.r.randrange(-len(s), len(s)), p=g.r.choice((1, 2)))
    if op == "MeanVarianceNormalization":
        # no constant group (a Relu's zeros, one element): ONNX's function
        # divides by the deviation + 1e-9 (0 there, as ours), onnxruntime by
        # the deviation (NaN)
        ax = sorted(g.r.sample(range(len(s)), g.r.randint(1, len(s))))
        if numel([s[a] for a in ax]) < 2:
            return None
        return g.node(op, [g.aux("Add", [x, g.rand(s)])], s, axes=ax)
    if op in ("LRN", "LpPool"):
        t = g.pick(lambda s2, e2: len(s2) == 4)
        if t is None:
            return None
        x, s, _ = t
        if op == "LRN":
            return g.node(op, [x], s, size=g.r.choice((1, 3, 5)), alpha=1e-2, beta=0.75, bias=1.0)
        ks = [g.r.choice((1, 2, 3)) for _ in range(2)]
        st = [g.r.choice((1, 2)) for _ in range(2)]
        outs = [(s[2 + i] - ks[i]) // st[i] + 1 for i in range(2)]
        if min(outs) <= 0:
            return None
        return g.node(op, [x], s[:2] + outs, kernel_shape=ks, strides=st, p=g.r.choice((1, 2, 3)))
    if op == "GridSample":
        t = g.pick(lambda s2, e2: len(s2) == 4)
        if t is None:
            return None
        x, s, _ = t
        ho, wo = g.r.randint(1, 7), g.r.randint(1, 7)
        grid = g.init(g.np.uniform(-1.2, 1.2, size=[s[0], ho, wo, 2]).astype(np.float32))
        return g.node(op, [x, grid], s[:2] + [ho, wo], mode=g.r.choice(("bilinear", "nearest", "bicubic")),
                      padding_mode=g.r.choice(("zeros", "border", "reflection")),
                      align_corners=g.r.choice((0, 1)))
    if op == "DFT":  # a real signal [b, n, 1] along axis 1
        if len(s) != 2:
            return None
        y = g.aux("Unsqueeze", [x, g.i64([2])])
        one = g.r.choice((0, 1))
        n = s[1]
        return g.node(op, [y], [s[0], n // 2 + 1 if one else n, 2], axis=1, onesided=one)
    if op == "HannWindow":
        n = s[-1]
        # (float64: Hann only; onnxruntime rounds Hamming's and Blackman's
        # coefficients to float32, 25/46 to 0.54347825, 2e-8 from ours)
        kinds = ("HannWindow",) if g.dt == T.DOUBLE else ("HannWindow", "HammingWindow", "BlackmanWindow")
        w = g.aux(g.r.choice(kinds),
                  [g.init(np.array(n, np.int64), "c")], periodic=g.r.choice((0, 1)),
                  **({"output_datatype": g.dt} if g.dt == T.DOUBLE else {}))
        return g.node("Mul", [x, w], s)
    if op in ("GatherND", "OneHot", "Range", "ConstantOfShape", "EyeLike", "Logical", "Compress", "ReverseSequence"):
        return more_data(g, op, x, s, e)
    return None
