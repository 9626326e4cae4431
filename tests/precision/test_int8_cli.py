"""`--precision int8` end to end (docs/precision.md, "int8"): calibration, the accuracy guard
keeping the layer that breaks the budget in fp32, the decisions in the model and the
report, `compile(precision="int8")`, `auto` on this CPU, and the CLI errors.

The model: x[8, 16] -> fc1 (MatMul) -> fc2 (MatMul) -> y. fc1's column 0 is scaled by
1000, so fc2's input has one huge channel, and fc2's row 0 is zero, so y depends only on
the small channels. At int8 fc2's input is quantized per tensor with a scale set by the
huge channel, which wipes out the small ones: fc2 alone breaks cosine>=0.999. fc1's input
(x) quantizes well and its weights are quantized per column, so fc1 alone holds it. The
guard must raise exactly fc2.

FERRY_BIN names the binary (default: build/ferry). Under CI=true missing prerequisites fail.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from onednn_isa import onednn_has_vnni

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(what):
    if IN_CI:
        pytest.fail(f"{what} (CI=true: missing prerequisites are failures)", pytrace=False)
    pytest.skip(what)


try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # reported per test
    np = onnx = None
    IMPORT_ERROR = str(e)
else:
    IMPORT_ERROR = ""


@pytest.fixture(scope="module")
def ferry_bin(ferry_cli):
    if IMPORT_ERROR:
        unavailable(f"numpy / onnx not importable: {IMPORT_ERROR}")
    return ferry_cli


def ferry(bin_path, *args, expect=0):
    r = subprocess.run([str(bin_path), *map(str, args)], capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == expect, f"ferry {' '.join(map(str, args))}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def two_layer_model(path, outlier=1000.0):
    rng = np.random.default_rng(5)
    w1 = rng.normal(0, 0.3, (16, 32)).astype(np.float32)
    w1[:, 0] *= outlier
    w2 = rng.normal(0, 0.3, (32, 8)).astype(np.float32)
    w2[0, :] = 0
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
             helper.make_node("MatMul", ["h", "w2"], ["y"], name="fc2")]
    g = helper.make_graph(nodes, "two_layers", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 8])],
                          [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return w1, w2


def cosine(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture(scope="module")
def converted(ferry_bin, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("int8")
    src, out, report = tmp / "two_layers.onnx", tmp / "two_layers_int8.onnx", tmp / "report.json"
    two_layer_model(src)
    r = ferry(ferry_bin, "convert", src, "-o", out, "--precision", "int8", "--accuracy-budget", "cosine>=0.999",
              "--report", report)
    return src, out, json.loads(report.read_text())["precision"], r.stdout


def test_guard_keeps_the_layer_that_breaks_the_budget_fp32(converted):
    _, _, prec, stdout = converted
    by_node = {n["node"]: n for n in prec["nodes"]}
    assert set(by_node) == {"fc1", "fc2"}, by_node
    fc1, fc2 = by_node["fc1"], by_node["fc2"]
    # accelerated where oneDNN may use VNNI / AMX-INT8 (its ONEDNN_MAX_CPU_ISA cap included), else emulated
    assert fc1["precision"] == "int8" and fc1["exec"] == ("accelerated" if onednn_has_vnni() else "emulated"), fc1
    want = "oneDNN u8 x s8 steps on" if onednn_has_vnni() else "fake quantization elsewhere; not measured faster"
    assert want in fc1["reason"] and "rounded to int8" not in fc1["reason"], fc1["reason"]
    assert "calibrated (minmax on 8 seeded random samples" in fc1["reason"], fc1["reason"]
    assert "fc2" in stdout and "raised by the accuracy guard" in stdout
    if bf16_accelerates(prec, "MatMul"):
        # the guard raises an int8 node to bf16 where the target runs bf16 on hardware (AMX /
        # AVX512_BF16): fc2 at bf16 holds the budget (its input's rounding is relative per element)
        assert fc2["precision"] == "bf16" and fc2["exec"] == "accelerated", fc2
        assert fc2["reason"].startswith("bf16: raised by the accuracy guard (sensitivity "), fc2["reason"]
        assert "the model with it at int8" in fc2["reason"] and "bf16 accelerated (" in fc2["reason"], fc2["reason"]
        assert fc1["sensitivity"] < 1 and fc2["sensitivity"] < 1, (fc1["sensitivity"], fc2["sensitivity"])
        assert "raised 0 of 2 lowered nodes to fp32, 1 int8 nodes to bf16" in prec["guard"], prec["guard"]
        return
    assert fc2["precision"] == "fp32", fc2
    assert fc2["reason"].startswith("fp32: raised by the accuracy guard"), fc2["reason"]
    assert fc2["sensitivity"] > 1 > fc1["sensitivity"], (fc1["sensitivity"], fc2["sensitivity"])
    assert "raised 1 of 2 lowered nodes" in prec["guard"], prec["guard"]


def bf16_accelerates(prec, op):
    bf16 = next(t for t in prec["target"]["offered"] if t["precision"] == "bf16")
    return bf16["exec"] == "accelerated" and op in bf16["accelerated_ops"]


@pytest.mark.skipif(not onednn_has_vnni(), reason="the host (or ONEDNN_MAX_CPU_ISA) has no VNNI / AMX-INT8")
def test_guard_raises_int8_to_fp32_where_bf16_is_not_accelerated(ferry_bin, tmp_path):
    # oneDNN capped below bf16 but with VNNI: int8 accelerated, bf16 emulated (slower than fp32),
    # so the node that breaks the budget goes to fp32 (on AMX / AVX512_BF16 hosts this is the
    # only run of that path)
    src, report = tmp_path / "two_layers.onnx", tmp_path / "report.json"
    two_layer_model(src)
    env = {**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX512_CORE_VNNI"}
    r = subprocess.run([str(ferry_bin), "convert", str(src), "-o", str(tmp_path / "o.onnx"), "--precision", "int8",
                        "--accuracy-budget", "cosine>=0.999", "--report", str(report)],
                       capture_output=True, text=True, timeout=300, env=env, check=False)
    assert r.returncode == 0, r.stderr
    prec = json.loads(report.read_text())["precision"]
    if not next(t for t in prec["target"]["offered"] if t["precision"] == "int8")["exec"] == "accelerated":
        pytest.skip("no AVX512_VNNI under the AVX512_CORE_VNNI cap here")
    assert not bf16_accelerates(prec, "MatMul"), prec["target"]
    fc2 = next(n for n in prec["nodes"] if n["node"] == "fc2")
    assert fc2["precision"] == "fp32" and fc2["reason"].startswith("fp32: raised by the accuracy guard"), fc2
    assert "raised 1 of 2 lowered nodes to fp32 (" in prec["guard"], prec["guard"]


def test_saved_int8_decisions_run_on_both_backends(ferry_bin, ferry_api, converted, tmp_path):
    src, out, prec, _ = converted
    saved = json.loads({p.key: p.value for p in onnx.load(out).metadata_props}["ferry.precision"])
    assert saved["nodes"]["fc1"]["precision"] == "int8" and saved["nodes"]["fc1"]["act_scale"] > 0
    r = ferry(ferry_bin, "run", out)
    exec_ = "accelerated" if onednn_has_vnni() else "emulated"
    assert "precision saved:" in r.stderr and f"int8 ({exec_}): 1 node" in r.stderr, r.stderr
    x = np.random.default_rng(9).normal(0, 1, (8, 16)).astype(np.float32)
    ref = ferry_api.load(str(src)).compile(precision="fp32").run({"x": x})["y"]
    for backend in ("reference", "cpu"):
        got = ferry_api.load(str(out)).compile(backend=backend).run({"x": x})["y"]
        assert cosine(got, ref) >= 0.999, backend
        assert not np.array_equal(got, ref), f"{backend}: fc1 at int8 must change the numbers"


def test_compile_int8_calibrates_on_generated_samples(ferry_api, tmp_path):
    src = tmp_path / "benign.onnx"
    two_layer_model(src, outlier=1.0)
    model = ferry_api.load(str(src))
    x = np.random.default_rng(1).normal(0, 1, (8, 16)).astype(np.float32)
    ref = model.compile(precision="fp32").run({"x": x})["y"]
    for observer in ("minmax", "percentile", "entropy", "mse"):
        session = model.compile(precision="int8", backend="reference", int8_observer=observer)
        nodes = {n["node"]: n for n in session.precision["nodes"]}
        assert {k: v["precision"] for k, v in nodes.items()} == {"fc1": "int8", "fc2": "int8"}
        assert f"calibrated ({observer} on 8 seeded random samples)" in nodes["fc2"]["reason"]
        got = session.run({"x": x})["y"]
        assert cosine(got, ref) >= 0.99, observer
        assert np.abs(got - ref).max() > 0, "fake quantization changes the result"
    with pytest.raises(ferry_api.InvalidArgumentError, match="unknown int8 observer 'kl'"):
        model.compile(precision="int8", int8_observer="kl")


@pytest.mark.parametrize("op", ["Conv", "MatMul"])
def test_a_denormal_weight_channel_stays_int8_and_finite(ferry_bin, ferry_api, tmp_path, op):
    # PaddleOCR's recognizer has a 1x1 conv channel whose largest weight is 3.7e-40: its scale
    # times the input's underflowed and the int8 step's bias b / scale became Inf (the guard then
    # raised the node as NaN/Inf). Such a channel quantizes to 0 (precision/int8_weight_grid.h).
    rng = np.random.default_rng(3)
    if op == "Conv":
        w = rng.normal(0, 0.3, (8, 4, 1, 1)).astype(np.float32)
        w[2] = np.float32(3.7e-40) * np.sign(w[2])
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="n")
        x_shape, y_shape, b_len = [1, 4, 6, 6], [1, 8, 6, 6], 8
    else:
        w = rng.normal(0, 0.3, (4, 8)).astype(np.float32)
        w[:, 2] = np.float32(3.7e-40) * np.sign(w[:, 2])
        node = helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="n")
        x_shape, y_shape, b_len = [6, 4], [6, 8], 8
    b = rng.normal(0, 2, b_len).astype(np.float32)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    src, out, report = tmp_path / "m.onnx", tmp_path / "o.onnx", tmp_path / "r.json"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), src)
    ferry(ferry_bin, "convert", src, "-o", out, "--precision", "int8", "--accuracy-budget", "cosine>=0.999",
          "--report", report)
    node_report = next(n for n in json.loads(report.read_text())["precision"]["nodes"] if n["node"] == "n")
    assert node_report["precision"] == "int8", node_report
    x = rng.normal(0, 1, x_shape).astype(np.float32)
    ref = ferry_api.load(str(src)).compile(precision="fp32").run({"x": x})["y"]
    for backend in ("reference", "cpu"):
        got = ferry_api.load(str(out)).compile(backend=backend).run({"x": x})["y"]
        assert np.isfinite(got).all(), backend
        assert cosine(got, ref) >= 0.999, backend
        channel = got[0, 2] if op == "Conv" else got[:, 2]
        np.testing.assert_allclose(channel, b[2], rtol=1e-5, err_msg=f"{backend}: the negligible channel is its bias")


def test_auto_never_picks_int8(ferry_api, converted):
    session = ferry_api.load(str(converted[0])).compile(precision="auto")
    kept = []
    for n in session.precision["nodes"]:
        assert n["precision"] != "int8", n
        if n["exec"] == "accelerated":  # bf16 steps on AVX512_BF16 / AMX hosts (test_bf16_steps.py)
            assert n["precision"] == "bf16" and n["reason"].startswith("auto: bf16 accelerated"), n
            continue
        assert n["precision"] == "fp32", n
        if onednn_has_vnni():  # accelerated, but auto has no calibration data
            assert "int8: accelerated for Conv, FusedConv, MatMul" in n["reason"], n["reason"]
            assert "but auto never picks int8" in n["reason"], n["reason"]
        else:
            assert "int8: per-channel s8 weights" in n["reason"], n["reason"]
            assert "(only emulated, no faster than fp32)" in n["reason"], n["reason"]
        kept.append(n)
    flags = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    if kept and not flags & {"avx512_vnni", "avx_vnni", "amx_int8"}:
        assert "no int8 dot-product hardware (VNNI / AMX-INT8)" in kept[0]["reason"]


@pytest.mark.parametrize("args,message", [
    (["--precision", "int8", "--observer", "kl"], "--observer: unknown observer 'kl' (observers: minmax, percentile, entropy, mse)"),
    (["--precision", "int8", "--force", "fc2=int8", "--accuracy-budget", "cosine>=0.999"], "pinned by --force: fc2"),
])
def test_int8_errors(ferry_bin, converted, tmp_path, args, message):
    r = subprocess.run([str(ferry_bin), "convert", str(converted[0]), "-o", str(tmp_path / "o.onnx"), *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode in (1, 2) and message in r.stderr, (r.returncode, r.stderr)


@pytest.mark.skipif(not onednn_has_vnni(), reason="the host (or ONEDNN_MAX_CPU_ISA) has no VNNI / AMX-INT8: "
                                                  "int8 is emulated already (test_guard_keeps_... checks that)")
@pytest.mark.parametrize("cap", ["AVX2", "AVX512_CORE"])
def test_int8_is_emulated_when_onednn_is_capped_below_vnni(ferry_bin, converted, tmp_path, cap):
    src = converted[0]
    report = tmp_path / "report.json"
    env = {**os.environ, "ONEDNN_MAX_CPU_ISA": cap}
    r = subprocess.run([str(ferry_bin), "convert", str(src), "-o", str(tmp_path / "o.onnx"), "--precision", "int8",
                        "--report", str(report)], capture_output=True, text=True, timeout=300, env=env, check=False)
    assert r.returncode == 0, r.stderr
    prec = json.loads(report.read_text())["precision"]
    int8 = next(t for t in prec["target"]["offered"] if t["precision"] == "int8")
    assert int8["exec"] == "emulated", int8
    assert f"present, but oneDNN is capped at {cap} (ONEDNN_MAX_CPU_ISA)" in int8["why"], int8["why"]
    fc1 = next(n for n in prec["nodes"] if n["node"] == "fc1")
    assert fc1["precision"] == "int8" and fc1["exec"] == "emulated", fc1
