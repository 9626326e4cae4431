#!/usr/bin/env python3
"""Writes examples/mobilenet_v2_050.onnx, the small model shipped with ferry.

    .venv/bin/python examples/make_example.py [--check]

torchvision's MobileNetV2 at width 0.5 with a 100-class head (0.8 M parameters,
3.2 MB), random but fixed weights (seed 0; nothing is downloaded), BatchNorm
statistics calibrated on seeded random images so activations have the scale
of a trained network. Exported with torch.onnx.export: TorchScript exporter
(dynamo=False), opset 17, eval mode, input "input" f32[1,3,224,224], output
"logits" f32[1,100].

--check also runs the exported file in ONNX Runtime and, if it is built,
ferry (FERRY_BIN, default build/ferry) on a seeded input written to
examples/out/ (gitignored), and prints the largest difference.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODEL = HERE / "mobilenet_v2_050.onnx"


def build():
    import torch
    from torchvision.models import mobilenet_v2

    torch.manual_seed(0)
    model = mobilenet_v2(weights=None, width_mult=0.5, num_classes=100)
    # Calibrate BatchNorm on random images (cumulative average over 4 batches),
    # as a trained network's running statistics would normalise its activations.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(16, 3, 224, 224, generator=gen))
    return model.eval()


def export(model):
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        torch.onnx.export(model, (torch.zeros(1, 3, 224, 224),), str(MODEL), opset_version=17, dynamo=False,
                          input_names=["input"], output_names=["logits"], do_constant_folding=True)
    import onnx

    onnx.checker.check_model(str(MODEL))
    print(f"wrote {MODEL.relative_to(HERE.parent)} ({MODEL.stat().st_size / 1e6:.1f} MB)")


def check():
    import onnxruntime as ort

    out = HERE / "out"
    out.mkdir(exist_ok=True)
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    np.save(out / "input.npy", x)
    (want,) = ort.InferenceSession(str(MODEL), providers=["CPUExecutionProvider"]).run(None, {"input": x})
    print(f"ONNX Runtime: logits {want.shape}, argmax {int(want.argmax())}")
    ferry = Path(os.environ.get("FERRY_BIN", HERE.parent / "build" / "ferry"))
    if not ferry.is_file():
        print(f"(no ferry binary at {ferry}; skipping the ferry run)")
        return 0
    subprocess.run([str(ferry), "run", str(MODEL), "--input", f"input={out / 'input.npy'}", "--output-dir", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    got = np.load(out / "logits.npy")
    diff = float(np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want))))
    print(f"ferry: argmax {int(got.argmax())}, max |ferry - ort| / max(1, |ort|) = {diff:.2e}")
    return 0 if diff <= 1e-4 else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare ONNX Runtime and ferry on the written model")
    args = ap.parse_args()
    export(build())
    return check() if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
