"""`ferry convert` end to end on the model set: optimize, write ONNX, run it again.

For each small end-to-end model (tests/models: torch exports and hand-built
ONNX graphs):

    ferry convert MODEL -o OUT.onnx --report REPORT.json [--check-passes]

then check that
  - OUT.onnx passes onnx.checker.check_model (ferry-domain ops aside),
  - `ferry run OUT.onnx` matches ONNX Runtime on the *original* model within
        |ferry - ort| <= rtol * max(1, |ort|)   rtol 1e-4 (the model's own rtol if larger),
    integers and bools exactly,
  - `ferry inspect OUT.onnx` succeeds, and the report lists every pass.
--check-passes (on a subset, it is slower) additionally compares the graph
after every pass that changed it with the unoptimized graph in the reference
interpreter, so a wrong rewrite is pinned on its pass.

FERRY_BIN names the binary (default: build/ferry). Under CI=true missing
prerequisites fail instead of skipping.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("ferry_models_conftest", REPO / "tests" / "models" / "conftest.py")
models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(models)  # puts tests/models/gen on sys.path

import export_models  # noqa: E402
from common import make_inputs  # noqa: E402

try:
    import make_onnx_models

    ONNX_NAMES = make_onnx_models.MODEL_NAMES
except ImportError:
    ONNX_NAMES = []

RTOL = 1e-4
TIMEOUT_S = 600
# Models run with --check-passes: the ones with the most rewrites (BatchNorm,
# Gemm, shape arithmetic, Div, duplicates; Conv/MatMul fusions: residual Adds,
# Relu/Clip/HardSwish/HardSigmoid/SiLU epilogues, depthwise pairs), kept few
# since each changed pass means one more interpreter run.
CHECK_PASSES = {"bert", "gpt2", "shufflenet_v2", "densenet121", "vit_b_16", "tf_nhwc_cnn", "dynamic_shapes",
                "shape_ops", "attr_forms_opset9", "norms",
                "resnet50", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "yolo", "conv_variants"}


def _params():
    params = [pytest.param("torch", n, id=f"torch-{n}") for n in export_models.MODEL_NAMES]
    params += [pytest.param("onnx", n, id=f"onnx-{n}") for n in ONNX_NAMES]
    return params


def ferry(*args, timeout=TIMEOUT_S):
    binary = models.ferry_binary()
    if binary is None:
        models.unavailable("ferry binary not found (set FERRY_BIN)")
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def run_ort(path, feeds):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def compare(name, got, want, rtol):
    assert got.shape == want.shape, f"output {name}: shape {got.shape}, ONNX Runtime {want.shape}"
    assert got.dtype == want.dtype, f"output {name}: dtype {got.dtype}, ONNX Runtime {want.dtype}"
    if want.dtype.kind != "f":
        assert np.array_equal(got, want), f"output {name}: {int((got != want).sum())} elements differ"
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        ok = (np.abs(g - w) <= rtol * np.maximum(1.0, np.abs(w))) | (np.isnan(g) & np.isnan(w)) | \
             (np.isinf(w) & (g == w))
    assert ok.all(), (f"output {name}: {int((~ok).sum())} of {w.size} elements off by more than {rtol} * max(1, |ort|); "
                      f"max abs error {float(np.nanmax(np.abs(g - w))):.3g}")


def check_onnx(path):
    import onnx

    model = onnx.load(str(path))
    assert model.opset_import[0].version >= 18
    if any(op.domain == "ferry" for op in model.opset_import):
        # The checker knows no schema for ferry's ops; check the rest of the model.
        onnx.checker.check_model(model, full_check=False)
    else:
        onnx.checker.check_model(model, full_check=True)
    return model


@pytest.mark.parametrize("source,name", _params())
def test_convert_runs_and_matches_the_original(source, name, tmp_path):
    meta = models.ensure_model(source, name, "small")
    out, report = tmp_path / "out.onnx", tmp_path / "report.json"
    args = ["convert", meta["path"], "-o", out, "--report", report]
    if name in CHECK_PASSES:
        args.append("--check-passes")
        for spec in meta["inputs"]:
            args += ["--shape", f"{spec['name']}={'x'.join(map(str, spec['shape'])) or 'scalar'}"]
    proc = ferry(*args)
    if proc.returncode != 0 and "not supported yet" in proc.stderr:
        # An op ferry cannot run yet (tests/models/test_models.py fails on it too): not the optimizer's doing.
        if ferry("run", meta["path"]).returncode != 0:
            pytest.skip(f"ferry cannot run {name} yet: {proc.stderr.strip()[-300:]}")
    assert proc.returncode == 0, f"ferry {' '.join(map(str, args))}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert "nodes ->" in proc.stdout
    check_onnx(out)

    rep = json.loads(report.read_text())
    assert rep["model"] == str(meta["path"]) and rep["optimized"] is True
    passes = {p["name"] for p in rep["passes"]}
    assert {"eliminate_identity", "fold_constants", "eliminate_dead", "canonicalize_gemm"} <= passes

    feeds = make_inputs(meta["inputs"], seed=0)
    expected = run_ort(meta["path"], feeds)
    in_dir, out_dir = tmp_path / "in", tmp_path / "outputs"
    in_dir.mkdir()
    cmd = ["run", out]
    for i, (input_name, arr) in enumerate(feeds.items()):
        np.save(in_dir / f"{i}.npy", arr)
        cmd += ["--input", f"{input_name}={in_dir / f'{i}.npy'}"]
    cmd += ["--output-dir", out_dir]
    proc = ferry(*cmd)
    assert proc.returncode == 0, f"ferry run on the converted model failed:\n{proc.stderr[-3000:]}"
    rtol = max(RTOL, meta.get("rtol", RTOL))
    for out_name, want in expected.items():
        # ferry run names files after outputs, odd characters replaced (cmd_run.cc).
        path = out_dir / (re.sub(r"[^A-Za-z0-9_.-]", "_", out_name) + ".npy")
        assert path.exists(), f"no output file for {out_name!r}: {sorted(p.name for p in out_dir.iterdir())}"
        compare(out_name, np.load(path), want, rtol)

    proc = ferry("inspect", out)
    assert proc.returncode == 0, proc.stderr


def test_inspect_optimized_shows_the_optimized_graph(tmp_path):
    meta = models.ensure_model("torch", "densenet121", "small")
    plain = ferry("inspect", meta["path"], "--json")
    optimized = ferry("inspect", meta["path"], "--json", "--optimized")
    assert plain.returncode == 0 and optimized.returncode == 0, plain.stderr + optimized.stderr
    before, after = json.loads(plain.stdout)["op_histogram"], json.loads(optimized.stdout)["op_histogram"]
    assert before.get("BatchNormalization", 0) > 0
    assert "BatchNormalization" not in after and "Gemm" not in after
    assert after.get("FusedMatMul", 0) >= 1  # the classifier's Gemm: MatMul + bias, fused


def test_no_optimize_writes_the_imported_graph(tmp_path):
    meta = models.ensure_model("torch", "resnet18", "small")
    out = tmp_path / "plain.onnx"
    proc = ferry("convert", meta["path"], "-o", out, "--no-optimize")
    assert proc.returncode == 0, proc.stderr
    model = check_onnx(out)
    assert any(n.op_type == "Gemm" for n in model.graph.node)


def test_bad_arguments_are_usage_errors(tmp_path):
    meta = models.ensure_model("torch", "resnet18", "small")
    proc = ferry("convert", meta["path"])
    assert proc.returncode == 1 and "--output is required" in proc.stderr
    proc = ferry("convert", meta["path"], "-o", meta["path"])
    assert proc.returncode == 1 and "is the input model" in proc.stderr
    proc = ferry("convert", meta["path"], "-o", tmp_path / "x.onnx", "--opset", "13")
    assert proc.returncode == 1 and "opset 18 or newer" in proc.stderr
    proc = ferry("convert", tmp_path / "missing.onnx", "-o", tmp_path / "x.onnx")
    assert proc.returncode == 2 and "cannot open" in proc.stderr
