#!/usr/bin/env bash
# bench/run.sh [ONNX2C_BINARY] - the `make bench` entry point (see bench/README.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ $# -ge 1 ]; then export ONNX2C="$1"; fi
# the LLaMA generator needs torch (Debian's python3-torch), only for the bench
if ! /usr/bin/python3 -c 'import numpy, onnx, torch' 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bench: installing python3-torch python3-onnx python3-numpy"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch python3-onnx python3-numpy >/dev/null
  fi
fi
if ! /usr/bin/python3 -c 'import numpy, onnx, torch' 2>/dev/null; then
  echo "bench: /usr/bin/python3 needs numpy, onnx and torch (python3-numpy python3-onnx python3-torch)" >&2; exit 1
fi
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  # optional: nicer chart; a built-in PNG writer is used otherwise
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib >/dev/null 2>&1 || true
  fi
fi
exec /usr/bin/python3 "$here/bench.py"
