"""Detection post-processing with NonZero and NonMaxSuppression, H and W dynamic.

x [1, 3, H, W] -> two 3x3 convs (ReLU) -> a box head (1x1 conv, 4
channels decoded to corners [y1, x1, y2, x2] around each position) and a
score head (1x1 conv, sigmoid) -> the best K = 16 positions (TopK over
H*W) -> those scoring above 0.5 (NonZero) -> their boxes (Gather) ->
NonMaxSuppression (IoU 0.3, at most 10 boxes) -> the selected boxes and
scores (Gather along the run-time length). Outputs:
  boxes [n, 4], scores [n] (n: selected, value-dependent),
  cand [m] (the candidates' positions in H*W, m: value-dependent).

PyTorch 1.13 exports the network up to the candidates (NonZero, Gather,
TopK); torchvision is not needed: NonMaxSuppression and the gathers after
it are added with onnx.helper. Writes OUT/model.onnx and
OUT/test_data_set_K/{input_0,output_J}.pb for each --shapes entry;
output_J.pb are onnxruntime's outputs (runtime/ort/ort_run.js), their
candidate outputs checked against torch's. Each data set is required to
select some boxes and suppress some (else the test would prove little).
Also OUT/gather_len.onnx and OUT/refused.onnx (see small_models).
Run with /usr/bin/python3 (torch, onnx, numpy), from anywhere.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "runtime", "ort", "ort_run.js")
K = 16
THRESHOLD = 0.5


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.box = nn.Conv2d(8, 4, 1)
        self.score = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        f = F.relu(self.c2(F.relu(self.c1(x))))
        b = self.box(f)
        h, w = x.shape[2], x.shape[3]
        ys = torch.arange(h).view(1, h, 1).expand(1, h, w).float()  # an int Range: H stays symbolic
        xs = torch.arange(w).view(1, 1, w).expand(1, h, w).float()
        cy, cx = ys + torch.tanh(b[:, 0]), xs + torch.tanh(b[:, 1])
        hh, hw = 2.0 + 4.0 * torch.sigmoid(b[:, 2]), 2.0 + 4.0 * torch.sigmoid(b[:, 3])
        boxes = torch.stack([cy - hh, cx - hw, cy + hh, cx + hw], dim=3).reshape(1, -1, 4)
        scores = torch.sigmoid(self.score(f)).reshape(1, -1)
        top, idx = scores.topk(K, dim=1)
        keep = torch.nonzero(top[0] > THRESHOLD)[:, 0]
        cand = idx[0][keep]
        return boxes[0][cand], top[0][keep], cand


def add_nms(path):
    """Appends NonMaxSuppression over the candidates and the gathers of the
    selected boxes and scores."""
    m = onnx.load(path)
    g = m.graph
    consts = [numpy_helper.from_array(np.array([10], np.int64), "max_out"),
              numpy_helper.from_array(np.array([0.3], np.float32), "iou"),
              numpy_helper.from_array(np.array([0], np.int64), "ax0"),
              numpy_helper.from_array(np.array([0, 1], np.int64), "ax01"),
              numpy_helper.from_array(np.array(2, np.int64), "two")]
    g.initializer.extend(consts)
    g.node.extend([
        helper.make_node("Unsqueeze", ["cand_boxes", "ax0"], ["nms_boxes"]),
        helper.make_node("Unsqueeze", ["cand_scores", "ax01"], ["nms_scores"]),
        helper.make_node("NonMaxSuppression", ["nms_boxes", "nms_scores", "max_out", "iou"], ["sel"]),
        helper.make_node("Gather", ["sel", "two"], ["sel_box"], axis=1),
        helper.make_node("Gather", ["cand_boxes", "sel_box"], ["boxes"], axis=0),
        helper.make_node("Gather", ["cand_scores", "sel_box"], ["scores"], axis=0),
    ])
    outs = {o.name: o for o in g.output}
    del g.output[:]
    g.output.extend([helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["n", 4]),
                     helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["n"]), outs["cand"]])
    onnx.checker.check_model(m)
    onnx.save(m, path)


def small_models(out):
    """Two models written with onnx.helper around a run-time length:
    OUT/gather_len.onnx: y = Gather(Compress(x, x > 0), idx) — indices
    into the kept values, checked against their run-time count (an index
    past it is the index error, as in onnxruntime), and the count through
    element-wise ops, Transpose and Unsqueeze: z = Unsqueeze(Neg(kept)).
    OUT/refused.onnx: ReduceSum over a NonZero output, which the compiler
    refuses (a reduction cannot take a run-time length yet)."""
    zero = numpy_helper.from_array(np.array(0, np.float32), "zero")
    ax = numpy_helper.from_array(np.array([1], np.int64), "ax")
    nodes = [helper.make_node("Greater", ["x", "zero"], ["pos"]),
             helper.make_node("Compress", ["x", "pos"], ["kept"], axis=0),
             helper.make_node("Gather", ["kept", "idx"], ["y"], axis=0),
             helper.make_node("Neg", ["kept"], ["neg"]),
             helper.make_node("Unsqueeze", ["neg", "ax"], ["col"]),
             helper.make_node("Transpose", ["col"], ["z"], perm=[1, 0])]
    g = helper.make_graph(nodes, "gather_len",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10]),
                           helper.make_tensor_value_info("idx", TensorProto.INT64, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3]),
                           helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, "n"])], [zero, ax])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, "gather_len.onnx"))
    x = np.array([1, -2, 3, -4, 5, 6, -7, 8, -9, 10], np.float32)  # 6 kept
    for name, arr in (("x", x), ("idx_ok", np.array([5, -6, 2], np.int64)),
                      ("idx_past", np.array([0, 6, 1], np.int64))):
        with open(os.path.join(out, f"gather_len_{name}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, "idx" if name != "x" else "x").SerializeToString())
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("ReduceSum", ["nz"], ["s"], keepdims=0)]
    g = helper.make_graph(nodes, "refused", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("s", TensorProto.INT64, [])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, "refused.onnx"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "detect"))
    p.add_argument("--shapes", default="12x16,21x9", help="HxW of each data set")
    a = p.parse_args()
    torch.manual_seed(0)
    m = Head().eval()
    with torch.no_grad():
        m.score.weight *= 30.0  # scores spread over (0, 1): some of the K best below the threshold
        m.score.bias.fill_(-3.5)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "model.onnx")
    torch.onnx.export(m, torch.randn(1, 3, 8, 8), path, opset_version=13, input_names=["x"],
                      output_names=["cand_boxes", "cand_scores", "cand"], dynamic_axes={"x": {2: "H", 3: "W"}})
    add_nms(path)
    small_models(a.out)
    for k, hw in enumerate(a.shapes.split(",")):
        h, w = (int(v) for v in hw.split("x"))
        d = os.path.join(a.out, f"test_data_set_{k}")
        os.makedirs(d, exist_ok=True)
        x = torch.randn(1, 3, h, w)
        with torch.no_grad():
            _, _, cand = m(x)
        inp = os.path.join(d, "input_0.pb")
        with open(inp, "wb") as f:
            f.write(numpy_helper.from_array(x.numpy(), "x").SerializeToString())
        subprocess.run(["node", ORT_RUN, path, d, inp], check=True)
        got = [numpy_helper.to_array(onnx.load_tensor(os.path.join(d, f"output_{j}.pb"))) for j in range(3)]
        if not np.array_equal(got[2], cand.numpy()):
            sys.exit(f"FAIL: candidates differ from torch's: {got[2]} vs {cand.numpy()}")
        n, c = got[0].shape[0], got[2].shape[0]
        print(f"test_data_set_{k}: x[1,3,{h},{w}]: {c} candidates, {n} selected")
        if not 0 < n < c < K:
            sys.exit(f"FAIL: {n} of {c} candidates selected: the data set tests too little")


if __name__ == "__main__":
    main()
