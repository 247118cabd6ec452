#!/usr/bin/env bash
# bench/run.sh [ONNX2C_BINARY] - the `make bench` entry point (see bench/README.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ $# -ge 1 ]; then export ONNX2C="$1"; fi
if ! /usr/bin/python3 -c 'import numpy, onnx' 2>/dev/null; then
  echo "bench: /usr/bin/python3 needs numpy and onnx (python3-numpy python3-onnx)" >&2; exit 1
fi
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  # optional: nicer chart; a built-in PNG writer is used otherwise
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib >/dev/null 2>&1 || true
  fi
fi
exec /usr/bin/python3 "$here/bench.py"
