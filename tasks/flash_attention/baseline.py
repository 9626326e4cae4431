"""The FlashAttention task's baseline (the seeds' module): single-head attention
with input and output projections, in plain PyTorch.

    x [B, S, D] -> Q, K, V = three Linear(D, D)
                -> softmax(Q K^T / sqrt(D)) V          (D = 64: divide by 8)
                -> Linear(D, D)

`ferry evaluate` builds Model(**init) after torch.manual_seed(seed) ([baseline]
of task.toml), so the weights are the same in every process;
make_baseline_onnx.py writes the same computation, with the same weights, as
baseline.onnx for kernel-plugin submissions.
"""

import math

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, d_model=64):
        super().__init__()
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.scale = 1.0 / math.sqrt(d_model)

    def forward(self, x):
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        attn = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * self.scale, dim=-1)
        return self.out_proj(torch.matmul(attn, v))


def get_init_inputs():
    """KernelBench style: the constructor's arguments (task.toml [baseline] init)."""
    return {"d_model": 64}


def get_inputs():
    """KernelBench style: one input set of the task's shape (task.toml [[inputs]])."""
    return [torch.randn(8, 1024, 64)]
