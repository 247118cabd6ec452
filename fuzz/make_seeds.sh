#!/bin/sh
# Seeds for fuzz_compile: the ONNX node-test models (small ones), copied once.
out=$1
node=${NODE_DIR:-/usr/share/libonnx-testdata/data/node}
[ -n "$(ls "$out" 2>/dev/null)" ] && exit 0
for m in "$node"/*/model.onnx; do
  [ "$(stat -c %s "$m")" -le 65536 ] || continue
  cp "$m" "$out/$(basename "$(dirname "$m")").onnx"
done
