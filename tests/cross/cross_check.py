#!/usr/bin/python3
"""cross_check.py - the generated C of one model, built for another ISA and
run under user-mode emulation, against the same model built for this host.

  cross_check.py ONNX2C HARNESS_C WORKDIR MODEL (DATA_DIR | random)
                 --target T --cc CROSS_CC --qemu QEMU [--atol X]

Compiles MODEL twice: for the host (--target native, cc) and for T (CROSS_CC
-static), links each with bench/common/harness.c, runs both on the same
inputs (DATA_DIR/input_K.pb, or seeded random ones) and fails unless every
output agrees within atol + atol*|host| (default 1e-5). Prints one line per
output. Needs /usr/bin/python3 with numpy and onnx.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

FLAGS = ['-O2', '-fno-math-errno', '-fopenmp-simd', '-DONNX2C_OMP_SIMD', '-Wall', '-Wextra', '-Werror']


def sh(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f'cross_check: {" ".join(cmd)} failed ({r.returncode}): {(r.stderr or r.stdout).strip()[:2000]}')
    return r.stdout


def graph_io(path):
    m = onnx.load(path, load_external_data=False)
    init = {i.name for i in m.graph.initializer}
    ins = [v for v in m.graph.input if v.name not in init]
    outs = list(m.graph.output)
    return ins, outs


def np_dtype(elem):
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem]  # the onnx of Debian 12


def inputs(a, ins, work):
    """Raw input files (graph order)."""
    files = []
    rng = np.random.default_rng(1)
    for k, v in enumerate(ins):
        if a.data != 'random':
            t = onnx.TensorProto()
            t.ParseFromString(open(os.path.join(a.data, f'input_{k}.pb'), 'rb').read())
            x = numpy_helper.to_array(t)
        else:
            dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
            dt = np_dtype(v.type.tensor_type.elem_type)
            x = (rng.uniform(-1, 1, dims) if np.issubdtype(dt, np.floating) else rng.integers(0, 4, dims)).astype(dt)
        f = os.path.join(work, f'in_{k}.bin')
        np.ascontiguousarray(x).tofile(f)
        files.append((f, x.dtype))
    return files


def build_and_run(a, tag, target, cc, extra_ld, runner, files, out_bytes):
    d = os.path.join(a.work, tag)
    sh([a.onnx2c, a.model, '-o', d, '--name', 'm', '--target', target])
    exe = os.path.join(d, 'harness')
    sh([cc, *FLAGS, '-DBENCH_NAME=m', '-DBENCH_HDR="m.h"', '-I', d, a.harness, os.path.join(d, 'm.c'),
        *extra_ld, '-lm', '-o', exe])
    argv = [*runner, exe, os.path.join(d, 'm.weights')]
    for f, _ in files:
        argv += ['--in', f]
    for b in out_bytes:
        argv += ['--out-bytes', str(b)]
    sh(argv + ['--warmup', '0', '--runs', '1', '--dump', d])
    return d


def main():
    p = argparse.ArgumentParser()
    for n in ('onnx2c', 'harness', 'work', 'model', 'data'):
        p.add_argument(n)
    p.add_argument('--target', required=True)
    p.add_argument('--cc', required=True)
    p.add_argument('--qemu', required=True)
    p.add_argument('--atol', type=float, default=1e-5)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    ins, outs = graph_io(a.model)
    files = inputs(a, ins, a.work)
    odt = [np_dtype(o.type.tensor_type.elem_type) for o in outs]
    oshape = [[d.dim_value for d in o.type.tensor_type.shape.dim] for o in outs]
    out_bytes = [int(np.prod(s)) * np.dtype(t).itemsize for s, t in zip(oshape, odt)]
    host = build_and_run(a, 'host', 'native', 'cc', [], [], files, out_bytes)
    cross = build_and_run(a, a.target, a.target, a.cc, ['-static'], [a.qemu], files, out_bytes)
    ok = True
    for k, o in enumerate(outs):
        h = np.fromfile(os.path.join(host, f'out_{k}.bin'), dtype=odt[k])
        c = np.fromfile(os.path.join(cross, f'out_{k}.bin'), dtype=odt[k])
        if h.size != c.size or not h.size:
            print(f'output {k} {o.name!r}: sizes {h.size} (host) and {c.size} ({a.target}) FAIL')
            ok = False
            continue
        diff = np.abs(h.astype(np.float64) - c.astype(np.float64))
        bad = int(np.sum(~(diff <= a.atol + a.atol * np.abs(h.astype(np.float64)))))
        print(f'output {k} {o.name!r} {h.size} values: max |host - {a.target}| {diff.max():.3g}, '
              f'{bad} beyond {a.atol:g}: {"PASS" if not bad else "FAIL"}')
        ok &= not bad
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
