"""diff_ops_math.py — element-wise arithmetic, reductions, softmax, MatMul/
Gemm/Einsum, the norms, ArgMax/TopK, Where and casts, for fuzz/diff_gen.py."""
import numpy as np
from onnx import TensorProto as T, helper as h

from diff_base import BLOCK_SIZES, exact_axis


# the unary ops onnxruntime's CPU kernels take in float64
DOUBLE_UNARY = ("Relu", "Sigmoid", "Tanh", "Abs", "Neg", "LeakyRelu", "Clip", "Exp", "Log", "Sqrt", "Sin", "Cos",
                "Reciprocal", "Floor", "Round", "Sign")


def op_unary(g):
    x, s, e = g.pick()
    if not g.flt:
        op = g.r.choice(("Abs", "Neg", "Sign"))
        if op == "Sign" and g.dt == T.INT64:  # onnxruntime's int64 Sign: Sign(2^31) = -1 (seed 30396)
            x = g.aux("Clip", [x, g.k(-2 ** 31 + 1), g.k(2 ** 31 - 1)])
        return g.node(op, [x], s, True)
    op = g.r.choice(DOUBLE_UNARY if g.dt == T.DOUBLE else
                    ("Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Erf", "Softplus", "LeakyRelu",
                     "Elu", "HardSigmoid", "HardSwish", "Clip", "Exp", "Log", "Sqrt", "Sin", "Cos",
                     "Reciprocal", "Floor", "Round", "Sign"))
    if op in ("Floor", "Round", "Sign") and not e:
        op = "Relu"
    keep = e and op in ("Relu", "Abs", "Neg", "Floor", "Round", "Sign")
    if op == "Exp":
        x = g.node("Tanh", [x], s)
    elif op in ("Sin", "Cos") and g.dt == T.DOUBLE:
        # of a large value (a sum of squares, 1e9) their result moves a whole
        # 1e-6 with the sum's last ulps, which order of summation sets (seed 33352)
        x = g.aux("Clip", [x, g.k(-64.0), g.k(64.0)])
    elif op in ("Log", "Sqrt", "Reciprocal"):
        a = g.node("Abs", [x], s, e)
        x = g.node("Add", [a, g.k(0.5)], s)
    if op == "LeakyRelu":
        return g.node(op, [x], s, keep, alpha=g.r.choice((0.01, 0.2)))
    if op == "HardSigmoid":
        return g.node(op, [x], s, alpha=0.2, beta=0.5)
    if op == "Clip":
        return g.node(op, [x, g.k(-0.5), g.k(0.7)], s)
    return g.node(op, [x], s, keep)


def op_binary(g):
    a, s, e = g.pick()
    op = g.r.choice(("Add", "Sub", "Mul", "Div", "Max", "Min", "Pow" if g.flt else "Mod"))
    other = g.pick(lambda s2, e2: len(s2) <= len(s) and all(
        d2 in (1, d) for d2, d in zip(reversed(s2), reversed(s))))
    if other is None or g.r.random() < 0.5:
        b, e2 = g.rand(g.broadcast_shape(s)), False
    else:
        b, _, e2 = other
    if g.r.random() < 0.5:
        a, b = b, a
    if op == "Mod":  # a divisor of either sign, never 0: (|b| + 1) * (1 or -1)
        b = g.aux("Mul", [g.aux("Add", [g.aux("Abs", [b]), g.k(1)]), g.k(g.r.choice((1, -1)))])
        return g.node(op, [a, b], s, True, fmod=g.r.choice((0, 1)))
    if op == "Div":  # the divisor kept away from 0: |b| + 0.5
        b = g.aux("Add", [g.aux("Abs", [b]), g.k(0.5 if g.flt else 1)])
    elif op == "Pow":  # base |a| + 0.75, exponent b clipped to [-2, 2]
        a = g.aux("Add", [g.aux("Abs", [a]), g.k(0.75)])
        b = g.aux("Clip", [b, g.k(-2.0), g.k(2.0)])
    return g.node(op, [a, b], s, not g.flt or (e and e2 and op in ("Max", "Min")))


def op_reduce(g):
    x, s, e = g.pick()
    op = g.r.choice(("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2",
                     "ReduceLogSumExp", "ReduceSumSquare", "ReduceL1") if g.flt else
                    ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceSumSquare"))
    # (no integer ReduceProd: past the type's range onnxruntime's does not
    # wrap as numpy's and ours do, e.g. INT32_MIN for a product whose low
    # 32 bits are 0x48000000; ONNX leaves overflow undefined)
    if op == "ReduceSumSquare" and not g.flt:  # nor a square past it (seed 30551: 2^31 - 1 against ours wrapped)
        x = g.aux("Clip", [x, g.k(-32), g.k(32)])
    axes = sorted(g.r.sample(range(len(s)), g.r.randint(1, len(s))))
    keep = g.r.choice((0, 1))
    shape = [1 if i in axes else d for i, d in enumerate(s) if keep or i not in axes]
    exact = not g.flt or (e and op in ("ReduceMax", "ReduceMin"))
    if op == "ReduceSum":
        return g.node(op, [x, g.i64(axes)], shape, exact, keepdims=keep)
    return g.node(op, [x], shape, exact, axes=axes, keepdims=keep)


def op_softmax(g):
    x, s, _ = g.pick()
    return g.node(g.r.choice(("Softmax", "LogSoftmax")), [x], s, axis=g.r.randrange(-len(s), len(s)))


def op_matmul(g):
    x, s, _ = g.pick()
    if len(s) == 1:
        s = [1] + s
        x = g.node("Unsqueeze", [x, g.i64([0])], s)
    k, n = s[-1], g.r.choice(BLOCK_SIZES)
    if len(s) == 2 and g.r.random() < 0.4 and g.flt:
        ta, tb = g.r.choice((0, 1)), g.r.choice((0, 1))
        if ta:
            x = g.node("Transpose", [x], [s[1], s[0]])
        w = g.rand([n, k] if tb else [k, n], k ** -0.5)
        ins = [x, w] + ([g.rand(g.r.choice(([n], [1, n], [s[0], n], [s[0], 1])))] if g.r.random() < 0.7 else [])
        return g.node("Gemm", ins, [s[0], n], transA=ta, transB=tb,
                      alpha=g.r.choice((1.0, 0.5)), beta=g.r.choice((1.0, 2.0)))
    w = g.rand(([s[0]] if len(s) == 3 and g.r.random() < 0.3 else []) + [k, n], k ** -0.5)
    return g.node("MatMul", [x, w], s[:-1] + [n], not g.flt)


def op_norm(g):
    x, s, _ = g.pick()
    op = g.r.choice(("LayerNormalization", "BatchNormalization") if g.dt == T.DOUBLE else
                    ("LayerNormalization", "InstanceNormalization", "BatchNormalization"))
    if op == "LayerNormalization" or len(s) < 3:
        ax = g.r.randrange(-len(s), len(s))
        ns = s[ax:]
        ins = [x, g.rand(ns), g.rand(ns)] if g.r.random() < 0.7 else [x, g.rand(ns)]
        return g.node("LayerNormalization", ins, s, axis=ax, epsilon=1e-5)
    c = s[1]
    if op == "InstanceNormalization":
        return g.node(op, [x, g.rand([c]), g.rand([c])], s, epsilon=1e-5)
    var = g.init(g.np.uniform(0.5, 2.0, c).astype(g.npdt))
    return g.node(op, [x, g.rand([c]), g.rand([c]), g.rand([c]), var], s, epsilon=1e-5)


def op_argmax(g):
    t = exact_axis(g)
    if t is None:
        return None
    x, s, ax = t
    keep = g.r.choice((0, 1))
    shape = [1 if i == ax else d for i, d in enumerate(s) if keep or i != ax]
    y = g.aux(g.r.choice(("ArgMax", "ArgMin")), [x], axis=ax, keepdims=keep)
    return g.node("Cast", [y], shape, True, to=g.dt)


def op_topk(g):
    t = exact_axis(g)
    if t is None:
        return None
    x, s, ax = t
    k = g.r.randint(1, s[ax])
    shape = list(s)
    shape[ax] = k
    v, i = g.name("t"), g.name("t")
    g.nodes.append(h.make_node("TopK", [x, g.i64([k])], [v, i], axis=ax, largest=g.r.choice((0, 1)),
                               sorted=1))
    g.pool.append((v, shape, True))
    return g.node("Cast", [i], shape, True, to=g.dt)


def op_where(g):
    t = g.pick(lambda s, e: e)
    if t is None:
        return None
    a, s, _ = t
    c = g.aux(g.r.choice(("Greater", "Less", "GreaterOrEqual")), [a, g.k(0.1 if g.flt else 0)])
    x, s2, e2 = g.pick(lambda s2, e2: s2 == s) or (a, s, True)
    return g.node("Where", [c, x, g.rand(g.broadcast_shape(s))], s, not g.flt)


def op_cast(g):
    t = g.pick(lambda s, e: e)
    if t is None:
        return None
    x, s, _ = t
    if not g.flt:  # to another integer type (int8 wraps) or to float and back
        to = g.r.choice((T.INT8, T.UINT8, T.INT16, T.INT32, T.INT64, T.FLOAT, T.DOUBLE, T.UINT32))
        if to == T.UINT32 and g.dt == T.INT64:
            # a negative int64 through uint32 is a value in [2^31, 2^32), of
            # which onnxruntime 1.30's int64 ReduceMax returns wrong maxima
            # (max(2^31, 0, 1) = 1); tests/hostile's reduce_max_u32_wrap
            # checks ours against numpy
            to = T.UINT16
        return g.node("Cast", [g.aux("Cast", [x], to=to)], s, True, to=g.dt)
    to = g.r.choice((T.INT32, T.INT64, T.INT8, T.FLOAT if g.dt == T.DOUBLE else T.DOUBLE, T.FLOAT16))
    y = g.aux("Mul", [x, g.k(10.0)])
    if to == T.INT8:  # a float out of int8's range has no defined conversion (ArgMax's 32 -> 320)
        y = g.aux("Clip", [y, g.k(-128.0), g.k(127.0)])
    c = g.aux("Cast", [y], to=to)
    return g.node("Cast", [c], s, to != T.FLOAT16, to=g.dt)


def op_einsum(g):
    x, s, _ = g.pick()
    if len(s) == 2:
        n = g.r.choice((1, 16, 33))
        eq, w, shape = g.r.choice((("ij,jk->ik", [s[1], n], [s[0], n]), ("ij,kj->ik", [n, s[1]], [s[0], n]),
                                   ("ij,j->i", [s[1]], [s[0]]), ("ij->ji", None, [s[1], s[0]])))
    elif len(s) == 3:
        eq, w, shape = g.r.choice((("bij,bkj->bik", [s[0], 5, s[2]], [s[0], s[1], 5]),
                                   ("bij->bj", None, [s[0], s[2]]), ("bij,jk->bik", [s[2], 7], s[:2] + [7])))
    else:
        return None
    return g.node("Einsum", [x] + ([g.rand(w)] if w else []), shape, equation=eq)


def op_variadic(g):
    x, s, e = g.pick()
    others = [p for p in g.pool if p[1] == s and p[0] != x][:2]
    ins = [x] + [p[0] for p in others] + ([g.rand(g.broadcast_shape(s))] if g.r.random() < 0.5 or not others else [])
    op = g.r.choice(("Sum", "Max", "Min") if g.dt == T.DOUBLE else ("Sum", "Mean", "Max", "Min") if g.flt else
                    ("Max", "Min"))
    return g.node(op, ins, s, not g.flt)
