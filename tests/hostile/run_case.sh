#!/bin/sh
# run_case.sh EXE MODEL OUTDIR [KEYWORD] [any|ok|run] [ARGS]
# Compiles MODEL and expects a clean refusal: exit status 1 and exactly one
# line on stderr starting with "onnx2c-caten: " (containing KEYWORD, case-
# insensitively, when given). With "any" as 5th argument a successful compile
# (status 0) is accepted too (fuzz crashers: the point is not to crash); with
# "ok" the model is valid but stressful (deep chains) and must compile; with
# "run" the model is run on its inputs MODEL_in*.pb and must be refused.
# A crash, sanitizer report or hang gives another status or more lines.
# ARGS: more compile options, word-split after shell expansion (the table
# is ours: "--name n$(printf %0299d 0)" makes a 300-character name).
exe=$1 model=$2 out=$3 key=$4 mode=$5
eval "set -- $6"
err=$(mktemp)
rm -rf "$out"
if [ "$mode" = run ]; then
  # run the model on its inputs, MODEL_in*.pb beside it
  for f in "${model%.onnx}"_in*.pb; do set -- "$@" -i "$f"; done
  set -- run "$model" "$@"
else
  set -- "$model" "$@"
fi
"$exe" "$@" -o "$out" >/dev/null 2>"$err"
st=$?
lines=$(wc -l <"$err")
msg=$(head -c 2000 "$err")
rm -f "$err"
rm -rf "$out"
if [ "$mode" = any ] && [ $st -eq 0 ]; then echo "ok: compiled"; exit 0; fi
fail() { echo "FAIL: $1"; echo "status $st, stderr ($lines lines):"; echo "$msg"; exit 1; }
if [ "$mode" = ok ]; then [ $st -eq 0 ] && { echo "ok: compiled"; exit 0; }; fail "expected a successful compile"; fi
fail() { echo "FAIL: $1"; echo "status $st, stderr ($lines lines):"; echo "$msg"; exit 1; }
[ $st -eq 1 ] || fail "exit status $st, expected 1"
[ "$lines" -eq 1 ] || fail "expected exactly one line on stderr"
case "$msg" in "onnx2c-caten: "*) ;; *) fail "stderr does not start with 'onnx2c-caten: '" ;; esac
if [ -n "$key" ]; then
  printf '%s' "$msg" | grep -qi -- "$key" || fail "message does not mention '$key'"
fi
echo "ok: $msg"
