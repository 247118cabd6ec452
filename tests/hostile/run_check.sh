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
#   outputs_symlink, outputs_not_replaceable FIRST, run_tmp_failure IN
#   VALID VALID_IN, run_tmp_signal IN, compile_signal: the output files and temporaries
#   (see each below).
check=$1 exe=$2 gen=$3 model=$gen/$4 out=$5
eval "set -- $6"
cc=${CC:-cc}
fail() { echo "FAIL: $*"; exit 1; }
# true when DIR holds a compile temporary (NAME.XXXXXX, six letters or digits)
temps_in() {
  for f in "$1"/*.[A-Za-z0-9][A-Za-z0-9][A-Za-z0-9][A-Za-z0-9][A-Za-z0-9][A-Za-z0-9]; do
    [ -e "$f" ] && return 0
  done
  return 1
}
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
outputs_symlink)
  # symlinks planted where temporaries and outputs go: never followed
  d=$out/dir
  mkdir "$d" && echo victim >"$out/victim" || fail "setup"
  for f in model.c.tmp model.h.tmp model.weights.tmp model.c; do ln -s "$out/victim" "$d/$f"; done
  "$exe" "$model" -o "$d" >/dev/null 2>"$out/err" || fail "compile: $(cat "$out/err")"
  [ "$(cat "$out/victim")" = victim ] || fail "a planted symlink was followed: the victim file was overwritten"
  [ -f "$d/model.c" ] && [ ! -L "$d/model.c" ] || fail "model.c is not the new file"
  msg="planted symlinks not followed" ;;
outputs_not_replaceable)
  # model.h a directory: refused before anything is renamed, the old set stays
  d=$out/dir
  "$exe" "$gen/$1" -o "$d" >/dev/null 2>"$out/err" || fail "first compile: $(cat "$out/err")"
  cp "$d/model.c" "$out/old.c" && cp "$d/model.weights" "$out/old.weights" && rm "$d/model.h" && mkdir "$d/model.h" ||
    fail "setup"
  "$exe" "$model" -o "$d" >/dev/null 2>"$out/err"
  st=$?
  [ $st -eq 1 ] && [ "$(wc -l <"$out/err")" -eq 1 ] || fail "status $st, expected 1 and one line: $(cat "$out/err")"
  cmp -s "$d/model.c" "$out/old.c" && cmp -s "$d/model.weights" "$out/old.weights" ||
    fail "the old set was changed: $(cat "$out/err")"
  [ "$(ls -A "$d" | tr '\n' ' ')" = "model.c model.h model.weights " ] || fail "files left behind: $(ls -A "$d")"
  msg="$(cat "$out/err"), the old set kept" ;;
run_tmp_failure)
  # run fails (a model refused, then a C compiler that fails): nothing left in TMPDIR
  mkdir "$out/tmp"
  TMPDIR=$out/tmp "$exe" run "$model" -i "$gen/$1" >/dev/null 2>"$out/err" && fail "run of a refused model succeeded"
  TMPDIR=$out/tmp CC=false "$exe" run "$gen/$2" -i "$gen/$3" >/dev/null 2>>"$out/err" && fail "run without a C compiler succeeded"
  [ -z "$(ls -A "$out/tmp")" ] || fail "left in TMPDIR: $(ls -A "$out/tmp")"
  msg="nothing left in TMPDIR after two failed runs" ;;
run_tmp_signal)
  # SIGTERM while the C compiler runs: status 143, TMPDIR empty, cc stopped
  mkdir "$out/tmp"
  printf '#!/bin/sh\n: >"%s/started"\nexec sleep 60\n' "$out" >"$out/cc.sh" && chmod +x "$out/cc.sh" || fail "setup"
  TMPDIR=$out/tmp CC=$out/cc.sh "$exe" run "$model" -i "$gen/$1" >/dev/null 2>"$out/err" &
  pid=$!
  i=0
  while [ ! -e "$out/started" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
  [ -e "$out/started" ] || { kill $pid; fail "the C compiler never started: $(cat "$out/err")"; }
  kill -TERM $pid
  wait $pid
  st=$?
  [ $st -eq 143 ] || fail "status $st after SIGTERM, expected 143: $(cat "$out/err")"
  [ -z "$(ls -A "$out/tmp")" ] || fail "left in TMPDIR after SIGTERM: $(ls -A "$out/tmp")"
  msg="SIGTERM: status 143, nothing left in TMPDIR" ;;
compile_signal)
  # SIGTERM the moment compile's temporaries (NAME.c.XXXXXX) appear: each
  # attempt ends with status 143 and nothing in the output directory, or
  # (when the set was committed first) the whole set and no temporary. At least
  # one of 20 attempts must land inside the window (it stops after 3).
  caught=0 i=0
  while [ $i -lt 20 ] && [ $caught -lt 3 ]; do
    rm -rf "$out/o"
    "$exe" "$model" -o "$out/o" >/dev/null 2>"$out/err" &
    pid=$!
    # a glob and builtins, a look every 5 ms: the window lasts tens of ms,
    # and a loop of ls | grep forks spun one core for the whole compile
    while kill -0 $pid 2>/dev/null && ! temps_in "$out/o"; do sleep 0.005; done
    kill -TERM $pid 2>/dev/null
    wait $pid
    st=$?
    left=$(ls "$out/o" 2>/dev/null | tr '\n' ' ')
    case $st in
    143) # stopped while writing (nothing left), or just after the commit (the whole set)
      case $left in
      "") caught=$((caught + 1)) ;;
      "model.c model.h model.weights ") ;;
      *) fail "left after SIGTERM: $left" ;;
      esac ;;
    0) [ "$left" = "model.c model.h model.weights " ] || fail "status 0 but the set is: $left" ;;
    *) fail "status $st: $(cat "$out/err")" ;;
    esac
    i=$((i + 1))
  done
  [ $caught -ge 1 ] || fail "no attempt landed while the temporaries existed"
  msg="SIGTERM while writing: $caught of $i attempts stopped, nothing left; the others left the whole set" ;;
*) fail "unknown check $check" ;;
esac
rm -rf "$out"
echo "ok: $msg"
