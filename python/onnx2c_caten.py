"""onnx2c_caten: compile an ONNX model to C and call it from Python.

    import onnx2c_caten, numpy as np
    m = onnx2c_caten.compile("model.onnx", threads=2)
    logits, = m(ids=np.array([[1, 2, 3]], dtype=np.int64))

compile() runs the onnx2c-caten compiler, builds the C into a shared object
with the system C compiler and loads it with ctypes; calling the model
passes numpy arrays by name (or position) and returns the outputs, in the
model's order, as new numpy arrays (an output whose shape depends on the
values, NonZero's..., cut to its actual shape). Symbolic dimensions
(batch, seq...) are read off the inputs' shapes. Needs only the standard library and numpy.

The compiler is $ONNX2C_CATEN, else onnx2c-caten beside this file's
installation or build tree, else the one on PATH."""
import ctypes
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np

__all__ = ["compile", "Model", "Error"]

# ONNX TensorProto data type -> numpy (bool is one byte)
_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
           9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}
_STATUS = {1: "an index out of range", 2: "dimensions the model was not compiled for"}


class Error(Exception):
    pass


def _compiler():
    exe = os.environ.get("ONNX2C_CATEN")
    if exe:
        return exe
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "..", "build", "onnx2c-caten"),
                 os.path.join(here, "..", "..", "..", "bin", "onnx2c-caten")):
        if os.access(cand, os.X_OK):
            return os.path.normpath(cand)
    exe = shutil.which("onnx2c-caten")
    if not exe:
        raise Error("onnx2c-caten not found: set ONNX2C_CATEN")
    return exe


def _run(argv):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        raise Error((r.stderr or r.stdout).strip() or f"{argv[0]} failed with status {r.returncode}")


class Model:
    """A compiled, loaded model. Call it with numpy arrays."""

    def __init__(self, directory, name, threads):
        self._dir, self._name = directory, name
        self._lib = ctypes.CDLL(os.path.join(directory, name + ".so"))
        f = lambda s, res, args: self._fn(s, res, args)
        i64p = ctypes.POINTER(ctypes.c_int64)
        for kind in ("input", "output"):
            f(f"{kind}_name", ctypes.c_char_p, [ctypes.c_int])
            f(f"{kind}_dtype", ctypes.c_int, [ctypes.c_int])
            f(f"{kind}_rank", ctypes.c_int, [ctypes.c_int])
            f(f"{kind}_shape", ctypes.c_int, [ctypes.c_int, i64p, i64p])
        f("input_axis_dim", ctypes.c_int, [ctypes.c_int, ctypes.c_int])
        f("output_length", ctypes.c_int, [ctypes.c_int, ctypes.POINTER(ctypes.c_int)])
        self.inputs = self._names("input")
        self._all_outputs = self._names("output")
        # an output whose shape depends on the values is followed by a scalar
        # output with its actual length along one axis: (length output, axis)
        self._lengths, axis = {}, ctypes.c_int()
        for i in range(len(self._all_outputs)):
            k = self._c("output_length")(i, ctypes.byref(axis))
            if k >= 0:
                self._lengths[i] = (k, axis.value)
        measured = {k for k, _ in self._lengths.values()}
        self.outputs = [n for i, n in enumerate(self._all_outputs) if i not in measured]
        self.symbolic = hasattr(self._lib, name + "_run_dims")
        vp = ctypes.c_void_p
        if self.symbolic:
            self._run = f("run_dims", ctypes.c_int, [vp, vp, vp, vp, i64p])
            self._arena = f("arena_size_dims", ctypes.c_size_t, [i64p])
        else:
            self._run = f("run", ctypes.c_int, [vp, vp, vp, vp])
            header = open(os.path.join(directory, name + ".h")).read()
            self._static_arena = int(re.search(rf"#define {name}_ARENA_SIZE (\d+)", header).group(1))
        # each input axis that is a symbol, and the number of symbols
        self._axis_dims = []
        for i in range(len(self.inputs)):
            rank = self._c("input_rank")(i)
            self._axis_dims.append([self._c("input_axis_dim")(i, a) for a in range(rank)])
        self.num_dims = 1 + max([d for ax in self._axis_dims for d in ax] + [-1])
        raw = np.fromfile(os.path.join(directory, name + ".weights"), dtype=np.uint8)
        self._weights = self._aligned(raw.size)
        self._weights[:] = raw
        self.threads = threads

    def _c(self, s):
        return getattr(self._lib, f"{self._name}_{s}")

    def _fn(self, s, res, args):
        fn = self._c(s)
        fn.restype, fn.argtypes = res, args
        return fn

    def _names(self, kind):
        names, i = [], 0
        while True:
            n = self._c(f"{kind}_name")(i)
            if n is None:
                return names
            names.append(n.decode("utf-8", "replace"))
            i += 1

    @staticmethod
    def _aligned(nbytes):
        """A uint8 array of nbytes starting on a 64-byte boundary."""
        buf = np.empty(nbytes + 64, dtype=np.uint8)
        off = (-buf.ctypes.data) % 64
        return buf[off:off + nbytes]

    @staticmethod
    def _dims_arg(dims):
        return (ctypes.c_int64 * max(len(dims), 1))(*dims)

    def __call__(self, *args, **kwargs):
        if len(args) + len(kwargs) != len(self.inputs):
            raise Error(f"the model takes {len(self.inputs)} inputs: {', '.join(self.inputs)}")
        given = dict(zip(self.inputs, args))
        for k, v in kwargs.items():
            if k not in self.inputs or k in given:
                raise Error(f"unexpected or repeated input '{k}' (inputs: {', '.join(self.inputs)})")
            given[k] = v
        ins, dims = [], [0] * self.num_dims
        for i, name in enumerate(self.inputs):
            dt = _DTYPES[self._c("input_dtype")(i)]
            x = np.ascontiguousarray(given[name], dtype=dt)
            if x.ndim != len(self._axis_dims[i]):
                raise Error(f"input '{name}' must have rank {len(self._axis_dims[i])}, got {x.ndim}")
            for a, d in enumerate(self._axis_dims[i]):
                if d >= 0:
                    dims[d] = x.shape[a]
            ins.append(x)
        dims_c = self._dims_arg(dims)
        shape = (ctypes.c_int64 * 16)()
        for i, (name, x) in enumerate(zip(self.inputs, ins)):
            r = self._c("input_shape")(i, dims_c, shape)
            if r < 0 or tuple(shape[:r]) != x.shape:
                raise Error(f"input '{name}' has shape {x.shape}, the model wants {tuple(shape[:max(r, 0)])}")
        outs = []
        for i in range(len(self._all_outputs)):
            r = self._c("output_shape")(i, dims_c, shape)
            if r < 0:
                raise Error(f"the model refuses these dimensions: {dims}")
            outs.append(np.empty(tuple(shape[:r]), dtype=_DTYPES[self._c("output_dtype")(i)]))
        asize = self._arena(dims_c) if self.symbolic else self._static_arena
        if self.symbolic and asize == 0:
            raise Error(f"the model refuses these dimensions: {dims}")
        arena = self._aligned(asize + 64)
        iptr = (ctypes.c_void_p * (len(ins) + 1))(*[x.ctypes.data for x in ins])
        optr = (ctypes.c_void_p * (len(outs) + 1))(*[y.ctypes.data for y in outs])
        w = self._weights.ctypes.data
        st = (self._run(iptr, optr, w, arena.ctypes.data, dims_c) if self.symbolic
              else self._run(iptr, optr, w, arena.ctypes.data))
        if st:
            raise Error(f"the model returned status {st}: {_STATUS.get(st, 'an error')}")
        for i, (k, a) in self._lengths.items():  # cut to the actual length
            n = int(outs[k])
            if not 0 <= n <= outs[i].shape[a]:
                raise Error(f"output '{self._all_outputs[i]}': length {n} outside 0..{outs[i].shape[a]}")
            outs[i] = np.ascontiguousarray(outs[i][(slice(None),) * a + (slice(0, n),)])
        measured = {k for k, _ in self._lengths.values()}
        return [y for i, y in enumerate(outs) if i not in measured]

    def __del__(self):
        d = getattr(self, "_dir", None)
        if d and getattr(self, "_own", False):
            shutil.rmtree(d, ignore_errors=True)


def compile(model, threads=1, name="model", options=(), cflags=None, cc=None):
    """Compiles `model` (an .onnx path) and loads it. `options` are more
    onnx2c-caten flags (e.g. ["--dim", "seq=16"]); `cflags` replace the
    default C flags; `cc` is the C compiler (default: $CC or cc)."""
    d = tempfile.mkdtemp(prefix="onnx2c-py-")
    try:
        argv = [_compiler(), "compile", os.fspath(model), "-o", d, "--name", name, *options]
        if threads > 1:
            argv += ["--threads", str(threads)]
        _run(argv)
        flags = (cflags or "-O2 -fno-math-errno -fopenmp-simd -DONNX2C_OMP_SIMD").split()
        _run([cc or os.environ.get("CC") or "cc", *flags, "-std=c11", "-fPIC", "-shared",
              *(["-pthread"] if threads > 1 else []), "-o", os.path.join(d, name + ".so"),
              os.path.join(d, name + ".c"), "-lm"])
        m = Model(d, name, threads)
    except BaseException:
        shutil.rmtree(d, ignore_errors=True)
        raise
    m._own = True
    return m
