#!/bin/sh
# nbits_dot.sh ONNX2C MODEL DIR CALLS [VERIFY ARGS...]
# A one-row 4-bit MatMulNBits printed with integer dot products
# (codegen/nbits_dot.c): MODEL compiled for this host (--target native,
# plus any --threads of the verify arguments) must call o2c_nbits4_dot in
# CALLS distinct kernels, then `verify` with VERIFY ARGS (whose --cflags
# build the C with AVX512_VNNI, so the call runs) must pass. Skips (77)
# on a host without AVX512_VNNI: the generated C's target line then says
# no VNNI and the float form is all there is.
set -eu
onnx2c=$1 model=$2 dir=$3 calls=$4
shift 4
threads=
prev=
for a in "$@"; do
  if [ "$prev" = --threads ]; then threads="$threads --threads $a"; fi
  if [ "$a" = --threads-all ]; then threads="$threads --threads-all"; fi
  prev=$a
done
rm -rf "$dir"
# shellcheck disable=SC2086
"$onnx2c" "$model" -o "$dir" --target native $threads >/dev/null
if ! sed -n 2p "$dir/model.c" | grep -q ', VNNI;'; then
  echo "skipped: this host has no AVX512_VNNI ($(sed -n 2p "$dir/model.c"))"
  exit 77
fi
n=$(grep -c '^  o2c_nbits4_dot(b0' "$dir/model.c" || true)
echo "kernels calling o2c_nbits4_dot: $n (expected $calls)"
[ "$n" -eq "$calls" ] || exit 1
exec "$onnx2c" verify "$model" "$@"
