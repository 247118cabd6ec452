#!/usr/bin/python3
"""Makes a LLaMA-architecture ONNX model with random (seeded) weights.

Run with Debian's /usr/bin/python3 (python3-torch, python3-onnx, python3-numpy).
onnxruntime reference outputs come from runtime/ort/ort_run.js (Node).

Architecture: token embedding -> N x [RMSNorm -> GQA causal self-attention with
rotary embeddings -> residual -> RMSNorm -> SwiGLU MLP -> residual] -> RMSNorm ->
LM head (untied unless --tied).  Everything is written out with plain torch ops
so the exported graph only uses simple ONNX ops (see models/README.md).

Forms (--form):
  static   ids [batch, seq] int64 -> logits [batch, seq, vocab]   (all dims fixed)
  dynamic  same, with dynamic axes ids/logits {0: 'batch', 1: 'seq'}
  prefill  dynamic, and also returns the cache a decode step continues from:
           ids [batch, seq] -> logits [batch, seq, vocab],
              present_k_i / present_v_i [batch, kv_heads, seq, head_dim]
  decode   one step with a KV cache:
           ids [batch, 1] int64, position [1] int64,
           past_k_i / past_v_i [batch, kv_heads, past, head_dim] (past dynamic)
           -> logits [batch, 1, vocab],
              present_k_i / present_v_i [batch, kv_heads, past+1, head_dim]

--ref writes DIR/test_data_set_K/{input_J.pb,output_J.pb} (ONNX backend-test
layout); output_J.pb are onnxruntime's outputs (via ort_run.js), checked against
torch's own outputs (max |diff| printed, must be <= 1e-4).
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "runtime", "ort", "ort_run.js")
TOL = 1e-4


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        # x * rsqrt(mean(x^2) + eps) * weight   (rsqrt exports as Sqrt + Div)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x, half):
    # half = head_dim // 2 as a python int (a traced x.shape[-1] // 2 would export
    # Shape/Div/Cast arithmetic in the dynamic forms)
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x, cos, sin, half):
    # x [B, H, S, hd]; cos/sin [S, hd] (broadcast over B, H)
    return x * cos + rotate_half(x, half) * sin


class Attention(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.heads, self.kv_heads = a.heads, a.kv_heads
        self.head_dim = a.dim // a.heads
        self.n_rep = a.heads // a.kv_heads
        self.wq = nn.Linear(a.dim, a.heads * self.head_dim, bias=False)
        self.wk = nn.Linear(a.dim, a.kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(a.dim, a.kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(a.heads * self.head_dim, a.dim, bias=False)
        self.scale = 1.0 / float(self.head_dim) ** 0.5

    def repeat_kv(self, x):
        # [B, kvh, T, hd] -> [B, kvh*n_rep, T, hd] via unsqueeze -> expand -> reshape
        # (not repeat_interleave: its export is rejected by onnxruntime with dynamic axes)
        if self.n_rep == 1:
            return x
        b, t = x.shape[0], x.shape[2]  # dynamic (batch, kv length)
        kvh, hd = self.kv_heads, self.head_dim  # static python ints
        x = x.unsqueeze(2).expand(b, kvh, self.n_rep, t, hd)
        return x.reshape(b, kvh * self.n_rep, t, hd)

    def forward(self, x, cos, sin, mask=None, past_k=None, past_v=None):
        b, s, _ = x.shape
        q = self.wq(x).reshape(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).reshape(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).reshape(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q = apply_rope(q, cos, sin, self.head_dim // 2)
        k = apply_rope(k, cos, sin, self.head_dim // 2)
        if past_k is not None:
            k = torch.cat((past_k, k), dim=2)
            v = torch.cat((past_v, v), dim=2)
        present_k, present_v = k, v
        kr, vr = self.repeat_kv(k), self.repeat_kv(v)
        scores = torch.matmul(q, kr.transpose(2, 3)) * self.scale
        if mask is not None:  # mask: True above the diagonal (future positions)
            scores = scores.masked_fill(mask, torch.finfo(torch.float32).min)
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, vr).transpose(1, 2).reshape(b, s, self.heads * self.head_dim)
        return self.wo(out), present_k, present_v


class MLP(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.w1 = nn.Linear(a.dim, a.ffn, bias=False)
        self.w2 = nn.Linear(a.ffn, a.dim, bias=False)
        self.w3 = nn.Linear(a.dim, a.ffn, bias=False)

    def forward(self, x):
        return self.w2(torch.nn.functional.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.attn_norm = RMSNorm(a.dim, a.eps)
        self.attn = Attention(a)
        self.mlp_norm = RMSNorm(a.dim, a.eps)
        self.mlp = MLP(a)

    def forward(self, x, cos, sin, mask=None, past_k=None, past_v=None):
        h, pk, pv = self.attn(self.attn_norm(x), cos, sin, mask, past_k, past_v)
        x = x + h
        x = x + self.mlp(self.mlp_norm(x))
        return x, pk, pv


class Llama(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.a = a
        self.embed = nn.Embedding(a.vocab, a.dim)
        self.layers = nn.ModuleList([Block(a) for _ in range(a.layers)])
        self.norm = RMSNorm(a.dim, a.eps)
        self.lm_head = nn.Linear(a.dim, a.vocab, bias=False)
        if a.tied:
            self.lm_head.weight = self.embed.weight
        hd = a.dim // a.heads
        inv_freq = 1.0 / (a.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
        ang = torch.outer(torch.arange(a.max_seq, dtype=torch.float64), inv_freq)
        ang = torch.cat((ang, ang), dim=-1)  # [max_seq, hd]
        self.register_buffer("cos_table", ang.cos().float(), persistent=False)
        self.register_buffer("sin_table", ang.sin().float(), persistent=False)
        self.register_buffer("causal_mask",  # True where key position > query position
                             torch.triu(torch.ones(a.max_seq, a.max_seq, dtype=torch.bool), 1),
                             persistent=False)

    def prefill(self, ids):
        """ids [B, S] -> logits [B, S, V], list of (k, v) per layer (post-RoPE)."""
        s = ids.shape[1]
        cos, sin = self.cos_table[:s], self.sin_table[:s]  # positions arange(S)
        mask = self.causal_mask[:s, :s]
        x = self.embed(ids)
        cache = []
        for layer in self.layers:
            x, k, v = layer(x, cos, sin, mask)
            cache.append((k, v))
        return self.lm_head(self.norm(x)), cache

    def decode(self, ids, position, pasts):
        """ids [B, 1], position [1] int64, pasts [(k, v)] -> logits [B,1,V], presents."""
        cos = torch.index_select(self.cos_table, 0, position)  # [1, hd]
        sin = torch.index_select(self.sin_table, 0, position)
        x = self.embed(ids)
        presents = []
        for layer, (pk, pv) in zip(self.layers, pasts):
            x, k, v = layer(x, cos, sin, None, pk, pv)  # one query sees all keys: no mask
            presents.append((k, v))
        return self.lm_head(self.norm(x)), presents


class PrefillWrapper(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids):
        return self.m.prefill(ids)[0]


class PrefillCacheWrapper(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids):
        logits, cache = self.m.prefill(ids)
        out = [logits]
        for k, v in cache:
            out += [k, v]
        return tuple(out)


class DecodeWrapper(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids, position, *past):
        pasts = [(past[2 * i], past[2 * i + 1]) for i in range(len(past) // 2)]
        logits, presents = self.m.decode(ids, position, pasts)
        out = [logits]
        for k, v in presents:
            out += [k, v]
        return tuple(out)


def build(a):
    torch.manual_seed(a.seed)
    m = Llama(a)
    with torch.no_grad():  # non-trivial norm weights
        for mod in m.modules():
            if isinstance(mod, RMSNorm):
                mod.weight.copy_(1.0 + 0.1 * torch.randn_like(mod.weight))
    return m.eval()


def io_names(a):
    if a.form == "prefill":
        return ["ids"], ["logits"] + [f"present_{kv}_{i}" for i in range(a.layers) for kv in "kv"]
    if a.form != "decode":
        return ["ids"], ["logits"]
    ins, outs = ["ids", "position"], ["logits"]
    for i in range(a.layers):
        ins += [f"past_k_{i}", f"past_v_{i}"]
        outs += [f"present_k_{i}", f"present_v_{i}"]
    return ins, outs


def decode_inputs(m, a, gen, batch, past):
    """Realistic decode inputs: caches from the prefill of a `past`-token prompt."""
    prompt = torch.randint(0, a.vocab, (batch, past), generator=gen)
    nxt = torch.randint(0, a.vocab, (batch, 1), generator=gen)
    with torch.no_grad():
        _, cache = m.prefill(prompt)
    flat = [t for kv in cache for t in kv]
    return [nxt, torch.tensor([past], dtype=torch.int64)] + flat, prompt, nxt


# ---------------------------------------------------------------------------
# Post-export clean-up.  torch 1.13's do_constant_folding leaves the shape
# arithmetic of aten::expand (ConstantOfShape -> Mul -> Equal -> Where) and any
# Constant nodes in the graph.  This pass evaluates, with numpy, every node of a
# few simple op types whose inputs are all constant, and stores all constants as
# initializers, so the graph only holds real computation (and, in the dynamic
# forms, the Shape arithmetic that depends on the input shape).
def _attrs(node):
    return {x.name: onnx.helper.get_attribute_value(x) for x in node.attribute}


def _eval(node, xs):
    op, at = node.op_type, _attrs(node)
    if op == "Constant":
        return numpy_helper.to_array(at["value"])
    if op == "ConstantOfShape":
        v = numpy_helper.to_array(at["value"]) if "value" in at else np.zeros(1, np.float32)
        return np.full(tuple(int(d) for d in xs[0]), v.reshape(-1)[0], dtype=v.dtype)
    if op in ("Add", "Sub", "Mul", "Div", "Equal"):
        a, b = xs
        if op == "Div" and a.dtype.kind in "iu":
            return (a // b).astype(a.dtype)
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
             "Div": np.divide, "Equal": np.equal}[op]
        r = f(a, b)
        return r if op == "Equal" else r.astype(a.dtype)
    if op == "Where":
        return np.where(*xs)
    if op == "Neg":
        return -xs[0]
    if op == "Cast":
        return xs[0].astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[at["to"]])
    if op == "Unsqueeze":
        r = xs[0]
        axes = sorted(int(v) % (r.ndim + len(xs[1])) for v in xs[1])
        for ax in axes:
            r = np.expand_dims(r, ax)
        return r
    if op == "Concat":
        return np.concatenate(xs, axis=at["axis"])
    if op == "Gather":
        return np.take(xs[0], xs[1], axis=at.get("axis", 0))
    if op == "Reshape":
        shape = [int(d) for d in xs[1]]
        shape = [xs[0].shape[i] if d == 0 else d for i, d in enumerate(shape)]
        return xs[0].reshape(shape)
    if op == "Expand":
        shape = np.broadcast_shapes(xs[0].shape, tuple(int(d) for d in xs[1]))
        return np.broadcast_to(xs[0], shape).copy()
    if op == "Shape":
        return np.array(xs[0].shape, dtype=np.int64)
    return None


def _static_shapes(model):
    """(name -> tuple of ints for every tensor whose shape onnx infers fully,
        name -> elem_type)."""
    inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    g = inferred.graph
    out, types = {}, {t.name: t.data_type for t in g.initializer}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        t = vi.type.tensor_type
        types[vi.name] = t.elem_type
        if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
            out[vi.name] = tuple(d.dim_value for d in t.shape.dim)
    return out, types


def _fold_once(model):
    g = model.graph
    const = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    shapes, types = _static_shapes(model)
    graph_outputs = {o.name for o in g.output}
    keep, changed, alias = [], False, {}
    for node in g.node:
        for j, name in enumerate(node.input):
            if name in alias:
                node.input[j] = alias[name]
        val = None
        if (node.op_type == "Cast" and node.output[0] not in graph_outputs
                and types.get(node.input[0]) == _attrs(node)["to"]):
            alias[node.output[0]] = node.input[0]  # identity Cast: drop it
            changed = True
            continue
        if node.op_type == "Shape" and node.input[0] in shapes:
            at = _attrs(node)  # opset 15+ start/end
            dims = shapes[node.input[0]]
            val = np.array(dims[at.get("start", 0):at.get("end", len(dims))], dtype=np.int64)
        elif all(i in const for i in node.input if i) and len(node.output) == 1:
            try:
                val = _eval(node, [const[i] for i in node.input if i])
            except Exception:  # leave anything unexpected to the runtime
                val = None
        if val is None:
            keep.append(node)
        else:
            const[node.output[0]] = np.asarray(val)
            changed = True
    used = {i for n in keep for i in n.input} | {o.name for o in g.output}
    inits = [numpy_helper.from_array(np.array(v, order="C"), name=k)
             for k, v in const.items() if k in used]
    del g.node[:]
    g.node.extend(keep)
    del g.initializer[:]
    g.initializer.extend(inits)
    del g.value_info[:]  # stale after folding; re-inferred on demand
    return changed


def fold_constants(model):
    while _fold_once(model):
        pass
    return model


def export(m, a, path):
    hd = a.dim // a.heads
    ins, outs = io_names(a)
    gen = torch.Generator().manual_seed(a.seed + 1)
    if a.form == "decode":
        wrapper = DecodeWrapper(m)
        args, _, _ = decode_inputs(m, a, gen, a.batch, a.past)
        dyn = {}
        for i in range(a.layers):
            dyn[f"past_k_{i}"] = dyn[f"past_v_{i}"] = {2: "past"}
            dyn[f"present_k_{i}"] = dyn[f"present_v_{i}"] = {2: "past_plus_1"}
        args = tuple(args)
    else:
        wrapper = PrefillCacheWrapper(m) if a.form == "prefill" else PrefillWrapper(m)
        args = (torch.randint(0, a.vocab, (a.batch, a.seq), generator=gen),)
        dyn = None
        if a.form in ("dynamic", "prefill"):
            dyn = {"ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
        if a.form == "prefill":
            for name in outs[1:]:
                dyn[name] = {0: "batch", 2: "seq"}
    with torch.no_grad():
        torch.onnx.export(wrapper, args, path, opset_version=17, do_constant_folding=True,
                          input_names=ins, output_names=outs, dynamic_axes=dyn)
    model = onnx.load(path)
    if not a.no_fold:
        model = fold_constants(model)
        onnx.save(model, path)
    onnx.checker.check_model(model)
    onnx.shape_inference.infer_shapes(model, strict_mode=True)
    return model


def write_pb(arr, name, path):
    t = numpy_helper.from_array(np.array(arr, order="C"), name=name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def reference(m, a, path, k, gen, batch, seq_or_past, threads):
    """Writes test_data_set_k: inputs, onnxruntime outputs; compares with torch."""
    ins, outs = io_names(a)
    d = os.path.join(a.out, f"test_data_set_{k}")
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if f.endswith(".pb"):
            os.remove(os.path.join(d, f))
    extra = ""
    with torch.no_grad():
        if a.form == "decode":
            inputs, prompt, nxt = decode_inputs(m, a, gen, batch, seq_or_past)
            expect = DecodeWrapper(m)(*inputs)
            # sanity: decode step == last position of a prefill over prompt+token
            full, _ = m.prefill(torch.cat((prompt, nxt), dim=1))
            extra = " decode-vs-prefill %.3g" % (full[:, -1:] - expect[0]).abs().max().item()
        else:
            inputs = [torch.randint(0, a.vocab, (batch, seq_or_past), generator=gen)]
            wrapper = PrefillCacheWrapper(m) if a.form == "prefill" else PrefillWrapper(m)
            expect = wrapper(*inputs)
            expect = expect if isinstance(expect, tuple) else (expect,)
    files = []
    for j, (name, t) in enumerate(zip(ins, inputs)):
        p = os.path.join(d, f"input_{j}.pb")
        write_pb(t.numpy(), name, p)
        files.append(p)
    subprocess.run(["node", ORT_RUN, "--threads", str(threads), path, d] + files, check=True)
    worst = 0.0
    for j, (name, t) in enumerate(zip(outs, expect)):
        got = numpy_helper.to_array(onnx.load_tensor(os.path.join(d, f"output_{j}.pb")))
        assert got.shape == tuple(t.shape), (name, got.shape, tuple(t.shape))
        worst = max(worst, float(np.abs(got - t.numpy()).max()))
    shapes = ", ".join(f"{n}{list(t.shape)}" for n, t in zip(ins, inputs))
    print(f"test_data_set_{k}: {shapes}: torch-vs-onnxruntime max|diff| {worst:.3g}{extra}")
    if not worst <= TOL:
        sys.exit(f"FAIL: max diff {worst} > {TOL}")
    return worst


def parse_shapes(s):
    return [tuple(int(v) for v in item.split("x")) for item in s.split(",") if item]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--ffn", type=int, default=172)
    p.add_argument("--max-seq", type=int, default=64)
    p.add_argument("--seq", type=int, default=16, help="static / example sequence length")
    p.add_argument("--past", type=int, default=7, help="decode: example past length")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eps", type=float, default=1e-5)
    p.add_argument("--rope-theta", type=float, default=10000.0)
    p.add_argument("--tied", action="store_true", help="tie LM head to the embedding")
    p.add_argument("--form", choices=["static", "dynamic", "prefill", "decode"], default="static")
    p.add_argument("--out", required=True, help="output directory (model.onnx)")
    p.add_argument("--ref", action="store_true", help="write test_data_set_* reference data")
    p.add_argument("--ref-shapes", default=None,
                   help="comma list BxS (prefill: batch x seq; decode: batch x past) of "
                        "reference data sets; default BATCHxSEQ (decode BATCHxPAST)")
    p.add_argument("--no-fold", action="store_true",
                   help="keep torch's export as is (no numpy constant folding clean-up)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime / torch threads")
    a = p.parse_args()
    assert a.dim % a.heads == 0 and (a.dim // a.heads) % 2 == 0
    assert a.heads % a.kv_heads == 0
    torch.set_num_threads(a.threads)

    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "model.onnx")
    m = build(a)
    model = export(m, a, path)
    g = model.graph
    print(f"{path}: {os.path.getsize(path)} bytes, {len(g.node)} nodes, "
          f"{sum(int(np.prod(t.dims)) for t in g.initializer)} weight elements")

    def dims(vi):
        return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]
    for vi in g.input:
        print(f"  input  {vi.name} {onnx.TensorProto.DataType.Name(vi.type.tensor_type.elem_type)} {dims(vi)}")
    for vi in g.output:
        print(f"  output {vi.name} {onnx.TensorProto.DataType.Name(vi.type.tensor_type.elem_type)} {dims(vi)}")
    print("  op types:", " ".join(sorted({n.op_type for n in g.node})))

    if a.ref:
        if a.ref_shapes:
            shapes = parse_shapes(a.ref_shapes)
        else:
            shapes = [(a.batch, a.past if a.form == "decode" else a.seq)]
        if a.form == "static":
            assert shapes == [(a.batch, a.seq)], "static form: reference shape must be BATCHxSEQ"
        gen = torch.Generator().manual_seed(a.seed + 2)
        for k, (b, s) in enumerate(shapes):
            assert s + (1 if a.form == "decode" else 0) <= a.max_seq
            reference(m, a, path, k, gen, b, s, a.threads)


if __name__ == "__main__":
    main()
