#!/bin/sh
# with_clang.sh CMD... — runs CMD with CC=clang, so that `run` and `verify`
# build the generated C with clang instead of gcc (runtime/build_run.c
# reads CC). Skipped (exit 77, counted by CTest) where clang is missing:
# `make deps` installs it.
if ! command -v clang >/dev/null 2>&1; then
  echo "skipped: no clang on PATH (make deps installs it)"
  exit 77
fi
CC=clang
export CC
exec "$@"
