#!/usr/bin/env bash
# Prints one line from CTest's JUnit file: node tests: N passed, M failed, K skipped
junit=${1:?usage: node_summary.sh JUNIT.xml}
[ -f "$junit" ] || { echo "node tests: no results ($junit missing)"; exit 0; }
awk '
  /<testcase / && /name="node_/ {
    n++
    if ($0 ~ /status="fail"/) f++
    else if ($0 ~ /status="notrun"/ || $0 ~ /status="disabled"/) s++
    else p++
  }
  END { printf "node tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$junit"
