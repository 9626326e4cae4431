"""The int8 `entropy` observer against a reference (docs/precision.md, "int8"): the range
`ferry convert --observer entropy` saves for a MatMul's input, judged by the KL criterion of
TensorRT's calibration as MXNet wrote it (`_get_optimal_threshold`, ported below to numpy) on
ONNX Runtime's histogram of the same values (`HistogramCollector`, 2048 bins symmetric about
0, 256 levels). On data symmetric about 0 (x and -x) ferry's ranges (the min-max range shrunk
towards 0 at both ends alike) are the reference's candidates. ONNX Runtime's own choice is
printed beside: its port drops the last level's remainder bins from Q, which favours wider
ranges, so it is not the reference here.

A missing onnxruntime is a failure under CI=true (tests/conftest.py's `ort`).
"""

from __future__ import annotations

import json
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper


@pytest.fixture(scope="module")
def histogram_collector(ort):
    from onnxruntime.quantization.calibrate import HistogramCollector

    return HistogramCollector


def reference_kl(hist, i, levels=256):
    """KL(P || Q) of the candidate keeping bins [zero - i, zero + i + 1) (MXNet's code)."""
    zero = hist.size // 2
    s, e = zero - i, min(zero + i + 1, hist.size)
    sliced = hist[s:e].astype(np.float64)
    p = sliced.copy()
    p[0] += hist[:s].sum()
    p[-1] += hist[e:].sum()
    nonzero = p != 0
    merged = sliced.size // levels
    q_levels = np.array([sliced[j * merged:(j + 1) * merged].sum() for j in range(levels)])
    q_levels[-1] += sliced[levels * merged:].sum()
    q = np.zeros(sliced.size)
    for j in range(levels):
        a, b = j * merged, (sliced.size if j == levels - 1 else (j + 1) * merged)
        if nonzero[a:b].sum():
            q[a:b] = q_levels[j] / nonzero[a:b].sum()
    q[~nonzero] = 0
    pn, qn = p / p.sum(), q / q.sum()
    qn = np.where(nonzero & (qn == 0), 1e-4 / q.sum(), qn)
    return float((pn[nonzero] * np.log(pn[nonzero] / qn[nonzero])).sum())


def ferry_entropy_range(ferry_cli, tmp_path, x):
    w = np.random.default_rng(1).normal(0, 1, (x.shape[-1], 8)).astype(np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape[1:]))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
                              [numpy_helper.from_array(w, "w")])
    src, calib, out = tmp_path / "mm.onnx", tmp_path / "x.npz", tmp_path / "o.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), src)
    np.savez(calib, x=x)
    r = subprocess.run([str(ferry_cli), "convert", str(src), "-o", str(out), "--precision", "int8", "--calibration",
                        str(calib), "--observer", "entropy", "--accuracy-budget", "cosine>=0.9"],
                       capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    saved = json.loads({p.key: p.value for p in onnx.load(out).metadata_props}["ferry.precision"])["nodes"]["mm"]
    assert "calibrated (entropy on " in saved["reason"], saved["reason"]
    scale, zero = saved["act_scale"], saved["act_zero_point"]
    return -zero * scale, (255 - zero) * scale


@pytest.mark.parametrize("dist", ["normal", "laplace"])
def test_entropy_range_is_the_kl_optimum(ferry_cli, histogram_collector, tmp_path, dist):
    rng = np.random.default_rng(7)
    base = getattr(rng, dist)(0, 1, (4, 1, 4096))
    x = np.concatenate([base, -base]).astype(np.float32)  # 8 samples of [1, 4096]
    collector = histogram_collector("entropy", False, 2048, 256, None, None)
    collector.collect({"x": list(x)})
    hist, edges = collector.histogram_dict["x"][:2]
    kl = {i: reference_kl(hist, i) for i in range(128, hist.size // 2 + 1)}
    best = min(kl, key=kl.get)
    lo, hi = ferry_entropy_range(ferry_cli, tmp_path, x)
    right = {i: float(edges[min(hist.size // 2 + i + 1, hist.size)]) for i in kl}  # each candidate's hi
    ours = min(kl, key=lambda i: abs(right[i] - hi))  # the candidate at ferry's hi
    ort = collector.compute_collection_result()["x"][:2]
    print(f"{dist}: ferry [{lo:.3f}, {hi:.3f}], reference optimum +-{right[best]:.3f} "
          f"(KL {kl[best]:.5f}, ferry's {kl[ours]:.5f}), ONNX Runtime [{ort[0]:.3f}, {ort[1]:.3f}], "
          f"min-max [{x.min():.3f}, {x.max():.3f}]")
    assert abs(lo + hi) < 0.02 * (hi - lo), "symmetric data, symmetric range"
    assert kl[ours] <= kl[best] * 1.05 + 1e-4, "ferry's range is a KL optimum of the reference"
    if dist == "laplace":  # a clear optimum (the normal's KL is flat near its end): the same range
        assert abs(ours - best) <= 0.03 * best, (ours, best)
