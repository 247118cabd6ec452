#!/usr/bin/python3
"""Makes models/sample/ (Debian's /usr/bin/python3), checked by CTest with
`onnx2c-caten verify` against onnxruntime on random inputs in [-1, 1):
  gridsample.onnx  GridSample in all 18 combinations of mode (bilinear,
                   nearest, bicubic), padding_mode (zeros, border,
                   reflection) and align_corners, X[2,3,5,7], the grid
                   [2,4,6,2] scaled by 1.6 so that positions fall outside
  roialign.onnx    RoiAlign avg/max x half_pixel/output_half_pixel, 5 boxes
                   made from a random input r[5,4] (x1 = 6(r0+1), y1 =
                   5(r1+1), width 7(r2+1.2), height 6(r3+1.2); boxes reach
                   past the 12x10 image at spatial_scale 0.5 and some are
                   thinner than a pixel), batch indices [0,1,1,0,1]
  roialign_adaptive.onnx  the same boxes with sampling_ratio 0 (adaptive:
                   ceil(roi size / bins) samples per bin and roi, what
                   torchvision's roi_align(sampling_ratio=-1) exports), as
                   torchvision exports it: rois [5, 5] with the batch index
                   in column 0 (Gather, Cast to int64), aligned (half_pixel)
                   or not, avg and max, bins 2x2 and 3x4
  gridsample3d.onnx  GridSample on a volume (5-D at opset 16, which
                   onnxruntime takes; opset 20, which defines it, is past
                   the importer): bilinear (trilinear) and nearest x
                   zeros, border, reflection x align_corners,
                   X[2,3,4,5,6], the grid [2,3,4,5,3] scaled by 1.6
  roialign_edges.onnx  sampling_ratio 0 on an empty, an inverted, a
                   whole-image, a larger roi and one three times the
                   image's size, data below zero"""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample")
os.makedirs(HERE, exist_ok=True)
F = TensorProto.FLOAT


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def save(nodes, name, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))


nodes, outs = [helper.make_node("Mul", ["grid", "k"], ["g"])], []
for mode in ["bilinear", "nearest", "bicubic"]:
    for pad in ["zeros", "border", "reflection"]:
        for align in [0, 1]:
            y = f"{mode}_{pad}_{align}"
            nodes.append(helper.make_node("GridSample", ["x", "g"], [y], mode=mode, padding_mode=pad,
                                          align_corners=align))
            outs.append(helper.make_tensor_value_info(y, F, [2, 3, 4, 6]))
save(nodes, "gridsample",
     [helper.make_tensor_value_info("x", F, [2, 3, 5, 7]), helper.make_tensor_value_info("grid", F, [2, 4, 6, 2])],
     outs, [const("k", np.float32(1.6))])

# boxes: [x1, y1, x2, y2] = [6(r0+1), 5(r1+1), x1 + 7(r2+1.2), y1 + 6(r3+1.2)]
nodes = [helper.make_node("Add", ["r", "off"], ["r1"]), helper.make_node("Mul", ["r1", "scale"], ["r2"]),
         helper.make_node("Slice", ["r2", "s0", "s2", "ax"], ["xy1"]),
         helper.make_node("Slice", ["r2", "s2", "s4", "ax"], ["wh"]),
         helper.make_node("Add", ["xy1", "wh"], ["xy2"]),
         helper.make_node("Concat", ["xy1", "xy2"], ["rois"], axis=1)]
outs = []
for mode in ["avg", "max"]:
    for ctm in ["half_pixel", "output_half_pixel"]:
        y = f"{mode}_{ctm}"
        nodes.append(helper.make_node("RoiAlign", ["x", "rois", "b"], [y], mode=mode,
                                      coordinate_transformation_mode=ctm, output_height=3, output_width=4,
                                      sampling_ratio=2, spatial_scale=0.5))
        outs.append(helper.make_tensor_value_info(y, F, [5, 3, 3, 4]))
save(nodes, "roialign",
     [helper.make_tensor_value_info("x", F, [2, 3, 10, 12]), helper.make_tensor_value_info("r", F, [5, 4])],
     outs,
     [const("off", np.array([1, 1, 1.2, 1.2], np.float32)), const("scale", np.array([6, 5, 7, 6], np.float32)),
      const("s0", np.array([0], np.int64)), const("s2", np.array([2], np.int64)),
      const("s4", np.array([4], np.int64)), const("ax", np.array([1], np.int64)),
      const("b", np.array([0, 1, 1, 0, 1], np.int64))])

# torchvision-style: rois [K, 5] = (batch index, x1, y1, x2, y2), sampling_ratio 0
nodes = nodes[:6] + [helper.make_node("Concat", ["bf", "rois"], ["rois5"], axis=1),
                     helper.make_node("Gather", ["rois5", "zero"], ["b0"], axis=1),
                     helper.make_node("Cast", ["b0"], ["bi"], to=TensorProto.INT64),
                     helper.make_node("Slice", ["rois5", "s1", "s5", "ax"], ["boxes"])]
outs = []
for mode in ["avg", "max"]:
    for ctm in ["half_pixel", "output_half_pixel"]:
        for oh, ow in [(2, 2), (3, 4)]:
            y = f"{mode}_{ctm}_{oh}x{ow}"
            nodes.append(helper.make_node("RoiAlign", ["x", "boxes", "bi"], [y], mode=mode,
                                          coordinate_transformation_mode=ctm, output_height=oh, output_width=ow,
                                          sampling_ratio=0, spatial_scale=0.5))
            outs.append(helper.make_tensor_value_info(y, F, [5, 3, oh, ow]))
save(nodes, "roialign_adaptive",
     [helper.make_tensor_value_info("x", F, [2, 3, 10, 12]), helper.make_tensor_value_info("r", F, [5, 4])],
     outs,
     [const("off", np.array([1, 1, 1.2, 1.2], np.float32)), const("scale", np.array([6, 5, 7, 6], np.float32)),
      const("s0", np.array([0], np.int64)), const("s2", np.array([2], np.int64)),
      const("s4", np.array([4], np.int64)), const("ax", np.array([1], np.int64)),
      const("s1", np.array([1], np.int64)), const("s5", np.array([5], np.int64)), const("zero", np.int64(0)),
      const("bf", np.array([[0], [1], [1], [0], [1]], np.float32))])

# adaptive sampling on an empty, an inverted, a whole-image, a larger roi
# and one about three times the image's size (constants: the compiler
# computes as many samples as it needs; it was refused at run time, the
# differential fuzzer), on data below zero (max mode must not see the
# samples past a roi's count, nor an empty roi's)
nodes, outs = [helper.make_node("Sub", ["x", "one"], ["xm"])], []
for mode in ["avg", "max"]:
    for ctm in ["half_pixel", "output_half_pixel"]:
        y = f"{mode}_{ctm}"
        nodes.append(helper.make_node("RoiAlign", ["xm", "rois", "b"], [y], mode=mode, coordinate_transformation_mode=ctm,
                                      output_height=2, output_width=3, sampling_ratio=0))
        outs.append(helper.make_tensor_value_info(y, F, [5, 2, 2, 3]))
save(nodes, "roialign_edges", [helper.make_tensor_value_info("x", F, [1, 2, 6, 7])], outs,
     [const("one", np.float32(1)), const("b", np.zeros(5, np.int64)),
      const("rois", np.array([[2, 2, 2, 2], [3, 3, 1, 1], [0, 0, 7, 6], [-1, -1, 7.5, 6.5],
                              [-5.5, -4, 16, 13.5]], np.float32))])

# GridSample on volumes (5-D; opset 16, as the importer reads opsets up to 18)
nodes, outs = [helper.make_node("Mul", ["grid", "k"], ["g"])], []
for mode in ["bilinear", "nearest"]:
    for pad in ["zeros", "border", "reflection"]:
        for align in [0, 1]:
            y = f"{mode}_{pad}_{align}"
            nodes.append(helper.make_node("GridSample", ["x", "g"], [y], mode=mode, padding_mode=pad,
                                          align_corners=align))
            outs.append(helper.make_tensor_value_info(y, F, [2, 3, 3, 4, 5]))
g = helper.make_graph(nodes, "gridsample3d", [helper.make_tensor_value_info("x", F, [2, 3, 4, 5, 6]),
                                              helper.make_tensor_value_info("grid", F, [2, 3, 4, 5, 3])],
                      outs, [const("k", np.float32(1.6))])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]), os.path.join(HERE, "gridsample3d.onnx"))
