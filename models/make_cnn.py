#!/usr/bin/python3
"""make_cnn.py - CNN benchmark models with random (seeded) weights, exported
from torch: a ResNet-18-like and a MobileNetV3-small-like net at 224x224, a
CRNN-like recogniser at 48x320, a DBNet-like text detector at 640x640 (FPN,
ConvTranspose upsampling), a 1-D conv audio front end on 16000 samples, and
single convolutions (per-layer micro-benchmarks). Run with /usr/bin/python3
(needs torch, onnx).

  make_cnn.py --net resnet18|mobilenetv3|crnn|dbnet|audio|conv --out DIR [--seed N]
  conv options: --cin --cout --k --stride --hw (square input) --groups

Writes DIR/model.onnx (opset 17, batch 1, every dimension fixed) and
DIR/info.json: input shape and the multiply-add count (MACs) of every
Conv, ConvTranspose and Gemm/MatMul, from the exported graph's shapes (so
GFLOP/s = 2 * MACs / time)."""
import argparse, json, os
import onnx, onnx.shape_inference
import torch
import torch.nn as nn


def conv_bn(cin, cout, k, s, groups=1, act=None):
    layers = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


class Basic(nn.Module):
    def __init__(self, cin, cout, s):
        super().__init__()
        self.a = conv_bn(cin, cout, 3, s, act=nn.ReLU)
        self.b = conv_bn(cout, cout, 3, 1)
        self.down = conv_bn(cin, cout, 1, s) if s != 1 or cin != cout else None

    def forward(self, x):
        r = x if self.down is None else self.down(x)
        return torch.relu(self.b(self.a(x)) + r)


def resnet18():
    layers = [conv_bn(3, 64, 7, 2, act=nn.ReLU), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, s in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Basic(cin, cout, s), Basic(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000)]
    return nn.Sequential(*layers)


def div8(v):
    return max(8, int(v + 4) // 8 * 8)


class SE(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.f1, self.f2 = nn.Conv2d(c, div8(c / 4), 1), nn.Conv2d(div8(c / 4), c, 1)

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        return x * nn.functional.hardsigmoid(self.f2(torch.relu(self.f1(s))))


class Bneck(nn.Module):
    def __init__(self, cin, k, exp, cout, se, hs, s):
        super().__init__()
        act = nn.Hardswish if hs else nn.ReLU
        layers = [] if exp == cin else [conv_bn(cin, exp, 1, 1, act=act)]
        layers.append(conv_bn(exp, exp, k, s, groups=exp, act=act))
        if se:
            layers.append(SE(exp))
        layers.append(conv_bn(exp, cout, 1, 1))
        self.body = nn.Sequential(*layers)
        self.res = s == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.res else y


def mobilenetv3():
    cfg = [(3, 16, 16, 1, 0, 2), (3, 72, 24, 0, 0, 2), (3, 88, 24, 0, 0, 1), (5, 96, 40, 1, 1, 2),
           (5, 240, 40, 1, 1, 1), (5, 240, 40, 1, 1, 1), (5, 120, 48, 1, 1, 1), (5, 144, 48, 1, 1, 1),
           (5, 288, 96, 1, 1, 2), (5, 576, 96, 1, 1, 1), (5, 576, 96, 1, 1, 1)]
    layers, cin = [conv_bn(3, 16, 3, 2, act=nn.Hardswish)], 16
    for k, exp, cout, se, hs, s in cfg:
        layers.append(Bneck(cin, k, exp, cout, se, hs, s))
        cin = cout
    layers += [conv_bn(96, 576, 1, 1, act=nn.Hardswish), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
               nn.Linear(576, 1024), nn.Hardswish(), nn.Linear(1024, 1000)]
    return nn.Sequential(*layers)


class Crnn(nn.Module):
    """VGG-style convolutions over a 48x320 text line, then a per-column
    linear classifier (the recurrent part of a CRNN left out)."""

    def __init__(self):
        super().__init__()
        c = [(3, 32, (2, 2)), (32, 64, (2, 2)), (64, 128, (2, 1)), (128, 128, (1, 1)),
             (128, 256, (2, 1)), (256, 256, (1, 1))]
        layers = []
        for cin, cout, s in c:
            layers += [nn.Conv2d(cin, cout, 3, s, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(256 * 3, 97)

    def forward(self, x):
        y = self.body(x)  # [1, 256, 3, 80]
        y = y.reshape(1, 256 * 3, 80).transpose(1, 2)  # [1, 80, 768]
        return self.head(y)


class DbNet(nn.Module):
    """DBNet-style detector: a strided conv backbone (1/4 .. 1/32), an FPN
    (1x1 laterals, nearest 2x upsampling added top-down, 3x3 smoothing,
    nearest upsampling to 1/4, concat) and the probability head (3x3 conv,
    two stride-2 ConvTransposes back to full size, sigmoid)."""

    def __init__(self):
        super().__init__()
        chans = [(3, 16, 2), (16, 24, 2), (24, 48, 2), (48, 96, 2), (96, 192, 2)]
        self.stages = nn.ModuleList()
        for cin, cout, s in chans:
            self.stages.append(nn.Sequential(conv_bn(cin, cout, 3, s, act=nn.ReLU),
                                             conv_bn(cout, cout, 3, 1, act=nn.ReLU)))
        self.lat = nn.ModuleList([nn.Conv2d(c, 64, 1, bias=False) for c in (24, 48, 96, 192)])
        self.smooth = nn.ModuleList([nn.Conv2d(64, 16, 3, 1, 1, bias=False) for _ in range(4)])
        self.head = nn.Sequential(conv_bn(64, 16, 3, 1, act=nn.ReLU),
                                  nn.ConvTranspose2d(16, 16, 2, 2), nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.ConvTranspose2d(16, 1, 2, 2), nn.Sigmoid())

    def forward(self, x):
        feats = []
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i > 0:
                feats.append(x)  # 1/4, 1/8, 1/16, 1/32
        up = lambda t, k: nn.functional.interpolate(t, scale_factor=k, mode='nearest')
        p = [lat(f) for lat, f in zip(self.lat, feats)]
        for i in (2, 1, 0):
            p[i] = p[i] + up(p[i + 1], 2)
        outs = [up(sm(t), 2 ** i) if i else sm(t) for i, (sm, t) in enumerate(zip(self.smooth, p))]
        return self.head(torch.cat(outs, 1))


def audio():
    """1-D conv audio front end (wav2vec-like feature encoder, 128 channels):
    16000 samples -> 49 frames."""
    layers = [nn.Conv1d(1, 128, 10, 5, bias=False), nn.BatchNorm1d(128), nn.ReLU()]
    for k, s in ((3, 2), (3, 2), (3, 2), (3, 2), (2, 2), (2, 2)):
        layers += [nn.Conv1d(128, 128, k, s, bias=False), nn.BatchNorm1d(128), nn.ReLU()]
    return nn.Sequential(*layers)


def macs(model):
    """Multiply-adds of Conv / ConvTranspose / Gemm / MatMul nodes."""
    m = onnx.shape_inference.infer_shapes(model)
    shapes = {}
    for v in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        shapes[v.name] = [d.dim_value for d in v.type.tensor_type.shape.dim]
    for t in m.graph.initializer:
        shapes[t.name] = list(t.dims)
    total = 0
    for n in m.graph.node:
        if n.op_type in ('Conv', 'ConvTranspose'):
            # Conv: every output element takes C/G*taps products (W's
            # [M, C/G, k..]); ConvTranspose: every input element is spread
            # over M/G*taps outputs (W's [C, M/G, k..])
            w = shapes[n.input[1]]
            per = 1
            for d in w[1:]:
                per *= d
            out = 1
            for d in shapes[n.output[0] if n.op_type == 'Conv' else n.input[0]]:
                out *= d
            total += out * per
        elif n.op_type in ('Gemm', 'MatMul'):
            a, y = shapes[n.input[0]], shapes[n.output[0]]
            out = 1
            for d in y:
                out *= d
            total += out * a[-1]
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--net', required=True, choices=['resnet18', 'mobilenetv3', 'crnn', 'dbnet', 'audio', 'conv'])
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--cin', type=int, default=64)
    ap.add_argument('--cout', type=int, default=64)
    ap.add_argument('--k', type=int, default=3)
    ap.add_argument('--stride', type=int, default=1)
    ap.add_argument('--hw', type=int, default=56)
    ap.add_argument('--groups', type=int, default=1)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    if a.net == 'resnet18':
        net, shape = resnet18(), (1, 3, 224, 224)
    elif a.net == 'mobilenetv3':
        net, shape = mobilenetv3(), (1, 3, 224, 224)
    elif a.net == 'crnn':
        net, shape = Crnn(), (1, 3, 48, 320)
    elif a.net == 'dbnet':
        net, shape = DbNet(), (1, 3, 640, 640)
    elif a.net == 'audio':
        net, shape = audio(), (1, 1, 16000)
    else:
        net = nn.Sequential(nn.Conv2d(a.cin, a.cout, a.k, a.stride, a.k // 2, groups=a.groups), nn.ReLU())
        shape = (1, a.cin, a.hw, a.hw)
    for mod in net.modules():  # random running statistics, so BatchNormalization is not an identity
        if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
            mod.running_mean.uniform_(-0.2, 0.2)
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.2, 0.2)
    net.eval()
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, 'model.onnx')
    with torch.no_grad():
        torch.onnx.export(net, torch.randn(*shape), path, opset_version=17, input_names=['x'],
                          output_names=['y'], do_constant_folding=True)
    model = onnx.load(path)
    onnx.checker.check_model(model)
    with open(os.path.join(a.out, 'info.json'), 'w') as f:
        json.dump({'input': list(shape), 'macs': macs(model)}, f)


if __name__ == '__main__':
    main()
