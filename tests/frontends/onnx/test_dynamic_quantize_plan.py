"""DynamicQuantizeLinear's scale and zero point are scalars, so the cpu backend plans a model
written by onnxruntime's quantize_dynamic ahead of time (before, their shapes were inferred as
unknown rank and everything after the first DynamicQuantizeLinear was planned at run time, as
data-dependent), and a Mul by that computed rank-0 scale runs on oneDNN's binary (oneDNN has no
rank-0 memory: the scheduler used to ask for a reorder into one and failed)."""

from __future__ import annotations

import subprocess

import numpy as np


def quantized_conv(onnx_mod, path):
    h, nh = onnx_mod.helper, onnx_mod.numpy_helper
    rng = np.random.default_rng(0)
    inits = [nh.from_array(rng.integers(-100, 100, (8, 4, 3, 3)).astype(np.int8), "w"),
             nh.from_array(np.array(0, np.int8), "wz"),
             nh.from_array(np.arange(8, dtype=np.int32).reshape(1, 8, 1, 1), "b")]
    nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             h.make_node("ConvInteger", ["xq", "w", "xz", "wz"], ["c"]),
             h.make_node("Add", ["c", "b"], ["cb"]),
             h.make_node("Cast", ["cb"], ["cf"], to=1),
             h.make_node("Mul", ["cf", "xs"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", 1, [1, 4, 16, 16])],
                     [h.make_tensor_value_info("y", 1, None)], inits)
    onnx_mod.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)
    return path


def test_planned_ahead_and_matches_onnxruntime(ferry_cli, onnx_mod, tmp_path):
    import onnxruntime as ort

    model = quantized_conv(onnx_mod, tmp_path / "q.onnx")
    r = subprocess.run([str(ferry_cli), "bench", str(model), "--iters", "2", "--warmup", "1"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "planned at run time" not in r.stdout, r.stdout
    x = np.random.default_rng(1).standard_normal((1, 4, 16, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    want = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    r = subprocess.run([str(ferry_cli), "run", str(model), "--input", f"x={tmp_path / 'x.npy'}",
                        "--output-dir", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    got = np.load(tmp_path / "out" / "y.npy")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)
