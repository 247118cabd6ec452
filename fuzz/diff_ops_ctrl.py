"""diff_ops_ctrl.py — control flow and sequences, for fuzz/diff_gen.py: If
(its condition a constant, or computed from an exact tensor at run time),
Loop (a constant trip count, a condition that is the iteration number's,
carried values and scan outputs), Scan (any axis and direction), and
sequences (SplitToSequence, SequenceConstruct, SequenceInsert,
SequenceErase, SequenceAt, SequenceLength, ConcatFromSequence)."""
import numpy as np
from onnx import TensorProto as T, helper as h


def vi(g, name, dt, shape):
    """A subgraph's input or output; its shape left out half of the time, and
    always in a graph with a symbolic dimension (ONNX's strict inference
    would not match a number to the outer symbol)."""
    return h.make_tensor_value_info(name, dt, None if g.sym or g.r.random() < 0.5 else shape)


def chain(g, x, s, e, outer=None):
    """1-2 element-wise nodes over x for a subgraph, the last maybe adding
    an outer-scope tensor of shape s: (nodes, out, exact)."""
    nodes, y = [], x
    unary = ("Neg", "Abs") + (("Relu", "Tanh", "Sigmoid") if g.flt else ())  # onnxruntime: no integer Relu
    for _ in range(g.r.randint(1, 2)):
        op = g.r.choice(unary + ("Add", "Mul", "Max"))
        out = g.name("b")
        if op in unary:
            nodes.append(h.make_node(op, [y], [out]))
            e = e and op in ("Relu", "Neg", "Abs")
        else:
            c = g.rand(g.broadcast_shape(s), 0.5)
            nodes.append(h.make_node(op, [y, c], [out]))
            e = e and (op == "Max" or not g.flt)
        y = out
    if outer is not None and g.r.random() < 0.5:
        out = g.name("b")
        nodes.append(h.make_node("Add", [y, outer], [out]))
        y, e = out, e and not g.flt
    return nodes, y, e


def op_if(g):
    """If over one or two outputs; a run-time condition is ReduceMax of an
    exact tensor against a threshold (a maximum is exact)."""
    x, s, e = g.pick()
    if g.r.random() < 0.35:
        cond = g.init(np.array(g.r.random() < 0.5), "c")
    else:
        t = g.pick(lambda s2, e2: e2)
        if t is None:
            return None
        m = g.aux("ReduceMax", [t[0]], keepdims=0)
        cond = g.aux("Greater", [m, g.k(g.r.choice((0, 1.5, 2.5) if g.flt else (0, 10, 19)))])
    nout = 2 if g.r.random() < 0.3 else 1
    second = g.pick() if nout == 2 else None
    branches, exact = [], [True] * nout
    for b in range(2):
        nodes, outs = [], []
        for i, (u, su, eu) in enumerate([(x, s, e)] + ([second] if second else [])):
            n, y, ey = chain(g, u, su, eu)
            nodes += n
            outs.append(vi(g, y, g.dt, su))
            exact[i] = exact[i] and ey
        branches.append(h.make_graph(nodes, g.name("br"), [], outs))
    names = [g.name("t") for _ in range(nout)]
    g.nodes.append(h.make_node("If", [cond], names, then_branch=branches[0], else_branch=branches[1]))
    for i, nm in enumerate(names):
        g.pool.append((nm, list((s, second[1] if second else None)[i]), exact[i]))
    return names[0]


def op_loop(g):
    """Loop: M iterations (1-4), or fewer when the condition is the
    iteration number's (it < K); a carried value from x, the outer x added,
    the iteration number cast to the graph's type, a scan output."""
    x, s, e = g.pick()
    m = g.r.randint(1, 4)
    it, cin, v = g.name("it"), g.name("ci"), g.name("v")
    nodes, y, ey = chain(g, v, s, e, outer=x)
    if g.r.random() < 0.4:
        c = g.name("b")
        nodes.append(h.make_node("Cast", [it], [c], to=g.dt))
        y2 = g.name("b")
        nodes.append(h.make_node("Add", [y, c], [y2]))
        y, ey = y2, ey and not g.flt
    cout = g.name("co")
    n_it = m
    if g.r.random() < 0.4:
        k = g.r.randint(0, 3)
        nodes.append(h.make_node("Less", [it, g.init(np.array(k, np.int64), "c")], [cout]))
        n_it = min(m, k + 1)
    else:
        nodes.append(h.make_node("Identity", [cin], [cout]))
    sc = g.name("b")
    nodes.append(h.make_node(g.r.choice(("Identity", "Neg", "Abs")), [y], [sc]))
    # onnxruntime needs the shapes of the iteration number and the condition
    scalar = [h.make_tensor_value_info(it, T.INT64, []), h.make_tensor_value_info(cin, T.BOOL, [])]
    body = h.make_graph(nodes, g.name("body"), scalar + [vi(g, v, g.dt, s)],
                        [vi(g, cout, T.BOOL, []), vi(g, y, g.dt, s), vi(g, sc, g.dt, s)])
    fin, scan = g.name("t"), g.name("t")
    ins = [g.init(np.array(m, np.int64), "c"), g.init(np.array(True), "c"), x]
    g.nodes.append(h.make_node("Loop", ins, [fin, scan], body=body))
    g.pool.append((fin, list(s), ey))
    g.pool.append((scan, [n_it] + list(s), ey))
    return scan


def op_scan(g):
    """Scan of a state over one axis of x (either direction), the stacked
    output along any axis (either direction)."""
    t = g.pick(lambda s2, e2: 2 <= len(s2) <= 3)
    if t is None or g.sym:  # onnxruntime needs every shape of the body; ONNX's inference no symbol in it
        return None
    x, s, e = t
    ax = g.r.randrange(len(s))
    if s[ax] > 64:  # unrolled: up to 1024 iterations, each a copy of the body
        return None
    st = [d for i, d in enumerate(s) if i != ax]
    sin, xt = g.name("s"), g.name("xt")
    nodes, y, ey = chain(g, xt, st, e)
    ns = g.name("b")
    nodes.append(h.make_node("Add", [sin, y], [ns]))
    so = g.name("b")
    nodes.append(h.make_node(g.r.choice(("Abs", "Neg", "Identity")), [ns], [so]))
    body = h.make_graph(nodes, g.name("body"), [h.make_tensor_value_info(v, g.dt, st) for v in (sin, xt)],
                        [h.make_tensor_value_info(v, g.dt, st) for v in (ns, so)])
    oax = g.r.randrange(len(s))
    fin, scan = g.name("t"), g.name("t")
    g.nodes.append(h.make_node("Scan", [g.rand(st, 0.5), x], [fin, scan], body=body, num_scan_inputs=1,
                               scan_input_axes=[ax], scan_input_directions=[g.r.choice((0, 1))],
                               scan_output_axes=[oax], scan_output_directions=[g.r.choice((0, 1))]))
    exact = not g.flt
    g.pool.append((fin, st, exact))
    g.pool.append((scan, st[:oax] + [s[ax]] + st[oax:], exact))
    return scan


def op_seq(g):
    """A sequence made by SplitToSequence or SequenceConstruct (+ Insert,
    Erase), read back by ConcatFromSequence, SequenceAt or SequenceLength."""
    x, s, e = g.pick()
    seq = g.name("q")
    if g.r.random() < 0.5:
        ax = g.r.randrange(len(s))
        if g.r.random() < 0.5 and s[ax] > 1:  # uneven parts
            cut = sorted(g.r.sample(range(1, s[ax]), g.r.randint(1, min(3, s[ax] - 1))))
            lens = [b - a for a, b in zip([0] + cut, cut + [s[ax]])]
            g.nodes.append(h.make_node("SplitToSequence", [x, g.i64(lens)], [seq], axis=ax))
            elems = [[ln if i == ax else d for i, d in enumerate(s)] for ln in lens]
        else:
            keep = g.r.choice((0, 1))
            g.nodes.append(h.make_node("SplitToSequence", [x], [seq], axis=ax, keepdims=keep))
            one = [1 if i == ax else d for i, d in enumerate(s)] if keep else [d for i, d in enumerate(s) if i != ax]
            elems = [one] * s[ax]
    else:
        parts = [x, g.aux("Neg", [x])] + ([g.aux("Abs", [x])] if g.r.random() < 0.5 else [])
        g.nodes.append(h.make_node("SequenceConstruct", parts, [seq]))
        elems = [s] * len(parts)
        if g.r.random() < 0.5:
            q2 = g.name("q")
            pos = g.r.randint(-len(elems), len(elems))
            g.nodes.append(h.make_node("SequenceInsert", [seq, g.aux("Abs", [x]), g.i64(pos)], [q2]))
            seq, elems = q2, elems + [s]
        if g.r.random() < 0.5:
            q2 = g.name("q")
            g.nodes.append(h.make_node("SequenceErase", [seq, g.i64(g.r.randrange(-len(elems), len(elems)))], [q2]))
            seq, elems = q2, elems[1:]
    same = all(el == elems[0] for el in elems)
    how = g.r.choice(("concat", "at", "length"))
    if how == "at" or not elems[0]:
        pos = g.r.randrange(-len(elems), len(elems))
        return g.node("SequenceAt", [seq, g.i64(pos)], elems[pos], e)
    if how == "length":
        n = g.aux("Cast", [g.aux("SequenceLength", [seq])], to=g.dt)
        return g.node("Mul", [x, n], s, e and not g.flt)
    r = len(elems[0])
    if same and g.r.random() < 0.5:  # stacked on a new axis
        ax = g.r.randint(0, r)
        return g.node("ConcatFromSequence", [seq], elems[0][:ax] + [len(elems)] + elems[0][ax:], e, axis=ax,
                      new_axis=1)
    diff = [i for i in range(r) if any(el[i] != elems[0][i] for el in elems)]
    ax = diff[0] if diff else g.r.randrange(r)
    shape = list(elems[0])
    shape[ax] = sum(el[ax] for el in elems)
    return g.node("ConcatFromSequence", [seq], shape, e, axis=ax)


def op_ctrl(g):
    """One of If, Loop, Scan or a sequence's round trip."""
    return g.r.choice((op_if, op_if, op_loop, op_scan, op_seq))(g)
