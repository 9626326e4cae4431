"""End to end: every generated model through `ferry run`, checked against ONNX Runtime.

For each model (torch exports from gen/export_models.py, hand-built graphs from
gen/make_onnx_models.py): draw seeded inputs (gen/common.py), write them as
.npy, run

    ferry run MODEL --input NAME=FILE.npy ... --output-dir DIR

and compare every output with ONNX Runtime's on the same inputs:
    float:      |ferry - ort| <= rtol * max(1, |ort|)   per element,
                rtol 1e-4 (f32/f64), 1e-3 (f16); NaN matches NaN, inf matches inf.
                A torch model on which ONNX Runtime's own f32 error (against the
                torch module run in f64, measured at export) exceeds 2.5e-5 gets
                rtol = 4x that error; its sidecar records "rtol" and
                "oracle_f32_error" (see export_models.tolerance).
    int / bool: exactly equal
Shapes and dtypes must match exactly.

The small set runs by default; full-size models are marked `full`:
    pytest tests/models -m full
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import export_models
from common import make_inputs
from model_cache import REPO, ensure_model, ferry_binary, unavailable

try:
    import make_onnx_models

    ONNX_NAMES = make_onnx_models.MODEL_NAMES
except ImportError:  # onnx missing: test_prerequisites says so
    ONNX_NAMES = []

RTOL = {"float32": 1e-4, "float64": 1e-4, "float16": 1e-3}
TIMEOUT_S = {"small": 300, "full": 3600}


def _params():
    params = []
    for name in export_models.MODEL_NAMES:
        params.append(pytest.param("torch", name, "small", id=f"torch-small-{name}"))
        params.append(pytest.param("torch", name, "full", id=f"torch-full-{name}", marks=pytest.mark.full))
    for name in ONNX_NAMES:
        params.append(pytest.param("onnx", name, "small", id=f"onnx-{name}"))
    return params


def run_ort(path, feeds):
    try:
        import onnxruntime as ort
    except ImportError as e:
        unavailable(f"onnxruntime not importable: {e}")
    opts = ort.SessionOptions()
    # No graph rewrites: the oracle computes the model exactly as written.
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds)))


def output_file(out_dir, name):
    """The .npy ferry wrote for output `name` (names with odd characters are sanitized)."""
    for candidate in (name, re.sub(r"[^A-Za-z0-9_.-]", "_", name)):
        path = Path(out_dir) / f"{candidate}.npy"
        if path.exists():
            return path
    written = sorted(p.name for p in Path(out_dir).glob("*"))
    pytest.fail(f"ferry wrote no file for output {name!r}; {out_dir} holds {written}", pytrace=False)


def run_ferry(ferry_bin, model_path, feeds, work_dir, timeout):
    """Runs `ferry run` on `feeds` written as .npy; returns the output directory."""
    in_dir, out_dir = Path(work_dir) / "inputs", Path(work_dir) / "outputs"
    in_dir.mkdir()
    out_dir.mkdir()
    cmd = [str(ferry_bin), "run", str(model_path)]
    for i, (name, arr) in enumerate(feeds.items()):
        path = in_dir / f"input{i}.npy"
        np.save(path, arr)
        cmd += ["--input", f"{name}={path}"]
    cmd += ["--output-dir", str(out_dir)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"ferry run exited {proc.returncode}\n$ {' '.join(cmd)}\nstderr:\n{proc.stderr[-4000:]}",
                    pytrace=False)
    return out_dir


def compare(name, got, want, rtol_f32=RTOL["float32"]):
    """Asserts ferry's output `got` matches ONNX Runtime's `want` (see the module docstring)."""
    assert got.shape == want.shape, f"output {name}: shape {got.shape}, ONNX Runtime {want.shape}"
    assert got.dtype == want.dtype, f"output {name}: dtype {got.dtype}, ONNX Runtime {want.dtype}"
    if want.dtype.kind != "f":
        bad = got != want
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            pytest.fail(f"output {name}: {int(bad.sum())} of {want.size} elements differ; first at {idx}: "
                        f"ferry {got[idx]!r}, ONNX Runtime {want[idx]!r}", pytrace=False)
        return
    rtol = RTOL[want.dtype.name] if want.dtype != np.float32 else max(RTOL["float32"], rtol_f32)
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        err = np.abs(g - w)
        ok = (err <= rtol * np.maximum(1.0, np.abs(w))) | (np.isnan(g) & np.isnan(w)) | (np.isinf(w) & (g == w))
    if not ok.all():
        bad = ~ok
        worst = np.where(bad, np.nan_to_num(err / np.maximum(1.0, np.abs(w)), nan=np.inf), -1.0)
        idx = np.unravel_index(int(np.argmax(worst)), w.shape)
        pytest.fail(f"output {name}: {int(bad.sum())} of {w.size} elements off by more than {rtol} * max(1, |ort|); "
                    f"worst at {tuple(int(i) for i in idx)}: ferry {g[idx]!r}, ONNX Runtime {w[idx]!r} "
                    f"(max |ort| {float(np.nanmax(np.abs(w))) if w.size else 0:.3g})", pytrace=False)


@pytest.mark.parametrize("source,name,size", _params())
def test_model_matches_onnxruntime(source, name, size, tmp_path):
    meta = ensure_model(source, name, size)
    feeds = make_inputs(meta["inputs"], seed=0)
    expected = run_ort(meta["path"], feeds)
    assert list(expected) == meta["outputs"], "the sidecar's outputs disagree with the model"
    # The binary is looked up only now, so without it the generators and the
    # ONNX Runtime side are still exercised before the skip.
    ferry_bin = ferry_binary()
    if ferry_bin is None:
        unavailable("ferry binary not found (set FERRY_BIN)")
    out_dir = run_ferry(ferry_bin, meta["path"], feeds, tmp_path, TIMEOUT_S[size])
    for out_name, want in expected.items():
        compare(out_name, np.load(output_file(out_dir, out_name)), want, meta.get("rtol", RTOL["float32"]))


@pytest.mark.parametrize("source,name,size", _params())
def test_inspect_reports_full_coverage(source, name, size):
    """`ferry inspect --json` loads the model and finds no unsupported op."""
    meta = ensure_model(source, name, size)
    ferry_bin = ferry_binary()
    if ferry_bin is None:
        unavailable("ferry binary not found (set FERRY_BIN)")
    cmd = [str(ferry_bin), "inspect", str(meta["path"]), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S[size])
    assert proc.returncode == 0, f"ferry inspect exited {proc.returncode}: {proc.stderr.strip()}"
    coverage = json.loads(proc.stdout)["coverage"]
    assert coverage["supported"] and not coverage["unsupported"], f"unsupported: {coverage['unsupported']}"


def _ir_ops():
    """The IR ops that take their semantics from an ONNX op: the ops.def rows exported to
    the default domain (onnx(N)); ferry's own (fused) ops, ferry(N), are in no source model
    (tests/passes/test_fusion_models.py covers those end to end)."""
    text = (REPO / "src" / "ir" / "ops.def").read_text()
    return re.findall(r"^FERRY_OP\((\w+),[^\n]*\bonnx\(\d+\)", text, re.M)


# ONNX ops a frontend lowers onto another IR op; Constant becomes a constant value.
ONNX_TO_IR = {"Upsample": "Resize"}


def test_every_ir_op_has_an_end_to_end_model():
    """The small torch set plus the hand-built graphs use every op in src/ir/ops.def."""
    import onnx

    used = set()
    models = [("torch", n, "small") for n in export_models.MODEL_NAMES] + [("onnx", n, "small") for n in ONNX_NAMES]
    for source, name, size in models:
        meta = ensure_model(source, name, size)
        for node in onnx.load(str(meta["path"]), load_external_data=False).graph.node:
            if node.domain in ("", "ai.onnx"):
                used.add(ONNX_TO_IR.get(node.op_type, node.op_type))
    missing = [op for op in _ir_ops() if op not in used and op not in COVERED_BY_CONFORMANCE]
    assert not missing, f"IR ops with no end-to-end model: {missing}"


# IR ops added for the ONNX backend node tests: their end-to-end check is a
# conformance case (import -> optimize -> run against onnx's expected values)
# that the committed baseline lists as passing, so CI holds it
# (tests/conformance/test_conformance.py).
COVERED_BY_CONFORMANCE = {
    "Tan": "test_tan", "Asin": "test_asin", "Acos": "test_acos", "Atan": "test_atan", "Sinh": "test_sinh",
    "Cosh": "test_cosh", "Asinh": "test_asinh", "Acosh": "test_acosh", "Atanh": "test_atanh",
    "ThresholdedRelu": "test_thresholdedrelu", "Shrink": "test_shrink_soft", "Swish": "test_swish",
    "BitShift": "test_bitshift_right_uint8", "BitwiseAnd": "test_bitwise_and_i32_2d",
    "BitwiseOr": "test_bitwise_or_i32_2d", "BitwiseXor": "test_bitwise_xor_i32_2d", "BitwiseNot": "test_bitwise_not_2d",
    "CumProd": "test_cumprod_1d", "Hardmax": "test_hardmax_example", "LpNormalization": "test_l2normalization_axis_1",
    "NegativeLogLikelihoodLoss": "test_nllloss_NCd1", "QuantizeLinear": "test_quantizelinear",
    "DequantizeLinear": "test_dequantizelinear", "BitCast": "test_bitcast_float32_to_int32", "Det": "test_det_2d",
    "EyeLike": "test_eyelike_with_dtype", "Compress": "test_compress_0", "ReverseSequence": "test_reversesequence_time",
    # issue 7 (recurrent, rotary, LpPool, CenterCropPad); RNN/GRU/LSTM also vs ONNX Runtime in
    # tests/ops/test_recurrent_vs_ort.py
    "RNN": "test_simple_rnn_batchwise", "GRU": "test_gru_bidirectional", "LSTM": "test_lstm_with_peepholes",
    "RotaryEmbedding": "test_rotary_embedding", "LpPool": "test_lppool_2d_dilations",
    "CenterCropPad": "test_center_crop_pad_crop_and_pad",
    # conformance additions B (also tests/ops/test_vision_signal_ops.py, against onnxruntime)
    "GridSample": "test_gridsample_bicubic", "AffineGrid": "test_affine_grid_3d_align_corners",
    "NonMaxSuppression": "test_nonmaxsuppression_two_batches", "DFT": "test_dft_irfft", "Unique": "test_unique_sorted_with_axis",
    "Col2Im": "test_col2im_5d",
    # control flow (subgraphs): also tests/models/test_control_flow.py (both backends vs onnxruntime)
    # and the real models with `If` (tests/models/test_real_models.py, marker realmodels)
    "If": "test_if", "Loop": "test_loop11", "Scan": "test_scan9_sum",
    # quantized models (issue 14 int8): also tests/frontends/onnx/test_quantized_models.py (ORT's
    # quantize_dynamic / quantize_static models, both backends vs onnxruntime)
    "DynamicQuantizeLinear": "test_dynamicquantizelinear", "MatMulInteger": "test_matmulinteger",
    "ConvInteger": "test_convinteger_with_padding", "QLinearMatMul": "test_qlinearmatmul_2D_uint8_float32",
    "QLinearConv": "test_qlinearconv",
    # conformance to 98% (issue 18): opset 24-28 ops; also tests/ops/test_opset24_28_ops.py (both backends
    # vs onnx.reference: onnxruntime implements none of them yet)
    "CausalConvWithState": "test_causal_conv_with_state_basic", "SwiGLU": "test_swiglu",
    "TensorScatter": "test_tensorscatter", "HannWindow": "test_hannwindow", "HammingWindow": "test_hammingwindow",
    "BlackmanWindow": "test_blackmanwindow", "LinearAttention": "test_linear_attention_decode_step",
    # the last conformance ops (issue 18); also tests/ops/test_signal_text_ops.py (both backends vs
    # onnx.reference and onnxruntime)
    "STFT": "test_stft", "MelWeightMatrix": "test_melweightmatrix", "RoiAlign": "test_roialign_aligned_true",
    "MaxUnpool": "test_maxunpool_export_without_output_shape", "TfIdfVectorizer": "test_tfidfvectorizer_tf_uniandbigrams_skip5",
}


def test_conformance_covered_ops_pass_in_the_baseline():
    """Each op covered by a conformance case has that case passing in tests/conformance/baseline.json."""
    passing = set(json.loads((REPO / "tests" / "conformance" / "baseline.json").read_text())["cases"])
    missing = {op: case for op, case in COVERED_BY_CONFORMANCE.items() if case not in passing}
    assert not missing, f"conformance cases not passing in the baseline: {missing}"


# IR ops no imported model can contain, and why.
ELIDED_BY_FRONTEND = {"Dropout": "inference-mode Dropout is the identity; the ONNX frontend removes it"}


def test_every_ir_op_is_reached_through_the_frontend():
    """Every IR op (but the elided ones) appears in some imported graph, per `ferry inspect --json`."""
    ferry_bin = ferry_binary()
    if ferry_bin is None:
        unavailable("ferry binary not found (set FERRY_BIN)")
    used, failed = set(), []
    models = [("torch", n, "small") for n in export_models.MODEL_NAMES] + [("onnx", n, "small") for n in ONNX_NAMES]
    for source, name, size in models:
        meta = ensure_model(source, name, size)
        proc = subprocess.run([str(ferry_bin), "inspect", str(meta["path"]), "--json"], capture_output=True, text=True,
                              timeout=TIMEOUT_S[size])
        if proc.returncode != 0:
            failed.append(name)  # test_inspect_reports_full_coverage names the reason
            continue
        used.update(json.loads(proc.stdout)["op_histogram"])
    missing = [op for op in _ir_ops() if op not in used and op not in ELIDED_BY_FRONTEND and op not in COVERED_BY_CONFORMANCE]
    assert not missing, f"IR ops in no imported model: {missing} (models that failed to import: {failed})"


def test_prerequisites():
    """onnx, onnxruntime and numpy import (under CI a missing one is a failure, not a skip)."""
    for mod in ("onnx", "onnxruntime"):
        try:
            __import__(mod)
        except ImportError as e:
            unavailable(f"{mod} not importable: {e}")
    assert ONNX_NAMES, "make_onnx_models.py defines no models"
    assert len(export_models.MODEL_NAMES) == 23, export_models.MODEL_NAMES  # incl. encoder_dynamic, mha_dynamic
