"""End to end: torch.export programs (.pt2), run by ferry, checked against torch eager.

gen/make_torch_models.py exports each model with torch.export and saves it
pickle-free, with seeded inputs and torch eager's outputs on them (cached under
tests/models/generated/torch/, regenerated when a generator changes; generating
needs torch and torchvision, run in a subprocess, never in pytest). Each model
runs through

    ferry run MODEL.pt2 --input NAME=FILE.npy ... --backend {cpu,reference}

and every output must match eager's:
    |ferry - torch| <= 1e-4 * max(1, |torch|)   per element; shapes equal.

The *_dynamic models are exported with a dynamic batch dim from a batch-2 example
and run at batch 3 (five of them, DYNAMIC_IN_FULL, only under -m full). Refusals: a program whose in-place op's input is read later,
ops outside the table (`ferry inspect` lists them all), and a real archive edited
to need unpickling (use_pickle, a custom object): exit 2 with the re-save recipe.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from model_cache import REPO, cache_dir, ferry_binary, unavailable

import make_torch_models
from common import generator_hash, read_sidecar

RTOL = 1e-4
TIMEOUT_S = 600


def torch_python():
    r = subprocess.run([sys.executable, "-c", "import torch, torchvision"], capture_output=True, text=True)
    if r.returncode != 0:
        unavailable(f"torch/torchvision not importable in {sys.executable}: {r.stderr.strip().splitlines()[-1:]}")
    return sys.executable


def ensure_torch_model(name):
    out = cache_dir("torch")
    meta = read_sidecar(out, name)
    fresh = meta is not None and meta.get("generator") == generator_hash(*make_torch_models.SOURCES) \
        and (out / meta["file"]).exists() and (out / f"{name}.expected.npz").exists()
    if not fresh:
        r = subprocess.run([torch_python(), str(Path(make_torch_models.__file__)), name, "--out", str(out)],
                           capture_output=True, text=True, timeout=1800)
        assert r.returncode == 0, f"generating {name} failed:\n{r.stderr[-4000:]}"
        meta = read_sidecar(out, name)
    meta["path"] = out / meta["file"]
    meta["root"] = out
    return meta


def ferry():
    exe = ferry_binary()
    if exe is None:
        unavailable("ferry binary not built (set FERRY_BIN or build build/ferry)")
    return exe


def run_ferry(*args, timeout=TIMEOUT_S):
    return subprocess.run([str(ferry()), *map(str, args)], capture_output=True, text=True,
                          errors="backslashreplace", timeout=timeout)


def run_and_compare(meta, tmp_path, backend):
    inputs = np.load(meta["root"] / f"{meta['name']}.inputs.npz")
    expected = np.load(meta["root"] / f"{meta['name']}.expected.npz")
    args = []
    for spec in meta["inputs"]:
        f = tmp_path / f"{spec['name']}.npy"
        np.save(f, inputs[spec["name"]])
        args += ["--input", f"{spec['name']}={f}"]
    out = tmp_path / f"out_{backend}"
    r = run_ferry("run", meta["path"], *args, "--backend", backend, "--output-dir", out)
    assert r.returncode == 0, f"ferry run --backend {backend} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    for name in meta["outputs"]:
        ref = expected[name]
        got = np.load(out / f"{name}.npy")
        assert got.shape == ref.shape, f"{name}: shape {got.shape}, torch {ref.shape}"
        err = np.abs(got.astype(np.float64) - ref) / np.maximum(1.0, np.abs(ref))
        assert err.max() <= RTOL, f"{name} ({backend}): max relative error {err.max():.3g} > {RTOL}"


# Exporting a model costs ~10 s on 2 cores; the dynamic variants of these vision families
# run under -m full (swin_dynamic stays in the default run: its shapes need tensor_values).
DYNAMIC_IN_FULL = {"efficientnet_b0", "regnet_y_400mf", "convnext", "deeplabv3_mobilenet_v3", "ssdlite_head"}


def model_params():
    for f in make_torch_models.FAMILIES:
        yield f
        marks = [pytest.mark.full] if f in DYNAMIC_IN_FULL else []
        yield pytest.param(f + "_dynamic", marks=marks)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("name", list(model_params()))
def test_torch_model_matches_eager(name, backend, tmp_path):
    run_and_compare(ensure_torch_model(name), tmp_path, backend)


def test_dynamic_batch_is_a_symbolic_dim_with_its_range():
    """Dim("batch", min=1, max=64) becomes a ferry symbolic dim; inspect shows its range."""
    meta = ensure_torch_model("resnet18_dynamic")
    r = run_ferry("inspect", meta["path"], "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    (x,) = info["inputs"]
    assert isinstance(x["shape"][0], str) and x["shape"][1:] == [3, 32, 32], x
    assert info["dim_ranges"][x["shape"][0]][1] == 64, info["dim_ranges"]
    assert info["format"] == "torch"


def test_inplace_ops_import_out_of_place_when_unread():
    """torchvision's ReLU(inplace=True) and MobileNet's hardtanh_ are in the default export;
    they import because nothing reads their input afterwards (the numbers: test above)."""
    assert "relu_.default" in ensure_torch_model("resnet18")["targets"]
    assert "hardtanh_.default" in ensure_torch_model("mobilenet_v2")["targets"]


def test_inplace_read_later_is_refused():
    meta = ensure_torch_model("inplace_read_later")
    r = run_ferry("inspect", meta["path"])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "in place" in r.stdout and "read afterwards" in r.stdout, r.stdout


def test_inspect_lists_every_unsupported_aten_op():
    meta = ensure_torch_model("unsupported_ops")
    r = run_ferry("inspect", meta["path"])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "2 unsupported nodes" in r.stdout, r.stdout
    assert "aten.round.default" in r.stdout and "aten.flip.default" in r.stdout, r.stdout
    assert "no importer for this op" in r.stdout and "repair:" in r.stdout, r.stdout


def edited(meta, tmp_path, edit):
    """A copy of the model's archive with edit(entries) applied ({name: bytes}, names with the root)."""
    with zipfile.ZipFile(meta["path"]) as z:
        ents = {n: z.read(n) for n in z.namelist()}
    edit(ents)
    path = tmp_path / "edited.pt2"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for n, data in ents.items():
            z.writestr(n, data)
    path.write_bytes(buf.getvalue())
    return path


def test_real_archive_is_pickle_free_and_has_the_measured_layout():
    """The facts the reader relies on, checked on an archive torch 2.15 wrote."""
    meta = ensure_torch_model("resnet18")
    with zipfile.ZipFile(meta["path"]) as z:
        infos = z.infolist()
        names = [i.filename.split("/", 1)[1] for i in infos]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in infos)
        assert "models/model.json" in names and "data/weights/model_weights_config.json" in names
        root = infos[0].filename.split("/", 1)[0]
        cfg = json.loads(z.read(f"{root}/data/weights/model_weights_config.json"))["config"]
        assert cfg and not any(p["use_pickle"] for p in cfg.values())
        assert z.getinfo(f"{root}/data/sample_inputs/model.pt").file_size == 0
        program = json.loads(z.read(f"{root}/models/model.json"))
        assert program["schema_version"]["major"] == 8


def test_pickled_payload_is_refused_with_the_recipe(tmp_path):
    meta = ensure_torch_model("resnet18")

    def mark_pickled(ents):
        name = next(n for n in ents if n.endswith("model_weights_config.json"))
        cfg = json.loads(ents[name])
        next(iter(cfg["config"].values()))["use_pickle"] = True
        ents[name] = json.dumps(cfg).encode()

    r = run_ferry("run", edited(meta, tmp_path, mark_pickled))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "never unpickles" in r.stderr and "torch.export.save" in r.stderr, r.stderr


def test_custom_object_is_refused(tmp_path):
    meta = ensure_torch_model("gpt2")

    def add_obj(ents):
        root = next(iter(ents)).split("/", 1)[0]
        ents[f"{root}/data/constants/custom_obj_0"] = b"\x80\x02."

    r = run_ferry("inspect", edited(meta, tmp_path, add_obj))
    assert r.returncode == 2 and "custom_obj_0" in r.stderr and "never unpickles" in r.stderr, r.stderr


@pytest.mark.parametrize("victim", ["models/model.json", "data/weights/model_weights_config.json", "archive"])
def test_truncations_and_bit_flips_never_crash(victim, tmp_path):
    """Cuts and flips of the program JSON, the weights config or the whole archive: exit 0 or 2, one line."""
    meta = ensure_torch_model("mobilenet_v3_small")
    original = meta["path"].read_bytes()
    rng = np.random.default_rng(17)
    with zipfile.ZipFile(meta["path"]) as z:
        root = z.namelist()[0].split("/", 1)[0]
        part = original if victim == "archive" else z.read(f"{root}/{victim}")
    variants = [part[:n] for n in sorted(set(rng.integers(0, len(part), 8).tolist()))]
    for pos in rng.integers(0, len(part), 8).tolist():
        b = bytearray(part)
        b[pos] ^= 1 << int(rng.integers(0, 8))
        variants.append(bytes(b))
    for i, data in enumerate(variants):
        if victim == "archive":
            path = tmp_path / f"v{i}.pt2"
            path.write_bytes(data)
        else:
            path = edited(meta, tmp_path, lambda ents: ents.__setitem__(f"{root}/{victim}", data))
        r = run_ferry("inspect", path, timeout=120)
        assert r.returncode in (0, 2), f"exit {r.returncode} for variant {i} of {victim}:\n{r.stderr}"
        if r.returncode == 2:
            lines = [l for l in r.stderr.splitlines() if l.strip()]
            assert len(lines) == 1 and lines[0].startswith("ferry: error:"), r.stderr


def test_ops_table_is_the_committed_doc():
    """docs/torch_ops.md is `ferry ops --framework torch --markdown` and lists the issue's ops."""
    r = run_ferry("ops", "--framework", "torch", "--markdown", timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (REPO / "docs" / "torch_ops.md").read_text(), \
        "docs/torch_ops.md is stale: build/ferry ops --framework torch --markdown > docs/torch_ops.md"
    listed = {line.split("|")[1].strip() for line in r.stdout.splitlines() if line.startswith("| ") and "---" not in line}
    required = """conv2d.default linear.default addmm.default mm.default bmm.default matmul.default
        _native_batch_norm_legit_no_training.default layer_norm.default relu.default gelu.default silu.default
        hardswish.default hardsigmoid.default sigmoid.default tanh.default softmax.int add.Tensor add.Scalar sub.Tensor
        mul.Tensor mul.Scalar div.Tensor view.default reshape.default permute.default transpose.int
        flatten.using_ints unsqueeze.default squeeze.dim expand.default cat.default slice.Tensor select.int
        split.Tensor mean.dim adaptive_avg_pool2d.default max_pool2d.default avg_pool2d.default embedding.default
        scaled_dot_product_attention.default pow.Tensor_Scalar rsqrt.default sqrt.default neg.default
        arange.default cos.default sin.default dropout.default""".split()
    assert not [op for op in required if "aten." + op not in listed]


def per_layer_counts(stdout):
    """(compared, total) from the "per-layer: C of T node outputs" line of `ferry validate`."""
    line = next(l for l in stdout.splitlines() if "per-layer:" in l)
    compared, total = (int(w) for w in line.split("per-layer:")[1].split("node outputs")[0].split(" of "))
    return compared, total


@pytest.mark.parametrize("name", ["llama_dynamic", "resnet18"])
def test_validate_against_torch_per_layer(name, tmp_path):
    """`ferry validate MODEL.pt2` defaults to the torch reference (torch.export.load in Python);
    per layer, ferry's values match the program's node outputs by name."""
    import os

    meta = ensure_torch_model(name)
    env = dict(os.environ, FERRY_PYTHON=torch_python())
    r = subprocess.run([str(ferry()), "validate", str(meta["path"]), "--per-layer", "--json", str(tmp_path / "v.json")],
                       capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    assert r.returncode == 0, f"ferry validate failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    report = json.loads((tmp_path / "v.json").read_text())
    assert "torch" in json.dumps(report)
    compared, total = per_layer_counts(r.stdout)
    assert compared >= total // 2, r.stdout
    layers = report["samples"][0]["per_layer"]["layers"]
    assert len(layers) == compared and all(l["pass"] for l in layers)


def test_bench_and_convert_take_pt2(tmp_path):
    """Every command takes a .pt2: `bench` measures it; `convert` writes an ONNX file that
    ferry runs again with torch eager's results."""
    meta = ensure_torch_model("gpt2")
    r = run_ferry("bench", meta["path"], "--warmup", "1", "--iters", "3", "--json")
    assert r.returncode == 0, f"ferry bench failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    stats = json.loads(r.stdout)
    assert stats["latency_ms"]["p50"] > 0, stats
    onnx_file = tmp_path / "gpt2.onnx"
    r = run_ferry("convert", meta["path"], "-o", onnx_file)
    assert r.returncode == 0, f"ferry convert failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    run_and_compare(dict(meta, path=onnx_file), tmp_path, "cpu")


def test_dynamic_batch_outside_its_range_is_refused(tmp_path):
    """Dim("batch", min=1, max=64): `ferry run --shape` at batch 64 runs; at 65 it is refused,
    naming the input, the dim's symbol and its range."""
    meta = ensure_torch_model("resnet18_dynamic")
    info = json.loads(run_ferry("inspect", meta["path"], "--json").stdout)
    sym = info["inputs"][0]["shape"][0]
    assert info["dim_ranges"][sym] == [1, 64], info["dim_ranges"]
    ok = run_ferry("run", meta["path"], "--shape", "x=64x3x32x32", "--output-dir", tmp_path / "ok")
    assert ok.returncode == 0, ok.stderr
    bad = run_ferry("run", meta["path"], "--shape", "x=65x3x32x32", "--output-dir", tmp_path / "bad")
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert "input 'x'" in bad.stderr and f"('{sym}')" in bad.stderr and "[1, 64]" in bad.stderr, bad.stderr
