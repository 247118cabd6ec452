#!/bin/sh
# unsupported.sh — the node tests listed in unsupported.txt, checked rather
# than trusted. A listed test still runs the compiler (the same `run` command
# as every node test):
#   unsupported.sh check LIST TEST CMD...
#     CMD succeeds            -> FAIL: the entry is stale, remove it;
#     CMD fails with the listed reason -> exit 77 (CTest: skipped), reason shown;
#     CMD fails with another message   -> FAIL: regenerate the reasons.
#   unsupported.sh regen LIST NODE_DIR EXE
#     rewrites the reasons in LIST with the compiler's current messages.
# The reason is the compiler's own error line without "onnx2c-caten: " and
# the model path, so no reason in LIST is written by hand.
set -u

# reason_of STDERR_FILE MODEL: the first "onnx2c-caten: " line, prefix and
# path cut, past run's note of the inputs it specialised to (not a reason)
reason_of() {
  grep '^onnx2c-caten: ' "$1" | grep -v -m1 '^onnx2c-caten: specialised to these inputs' |
    sed -e 's/^onnx2c-caten: //' -e "s|^$2: ||"
}

# listed_reason LIST TEST
listed_reason() {
  awk -v t="$2" '$1 == t { sub(/^[^ \t]+[ \t]+/, ""); print; exit }' "$1"
}

# run_node EXE NODE_DIR TEST STDERR_FILE: the node test's run command
run_node() {
  d=$2/$3 out=$4
  set -- "$1" run "$d/model.onnx"
  for f in "$d"/test_data_set_0/input_*.pb; do [ -f "$f" ] && set -- "$@" -i "$f"; done
  for f in "$d"/test_data_set_0/output_*.pb; do [ -f "$f" ] && set -- "$@" -e "$f"; done
  "$@" --cflags -O0 >/dev/null 2>"$out"
}

mode=${1:-}
case "$mode" in
check)
  list=$2 test=$3
  shift 3
  model=
  for a in "$@"; do case "$a" in */model.onnx) model=$a ;; esac; done
  err=$(mktemp)
  "$@" >/dev/null 2>"$err"
  st=$?
  got=$(reason_of "$err" "$model")
  rm -f "$err"
  want=$(listed_reason "$list" "$test")
  if [ $st -eq 0 ]; then
    echo "FAIL: $test is listed in unsupported.txt ($want) but now passes: remove it"
    exit 1
  fi
  if [ "$got" != "$want" ]; then
    echo "FAIL: $test fails (status $st) with another reason than unsupported.txt lists"
    echo "  listed:   $want"
    echo "  compiler: $got"
    echo "  (regenerate: tests/node/unsupported.sh regen tests/node/unsupported.txt NODE_DIR build/onnx2c-caten)"
    exit 1
  fi
  echo "skipped: $got"
  exit 77
  ;;
regen)
  list=$2 dir=$3 exe=$4
  tmp=$(mktemp)
  err=$(mktemp)
  while IFS= read -r line; do
    case "$line" in
    '#'* | '') printf '%s\n' "$line" >>"$tmp"; continue ;;
    esac
    test=${line%%[ 	]*}
    if run_node "$exe" "$dir" "$test" "$err"; then
      echo "$test passes now: dropped from the list" >&2
      continue
    fi
    printf '%s  %s\n' "$test" "$(reason_of "$err" "$dir/$test/model.onnx")" >>"$tmp"
  done <"$list"
  rm -f "$err"
  cat "$tmp" >"$list"
  rm -f "$tmp"
  ;;
*)
  echo "usage: unsupported.sh check LIST TEST CMD... | regen LIST NODE_DIR EXE" >&2
  exit 2
  ;;
esac
