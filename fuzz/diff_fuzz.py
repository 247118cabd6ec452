#!/usr/bin/python3
"""diff_fuzz.py ONNX2C [--seeds A:B,C...] [--out DIR] [--variant V] [--timeout S]

Differential fuzzing against onnxruntime: for each seed, diff_gen.py makes a
random valid graph, `ONNX2C verify` runs it and onnxruntime on the same
random inputs (verify's --seed; an integer graph's, in [-20, 20], written
by the generator) and compares. Each seed also picks a way to
compile it (a variant: default, threads, a --target, --no-tile ...) unless
--variant names one. Every run is one of
  pass     verify printed PASS for every output
  refused  a one-line error (an unsupported case: counted and listed)
  FAIL     an output differs from onnxruntime's: a wrong answer
  close    verify FAILed with every difference within 1e-3 of the output's
           scale (its "scaled err"; 1e-10 in a float64 graph, compared at
           --rtol 1e-9; never an integer output): float rounding on an ill-conditioned
           graph (a LayerNormalization of a constant row, a saturated
           ArgMax input) until shown otherwise; listed, not counted as bad
  ort-error  onnxruntime could not run the graph (a kernel it lacks, its own
           crash: listed, not counted as bad)
  CRASH    a signal, a sanitizer report or an error that is not one line
  HANG     no answer within --timeout seconds
  gen-error  the generated graph fails ONNX's checker (the generator's own
           mistake: a failure, but not the compiler's)
The model (and inputs) of every seed but a pass stays in DIR (default
fuzz/diff-out, not committed), printed with the command that shows it; the
exit status is 1 when there is a FAIL, CRASH or HANG. `make fuzz-diff` runs it; tests/CMakeLists.txt runs a fixed
slice of seeds in `make test` with --strict (anything but a pass fails).
Run it with /usr/bin/python3 (onnx, numpy)."""
import argparse
import os
import re
import shlex
import subprocess
import sys

import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diff_gen import make_model  # noqa: E402

# Each variant: verify's options and the C flags it builds with (unless
# --cflags names others): the README's speed flags for this machine, -O2
# for another target (its C is portable; AVX2's with -march=x86-64-v3 when
# this CPU has AVX2), -O0; always -Wall -Wextra -Werror, as the README
# promises the C builds.
WARN = "-Wall -Wextra -Werror"
SPEED = "-O3 -march=native -fno-math-errno -fopenmp-simd -DONNX2C_OMP_SIMD " + WARN


def has_avx2():
    try:
        with open("/proc/cpuinfo") as f:
            return " avx2" in f.read()
    except OSError:
        return False


VARIANTS = {
    "default": ([], SPEED),
    "threads": (["--threads", "2", "--threads-all"], SPEED),
    "generic": (["--target", "generic"], "-O2 " + WARN),
    "v3": (["--target", "x86-64-v3"], ("-O2 -march=x86-64-v3 " if has_avx2() else "-O2 ") + WARN),
    "v4": (["--target", "x86-64-v4"], "-O2 " + WARN),
    "aarch64": (["--target", "aarch64"], "-O2 " + WARN),
    "no-tile": (["--no-tile"], SPEED),
    "no-kslice": (["--no-kslice"], SPEED),
    "no-collapse": (["--no-collapse"], SPEED),
    "no-rewrite": (["--no-rewrite"], SPEED),
    "O0": ([], "-O0 " + WARN),
}
ROTATION = ("default", "threads", "generic", "v3", "default", "no-tile", "aarch64", "threads",
            "no-kslice", "v4", "no-collapse", "O0", "no-rewrite")
SANITIZER = ("runtime error:", "AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer")


# A float64 graph is compared at float64's precision: a float32 step inside
# ours (a constant, an accumulator, expf for exp) is 1e-8 of the scale or more.
DOUBLE_TOL = ["--atol", "1e-12", "--rtol", "1e-9"]
CLOSE = {False: 1e-3, True: 1e-10}  # "close": every scaled err at most this (by float64 graph or not)


def classify(rc, text, double=False):
    if any(s in text for s in SANITIZER) or rc < 0 or "stopped by signal" in text:  # the worker's signal
        return "CRASH"
    lines = [ln for ln in text.splitlines() if ln.strip()]
    outs = [ln for ln in lines if ln.startswith("output ")]
    if rc == 0 and outs and all(ln.endswith("PASS") for ln in outs):
        return "pass"
    if any(ln.startswith("ort_run: ") or ln.startswith("onnx2c-caten: onnxruntime (node ") for ln in lines):
        return "ort-error"
    fails = [ln for ln in outs if "FAIL" in ln]
    if fails:
        # an integer output has no rounding: any difference is a FAIL
        # ("output 0 't35' i64[1,1,1]: max abs err 438, ...")
        scaled = [re.search(r"scaled err ([0-9.e+-]+)", ln) for ln in fails
                  if not re.search(r"' (?:[iu][0-9]+|bool)[\[ ]", ln)]
        return "close" if len(scaled) == len(fails) and all(
            f and float(f.group(1)) <= CLOSE[double] for f in scaled) else "FAIL"
    # A refusal is one line naming the model (stderr); verify's notes
    # ("specialised to these inputs") may come before it.
    if rc != 0 and lines and all(ln.startswith("onnx2c-caten: ") for ln in lines):
        return "refused"
    return "CRASH"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("onnx2c")
    ap.add_argument("--seeds", default="1:101", help="A:B (seeds A..B-1) or seeds, comma-separated")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "diff-out"))
    ap.add_argument("--variant", choices=sorted(VARIANTS), help="every seed compiled this way")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--cflags", help="verify's --cflags for every variant (e.g. the sanitizers)")
    ap.add_argument("-q", "--quiet", action="store_true", help="print only what is not a pass")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 on anything but a pass (a fixed slice of seeds in make test)")
    a = ap.parse_args()
    seeds = []
    for part in a.seeds.split(","):  # A:B (A..B-1) or one seed
        lo, _, hi = part.partition(":")
        seeds += range(int(lo), int(hi)) if hi else [int(lo)]
    os.makedirs(a.out, exist_ok=True)
    counts, bad, refusals = {}, [], {}
    for seed in seeds:
        model, syms, feeds = make_model(seed)
        path = os.path.join(a.out, "seed_%d.onnx" % seed)
        onnx.save(model, path)
        try:
            onnx.checker.check_model(model, full_check=True)
        except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as ex:
            # the generator's own mistake (a shape it tracked wrong): listed, and a failure
            counts["gen-error"] = counts.get("gen-error", 0) + 1
            bad.append((seed, "gen-error", path, str(ex).strip().splitlines()[:2]))
            print("seed %d gen-error" % seed, flush=True)
            continue
        var = a.variant or ROTATION[seed % len(ROTATION)]
        opts, cflags = VARIANTS[var]
        flags = opts + ["--cflags", a.cflags or cflags]
        double = model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE
        cmd = [a.onnx2c, "verify", path, "--seed", str(seed)] + flags + (DOUBLE_TOL if double else [])
        for i, (nm, arr) in enumerate(feeds.items()):
            inp = os.path.join(a.out, "seed_%d_in%d.pb" % (seed, i))
            with open(inp, "wb") as f:
                f.write(numpy_helper.from_array(arr, nm).SerializeToString())
            cmd += ["-i", inp]
        for k, v in syms.items():
            cmd += ["--sym", "%s=%d" % (k, v)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
            rc, text = p.returncode, p.stdout + p.stderr
            kind = classify(rc, text, double)
        except subprocess.TimeoutExpired:
            kind, text = "HANG", ""
        counts[kind] = counts.get(kind, 0) + 1
        ops = ",".join(sorted({n.op_type for n in model.graph.node}))
        shown = shlex.join(cmd)
        if kind == "refused":
            refusals.setdefault(text.strip().splitlines()[-1], []).append(seed)
        elif kind == "pass":
            for f in [path] + [c for c in cmd if c.endswith(".pb")]:
                os.remove(f)
        else:
            bad.append((seed, kind, shown, text.strip().splitlines()[-3:]))
        if not a.quiet or kind not in ("pass", "refused", "close", "ort-error"):
            print("seed %d %-7s %-11s %s" % (seed, kind, var, ops), flush=True)
    kinds = ("pass", "refused", "close", "ort-error", "FAIL", "CRASH", "HANG", "gen-error")
    print("\ndiff_fuzz seeds %s: %s" % (a.seeds, ", ".join(
        "%d %s" % (counts[k], k) for k in kinds if k in counts)))
    for msg, which in sorted(refusals.items()):
        print("  refused (%d): %s  [seeds %s]" % (len(which), msg, " ".join(map(str, which[:8]))))
    for seed, kind, shown, tail in bad:
        print("  %s seed %d: %s" % (kind, seed, shown))
        for ln in tail:
            print("      " + ln)
    if a.strict:
        return 1 if bad or refusals else 0
    return 1 if any(kind not in ("close", "ort-error") for _, kind, _, _ in bad) else 0


if __name__ == "__main__":
    sys.exit(main())
