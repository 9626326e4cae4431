"""Writes a tiny torch.export program (Linear, GELU, LayerNorm, Linear; seeded weights)
for the .pt2 tests of `ferry evaluate`: python make_tiny_pt2.py OUT.pt2 [--changed OUT2.pt2].

--changed also writes the program with the last layer's weights times 1.5: a
"migration" that changed the numbers."""

from __future__ import annotations

import argparse

import torch
from torch import nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(self.norm(torch.nn.functional.gelu(self.fc1(x))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--changed")
    a = ap.parse_args()
    torch.manual_seed(0)
    net = Tiny().eval()
    save(net, a.out)
    if a.changed:
        with torch.no_grad():
            net.fc2.weight.mul_(1.5)
        save(net, a.changed)


def save(net, path):
    ep = torch.export.export(net, (torch.randn(4, 16),))
    ep.example_inputs = None  # no pickle in the archive (ferry's loader refuses pickled payloads)
    torch.export.save(ep, path)


if __name__ == "__main__":
    main()
