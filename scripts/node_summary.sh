#!/usr/bin/env bash
# Prints lines from CTest's JUnit file: node tests: N passed (M of them
# specialised), F failed, K skipped. A test is "specialised" when `run` said
# on stderr that it fixed input values or dimensions at compile time
# ("onnx2c-caten: specialised ..."): those pass for the given inputs only.
junit=${1:?usage: node_summary.sh JUNIT.xml}
[ -f "$junit" ] || { echo "node tests: no results ($junit missing)"; exit 0; }
awk '
  /<testcase / {
    node = $0 ~ /name="node_/
    if (!node) next
    n++; spec = 0
    if ($0 ~ /status="fail"/) st = "f"
    else if ($0 ~ /status="notrun"/ || $0 ~ /status="disabled"/) st = "s"
    else st = "p"
    if (st == "f") f++
    else if (st == "s") s++
    else p++
    next
  }
  node && /onnx2c-caten: specialised/ && st == "p" && !spec { spec = 1; sp++ }
  /<\/testcase>/ { node = 0 }
  END { printf "node tests: %d passed (%d of them specialised to their inputs), %d failed, %d skipped\n", p, sp, f, s }' "$junit"
# counts NAME_REGEX: "P passed, F failed, S skipped" over the tests whose
# name matches (skipped: CTest's notrun or disabled)
counts() {
  awk -v re="name=\"($1)" '
    /<testcase / {
      if ($0 !~ re) next
      if ($0 ~ /status="fail"/) f++
      else if ($0 ~ /status="notrun"/ || $0 ~ /status="disabled"/) s++
      else p++
    }
    END { printf "%d passed, %d failed, %d skipped", p, f, s }' "$junit"
}
# The real models (tests/realmodels): skips are network or package
# unavailable, or big models not enabled (ONNX2C_REALMODELS_BIG=1).
echo "real models: $(counts 'realmodel_') (no network or npm, or big models without ONNX2C_REALMODELS_BIG=1)"
# The package's whole-model suites (pytorch-converted, pytorch-operator,
# simple): skips are the tests their unsupported lists name, with a reason.
echo "pytorch-converted, pytorch-operator and simple models: $(counts 'pytorch_converted_|pytorch_operator_|simple_') (listed in tests/node/unsupported_*.txt)"
