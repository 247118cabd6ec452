#!/usr/bin/python3
"""Makes models/text/ (Debian's /usr/bin/python3), checked by CTest with
`onnx2c-caten verify` against onnxruntime (verify's random integer inputs
are tokens 0..3):
  tfidf.onnx  TfIdfVectorizer on x[3, 12] (int64) and on its first row
              (int32, 1-D): TF, IDF and TFIDF with weights, unigrams to
              trigrams (min 1 or 2), skips up to 2, ngram_indexes not in
              pool order, one pool length left out by min_gram_length"""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "text")
os.makedirs(HERE, exist_ok=True)
uni = [0, 2, 3]
bi = [0, 1, 2, 2, 3, 0, 1, 1]
tri = [0, 1, 2, 3, 3, 3, 2, 0, 1]
pool = uni + bi + tri                         # 3 unigrams, 4 bigrams, 3 trigrams
counts = [0, len(uni), len(uni) + len(bi)]
idx = [9, 0, 4, 1, 8, 2, 7, 3, 6, 5]          # a permutation of 0..9
weights = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 1.25, 2.5, 0.1]
nodes, outs = [], []
cases = [("tf", "TF", 1, 3, 2, "x"), ("idf", "IDF", 1, 2, 1, "x"), ("tfidf", "TFIDF", 2, 3, 2, "x"),
         ("tf_row", "TF", 1, 3, 1, "row")]
for name, mode, lo, hi, skip, src in cases:
    kw = dict(mode=mode, min_gram_length=lo, max_gram_length=hi, max_skip_count=skip, ngram_counts=counts,
              ngram_indexes=idx, pool_int64s=pool)
    if mode != "TF":
        kw["weights"] = weights
    nodes.append(helper.make_node("TfIdfVectorizer", [src], [name], **kw))
    outs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [3, 10] if src == "x" else [10]))
nodes = [helper.make_node("Slice", ["x", "s0", "s1", "ax"], ["r2"]),
         helper.make_node("Reshape", ["r2", "shp"], ["r1"]),
         helper.make_node("Cast", ["r1"], ["row"], to=TensorProto.INT32)] + nodes
g = helper.make_graph(nodes, "tfidf", [helper.make_tensor_value_info("x", TensorProto.INT64, [3, 12])], outs,
                      [numpy_helper.from_array(np.array([0], np.int64), "s0"),
                       numpy_helper.from_array(np.array([1], np.int64), "s1"),
                       numpy_helper.from_array(np.array([0], np.int64), "ax"),
                       numpy_helper.from_array(np.array([12], np.int64), "shp")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(HERE, "tfidf.onnx"))
