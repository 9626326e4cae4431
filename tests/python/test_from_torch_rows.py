"""The torch import rows the vision families need, one small program each, against torch eager.

Every case exports a small module with torch.export (the default export, as
ferry.from_torch does), checks that the program holds the ATen targets the case
is about, and compares ferry (cpu and reference backends) with eager at
<= 1e-4 relative: upsample_bilinear2d / upsample_nearest2d (.vec, output_size
and scale_factor, align_corners both ways, a non-integer ratio), pad (the four
modes), roll, index.Tensor, ne, cumsum, conv_transpose1d/2d (and, after
run_decompositions, convolution with transposed=True), new_zeros and fill_
written into slices (Swin's mask). A fill_ whose stale view is read afterwards is refused.
"""

from __future__ import annotations

import numpy as np
import pytest

from test_from_torch import RTOL, close, torch  # noqa: F401  (torch is a fixture)


def _cases(torch):
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    img = torch.randn(2, 3, 5, 6)

    class Resize(nn.Module):
        def forward(self, x):
            return (F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=False),
                    F.interpolate(x, size=(4, 11), mode="bilinear", align_corners=True),
                    F.interpolate(x, scale_factor=2.0, mode="bilinear"),
                    F.interpolate(x, scale_factor=3.0, mode="nearest"),
                    F.interpolate(x, size=(7, 4), mode="nearest"))

    class Pad(nn.Module):
        def forward(self, x):
            return (F.pad(x, (1, 2, 0, 3), value=0.5), F.pad(x, (2, 1, 1, 2), mode="reflect"),
                    F.pad(x, (1, 1, 2, 0), mode="replicate"), F.pad(x, (2, 3, 1, 1), mode="circular"),
                    F.pad(x, (-1, 1)))

    class RollIndexNe(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = nn.Parameter(torch.randn(9, 3))
            self.register_buffer("idx", torch.tensor([[0, 8, -1], [4, 4, 2]]))

        def forward(self, x):
            b = self.table[self.idx]  # [2, 3, 3]
            return torch.roll(x, shifts=(-2, 3), dims=(2, 3)), torch.roll(x, 7, 1), b, self.idx != 4, b != b.transpose(1, 2)

    class Cumsum(nn.Module):
        def forward(self, x, k):
            return torch.cumsum(x, dim=-1), torch.cumsum(k, 1), torch.cumsum(x, 0, dtype=torch.float64)

    class ConvT(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)
            self.grouped = nn.ConvTranspose2d(3, 6, (2, 3), stride=(2, 1), groups=3, bias=False, dilation=(1, 2))
            self.one = nn.ConvTranspose1d(3, 2, 4, stride=3, padding=1)

        def forward(self, x):
            return self.up(x), self.grouped(x), self.one(x.flatten(2))

    class SliceFill(nn.Module):
        """Swin's attention mask: zeros, nine regions filled through slices, then read."""

        def forward(self, x):
            m = x.new_zeros((6, 8))
            count = 0
            for h in ((0, -4), (-4, -2), (-2, None)):
                for w in ((0, -3), (-3, -1), (-1, None)):
                    m[h[0]:h[1], w[0]:w[1]] = count
                    count += 1
            m[::2, 1:7:3] = -1.5
            return x + m.view(1, 1, 6, 8)

    k = torch.randint(-5, 5, (2, 6))
    return {
        "resize": (Resize(), (img,), {"aten.upsample_bilinear2d.vec", "aten.upsample_nearest2d.vec"}),
        "pad": (Pad(), (img,), {"aten.pad.default"}),
        "roll_index_ne": (RollIndexNe(), (img,),
                          {"aten.roll.default", "aten.index.Tensor", "aten.ne.Scalar", "aten.ne.Tensor"}),
        "cumsum": (Cumsum(), (img, k), {"aten.cumsum.default"}),
        "conv_transpose": (ConvT(), (img,), {"aten.conv_transpose2d.input", "aten.conv_transpose1d.default"}),
        "slice_fill": (SliceFill(), (torch.randn(2, 3, 6, 8),),
                       {"aten.new_zeros.default", "aten.fill_.Scalar", "aten.slice.Tensor"}),
    }


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("case", ["resize", "pad", "roll_index_ne", "cumsum", "conv_transpose", "slice_fill"])
def test_vision_rows_match_eager(ferry_api, torch, case, backend):
    net, args, needed = _cases(torch)[case]
    net.eval()
    ep = torch.export.export(net, args)
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert needed <= targets, f"{case}: the program has {sorted(targets)}"
    with torch.no_grad():
        out = net(*args)
    ref = [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]
    model = ferry_api.from_torch(net, args)
    names = [i.name for i in model.inputs]
    got = list(model.compile(backend=backend).run(dict(zip(names, (a.numpy() for a in args)))).values())
    assert len(got) == len(ref)
    for i, (g, r) in enumerate(zip(got, ref)):
        assert g.shape == r.shape, f"{case} output {i}: shape {g.shape}, torch {r.shape}"
        if r.dtype == np.bool_ or np.issubdtype(r.dtype, np.integer):
            assert g.dtype == r.dtype and np.array_equal(g, r), f"{case} output {i}"
        else:
            assert close(g, r) <= RTOL, f"{case} output {i}: max relative error {close(g, r):.3g}"


def test_fill_into_a_slice_whose_old_view_is_read_later_is_refused(ferry_api, torch):
    class StaleView(torch.nn.Module):
        def forward(self, x):
            m = x.new_zeros((4, 4))
            top = m[:2]  # a view made before the fill and read after it
            m[1:3, 1:3] = 1.0
            return x + top.sum()

    with pytest.raises(ferry_api.UnsupportedError, match="read afterwards"):
        ferry_api.from_torch(StaleView().eval(), (torch.randn(4, 4),))


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_decomposed_transposed_convolution_matches_eager(ferry_api, torch, backend, tmp_path):
    """run_decompositions() turns conv_transpose2d into aten.convolution.default(transposed=True)."""
    net, args, _ = _cases(torch)["conv_transpose"]
    net.eval()
    ep = torch.export.export(net, args).run_decompositions()
    assert "aten.convolution.default" in {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    ep.example_inputs = None
    torch.export.save(ep, str(tmp_path / "convt.pt2"))
    model = ferry_api.load(str(tmp_path / "convt.pt2"))
    with torch.no_grad():
        ref = [t.numpy() for t in net(*args)]
    got = list(model.compile(backend=backend).run({model.inputs[0].name: args[0].numpy()}).values())
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert g.shape == r.shape and close(g, r) <= RTOL
