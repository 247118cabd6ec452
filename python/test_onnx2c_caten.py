#!/usr/bin/python3
"""The Python wrapper against onnxruntime (runtime/ort/ort_run.js, run on
the same inputs): the tiny LLaMA (symbolic batch and seq, --threads 2) at
two shapes, the convnet (symbolic H, W) at two sizes, and the detection
post-processing (outputs of value-dependent shapes) at two; max |diff| <= 1e-4.
usage: test_onnx2c_caten.py ONNX2C SOURCE_DIR"""
import os, subprocess, sys, tempfile
import numpy as np
import onnx
from onnx import numpy_helper

exe, src = sys.argv[1], sys.argv[2]
os.environ["ONNX2C_CATEN"] = exe
sys.path.insert(0, os.path.join(src, "python"))
import onnx2c_caten  # noqa: E402

ORT = os.path.join(src, "runtime", "ort", "ort_run.js")


def onnxruntime(model, inputs):
    with tempfile.TemporaryDirectory() as d:
        files = []
        for name, x in inputs.items():
            files.append(os.path.join(d, f"{name}.pb"))
            open(files[-1], "wb").write(numpy_helper.from_array(x, name).SerializeToString())
        subprocess.run(["node", ORT, model, d, *files], check=True)
        n = len(onnx.load(model).graph.output)
        return [numpy_helper.to_array(onnx.load_tensor(os.path.join(d, f"output_{k}.pb"))) for k in range(n)]


fails = 0
rng = np.random.default_rng(0)
cases = [("llama/tiny_dynamic/model.onnx", 2, [{"ids": rng.integers(0, 256, (1, 7), dtype=np.int64)},
                                               {"ids": rng.integers(0, 256, (2, 16), dtype=np.int64)}]),
         ("convnet/model.onnx", 1, [{"x": rng.standard_normal((1, 3, 16, 16), dtype=np.float32)},
                                    {"x": rng.standard_normal((1, 3, 21, 13), dtype=np.float32)}]),
         # outputs of value-dependent shapes (NonZero, NonMaxSuppression), cut to them
         ("detect/model.onnx", 1, [{"x": numpy_helper.to_array(onnx.load_tensor(
             os.path.join(src, "models", "detect", f"test_data_set_{k}", "input_0.pb")))} for k in range(2)])]
for path, threads, sets in cases:
    model = os.path.join(src, "models", path)
    m = onnx2c_caten.compile(model, threads=threads)
    for inputs in sets:
        got = m(**inputs)
        want = onnxruntime(model, inputs)
        fails += len(got) != len(want)
        for name, g, w in zip(m.outputs, got, want):
            diff = float(np.max(np.abs(g.astype(np.float64) - w))) if g.size else 0.0
            ok = g.shape == w.shape and g.dtype == w.dtype and diff <= 1e-4
            fails += not ok
            print(f"{path} {[x.shape for x in inputs.values()]} output '{name}' {g.dtype}{list(g.shape)}: "
                  f"max |diff| vs onnxruntime {diff:.3g}: {'PASS' if ok else 'FAIL'}")
# an error is an exception with the compiler's message, not a crash
try:
    m(x=np.zeros((1, 3, 4), np.float32))  # rank 3 where the model takes 4
    fails += 1
except onnx2c_caten.Error as e:
    print(f"refused as expected: {e}")
sys.exit(1 if fails else 0)
