#!/usr/bin/python3
"""--report on models whose cost is known by hand: Y = relu(A @ B) with A
[M,K] an input and B [K,N] a weight, and C = A @ X with both inputs. FLOPs:
exactly 2*M*N*K for a matmul, plus M*N for the relu; bytes read and written
(with --no-tile, where B is read as stored): each buffer once.
usage: test_report.py ONNX2C TMPDIR"""
import json, subprocess, sys
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

exe, tmp = sys.argv[1], sys.argv[2]
M, K, N = 5, 7, 11
fails = []


def check(what, got, want):
    if got != want:
        fails.append(f'{what}: got {got}, want {want}')


def report(model, *opts):
    path = f'{tmp}/m.onnx'
    onnx.save(model, path)
    subprocess.run([exe, path, '-o', tmp, '--report', f'{tmp}/r.json', *opts], check=True, stdout=subprocess.DEVNULL)
    return json.load(open(f'{tmp}/r.json'))


B = numpy_helper.from_array(np.ones((K, N), np.float32), 'B')
relu = helper.make_model(helper.make_graph(
    [helper.make_node('MatMul', ['A', 'B'], ['H'], name='mm'), helper.make_node('Relu', ['H'], ['Y'], name='act')],
    'g', [helper.make_tensor_value_info('A', TensorProto.FLOAT, [M, K])],
    [helper.make_tensor_value_info('Y', TensorProto.FLOAT, [M, N])], [B]), opset_imports=[helper.make_opsetid('', 13)])
for opts in ([], ['--no-tile']):
    r = report(relu, *opts)
    check(f'{opts} kernels', len(r['kernels']), 1)
    k = r['kernels'][0]
    check(f'{opts} flops', k['flops'], 2 * M * N * K + M * N)
    check(f'{opts} total flops', r['total']['flops'], 2 * M * N * K + M * N)
    check(f'{opts} written', k['bytes_written'], M * N * 4)
    check(f'{opts} nodes', sorted(n.split("'")[1] for n in k['onnx_nodes']), ['act', 'mm'])
    if opts:
        check('read', k['bytes_read'], (M * K + K * N) * 4)
    check('weight bytes', r['total']['weight_bytes'] >= K * N * 4, True)

both = helper.make_model(helper.make_graph(
    [helper.make_node('MatMul', ['A', 'X'], ['C'], name='mm')], 'g',
    [helper.make_tensor_value_info('A', TensorProto.FLOAT, [M, K]),
     helper.make_tensor_value_info('X', TensorProto.FLOAT, [K, N])],
    [helper.make_tensor_value_info('C', TensorProto.FLOAT, [M, N])]), opset_imports=[helper.make_opsetid('', 13)])
r = report(both)
k = r['kernels'][0]
check('matmul flops', k['flops'], 2 * M * N * K)
check('matmul read', k['bytes_read'], (M * K + K * N) * 4)
check('matmul written', k['bytes_written'], M * N * 4)
check('loop nest', 'for' in k['loop_nest'], True)
print('\n'.join(fails) if fails else f'report: 2*M*N*K = {2 * M * N * K} FLOPs and bytes as computed by hand')
sys.exit(1 if fails else 0)
