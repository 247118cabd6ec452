#!/usr/bin/python3
"""sweep_masks.py ONNX2C [--out DIR] [--part K/N] [--kinds masks|copies|all] [--types T,...]
               [--rows R] [--inner L,...]

A sweep of the kernels that read masked views (`masks`: Pad along rows or
along the row itself, Concat of two and three pieces, a strided Slice
concatenated) and of the copies that read rows reversed, repeated or
rearranged (`copies`: Pad edge, reflect and negative, Tile, a reversed
Slice, Gather of rows, two Transposes) over every element type (float32,
float64, int64, int32, uint8, float16), rows of 1-5, 8 and 16 elements, a
symbolic outer dimension or not, 1 or 2 threads, built with the speed
flags for `-march=native` and for AVX2 (`-march=x86-64-v3`): 1,680 + 2,352
cases, each checked by `verify` exactly against onnxruntime. gcc 12
miscompiles some of these shapes at -O3 (docs/DESIGN.md, "Masks split out
of the innermost loop"); the generated C avoids them. `--rows` and
`--inner` change the shape x [31, 6, inner] (`--rows 40 --inner 33,48`:
long rows, which gcc does not unroll whole). `--part K/N` runs every Nth
case from the Kth (two parts on two cores: ~25 minutes each for all).
Prints each failing case with its command; exits 1 if any. Run it with
/usr/bin/python3 (onnx, numpy)."""
import argparse
import itertools
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

NP = {T.FLOAT: np.float32, T.DOUBLE: np.float64, T.INT64: np.int64, T.INT32: np.int32, T.UINT8: np.uint8,
      T.FLOAT16: np.float16}
SPEED = "-O3 -fno-math-errno -fopenmp-simd -DONNX2C_OMP_SIMD -Wall -Wextra -Werror"
MASKS = ("pad_rows", "pad_inner", "concat2", "concat3", "slice_concat")
# copies that read rows reversed, repeated, gathered or transposed
COPIES = ("pad_edge", "pad_reflect", "pad_neg", "tile", "slice_rev", "gather_rows", "transpose")


def model(kind, dt, inner, sym, rows=6):
    """x [n, rows, inner] -> y; n symbolic or 31."""
    n = "n" if sym else 31
    neg = "Identity" if dt == T.UINT8 else "Neg"
    inits, ys = [], [n, rows, inner]
    if kind in ("pad_edge", "pad_reflect"):
        inits = [nh.from_array(np.array([0, 2, 0, 0, 3, 0], np.int64), "p")]
        nodes = [h.make_node("Pad", ["x", "p"], ["y"], mode=kind[4:])]
        ys = [n, rows + 5, inner]
    elif kind == "pad_neg":  # crop 1 row before, pad 3 after
        inits = [nh.from_array(np.array([0, -1, 0, 0, 3, 0], np.int64), "p"), nh.from_array(np.array(7, NP[dt]), "v")]
        nodes = [h.make_node("Pad", ["x", "p", "v"], ["y"])]
        ys = [n, rows + 2, inner]
    elif kind == "tile":
        inits = [nh.from_array(np.array([1, 2, 1], np.int64), "r")]
        nodes = [h.make_node("Tile", ["x", "r"], ["y"])]
        ys = [n, 2 * rows, inner]
    elif kind == "slice_rev":
        inits = [nh.from_array(np.array(v, np.int64), k) for k, v in (("s", [-1]), ("e", [-100]), ("a", [1]), ("st", [-1]))]
        nodes = [h.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])]
    elif kind == "gather_rows":
        inits = [nh.from_array(np.array([5, 0, 0, 3, -1, 2, 4], np.int64), "i")]
        nodes = [h.make_node("Gather", ["x", "i"], ["y"], axis=1)]
        ys = [n, 7, inner]
    elif kind == "transpose":
        nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]), h.make_node("Transpose", ["t"], ["y"], perm=[0, 2, 1])]
    elif kind.startswith("pad"):
        pads = [0, 3, 0, 0, 2, 0] if kind == "pad_rows" else [0, 0, 1, 0, 0, 2]
        inits = [nh.from_array(np.array(pads, np.int64), "p"), nh.from_array(np.array(7, NP[dt]), "v")]
        nodes = [h.make_node("Pad", ["x", "p", "v"], ["y"])]
        ys = [n, rows + 5, inner] if kind == "pad_rows" else [n, rows, inner + 3]
    elif kind.startswith("concat"):
        pieces = ["r", "x"] + (["r"] if kind == "concat3" else [])
        nodes = [h.make_node(neg, ["x"], ["r"]), h.make_node("Concat", pieces, ["y"], axis=1)]
        ys = [n, rows * len(pieces), inner]
    else:  # rows 1, 3, 5 and rows 0-2
        inits = [nh.from_array(np.array(v, np.int64), k) for k, v in
                 (("s", [1]), ("e", [6]), ("a", [1]), ("st", [2]), ("s0", [0]), ("e0", [3]))]
        nodes = [h.make_node("Slice", ["x", "s", "e", "a", "st"], ["sl"]),
                 h.make_node("Slice", ["x", "s0", "e0", "a"], ["f"]),
                 h.make_node("Concat", ["sl", "f"], ["y"], axis=1)]
        ys = [n, 6, inner]
    g = h.make_graph(nodes, kind, [h.make_tensor_value_info("x", dt, [n, rows, inner])],
                     [h.make_tensor_value_info("y", dt, ys)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("onnx2c")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "masks-out"))
    ap.add_argument("--part", default="0/1", help="K/N: every Nth case from the Kth")
    ap.add_argument("--kinds", choices=("masks", "copies", "all"), default="all")
    ap.add_argument("--types", default="", help="comma-separated element types (default: all), e.g. double,float16")
    ap.add_argument("--rows", type=int, default=6, help="the middle dimension (at least 6)")
    ap.add_argument("--inner", default="1,2,3,4,5,8,16", help="comma-separated row lengths")
    a = ap.parse_args()
    types = [t for t in NP if not a.types or T.DataType.Name(t).lower() in a.types.split(",")]
    kinds = {"masks": MASKS, "copies": COPIES, "all": MASKS + COPIES}[a.kinds]
    k, n = map(int, a.part.split("/"))
    os.makedirs(a.out, exist_ok=True)
    inners = [int(v) for v in a.inner.split(",")]
    cases = list(itertools.product(kinds, types, inners, (False, True), (1, 2),
                                   ("-march=native", "-march=x86-64-v3")))[k::n]
    bad = 0
    for i, (kind, dt, inner, sym, threads, march) in enumerate(cases):
        name = "%s_%s_%s%d%s_t%d_%s" % (kind, T.DataType.Name(dt).lower(), "" if a.rows == 6 else "%dx" % a.rows,
                                        inner, "_sym" if sym else "", threads, march[7:])
        path, xin = os.path.join(a.out, name + ".onnx"), os.path.join(a.out, name + "_x.pb")
        onnx.save(model(kind, dt, inner, sym, a.rows), path)
        rng = np.random.default_rng(i)
        x = rng.standard_normal((31, a.rows, inner)) if dt in (T.FLOAT, T.DOUBLE, T.FLOAT16) else \
            rng.integers(0 if dt == T.UINT8 else -100, 100, size=(31, a.rows, inner))
        onnx.save_tensor(nh.from_array(x.astype(NP[dt]), "x"), xin)
        cmd = [a.onnx2c, "verify", path, "-i", xin, "--atol", "0", "--rtol", "0", "--cflags", march + " " + SPEED]
        cmd += ["--threads", "2", "--threads-all"] if threads > 1 else []
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        text = (p.stdout + p.stderr).strip()
        if p.returncode or "FAIL" in text:
            bad += 1
            print("FAIL %s: %s\n    %s" % (name, " ".join(cmd), text.splitlines()[-1] if text else ""), flush=True)
        else:
            os.remove(path), os.remove(xin)
    print("sweep_masks part %s: %d cases, %d failing" % (a.part, len(cases), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
