#!/usr/bin/env bash
# make demo: compile a shipped model to C, show what came out, and check it
# against onnxruntime.
set -euo pipefail
exe=${1:?usage: demo.sh ONNX2C MODEL [PROMPT.pb]}
model=${2:?usage: demo.sh ONNX2C MODEL [PROMPT.pb]}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "== onnx2c-caten $model -o $out"
"$exe" -v "$model" -o "$out"
echo
echo "== $out/model.h (entry point)"
awk '/^(#define|enum| \*)/ {print; next} /^(int|size_t) / {decl = 1} decl {print} /;$/ {decl = 0}' "$out/model.h"
echo
echo "== $out/model.c: its first two kernels (the token ids wrapped for negative"
echo "   values; the embedding as a bounds-checked indexed read, fused with the"
echo "   first RMSNorm's sum of squares)"
head -1 "$out/model.c"
awk '/^\/\* kernel 0/,/^}/' "$out/model.c"
awk '/^\/\* kernel 1:/,/^}/' "$out/model.c"
echo
echo "== builds alone with -std=c11 -Wall -Wextra -Werror"
cc -std=c11 -Wall -Wextra -Werror -O2 -c "$out/model.c" -o "$out/model.o" && echo ok
echo
ref=${3:-$(dirname "$model")/test_data_set_0/input_0.pb}
echo "== onnx2c-caten verify against onnxruntime (prompt: $ref)"
if [ -f "$ref" ]; then "$exe" verify "$model" -i "$ref"; else "$exe" verify "$model"; fi
