"""Generators of models ONNX Runtime's own optimizers rewrite into contrib ops
(com.microsoft), for tests/repair/test_ort_optimized.py:

  bert   a 2-layer BERT-like encoder (hidden 32, 4 heads), exported by torch.onnx (TorchScript
         exporter, opset 14, dynamic batch and sequence), then onnxruntime.transformers.optimizer
         (model_type bert): EmbedLayerNormalization, Attention (mask_index), SkipLayerNormalization,
         BiasGelu
  gpt2   a 2-layer GPT-2-like decoder (HF GPT-2's Conv1D, causal mask by where, gelu_new),
         optimizer model_type gpt2: EmbedLayerNormalization, Attention (unidirectional),
         SkipLayerNormalization (with its sum output), FastGelu
  cnn    a small CNN with a LayerNorm/GELU/MatMul head, saved by an ORT session at
         ORT_ENABLE_EXTENDED (SessionOptions.optimized_model_filepath): FusedConv (Relu, Sigmoid,
         Clip), Gelu, FusedMatMul, and LayerNormalization in the default domain at opset 14

Small sizes, so generating all three takes seconds. Parameters are random (LayerNorm
weights too), so no two layers share weights by accident.
"""

import math

H, HEADS, LAYERS, VOCAB, SEQ = 32, 4, 2, 50, 8


def _torch():
    import torch
    return torch


def _randomize(module):
    torch = _torch()
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn_like(p) * 0.3)
        for m in module.modules():  # LayerNorm scales around 1
            if isinstance(m, torch.nn.LayerNorm):
                m.weight.add_(1.0)


def _bert():
    torch = _torch()
    nn = torch.nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v, self.o = (nn.Linear(H, H) for _ in range(4))
            self.ln1, self.ln2 = nn.LayerNorm(H), nn.LayerNorm(H)
            self.f1, self.f2 = nn.Linear(H, 4 * H), nn.Linear(4 * H, H)

        def heads(self, x):
            return x.view(x.shape[0], x.shape[1], HEADS, H // HEADS).permute(0, 2, 1, 3)

        def forward(self, x, mask):
            q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
            p = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(H // HEADS) + mask, -1)
            c = torch.matmul(p, v).permute(0, 2, 1, 3).contiguous()
            x = self.ln1(self.o(c.view(c.shape[0], c.shape[1], H)) + x)
            return self.ln2(self.f2(torch.nn.functional.gelu(self.f1(x))) + x)

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.we, self.pe, self.te = nn.Embedding(VOCAB, H), nn.Embedding(SEQ, H), nn.Embedding(2, H)
            self.ln = nn.LayerNorm(H)
            self.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])

        def forward(self, ids, token_types, attention_mask):
            pos = torch.arange(ids.shape[1]).unsqueeze(0)
            x = self.ln(self.we(ids) + self.pe(pos) + self.te(token_types))
            mask = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
            for layer in self.layers:
                x = layer(x, mask)
            return x

    ids = torch.zeros(2, SEQ, dtype=torch.long)
    return Bert(), (ids, ids, ids + 1), ["input_ids", "token_type_ids", "attention_mask"]


def _gpt2():
    torch = _torch()
    nn = torch.nn

    class Conv1D(nn.Module):  # HF GPT-2's: x @ W + b through addmm
        def __init__(self, nf, nx):
            super().__init__()
            self.nf = nf
            self.weight, self.bias = nn.Parameter(torch.randn(nx, nf)), nn.Parameter(torch.randn(nf))

        def forward(self, x):
            out = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
            return out.view(x.size()[:-1] + (self.nf,))

    def gelu_new(x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(H), nn.LayerNorm(H)
            self.c_attn, self.c_proj = Conv1D(3 * H, H), Conv1D(H, H)
            self.c_fc, self.c_out = Conv1D(4 * H, H), Conv1D(H, 4 * H)
            self.register_buffer("bias", torch.tril(torch.ones(SEQ, SEQ)).view(1, 1, SEQ, SEQ))
            self.register_buffer("masked_bias", torch.tensor(-1e4))

        def heads(self, x, key=False):
            x = x.view(*(x.size()[:-1] + (HEADS, x.size(-1) // HEADS)))
            return x.permute(0, 2, 3, 1) if key else x.permute(0, 2, 1, 3)

        def attn(self, x):
            q, k, v = self.c_attn(x).split(H, dim=2)
            w = torch.matmul(self.heads(q), self.heads(k, True)) / (float(H // HEADS) ** 0.5)
            nd, ns = w.size(-2), w.size(-1)
            w = torch.where(self.bias[:, :, ns - nd:ns, :ns].bool(), w, self.masked_bias.to(w.dtype))
            a = torch.matmul(torch.softmax(w, -1), self.heads(v)).permute(0, 2, 1, 3).contiguous()
            return self.c_proj(a.view(*(a.size()[:-2] + (H,))))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.c_out(gelu_new(self.c_fc(self.ln_2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, H), nn.Embedding(SEQ, H)
            self.h = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln_f = nn.LayerNorm(H)

        def forward(self, ids):
            x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]).unsqueeze(0))
            for block in self.h:
                x = block(x)
            return self.ln_f(x)

    return GPT(), (torch.zeros(2, SEQ, dtype=torch.long),), ["input_ids"]


def _cnn():
    torch = _torch()
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2, self.c3 = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 1)
            self.ln, self.fc, self.w = nn.LayerNorm(8), nn.Linear(8, 8), nn.Parameter(torch.randn(8, 8))

        def forward(self, x):
            y = torch.relu(self.c1(x))
            y = torch.relu(self.c2(y) + y)
            y = torch.clamp(self.c3(torch.sigmoid(self.c3(y)) * 2), 0, 6)
            y = torch.nn.functional.gelu(self.fc(self.ln(y.mean((2, 3)))))
            return torch.matmul(y, self.w.t()) * 0.5

    return Net(), (torch.zeros(1, 3, 8, 8),), ["x"]


def _export(net, args, names, path, dynamic):
    torch = _torch()
    torch.manual_seed(0)
    _randomize(net)
    axes = {n: {0: "batch", 1: "seq"} for n in names} if dynamic else None
    torch.onnx.export(net.eval(), args, str(path), input_names=names, output_names=["out"], opset_version=14,
                      dynamo=False, dynamic_axes=axes)


def build(name, out_dir):
    """Writes <name>.onnx (as exported) and <name>_ort.onnx (as ORT's optimizer wrote it); returns the latter."""
    import warnings

    net, args, names = {"bert": _bert, "gpt2": _gpt2, "cnn": _cnn}[name]()
    src, dst = out_dir / f"{name}.onnx", out_dir / f"{name}_ort.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _export(net, args, names, src, dynamic=name != "cnn")
    if name == "cnn":
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = str(dst)
        ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])
    else:
        from onnxruntime.transformers.optimizer import optimize_model
        optimize_model(str(src), model_type=name, num_heads=HEADS, hidden_size=H, opt_level=0).save_model_to_file(str(dst))
    return dst
