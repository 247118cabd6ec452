"""diff_gen.py — random valid ONNX graphs for differential testing against
onnxruntime (fuzz/diff_fuzz.py drives it).

make_model(seed) returns (model, syms, feeds): a graph of 3-12 nodes over
~55 ops (broadcasting arithmetic, reductions, softmax, MatMul/Gemm at
register-block boundary sizes, data movement, norms, Conv/ConvTranspose/
pools, Resize, ArgMax/TopK, casts, Where, Einsum, LSTM/GRU, scatters,
Trilu, PyTorch's shape subgraphs), float32, or in every fifth seed int32 or
int64 over the ops that take integers; opset 17. syms maps the symbolic
input dimensions (every fourth seed) to the values verify should run them
at; feeds, for integer graphs, the inputs (verify's own random integers
are 0..3).

Shapes are tracked here, so every graph is valid by construction; ops whose
result changes by a whole step for a rounding-level change of their input
(Floor, ArgMax, Greater, Cast to int...) only take "exact" tensors — graph
inputs and what data movement, Relu, Neg, Abs, Max and Min make of them —
so that float rounding differences are not reported as wrong answers.
Deterministic for a seed (random.Random and numpy's PCG64)."""
import random

import numpy as np
from onnx import TensorProto as T, helper as h, numpy_helper

BLOCK_SIZES = (1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 96)


class Gen:
    def __init__(self, seed, dt=T.FLOAT):
        self.dt = dt  # every tensor of the pool has this type
        self.npdt = {T.FLOAT: np.float32, T.INT32: np.int32, T.INT64: np.int64}[dt]
        self.r = random.Random(seed)
        self.np = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs = [], [], []
        self.pool = []  # (name, shape, exact)
        self.n = 0

    def name(self, stem):
        self.n += 1
        return "%s%d" % (stem, self.n)

    def init(self, arr, stem="w"):
        nm = self.name(stem)
        self.inits.append(numpy_helper.from_array(arr, nm))
        return nm

    def rand(self, shape, scale=1.0):
        """Random constant of the graph's type (integers in [-9, 9])."""
        if self.dt != T.FLOAT:
            return self.init(self.np.integers(-9, 10, size=shape).astype(self.npdt))
        return self.init((self.np.standard_normal(shape) * scale).astype(np.float32))

    def k(self, v):
        """Scalar constant of the graph's type."""
        return self.init(np.array(v, self.npdt))

    def i64(self, vals):
        return self.init(np.array(vals, np.int64), "c")

    def node(self, op, ins, shape, exact=False, **attrs):
        out = self.name("t")
        self.nodes.append(h.make_node(op, ins, [out], **attrs))
        self.pool.append((out, list(shape), exact))
        return out

    def aux(self, op, ins, **attrs):
        """A node whose output is not offered to later ops (a guard)."""
        out = self.name("a")
        self.nodes.append(h.make_node(op, ins, [out], **attrs))
        return out

    def new_input(self, rank=None):
        rank = rank or self.r.choice((1, 2, 2, 3, 3, 4))
        shape = [self.r.choice(BLOCK_SIZES[:12]) for _ in range(rank)]
        if rank == 4:
            shape = [self.r.choice((1, 2)), self.r.choice((1, 3, 4, 8)),
                     self.r.randint(3, 14), self.r.randint(3, 14)]
        nm = "x%d" % len(self.inputs)
        self.inputs.append((nm, shape))
        self.pool.append((nm, shape, True))
        return nm, shape, True

    def pick(self, ok=lambda s, e: True):
        cands = [p for p in self.pool if p[1] and ok(p[1], p[2])]
        if not cands:
            return None
        # Prefer recent tensors: chains, not a forest of one-node branches.
        return cands[-1] if self.r.random() < 0.5 else self.r.choice(cands)

    def broadcast_shape(self, shape):
        s = [d if self.r.random() < 0.6 else 1 for d in shape]
        drop = self.r.randint(0, len(s))
        return s[drop:] if self.r.random() < 0.3 else s


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def op_unary(g):
    x, s, e = g.pick()
    if g.dt != T.FLOAT:
        return g.node(g.r.choice(("Abs", "Neg", "Sign")), [x], s, True)
    op = g.r.choice(("Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Erf", "Softplus", "LeakyRelu",
                     "Elu", "HardSigmoid", "HardSwish", "Clip", "Exp", "Log", "Sqrt", "Sin", "Cos",
                     "Reciprocal", "Floor", "Round", "Sign"))
    if op in ("Floor", "Round", "Sign") and not e:
        op = "Relu"
    keep = e and op in ("Relu", "Abs", "Neg", "Floor", "Round", "Sign")
    if op == "Exp":
        x = g.node("Tanh", [x], s)
    elif op in ("Log", "Sqrt", "Reciprocal"):
        a = g.node("Abs", [x], s, e)
        x = g.node("Add", [a, g.k(0.5)], s)
    if op == "LeakyRelu":
        return g.node(op, [x], s, keep, alpha=g.r.choice((0.01, 0.2)))
    if op == "HardSigmoid":
        return g.node(op, [x], s, alpha=0.2, beta=0.5)
    if op == "Clip":
        return g.node(op, [x, g.init(np.array(-0.5, np.float32)), g.init(np.array(0.7, np.float32))], s)
    return g.node(op, [x], s, keep)


def op_binary(g):
    a, s, e = g.pick()
    op = g.r.choice(("Add", "Sub", "Mul", "Div", "Max", "Min", "Pow" if g.dt == T.FLOAT else "Mod"))
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
        b = g.aux("Add", [g.aux("Abs", [b]), g.k(0.5 if g.dt == T.FLOAT else 1)])
    elif op == "Pow":  # base |a| + 0.75, exponent b clipped to [-2, 2]
        a = g.aux("Add", [g.aux("Abs", [a]), g.init(np.array(0.75, np.float32))])
        b = g.aux("Clip", [b, g.init(np.array(-2.0, np.float32)), g.init(np.array(2.0, np.float32))])
    return g.node(op, [a, b], s, g.dt != T.FLOAT or (e and e2 and op in ("Max", "Min")))


def op_reduce(g):
    x, s, e = g.pick()
    op = g.r.choice(("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2",
                     "ReduceLogSumExp", "ReduceSumSquare", "ReduceL1") if g.dt == T.FLOAT else
                    ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceSumSquare"))
    # (no integer ReduceProd: past the type's range onnxruntime's does not
    # wrap as numpy's and ours do, e.g. INT32_MIN for a product whose low
    # 32 bits are 0x48000000; ONNX leaves overflow undefined)
    axes = sorted(g.r.sample(range(len(s)), g.r.randint(1, len(s))))
    keep = g.r.choice((0, 1))
    shape = [1 if i in axes else d for i, d in enumerate(s) if keep or i not in axes]
    exact = g.dt != T.FLOAT or (e and op in ("ReduceMax", "ReduceMin"))
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
    if len(s) == 2 and g.r.random() < 0.4 and g.dt == T.FLOAT:
        ta, tb = g.r.choice((0, 1)), g.r.choice((0, 1))
        if ta:
            x = g.node("Transpose", [x], [s[1], s[0]])
        w = g.rand([n, k] if tb else [k, n], k ** -0.5)
        ins = [x, w] + ([g.rand(g.r.choice(([n], [1, n], [s[0], n], [s[0], 1])))] if g.r.random() < 0.7 else [])
        return g.node("Gemm", ins, [s[0], n], transA=ta, transB=tb,
                      alpha=g.r.choice((1.0, 0.5)), beta=g.r.choice((1.0, 2.0)))
    w = g.rand(([s[0]] if len(s) == 3 and g.r.random() < 0.3 else []) + [k, n], k ** -0.5)
    return g.node("MatMul", [x, w], s[:-1] + [n], g.dt != T.FLOAT)


def op_transpose(g):
    t = g.pick(lambda s, e: len(s) >= 2)
    if t is None:
        return None
    x, s, e = t
    perm = list(range(len(s)))
    g.r.shuffle(perm)
    return g.node("Transpose", [x], [s[p] for p in perm], e, perm=perm)


def op_reshape(g):
    x, s, e = g.pick()
    n, shape = numel(s), []
    rest = n
    while rest > 1 and len(shape) < 3:
        divs = [d for d in range(2, rest + 1) if rest % d == 0]
        d = g.r.choice(divs)
        shape.append(d)
        rest //= d
    shape = shape + [rest] if rest > 1 or not shape else shape
    g.r.shuffle(shape)
    spec = list(shape)
    if g.r.random() < 0.3:
        spec[g.r.randrange(len(spec))] = -1
    if g.r.random() < 0.3:
        return g.node("Flatten", [x], [numel(s[:1]), numel(s[1:])], e, axis=1) if len(s) > 1 else x
    return g.node("Reshape", [x, g.i64(spec)], shape, e)


def op_slice(g):
    x, s, e = g.pick()
    ax = g.r.randrange(len(s))
    d = s[ax]
    step = g.r.choice((1, 1, 2, -1, 3))
    if step > 0:
        b = g.r.randrange(d)
        en = g.r.randint(b + 1, d + 2)
        cnt = (min(en, d) - b + step - 1) // step
    else:
        b = g.r.randrange(d)
        en = g.r.randint(-d - 3, b - 1) if g.r.random() < 0.3 else -d - 1
        stop = max(en if en >= 0 else en + d, -1)
        cnt = (b - stop + (-step) - 1) // (-step)
    if cnt <= 0:
        return x
    shape = list(s)
    shape[ax] = cnt
    return g.node("Slice", [x, g.i64([b]), g.i64([en]), g.i64([ax - len(s) if g.r.random() < 0.3 else ax]),
                            g.i64([step])], shape, e)


def op_concat(g):
    x, s, e = g.pick()
    ax = g.r.randrange(len(s))
    t = g.pick(lambda s2, e2: len(s2) == len(s) and all(a == b for i, (a, b) in enumerate(zip(s, s2)) if i != ax))
    y, s2, e2 = t if t else (x, s, e)
    if g.r.random() < 0.4:
        s2 = list(s)
        s2[ax] = g.r.randint(1, 5)
        y, e2 = g.rand(s2), True
    shape = list(s)
    shape[ax] += s2[ax]
    return g.node("Concat", [x, y], shape, e and e2, axis=ax)


def op_pad(g):
    x, s, e = g.pick()
    mode = g.r.choice(("constant", "constant", "reflect", "edge"))
    pads = []
    for d in s * 2:
        hi = d - 1 if mode == "reflect" else 3
        pads.append(g.r.randint(0, min(hi, 3)) if g.r.random() < 0.6 else 0)
    if mode == "constant" and g.r.random() < 0.3:  # negative pads crop
        pads = [p if g.r.random() < 0.7 or d < 3 else -1 for p, d in zip(pads, s * 2)]
    shape = [d + pads[i] + pads[i + len(s)] for i, d in enumerate(s)]
    if min(shape) <= 0:
        return x
    ins = [x, g.i64(pads)]
    if mode == "constant" and g.r.random() < 0.5:
        ins.append(g.k(0.25 if g.dt == T.FLOAT else 7))
    return g.node("Pad", ins, shape, e, mode=mode)


def op_gather(g):
    x, s, e = g.pick()
    ax = g.r.randrange(len(s))
    ishape = g.r.choice(([], [g.r.randint(1, 5)], [2, g.r.randint(1, 3)]))
    idx = g.np.integers(-s[ax], s[ax], size=ishape).astype(np.int64)
    return g.node("Gather", [x, g.init(idx, "i")], s[:ax] + ishape + s[ax + 1:], e, axis=ax)


def op_expand(g):
    t = g.pick(lambda s, e: 1 in s or len(s) < 3)
    if t is None:
        return None
    x, s, e = t
    shape = [g.r.randint(2, 4) if d == 1 else d for d in s]
    if len(shape) < 4 and g.r.random() < 0.5:
        shape = [g.r.randint(1, 3)] + shape
    return g.node("Expand", [x, g.i64(shape)], shape, e)


def op_norm(g):
    x, s, _ = g.pick()
    op = g.r.choice(("LayerNormalization", "InstanceNormalization", "BatchNormalization"))
    if op == "LayerNormalization" or len(s) < 3:
        ax = g.r.randrange(-len(s), len(s))
        ns = s[ax:]
        ins = [x, g.rand(ns), g.rand(ns)] if g.r.random() < 0.7 else [x, g.rand(ns)]
        return g.node("LayerNormalization", ins, s, axis=ax, epsilon=1e-5)
    c = s[1]
    if op == "InstanceNormalization":
        return g.node(op, [x, g.rand([c]), g.rand([c])], s, epsilon=1e-5)
    var = g.init(g.np.uniform(0.5, 2.0, c).astype(np.float32))
    return g.node(op, [x, g.rand([c]), g.rand([c]), g.rand([c]), var], s, epsilon=1e-5)


def conv_out(d, k, st, dil, p0, p1):
    return (d + p0 + p1 - dil * (k - 1) - 1) // st + 1


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
    op = g.r.choice(("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"))
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


def exact_axis(g):
    """An exact tensor and one of its axes, or None."""
    t = g.pick(lambda s, e: e)
    return None if t is None else (t[0], t[1], g.r.randrange(len(t[1])))


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
    c = g.aux(g.r.choice(("Greater", "Less", "GreaterOrEqual")), [a, g.k(0.1 if g.dt == T.FLOAT else 0)])
    x, s2, e2 = g.pick(lambda s2, e2: s2 == s) or (a, s, True)
    return g.node("Where", [c, x, g.rand(g.broadcast_shape(s))], s, g.dt != T.FLOAT)


def op_cast(g):
    t = g.pick(lambda s, e: e)
    if t is None:
        return None
    x, s, _ = t
    if g.dt != T.FLOAT:  # to another integer type (int8 wraps) or to float and back
        to = g.r.choice((T.INT8, T.UINT8, T.INT16, T.INT32, T.INT64, T.FLOAT, T.DOUBLE, T.UINT32))
        return g.node("Cast", [g.aux("Cast", [x], to=to)], s, True, to=g.dt)
    to = g.r.choice((T.INT32, T.INT64, T.INT8, T.DOUBLE, T.FLOAT16))
    y = g.aux("Mul", [x, g.k(10.0)])
    c = g.aux("Cast", [y], to=to)
    return g.node("Cast", [c], s, to != T.FLOAT16, to=T.FLOAT)


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


def op_misc(g):
    x, s, e = g.pick()
    op = g.r.choice(("CumSum", "Tile", "Split", "Unsqueeze", "Squeeze", "Identity"))
    if op == "CumSum":
        ax = g.r.randrange(len(s))
        return g.node(op, [x, g.init(np.array(ax, np.int64))], s, False, exclusive=g.r.choice((0, 1)),
                      reverse=g.r.choice((0, 1)))
    if op == "Tile":
        rep = [g.r.choice((1, 1, 2, 3)) for _ in s]
        return g.node(op, [x, g.i64(rep)], [d * r for d, r in zip(s, rep)], e)
    if op == "Split":
        ax = g.r.randrange(len(s))
        if s[ax] < 2:
            return x
        a = g.r.randint(1, s[ax] - 1)
        o1, o2 = g.name("t"), g.name("t")
        g.nodes.append(h.make_node("Split", [x, g.i64([a, s[ax] - a])], [o1, o2], axis=ax))
        s1, s2 = list(s), list(s)
        s1[ax], s2[ax] = a, s[ax] - a
        g.pool += [(o1, s1, e), (o2, s2, e)]
        return o2
    if op == "Unsqueeze" and len(s) < 5:
        ax = g.r.randint(0, len(s))
        return g.node(op, [x, g.i64([ax])], s[:ax] + [1] + s[ax:], e)
    if op == "Squeeze" and 1 in s:
        return g.node(op, [x, g.i64([s.index(1)])], [d for i, d in enumerate(s) if i != s.index(1)], e)
    return g.node("Identity", [x], s, e)


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


def op_depth(g):
    t = g.pick(lambda s, e: len(s) == 4)
    x, s, e = t if t else g.new_input(4)
    b = g.r.choice((2, 3))
    if s[1] % (b * b) == 0 and g.r.random() < 0.6:
        return g.node("DepthToSpace", [x], [s[0], s[1] // (b * b), s[2] * b, s[3] * b], e, blocksize=b,
                      mode=g.r.choice(("DCR", "CRD")))
    if s[2] % b or s[3] % b:
        return x
    return g.node("SpaceToDepth", [x], [s[0], s[1] * b * b, s[2] // b, s[3] // b], e, blocksize=b)


def op_variadic(g):
    x, s, e = g.pick()
    others = [p for p in g.pool if p[1] == s and p[0] != x][:2]
    ins = [x] + [p[0] for p in others] + ([g.rand(g.broadcast_shape(s))] if g.r.random() < 0.5 or not others else [])
    op = g.r.choice(("Sum", "Mean", "Max", "Min") if g.dt == T.FLOAT else ("Max", "Min"))
    return g.node(op, ins, s, g.dt != T.FLOAT)


def op_shape_view(g):
    """x.view(x.size(0), -1) as PyTorch exports it: Shape, Gather, Unsqueeze,
    Concat with -1, Reshape (the size stays symbolic in a symbolic graph)."""
    t = g.pick(lambda s, e: len(s) >= 2)
    if t is None:
        return None
    x, s, e = t
    d0 = g.aux("Unsqueeze", [g.aux("Gather", [g.aux("Shape", [x]), g.init(np.array(0, np.int64), "c")], axis=0),
                             g.i64([0])])
    spec = g.aux("Concat", [d0, g.i64([-1])], axis=0)
    return g.node("Reshape", [x, spec], [s[0], numel(s[1:])], e)


def op_elements(g):
    """GatherElements, or ScatterElements / ScatterND adding updates at
    constant indices (duplicates add up, in any order)."""
    x, s, e = g.pick()
    ax = g.r.randrange(len(s))
    op = g.r.choice(("GatherElements", "ScatterElements", "ScatterND"))
    ishape = [g.r.randint(1, d) for d in s]
    idx = g.np.integers(-s[ax], s[ax], size=ishape).astype(np.int64)
    if op == "GatherElements":
        return g.node(op, [x, g.init(idx, "i")], ishape, e, axis=ax)
    if op == "ScatterElements":
        return g.node(op, [x, g.init(idx, "i"), g.rand(ishape)], s, False, axis=ax, reduction="add")
    k = g.r.randint(1, len(s))  # index the first k axes; updates are the rest
    n = g.r.randint(1, 4)
    nd = np.stack([g.np.integers(0, d, size=n) for d in s[:k]], axis=1).astype(np.int64)
    return g.node(op, [x, g.init(nd, "i"), g.rand([n] + s[k:])], s, False, reduction="add")


def op_trilu(g):
    t = g.pick(lambda s, e: len(s) >= 2)
    if t is None:
        return None
    x, s, e = t
    return g.node("Trilu", [x, g.init(np.array(g.r.randint(-2, 2), np.int64), "c")], s, e,
                  upper=g.r.choice((0, 1)))


def op_recurrent(g):
    """LSTM or GRU over a 3-D tensor read as [seq, batch, input]."""
    t = g.pick(lambda s, e: len(s) == 3)
    if t is None:
        return None
    x, s, _ = t
    op = g.r.choice(("LSTM", "GRU"))
    hid, gates = g.r.choice((1, 3, 8, 17)), 4 if op == "LSTM" else 3
    dirs = g.r.choice((1, 2))
    sc = (s[2] + hid) ** -0.5
    ins = [x, g.rand([dirs, gates * hid, s[2]], sc), g.rand([dirs, gates * hid, hid], sc)]
    if g.r.random() < 0.7:
        ins.append(g.rand([dirs, 2 * gates * hid], 0.1))
    attrs = dict(hidden_size=hid, direction=("forward", "bidirectional")[dirs - 1] if g.r.random() < 0.8
                 else ("reverse" if dirs == 1 else "bidirectional"))
    if op == "GRU":
        attrs["linear_before_reset"] = g.r.choice((0, 1))
    out = g.name("t")
    g.nodes.append(h.make_node(op, ins, [out], **attrs))
    y = [s[0], dirs, s[1], hid]
    g.pool.append((out, y, False))
    return out


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
    # QLinearMatMul / QLinearConv: uint8 in and out, weights uint8 or int8
    xs, xz = quant_params(g, T.UINT8)
    q = g.aux("QuantizeLinear", [x, xs, xz])
    wt = g.r.choice((T.UINT8, T.INT8))
    lo, hi = (0, 256) if wt == T.UINT8 else (-128, 128)
    npw = np.uint8 if wt == T.UINT8 else np.int8
    ys, yz = g.init(np.array(g.r.uniform(0.05, 0.4), np.float32), "s"), g.init(
        np.array(g.r.randint(0, 255), np.uint8), "z")
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


def op_more(g):
    """Ops the families above leave out: PRelu, Selu, Celu, ThresholdedRelu,
    Shrink, Softsign, inverse trigonometry, Hardmax, GatherND, OneHot,
    Range, ConstantOfShape, EyeLike, ReduceProd, LpNormalization,
    MeanVarianceNormalization, LRN, LpPool, logical ops, Compress,
    ReverseSequence, GridSample, DFT, HannWindow (float graphs)."""
    x, s, e = g.pick()
    op = g.r.choice(("PRelu", "Selu", "Celu", "ThresholdedRelu", "Shrink", "Softsign", "Atrig", "Hardmax",
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
        oh = g.aux("OneHot", [g.init(idx, "i"), g.init(np.array(depth, np.int64), "c"),
                              g.init(np.array([-0.5, 2.0], np.float32))], axis=ax)
        return g.node("Mul", [x, oh], s, e)
    if op == "Range":
        n = s[-1]
        st, dl = g.r.choice(((0.0, 1.0), (2.5, -0.5), (-1.0, 0.25)))
        r = g.aux("Range", [g.k(st), g.k(st + dl * n - dl / 2), g.k(dl)])
        return g.node("Add", [x, r], s, e)
    if op == "ConstantOfShape":
        c = g.aux("ConstantOfShape", [g.aux("Shape", [x])], value=h.make_tensor("v", T.FLOAT, [1], [0.75]))
        return g.node("Mul", [x, c], s)
    if op == "EyeLike":
        if len(s) != 2:
            return None
        return g.node("Mul", [x, g.aux("EyeLike", [x], k=g.r.randint(-2, 2))], s, e)
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
        w = g.aux(g.r.choice(("HannWindow", "HammingWindow", "BlackmanWindow")),
                  [g.init(np.array(n, np.int64), "c")], periodic=g.r.choice((0, 1)))
        return g.node("Mul", [x, w], s)
    return None


OPS = ((op_unary, 6), (op_binary, 6), (op_reduce, 3), (op_softmax, 2), (op_matmul, 5), (op_transpose, 3),
       (op_reshape, 3), (op_slice, 3), (op_concat, 2), (op_pad, 2), (op_gather, 2), (op_expand, 1),
       (op_norm, 2), (op_conv, 4), (op_convtranspose, 1), (op_pool, 2), (op_argmax, 1), (op_topk, 1),
       (op_where, 1), (op_cast, 1), (op_einsum, 1), (op_misc, 2), (op_resize, 1), (op_depth, 1),
       (op_variadic, 1), (op_shape_view, 1), (op_elements, 1), (op_trilu, 1), (op_recurrent, 1),
       (op_quant, 3), (op_more, 4))

# The ops of integer graphs (onnxruntime has no integer DepthToSpace).
INT_OPS = (op_unary, op_binary, op_reduce, op_matmul, op_transpose, op_reshape, op_slice, op_concat, op_pad,
           op_gather, op_expand, op_argmax, op_topk, op_where, op_cast, op_misc, op_variadic, op_shape_view,
           op_trilu)


def make_model(seed):
    """(model, syms, feeds): feeds maps input names to arrays (integer
    graphs: values in [-20, 20]) or is empty (verify's random inputs)."""
    dt = T.FLOAT if seed % 5 != 1 else (T.INT32, T.INT64)[seed // 5 % 2]
    g = Gen(seed, dt)
    g.new_input()
    if g.r.random() < 0.3:
        g.new_input()
    count = g.r.randint(3, 12)
    made = []
    funcs, weights = zip(*(OPS if dt == T.FLOAT else [(f, w) for f, w in OPS if f in INT_OPS]))
    while len(made) < count:
        f = g.r.choices(funcs, weights)[0]
        before = len(g.pool)
        y = f(g)
        if y is None or len(g.pool) == before:
            continue
        if numel(g.pool[-1][1]) > 1 << 18:  # keep a graph's tensors small
            break
        made.append(y)
    outs = [p for p in g.pool if not p[0].startswith("x")]
    picked = [outs[-1]] + g.r.sample(outs[:-1], min(len(outs) - 1, g.r.randint(0, 2)))
    syms = {}
    ins = []
    for nm, shape in g.inputs:
        dims = list(shape)
        if seed % 4 == 3 and dims[0] > 1:  # a symbolic leading dimension
            dims[0] = "n_" + nm
            syms[dims[0]] = shape[0]
        ins.append(h.make_tensor_value_info(nm, dt, dims))
    outvi = [h.make_tensor_value_info(nm, dt, shape) for nm, shape, _ in picked]
    graph = h.make_graph(g.nodes, "diff_%d" % seed, ins, outvi, initializer=g.inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], producer_name="diff_fuzz")
    model.ir_version = 8
    feeds = {}
    if dt != T.FLOAT:
        feeds = {nm: g.np.integers(-20, 21, size=shape).astype(g.npdt) for nm, shape in g.inputs}
        syms = {}
    return model, syms, feeds
