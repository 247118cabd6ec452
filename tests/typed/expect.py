#!/usr/bin/python3
"""What the typed header of MODEL must say, read with the onnx library (not
the compiler): writes OUTDIR/expect.h for tests/typed/host.c. Symbols take
the values NAME=N given; --refuse NAME=N... is a point the model refuses;
--data DIR also writes DIR's input_0.pb / output_0.pb as raw in0.bin, out0.bin.
usage: expect.py MODEL OUTDIR [NAME=N...] [--refuse NAME=N...] [--data DIR]"""
import sys
import onnx
from onnx import numpy_helper

model, outdir = sys.argv[1], sys.argv[2]
vals, refuse, data, target = {}, {}, None, None
it = iter(sys.argv[3:])
for a in it:
    if a == '--refuse':
        target = refuse
    elif a == '--data':
        data = next(it)
    else:
        k, v = a.split('=')
        (target if target is not None else vals)[k] = int(v)

g = onnx.load(model).graph
inits = {t.name for t in g.initializer}
ins = [v for v in g.input if v.name not in inits]
outs = list(g.output)
syms = []
for v in ins:
    for d in v.type.tensor_type.shape.dim:
        if d.HasField('dim_param') and d.dim_param not in syms:
            syms.append(d.dim_param)
SIZES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8}
CTYPES = {1: 'float', 2: 'uint8_t', 3: 'int8_t', 4: 'uint16_t', 5: 'int16_t', 6: 'int32_t',
          7: 'int64_t', 9: 'uint8_t', 11: 'double', 12: 'uint32_t', 13: 'uint64_t'}


def shape(v, at):
    # an output's dim_param that is no input's (past_plus_1) is given too
    return [d.dim_value if d.HasField('dim_value') else at[d.dim_param] for d in v.type.tensor_type.shape.dim]


def arr(xs):
    return '{' + ', '.join(str(x) for x in xs) + (', ' if xs else '') + '0}'


L = ['#include <stdint.h>', f'#define EXP_NUM_IN {len(ins)}', f'#define EXP_NUM_OUT {len(outs)}',
     f'#define EXP_NUM_DIMS {len(syms)}', f'#define EXP_REFUSE {1 if refuse else 0}',
     f'#define EXP_DATA {1 if data else 0}',
     'static const char *const exp_dim_names[] = {' + ''.join(f'"{s}", ' for s in syms) + '0};',
     f'static const int64_t exp_dims[] = {arr([vals[s] for s in syms])};',
     f'static const int64_t exp_refuse[] = {arr([refuse.get(s, 1) for s in syms])};']
for tag, vs in (('in', ins), ('out', outs)):
    L.append(f'static const char *const exp_{tag}_names[] = {{' + ''.join(f'"{v.name}", ' for v in vs) + '0};')
    L.append(f'static const int exp_{tag}_dtype[] = {arr([v.type.tensor_type.elem_type for v in vs])};')
    L.append(f'static const int exp_{tag}_size[] = {arr([SIZES[v.type.tensor_type.elem_type] for v in vs])};')
    L.append(f'static const int exp_{tag}_rank[] = {arr([len(shape(v, vals)) for v in vs])};')
    L.append(f'static const int64_t exp_{tag}_shape[][13] = {{' + ', '.join(arr(shape(v, vals)) for v in vs) + '};')
axis = [[syms.index(d.dim_param) if d.HasField('dim_param') else -1 for d in v.type.tensor_type.shape.dim]
        for v in ins]
L.append('static const int exp_in_axis_dim[][13] = {' + ', '.join(arr(a) for a in axis) + '};')
if data:
    for tag, v, f in (('in', ins[0], 'input_0'), ('out', outs[0], 'output_0')):
        t = onnx.load_tensor(f'{data}/{f}.pb')
        numpy_helper.to_array(t).tofile(f'{outdir}/{tag}0.bin')
        L.append(f'typedef {CTYPES[v.type.tensor_type.elem_type]} exp_{tag}0_t' +
                 ''.join(f'[{d}]' for d in shape(v, vals)) + ';')
open(f'{outdir}/expect.h', 'w').write('\n'.join(L) + '\n')
