"""PyTorch test models for the PyTorch frontend, saved with torch.export (no ONNX, no pickle).

Each model NAME is a torch module with seeded random weights (torchvision
classifiers with weights=None and calibrated batch-norm statistics, and
transformers written in plain torch: tests/models/gen/torch_nets.py and the
GPT-2 / LLaMA blocks below), at a small size. ConvNeXt, Swin and DeepLabV3 are
the small configurations of the ONNX set (export_models.BUILDERS: ConvNeXt and
Swin with narrow stages, DeepLabV3-MobileNetV3 at 64x64); EfficientNet-B0 runs
at 64x64 (at 32x32 its random logits reach ~45 and fp32 noise alone exceeds
1e-4); ssdlite_head is SSDlite's backbone and head without anchors or NMS
(torch_nets.SsdLiteRaw, width 0.5, 96x96). Each is written as

    OUT/NAME.pt2            torch.export.save of torch.export.export(model.eval(), args),
                            with ep.example_inputs = None (the one pickle stays empty)
    OUT/NAME.inputs.npz     seeded test inputs (common.make_inputs)
    OUT/NAME.expected.npz   torch eager outputs on them (the reference)
    OUT/NAME.json           sidecar: inputs, outputs, the ATen targets in the program, generator hash

NAME_dynamic is the same model exported with a dynamic batch dim,
torch.export.Dim("batch"), from a batch-2 example (torch.export refuses a batch-1
example for a dynamic dim: 0/1 specialisation); its test inputs have batch 3, so a
ferry that fixed the batch to the example's would fail. Two more programs are
refusal fixtures: inplace_read_later (an in-place op whose input is read
afterwards) and unsupported_ops (ops outside the import table).

OUT defaults to tests/models/generated/torch. Usage:

    python make_torch_models.py [NAME ...] [--out DIR] [--list]     (no NAME: all)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import GEN_DIR, generator_hash, input_spec, make_inputs, temp_path, write_sidecar  # noqa: E402

SOURCES = [GEN_DIR / "make_torch_models.py", GEN_DIR / "common.py", GEN_DIR / "torch_nets.py",
           GEN_DIR / "export_models.py"]
TEST_BATCH = 3  # the dynamic variants are exported at batch 2 and tested at 3


# --- plain-torch transformer blocks ------------------------------------------------------


def _nets():
    import torch
    from torch import nn
    import torch.nn.functional as F

    class Gpt2SdpaBlock(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads = heads
            self.ln_1, self.ln_2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.c_attn, self.c_proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.c_fc, self.mlp_proj = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
            q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.c_proj(y.transpose(1, 2).reshape(b, t, c))
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class Gpt2Sdpa(nn.Module):
        """GPT-2-style decoder, causal SDPA, tied LM head: input_ids [B, T] -> logits [B, T, vocab]."""

        def __init__(self, vocab=128, dim=64, layers=2, heads=2, max_pos=32):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(max_pos, dim)
            self.blocks = nn.ModuleList(Gpt2SdpaBlock(dim, heads) for _ in range(layers))
            self.ln_f = nn.LayerNorm(dim)
            for p in self.parameters():
                if p.dim() > 1:
                    nn.init.normal_(p, 0.0, 0.05)

        def forward(self, input_ids):
            h = self.wte(input_ids) + self.wpe(torch.arange(input_ids.shape[1]))
            for block in self.blocks:
                h = block(h)
            return F.linear(self.ln_f(h), self.wte.weight)

    class RmsNorm(nn.Module):
        """LLaMA's RMSNorm written out: x * rsqrt(mean(x^2) + eps) * w."""

        def __init__(self, dim, eps=1e-6):
            super().__init__()
            self.eps, self.weight = eps, nn.Parameter(1.0 + 0.1 * torch.randn(dim))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    def rotate_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    class LlamaBlock(nn.Module):
        """One LLaMA decoder block: RMSNorm, rotary embedding, grouped-query causal attention
        (8 query heads over 2 key/value heads, SDPA enable_gqa), SwiGLU MLP; and a final nn.RMSNorm."""

        def __init__(self, dim=64, heads=8, kv_heads=2, hidden=128, max_seq=32):
            super().__init__()
            self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads
            self.norm1, self.norm2 = RmsNorm(dim), RmsNorm(dim)
            self.q = nn.Linear(dim, heads * self.hd, bias=False)
            self.k = nn.Linear(dim, kv_heads * self.hd, bias=False)
            self.v = nn.Linear(dim, kv_heads * self.hd, bias=False)
            self.o = nn.Linear(heads * self.hd, dim, bias=False)
            self.gate, self.up = nn.Linear(dim, hidden, bias=False), nn.Linear(dim, hidden, bias=False)
            self.down = nn.Linear(hidden, dim, bias=False)
            self.final_norm = nn.RMSNorm(dim, eps=1e-5)
            inv_freq = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
            freqs = torch.outer(torch.arange(max_seq).float(), inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.register_buffer("cos", emb.cos(), persistent=False)
            self.register_buffer("sin", emb.sin(), persistent=False)

        def forward(self, x):
            b, t, c = x.shape
            h = self.norm1(x)
            q = self.q(h).view(b, t, self.heads, self.hd).transpose(1, 2)
            k = self.k(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
            v = self.v(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
            cos, sin = self.cos[:t], self.sin[:t]
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + self.o(y.transpose(1, 2).reshape(b, t, c))
            h = self.norm2(x)
            x = x + self.down(F.silu(self.gate(h)) * self.up(h))
            return self.final_norm(x)

    class InplaceReadLater(nn.Module):
        """y.relu_() modifies y while v, a view of y made before, is read afterwards: ferry must
        refuse, not reorder. (Reads of y itself after y.relu_() are traced as reads of relu_'s output.)"""

        def forward(self, x):
            y = x * 2.0
            v = y.view(-1)
            y.relu_()
            return v + 1.0

    class UnsupportedOps(nn.Module):
        """Two ops outside ferry's table: rounding and flipping."""

        def forward(self, x):
            return torch.flip(torch.round(x * 4.0), dims=[1])

    return {"Gpt2Sdpa": Gpt2Sdpa, "LlamaBlock": LlamaBlock, "InplaceReadLater": InplaceReadLater,
            "UnsupportedOps": UnsupportedOps}


# --- the models --------------------------------------------------------------------------


def _image(batch, hw=32):
    return [input_spec("x", (batch, 3, hw, hw))]


def _tv(ctor, hw=32, **kw):
    def build(batch):
        import torch
        from torchvision import models
        from export_models import calibrate_bn

        torch.manual_seed(0)
        m = getattr(models, ctor)(weights=None, num_classes=10, **kw).eval()
        ins = _image(batch, hw)
        calibrate_bn(m, ins[0]["shape"])
        return m, ins

    return build


def _vit(batch):
    import torch
    from torchvision.models.vision_transformer import VisionTransformer

    torch.manual_seed(0)
    m = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128,
                          num_classes=10)
    torch.nn.init.normal_(m.heads.head.weight, 0.0, 0.05)  # torchvision zero-initialises it
    torch.nn.init.normal_(m.heads.head.bias, 0.0, 0.05)
    return m.eval(), _image(batch)


def _onnx_set(name):
    """A family of the ONNX end-to-end set (export_models.BUILDERS at its small size: the
    same networks and calibrated batch norm), at `batch`, inputs named as forward's arguments."""

    def build(batch):
        import inspect

        import torch
        from export_models import BUILDERS

        torch.manual_seed(0)
        built = BUILDERS[name]("small")
        args = list(inspect.signature(built.module.forward).parameters)
        return built.module.eval(), [dict(s, name=a, shape=[batch] + s["shape"][1:])
                                     for a, s in zip(args, built.inputs)]

    return build


def _ssdlite(batch):
    import torch
    from export_models import calibrate_bn
    from torch_nets import SsdLiteRaw

    torch.manual_seed(0)
    m = SsdLiteRaw(num_classes=5, width_mult=0.5)
    ins = _image(batch, 96)
    calibrate_bn(m, ins[0]["shape"])
    return m.eval(), ins


def _bert(batch):
    import torch
    from torch_nets import Bert

    torch.manual_seed(0)
    m = Bert(128, 64, 2, 2, 128, max_pos=32).eval()
    seq = 16
    return m, [input_spec("input_ids", (batch, seq), "int64", "randint", low=0, high=128),
               input_spec("attention_mask", (batch, seq), "int64", "mask", valid=12),
               input_spec("token_type_ids", (batch, seq), "int64", "randint", low=0, high=2)]


def _gpt2(batch):
    import torch

    torch.manual_seed(0)
    return _nets()["Gpt2Sdpa"]().eval(), [input_spec("input_ids", (batch, 16), "int64", "randint", low=0, high=128)]


def _llama(batch):
    import torch

    torch.manual_seed(0)
    return _nets()["LlamaBlock"]().eval(), [input_spec("x", (batch, 16, 64))]


def _plain(cls, spec):
    def build(batch):
        return _nets()[cls]().eval(), [spec(batch)]

    return build


FAMILIES = {
    "resnet18": _tv("resnet18"),
    "mobilenet_v2": _tv("mobilenet_v2", width_mult=0.5),
    "mobilenet_v3_small": _tv("mobilenet_v3_small"),
    "vit": _vit,
    "bert": _bert,
    "gpt2": _gpt2,
    "llama": _llama,
    "efficientnet_b0": _tv("efficientnet_b0", hw=64),
    "regnet_y_400mf": _tv("regnet_y_400mf"),
    "convnext": _onnx_set("convnext_tiny"),
    "swin": _onnx_set("swin_t"),
    "deeplabv3_mobilenet_v3": _onnx_set("deeplabv3_mobilenet_v3"),
    "ssdlite_head": _ssdlite,
}
FIXTURES = {
    "inplace_read_later": _plain("InplaceReadLater", lambda b: input_spec("x", (b, 8))),
    "unsupported_ops": _plain("UnsupportedOps", lambda b: input_spec("x", (b, 2, 4, 4))),
}
MODEL_NAMES = [n for f in FAMILIES for n in (f, f + "_dynamic")] + list(FIXTURES)


def _outputs(y):
    ys = y if isinstance(y, (tuple, list)) else (y,)
    return [t.detach().numpy() for t in ys]


def export(name, out):
    """Builds, exports and saves NAME into OUT; returns the sidecar dict."""
    import torch
    from torch.export import Dim

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    dynamic = name.endswith("_dynamic")
    family = name[: -len("_dynamic")] if dynamic else name
    build = FAMILIES.get(family) or FIXTURES[family]
    module, specs = build(2 if dynamic else 1)
    args = tuple(torch.from_numpy(a) for a in make_inputs(specs, seed=1).values())
    dyn = None
    if dynamic:
        batch = Dim("batch", min=1, max=64)
        dyn = tuple({0: batch} for _ in specs)
    with torch.no_grad():
        ep = torch.export.export(module, args, dynamic_shapes=dyn)
    ep.example_inputs = None  # the one pickle of the archive (data/sample_inputs) stays empty
    path = out / f"{name}.pt2"
    tmp = temp_path(path).with_suffix(".pt2")  # torch.export.save warns about other suffixes
    torch.export.save(ep, str(tmp))
    os.replace(tmp, path)

    test_specs = [dict(s, shape=[TEST_BATCH] + s["shape"][1:]) for s in specs] if dynamic else specs
    inputs = make_inputs(test_specs, seed=0)
    with torch.no_grad():
        expected = _outputs(module(*(torch.from_numpy(a) for a in inputs.values())))
    out_names = ["output"] if len(expected) == 1 else [f"output_{i}" for i in range(len(expected))]
    np.savez(out / f"{name}.inputs.npz", **inputs)
    np.savez(out / f"{name}.expected.npz", **dict(zip(out_names, expected)))
    targets = sorted({n.target.__name__ if hasattr(n.target, "__name__") else str(n.target)
                      for n in ep.graph.nodes if n.op == "call_function"})
    meta = {"name": name, "file": path.name, "inputs": test_specs, "outputs": out_names, "dynamic": dynamic,
            "targets": targets, "generator": generator_hash(*SOURCES)}
    write_sidecar(out, meta)
    return meta


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", metavar="NAME")
    ap.add_argument("--out", default=str(GEN_DIR.parent / "generated" / "torch"))
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(MODEL_NAMES))
        return 0
    unknown = [n for n in args.names if n not in MODEL_NAMES]
    if unknown:
        ap.error(f"unknown models {unknown}; see --list")
    import torch

    torch.set_num_threads(1)
    for name in args.names or MODEL_NAMES:
        meta = export(name, args.out)
        print(f"{name:28s} {meta['file']}  {len(meta['targets'])} ATen targets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
