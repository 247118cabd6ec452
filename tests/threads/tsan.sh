#!/bin/sh
# The thread pool of the generated code under ThreadSanitizer: MODEL compiled
# with --threads 2 --threads-all (every kernel with two or more outer
# iterations runs on the pool), built with -fsanitize=thread with the strict
# warnings, run by tsan_run.c (repeated calls, then two callers at once). A
# race report fails the test (exit status 66); then once with every loop
# threaded (-DO2C_POOL_ADAPT=0) and once holding threads off after every
# threaded loop that waited at all, for a microsecond (the pool switching
# between threaded and alone all the time), and once with the worker always
# on the caller's CPU (-DO2C_CPU()=0: it moves away, still finds itself
# there and skips every job; the caller runs them), and once moving the caller
# off its CPU after every threaded loop (-DO2C_POOL_LOST=-1: every span
# counts as lost time; tsan_run.c checks that its affinity comes back), and
# once pulling the worker onto the caller's CPU whenever the caller waits for
# its chunk (-DO2C_POOL_PULL=-1; o2c_pool_unpull moves it back after), and
# once probing threaded against lone calls every few calls (the entry's
# choice, codegen/pool_calls.c, switching often: -DO2C_CALLS_HOLD=1). Also
# checks that the C names -pthread on its "Build with" line, and that the C
# builds without __linux__ (no affinity calls: the pool of other systems).
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
# the pool without Linux's affinity calls (macOS, other libcs) still builds
${CC:-cc} -std=c11 -Wall -Wextra -Werror -O1 -pthread -U__linux__ -c "$tmp/m.c" -o "$tmp/portable.o"
for flags in -DO2C_POOL_ADAPT=0 "-DO2C_POOL_STALL=0 -DO2C_POOL_HOLD=1e-6 -DO2C_POOL_HOLD_MAX=4e-6 -DO2C_POOL_WARM=1" \
  "-DO2C_POOL_ADAPT=0 -DO2C_CPU()=0" "-DO2C_POOL_LOST=-1 -DO2C_POOL_WINDOW=0" \
  "-DO2C_POOL_ADAPT=0 -DO2C_POOL_PULL=-1" "-DO2C_CALLS_HOLD=1 -DO2C_CALLS_HOLD_MAX=2"; do
  # shellcheck disable=SC2086 # $flags is a list of flags
  ${CC:-cc} -std=c11 -Wall -Wextra -Werror -O1 -g -fsanitize=thread -pthread -DTSAN_NAME=m \
    -DTSAN_HDR='"m.h"' $flags -I"$tmp" "$tmp/m.c" "$here/tsan_run.c" -o "$tmp/run2" -lm
  TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$tmp/run2"
done
