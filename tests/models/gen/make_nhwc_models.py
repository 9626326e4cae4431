#!/usr/bin/env python3
"""Builds, with onnx.helper, NHWC graphs the way tf2onnx writes Keras models before its own optimizer.

    make_nhwc_models.py OUT_DIR [--only NAME...] [--list]

Writes OUT_DIR/NAME.onnx + OUT_DIR/NAME.json (see common.py; default cache:
tests/models/generated/onnx_nhwc). Every TF op that ONNX only has in NCHW is
wrapped in its own pair of Transposes — Conv2D / DepthwiseConv2dNative ->
Transpose(0,3,1,2), Conv, Transpose(0,2,3,1); MaxPool / AvgPool and
FusedBatchNormV3 likewise — while everything else stays in NHWC: BiasAdd as Add
of a [C] constant, Keras BatchNormalization folded to Mul/Add by [C], Relu,
Relu6 as Clip, residual Add, Pad with NHWC pads, ConcatV2 on axis 3, Mean over
axes 1, 2, ResizeNearestNeighbor with NHWC scales, Flatten as Reshape, Dense as
MatMul + Add, Softmax. ferry's optimizer
(propagate_transposes) must leave no Transpose between convolutions.

Each model's sidecar also records "boundary_transposes": how many Transposes
may remain after optimizing (those at the graph's NHWC inputs and outputs).
Weights are seeded (numpy default_rng(0) per model).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import GEN_DIR, generator_hash, temp_path, write_sidecar  # noqa: E402
from onnx_builder import GraphBuilder  # noqa: E402

TO_NCHW, TO_NHWC = [0, 3, 1, 2], [0, 2, 3, 1]
MODELS = {}


def model(boundary):
    """Registers fn(rng) -> GraphBuilder; `boundary`: Transposes allowed after optimizing."""

    def register(fn):
        MODELS[fn.__name__] = (fn, boundary)
        return fn

    return register


def w(rng, *shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (rng.standard_normal(shape) * (scale or 1.0 / np.sqrt(fan_in))).astype(np.float32)


class Nhwc:
    """tf2onnx's translations of Keras layers on NHWC tensors."""

    def __init__(self, g, rng):
        self.g, self.rng = g, rng

    def nchw(self, op, x, *inputs, **attrs):
        """An NCHW-only ONNX op on an NHWC tensor: Transpose, op, Transpose."""
        t = self.g.op("Transpose", [x], perm=TO_NCHW)
        return self.g.op("Transpose", [self.g.op(op, [t, *inputs], **attrs)], perm=TO_NHWC)

    def conv(self, x, cin, cout, k=3, stride=1, group=1, bias=True, padding="SAME"):
        """Conv2D (+ BiasAdd as an NHWC Add of a [C] constant)."""
        kw = {"auto_pad": "SAME_UPPER"} if padding == "SAME" else {}
        y = self.nchw("Conv", x, self.g.const(w(self.rng, cout, cin // group, k, k)), kernel_shape=[k, k],
                      strides=[stride, stride], group=group, **kw)
        return self.g.op("Add", [y, self.g.const(w(self.rng, cout, scale=0.1))]) if bias else y

    def bn_mul_add(self, x, c):
        """Keras BatchNormalization at inference, as tf2onnx folds it: x * s + t with [C] constants."""
        s = self.g.const(self.rng.uniform(0.5, 1.5, c).astype(np.float32))
        return self.g.op("Add", [self.g.op("Mul", [x, s]), self.g.const(w(self.rng, c, scale=0.1))])

    def fused_bn(self, x, c):
        """FusedBatchNormV3: ONNX BatchNormalization is NCHW, so it gets its own Transposes."""
        r = self.rng
        return self.nchw("BatchNormalization", x, self.g.const(r.uniform(0.5, 1.5, c)),
                         self.g.const(w(r, c, scale=0.1)), self.g.const(w(r, c, scale=0.1)),
                         self.g.const(r.uniform(0.5, 2.0, c)), epsilon=1e-3)

    def relu6(self, x):
        return self.g.op("Clip", [x, self.g.const(np.float32(0)), self.g.const(np.float32(6))])


@model(boundary=2)
def nhwc_conv_net(rng):
    """Conv + BiasAdd + Relu x3, a MaxPool between, NHWC output: one Transpose at each end."""
    g = GraphBuilder("nhwc_conv_net", opset=13)
    k = Nhwc(g, rng)
    x = g.input("input_1", [1, 12, 12, 3])
    y = g.op("Relu", [k.conv(x, 3, 8, stride=2)])
    y = k.nchw("MaxPool", y, kernel_shape=[2, 2], strides=[1, 1], auto_pad="SAME_UPPER")
    y = g.op("Relu", [k.conv(y, 8, 8)])
    y = k.conv(y, 8, 4, k=1)
    g.output(g.op("Sigmoid", [y]), "out_nhwc")
    return g


@model(boundary=2)
def nhwc_resnet_block(rng):
    """Keras ResNet V1 blocks: Conv-BN-Relu, residual Adds (identity and projection shortcut),
    BN both as Mul/Add and as FusedBatchNorm. NHWC output: one Transpose at each end."""
    g = GraphBuilder("nhwc_resnet_block", opset=13)
    k = Nhwc(g, rng)
    x = g.input("input_1", [2, 8, 8, 4])
    stem = g.op("Relu", [k.bn_mul_add(k.conv(x, 4, 8, bias=False), 8)])

    def block(x, cin, cout, stride, fused):
        bn = k.fused_bn if fused else k.bn_mul_add
        y = g.op("Relu", [bn(k.conv(x, cin, cout, stride=stride, bias=False), cout)])
        y = bn(k.conv(y, cout, cout, bias=False), cout)
        short = x if stride == 1 and cin == cout else bn(k.conv(x, cin, cout, k=1, stride=stride, bias=False), cout)
        return g.op("Relu", [g.op("Add", [y, short])])

    y = block(stem, 8, 8, 1, fused=False)
    y = block(y, 8, 16, 2, fused=True)
    y = k.conv(y, 16, 16)  # NHWC out through a last conv: its Transpose stays at the output
    g.output(y, "features")
    return g


@model(boundary=1)
def nhwc_mobilenet_block(rng):
    """MobileNetV2 inverted residuals: 1x1 expand, 3x3 depthwise (group = C), Relu6 as Clip,
    1x1 project, residual Add; a Keras Rescaling (Mul/Add by scalars) at the input."""
    g = GraphBuilder("nhwc_mobilenet_block", opset=13)
    k = Nhwc(g, rng)
    x = g.input("input_1", [1, 10, 10, 3], dist="uniform", low=0.0, high=255.0)
    x = g.op("Add", [g.op("Mul", [x, g.const(np.float32(1 / 127.5))]), g.const(np.float32(-1))])
    y = k.relu6(k.bn_mul_add(k.conv(x, 3, 8, stride=2, bias=False), 8))

    def inverted_residual(x, c, expand):
        h = k.relu6(k.bn_mul_add(k.conv(x, c, c * expand, k=1, bias=False), c * expand))
        h = k.relu6(k.bn_mul_add(k.conv(h, c * expand, c * expand, group=c * expand, bias=False), c * expand))
        h = k.bn_mul_add(k.conv(h, c * expand, c, k=1, bias=False), c)
        return g.op("Add", [x, h])

    y = inverted_residual(y, 8, 4)
    y = inverted_residual(y, 8, 2)
    y = k.relu6(k.conv(y, 8, 16, k=1))
    g.output(g.op("ReduceMean", [y], axes=[1, 2], keepdims=0), "pooled")  # [N, C]: no Transpose at the output
    return g


@model(boundary=2)
def nhwc_concat_pool_pad(rng):
    """Inception-like: ZeroPadding2D (Pad with NHWC pads) before a VALID conv, branches joined by
    ConcatV2 on axis 3, MaxPool and AvgPool, UpSampling2D (Resize with NHWC scales), Relu,
    a Softmax over channels. NHWC output."""
    g = GraphBuilder("nhwc_concat_pool_pad", opset=13)
    k = Nhwc(g, rng)
    x = g.input("input_1", [1, 9, 9, 4])
    p = g.op("Pad", [x, g.i64([0, 1, 1, 0, 0, 1, 1, 0])])
    stem = g.op("Relu", [k.conv(p, 4, 6, padding="VALID")])  # [1, 9, 9, 6]
    a = g.op("Relu", [k.conv(stem, 6, 4, k=1)])
    b = g.op("Relu", [k.conv(stem, 6, 4)])
    c = k.nchw("AveragePool", stem, kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=0)
    y = g.op("Concat", [a, b, c], axis=3)  # [1, 9, 9, 14]
    y = k.nchw("MaxPool", y, kernel_shape=[3, 3], strides=[2, 2])  # [1, 4, 4, 14]
    y = g.op("Resize", [y, "", g.const([1, 2, 2, 1])], mode="nearest")  # [1, 8, 8, 14]
    y = k.conv(y, 14, 6, k=1)
    g.output(g.op("Softmax", [y], axis=-1), "probs_nhwc")
    return g


@model(boundary=1)
def nhwc_head(rng):
    """A classifier head: conv stem, squeeze-and-excitation (Mean keepdims -> 1x1 convs ->
    sigmoid -> Mul), GlobalAveragePooling2D (ReduceMean over H, W), Dense (MatMul + Add), Softmax."""
    g = GraphBuilder("nhwc_head", opset=13)
    k = Nhwc(g, rng)
    x = g.input("input_1", [2, 8, 8, 3])
    y = g.op("Relu", [k.conv(x, 3, 8, stride=2)])
    s = g.op("ReduceMean", [y], axes=[1, 2], keepdims=1)
    s = g.op("Relu", [k.conv(s, 8, 4, k=1)])
    s = g.op("Sigmoid", [k.conv(s, 4, 8, k=1)])
    y = g.op("Mul", [y, s])
    y = g.op("Relu", [k.conv(y, 8, 16, k=1)])
    y = g.op("ReduceMean", [y], axes=[1, 2], keepdims=0)
    y = g.op("Add", [g.op("MatMul", [y, g.const(w(rng, 16, 10))]), g.const(w(rng, 10, scale=0.1))])
    g.output(g.op("Softmax", [y], axis=-1), "probs")
    return g


@model(boundary=1)
def nhwc_vgg_head(rng):
    """VGG-style: conv blocks with MaxPool, then Flatten (Reshape to [N, -1] of NHWC features),
    Dense + Relu, Dense, Softmax. Flatten order is H, W, C: the Dense weights absorb the Transpose."""
    g = GraphBuilder("nhwc_vgg_head", opset=13)
    k = Nhwc(g, rng)
    x = g.input("input_1", [2, 8, 8, 3])
    y = g.op("Relu", [k.conv(x, 3, 6)])
    y = k.nchw("MaxPool", y, kernel_shape=[2, 2], strides=[2, 2])
    y = g.op("Relu", [k.conv(y, 6, 8)])
    y = k.nchw("MaxPool", y, kernel_shape=[2, 2], strides=[2, 2])  # [2, 2, 2, 8]
    y = g.op("Reshape", [y, g.i64([-1, 32])])
    y = g.op("Relu", [g.op("Add", [g.op("MatMul", [y, g.const(w(rng, 32, 16))]), g.const(w(rng, 16, scale=0.1))])])
    y = g.op("Add", [g.op("MatMul", [y, g.const(w(rng, 16, 5))]), g.const(w(rng, 5, scale=0.1))])
    g.output(g.op("Softmax", [y], axis=-1), "probs")
    return g


@model(boundary=2)
def nhwc_deep_residual(rng):
    """Ten bottleneck blocks on one residual stream that starts at the graph input itself and ends
    at an NHWC output: the stream's Transposes end up at the input and the output only."""
    g = GraphBuilder("nhwc_deep_residual", opset=13)
    k = Nhwc(g, rng)
    x = g.input("input_1", [1, 6, 6, 8])
    y = x
    for _ in range(10):
        h = g.op("Relu", [k.bn_mul_add(k.conv(y, 8, 4, k=1, bias=False), 4)])
        h = g.op("Relu", [k.bn_mul_add(k.conv(h, 4, 4, bias=False), 4)])
        h = k.bn_mul_add(k.conv(h, 4, 8, k=1, bias=False), 8)
        y = g.op("Relu", [g.op("Add", [h, y])])
    g.output(y, "features")
    return g


SOURCES = [GEN_DIR / "make_nhwc_models.py", GEN_DIR / "onnx_builder.py", GEN_DIR / "common.py"]
MODEL_NAMES = list(MODELS)


def build(name, out_dir):
    """Builds one model into out_dir; returns the path of the .onnx file."""
    import onnx

    fn, boundary = MODELS[name]
    g = fn(np.random.default_rng(0))
    proto, specs, outputs = g.build()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.onnx"
    tmp = temp_path(path)
    onnx.save(proto, str(tmp))
    os.replace(tmp, path)  # atomically: the cache is shared by concurrent test runs
    write_sidecar(out_dir, {
        "name": name, "file": path.name, "source": "onnx_nhwc", "size": "small", "opset": g.opset,
        "inputs": specs, "outputs": outputs, "boundary_transposes": boundary,
        "note": (fn.__doc__ or "").strip(), "generator": generator_hash(*SOURCES),
    })
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME", choices=MODEL_NAMES)
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(MODEL_NAMES))
        return 0
    if not args.out_dir:
        ap.error("OUT_DIR is required")
    for name in args.only or MODEL_NAMES:
        print(build(name, args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
