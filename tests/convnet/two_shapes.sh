#!/bin/sh
# One compile, one shared object, several input shapes: makes a seeded
# random input x[N,3,H,W] per HxW (N = 1) or NxHxW into WORK/test_data_set_K (onnxruntime's
# outputs beside it, runtime/ort/ort_run.js), then `onnx2c-caten run MODEL
# --data-set ...` runs them all from one build. Data sets this large are
# made here rather than committed.
# usage: two_shapes.sh ONNX2C_EXE MODEL WORK [N]xHxW... [RUN OPTIONS]
exe=$1 model=$2 work=$3
shift 3
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work" && mkdir -p "$work" || exit 1
k=0
while [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; do
  hw=$1
  shift
  d=$work/test_data_set_$k
  mkdir -p "$d"
  /usr/bin/python3 -c "
import sys, numpy as np
from onnx import numpy_helper
n, h, w = ([1] + [int(v) for v in sys.argv[2].split('x')])[-3:]
x = np.random.default_rng(h * 10007 + w + (n - 1) * 65537).standard_normal((n, 3, h, w)).astype(np.float32)
open(sys.argv[1], 'wb').write(numpy_helper.from_array(x, 'x').SerializeToString())
" "$d/input_0.pb" "$hw" || exit 1
  node "$src/runtime/ort/ort_run.js" "$model" "$d" "$d/input_0.pb" >/dev/null || exit 1
  k=$((k + 1))
done
set -- run "$model" "$@"
j=0
while [ $j -lt $k ]; do set -- "$@" --data-set "$work/test_data_set_$j"; j=$((j + 1)); done
echo "onnx2c-caten $*"
exec "$exe" "$@"
