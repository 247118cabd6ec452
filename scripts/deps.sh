#!/usr/bin/env bash
# Installs what the build and the tests need, when it is missing:
# Debian packages (as root, apt-get) and onnxruntime-node (npm, pinned in
# runtime/ort/package-lock.json; ONNXRUNTIME_NODE_INSTALL=skip avoids its
# CUDA download, which fails offline).
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs="build-essential cmake pkg-config libprotobuf-c-dev protobuf-c-compiler libisl-dev libcmocka-dev libonnx-dev libonnx-testdata python3-onnx python3-numpy valgrind clang"
# cross-ISA tests: aarch64 under qemu-user, Cortex-M4 compile
pkgs="$pkgs gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user gcc-arm-none-eabi libnewlib-arm-none-eabi"
# node/npm: the machine may ship its own (then Debian's would conflict)
command -v node >/dev/null && command -v npm >/dev/null || pkgs="$pkgs nodejs npm"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "deps: installing$missing"
  if [ "$(id -u)" != 0 ]; then
    echo "deps: need root to apt-get install:$missing" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq $missing >/dev/null
fi

command -v node >/dev/null || { echo "deps: node not found" >&2; exit 1; }
if [ ! -d runtime/ort/node_modules/onnxruntime-node ]; then
  echo "deps: installing onnxruntime-node (npm ci)"
  (cd runtime/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error)
fi
