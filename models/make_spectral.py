#!/usr/bin/python3
"""Makes models/spectral/ (Debian's /usr/bin/python3), checked by CTest with
`onnx2c-caten verify` against onnxruntime:
  mel.onnx  a mel spectrogram's last step: power spectrum s[4, 257] times
            MelWeightMatrix(40 bins, dft_length 512, 16 kHz, 20-7600 Hz),
            and MelWeightMatrix(8, 100, 8000, 0, 4000) as float64, both
            filter banks also as outputs"""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spectral")
os.makedirs(HERE, exist_ok=True)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


nodes = [helper.make_node("MelWeightMatrix", ["m", "n", "r", "lo", "hi"], ["w"]),
         helper.make_node("MatMul", ["s", "w"], ["mel"]),
         helper.make_node("MelWeightMatrix", ["m2", "n2", "r2", "lo2", "hi2"], ["w64"], output_datatype=11)]
g = helper.make_graph(nodes, "mel", [helper.make_tensor_value_info("s", TensorProto.FLOAT, [4, 257])],
                      [helper.make_tensor_value_info("mel", TensorProto.FLOAT, [4, 40]),
                       helper.make_tensor_value_info("w", TensorProto.FLOAT, [257, 40]),
                       helper.make_tensor_value_info("w64", TensorProto.DOUBLE, [51, 8])],
                      [const("m", np.int64(40)), const("n", np.int64(512)), const("r", np.int64(16000)),
                       const("lo", np.float32(20)), const("hi", np.float32(7600)),
                       const("m2", np.int32(8)), const("n2", np.int32(100)), const("r2", np.int32(8000)),
                       const("lo2", np.float32(0)), const("hi2", np.float32(4000))])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "mel.onnx"))
