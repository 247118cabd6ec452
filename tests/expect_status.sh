#!/bin/sh
# expect_status.sh STATUS REGEX CMD... — runs CMD and passes only if it exits
# with STATUS and its output (stdout and stderr) matches the extended REGEX.
# CTest's PASS_REGULAR_EXPRESSION alone ignores the exit status: a command
# that printed the message and then crashed, or succeeded, would pass.
want=$1 re=$2
shift 2
out=$(mktemp)
"$@" >"$out" 2>&1
st=$?
cat "$out"
if [ "$st" -ne "$want" ]; then
  echo "FAIL: exit status $st, expected $want"
  rm -f "$out"
  exit 1
fi
if ! grep -Eq -- "$re" "$out"; then
  echo "FAIL: the output does not match: $re"
  rm -f "$out"
  exit 1
fi
rm -f "$out"
echo "ok: status $st, output matches"
