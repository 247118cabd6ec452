#!/usr/bin/python3
"""bench.py - `make bench` driver for onnx2c-caten (see bench/README.md).

Stages: machine peaks, embedding (Gather) benchmark, LLaMA table vs
onnxruntime-node. Writes bench/results.csv, bench/results.png and the results
section of bench/README.md. Run through bench/run.sh (needs /usr/bin/python3
for numpy/onnx/torch).

Environment:
  ONNX2C_BENCH_MODELS  comma list of tiny,small,base128,base1,basedec,resnet18,
                       mobilenetv3,crnn,dbnet,audio,conv3x3,conv1x1 (base = the
                       three base rows, cnn = the seven CNN rows, all =
                       everything); default all
  BENCH=quick          same as ONNX2C_BENCH_MODELS=tiny,small
  BENCH=all            same as ONNX2C_BENCH_MODELS=all
  BENCH=large          same as ONNX2C_BENCH_MODELS=large: the 1.1B LLaMA
                       (largedec, large128, and largedec_int8,
                       large128_int8: the int8 QDQ form; largedec_int4,
                       large128_int4: MatMulNBits; opt-in, not in
                       `all`: it makes a 4.4 GB model and 4.4 GB .weights)
  ONNX2C_BENCH_THREADS comma list of thread counts (default 1,2)
  ONNX2C_BENCH_EMBED   0 skips the embedding benchmark
  ONNX2C_BENCH_MACHINE 0 skips the peak measurements (uses cached ones)
  ONNX2C_BENCH_BUSY    1 adds, for every thread count, a row run while a busy
                       loop holds the last CPU (thr "2b": the other core busy)
  ONNX2C_BENCH_PIN     0 lets 1-thread rows run on any CPU; by default both
                       sides of a 1-thread row (and our forms in rotation)
                       run on the first CPU this process may use (taskset)
  ONNX2C              compiler binary (default build/onnx2c-caten)
  CC                  C compiler (default cc)
  ONNX2C_BENCH_CFLAGS extra flags for the generated C, after its own (e.g.
                      -DO2C_POOL_ADAPT=0: every loop threaded, no holds)
  TARGET              --target of the compiler (default native; x86-64-v3 = AVX2,
                      x86-64-v4 = AVX-512): the generated C is built with the flags
                      its first lines name (+ -mtune=native for a named x86 level),
                      and %FMA is against the peak of that ISA
"""
import csv
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
WORK = os.path.join(BENCH, 'work')
ONNX2C = os.path.abspath(os.environ.get('ONNX2C', os.path.join(ROOT, 'build', 'onnx2c-caten')))
CC = os.environ.get('CC', 'cc')
TARGET = os.environ.get('TARGET', '') or 'native'
# the FMA peak is measured with the vector ISA the target builds for (the
# -march of its flags; generic: none, SSE2 on x86-64)
PEAK_MARCH = {'native': ['-march=native'], 'aarch64': ['-march=armv8-a'], 'generic': []}.get(TARGET, [f'-march={TARGET}'])
PY = '/usr/bin/python3'
NODE = shutil.which('node') or 'node'
HARNESS_C = os.path.join(BENCH, 'common', 'harness.c')
INTERLEAVE = os.path.join(BENCH, 'llama', 'interleave.js')

# name -> (generator args, seq, label); the decode row is one KV-cache step
# after DECODE_PAST cached tokens (export form `decode`)
BASE = ['--vocab', '32000', '--dim', '768', '--layers', '12', '--heads', '12', '--kv-heads', '12', '--ffn', '2048']
DECODE_PAST = 127
LLAMA = {
    'tiny': (['--vocab', '256', '--dim', '64', '--layers', '2', '--heads', '4', '--kv-heads', '2', '--ffn', '172'], 16,
             'llama-tiny S=16'),
    'small': (['--vocab', '32000', '--dim', '288', '--layers', '6', '--heads', '6', '--kv-heads', '6', '--ffn', '768'], 32,
              'llama-small S=32'),
    'base128': (BASE, 128, 'llama-base S=128'),
    'base1': (BASE, 1, 'llama-base S=1'),
    'basedec': (BASE, 1, f'llama-base decode past={DECODE_PAST}'),
}
LLAMA_ORDER = ['tiny', 'small', 'base128', 'base1', 'basedec']
# The 1.1B LLaMA (TinyLlama's shape, models/make_llama_large.py, external
# data in models/llama/large): graph -> (model file, symbols, label, warm-up,
# runs, batch); a decode step is ~0.3 s, a prefill of 128 tokens seconds
LARGE_GRAPHS = {
    'largedec': ('decode', {'past': DECODE_PAST, 'past_plus_1': DECODE_PAST + 1},
                 f'decode past={DECODE_PAST}', 3, 10, 5),
    'large128': ('prefill', {'batch': 1, 'seq': 128}, 'prefill S=128', 2, 6, 3),
}
# Its weight forms: name -> (models/make_llama_quant.py arguments, label);
# '' is the float model itself. A quantized form of graph G is written to
# LARGE_DIR/<name>_<G>/model.onnx from LARGE_DIR/<G>.onnx; its rows are
# keys G_<name>, and onnxruntime runs the same file with float activations
# in its quantized MatMul (session.qdq_matmulnbits_accuracy_level 0, the
# reference of the tests: docs/DESIGN.md, "Quantized operators"). A form
# added here gets its rows in BENCH=large.
LARGE_FORMS = {
    '': (None, ''),
    'int8': (['--form', 'qdq', '--quantize-head'], 'int8 '),
    'int4': (['--form', 'nbits', '--block-size', '32', '--quantize-head'], 'int4 '),
    # what onnxruntime's MatMul4BitsQuantizer writes by default (blocks of 128, zero points)
    'int4g128': (['--form', 'nbits', '--block-size', '128', '--zero-points', '--quantize-head'], 'int4 b128 zp '),
}
LARGE = {g + (f'_{f}' if f else ''): (*LARGE_GRAPHS[g][:2], f'llama-1.1B {LARGE_FORMS[f][1]}{LARGE_GRAPHS[g][2]}',
                                      *LARGE_GRAPHS[g][3:], f)
         for f in LARGE_FORMS for g in LARGE_GRAPHS}
# BENCH=large: every form but the opt-in ones (named in ONNX2C_BENCH_MODELS)
LARGE_OPT_IN = ('int4g128',)
LARGE_ORDER = [k for k in LARGE if LARGE[k][-1] not in LARGE_OPT_IN]
ORT_QUANT = {'session': {'qdq_matmulnbits_accuracy_level': '0'}}
LARGE_DIR = os.path.join(ROOT, 'models', 'llama', 'large')
# CNN rows: key -> (models/make_cnn.py arguments, label); conv3x3 and conv1x1
# are single-convolution micro-benchmarks (one layer of the ResNet-18 net)
CNN = {
    'resnet18': (['--net', 'resnet18'], 'resnet18 224x224'),
    'mobilenetv3': (['--net', 'mobilenetv3'], 'mobilenetv3-small 224x224'),
    'crnn': (['--net', 'crnn'], 'crnn 48x320'),
    'dbnet': (['--net', 'dbnet'], 'dbnet 640x640'),
    'audio': (['--net', 'audio'], 'audio conv1d 16000'),
    'conv3x3': (['--net', 'conv', '--cin', '64', '--cout', '64', '--k', '3', '--hw', '56'], 'conv 3x3 64->64 56x56'),
    'conv1x1': (['--net', 'conv', '--cin', '64', '--cout', '256', '--k', '1', '--hw', '56'], 'conv 1x1 64->256 56x56'),
}
CNN_ORDER = ['resnet18', 'mobilenetv3', 'crnn', 'dbnet', 'audio', 'conv3x3', 'conv1x1']
DTYPE = {1: ('float32', np.float32), 6: ('int32', np.int32), 7: ('int64', np.int64), 11: ('float64', np.float64)}


def log(*a):
    print(*a, flush=True)


def first_error_line(text):
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    for l in lines:  # prefer the compiler's own diagnostic
        if 'error' in l.lower() or 'unsupported' in l.lower() or 'onnx2c' in l.lower():
            return l[:300]
    return (lines[-1] if lines else 'unknown error')[:300]


def run(cmd, timeout=None, env=None, cwd=None):
    """Runs cmd; returns (seconds, stdout). Raises RuntimeError with the first
    error line of stderr on failure."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f'timeout after {timeout}s: {os.path.basename(cmd[0])}')
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(first_error_line(p.stderr + '\n' + p.stdout) + f' (exit {p.returncode})')
    return dt, p.stdout


# ---------------------------------------------------------------- machine
def machine_peaks(use_cache):
    d = os.path.join(WORK, 'machine')
    os.makedirs(d, exist_ok=True)
    cache = os.path.join(d, f'peaks_{TARGET}.json')
    if use_cache and os.path.exists(cache):
        return json.load(open(cache))
    peaks = {'fma': {}, 'triad': {}, 'isa': '?'}
    for src, exe, key, tag in (('fma_peak.c', 'fma_peak', 'fma', 'fma_gflops'),
                               ('stream_triad.c', 'stream_triad', 'triad', 'triad_gbs')):
        run([CC, '-O2' if key == 'fma' else '-O3', *(PEAK_MARCH if key == 'fma' else ['-march=native']), '-fopenmp',
             os.path.join(BENCH, 'machine', src), '-o', os.path.join(d, exe)])
        # 1 thread on the CPU the 1-thread rows use (pin_argv), 2 anywhere
        out = run(pin_argv(1) + [os.path.join(d, exe), '1'], timeout=600)[1] + run([os.path.join(d, exe), '2'], timeout=600)[1]
        for line in out.splitlines():
            f = line.split()
            if f and f[0] == tag:
                peaks[key][int(f[1])] = float(f[2])
            elif f and f[0] == 'fma_isa':
                peaks['isa'] = f[1]
    json.dump(peaks, open(cache, 'w'))
    return peaks


def peak_for(peaks, key, threads):
    tab = {int(k): v for k, v in peaks[key].items()}
    return tab.get(threads) or max(tab.values())


# ---------------------------------------------------------------- compile/build
def compile_model(model, outdir, name, extra=()):
    os.makedirs(outdir, exist_ok=True)
    dt, _ = run([ONNX2C, model, '-o', outdir, '--name', name, '--target', TARGET, *extra], timeout=3600)
    return dt


def build_flags(src):
    """The flags the generated C names on its 'Build with:' line (the target's,
    -pthread when it was compiled with --threads); a named x86 level is tuned
    for this machine."""
    head = open(src).read(4096)
    m = re.search(r'Build with: ([^\n(*]*)', head)
    if not m:
        raise RuntimeError(f'{src}: no "Build with:" line')
    flags = m.group(1).split()
    extra = os.environ.get('ONNX2C_BENCH_CFLAGS', '').split()
    return flags + (['-mtune=native'] if TARGET.startswith('x86-64') else []) + extra


def build_harness(outdir, name):
    """cc NAME.c (timed) + harness.c -> outdir/harness_NAME. Returns (cc_s, omp)."""
    src = os.path.join(outdir, name + '.c')
    omp = 'o2c_pool_run(k' in open(src).read()  # a kernel runs on the thread pool
    flags = build_flags(src)
    if omp and '-pthread' not in flags:
        flags.append('-pthread')
    obj = os.path.join(outdir, name + '.o')
    dt, _ = run([CC, *flags, '-c', src, '-o', obj], timeout=3600)
    run([CC, *flags, f'-DBENCH_NAME={name}', f'-DBENCH_HDR="{name}.h"', '-I', outdir,
         HARNESS_C, obj, '-lm', '-o', os.path.join(outdir, 'harness_' + name)])
    return dt, omp


def harness_argv(outdir, name, in_files, out_bytes, symbols=None):
    """The harness command; a symbolic build (NAME_DIM_NAMES in its header)
    gets --dims with the values of `symbols` in the header's order."""
    argv = [os.path.join(outdir, 'harness_' + name), os.path.join(outdir, name + '.weights')]
    for f in in_files:
        argv += ['--in', f]
    for b in out_bytes:
        argv += ['--out-bytes', str(b)]
    m = re.search(r'#define ' + re.escape(name) + r'_DIM_NAMES \{([^}]*)\}', open(os.path.join(outdir, name + '.h')).read())
    if m:
        names = re.findall(r'"([^"]*)"', m.group(1))
        argv += ['--dims', ','.join(str((symbols or {})[n]) for n in names)]
    return argv


def parse_kv(out):
    r = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2:
            try:
                r[f[0]] = float(f[1])
            except ValueError:
                pass
    return r


def interleave(model, inputs, argv, threads, warmup, runs, batch, dumpdir, env=None, ort_extra=None):
    spec = {'model': model, 'inputs': inputs, 'harness': argv + ['--serve'], 'threads': threads,
            'warmup': warmup, 'runs': runs, 'batch': batch, 'dumpdir': dumpdir, 'gapms': 30, 'env': env or {}}
    if ort_extra:
        spec['ort_extra'] = ort_extra  # onnxruntime session options' `extra` (config entries)
    sp = os.path.join(dumpdir + '.spec.json')
    os.makedirs(dumpdir, exist_ok=True)
    json.dump(spec, open(sp, 'w'))
    _, out = run([*pin_argv(threads), NODE, INTERLEAVE, sp], timeout=7200)
    return json.loads(out.strip().splitlines()[-1])


def model_io(path, symbols=None):
    """graph inputs [(name, elem_type, dims)], outputs likewise; symbolic
    dimensions take their value from `symbols` (name -> int)."""
    m = onnx.load(path, load_external_data=False)
    init = {i.name for i in m.graph.initializer}
    symbols = symbols or {}
    def dims(v):
        return [d.dim_value if not d.dim_param else symbols[d.dim_param] for d in v.type.tensor_type.shape.dim]
    ins = [(v.name, v.type.tensor_type.elem_type, dims(v)) for v in m.graph.input if v.name not in init]
    outs = [(v.name, v.type.tensor_type.elem_type, dims(v)) for v in m.graph.output]
    return m, ins, outs


def matmul_params(m):
    """Weight elements of the MatMuls (quantized ones counted as the float
    weight they stand for)."""
    init = {i.name: i for i in m.graph.initializer}
    made = {o: n for n in m.graph.node for o in n.output}
    tot = 0
    for n in m.graph.node:
        if n.op_type == 'MatMulNBits':
            a = {x.name: x.i for x in n.attribute}
            tot += a['K'] * a['N']
        elif n.op_type in ('MatMul', 'Gemm'):
            for x in n.input:
                src = made.get(x)
                if src is not None and src.op_type == 'DequantizeLinear':
                    x = src.input[0]
                if x in init and len(init[x].dims) == 2:
                    tot += int(np.prod(init[x].dims))
    return tot


def weight_bytes(m):
    """Bytes of the weights the MatMuls stream: a float initializer, or the
    integer weight, scale and zero point of a DequantizeLinear or
    MatMulNBits (what a decode step reads once per token)."""
    init = {i.name: i for i in m.graph.initializer}
    made = {o: n for n in m.graph.node for o in n.output}
    def size(name):
        t = init.get(name)
        return 0 if t is None else int(np.prod(t.dims)) * np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type]).itemsize
    tot = 0
    for n in m.graph.node:
        if n.op_type == 'MatMulNBits':
            tot += sum(size(x) for x in n.input[1:])
        elif n.op_type in ('MatMul', 'Gemm'):
            for x in n.input:
                src = made.get(x)
                if x in init and len(init[x].dims) == 2:
                    tot += size(x)
                elif src is not None and src.op_type == 'DequantizeLinear' and src.input[0] in init:
                    tot += sum(size(y) for y in src.input)
    return tot


def write_inputs(ins, d, vocab, position=None):
    rng = np.random.default_rng(0)
    files, spec = [], []
    for k, (name, et, dims) in enumerate(ins):
        tname, npt = DTYPE[et]
        if name == 'position':  # decode: the number of cached tokens
            a = np.full(dims, position, dtype=npt)
        elif np.issubdtype(npt, np.integer):
            a = rng.integers(0, vocab, size=dims).astype(npt)
        else:
            a = rng.standard_normal(dims).astype(npt)
        f = os.path.join(d, f'in_{k}.bin')
        a.tofile(f)
        files.append(f)
        spec.append({'name': name, 'dtype': tname, 'dims': dims, 'file': f})
    return files, spec


# ---------------------------------------------------------------- onnxruntime's floor
def ort_floor(threads_list):
    """onnxruntime-node's time per call that does not depend on the model:
    a one-element Identity model timed exactly like the rows (interleaved
    with our harness, same warm-up, runs and batches). Returns {threads:
    {'ort_ms', 'ours_ms'}}; the rows then also report their ratio against
    onnxruntime's time minus this floor (the conservative ratio)."""
    d = os.path.join(WORK, 'floor')
    os.makedirs(d, exist_ok=True)
    model = os.path.join(d, 'model.onnx')
    g = helper.make_graph([helper.make_node('Identity', ['x'], ['y'])], 'floor',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 8
    onnx.save(m, model)
    xf = os.path.join(d, 'x.bin')
    np.array([1.5], np.float32).tofile(xf)
    spec = [{'name': 'x', 'dtype': 'float32', 'dims': [1], 'file': xf}]
    floor = {}
    for t in threads_list:
        od = os.path.join(d, f'gen_t{t}')
        compile_model(model, od, 'floor')
        build_harness(od, 'floor')
        it = interleave(model, spec, harness_argv(od, 'floor', [xf], [4]), t, 20, 50, 10, os.path.join(d, f'dump_t{t}'))
        floor[t] = {'ort_ms': it['ort_ms'], 'ours_ms': it['ours_ms']}
        log(f"  {t} thread(s): onnxruntime {it['ort_ms']:.4f} ms per call, ours {it['ours_ms']:.5f} ms (1-element Identity)")
    return floor


def add_floor(rows, floor):
    """ratio_net = (ort_ms - onnxruntime's floor) / ours_ms: onnxruntime
    without its per-call cost, ours with it (conservative)."""
    for r in rows:
        thr = str(r.get('threads')).rstrip('b')  # '2b': 2 threads, the other core busy
        f = floor.get(int(thr), {}).get('ort_ms') if thr.isdigit() else None
        if r.get('error') or f is None or r.get('ort_ms') is None:
            continue
        r['ort_floor_ms'] = f
        r['ratio_net'] = max(r['ort_ms'] - f, 0.0) / r['ours_ms']


# ---------------------------------------------------------------- embedding
def make_embedding(path, V, D=768, S=512):
    rng = np.random.default_rng(V)
    W = rng.standard_normal((V, D)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node('Gather', ['W', 'ids'], ['y'], axis=0)], f'embedding_{V}',
        [helper.make_tensor_value_info('ids', TensorProto.INT64, [1, S])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, S, D])],
        [numpy_helper.from_array(W, 'W')])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 8
    onnx.save(m, path)
    return W


def bench_embedding(rows, peaks, compile_log):
    D, S = 768, 512
    res = {}
    for V in (256, 32000):
        d = os.path.join(WORK, 'embedding', f'V{V}')
        os.makedirs(d, exist_ok=True)
        model = os.path.join(d, 'model.onnx')
        W = make_embedding(model, V, D, S)
        ids = np.random.default_rng(1).integers(0, V, size=(1, S)).astype(np.int64)
        idf = os.path.join(d, 'ids.bin')
        ids.tofile(idf)
        expect = W[ids]
        out_bytes = S * D * 4
        r = {'V': V}
        for form, extra, warm, runs in (('rewritten', [], 20, 50),
                                        ('onehot', ['--no-rewrite'], 20 if V <= 256 else 1, 50 if V <= 256 else 3)):
            name = f'emb{V}_{form}'
            od = os.path.join(d, form)
            try:
                ct = compile_model(model, od, name, extra)
                bt, omp = build_harness(od, name)
                compile_log.append((f'embed V={V} {form}', ct, bt, omp))
                argv = harness_argv(od, name, [idf], [out_bytes])
                _, out = run(argv + ['--warmup', str(warm), '--runs', str(runs), '--memcpy', '--dump', od],
                             timeout=7200, env={**os.environ, 'OMP_NUM_THREADS': '1'})
                kv = parse_kv(out)
                got = np.fromfile(os.path.join(od, 'out_0.bin'), dtype=np.float32).reshape(expect.shape)
                r[form] = kv['ours_median_ms']
                r[form + '_diff'] = float(np.max(np.abs(got - expect)))
                if form == 'rewritten':
                    r['memcpy_ms'] = kv['memcpy_median_ms']
                    r['argv'] = argv
                    r['omp'] = omp
            except RuntimeError as e:
                r[form + '_err'] = str(e)
                compile_log.append((f'embed V={V} {form}', None, None, str(e)))
            log(f'  embedding V={V} {form}: ' + (f"{r.get(form):.4f} ms" if form in r else 'ERROR ' + r.get(form + '_err', '')))
        res[V] = r
        # ours vs onnxruntime on the rewritten form (1 thread), interleaved
        if 'argv' in r:
            try:
                it = interleave(model, [{'name': 'ids', 'dtype': 'int64', 'dims': [1, S], 'file': idf}],
                                r['argv'], 1, 20, 50, 10, os.path.join(d, 'dump_ort'))
                gbs = 2 * out_bytes / (it['ours_ms'] * 1e-3) / 1e9
                rows.append(dict(model=f'embed V={V}', threads=1, ours_threads=1,
                                 ours_ms=it['ours_ms'], ort_ms=it['ort_ms'], ratio=it['ort_ms'] / it['ours_ms'],
                                 gflops='', pct_fma='', gbs=gbs, pct_bw=100 * gbs / peak_for(peaks, 'triad', 1),
                                 maxdiff=it['maxdiff'], error=''))
            except RuntimeError as e:
                rows.append(dict(model=f'embed V={V}', threads=1, error=str(e)))
    # summary
    log('')
    log('Embedding: Gather W[V,768] f32, ids [1,512] i64 (1 thread; medians; GB/s = 2*B*S*D*4 bytes / time)')
    log(f"  {'V':>6} {'rewritten ms':>13} {'one-hot ms':>11} {'one-hot/rewr':>12} {'GB/s':>7} {'memcpy ms':>10} {'memcpy GB/s':>11} {'max|diff|':>9}")
    for V, r in res.items():
        rw, oh, mc = r.get('rewritten'), r.get('onehot'), r.get('memcpy_ms')
        f = lambda x, p=4: f'{x:.{p}f}' if isinstance(x, float) else 'ERR'
        gbs = 2 * S * D * 4 / (rw * 1e-3) / 1e9 if rw else None
        mgbs = 2 * S * D * 4 / (mc * 1e-3) / 1e9 if mc else None
        log(f"  {V:>6} {f(rw):>13} {f(oh, 2):>11} {f(oh / rw, 1) if rw and oh else 'ERR':>12} {f(gbs, 1):>7} {f(mc):>10} {f(mgbs, 1):>11} {r.get('rewritten_diff', float('nan')):>9.2g}")
        for form in ('rewritten', 'onehot'):
            if form + '_err' in r:
                log(f'    {form} error: {r[form + "_err"]}')
    if res.get(256, {}).get('rewritten') and res.get(32000, {}).get('rewritten'):
        log(f"  ratio rewritten V=32000 / V=256: {res[32000]['rewritten'] / res[256]['rewritten']:.2f} (1.0 = independent of V)")
    return res


# ---------------------------------------------------------------- llama
def gen_llama(key):
    args, seq, _ = LLAMA[key]
    d = os.path.join(WORK, 'llama', key)
    os.makedirs(d, exist_ok=True)
    stamp = os.path.join(d, 'stamp')
    if key == 'basedec':
        full = args + ['--form', 'decode', '--past', str(DECODE_PAST), '--batch', '1', '--max-seq', str(DECODE_PAST + 1)]
    else:
        full = args + ['--form', 'static', '--seq', str(seq), '--batch', '1', '--max-seq', str(max(64, seq))]
    want = ' '.join(full)
    model = os.path.join(d, 'model.onnx')
    if not (os.path.exists(model) and os.path.exists(stamp) and open(stamp).read() == want):
        log(f'  generating {key}: make_llama.py {want}')
        run([PY, os.path.join(ROOT, 'models', 'make_llama.py'), *full, '--out', d], timeout=7200)
        open(stamp, 'w').write(want)
    return d, model, seq, int(args[1])


BUSY = os.environ.get('ONNX2C_BENCH_BUSY', '0') == '1'
PIN = os.environ.get('ONNX2C_BENCH_PIN', '1') == '1'


def pin_argv(threads):
    """`taskset -c CPU` for a 1-thread row: onnxruntime and ours on the same
    CPU, the first this process may use (the busy loop takes the last). The
    vCPUs of one VM are not alike: on the Zen 5 VM of 2026-12-05 vCPU 1 ran
    the STREAM triad at 27-29 GB/s against vCPU 0's 37-38, and ResNet-18 at
    21.1 ms against 18.8 (onnxruntime 19.9 against 18.1-18.3), so a row whose
    two sides landed on different vCPUs compared the vCPUs (bench/README)."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else []
    if not PIN or threads != 1 or len(cpus) < 2 or not shutil.which('taskset'):
        return []
    return ['taskset', '-c', str(cpus[0])]


def busy_loop():
    """A shell busy loop pinned to the last CPU (on a 2-core machine: the
    core a second thread would use); the caller kills it."""
    return subprocess.Popen(['taskset', '-c', str((os.cpu_count() or 2) - 1), 'sh', '-c', 'while :; do :; done'])


def time_model(key, label, model, d, extra, files, spec, out_bytes, threads_list, runs, batch, rows, compile_log,
               symbols=None, env=None, warmup=20, ort_extra=None):
    """Compiles `model` once per thread count, runs ours and onnxruntime
    interleaved; appends one row per thread count (without the rates)."""
    made = []
    for t in threads_list:
        # one compile per thread count: --threads N puts a thread pool in the generated code
        od = os.path.join(d, 'gen' if t == 1 else f'gen_t{t}')
        tlabel = label if t == 1 else f'{label} --threads {t}'
        try:
            ct = compile_model(model, od, key, (['--threads', str(t)] if t > 1 else []) + list(extra))
            log(f'  {tlabel}: onnx2c-caten {ct:.2f} s')
            bt, omp = build_harness(od, key)
            log(f'  {tlabel}: cc {bt:.2f} s{" (-pthread)" if omp else ""}')
            share_weights(d, od, key)
            compile_log.append((tlabel, ct, bt, omp))
        except RuntimeError as e:
            log(f'  {tlabel}: FAILED: {e}')
            compile_log.append((tlabel, None, None, str(e)))
            rows.append(dict(model=label, threads=t, error=str(e)))
            continue
        argv = harness_argv(od, key, files, out_bytes, symbols)
        for busy in ([False, True] if BUSY else [False]):
            tb = f'{t}b' if busy else t
            loop = busy_loop() if busy else None
            try:
                it = interleave(model, spec, argv, t, warmup, runs, batch, os.path.join(d, f'dump_t{tb}'), env, ort_extra)
            except RuntimeError as e:
                rows.append(dict(model=label, threads=tb, error=str(e)))
                log(f'  {label} t={tb}: FAILED: {e}')
                continue
            finally:
                if loop:
                    loop.kill()
                    loop.wait()
            row = dict(model=label, key=key, threads=tb, ours_threads=t if (omp or t == 1) else 1, ours_ms=it['ours_ms'],
                       ort_ms=it['ort_ms'], ratio=it['ort_ms'] / it['ours_ms'], maxdiff=it['maxdiff'], error='',
                       argv=argv, **{k: it.get(k) for k in SPLIT_COLS})
            rows.append(row)
            made.append(row)
            log(f"  {label} t={tb}: ours {it['ours_ms']:.3f} ms, ort {it['ort_ms']:.3f} ms, max|diff| {it['maxdiff']:.3g}")
            log('    ' + split_text(it))
    return made


# Per row, from interleave.js: each side's median process CPU time per run
# (every thread) and the medians of each batch's first run and of the others
# (wall): whether a wall-clock median is work, time off the CPU (other
# load), or the cold first run after the pause (bench/README.md).
SPLIT_COLS = ['ours_cpu_ms', 'ort_cpu_ms', 'ours_first_ms', 'ort_first_ms', 'ours_rest_ms', 'ort_rest_ms']


def split_text(it):
    def f(k):
        return 'n/a' if it.get(k) is None else f'{it[k]:.3f}'
    return (f"process CPU ms ours {f('ours_cpu_ms')} ort {f('ort_cpu_ms')}; first run of a batch ours "
            f"{f('ours_first_ms')} ort {f('ort_first_ms')}, the others ours {f('ours_rest_ms')} ort {f('ort_rest_ms')}")


def split_lines(rows):
    def f(v):
        return f'{v:.3f}' if isinstance(v, float) else '-'
    out = [f"{'model':<30} {'thr':>3}  {'ours ms':>8} {'CPU':>8} {'first':>8} / {'others':<8} | {'ort ms':>8} {'CPU':>8} {'first':>8} / others"]
    for r in rows:
        if r.get('error') or r.get('ours_cpu_ms') is None:
            continue
        out.append(f"{r['model']:<30} {str(r['threads']):>3}  {f(r['ours_ms']):>8} {f(r['ours_cpu_ms']):>8} "
                   f"{f(r['ours_first_ms']):>8} / {f(r['ours_rest_ms']):<8} | {f(r['ort_ms']):>8} {f(r['ort_cpu_ms']):>8} "
                   f"{f(r['ort_first_ms']):>8} / {f(r['ort_rest_ms'])}")
    return out


def share_weights(d, od, key):
    """A --threads N compile writes the same .weights as the 1-thread one
    (threads change the C only): checked byte for byte, then one file is
    kept (hard link; the 1.1B model's is 4.4 GB)."""
    one, this = os.path.join(d, 'gen', key + '.weights'), os.path.join(od, key + '.weights')
    if one == this or not os.path.exists(one) or os.path.getsize(one) < (64 << 20):
        return
    if subprocess.run(['cmp', '-s', one, this]).returncode == 0:
        os.remove(this)
        os.link(one, this)


def llama_rates(row, P, tokens, peaks, wbytes=None):
    """GB/s: the weights' bytes (float32 unless `wbytes`) per run."""
    s = row['ours_ms'] * 1e-3
    gflops, gbs = 2 * P * tokens / s / 1e9, (wbytes or 4 * P) / s / 1e9
    row.update(gflops=gflops, pct_fma=100 * gflops / peak_for(peaks, 'fma', row['ours_threads']),
               gbs=gbs, pct_bw=100 * gbs / peak_for(peaks, 'triad', row['ours_threads']), params=P,
               tokens=tokens)


def large_quantized(model, form, qform):
    """LARGE_DIR/<qform>_<form>/model.onnx, made from `model` unless its
    stamp names the same arguments."""
    args = LARGE_FORMS[qform][0]
    out = os.path.join(LARGE_DIR, f'{qform}_{form}')
    path, stamp = os.path.join(out, 'model.onnx'), os.path.join(out, 'stamp')
    want = ' '.join(args)
    if not (os.path.exists(path) and os.path.exists(stamp) and open(stamp).read() == want):
        log(f'  model: make_llama_quant.py {want} --out {os.path.relpath(out, ROOT)}')
        run([PY, os.path.join(ROOT, 'models', 'make_llama_quant.py'), '--in', model, *args, '--out', out], timeout=7200)
        open(stamp, 'w').write(want)
    return path


FORM_ROUNDS = int(os.environ.get('ONNX2C_BENCH_FORM_ROUNDS', '6'))


def forms_in_rotation(rows):
    """Our float32, int8 and int4 builds of one 1.1B row, timed in turn
    (F 8 4 F 8 4 ..., FORM_ROUNDS rounds of 5 runs after one warm-up run
    each, harness alone, wall clock): the issue's "int8 >= 3x, int4 >= 5x
    our fp32 step" compares our own forms, so they are timed in the same
    minutes. In the table's rows each form runs beside onnxruntime's own
    run of that form, and those differ: onnxruntime's int8 step at
    accuracy level 0 (dequantizing every weight each call) takes seconds,
    and our int8 runs after it were ~30 % slower than alone (2026-12-05,
    Zen 5: the others 42.3 ms in the row, 32-37 alone). Returns lines for
    the log and bench/README."""
    groups = {}
    for r in rows:
        key = r.get('key')
        if key in LARGE and not r.get('error') and not str(r['threads']).endswith('b'):
            groups.setdefault((LARGE[key][0], r['threads']), {})[LARGE[key][6]] = r
    out = []
    for (form, t), by in sorted(groups.items(), key=lambda g: (g[0][0], str(g[0][1]))):
        if '' not in by or len(by) < 2:
            continue
        order = [''] + [q for q in LARGE_FORMS if q and q in by]
        times = {q: [] for q in order}
        for _ in range(FORM_ROUNDS):
            for q in order:
                try:
                    _, o = run(pin_argv(t) + by[q]['argv'] + ['--warmup', '1', '--runs', '5'], timeout=3600)
                except RuntimeError as e:
                    log(f'  {form} t={t} in rotation: FAILED: {e}')
                    return out
                times[q].append(parse_kv(o)['ours_median_ms'])
        med = {q: float(np.median(v)) for q, v in times.items()}
        ratios = {q: [f / x for f, x in zip(times[''], times[q])] for q in order[1:]}
        line = (f'- {by[""]["model"]}, {t} thread(s), {FORM_ROUNDS} rounds: ours fp32 {med[""]:.1f} ms (rounds '
                f'{min(times[""]):.1f}-{max(times[""]):.1f})')
        for q in order[1:]:
            rq = ratios[q]
            line += (f'; {q} {med[q]:.1f} ms ({min(times[q]):.1f}-{max(times[q]):.1f}), fp32/{q} per round: median '
                     f'{float(np.median(rq)):.2f}x, {min(rq):.2f}-{max(rq):.2f}x')
        log(line)
        out.append(line)
    return out


def bench_large(keys, threads_list, rows, peaks, compile_log):
    """The 1.1B rows: the model is made once (make_llama_large.py keeps a
    folder whose stamp matches); ours runs the symbolic build (dimensions at
    run time, harness --dims) as onnxruntime runs the symbolic model."""
    try:
        log(f'  model: make_llama_large.py --out {os.path.relpath(LARGE_DIR, ROOT)}')
        run([PY, os.path.join(ROOT, 'models', 'make_llama_large.py'), '--out', LARGE_DIR], timeout=7200)
    except RuntimeError as e:
        for key in keys:
            rows.append(dict(model=LARGE[key][2], threads='-', error='generator: ' + str(e)))
        return
    for key in keys:
        form, symbols, label, warm, runs, batch, qform = LARGE[key]
        d = os.path.join(WORK, 'llama', key)
        os.makedirs(d, exist_ok=True)
        model = os.path.join(LARGE_DIR, form + '.onnx')
        if qform:
            try:
                model = large_quantized(model, form, qform)
            except RuntimeError as e:
                rows.append(dict(model=label, threads='-', error='make_llama_quant.py: ' + str(e)))
                continue
        m, ins, outs = model_io(model, symbols)
        P, W = matmul_params(m), weight_bytes(m)
        tokens = int(np.prod(ins[0][2]))
        out_bytes = [int(np.prod(o[2])) * np.dtype(DTYPE[o[1]][1]).itemsize for o in outs]
        files, spec = write_inputs(ins, d, 32000, DECODE_PAST)
        for row in time_model(key, label, model, d, [], files, spec, out_bytes, threads_list, runs, batch, rows,
                              compile_log, symbols, warmup=warm, ort_extra=ORT_QUANT if qform else None):
            llama_rates(row, P, tokens, peaks, W)


def bench_llama(keys, threads_list, rows, peaks, compile_log):
    for key in keys:
        label = LLAMA[key][2]
        decode = key == 'basedec'
        symbols = {'past': DECODE_PAST, 'past_plus_1': DECODE_PAST + 1} if decode else {}
        try:
            d, model, seq, vocab = gen_llama(key)
            m, ins, outs = model_io(model, symbols)
            P = matmul_params(m)
            tokens = int(np.prod(ins[0][2]))
            out_bytes = [int(np.prod(o[2])) * np.dtype(DTYPE[o[1]][1]).itemsize for o in outs]
            files, spec = write_inputs(ins, d, vocab, DECODE_PAST)
        except Exception as e:  # generator failure
            rows.append(dict(model=label, threads='-', error='generator: ' + str(e)))
            continue
        # fewer runs for the slow models, still >= 20 timed + >= 20 warm-up per side
        runs, batch = (50, 10) if P < 5e6 else (20, 5)
        # the decode row runs our symbolic build (past given at run time), as
        # onnxruntime runs the symbolic model
        for row in time_model(key, label, model, d, [], files, spec, out_bytes, threads_list, runs, batch, rows,
                              compile_log, symbols):
            llama_rates(row, P, tokens, peaks)


# ---------------------------------------------------------------- cnn
def bench_cnn(keys, threads_list, rows, peaks, compile_log):
    """GFLOP/s = 2 x the multiply-adds of the Conv and Gemm/MatMul nodes
    (make_cnn.py's info.json) / time; pooling and element-wise ops are not
    counted."""
    for key in keys:
        args, label = CNN[key]
        d = os.path.join(WORK, 'cnn', key)
        try:
            os.makedirs(d, exist_ok=True)
            model, stamp = os.path.join(d, 'model.onnx'), os.path.join(d, 'stamp')
            want = ' '.join(args)
            if not (os.path.exists(model) and os.path.exists(stamp) and open(stamp).read() == want):
                log(f'  generating {key}: make_cnn.py {want}')
                run([PY, os.path.join(ROOT, 'models', 'make_cnn.py'), *args, '--out', d], timeout=1800)
                open(stamp, 'w').write(want)
            macs = json.load(open(os.path.join(d, 'info.json')))['macs']
            m, ins, outs = model_io(model)
            out_bytes = [int(np.prod(o[2])) * np.dtype(DTYPE[o[1]][1]).itemsize for o in outs]
            files, spec = write_inputs(ins, d, 1)
        except Exception as e:  # generator failure
            rows.append(dict(model=label, threads='-', error='generator: ' + str(e)))
            continue
        for row in time_model(key, label, model, d, [], files, spec, out_bytes, threads_list, 20, 5, rows,
                              compile_log):
            gflops = 2 * macs / (row['ours_ms'] * 1e-3) / 1e9
            row.update(gflops=gflops, pct_fma=100 * gflops / peak_for(peaks, 'fma', row['ours_threads']))


# ---------------------------------------------------------------- output
COLS = ['model', 'threads', 'ours_threads', 'ours_ms', 'ort_ms', 'ratio', 'ort_floor_ms', 'ratio_net', 'gflops', 'pct_fma', 'gbs', 'pct_bw', 'maxdiff', 'check', 'error'] + SPLIT_COLS
# outputs agree with onnxruntime's when every |ours - ort| <= CHECK_ATOL (the
# whole-model tolerance of the tests)
CHECK_ATOL = 1e-4


def check_of(row):
    return 'ok' if row.get('maxdiff') is not None and row['maxdiff'] <= CHECK_ATOL else 'MISMATCH'


def fmt(v, p):
    return f'{v:.{p}f}' if isinstance(v, (float, int)) and not isinstance(v, bool) else ('' if v is None else str(v))


def table_lines(rows, isa=''):
    """%FMA is against the FMA peak of `isa` (avx2, avx512)."""
    hdr = f"{'model':<30} {'thr':>3} {'ours ms':>9} {'ort ms':>9} {'ort/ours':>8} {'-floor':>7} {'GFLOP/s':>8} {'%FMA ' + isa:>11} {'GB/s':>7} {'%BW':>6} {'max|diff|':>9} {'check':>8}"
    out = [hdr, '-' * len(hdr)]
    for r in rows:
        thr = str(r.get('threads', ''))
        if r.get('ours_threads') not in (None, '', r.get('threads'), int(thr[:-1]) if thr.endswith('b') and thr[:-1].isdigit() else None):
            thr += '*'
        if r.get('error'):
            out.append(f"{r['model']:<30} {thr:>3} ERROR: {r['error']}")
            continue
        out.append(f"{r['model']:<30} {thr:>3} {fmt(r['ours_ms'], 3):>9} {fmt(r['ort_ms'], 3):>9} {fmt(r['ratio'], 2):>8} "
                   f"{fmt(r.get('ratio_net'), 2):>7} "
                   f"{fmt(r['gflops'], 1):>8} {fmt(r['pct_fma'], 1):>11} {fmt(r.get('gbs'), 1):>7} {fmt(r.get('pct_bw'), 1):>6} {r['maxdiff']:>9.2g} {check_of(r):>8}")
    return out


def write_csv(rows, path):
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=COLS, extrasaction='ignore')
        w.writeheader()
        for r in rows:
            r = dict(r, check='' if r.get('error') else check_of(r))
            w.writerow({c: (f'{r[c]:.6g}' if isinstance(r.get(c), float) else r.get(c, '')) for c in COLS})


def draw_png(rows, path):
    ok = [r for r in rows if not r.get('error')]
    if not ok:
        return 'no rows'
    labels = [f"{r['model']}\nt={r['threads']}" for r in ok]
    ours = [r['ours_ms'] for r in ok]
    ort = [r['ort_ms'] for r in ok]
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        return draw_png_fallback(ours, ort, path)
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(ok)), 4.5))
    x = np.arange(len(ok))
    ax.bar(x - 0.2, ours, 0.4, label='onnx2c-caten', color='#1f77b4')
    ax.bar(x + 0.2, ort, 0.4, label='onnxruntime-node', color='#ff7f0e')
    ax.set_yscale('log')
    ax.set_ylabel('median latency, ms (log)')
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=7, rotation=20, ha='right')
    for i, r in enumerate(ok):
        ax.annotate(f"{r['ratio']:.2f}x", (i, max(ours[i], ort[i])), ha='center', va='bottom', fontsize=7)
    ax.set_title('onnx2c-caten vs onnxruntime (label: ort/ours, >1 = we are faster)', fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return 'matplotlib'


def draw_png_fallback(ours, ort, path):
    """Minimal PNG bar chart (log scale, no text) with zlib when matplotlib is missing."""
    import struct
    import zlib
    W, H = 60 * len(ours) + 20, 300
    img = [[(255, 255, 255)] * W for _ in range(H)]
    vals = ours + ort
    lo, hi = np.log10(min(vals)) - 0.3, np.log10(max(vals)) + 0.1
    for i, (a, b) in enumerate(zip(ours, ort)):
        for j, (v, col) in enumerate(((a, (31, 119, 180)), (b, (255, 127, 14)))):
            h = int((np.log10(v) - lo) / (hi - lo) * (H - 20))
            x0 = 20 + 60 * i + 22 * j
            for y in range(H - h, H):
                for x in range(x0, x0 + 20):
                    img[y][x] = col
    raw = b''.join(b'\x00' + bytes(c for px in row for c in px) for row in img)
    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', W, H, 8, 2, 0, 0, 0)) + \
        chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b'')
    open(path, 'wb').write(png)
    return 'fallback'


def machine_desc():
    cpu = 'unknown CPU'
    try:
        for line in open('/proc/cpuinfo'):
            if line.startswith('model name'):
                cpu = line.split(':', 1)[1].strip()
                break
    except OSError:
        pass
    cc = subprocess.run([CC, '--version'], capture_output=True, text=True).stdout.splitlines()[0]
    return f'{cpu}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}, {cc}, node {subprocess.run([NODE, "--version"], capture_output=True, text=True).stdout.strip()}, load avg at start {os.getloadavg()[0]:.2f}'


def update_readme(text, block='results'):
    p = os.path.join(BENCH, 'README.md')
    if not os.path.exists(p):
        return
    s = open(p).read()
    a, b = f'<!-- {block}:begin -->', f'<!-- {block}:end -->'
    if a in s and b in s:
        s = s[:s.index(a) + len(a)] + '\n' + text + '\n' + s[s.index(b):]
        open(p, 'w').write(s)


def main():
    sel = os.environ.get('ONNX2C_BENCH_MODELS', '')
    if os.environ.get('BENCH', '') == 'quick':
        sel = sel or 'tiny,small'
    if os.environ.get('BENCH', '') == 'large':
        sel = sel or 'large'
    sel = sel or 'all'
    keys = []
    for k in [x.strip() for x in sel.split(',') if x.strip()]:
        if k == 'all':
            keys += LLAMA_ORDER + CNN_ORDER
        elif k == 'base':
            keys += ['base128', 'base1', 'basedec']
        elif k == 'cnn':
            keys += CNN_ORDER
        elif k == 'large':
            keys += LARGE_ORDER
        elif k in LLAMA or k in CNN or k in LARGE:
            keys.append(k)
        elif k in ('none', 'embedding'):
            pass
        else:
            sys.exit(f'bench: unknown model {k!r} in ONNX2C_BENCH_MODELS (tiny,small,base128,base1,basedec,base,'
                     f'{",".join(CNN_ORDER)},cnn,{",".join(LARGE_ORDER)},large,all,none)')
    keys = [k for i, k in enumerate(keys) if k not in keys[:i]]
    threads_list = [int(t) for t in os.environ.get('ONNX2C_BENCH_THREADS', '1,2').split(',')]
    host = platform.machine()
    if (TARGET == 'aarch64') != (host in ('aarch64', 'arm64')) and TARGET not in ('native', 'generic'):
        sys.exit(f'bench: TARGET={TARGET} does not run on this {host} machine (the rows run the code they time)')
    if not os.access(ONNX2C, os.X_OK):
        sys.exit(f'bench: compiler not found: {ONNX2C} (run make all, or set ONNX2C)')
    os.makedirs(WORK, exist_ok=True)
    started = datetime.datetime.now().strftime('%Y-%m-%d %H:%M')
    desc = machine_desc()
    log(f'== onnx2c-caten bench, {started}\n   {desc}\n   compiler {ONNX2C} --target {TARGET}; models: {",".join(keys) or "none"}; threads {threads_list}')

    log('\n== machine peaks')
    peaks = machine_peaks(os.environ.get('ONNX2C_BENCH_MACHINE', '1') == '0')
    for t in sorted(int(k) for k in peaks['fma']):
        log(f'  {t} thread(s): FMA fp32 peak ({peaks.get("isa", "?")}) {peak_for(peaks, "fma", t):.1f} GFLOP/s, STREAM triad {peak_for(peaks, "triad", t):.1f} GB/s')

    log('\n== onnxruntime per-call floor')
    try:
        floor = ort_floor(threads_list)
    except RuntimeError as e:
        sys.exit(f'bench: the floor measurement failed: {e}')
    rows, compile_log = [], []
    emb = {}
    if os.environ.get('ONNX2C_BENCH_EMBED', '1') != '0':
        log('\n== embedding')
        emb = bench_embedding(rows, peaks, compile_log)
    if any(k in LLAMA for k in keys):
        log('\n== llama')
        bench_llama([k for k in keys if k in LLAMA], threads_list, rows, peaks, compile_log)
    form_lines = []
    if any(k in LARGE for k in keys):
        log('\n== llama 1.1B')
        bench_large([k for k in keys if k in LARGE], threads_list, rows, peaks, compile_log)
        log('\n== llama 1.1B: our forms in rotation (the quantized steps against our fp32 step)')
        form_lines = forms_in_rotation(rows)
    if any(k in CNN for k in keys):
        log('\n== cnn')
        bench_cnn([k for k in keys if k in CNN], threads_list, rows, peaks, compile_log)

    add_floor(rows, floor)
    lines = table_lines(rows, peaks.get('isa', ''))
    log('\n== results (medians; ort/ours > 1 means onnx2c-caten is faster)')
    for l in lines:
        log(l)
    log('  * = generated code has no threaded kernel, so ours ran on 1 thread in that row; b = the other core busy')
    log('  -floor = (ort ms - onnxruntime\'s per-call floor) / ours ms; floor: ' +
        ', '.join(f"{t} thr {f['ort_ms']:.4f} ms" for t, f in sorted(floor.items())))
    log(f'\n== compile times (onnx2c-caten --target {TARGET} / cc with the flags the generated .c names)')
    clines = []
    for name, ct, bt, omp in compile_log:
        if ct is None:
            clines.append(f'  {name:<32} FAILED: {omp}')
        else:
            clines.append(f'  {name:<32} onnx2c-caten {ct:7.2f} s   cc {bt:7.2f} s{"  (-pthread)" if omp else ""}')
    for l in clines:
        log(l)
    # a run of the 1.1B rows alone keeps its own results (the full table stays)
    stem = 'results_large' if keys and all(k in LARGE for k in keys) else 'results'
    write_csv(rows, os.path.join(BENCH, stem + '.csv'))
    how = draw_png(rows, os.path.join(BENCH, stem + '.png'))
    log(f'\nwrote bench/{stem}.csv, bench/{stem}.png ({how})')

    peak_lines = [f'- {t} thread(s): FMA fp32 peak ({peaks.get("isa", "?")}) {peak_for(peaks, "fma", t):.1f} GFLOP/s, STREAM triad {peak_for(peaks, "triad", t):.1f} GB/s'
                  for t in sorted(int(k) for k in peaks['fma'])]
    emb_lines = []
    for V, r in emb.items():
        rw, oh = r.get('rewritten'), r.get('onehot')
        emb_lines.append(f'- V={V}: rewritten {rw:.4f} ms, one-hot {oh:.2f} ms' if rw and oh else
                         f'- V={V}: rewritten {rw}, one-hot {oh}, errors: {r.get("rewritten_err", "")} {r.get("onehot_err", "")}')
        if rw and r.get('memcpy_ms'):
            emb_lines[-1] += f', {2 * 512 * 768 * 4 / (rw * 1e-3) / 1e9:.1f} GB/s vs memcpy {2 * 512 * 768 * 4 / (r["memcpy_ms"] * 1e-3) / 1e9:.1f} GB/s'
    if emb.get(256, {}).get('rewritten') and emb.get(32000, {}).get('rewritten'):
        emb_lines.append(f"- rewritten V=32000 / V=256 time ratio: {emb[32000]['rewritten'] / emb[256]['rewritten']:.2f}")
    floor_lines = [f"- {t} thread(s): onnxruntime {f['ort_ms']:.4f} ms per call (ours {f['ours_ms']:.5f} ms)"
                   for t, f in sorted(floor.items())]
    pin = pin_argv(1)
    pin_line = (f'1-thread rows: both sides on CPU {pin[-1]} (taskset; `ONNX2C_BENCH_PIN=0` lets them run anywhere)'
                if pin else '1-thread rows: not pinned')
    text = '\n'.join([f'Last run: {started} — `ONNX2C_BENCH_MODELS={",".join(keys)} TARGET={TARGET}`', '', f'Machine: {desc}', '',
                      pin_line, '',
                      *peak_lines, '', 'onnxruntime per-call floor (1-element Identity):', '', *floor_lines, '',
                      'Embedding (1 thread):', '', *emb_lines, '',
                      '```', *lines, '```', '',
                      'Wall against CPU (medians per run, ms: wall; process CPU, every thread; wall of each '
                      "batch's first run after the pause / of the others), ours | onnxruntime:", '',
                      '```', *split_lines(rows), '```', '',
                      *(['Our forms in rotation (fp32, int8, int4 steps of ours timed in turn, harness alone, '
                         'wall-clock medians of 5 runs a round; the quantized steps against our fp32 step):', '',
                         *form_lines, ''] if form_lines else []),
                      'Compile times:', '', '```', *clines, '```'])
    update_readme(text, 'large' if stem == 'results_large' else 'results')
    bad = [r['model'] for r in rows if r.get('error') or check_of(r) != 'ok']
    # the embedding outputs against numpy W[ids], both forms
    for V, r in emb.items():
        for form in ('rewritten', 'onehot'):
            if form + '_err' in r or not r.get(form + '_diff', float('inf')) <= CHECK_ATOL:
                bad.append(f'embedding V={V} {form} vs numpy')
    if bad:
        log(f'\nbench: rows failed or disagree with onnxruntime (max|diff| > {CHECK_ATOL:g}): {", ".join(bad)}')
        sys.exit(1)


if __name__ == '__main__':
    main()
