#!/usr/bin/python3
"""symbolize.py NODE_DIR CASES.txt OUT_DIR: for each line `NAME SPEC...` of
CASES.txt, copies NODE_DIR/test_NAME/model.onnx to OUT_DIR/NAME/model.onnx
(the test's output goes beside it) with input axes made symbolic. SPEC is INPUT:AXIS=SYMBOL (INPUT the position
among the graph inputs that are not initializers): that axis becomes
dim_param SYMBOL. The outputs' shapes are dropped (element types kept):
with symbolic inputs they are the compiler's to infer. CTest then runs
each copy on the node test's data set (tests/symbolic/CMakeLists.txt).
Debian's /usr/bin/python3 with python3-onnx."""
import os
import sys
import onnx


def symbolize(src, dst, specs):
    m = onnx.load(src)
    inits = {t.name for t in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    for spec in specs:
        where, name = spec.split("=", 1)
        k, axis = (int(v) for v in where.split(":"))
        dims = inputs[k].type.tensor_type.shape.dim
        if not 0 <= axis < len(dims):
            sys.exit(f"{dst}: {spec}: input {k} has rank {len(dims)}")
        dims[axis].Clear()
        dims[axis].dim_param = name
    for o in m.graph.output:
        o.type.tensor_type.ClearField("shape")
    onnx.save(m, dst)


def main(argv):
    if len(argv) != 4:
        sys.exit("usage: symbolize.py NODE_DIR CASES.txt OUT_DIR")
    with open(argv[2]) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if words:
                out = os.path.join(argv[3], words[0])
                os.makedirs(out, exist_ok=True)
                symbolize(os.path.join(argv[1], "test_" + words[0], "model.onnx"),
                          os.path.join(out, "model.onnx"), words[1:])


if __name__ == "__main__":
    main(sys.argv)
