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
"$exe" "$model" -o "$tmp" --name m >/dev/null
/usr/bin/python3 "$here/expect.py" "$model" "$tmp" "$@"
${CC:-cc} -std=c11 -Wall -Wextra -Werror -O1 -I"$tmp" "$here/host.c" "$tmp/m.c" -o "$tmp/host" -lm
"$tmp/host" "$tmp"
