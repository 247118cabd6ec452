"""A small conv net with dynamic height and width, exported from PyTorch.

x [1, 3, H, W] -> Conv 3x3 (pad 1) -> ReLU -> MaxPool 3x3 (stride 1, pad 1)
-> Pad 1 (F.pad) -> Conv 3x3 (no pad) -> ReLU -> AvgPool 3x3 (stride 1,
pad 1) -> nearest upsample x2 (Resize), concatenated with the upsampled
first feature map -> Conv 1x1 -> y [1, 4, 2H, 2W]; and GlobalAveragePool of
the concatenation -> g [1, 16, 1, 1]. Every size is a polynomial of H and W
(stride 1 windows, whole-scale nearest resize), so one symbolic compile
serves every input size.

Also OUT/ops.onnx (Split, Tile, TopK over H and W, see ops_model), OUT/unnamed.onnx, the same with H and W unnamed, and OUT/strided.onnx, a stride-2 conv over H and W (see Strided), OUT/strided_ceil.onnx (a ceil_mode pool, pinned), OUT/detector.onnx (a DBNet-like detector, see Detector) and OUT/unet.onnx (a U-Net padding its upsampled maps to the skip connections' sizes read from the shapes, see UNet).

Writes OUT/model.onnx and OUT/test_data_set_K/{input_0,output_J}.pb for
each --shapes entry; output_J.pb are onnxruntime's outputs (runtime/ort/
ort_run.js), checked against torch's (max |diff| <= 1e-4).
Run with /usr/bin/python3 (torch, onnx, numpy), from anywhere.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "runtime", "ort", "ort_run.js")
TOL = 1e-4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3)
        self.head = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        f1 = F.relu(self.c1(x))
        f2 = F.max_pool2d(f1, 3, stride=1, padding=1)
        f3 = F.relu(self.c2(F.pad(f2, (1, 1, 1, 1), value=0.5)))
        f3 = F.avg_pool2d(f3, 3, stride=1, padding=1)
        up = torch.cat([F.interpolate(f3, scale_factor=2.0, mode="nearest"),
                        F.interpolate(f1, scale_factor=2.0, mode="nearest")], dim=1)
        return self.head(up), F.adaptive_avg_pool2d(up, 1)


class Strided(nn.Module):
    """A stride-2 conv: its output size floor((H - 1) / 2) + 1 is no
    polynomial of H: a floor symbol, kept symbolic."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 4, 3, stride=2, padding=1)

    def forward(self, x):
        return F.relu(self.c(x))


class StridedCeil(nn.Module):
    """A stride-2 max pool with ceil_mode: not followed symbolically, so
    H and W get pinned (run/verify specialise, compile names them)."""

    def forward(self, x):
        return F.max_pool2d(x, 3, stride=2, ceil_mode=True)


class Detector(nn.Module):
    """A DBNet-like detector over dynamic H and W: an encoder of stride-2
    convs (3x3, pad 1), a depthwise 5x5 stride 2, a 3x3 stride-2 max pool
    (pad 1) and a 2x2 stride-2 average pool (maps at 1/8, 1/16, 1/32, each
    size a floor of the last); an FPN (lateral 1x1 convs, nearest 2x
    upsampling added to the finer map, the levels upsampled to 1/8 and
    concatenated); a head of a 3x3 conv and two 2x2 stride-2 ConvTransposes
    with a sigmoid (the probability map at 1/2), and a globally pooled
    feature vector. The upsampled coarse maps equal the finer ones only when
    H and W are multiples of 32 (as the detector's users must feed): the
    compiler assumes it and the entry checks it. One compile serves 320x320
    and 640x480."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.dw = nn.Conv2d(16, 16, 5, stride=2, padding=2, groups=16)
        self.pw = nn.Conv2d(16, 24, 1)
        self.l8, self.l16, self.l32 = nn.Conv2d(24, 8, 1), nn.Conv2d(24, 8, 1), nn.Conv2d(24, 8, 1)
        self.fuse = nn.Conv2d(24, 8, 3, padding=1)
        self.up1 = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.up2 = nn.ConvTranspose2d(4, 1, 2, stride=2)

    def forward(self, x):
        f = F.relu(self.c1(x))
        f = F.hardswish(self.c2(f))
        f8 = F.relu(self.pw(self.dw(f)))
        f16 = F.max_pool2d(f8, 3, stride=2, padding=1)
        f32 = F.avg_pool2d(f16, 2, stride=2)
        p32 = self.l32(f32)
        p16 = self.l16(f16) + F.interpolate(p32, scale_factor=2.0, mode="nearest")
        p8 = self.l8(f8) + F.interpolate(p16, scale_factor=2.0, mode="nearest")
        cat = torch.cat([p8, F.interpolate(p16, scale_factor=2.0, mode="nearest"),
                         F.interpolate(p32, scale_factor=4.0, mode="nearest")], dim=1)
        prob = torch.sigmoid(self.up2(F.relu(self.up1(F.relu(self.fuse(cat))))))
        return prob, F.adaptive_avg_pool2d(f32, 1).flatten(1)


def ops_model(path):
    """Split, Tile and TopK over [1, 4, H, W], written with onnx.helper
    (PyTorch traces chunk sizes as a floor division or a constant): the
    concatenation [x, 2x] along W split in two equal halves, their
    difference's top 2 channels, tiled twice along H."""
    from onnx import helper, TensorProto
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    k = numpy_helper.from_array(np.array([2], np.int64), "k")
    reps = numpy_helper.from_array(np.array([1, 1, 2, 1], np.int64), "reps")
    nodes = [helper.make_node("Mul", ["x", "two"], ["x2"]),
             helper.make_node("Concat", ["x", "x2"], ["wide"], axis=3),
             helper.make_node("Split", ["wide"], ["a", "b"], axis=3),
             helper.make_node("Sub", ["a", "b"], ["d"]),
             helper.make_node("TopK", ["d", "k"], ["tv", "i"], axis=1),
             helper.make_node("Tile", ["tv", "reps"], ["v"])]
    g = helper.make_graph(nodes, "ops", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, "H", "W"])],
                          [helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, 2, "H2", "W"]),
                           helper.make_tensor_value_info("i", TensorProto.INT64, [1, 2, "H", "W"])], [two, k, reps])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, path)


def conv_relu(i, o):
    return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.ReLU())


class UNetUp(nn.Module):
    """A U-Net decoder step as the popular PyTorch ports write it: upsample,
    then F.pad by the size difference to the skip connection
    ((skip - up) // 2 on each side, from the shapes: -1 or 0 after an odd
    size's MaxPool), concatenate, convolve."""

    def __init__(self, i, o, bilinear):
        super().__init__()
        self.up = (nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True) if bilinear
                   else nn.ConvTranspose2d(i, i // 2, 2, 2))
        self.conv = conv_relu(i + i // 2 if bilinear else i, o)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        dy, dx = x2.size()[2] - x1.size()[2], x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        return self.conv(torch.cat([x2, x1], dim=1))


class UNet(nn.Module):
    """Two levels down and up: a stride-2 conv (ceil(W / 2): the upsampled
    map one longer than an odd skip, cropped by F.pad's -1) with a
    ConvTranspose back up, and a MaxPool 2x2 (floor: one shorter, padded)
    with a bilinear Upsample."""

    def __init__(self):
        super().__init__()
        self.inc, self.d1 = conv_relu(3, 4), nn.Sequential(nn.Conv2d(4, 8, 3, 2, 1), nn.ReLU())
        self.d2 = nn.Sequential(nn.MaxPool2d(2), conv_relu(8, 16))
        self.u1, self.u2, self.outc = UNetUp(16, 8, True), UNetUp(8, 4, False), nn.Conv2d(4, 2, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.d1(x1)
        return self.outc(self.u2(self.u1(self.d2(x2), x2), x1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "convnet"))
    p.add_argument("--shapes", default="12x16,21x9", help="HxW of each data set")
    a = p.parse_args()
    torch.manual_seed(0)
    m = Net().eval()
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "model.onnx")
    torch.onnx.export(m, torch.randn(1, 3, 8, 8), path, opset_version=13, input_names=["x"],
                      output_names=["y", "g"], dynamic_axes={"x": {2: "H", 3: "W"}})
    onnx.checker.check_model(onnx.load(path))
    # the same net with H and W unnamed (neither dim_value nor dim_param, as
    # many exports leave them): the compiler names them x_dim2 and x_dim3
    un = onnx.load(path)
    for k in (2, 3):
        un.graph.input[0].type.tensor_type.shape.dim[k].Clear()
    onnx.save(un, os.path.join(a.out, "unnamed.onnx"))
    ops_model(os.path.join(a.out, "ops.onnx"))
    torch.onnx.export(Strided().eval(), torch.randn(1, 3, 8, 8), os.path.join(a.out, "strided.onnx"),
                      opset_version=13, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {2: "H", 3: "W"}})
    for k, hw in enumerate(a.shapes.split(",")):
        h, w = (int(v) for v in hw.split("x"))
        d = os.path.join(a.out, f"test_data_set_{k}")
        os.makedirs(d, exist_ok=True)
        x = torch.randn(1, 3, h, w)
        with torch.no_grad():
            expect = m(x)
        t = numpy_helper.from_array(x.numpy(), "x")
        inp = os.path.join(d, "input_0.pb")
        with open(inp, "wb") as f:
            f.write(t.SerializeToString())
        subprocess.run(["node", ORT_RUN, path, d, inp], check=True)
        worst = 0.0
        for j, e in enumerate(expect):
            got = numpy_helper.to_array(onnx.load_tensor(os.path.join(d, f"output_{j}.pb")))
            assert got.shape == tuple(e.shape), (got.shape, tuple(e.shape))
            worst = max(worst, float(np.abs(got - e.numpy()).max()))
        print(f"test_data_set_{k}: x[1,3,{h},{w}]: torch-vs-onnxruntime max|diff| {worst:.3g}")
        if not worst <= TOL:
            sys.exit(f"FAIL: max diff {worst} > {TOL}")
    # made last: the data sets above keep their bytes
    torch.onnx.export(StridedCeil().eval(), torch.randn(1, 3, 8, 8), os.path.join(a.out, "strided_ceil.onnx"),
                      opset_version=13, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {2: "H", 3: "W"}})
    torch.onnx.export(Detector().eval(), torch.randn(1, 3, 64, 64), os.path.join(a.out, "detector.onnx"),
                      opset_version=13, input_names=["x"], output_names=["prob", "feat"],
                      dynamic_axes={"x": {2: "H", 3: "W"}})
    torch.onnx.export(UNet().eval(), torch.randn(1, 3, 37, 45), os.path.join(a.out, "unet.onnx"),
                      opset_version=14, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "N", 2: "H", 3: "W"}})


if __name__ == "__main__":
    main()
