#!/usr/bin/python3
"""Makes the 1.1B-parameter LLaMA (TinyLlama's shape) with random seeded
weights, as ONNX with external data: prefill.onnx and decode.onnx in one
folder, both pointing into one weights file (about 4.4 GB of float32).

Run with Debian's /usr/bin/python3 (python3-torch, python3-onnx, python3-numpy).

Memory: the graph comes from make_llama.py's torch export of a two-layer model
of the same width (about 0.9 GB of weights); the other layers are copies of
layer 1's nodes under new names, and every weight (embedding, norms, the
projections, the LM head) is then drawn by numpy, one tensor at a time, and
appended to the weights file. The full model is never in memory.

Weights: a projection stored [in, out] is uniform in +-1/sqrt(in) (torch's
nn.Linear initialisation), the embedding standard normal, the RMSNorm scales
1 + 0.1 N(0, 1); each drawn from a generator seeded with the seed and the
weight's role (its layer and projection), so both forms read the same bytes.

Usage:
  make_llama_large.py --out DIR            # TinyLlama's shape (the defaults)
  make_llama_large.py --out DIR --layers 3 --dim 256 --ffn 688 --heads 8 --kv-heads 2 --vocab 1000
Writes DIR/prefill.onnx (ids [batch, seq] -> logits, present_k/v_i),
DIR/decode.onnx (ids [batch, 1], position [1], past_k/v_i [batch, kv, past, hd]
-> logits, present_k/v_i) and DIR/weights.bin; DIR/stamp names the arguments,
and a folder whose stamp matches is left as it is.
"""
import argparse
import os
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_llama  # noqa: E402  (the torch model, its export and the constant folding)

ALIGN = 4096  # each tensor starts on a page in weights.bin (mappable in place)


def export_small(a, form, path):
    """make_llama.py's export of a two-layer model of the same width."""
    b = argparse.Namespace(**vars(a))
    b.layers, b.form, b.batch, b.seq, b.past, b.no_fold = 2, form, 1, 4, 3, False
    m = make_llama.build(b)
    return make_llama.export(m, b, path)


def layer_of(name, i):
    return name.replace("/layers.1/", f"/layers.{i}/").replace("layers.1.", f"layers.{i}.")


def widen(model, layers):
    """Copies layer 1's nodes for layers 2..layers-1 (new names for everything
    they make and for their constants), chains them on the residual stream,
    adds the past/present inputs and outputs. Returns {initializer name: role}
    for the weights (roles name the same weight in both forms)."""
    g = model.graph
    nodes = list(g.node)
    in_layer = [n.name.startswith("/layers.1/") for n in nodes]
    made = {o for n, l in zip(nodes, in_layer) if l for o in n.output}
    made0 = {o for n in nodes if n.name.startswith("/layers.0/") for o in n.output}
    inits = {t.name: t for t in g.initializer}
    graph_in = {v.name for v in g.input}
    graph_out = {v.name for v in g.output}
    # the residual stream: into layer 1 from layer 0, out of layer 1 to the final norm
    res_in = {x for n, l in zip(nodes, in_layer) if l for x in n.input if x in made0}
    res_out = {x for n, l in zip(nodes, in_layer) if not l for x in n.input if x in made and x not in graph_out}
    assert len(res_in) == 1 and len(res_out) == 1, (res_in, res_out)
    res_in, res_out = res_in.pop(), res_out.pop()

    roles = {}
    for n in nodes:
        for x in n.input:
            if x in inits and (x.startswith("m.") or x.startswith("onnx::MatMul")):
                roles[x] = x if x.startswith("m.") else n.name

    def rename(x, i):
        if x in graph_out or x in graph_in:  # past_k_1 -> past_k_i
            assert x.endswith("_1"), x
            return x[:-1] + str(i)
        return layer_of(x, i) if "/layers.1/" in x else f"{x}__l{i}"

    new_nodes, new_inits = [], []
    last = max(k for k, l in enumerate(in_layer) if l)
    head, tail = nodes[:last + 1], nodes[last + 1:]
    prev_out = res_out
    for i in range(2, layers):
        local = {}
        for n, l in zip(nodes, in_layer):
            if not l:
                continue
            c = onnx.NodeProto()
            c.CopyFrom(n)
            c.name = layer_of(n.name, i)
            for j, x in enumerate(n.input):
                if x == res_in:
                    c.input[j] = prev_out
                elif x in made or x in graph_in:
                    c.input[j] = rename(x, i)
                elif x in roles:
                    y = f"{x}__l{i}" if not x.startswith("m.") else layer_of(x, i)
                    roles[y] = layer_of(roles[x], i)
                    local.setdefault(x, y)
                    c.input[j] = y
                elif x in inits:
                    local.setdefault(x, f"{x}__l{i}")
                    c.input[j] = local[x]
            for j, x in enumerate(n.output):
                c.output[j] = rename(x, i)
            new_nodes.append(c)
        for x, y in local.items():
            t = TensorProto()
            t.CopyFrom(inits[x])
            t.name = y
            new_inits.append(t)
        prev_out = rename(res_out, i)
        for kind, vis in (("past", g.input), ("present", g.output)):
            for kv in "kv":
                src = next((v for v in vis if v.name == f"{kind}_{kv}_1"), None)
                if src is None:  # prefill has no past
                    continue
                v = onnx.ValueInfoProto()
                v.CopyFrom(src)
                v.name = f"{kind}_{kv}_{i}"
                vis.append(v)
    for n in tail:
        for j, x in enumerate(n.input):
            if x == res_out:
                n.input[j] = prev_out
    del g.node[:]
    g.node.extend(head + new_nodes + tail)
    g.initializer.extend(new_inits)
    return roles


def fix_outputs(model, a):
    """torch names the head size of a prefill's present_k an unknown symbol
    (it comes out of an Add); the cache outputs are [batch, kv_heads, seq,
    head_dim] with the two sizes fixed."""
    for v in model.graph.output:
        if v.name.startswith("present_"):
            d = v.type.tensor_type.shape.dim
            for i, val in ((1, a.kv_heads), (3, a.dim // a.heads)):
                d[i].Clear()
                d[i].dim_value = val


def draw(role, dims, seed):
    rng = np.random.default_rng([seed, zlib.crc32(role.encode())])
    if role.endswith("norm.weight"):
        return (1.0 + 0.1 * rng.standard_normal(dims)).astype(np.float32)
    if role == "m.embed.weight":
        return rng.standard_normal(dims, dtype=np.float32)
    bound = 1.0 / np.sqrt(dims[0])
    return rng.uniform(-bound, bound, size=dims).astype(np.float32)


def externalise(model, roles, data, table, seed):
    """Points every role weight at its bytes in weights.bin (appended when the
    role is new: the first form writes them, the second finds them)."""
    for t in model.graph.initializer:
        if t.name not in roles:
            continue
        role, dims = roles[t.name], list(t.dims)
        assert t.data_type == TensorProto.FLOAT
        if role not in table:
            arr = draw(role, dims, seed)
            off = (data.tell() + ALIGN - 1) // ALIGN * ALIGN
            data.seek(off)
            data.write(arr.tobytes())
            table[role] = (off, arr.nbytes, dims)
        off, nbytes, d = table[role]
        assert d == dims, (role, d, dims)
        t.ClearField("raw_data")
        del t.float_data[:]
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        for k, v in (("location", "weights.bin"), ("offset", str(off)), ("length", str(nbytes))):
            e = t.external_data.add()
            e.key, e.value = k, v


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--layers", type=int, default=22)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=5632)
    p.add_argument("--max-seq", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eps", type=float, default=1e-5)
    p.add_argument("--rope-theta", type=float, default=10000.0)
    a = p.parse_args()
    a.tied, a.threads = False, 1
    assert a.layers >= 2 and a.dim % a.heads == 0 and a.heads % a.kv_heads == 0
    os.makedirs(a.out, exist_ok=True)
    stamp = os.path.join(a.out, "stamp")
    want = repr(sorted((k, v) for k, v in vars(a).items() if k != "out"))
    files = [os.path.join(a.out, f) for f in ("prefill.onnx", "decode.onnx", "weights.bin")]
    if all(os.path.exists(f) for f in files) and os.path.exists(stamp) and open(stamp).read() == want:
        print(f"{a.out}: up to date")
        return
    if os.path.exists(stamp):
        os.remove(stamp)
    import torch
    torch.set_num_threads(1)
    table = {}
    with open(files[2], "wb") as data:
        for form, path in (("prefill", files[0]), ("decode", files[1])):
            model = export_small(a, form, path)
            roles = widen(model, a.layers)
            fix_outputs(model, a)
            externalise(model, roles, data, table, a.seed)
            del model.graph.value_info[:]
            onnx.save(model, path)
            onnx.checker.check_model(path)
            print(f"{path}: {len(model.graph.node)} nodes, {len(model.graph.input)} inputs, "
                  f"{len(model.graph.output)} outputs")
            del model
    total = sum(n for _, n, _ in table.values())
    print(f"{files[2]}: {len(table)} tensors, {total} bytes ({total // 4} parameters)")
    open(stamp, "w").write(want)


if __name__ == "__main__":
    main()
