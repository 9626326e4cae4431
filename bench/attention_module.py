#!/usr/bin/env python3
"""The seeds' attention baseline module, and its ONNX export.

    attention_module.py OUT.onnx [--dim 64] [--seq 1024] [--batch 8]

x [B, S, d] -> Q, K, V = three Linear(d, d); Y = softmax(Q K^T / sqrt(d)) V
(for d = 64 the scale is 1/8, the seeds' module exactly); out = Linear(d, d)(Y).
Exported with the TorchScript exporter (dynamo=False, opset 17), batch and
sequence axes dynamic, so one file serves the whole sequence sweep; weights
are seeded (torch.manual_seed(0)).
"""

from __future__ import annotations

import argparse
import math
import warnings

import torch
from torch import nn


class SeedAttention(nn.Module):
    """softmax(QK^T / sqrt(d)) V between Linear projections (one head)."""

    def __init__(self, d: int, sdpa: bool = False):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.scale = 1.0 / math.sqrt(d)
        self.sdpa = sdpa

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        if self.sdpa:
            y = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        else:
            y = torch.softmax(q @ k.transpose(-2, -1) * self.scale, dim=-1) @ v
        return self.o(y)


def make(d: int, sdpa: bool = False) -> SeedAttention:
    torch.manual_seed(0)
    return SeedAttention(d, sdpa).eval()


def export(path: str, d: int = 64, seq: int = 1024, batch: int = 8) -> None:
    m = make(d)
    x = torch.randn(batch, seq, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (x,), path, opset_version=17, dynamo=False, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}},
                          do_constant_folding=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=8)
    a = ap.parse_args()
    export(a.out, a.dim, a.seq, a.batch)


if __name__ == "__main__":
    main()
