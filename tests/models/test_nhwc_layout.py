"""Layout end to end: NHWC graphs written the way tf2onnx writes Keras models lose their inner Transposes.

For each model of gen/make_nhwc_models.py (cached in tests/models/generated/onnx_nhwc):

    ferry convert MODEL -o OUT.onnx --report REPORT.json --check-passes

then check that
  - --check-passes passed: after every pass that changed the graph, its outputs
    equal the unoptimized graph's in the reference interpreter,
  - `ferry run OUT.onnx` matches ONNX Runtime on the original model,
        |ferry - ort| <= 1e-4 * max(1, |ort|),
    and matches `ferry run MODEL` (the unoptimized import) within 1e-5,
  - no Transpose in OUT.onnx has a Conv both upstream and downstream of it, and
    `ferry inspect MODEL --optimized --json` counts exactly the sidecar's
    "boundary_transposes" (those at the NHWC inputs and outputs),
  - propagate_transposes applied and left no near miss between convolutions.

And for the default end-to-end set (NCHW torch exports, hand-built ONNX):
optimizing adds no Transpose (beyond those canonicalize_gemm makes for Gemm
operands with transA/transB on computed values).

FERRY_BIN names the binary (default: build/ferry). Under CI=true missing
prerequisites fail instead of skipping.
"""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest

import export_models
from common import generator_hash, make_inputs, read_sidecar
from model_cache import cache_dir, ensure_model, ferry_binary, unavailable

try:
    import make_nhwc_models
    import make_onnx_models

    NHWC_NAMES = make_nhwc_models.MODEL_NAMES
    ONNX_NAMES = make_onnx_models.MODEL_NAMES
except ImportError:  # onnx missing: tests/models/test_models.py says so
    NHWC_NAMES, ONNX_NAMES = [], []

RTOL_ORT = 1e-4
RTOL_UNOPTIMIZED = 1e-5
TIMEOUT_S = 300


def ensure_nhwc_model(name):
    """Generates (or reuses the cached) NHWC model; returns its sidecar dict plus "path"."""
    out = cache_dir("onnx_nhwc")
    meta = read_sidecar(out, name)
    if meta is None or meta.get("generator") != generator_hash(*make_nhwc_models.SOURCES) \
            or not (out / meta["file"]).exists():
        make_nhwc_models.build(name, out)
        meta = read_sidecar(out, name)
    meta["path"] = out / meta["file"]
    return meta


def ferry(*args):
    binary = ferry_binary()
    if binary is None:
        unavailable("ferry binary not found (set FERRY_BIN)")
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=TIMEOUT_S)


def run_ort(path, feeds):
    try:
        import onnxruntime as ort
    except ImportError as e:
        unavailable(f"onnxruntime not importable: {e}")
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def ferry_run(model_path, feeds, work_dir):
    """`ferry run` on feeds written as .npy; returns {output name: array}."""
    in_dir, out_dir = work_dir / "in", work_dir / "out"
    in_dir.mkdir(parents=True)
    cmd = ["run", model_path]
    for i, (name, arr) in enumerate(feeds.items()):
        np.save(in_dir / f"{i}.npy", arr)
        cmd += ["--input", f"{name}={in_dir / f'{i}.npy'}"]
    proc = ferry(*cmd, "--output-dir", out_dir)
    assert proc.returncode == 0, f"ferry {' '.join(map(str, cmd))}\n{proc.stderr[-3000:]}"
    return {p.stem: np.load(p) for p in out_dir.glob("*.npy")}


def assert_close(name, got, want, rtol, what):
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"output {name}: {got.dtype}{got.shape}, {what} {want.dtype}{want.shape}"
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    bound = rtol * np.maximum(1.0, np.abs(want.astype(np.float64)))
    assert (err <= bound).all(), \
        f"output {name}: {int((err > bound).sum())} of {want.size} elements differ from {what} by more than " \
        f"{rtol} * max(1, |ref|); max abs error {float(err.max()):.3g}"


def transposes_between_convs(model):
    """Names of the Transposes of an ONNX graph with a Conv upstream and a Conv downstream."""
    producer = {o: n for n in model.graph.node for o in n.output}
    consumers = {}
    for n in model.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    def reaches_conv(node, step):
        seen, stack = set(), list(step(node))
        while stack:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if n.op_type in ("Conv", "ConvTranspose"):
                return True
            stack.extend(step(n))
        return False

    def up(n):
        return [producer[i] for i in n.input if i in producer]

    def down(n):
        return [c for o in n.output for c in consumers.get(o, [])]

    return [n.name for n in model.graph.node
            if n.op_type == "Transpose" and reaches_conv(n, up) and reaches_conv(n, down)]


@pytest.mark.parametrize("name", NHWC_NAMES)
def test_nhwc_model_loses_its_inner_transposes(name, tmp_path):
    import onnx

    meta = ensure_nhwc_model(name)
    source = onnx.load(str(meta["path"]))
    assert transposes_between_convs(source), "the generated model should start with Transposes between its convs"

    out, report = tmp_path / "out.onnx", tmp_path / "report.json"
    proc = ferry("convert", meta["path"], "-o", out, "--report", report, "--check-passes")
    assert proc.returncode == 0, f"ferry convert --check-passes failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"

    feeds = make_inputs(meta["inputs"], seed=0)
    want = run_ort(meta["path"], feeds)
    optimized = ferry_run(out, feeds, tmp_path / "optimized")
    unoptimized = ferry_run(meta["path"], feeds, tmp_path / "unoptimized")
    for out_name, ref in want.items():
        key = re.sub(r"[^A-Za-z0-9_.-]", "_", out_name)
        assert_close(out_name, optimized[key], ref, RTOL_ORT, "ONNX Runtime")
        assert_close(out_name, optimized[key], unoptimized[key], RTOL_UNOPTIMIZED, "the unoptimized graph")

    converted = onnx.load(str(out))
    assert transposes_between_convs(converted) == []
    proc = ferry("inspect", meta["path"], "--optimized", "--json")
    assert proc.returncode == 0, proc.stderr
    histogram = json.loads(proc.stdout)["op_histogram"]
    assert histogram.get("Transpose", 0) == meta["boundary_transposes"], histogram
    assert "BatchNormalization" not in histogram

    passes = {p["name"]: p for p in json.loads(report.read_text())["passes"]}
    layout = passes["propagate_transposes"]
    assert layout["applied"] > 0
    for pattern in layout["patterns"]:
        for miss in pattern["near_misses"]:
            # What stays is at the output boundary: nothing downstream to cancel with.
            assert miss["reason"].startswith("no Transpose downstream"), miss


def _default_models():
    params = [pytest.param("torch", n, id=f"torch-{n}") for n in export_models.MODEL_NAMES]
    params += [pytest.param("onnx", n, id=f"onnx-{n}") for n in ONNX_NAMES]
    return params


def gemm_transposes(model):
    """Gemm operands with transA/transB = 1 that are computed, not constants: canonicalize_gemm
    writes each as a Transpose feeding the MatMul."""
    constants = {i.name for i in model.graph.initializer}
    constants |= {o for n in model.graph.node if n.op_type == "Constant" for o in n.output}
    count = 0
    for n in (n for n in model.graph.node if n.op_type == "Gemm"):
        for index, attr in enumerate(("transA", "transB")):
            if any(a.name == attr and a.i == 1 for a in n.attribute) and n.input[index] not in constants:
                count += 1
    return count


@pytest.mark.parametrize("source,name", _default_models())
def test_optimizing_adds_no_transpose(source, name):
    import onnx

    meta = ensure_model(source, name, "small")
    counts, einsums = [], []
    for flags in ([], ["--optimized"]):
        proc = ferry("inspect", meta["path"], "--json", *flags)
        if proc.returncode != 0 and "not supported yet" in proc.stderr:
            pytest.skip(f"ferry cannot load {name} yet: {proc.stderr.strip()[-300:]}")
        assert proc.returncode == 0, proc.stderr
        histogram = json.loads(proc.stdout)["op_histogram"]
        counts.append(histogram.get("Transpose", 0))
        einsums.append(histogram.get("Einsum", 0))
    allowed = counts[0] + gemm_transposes(onnx.load(str(meta["path"]), load_external_data=False))
    # lower_einsum writes the data movement an Einsum did implicitly as up to three
    # Transposes (operand A, operand B, the output) around its MatMul.
    allowed += 3 * (einsums[0] - einsums[1])
    assert counts[1] <= allowed, f"{name}: {counts[0]} Transposes imported, {counts[1]} after optimizing"
