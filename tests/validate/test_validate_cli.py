"""`ferry validate` end to end: against ONNX Runtime, golden directories, --per-layer.

Models come from the end-to-end generators (tests/models/gen, cached in
tests/models/generated/ like tests/models does; FERRY_MODELS_DIR overrides).
FERRY_BIN names the ferry binary (default: build/ferry). Under CI=true a
missing binary or Python package fails instead of skipping.

    FERRY_BIN=build-validate/ferry .venv/bin/python -m pytest tests/validate -q
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MODELS = REPO / "tests" / "models"
sys.path.insert(0, str(MODELS / "gen"))


def _load_models_conftest():
    # Loaded under its own name: "conftest" may already be another directory's.
    spec = importlib.util.spec_from_file_location("ferry_models_conftest", MODELS / "conftest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


models = _load_models_conftest()
unavailable = models.unavailable

np = pytest.importorskip("numpy") if not models.IN_CI else __import__("numpy")

EXIT_OK, EXIT_USAGE, EXIT_MODEL, EXIT_MISMATCH = 0, 1, 2, 3
TIMEOUT_S = 600

# (source, name): a few small models of different kinds — convnets (classifier
# outputs), a transformer with integer inputs, hand-built graphs with many ops —
# run by default; every other end-to-end model (issue 3: validate passes on all of
# them) is marked `full`: `pytest -m full tests/validate`.
MODELS_AGAINST_ORT = [
    ("torch", "resnet18"),
    ("torch", "mobilenet_v3_small"),
    ("torch", "distilbert"),
    ("onnx", "binary_ops"),
    ("onnx", "norms"),
    ("onnx", "special_values"),
]


def _all_models_against_ort():
    import export_models
    import make_onnx_models

    every = [("torch", n) for n in export_models.MODEL_NAMES] + [("onnx", n) for n in make_onnx_models.MODEL_NAMES]
    return [pytest.param(s, n, id=f"{s}-{n}", marks=[] if (s, n) in MODELS_AGAINST_ORT else [pytest.mark.full])
            for s, n in every]


@pytest.fixture(scope="module")
def ferry():
    path = models.ferry_binary()
    if path is None:
        unavailable("ferry binary not found (set FERRY_BIN)")
    return path


@pytest.fixture(scope="module")
def have_ort():
    for mod in ("onnx", "onnxruntime"):
        try:
            __import__(mod)
        except ImportError as e:
            unavailable(f"{mod} not importable: {e}")


def model(source, name):
    return models.ensure_model(source, name, "small")


def bridge_env(**extra):
    """The environment for ferry: the bridge uses this interpreter (the one running pytest)."""
    env = dict(os.environ)
    env.setdefault("FERRY_PYTHON", sys.executable)
    env.update(extra)
    return env


def run(ferry, *args, env=None):
    cmd = [str(ferry), *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env or bridge_env())


def tolerance_args(meta):
    # A torch model whose own f32 rounding is large gets the generator's measured tolerance.
    r = float(meta.get("rtol", 0) or 0)
    return ["--atol", max(1e-3, r), "--rtol", max(1e-3, r)] if r > 1e-3 else []


def write_inputs(meta, path, compressed=False):
    from common import make_inputs

    feeds = make_inputs(meta["inputs"], seed=0)
    (np.savez_compressed if compressed else np.savez)(path, **feeds)
    return feeds


def reference_dump(meta, inputs, out, intermediates=False):
    """Runs the bridge directly, as ferry would."""
    cmd = [sys.executable, "-m", "ferry.reference", "onnxruntime", str(meta["path"]), "--inputs", str(inputs),
           "--out", str(out)] + (["--intermediates"] if intermediates else [])
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads((Path(out) / "manifest.json").read_text())


@pytest.mark.parametrize("source,name", _all_models_against_ort())
def test_passes_against_onnxruntime(source, name, ferry, have_ort, tmp_path):
    meta = model(source, name)
    inputs = tmp_path / "in.npz"
    write_inputs(meta, inputs)
    report = tmp_path / "report.json"
    proc = run(ferry, "validate", meta["path"], "--reference", "onnxruntime", "--inputs", inputs,
               "--json", report, *tolerance_args(meta))
    assert proc.returncode == EXIT_OK, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "PASS" in proc.stdout
    j = json.loads(report.read_text())
    assert j["pass"] is True
    assert [o["name"] for o in j["samples"][0]["outputs"]] == meta["outputs"]
    assert j["reference"]["producer"].startswith("onnxruntime ")


def test_onnxruntime_is_the_default_and_samples_vary(ferry, have_ort, tmp_path):
    meta = model("torch", "resnet18")
    report = tmp_path / "r.json"
    proc = run(ferry, "validate", meta["path"], "--samples", 2, "--seed", 5, "--json", report)
    assert proc.returncode == EXIT_OK, proc.stdout + proc.stderr
    j = json.loads(report.read_text())
    assert j["reference"]["spec"] == "onnxruntime"
    assert [s["seed"] for s in j["samples"]] == [5, 6]
    assert j["samples"][0]["inputs"][0]["source"] == "N(0,1)"
    m = j["samples"][0]["outputs"][0]["metrics"]
    # resnet18's logits are [1, classes]: classifier-like.
    assert m["top1_agreement"] == 1.0
    assert m["cosine"] > 0.9999


def test_per_layer_against_onnxruntime_passes(ferry, have_ort, tmp_path):
    meta = model("torch", "resnet18")
    report = tmp_path / "r.json"
    proc = run(ferry, "validate", meta["path"], "--per-layer", "--json", report)
    assert proc.returncode == EXIT_OK, proc.stdout + proc.stderr
    pl = json.loads(report.read_text())["samples"][0]["per_layer"]
    assert pl["first_divergence"] is None
    # Every node of the optimized graph: plain ones by name, fused ones (conv + relu + add
    # as one FusedConv) through their provenance, to the source tensor of their last node.
    optimized = json.loads(run(ferry, "inspect", meta["path"], "--optimized", "--json").stdout)
    assert optimized["op_histogram"].get("FusedConv", 0) >= 16
    assert pl["compared"] == optimized["num_nodes"]
    assert all(layer["pass"] for layer in pl["layers"])
    by = {layer["matched_by"] for layer in pl["layers"]}
    assert by == {"name", "provenance"}, by
    fused = [layer for layer in pl["layers"] if layer["op"] == "FusedConv"]
    assert all(layer["matched_by"] == "provenance" and layer["reference_tensor"] != layer["tensor"] for layer in fused)
    assert "all within tolerance" in proc.stdout


@pytest.mark.parametrize("name", ["bert", "vit_b_16"])
def test_per_layer_through_transformer_fusions(ferry, have_ort, name, tmp_path):
    """A FusedMatMul with a GELU epilogue (erf GELU written out: x / sqrt 2 inside it) stands for the
    GELU's output, not for a tensor inside the fused group; ViT's sequence-first torch attention
    (its packed projection split, the 3-D Attention) compares too. Against the reference interpreter."""
    meta = model("torch", name)
    report = tmp_path / "r.json"
    proc = run(ferry, "validate", meta["path"], "--reference", "reference", "--per-layer", "--json", report)
    assert proc.returncode == EXIT_OK, proc.stdout + proc.stderr
    pl = json.loads(report.read_text())["samples"][0]["per_layer"]
    assert pl["first_divergence"] is None
    fused = [layer for layer in pl["layers"] if layer["op"] == "FusedMatMul"]
    assert fused and all(layer["pass"] for layer in fused)
    for layer in fused:
        assert "Div" not in layer["reference_tensor"], layer  # not the GELU's inner x / sqrt 2


def test_per_layer_names_the_node_of_a_perturbed_golden_tensor(ferry, have_ort, tmp_path):
    import onnx

    meta = model("torch", "resnet18")
    inputs = tmp_path / "in.npz"
    write_inputs(meta, inputs)
    golden = tmp_path / "golden"
    manifest = reference_dump(meta, inputs, golden, intermediates=True)
    # Perturb an intermediate in the middle of the network.
    target = manifest["intermediates"][len(manifest["intermediates"]) // 3]
    path = golden / manifest["tensors"][target]
    arr = np.load(path)
    np.save(path, arr + np.float32(1.0))
    graph = onnx.load(str(meta["path"])).graph
    node = next(n for n in graph.node if target in n.output)

    report = tmp_path / "r.json"
    proc = run(ferry, "validate", meta["path"], "--reference", f"golden:{golden}", "--per-layer", "--json", report)
    assert proc.returncode == EXIT_MISMATCH, proc.stdout + proc.stderr
    assert f"first divergent node '{node.name}'" in proc.stdout, proc.stdout
    d = json.loads(report.read_text())["samples"][0]["per_layer"]["first_divergence"]
    assert d["node"] == node.name
    assert d["op"] == node.op_type
    assert d["reference_tensor"] == target
    assert d["pass"] is False
    assert d["metrics"]["max_abs"] == pytest.approx(1.0, abs=1e-3)
    assert d["metrics"]["out_of_tolerance"] == arr.size
    # Outputs still agree: only the golden intermediate was edited.
    assert json.loads(report.read_text())["samples"][0]["outputs"][0]["pass"] is True


def test_golden_round_trip(ferry, have_ort, tmp_path):
    meta = model("torch", "resnet18")
    saved = tmp_path / "saved"
    proc = run(ferry, "validate", meta["path"], "--seed", 3, "--save-reference", saved)
    assert proc.returncode == EXIT_OK, proc.stdout + proc.stderr
    m = json.loads((saved / "manifest.json").read_text())
    assert m["format"] == "ferry-golden" and m["inputs"] == ["input"] and m["outputs"] == ["logits"]
    # The saved reference validates on its own, with its own inputs.
    proc = run(ferry, "validate", meta["path"], "--reference", f"golden:{saved}")
    assert proc.returncode == EXIT_OK, proc.stdout + proc.stderr
    assert f"from golden:{saved}" in proc.stdout
    # A golden dir written by the bridge directly, and a compressed .npz input, work too.
    inputs = tmp_path / "in.npz"
    write_inputs(meta, inputs, compressed=True)
    bridge = tmp_path / "bridge"
    reference_dump(meta, inputs, bridge)
    proc = run(ferry, "validate", meta["path"], "--reference", f"golden:{bridge}")
    assert proc.returncode == EXIT_OK, proc.stdout + proc.stderr
    # A golden directory also serves as --inputs.
    proc = run(ferry, "validate", meta["path"], "--inputs", bridge, "--reference", "reference")
    assert proc.returncode == EXIT_OK, proc.stdout + proc.stderr
    # An edited golden output is a mismatch (exit 3), naming the output.
    out_file = bridge / json.loads((bridge / "manifest.json").read_text())["tensors"]["logits"]
    np.save(out_file, -np.load(out_file))
    proc = run(ferry, "validate", meta["path"], "--reference", f"golden:{bridge}")
    assert proc.returncode == EXIT_MISMATCH, proc.stdout + proc.stderr
    assert "output 'logits'" in proc.stdout and "FAIL" in proc.stdout


def test_bridge_dump_lists_intermediates_and_nodes(have_ort, tmp_path):
    meta = model("onnx", "norms")
    inputs = tmp_path / "in.npz"
    feeds = write_inputs(meta, inputs)
    m = reference_dump(meta, inputs, tmp_path / "g", intermediates=True)
    assert m["format"] == "ferry-golden" and m["version"] == 1
    assert set(m["inputs"]) == set(feeds)
    assert m["outputs"] == meta["outputs"]
    assert m["intermediates"], "norms has intermediate tensors"
    for name in m["inputs"] + m["outputs"] + m["intermediates"]:
        assert (tmp_path / "g" / m["tensors"][name]).is_file()
    for name, arr in feeds.items():
        assert np.array_equal(np.load(tmp_path / "g" / m["tensors"][name]), arr)
    produced = {o for outs in m["nodes"].values() for o in outs}
    assert set(m["intermediates"]) <= produced


def test_json_schema_fields(ferry, tmp_path):
    meta = model("onnx", "norms")
    proc = run(ferry, "validate", meta["path"], "--reference", "reference", "--per-layer", "--json", "-")
    assert proc.returncode == EXIT_OK, proc.stderr
    j = json.loads(proc.stdout)  # '-': JSON only on stdout
    for key in ("ferry_version", "model", "subject", "reference", "tolerances", "per_layer", "pass", "notes",
                "samples"):
        assert key in j, key
    assert set(j["tolerances"]) == {"f64", "f32", "f16", "bf16"}
    s = j["samples"][0]
    assert {"index", "seed", "pass", "notes", "inputs", "outputs", "per_layer"} <= set(s)
    o = s["outputs"][0]
    assert {"name", "pass", "problem", "dtype", "reference_dtype", "shape", "reference_shape", "atol", "rtol",
            "metrics"} <= set(o)
    assert {"numel", "max_abs", "mean_abs", "max_rel", "rmse", "cosine", "worst_ratio", "worst_index",
            "out_of_tolerance", "nonfinite_mismatch", "top1_agreement", "top5_agreement"} <= set(o["metrics"])
    assert j["subject"] == "ferry cpu backend, graph optimized for target cpu"  # the default backend
    assert o["metrics"]["max_abs"] < 1e-5  # the optimized graph against the unoptimized one
    pl = s["per_layer"]
    assert {"node_outputs", "compared", "unmatched", "first_divergence", "layers"} <= set(pl)
    assert {"index", "node", "op", "provenance", "tensor", "reference_tensor", "matched_by"} <= set(pl["layers"][0])


def test_no_optimize_validates_the_import_itself(ferry, tmp_path):
    meta = model("torch", "resnet18")
    # The interpreter on both sides (the default cpu backend rounds differently).
    proc = run(ferry, "validate", meta["path"], "--reference", "reference", "--no-optimize", "--per-layer",
               "--backend", "reference", "--json", "-")
    assert proc.returncode == EXIT_OK, proc.stderr
    j = json.loads(proc.stdout)
    assert j["subject"] == "ferry reference interpreter, imported graph (--no-optimize)"
    pl = j["samples"][0]["per_layer"]
    # The same graph on both sides: every node output matches by name, bit for bit.
    assert pl["unmatched"] == 0
    assert all(layer["matched_by"] == "name" and layer["metrics"]["max_abs"] == 0 for layer in pl["layers"])


def test_usage_and_setup_errors(ferry, tmp_path):
    meta = model("onnx", "norms")
    proc = run(ferry, "validate", meta["path"], "--reference", "bogus")
    assert proc.returncode == EXIT_USAGE and "not one of" in proc.stderr
    proc = run(ferry, "validate", meta["path"], "--inputs", tmp_path / "x.npz", "--samples", 2)
    assert proc.returncode == EXIT_USAGE and "exclude each other" in proc.stderr
    proc = run(ferry, "validate", meta["path"], "--tol", "f16=1")
    assert proc.returncode == EXIT_USAGE and "DTYPE=ATOL,RTOL" in proc.stderr
    proc = run(ferry, "validate", meta["path"], "--inputs", tmp_path / "missing.npz", "--reference", "reference")
    assert proc.returncode == EXIT_MODEL and "missing.npz" in proc.stderr
    bad = tmp_path / "bad.npz"
    np.savez(bad, not_an_input=np.zeros(2, np.float32))
    proc = run(ferry, "validate", meta["path"], "--inputs", bad, "--reference", "reference")
    assert proc.returncode == EXIT_MODEL and "'not_an_input' names no model input" in proc.stderr
    proc = run(ferry, "validate", meta["path"], "--reference", f"golden:{tmp_path / 'nodir'}")
    assert proc.returncode == EXIT_MODEL and "nodir: not a directory" in proc.stderr
    proc = run(ferry, "validate", meta["path"], env=bridge_env(FERRY_PYTHON=str(tmp_path / "no-python")))
    assert proc.returncode == EXIT_MODEL and "FERRY_PYTHON" in proc.stderr


def test_missing_onnxruntime_is_a_clear_error(ferry, tmp_path):
    # A fake interpreter that behaves like one without onnxruntime installed.
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexec " + sys.executable + " -c \"import sys; sys.modules['onnxruntime'] = None; "
                    "sys.argv = ['ferry.reference'] + sys.argv[3:]; import runpy; "
                    "runpy.run_module('ferry.reference', run_name='__main__')\" \"$@\"\n")
    fake.chmod(0o755)
    meta = model("onnx", "norms")
    proc = run(ferry, "validate", meta["path"], env=bridge_env(FERRY_PYTHON=str(fake)))
    assert proc.returncode == EXIT_MODEL, proc.stdout + proc.stderr
    assert "'onnxruntime' is not importable" in proc.stderr, proc.stderr
    assert "pip install onnxruntime" in proc.stderr


def test_a_converted_model_is_refused_with_what_to_do(ferry, have_ort, tmp_path):
    """A model `ferry convert` wrote has ferry's fused ops: onnxruntime cannot be its reference, and
    the error says so (naming the ops) instead of passing on onnxruntime's 'not a registered op'."""
    meta = model("torch", "resnet18")
    out = tmp_path / "converted.onnx"
    proc = run(ferry, "convert", meta["path"], "-o", out)
    assert proc.returncode == EXIT_OK, proc.stdout + proc.stderr
    proc = run(ferry, "validate", out)
    assert proc.returncode == EXIT_MODEL, proc.stdout + proc.stderr
    assert "has ferry's own ops (FusedConv" in proc.stderr and "validate the source model instead" in proc.stderr, \
        proc.stderr
