"""Models as ONNX Runtime's optimizers write them (make_ort_optimized.py: its
transformer optimizer on a BERT and a GPT-2, its ORT_ENABLE_EXTENDED offline
optimization on a CNN) import with repairs and match ONNX Runtime on the
optimized model; without --repair, `ferry inspect` lists the repair each
contrib node would get; `ferry convert --repair --check-repairs` records every
repair with a passed check."""

import json
import subprocess

import numpy as np
import onnx
import pytest

from model_cache import ferry_binary, unavailable
from repair_util import assert_close, contrib_ops, ferry_outputs, ort_outputs

EXPECTED = {  # what each generator must make ORT write, so no test below passes vacuously
    "bert": {"Attention", "BiasGelu", "EmbedLayerNormalization", "SkipLayerNormalization"},
    "gpt2": {"Attention", "EmbedLayerNormalization", "FastGelu", "SkipLayerNormalization"},
    "cnn": {"FusedConv", "FusedMatMul", "Gelu"},
}
# Whole models stack a few repaired ops; the bound is per output element.
MODEL_TOLERANCE = {"reference": (1e-4, 1e-3), "cpu": (1e-4, 1e-3)}


@pytest.fixture(scope="module")
def optimized(tmp_path_factory, ort):
    try:
        import torch  # noqa: F401
    except ImportError as e:
        unavailable(f"torch not importable: {e}")
    import make_ort_optimized

    out = tmp_path_factory.mktemp("ort_optimized")
    return {name: make_ort_optimized.build(name, out) for name in EXPECTED}


def feeds_for(name):
    rng = np.random.default_rng(7)
    if name == "cnn":
        return {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)}
    ids = rng.integers(0, 50, (2, 8)).astype(np.int64)
    if name == "gpt2":
        return {"input_ids": ids}
    mask = np.ones((2, 8), np.int64)
    mask[1, 5:] = 0  # right padding: the optimizer's mask_index form
    return {"input_ids": ids, "token_type_ids": rng.integers(0, 2, (2, 8)).astype(np.int64), "attention_mask": mask}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_optimized_model_has_contrib_ops(name, optimized):
    model = onnx.load(optimized[name])
    assert {op for _, op in contrib_ops(model)} == EXPECTED[name]
    if name == "cnn":  # ORT's LayerNorm fusion writes the default-domain op at opset 14 (ONNX has it from 17)
        assert any(n.op_type == "LayerNormalization" and n.domain == "" for n in model.graph.node)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_repaired_model_matches_onnxruntime(name, optimized, ferry_api, ort):
    path, feeds = optimized[name], feeds_for(name)
    want = ort_outputs(ort, path, feeds)
    for backend in ("reference", "cpu"):
        got, repairs = ferry_outputs(ferry_api, path, feeds, backend)
        contrib = [n for n in onnx.load(path).graph.node if n.domain == "com.microsoft"]
        assert len([r for r in repairs if r["domain"] == "com.microsoft"]) == len(contrib)
        assert_close(got, want, backend, name, MODEL_TOLERANCE)


def run_ferry(*args):
    binary = ferry_binary()
    if binary is None:
        unavailable("the ferry binary is not built (FERRY_BIN or build/ferry)")
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_inspect_lists_repairs(name, optimized):
    r = run_ferry("inspect", optimized[name], "--json")
    assert r.returncode == 2, r.stderr
    unsupported = json.loads(r.stdout)["coverage"]["unsupported"]
    contrib = [n for n in onnx.load(optimized[name]).graph.node if n.domain == "com.microsoft"]
    assert sorted(u["node_name"] for u in unsupported if u["domain"] == "com.microsoft") == \
        sorted(n.name for n in contrib)
    for u in unsupported:
        assert u["proposed_repair"].startswith("repair available: "), u
        assert "(use --repair)" in u["proposed_repair"], u
    text = run_ferry("inspect", optimized[name])
    assert "repair available: com.microsoft." in text.stdout
    repaired = run_ferry("inspect", optimized[name], "--repair", "--json")
    assert repaired.returncode == 0, repaired.stderr
    assert len(json.loads(repaired.stdout)["repairs"]) == len(unsupported)


def test_convert_checks_repairs(optimized, tmp_path):
    report = tmp_path / "report.json"
    r = run_ferry("convert", optimized["cnn"], "-o", tmp_path / "out.onnx", "--repair", "--check-repairs",
                  "--report", report)
    assert r.returncode == 0, r.stderr
    repairs = json.loads(report.read_text())["repairs"]
    assert sorted(x["op_type"] for x in repairs) == ["FusedConv"] * 3 + ["FusedMatMul", "Gelu", "LayerNormalization"]
    for x in repairs:
        assert x["check"] == "passed", x
        assert x["check_detail"].startswith("max |ferry - onnxruntime| "), x
    assert "repairs applied" in r.stdout and "check: passed" in r.stdout


def test_convert_without_repair_points_to_it(optimized, tmp_path):
    r = run_ferry("convert", optimized["bert"], "-o", tmp_path / "out.onnx")
    assert r.returncode != 0
    assert "use --repair" in r.stderr
