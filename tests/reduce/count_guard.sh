#!/bin/sh
# count_guard.sh ONNX2C DIR — a ReduceMean whose count is symbolic divides
# by max(count, 1) only where the count can be 0: not over [2, n] (n >= 1
# is checked by the entry), but over Range(1, n)'s n - 1 elements.
set -e
exe=$1 dir=$2
fail() { echo "FAIL: $*"; exit 1; }
"$exe" "$dir/reduce_mean_sym.onnx" -o "$dir/c_mean_sym" >/dev/null
"$exe" "$dir/reduce_count_range.onnx" -o "$dir/c_count_range" >/dev/null
! grep -q 'max_i64(' "$dir/c_mean_sym/model.c" || fail "a guard on a count that is never 0"
grep -q '= max_i64(' "$dir/c_count_range/model.c" || fail "no guard on n - 1"
echo "ok: one guard where the count can be 0"
