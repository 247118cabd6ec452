"""diff_base.py — the graph under construction (Gen: its nodes, initializers,
inputs and the pool of tensors later ops may take) and shape helpers, for
the op families of the differential fuzzer (fuzz/diff_gen.py)."""
import random

import numpy as np
from onnx import TensorProto as T, helper as h, numpy_helper

BLOCK_SIZES = (1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 96)


class Gen:
    def __init__(self, seed, dt=T.FLOAT):
        self.sym = seed % 4 == 3  # diff_gen.py makes the inputs' first dimension symbolic
        self.dt = dt  # every tensor of the pool has this type
        self.flt = dt in (T.FLOAT, T.DOUBLE)  # a floating-point graph (float32, or float64 in DOUBLE_OPS)
        self.npdt = {T.FLOAT: np.float32, T.DOUBLE: np.float64, T.INT32: np.int32, T.INT64: np.int64}[dt]
        self.r = random.Random(seed)
        self.np = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs = [], [], []
        self.pool = []  # (name, shape, exact)
        self.side = []  # graph outputs of a value-dependent length (ValueInfoProto)
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
        if not self.flt:
            return self.init(self.np.integers(-9, 10, size=shape).astype(self.npdt))
        return self.init((self.np.standard_normal(shape) * scale).astype(self.npdt))

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


def conv_out(d, k, st, dil, p0, p1):
    return (d + p0 + p1 - dil * (k - 1) - 1) // st + 1


def exact_axis(g):
    """An exact tensor and one of its axes, or None."""
    t = g.pick(lambda s, e: e)
    return None if t is None else (t[0], t[1], g.r.randrange(len(t[1])))
