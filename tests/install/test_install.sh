#!/bin/sh
# make install as a user meets it: install the build into a fresh prefix,
# run the installed binary from another directory (verify against
# onnxruntime), move the prefix elsewhere and run it again (data is found
# beside the binary, never in the source tree), render the man page and
# check that it lists exactly the options of --help.
# usage: test_install.sh BUILD_DIR SOURCE_DIR
set -eu
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/onnx2c-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_install: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
bin=$tmp/prefix/bin/onnx2c-caten
[ -x "$bin" ] || fail "no $bin"
"$bin" --version | grep -Eq '^onnx2c-caten [0-9]+\.[0-9]+\.[0-9]+' || fail "--version: $("$bin" --version)"
[ ! -L "$tmp/prefix/share/onnx2c-caten/ort/node_modules" ] && [ -f "$tmp/prefix/share/onnx2c-caten/ort/node_modules/onnxruntime-node/package.json" ] ||
  fail "onnxruntime-node was not installed (run make deps before make install)"

mkdir "$tmp/work"
cp "$src/models/misc/layers_2.onnx" "$tmp/work/m.onnx"
cd "$tmp/work"
unset ONNX2C_ORT_SCRIPT
"$bin" verify m.onnx || fail "installed verify failed"

# relocated: the data moves with the binary
mv "$tmp/prefix" "$tmp/moved"
"$tmp/moved/bin/onnx2c-caten" verify m.onnx >/dev/null || fail "verify failed after moving the prefix"
# and it is the installed runner that runs: without it verify says so
mv "$tmp/moved/share/onnx2c-caten/ort/ort_run.js" "$tmp/ort_run.js"
if "$tmp/moved/bin/onnx2c-caten" verify m.onnx 2>"$tmp/err" >/dev/null; then fail "verify ran without its runner"; fi
grep -q "ort_run.js not found" "$tmp/err" || fail "unexpected error: $(cat "$tmp/err")"
mv "$tmp/ort_run.js" "$tmp/moved/share/onnx2c-caten/ort/ort_run.js"

# the man page renders without warnings
man1=$tmp/moved/share/man/man1/onnx2c-caten.1
MANPAGER=cat MANWIDTH=80 man -l "$man1" >"$tmp/man.txt" 2>"$tmp/man.err" || fail "man -l failed: $(cat "$tmp/man.err")"
[ ! -s "$tmp/man.err" ] || fail "man -l: $(cat "$tmp/man.err")"
grep -q "onnx2c-caten - compile an ONNX model" "$tmp/man.txt" || fail "man page does not render its NAME"
groff -man -Tutf8 -ww -z "$man1" 2>"$tmp/groff.err"
[ ! -s "$tmp/groff.err" ] || fail "groff warnings: $(cat "$tmp/groff.err")"
# ... and documents exactly the long options of --help
"$tmp/moved/bin/onnx2c-caten" --help | grep -o -- '--[a-z][a-z-]*' | sort -u >"$tmp/help.opts"
sed 's/\\-/-/g' "$man1" | grep -o -- '--[a-z][a-z-]*' | sort -u >"$tmp/man.opts"
diff "$tmp/help.opts" "$tmp/man.opts" >"$tmp/opts.diff" || fail "man page and --help differ (< help, > man): $(cat "$tmp/opts.diff")"
echo "test_install: installed, verified from $tmp/work, relocated, man page OK"

# the CMake package: examples/cmake compiles a model at build time with
# onnx2c_add_model and runs it
cmake -S "$src/examples/cmake" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/moved" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null || fail "examples/cmake: configure failed"
cmake --build "$tmp/cmake" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "examples/cmake: build failed"; }
"$tmp/cmake/llama_cmake" | grep -Eq '^next tokens:( [0-9]+){16}$' || fail "examples/cmake: bad output"
# the Python wrapper, installed, finds the installed compiler
cd "$tmp/work" && env -u ONNX2C_CATEN /usr/bin/python3 -c "
import sys; sys.path.insert(0, '$tmp/moved/share/onnx2c-caten/python')
import numpy as np, onnx2c_caten
assert onnx2c_caten._compiler() == '$tmp/moved/bin/onnx2c-caten', onnx2c_caten._compiler()
y, = onnx2c_caten.compile('m.onnx')(x=np.zeros((16, 64), np.float32))
print('test_install: the installed python wrapper ran, output', y.shape)
" || fail "installed python wrapper failed"
echo "test_install: examples/cmake built with find_package(onnx2c-caten) and ran"
