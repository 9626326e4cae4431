"""`ferry validate` on a lowered model (docs/validate.md, "Lowered models"): with a node below
fp32 and no --atol / --rtol / --tol, each floating output passes by the accuracy budget (the
guard's default for the lowest precision in use, or --accuracy-budget), not by fp32's
elementwise tolerance; the elementwise counts are still reported.

Two small models: `matmul` (x @ w + b with outputs of magnitude ~10: at bf16 most elements are
beyond fp32's tolerance, the cosine is ~0.99999) and test_precision_cli.py's sensitive model,
whose LayerNormalization of scale 1e5 overflows at fp16 (output NaN). Both hold on CPUs with
and without bf16 hardware (emulation has the hardware's numerics). The reference is ferry's
interpreter on the fp32 import (no Python bridge), and ONNX Runtime once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from test_precision_cli import IMPORT_ERROR, sensitive_model, unavailable

if not IMPORT_ERROR:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

EXIT_OK, EXIT_USAGE, EXIT_MISMATCH = 0, 1, 3


@pytest.fixture(scope="module")
def ferry_bin(ferry_cli):
    if IMPORT_ERROR:
        unavailable(f"numpy / onnx / ml_dtypes not importable: {IMPORT_ERROR}")
    return ferry_cli


def validate(ferry_bin, model, *args, expect):
    env = dict(os.environ)
    env.setdefault("FERRY_PYTHON", sys.executable)  # the onnxruntime bridge: this interpreter
    r = subprocess.run([str(ferry_bin), "validate", str(model), *map(str, args)], capture_output=True, text=True,
                       timeout=300, check=False, env=env)
    assert r.returncode == expect, f"validate {' '.join(map(str, args))}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def report(r):
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def matmul(ferry_bin, tmp_path_factory):
    path = tmp_path_factory.mktemp("budget") / "matmul.onnx"
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((32, 16)) * 2).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"), helper.make_node("Add", ["h", "b"], ["y"],
                                                                                         name="bias")]
    g = helper.make_graph(nodes, "matmul", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.mark.parametrize("reference", ["reference", "onnxruntime"])
def test_bf16_within_the_default_budget_passes(ferry_bin, matmul, reference, request):
    if reference == "onnxruntime":
        request.getfixturevalue("ort")
    r = validate(ferry_bin, matmul, "--precision", "bf16", "--reference", reference, "--json", "-", expect=EXIT_OK)
    assert "precision bf16: " in r.stderr, r.stderr
    j = report(r)
    assert j["pass"] is True
    assert j["verdict"]["rule"] == "accuracy_budget", j["verdict"]
    assert j["verdict"]["budget"] == "cosine>=0.999" and j["verdict"]["from"] == "default for bf16", j["verdict"]
    out = j["samples"][0]["outputs"][0]
    assert out["pass"] is True and out["budget"]["pass"] is True, out
    assert out["budget"]["terms"][0]["term"] == "cosine>=0.999" and out["budget"]["terms"][0]["value"] < 1, out
    # fp32's elementwise tolerance would have failed it: reported, not the verdict
    assert out["elementwise_pass"] is False and out["metrics"]["out_of_tolerance"] > 0, out
    text = validate(ferry_bin, matmul, "--precision", "bf16", "--reference", reference, expect=EXIT_OK).stdout
    assert "verdict    accuracy budget cosine>=0.999 (default for bf16; --accuracy-budget to change, " \
           "--atol/--rtol for elementwise)" in text, text
    assert "(elementwise, for information)" in text and "PASS: " in text, text


def test_elementwise_options_keep_the_elementwise_verdict(ferry_bin, matmul):
    r = validate(ferry_bin, matmul, "--precision", "bf16", "--rtol", "1e-3", "--reference", "reference", "--json", "-",
                 expect=EXIT_MISMATCH)
    j = report(r)
    assert j["verdict"] == {"rule": "elementwise"}, j["verdict"]
    out = j["samples"][0]["outputs"][0]
    assert out["pass"] is False and out["budget"] is None and out["problem"].endswith("elements out of tolerance"), out


def test_an_fp32_model_keeps_the_elementwise_verdict(ferry_bin, matmul):
    r = validate(ferry_bin, matmul, "--reference", "reference", expect=EXIT_OK)
    assert "verdict" not in r.stdout and "within tolerance" in r.stdout, r.stdout


def test_a_tighter_budget_fails_naming_the_term(ferry_bin, matmul):
    args = ["--precision", "bf16", "--accuracy-budget", "cosine>=0.9999999", "--reference", "reference"]
    j = report(validate(ferry_bin, matmul, *args, "--json", "-", expect=EXIT_MISMATCH))
    assert j["verdict"]["from"] == "--accuracy-budget" and j["verdict"]["budget"] == "cosine>=0.9999999", j["verdict"]
    out = j["samples"][0]["outputs"][0]
    assert out["pass"] is False and out["budget"]["terms"][0]["pass"] is False, out
    assert out["problem"].startswith("accuracy budget fails: cosine 0.99") and "(needs >= 0.9999999)" in out["problem"]
    text = validate(ferry_bin, matmul, *args, expect=EXIT_MISMATCH).stdout
    assert "what to do: `ferry convert " in text and "--precision bf16" in text and "--keep-fp32 NODE" in text, text


def test_fp16_overflow_fails_the_budget_naming_the_nan(ferry_bin, tmp_path):
    model = tmp_path / "sensitive.onnx"
    sensitive_model(model)
    j = report(validate(ferry_bin, model, "--precision", "fp16", "--reference", "reference", "--json", "-",
                        expect=EXIT_MISMATCH))
    assert j["verdict"]["budget"] == "cosine>=0.999,max_rel<=0.01" and j["verdict"]["precision"] == "fp16", j
    out = j["samples"][0]["outputs"][0]
    assert out["budget"]["pass"] is False and out["budget"]["nonfinite_mismatch"] > 0, out
    assert out["problem"].startswith("accuracy budget fails: ") and "NaN/Inf" in out["problem"], out["problem"]
    text = validate(ferry_bin, model, "--precision", "fp16", "--reference", "reference", "--per-layer",
                    expect=EXIT_MISMATCH).stdout
    assert "--precision fp16` runs the accuracy guard" in text, text
    assert "source node(s): ln_big" in text, text  # --per-layer: where the Inf starts


def test_saved_decisions_are_judged_by_their_budget(ferry_bin, matmul, tmp_path):
    out = tmp_path / "bf16.onnx"
    subprocess.run([str(ferry_bin), "convert", str(matmul), "-o", str(out), "--precision", "bf16", "--samples", "2"],
                   check=True, capture_output=True, timeout=300)
    r = validate(ferry_bin, out, "--reference", "reference", "--json", "-", expect=EXIT_OK)
    assert "precision saved: " in r.stderr, r.stderr
    assert report(r)["verdict"]["from"] == "default for bf16"


@pytest.mark.parametrize("args, message", [
    (["--accuracy-budget", "cosine>0.9"], "term 'cosine>0.9' is not NAME>=V"),
    (["--accuracy-budget", "cosine>=0.99", "--atol", "1e-2"], "exclude each other"),
])
def test_budget_usage_errors(ferry_bin, matmul, args, message):
    r = validate(ferry_bin, matmul, "--precision", "bf16", *args, expect=EXIT_USAGE)
    assert message in r.stderr, r.stderr
