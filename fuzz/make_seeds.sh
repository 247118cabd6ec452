#!/bin/sh
# Seeds for fuzz_compile: the ONNX node-test models and those of the
# package's pytorch-converted, pytorch-operator and simple suites (opset 6
# exports among them: the legacy attribute forms), up to 1 MiB each, the
# hostile-input models (deep nesting, huge attributes, overflowing sizes;
# tests/hostile/gen_hostile.py), models with large attributes, and models
# with symbolic dimensions (the node tests tests/symbolic makes symbolic,
# models/misc/symbolic_*.onnx), made once per seed version (the marker file).
out=$1
node=${NODE_DIR:-/usr/share/libonnx-testdata/data/node}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$out/.seeds-v4" ] && exit 0
data=$(dirname "$node")
for m in "$node"/*/model.onnx "$data"/pytorch-converted/*/model.onnx "$data"/pytorch-operator/*/model.onnx \
         "$data"/simple/*/model.onnx; do
  [ -f "$m" ] && [ "$(stat -c %s "$m")" -le 1048576 ] || continue
  suite=$(basename "$(dirname "$(dirname "$m")")")
  cp "$m" "$out/${suite}_$(basename "$(dirname "$m")").onnx"
done
tmp=$(mktemp -d)
/usr/bin/python3 "$here/../tests/hostile/gen_hostile.py" "$tmp" >/dev/null &&
  find "$tmp" -name '*.onnx' -size -1025k | while read -r m; do
    cp "$m" "$out/hostile_$(echo "${m#$tmp/}" | tr / _)"
  done
/usr/bin/python3 - "$out" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, helper as h
out = sys.argv[1]
F = TensorProto.FLOAT
def save(name, nodes, x=(1, 1, 8, 8)):
    g = h.make_graph(nodes, "seed", [h.make_tensor_value_info("x", F, list(x))], [h.make_tensor_value_info("y", F, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    open("%s/%s" % (out, name), "wb").write(m.SerializeToString())
# large attributes: 100000 ints / floats, a long string, a large tensor
save("large_ints.onnx", [h.make_node("Constant", [], ["c"], value_ints=list(range(100000))),
                         h.make_node("Add", ["x", "x"], ["y"])])
save("large_floats.onnx", [h.make_node("Constant", [], ["y"], value_floats=[0.5] * 100000)])
save("large_string.onnx", [h.make_node("Relu", ["x"], ["y"], name="n" * 300000)])
save("large_tensor.onnx", [h.make_node("Constant", [], ["w"], value=h.make_tensor("w", F, [64, 1, 8, 8],
                                                                                    np.ones(4096, np.float32))),
                           h.make_node("Conv", ["x", "w"], ["y"], pads=[3, 3, 4, 4])])
save("pool_kernel.onnx", [h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[8, 8], strides=[1, 1])])
PY
/usr/bin/python3 "$here/../tests/symbolic/symbolize.py" "$node" "$here/../tests/symbolic/cases.txt" "$tmp/sym" &&
  for d in "$tmp"/sym/*/; do cp "$d/model.onnx" "$out/symbolic_$(basename "$d").onnx"; done
cp "$here"/../models/misc/symbolic_*.onnx "$out"/
rm -rf "$tmp"
touch "$out/.seeds-v4"
