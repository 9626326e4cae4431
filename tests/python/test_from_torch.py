"""ferry.from_torch and ferry.load of a .pt2: torch.export programs in Python, checked against torch eager.

- from_torch(module, args, dynamic_shapes) exports in-process, imports without
  ONNX or pickle, and the compiled session matches eager at <= 1e-4 relative on
  the cpu and reference backends, at a batch other than the example's;
- the 1:1 (DIRECT) rows, Det's among them, import a real program and match eager;
- ferry.load reads the archive torch.export.save wrote;
- an archive needing unpickling raises UnsupportedError with the re-save recipe.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from model_cache import unavailable

RTOL = 1e-4


@pytest.fixture(scope="module")
def torch():
    try:
        import torch
    except ImportError as e:
        unavailable(f"torch not importable: {e}")
    torch.set_num_threads(1)
    return torch


def small_net(torch):
    from torch import nn

    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(8)
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            h = torch.relu(self.bn(self.conv(x)))
            return torch.softmax(self.fc(h.mean((2, 3))), dim=-1), h.sum(1)

    net = Net()
    with torch.no_grad():
        net.bn.running_mean.uniform_(-0.5, 0.5)
        net.bn.running_var.uniform_(0.5, 2.0)
    return net.eval()


def close(got, ref):
    err = np.abs(got.astype(np.float64) - ref) / np.maximum(1.0, np.abs(ref))
    return err.max()


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_from_torch_matches_eager_with_a_dynamic_batch(ferry_api, torch, backend):
    net = small_net(torch)
    example = torch.randn(2, 3, 8, 8)
    model = ferry_api.from_torch(net, (example,), dynamic_shapes=({0: torch.export.Dim("batch")},))
    (x_info,) = model.inputs
    assert isinstance(x_info.shape[0], str) and tuple(x_info.shape[1:]) == (3, 8, 8)
    x = np.random.default_rng(0).standard_normal((3, 3, 8, 8)).astype(np.float32)
    with torch.no_grad():
        ref = [t.numpy() for t in net(torch.from_numpy(x))]
    out = model.compile(backend=backend).run({x_info.name: x})
    got = list(out.values())
    assert len(got) == 2
    for g, r in zip(got, ref):
        assert g.shape == r.shape and close(g, r) <= RTOL


def test_run_refuses_a_batch_outside_the_dims_range(ferry_api, torch):
    """Dim("batch", min=2, max=8): batches 2 and 8 run; 1 and 9 raise, naming input, symbol and range."""
    net = small_net(torch)
    model = ferry_api.from_torch(net, (torch.randn(2, 3, 8, 8),),
                                 dynamic_shapes=({0: torch.export.Dim("batch", min=2, max=8)},))
    (x_info,) = model.inputs
    sym = x_info.shape[0]
    assert model.inspect()["dim_ranges"][sym] == [2, 8]
    session = model.compile()
    rng = np.random.default_rng(0)
    for b in (2, 8):
        with torch.no_grad():
            ref = net(torch.from_numpy(x := rng.standard_normal((b, 3, 8, 8)).astype(np.float32)))[0].numpy()
        assert close(list(session.run({x_info.name: x}).values())[0], ref) <= RTOL
    for b in (1, 9):
        with pytest.raises(ferry_api.InvalidArgumentError, match=rf"input '{x_info.name}'.*\('{sym}'\) must lie in \[2, 8\]"):
            session.run({x_info.name: np.zeros((b, 3, 8, 8), np.float32)})


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_direct_rows_match_eager(ferry_api, torch, backend):
    """The 1:1 rows (DIRECT in frontends/torch/import_table.def): linalg_det -> Det, bmm and
    matmul -> MatMul, type_as -> CastLike, their tensor arguments in schema order."""

    class Net(torch.nn.Module):
        def forward(self, a, b, c):
            return torch.linalg.det(torch.bmm(a, b)), a @ c.type_as(a)

    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3, 3)).astype(np.float32)
    c = rng.integers(-3, 4, size=(3,)).astype(np.int64)
    net = Net().eval()
    ep = torch.export.export(net, tuple(torch.from_numpy(v) for v in (a, b, c)))
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert {"aten.linalg_det.default", "aten.bmm.default", "aten.matmul.default", "aten.type_as.default"} <= targets
    model = ferry_api.from_torch(net, tuple(torch.from_numpy(v) for v in (a, b, c)))
    with torch.no_grad():
        ref = [t.numpy() for t in net(*(torch.from_numpy(v) for v in (a, b, c)))]
    names = [i.name for i in model.inputs]
    got = list(model.compile(backend=backend).run(dict(zip(names, (a, b, c)))).values())
    assert len(got) == 2
    for g, r in zip(got, ref):
        assert g.shape == r.shape and close(g, r) <= RTOL


def test_load_reads_a_saved_program(ferry_api, torch, tmp_path):
    net = small_net(torch)
    x = torch.randn(1, 3, 8, 8)
    ep = torch.export.export(net, (x,))
    ep.example_inputs = None
    path = tmp_path / "net.pt2"
    torch.export.save(ep, str(path))
    model = ferry_api.load(str(path))
    assert model.inspect()["format"] == "torch"
    got = model.compile().run({model.inputs[0].name: x.numpy()})
    with torch.no_grad():
        ref = [t.numpy() for t in net(x)]
    for g, r in zip(got.values(), ref):
        assert close(g, r) <= RTOL


def test_pickled_payload_raises_unsupported_with_the_recipe(ferry_api, torch, tmp_path):
    net = small_net(torch)
    ep = torch.export.export(net, (torch.randn(1, 3, 8, 8),))
    ep.example_inputs = None
    path = tmp_path / "net.pt2"
    torch.export.save(ep, str(path))
    with zipfile.ZipFile(path) as z:
        ents = {n: z.read(n) for n in z.namelist()}
    name = next(n for n in ents if n.endswith("model_weights_config.json"))
    cfg = json.loads(ents[name])
    for p in cfg["config"].values():
        p["use_pickle"] = True
    ents[name] = json.dumps(cfg).encode()
    bad = tmp_path / "pickled.pt2"
    with zipfile.ZipFile(bad, "w") as z:
        for n, data in ents.items():
            z.writestr(n, data)
    with pytest.raises(ferry_api.UnsupportedError, match="never unpickles"):
        ferry_api.load(str(bad))
