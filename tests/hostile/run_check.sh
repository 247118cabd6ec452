#!/bin/sh
# run_check.sh CHECK EXE GENDIR MODEL OUTDIR [ARGS]
# Hostile-table cases that need more than "refused in one line"
# (tests/hostile/cases.txt, flag check=CHECK). MODEL and the files in ARGS
# are in GENDIR (tests/hostile/gen_hostile.py). Prints "ok: ..." or
# "FAIL: ..." and exits 0 or 1.
#   build_run IN... -- EXPECT...  compiles MODEL; model.c builds with
#     -std=c11 -Wall -Wextra -Werror, with and without -trigraphs, and
#     model.h alone; `run` on the inputs gives the expected outputs, printing
#     one PASS line per output and nothing else.
check=$1 exe=$2 gen=$3 model=$gen/$4 out=$5
eval "set -- $6"
cc=${CC:-cc}
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$out"
mkdir -p "$out" || fail "cannot create $out"
case $check in
build_run)
  "$exe" "$model" -o "$out/gen" >"$out/compile.out" 2>"$out/compile.err" || fail "compile: $(cat "$out/compile.err")"
  [ -s "$out/compile.err" ] && fail "compile wrote to stderr: $(cat "$out/compile.err")"
  for tri in "" -trigraphs; do
    $cc -std=c11 -Wall -Wextra -Werror $tri -c "$out/gen/model.c" -o "$out/model.o" 2>"$out/cc.err" ||
      fail "model.c does not build with -Werror $tri: $(head -c 2000 "$out/cc.err")"
    printf '#include "model.h"\nint main(void) { return model_OK; }\n' >"$out/use.c"
    $cc -std=c11 -Wall -Wextra -Werror $tri -I"$out/gen" "$out/use.c" -o "$out/use" 2>"$out/cc.err" ||
      fail "model.h does not build with -Werror $tri: $(head -c 2000 "$out/cc.err")"
  done
  files="" opt=-i
  for f in "$@"; do
    if [ "$f" = -- ]; then opt=--expect; else files="$files $opt $gen/$f"; fi
  done
  "$exe" run "$model" $files >"$out/run.out" 2>"$out/run.err"
  st=$?
  [ $st -eq 0 ] || fail "run: status $st: $(head -c 2000 "$out/run.err") $(head -c 2000 "$out/run.out")"
  [ -s "$out/run.err" ] && fail "run wrote to stderr: $(head -c 2000 "$out/run.err")"
  n=$(wc -l <"$out/run.out")
  good=$(LC_ALL=C grep -a -c '^output [0-9]* .*: max abs .* 0 mismatches: PASS$' "$out/run.out")
  [ "$n" -ge 1 ] && [ "$n" -eq "$good" ] || fail "run printed more than its PASS lines: $(head -c 2000 "$out/run.out")"
  msg="built with -Werror (and -trigraphs), run: $(cat "$out/run.out")" ;;
*) fail "unknown check $check" ;;
esac
rm -rf "$out"
echo "ok: $msg"
