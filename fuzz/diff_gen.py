"""diff_gen.py — random valid ONNX graphs for differential testing against
onnxruntime (fuzz/diff_fuzz.py drives it).

make_model(seed) returns (model, syms, feeds): a graph of 3-12 nodes over
~140 ops in eight families (diff_ops_math.py: broadcasting arithmetic,
reductions, softmax, MatMul/Gemm at register-block boundary sizes, norms,
ArgMax/TopK, casts, Where, Einsum; diff_ops_shape.py: data movement,
scatters, Trilu, PyTorch's shape subgraphs; diff_ops_conv.py: Conv/
ConvTranspose/pools, Resize, LSTM/GRU; diff_ops_quant.py: QDQ, dynamic
quantization, the integer and QLinear products; diff_ops_more.py and
diff_ops_rest.py: the other ops, among them losses, RoiAlign, STFT,
MatMulNBits and the ops of value-dependent lengths (NonMaxSuppression,
Unique, NonZero); diff_ops_ctrl.py: If, Loop, Scan, sequences), float32,
or in every fifth seed int32 or int64 over the ops that take integers, or
in every tenth float64 over the ops onnxruntime takes in float64 (compared
at float64's precision: diff_fuzz.py); opset 17. syms maps the symbolic
input dimensions (every fourth seed) to the values verify should run them
at; feeds, for integer graphs, the inputs (verify's own random integers
are 0..3).

Shapes are tracked here, so every graph is valid by construction; ops whose
result changes by a whole step for a rounding-level change of their input
(Floor, ArgMax, Greater, Cast to int...) only take "exact" tensors — graph
inputs and what data movement, Relu, Neg, Abs, Max and Min make of them —
so that float rounding differences are not reported as wrong answers.
Deterministic for a seed (random.Random and numpy's PCG64)."""
import os

from onnx import TensorProto as T, helper as h

from diff_base import Gen, numel
from diff_ops_conv import op_conv, op_convtranspose, op_pool, op_recurrent, op_resize
from diff_ops_math import (op_argmax, op_binary, op_cast, op_einsum, op_matmul, op_norm, op_reduce, op_softmax,
                           op_topk, op_unary, op_variadic, op_where)
from diff_ops_ctrl import op_ctrl
from diff_ops_more import op_more
from diff_ops_quant import op_quant
from diff_ops_rest import op_rest
from diff_ops_shape import (op_concat, op_depth, op_elements, op_expand, op_gather, op_misc, op_pad, op_reshape,
                            op_shape_view, op_slice, op_transpose, op_trilu)

OPS = ((op_unary, 6), (op_binary, 6), (op_reduce, 3), (op_softmax, 2), (op_matmul, 5), (op_transpose, 3),
       (op_reshape, 3), (op_slice, 3), (op_concat, 2), (op_pad, 2), (op_gather, 2), (op_expand, 1),
       (op_norm, 2), (op_conv, 4), (op_convtranspose, 1), (op_pool, 2), (op_argmax, 1), (op_topk, 1),
       (op_where, 1), (op_cast, 1), (op_einsum, 1), (op_misc, 2), (op_resize, 1), (op_depth, 1),
       (op_variadic, 1), (op_shape_view, 1), (op_elements, 1), (op_trilu, 1), (op_recurrent, 1),
       (op_quant, 3), (op_more, 4), (op_ctrl, 3), (op_rest, 3))

# DIFF_GEN_BOOST=op_ctrl,op_rest (family names) weighs those families 20
# times as much: a new family meets its bugs in fewer seeds. Seeds make other
# graphs then; the numbers quoted in docs/DESIGN.md are without it.
BOOST = set(os.environ.get("DIFF_GEN_BOOST", "").split(","))
OPS = tuple((f, w * 20 if f.__name__ in BOOST else w) for f, w in OPS)

# The ops of integer graphs (onnxruntime has no integer DepthToSpace).
INT_OPS = (op_unary, op_binary, op_reduce, op_matmul, op_transpose, op_reshape, op_slice, op_concat, op_pad,
           op_gather, op_expand, op_argmax, op_topk, op_where, op_cast, op_misc, op_variadic, op_shape_view,
           op_trilu, op_more, op_ctrl, op_rest)


# The ops of float64 graphs: the families whose ops onnxruntime's CPU
# kernels take in double (not Conv, ConvTranspose, Resize, the recurrent
# ops, quantization or op_rest's; the families below leave out the rest:
# DOUBLE_UNARY, DOUBLE_MORE, MaxPool only, no InstanceNormalization, Mean).
DOUBLE_OPS = (op_unary, op_binary, op_reduce, op_softmax, op_matmul, op_transpose, op_reshape, op_slice,
              op_concat, op_pad, op_gather, op_expand, op_norm, op_pool, op_argmax, op_topk, op_where, op_cast,
              op_einsum, op_misc, op_depth, op_variadic, op_shape_view, op_elements, op_trilu, op_more, op_ctrl)
# Every tenth seed (7, 17, ...) is a float64 graph; DIFF_GEN_DTYPE=double
# makes every float graph a float64 one (a hunt).
FORCE_DOUBLE = os.environ.get("DIFF_GEN_DTYPE") == "double"


def make_model(seed):
    """(model, syms, feeds): feeds maps input names to arrays (integer
    graphs: values in [-20, 20]) or is empty (verify's random inputs)."""
    dt = T.FLOAT if seed % 5 != 1 else (T.INT32, T.INT64)[seed // 5 % 2]
    if dt == T.FLOAT and (seed % 10 == 7 or FORCE_DOUBLE):
        dt = T.DOUBLE
    g = Gen(seed, dt)
    g.new_input()
    if g.r.random() < 0.3:
        g.new_input()
    count = g.r.randint(3, 12)
    made = []
    allowed = {T.FLOAT: dict(OPS), T.DOUBLE: DOUBLE_OPS}.get(dt, INT_OPS)
    funcs, weights = zip(*[(f, w) for f, w in OPS if f in allowed])
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
    outvi = [h.make_tensor_value_info(nm, dt, shape) for nm, shape, _ in picked] + g.side
    graph = h.make_graph(g.nodes, "diff_%d" % seed, ins, outvi, initializer=g.inits)
    opsets = [h.make_opsetid("", 17)]
    if any(n.domain == "com.microsoft" for n in g.nodes):
        opsets.append(h.make_opsetid("com.microsoft", 1))
    model = h.make_model(graph, opset_imports=opsets, producer_name="diff_fuzz")
    model.ir_version = 8
    feeds = {}
    if not g.flt:
        feeds = {nm: g.np.integers(-20, 21, size=shape).astype(g.npdt) for nm, shape in g.inputs}
        syms = {}
    return model, syms, feeds
