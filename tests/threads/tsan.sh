#!/bin/sh
# The thread pool of the generated code under ThreadSanitizer: MODEL compiled
# with --threads 2 --threads-all (every kernel with two or more outer
# iterations runs on the pool), built with -fsanitize=thread with the strict
# warnings, run by tsan_run.c (repeated calls, then two callers at once). A
# race report fails the test (exit status 66); then once more with
# -DO2C_POOL_ADAPT=1. Also checks that the C names
# -pthread on its "Build with" line.
# usage: tsan.sh ONNX2C MODEL
set -eu
exe=$1 model=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/onnx2c-tsan-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$exe" "$model" -o "$tmp" --name m --threads 2 --threads-all >/dev/null
grep -q 'Build with: .*-pthread' "$tmp/m.c"
echo "threaded loops $(grep -c 'o2c_pool_run(k' "$tmp/m.c")"
${CC:-cc} -std=c11 -Wall -Wextra -Werror -O1 -g -fsanitize=thread -pthread -DTSAN_NAME=m \
  -DTSAN_HDR='"m.h"' -I"$tmp" "$tmp/m.c" "$here/tsan_run.c" -o "$tmp/run" -lm
TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$tmp/run"
# again with the adaptive pool (-DO2C_POOL_ADAPT=1; every threaded loop timed:
# a site measured threaded runs alone next) while the pool is held
${CC:-cc} -std=c11 -Wall -Wextra -Werror -O1 -g -fsanitize=thread -pthread -DTSAN_NAME=m \
  -DTSAN_HDR='"m.h"' -DO2C_POOL_ADAPT=1 -DO2C_POOL_WARM=1 -I"$tmp" "$tmp/m.c" "$here/tsan_run.c" -o "$tmp/run_adapt" -lm
TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$tmp/run_adapt"
