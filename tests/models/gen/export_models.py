#!/usr/bin/env python3
"""Exports the end-to-end model set to ONNX with torch.onnx.export.

    export_models.py OUT_DIR [--size small|full] [--only NAME...] [--list]

Writes OUT_DIR/NAME.onnx and OUT_DIR/NAME.json (input specs, see common.py).
Exporter: the TorchScript one (dynamo=False), opset 17, eval mode, seed 0;
torchvision models have random weights (weights=None: nothing downloads).

BatchNorm statistics are calibrated on seeded random batches before export
(a few train-mode forward passes with momentum=None), so activations stay O(1)
through deep random networks as they would in a trained one; otherwise eval-mode
BN with mean 0 / var 1 lets residual nets blow up and comparisons at 1e-4 become
meaningless.

--size small (the default test suite) keeps every op pattern of the family but
shrinks resolution (32x32 / 64x64 / 75x75), width, depth or sequence length so
the reference interpreter runs the whole set in a few minutes; --size full is
the published architecture at its usual input size, batch 1. Small variants:
  10-class heads; ResNet-50 width_per_group 16; MobileNets width 0.5;
  DenseNet-121 growth rate 16; VGG-11 at 1/8 width, 64x64, small classifier;
  ShuffleNetV2 x0.5 (full: x1.0); ConvNeXt/ViT/Swin with 2-4 narrow blocks;
  DeepLabV3 64x64 (full 520x520); BERT/DistilBERT/GPT-2 with 2 layers, hidden
  64, 2 heads, seq 16, vocab 128 (full: base size, seq 128); YOLO 64x64 width 4
  (full: 640x640 width 16, 80 classes).

Each sidecar also carries "rtol", the comparison tolerance (see tolerance()).
With torch 2.15 the TorchScript exporter still works offline; it only warns
that it is deprecated.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import GEN_DIR, generator_hash, input_spec, make_inputs, temp_path, write_sidecar  # noqa: E402

OPSET = 17


@dataclass
class Built:
    module: object
    inputs: list  # InputSpecs
    outputs: list  # output names
    dynamic_axes: dict = field(default_factory=dict)
    note: str = ""


def _image(h, w=None, name="input", dist="normal"):
    kw = {"low": 0.0, "high": 1.0} if dist == "uniform" else {}
    return [input_spec(name, (1, 3, h, w or h), "float32", dist, **kw)]


def calibrate_bn(model, image_shape, steps=2):
    """Sets BatchNorm running stats to the batch statistics of seeded N(0,1) inputs.

    Small inputs leave 1x1 or 2x2 feature maps in the last stages, so the batch
    must be large (32) for per-channel variances that are not noise; at full
    resolution 8 images give enough samples per channel and keep export fast."""
    import torch
    from torch import nn

    batch = 32 if image_shape[-1] * image_shape[-2] <= 128 * 128 else 8
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative average over the calibration steps
        bn.train()
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _ in range(steps):
            model(torch.randn((batch,) + tuple(image_shape[1:]), generator=gen))
    model.eval()


class OutputOf:
    """Wraps a module returning a dict (torchvision segmentation) to return one entry."""

    def __new__(cls, module, key):
        import torch

        class _Wrap(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = module

            def forward(self, x):
                return self.m(x)[key]

        return _Wrap()


# --- the families ----------------------------------------------------------------
# Each builder takes size ("small" | "full") and returns a Built.


def _tv(ctor_name, small_kw, full_kw, small_hw, full_hw, out="logits"):
    def build(size):
        from torchvision import models

        kw, hw = (small_kw, small_hw) if size == "small" else (full_kw, full_hw)
        if "_growth_rate" in kw:  # DenseNet-121's block layout at a smaller growth rate
            kw = dict(kw)
            m = models.DenseNet(kw.pop("_growth_rate"), (6, 12, 24, 16), 32, **kw)
        else:
            m = getattr(models, ctor_name)(weights=None, **kw)
        m.eval()
        ins = _image(hw)
        calibrate_bn(m, ins[0]["shape"])
        return Built(m, ins, [out])

    return build


def _vgg11(size):
    from torch import nn
    from torchvision import models
    from torchvision.models.vgg import VGG, make_layers

    if size == "full":
        m = models.vgg11(weights=None)
        return Built(m.eval(), _image(224), ["logits"])
    # VGG-11's layer list at 1/8 width; 64x64 input leaves 2x2 features, so the
    # adaptive pool is (2, 2) -- an identity AveragePool, like (7, 7) on 7x7 at 224.
    cfg = [8, "M", 16, "M", 32, 32, "M", 64, 64, "M", 64, 64, "M"]
    m = VGG(make_layers(cfg), num_classes=10)
    m.avgpool = nn.AdaptiveAvgPool2d((2, 2))
    m.classifier = nn.Sequential(nn.Linear(64 * 4, 64), nn.ReLU(True), nn.Dropout(),
                                 nn.Linear(64, 64), nn.ReLU(True), nn.Dropout(), nn.Linear(64, 10))
    return Built(m.eval(), _image(64), ["logits"])


def _convnext(size):
    from torchvision import models
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt

    if size == "full":
        return Built(models.convnext_tiny(weights=None).eval(), _image(224), ["logits"])
    cfg = [CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, 128, 2),
           CNBlockConfig(128, None, 1)]
    return Built(ConvNeXt(cfg, num_classes=10).eval(), _image(32), ["logits"])


def _random_head(head, model):
    """torchvision zero-initialises ViT's classifier; an all-zero output would compare
    equal whatever the network computed, so give it random weights."""
    import torch

    torch.nn.init.normal_(head.weight, 0.0, 0.05)
    torch.nn.init.normal_(head.bias, 0.0, 0.05)
    return model


def _vit(size):
    from torchvision import models
    from torchvision.models.vision_transformer import VisionTransformer

    if size == "full":
        m = models.vit_b_16(weights=None)
        return Built(_random_head(m.heads.head, m).eval(), _image(224), ["logits"])
    m = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=64,
                          mlp_dim=128, num_classes=10)
    return Built(_random_head(m.heads.head, m).eval(), _image(32), ["logits"])


def _swin(size):
    from torchvision import models
    from torchvision.models.swin_transformer import SwinTransformer

    if size == "full":
        return Built(models.swin_t(weights=None).eval(), _image(224), ["logits"])
    # 32x32 -> 8x8 tokens: stage 1 has real shifted windows (window 4, shift 2),
    # stage 2 (4x4) has window == feature map (shift dropped), stage 3 (2x2) a clipped window.
    m = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2, 2], num_heads=[2, 2, 4],
                        window_size=[4, 4], stochastic_depth_prob=0.0, num_classes=10)
    return Built(m.eval(), _image(32), ["logits"])


def _deeplab(size):
    from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large

    kw = {"num_classes": 21} if size == "full" else {"num_classes": 4}
    m = deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, aux_loss=False, **kw)
    ins = _image(520 if size == "full" else 64)
    calibrate_bn(m, ins[0]["shape"])
    return Built(OutputOf(m, "out").eval(), ins, ["out"])


def _bert(size):
    from torch_nets import Bert

    if size == "full":
        vocab, hidden, layers, heads, inter, seq = 30522, 768, 12, 12, 3072, 128
    else:
        vocab, hidden, layers, heads, inter, seq = 128, 64, 2, 2, 128, 16
    m = Bert(vocab, hidden, layers, heads, inter, max_pos=max(512, seq) if size == "full" else 32)
    ins = [input_spec("input_ids", (1, seq), "int64", "randint", low=0, high=vocab),
           input_spec("attention_mask", (1, seq), "int64", "mask", valid=seq - seq // 4),
           input_spec("token_type_ids", (1, seq), "int64", "randint", low=0, high=2)]
    return Built(m.eval(), ins, ["last_hidden_state", "pooler_output"])


def _distilbert(size):
    from torch_nets import DistilBert

    if size == "full":
        vocab, dim, layers, heads, hidden, seq = 30522, 768, 6, 12, 3072, 128
    else:
        vocab, dim, layers, heads, hidden, seq = 128, 64, 2, 2, 128, 16
    m = DistilBert(vocab, dim, layers, heads, hidden, max_pos=512 if size == "full" else 32)
    ins = [input_spec("input_ids", (1, seq), "int64", "randint", low=0, high=vocab),
           input_spec("attention_mask", (1, seq), "int64", "mask", valid=seq - seq // 4)]
    return Built(m.eval(), ins, ["last_hidden_state"])


def _gpt2(size):
    from torch_nets import Gpt2

    if size == "full":
        vocab, dim, layers, heads, seq, max_pos = 50257, 768, 12, 12, 128, 1024
    else:
        vocab, dim, layers, heads, seq, max_pos = 128, 64, 2, 2, 16, 32
    m = Gpt2(vocab, dim, layers, heads, max_pos)
    ins = [input_spec("input_ids", (1, seq), "int64", "randint", low=0, high=vocab)]
    # Sequence length stays symbolic, so the causal mask is built in the graph
    # (Shape -> ConstantOfShape -> Trilu -> Where) rather than folded to a constant.
    dyn = {"input_ids": {1: "seq"}, "logits": {1: "seq"}}
    return Built(m.eval(), ins, ["logits"], dyn, "sequence axis is dynamic ('seq')")


def _encoder_dynamic(size):
    """nn.TransformerEncoderLayer (batch_first) exported with dynamic batch and sequence axes: the
    head split/merge Reshapes take their targets from Shape -> Gather -> Concat chains."""
    import torch
    from torch import nn

    dim, heads, seq = (768, 12, 128) if size == "full" else (64, 4, 16)
    m = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, activation="gelu",
                                                         batch_first=True), 2, enable_nested_tensor=False)
    ins = [input_spec("x", (2, seq, dim), "float32", "normal")]
    dyn = {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
    return Built(m.eval(), ins, ["y"], dyn, "batch and sequence axes are dynamic")


def _mha_dynamic(size):
    """nn.MultiheadAttention alone, sequence-first [S, B, E] (its default), dynamic axes, a key padding mask."""
    import torch
    from torch import nn

    class Mha(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.mha = nn.MultiheadAttention(dim, heads, dropout=0.0)

        def forward(self, x, pad):
            return self.mha(x, x, x, key_padding_mask=pad, need_weights=False)[0]

    dim, heads, seq = (768, 12, 128) if size == "full" else (64, 4, 16)
    ins = [input_spec("x", (seq, 2, dim), "float32", "normal"), input_spec("pad", (2, seq), "bool", "bool")]
    dyn = {"x": {0: "seq", 1: "batch"}, "pad": {0: "batch", 1: "seq"}, "y": {0: "seq", 1: "batch"}}
    return Built(Mha(dim, heads).eval(), ins, ["y"], dyn, "batch and sequence axes are dynamic")


def _yolo(size):
    from torch_nets import Yolo

    width, nc, s = (16, 80, 640) if size == "full" else (4, 3, 64)
    m = Yolo(width, nc, s)
    ins = _image(s, name="images", dist="uniform")
    calibrate_bn(m, ins[0]["shape"])
    return Built(m.eval(), ins, ["detections"])


BUILDERS = {
    "resnet18": _tv("resnet18", {"num_classes": 10}, {}, 32, 224),
    "resnet50": _tv("resnet50", {"num_classes": 10, "width_per_group": 16}, {}, 32, 224),
    "mobilenet_v2": _tv("mobilenet_v2", {"num_classes": 10, "width_mult": 0.5}, {}, 32, 224),
    "mobilenet_v3_small": _tv("mobilenet_v3_small", {"num_classes": 10, "width_mult": 0.5}, {}, 32, 224),
    "mobilenet_v3_large": _tv("mobilenet_v3_large", {"num_classes": 10, "width_mult": 0.5}, {}, 32, 224),
    "efficientnet_b0": _tv("efficientnet_b0", {"num_classes": 10}, {}, 32, 224),
    "densenet121": _tv("densenet121", {"num_classes": 10, "_growth_rate": 16}, {}, 32, 224),
    "googlenet": _tv("googlenet", {"num_classes": 10, "aux_logits": False, "init_weights": True},
                     {"aux_logits": False, "init_weights": True}, 32, 224),
    "inception_v3": _tv("inception_v3", {"num_classes": 10, "aux_logits": False, "init_weights": True},
                        {"aux_logits": False, "init_weights": True}, 75, 299),
    "vgg11": _vgg11,
    "squeezenet1_1": _tv("squeezenet1_1", {"num_classes": 10}, {}, 64, 224),
    "shufflenet_v2": _tv("shufflenet_v2_x0_5", {"num_classes": 10}, {}, 32, 224),
    "regnet_y_400mf": _tv("regnet_y_400mf", {"num_classes": 10}, {}, 32, 224),
    "convnext_tiny": _convnext,
    "vit_b_16": _vit,
    "swin_t": _swin,
    "deeplabv3_mobilenet_v3": _deeplab,
    "bert": _bert,
    "distilbert": _distilbert,
    "gpt2": _gpt2,
    "encoder_dynamic": _encoder_dynamic,
    "mha_dynamic": _mha_dynamic,
    "yolo": _yolo,
}
MODEL_NAMES = list(BUILDERS)
SOURCES = [GEN_DIR / "export_models.py", GEN_DIR / "torch_nets.py", GEN_DIR / "common.py"]


def export(name, size, out_dir):
    """Exports one model; returns the path of the .onnx file."""
    import onnx
    import torch

    torch.manual_seed(0)
    built = BUILDERS[name](size)
    built.module.eval()
    example = tuple(torch.from_numpy(a) for a in make_inputs(built.inputs, seed=0).values())
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.onnx"
    tmp = temp_path(path)  # renamed into place once complete
    # Not under no_grad: that would let nn.MultiheadAttention take its fused fast
    # path (aten::_native_multi_head_attention), which the exporter cannot translate.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(built.module, example, str(tmp), opset_version=OPSET, dynamo=False,
                          input_names=[s["name"] for s in built.inputs], output_names=built.outputs,
                          dynamic_axes=built.dynamic_axes or None, do_constant_folding=True)
    onnx.checker.check_model(str(tmp))
    meta = {
        "name": name, "file": path.name, "source": "torch", "size": size, "opset": OPSET,
        "inputs": built.inputs, "outputs": built.outputs, "note": built.note,
        "generator": generator_hash(*SOURCES),
    }
    meta.update(tolerance(built, example, tmp))
    os.replace(tmp, path)
    write_sidecar(out_dir, meta)
    return path


def tolerance(built, example, onnx_path):
    """The comparison tolerance this network deserves, from the oracle's own rounding error.

    Random deep networks can amplify rounding: a 1e-7 relative change of the
    input of small Inception-V3 moves its logits by ~4e-5, and ONNX Runtime's
    f32 result is ~2e-4 away from the exact (f64) one. Two correct f32
    implementations then differ by about that much. So: run the torch module
    in f64 on the test inputs, measure ONNX Runtime's f32 error against it, and
    keep rtol = 1e-4 unless that error is over 1e-4 / 4; then rtol is 4x the
    error (one significant digit, rounded up). The sidecar records both."""
    import copy
    import math

    import numpy as np
    import onnxruntime as ort
    import torch

    def flat(y):
        return [t.detach().numpy() for t in (y if isinstance(y, (tuple, list)) else (y,))]

    try:
        with torch.no_grad():
            m64 = copy.deepcopy(built.module).double()
            y64 = flat(m64(*(t.double() if t.is_floating_point() else t for t in example)))
    except Exception as e:  # a model that does not run in f64 keeps the default
        return {"rtol": 1e-4, "oracle_f32_error": None, "oracle_note": f"f64 run failed: {type(e).__name__}"}
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
    y32 = sess.run(None, {s["name"]: t.numpy() for s, t in zip(built.inputs, example)})
    err = max(float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))) for a, b in zip(y32, y64) if b.size)
    rtol = 1e-4
    if 4 * err > rtol:
        exp = math.floor(math.log10(4 * err))
        rtol = float(f"{math.ceil(4 * err / 10**exp) * 10**exp:.1g}")
    return {"rtol": rtol, "oracle_f32_error": float(f"{err:.3g}")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--size", choices=["small", "full"], default="small")
    ap.add_argument("--only", nargs="+", metavar="NAME", choices=MODEL_NAMES)
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(MODEL_NAMES))
        return 0
    if not args.out_dir:
        ap.error("OUT_DIR is required")
    for name in args.only or MODEL_NAMES:
        t = time.time()
        path = export(name, args.size, args.out_dir)
        print(f"{name:24s} {path.stat().st_size / 1e6:8.2f} MB  {time.time() - t:5.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
