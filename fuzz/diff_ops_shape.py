"""diff_ops_shape.py — data movement (Transpose, Reshape, Slice, Concat, Pad,
Gather, Expand, Tile, Split, Depth/SpaceToDepth, Gather/ScatterElements,
ScatterND, Trilu) and PyTorch's shape subgraph, for fuzz/diff_gen.py."""
import numpy as np
from onnx import TensorProto as T, helper as h

from diff_base import numel


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
        ins.append(g.k(0.25 if g.flt else 7))
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
