#!/bin/sh
# The typed header used by a C host (tests/typed/host.c), built with
# -std=c11 -Wall -Wextra -Werror (not -pedantic: C11 wants a cast to pass a
# non-const array to the typed entry's const array parameter, C23 does not): compile MODEL with --name m, describe it with
# the onnx library (expect.py), build and run the host.
# usage: test_typed.sh ONNX2C MODEL [expect.py arguments...]
set -eu
exe=$1 model=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/onnx2c-typed-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# EMBED=1: --embed-weights, the host links m_weights.c and runs without m.weights
if [ "${EMBED:-0}" = 1 ]; then embed="--embed-weights" src="$tmp/m_weights.c" def=-DEMBED; else embed= src= def=; fi
"$exe" "$model" -o "$tmp" --name m $embed >/dev/null
/usr/bin/python3 "$here/expect.py" "$model" "$tmp" "$@"
${CC:-cc} -std=c11 -Wall -Wextra -Werror -O1 $def -I"$tmp" "$here/host.c" "$tmp/m.c" $src -o "$tmp/host" -lm
[ -z "$embed" ] || rm "$tmp/m.weights"
"$tmp/host" "$tmp"
