"""Plain-torch networks for the end-to-end set (no `transformers`, no downloads).

    Bert        BERT-style encoder: token + position + segment embeddings, LayerNorm,
                hand-written multi-head self-attention with HF's additive mask
                (1 - mask) * -10000, erf GELU, tanh pooler.
    DistilBert  DistilBERT-style encoder built from torch.nn.TransformerEncoderLayer
                (torch's own MultiheadAttention, key-padding mask -> Where(-inf)).
    Gpt2        GPT-2-style decoder: causal mask built at run time from the sequence
                length (ConstantOfShape -> Trilu -> Where), tanh GELU, tied LM head.
    Yolo        small YOLO-style detector: Conv-BN-SiLU backbone with split/concat
                blocks, SPPF max pools, nearest 2x upsampling (Resize) + concat neck,
                and a decode head (sigmoid, reshape/permute, grid add, pow).
    SsdLiteRaw  torchvision's SSDlite (MobileNetV3-Large backbone + extra blocks + SSDLiteHead)
                without its transform, anchors and post-processing: images -> the head's raw
                (bbox_regression, cls_logits).
"""

from __future__ import annotations

import math

import torch
from torch import nn
import torch.nn.functional as F


def init_like_bert(module, std=0.02):
    """BERT's init: N(0, std) weights, zero biases, unit LayerNorm."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, std)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


class SelfAttention(nn.Module):
    """softmax(q k^T / sqrt(d) + bias) v over `heads` heads; bias broadcasts to [B, H, T, T]."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden) for _ in range(4))

    def forward(self, x, bias):
        b, t, c = x.shape

        def split(y):  # [B, T, C] -> [B, H, T, D]
            return y.view(b, t, self.heads, self.head_dim).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + bias
        y = torch.matmul(scores.softmax(-1), v)
        return self.o(y.transpose(1, 2).reshape(b, t, c))


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, inter):
        super().__init__()
        self.attn = SelfAttention(hidden, heads)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.fc1, self.fc2 = nn.Linear(hidden, inter), nn.Linear(inter, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, h, bias):
        h = self.ln1(h + self.attn(h, bias))
        return self.ln2(h + self.fc2(F.gelu(self.fc1(h))))


class Bert(nn.Module):
    """(input_ids, attention_mask, token_type_ids) -> (last_hidden_state, pooler_output)."""

    def __init__(self, vocab, hidden, layers, heads, inter, max_pos, type_vocab=2):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.segment = nn.Embedding(type_vocab, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, inter) for _ in range(layers))
        self.pool = nn.Linear(hidden, hidden)
        init_like_bert(self)

    def forward(self, input_ids, attention_mask, token_type_ids):
        pos = torch.arange(input_ids.shape[1]).unsqueeze(0)
        h = self.ln(self.word(input_ids) + self.pos(pos) + self.segment(token_type_ids))
        # HF's "extended attention mask": 0 where attended, -10000 where padded.
        bias = (1.0 - attention_mask[:, None, None, :].to(h.dtype)) * -10000.0
        for layer in self.layers:
            h = layer(h, bias)
        return h, torch.tanh(self.pool(h[:, 0]))


class DistilBert(nn.Module):
    """(input_ids, attention_mask) -> last_hidden_state, on torch.nn.TransformerEncoder."""

    def __init__(self, vocab, dim, layers, heads, hidden, max_pos):
        super().__init__()
        self.word = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_pos, dim)
        self.ln = nn.LayerNorm(dim, eps=1e-12)
        layer = nn.TransformerEncoderLayer(dim, heads, hidden, dropout=0.1, activation="gelu",
                                           layer_norm_eps=1e-12, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        init_like_bert(self)

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.shape[1]).unsqueeze(0)
        h = self.ln(self.word(input_ids) + self.pos(pos))
        return self.encoder(h, src_key_padding_mask=attention_mask == 0)


class Gpt2Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.c_attn, self.c_proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.c_fc, self.mlp_proj = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x, causal):
        b, t, c = x.shape
        d = c // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (y.reshape(b, t, self.heads, d).transpose(1, 2) for y in (q, k, v))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)
        # As HF GPT-2: masked scores become the most negative finite float.
        scores = torch.where(causal, scores, torch.tensor(torch.finfo(scores.dtype).min))
        y = torch.matmul(scores.softmax(-1), v).transpose(1, 2).reshape(b, t, c)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    """input_ids [B, T] -> logits [B, T, vocab]; T may be dynamic in the export."""

    def __init__(self, vocab, dim, layers, heads, max_pos):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(max_pos, dim)
        self.blocks = nn.ModuleList(Gpt2Block(dim, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)
        init_like_bert(self)

    def forward(self, input_ids):
        t = input_ids.shape[1]
        h = self.wte(input_ids) + self.wpe(torch.arange(t))
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
        for block in self.blocks:
            h = block(h, causal)
        return F.linear(self.ln_f(h), self.wte.weight)  # tied LM head


# --- YOLO-style detector ---------------------------------------------------------


class ConvBnSilu(nn.Sequential):
    def __init__(self, c1, c2, k=1, s=1):
        super().__init__(nn.Conv2d(c1, c2, k, s, k // 2, bias=False), nn.BatchNorm2d(c2), nn.SiLU())


class Bottleneck(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.cv1, self.cv2 = ConvBnSilu(c, c, 3), ConvBnSilu(c, c, 3)

    def forward(self, x):
        return x + self.cv2(self.cv1(x))


class C2f(nn.Module):
    """YOLOv8's C2f: 1x1 conv, split in two (Split), chained bottlenecks, concat all, 1x1 conv."""

    def __init__(self, c1, c2, n=1):
        super().__init__()
        self.c = c2 // 2
        self.cv1 = ConvBnSilu(c1, 2 * self.c)
        self.cv2 = ConvBnSilu((2 + n) * self.c, c2)
        self.m = nn.ModuleList(Bottleneck(self.c) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        for m in self.m:
            y.append(m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class Sppf(nn.Module):
    def __init__(self, c1, c2):
        super().__init__()
        self.cv1, self.cv2 = ConvBnSilu(c1, c1 // 2), ConvBnSilu(c1 // 2 * 4, c2)
        self.pool = nn.MaxPool2d(5, 1, 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.pool(x)
        y2 = self.pool(y1)
        return self.cv2(torch.cat([x, y1, y2, self.pool(y2)], 1))


class Detect(nn.Module):
    """YOLOv5's anchor head: per level [B, A*(5+nc), H, W] -> decoded boxes [B, A*H*W, 5+nc]."""

    def __init__(self, nc, chs, strides, image_size):
        super().__init__()
        self.no, self.na = nc + 5, 3
        self.strides = strides
        anchors = torch.tensor([[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119],
                                [116, 90, 156, 198, 373, 326]], dtype=torch.float32)
        self.m = nn.ModuleList(nn.Conv2d(c, self.na * self.no, 1) for c in chs)
        for i, s in enumerate(strides):
            n = image_size // s
            yv, xv = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
            self.register_buffer(f"grid{i}", torch.stack((xv, yv), 2).view(1, 1, n, n, 2).float())
            self.register_buffer(f"anchor_grid{i}", anchors[i].view(1, self.na, 1, 1, 2))

    def forward(self, feats):
        out = []
        for i, x in enumerate(feats):
            x = self.m[i](x)
            b, _, ny, nx = x.shape
            x = x.view(b, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2)
            y = x.sigmoid()
            xy = (y[..., 0:2] * 2 - 0.5 + getattr(self, f"grid{i}")) * self.strides[i]
            wh = (y[..., 2:4] * 2) ** 2 * getattr(self, f"anchor_grid{i}")
            out.append(torch.cat((xy, wh, y[..., 4:]), -1).view(b, -1, self.no))
        return torch.cat(out, 1)


class Yolo(nn.Module):
    """images [B, 3, S, S] in [0, 1] -> detections [B, N, 5 + nc]."""

    def __init__(self, width, nc, image_size):
        super().__init__()
        w = [width * m for m in (1, 2, 4, 8, 16)]
        self.stem = ConvBnSilu(3, w[0], 3, 2)
        self.s2 = nn.Sequential(ConvBnSilu(w[0], w[1], 3, 2), C2f(w[1], w[1]))
        self.s3 = nn.Sequential(ConvBnSilu(w[1], w[2], 3, 2), C2f(w[2], w[2], 2))
        self.s4 = nn.Sequential(ConvBnSilu(w[2], w[3], 3, 2), C2f(w[3], w[3], 2))
        self.s5 = nn.Sequential(ConvBnSilu(w[3], w[4], 3, 2), C2f(w[4], w[4]), Sppf(w[4], w[4]))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.h4 = C2f(w[4] + w[3], w[3])
        self.h3 = C2f(w[3] + w[2], w[2])
        self.d3 = ConvBnSilu(w[2], w[2], 3, 2)
        self.n4 = C2f(w[2] + w[3], w[3])
        self.d4 = ConvBnSilu(w[3], w[3], 3, 2)
        self.n5 = C2f(w[3] + w[4], w[4])
        self.detect = Detect(nc, (w[2], w[3], w[4]), (8, 16, 32), image_size)

    def forward(self, x):
        p3 = self.s3(self.s2(self.stem(x)))
        p4 = self.s4(p3)
        p5 = self.s5(p4)
        h4 = self.h4(torch.cat([self.up(p5), p4], 1))
        o3 = self.h3(torch.cat([self.up(h4), p3], 1))
        o4 = self.n4(torch.cat([self.d3(o3), h4], 1))
        o5 = self.n5(torch.cat([self.d4(o4), p5], 1))
        return self.detect([o3, o4, o5])


# --- SSDlite detection head --------------------------------------------------------


class SsdLiteRaw(nn.Module):
    """images [B, 3, S, S] -> (bbox_regression [B, N, 4], cls_logits [B, N, num_classes]): the
    backbone's feature maps through SSDLiteHead; resizing, anchors and NMS stay outside."""

    def __init__(self, num_classes, width_mult=1.0):
        super().__init__()
        from torchvision.models.detection import ssdlite320_mobilenet_v3_large

        ssd = ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=num_classes,
                                            width_mult=width_mult)
        self.backbone, self.head = ssd.backbone, ssd.head

    def forward(self, x):
        out = self.head(list(self.backbone(x).values()))
        return out["bbox_regression"], out["cls_logits"]
