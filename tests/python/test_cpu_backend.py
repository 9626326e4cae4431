"""The "cpu" backend of the Python package (src/api/cpu_backend.cc: the compiled CPU
session that `ferry run` uses), against ONNX Runtime.

test_api.py already runs every small generated model through every backend in the
table; this file checks what is particular to "cpu":
- it is the default, and it runs the SiLU / squeeze-excitation / HardSwish paths of
  the small EfficientNet-B0 and MobileNetV3-Small exports within the f32 tolerance;
- several input signatures through one session (symbolic batch), reshaped per signature;
- a model whose output shape depends on input data (NonZero) falls back to the
  reference interpreter instead of failing, as `ferry run` does;
- threads=1 and threads=2 give the same numbers as ONNX Runtime;
- (-m full) the full-size MobileNetV3-Small and EfficientNet-B0 of bench/ agree
  with ONNX Runtime within 1e-4 relative.
"""

from __future__ import annotations

import numpy as np
import pytest

from common import make_inputs
from model_cache import ensure_model
from test_models import RTOL, compare, run_ort


def save_model(onnx, path, nodes, inputs, outputs, initializers=(), opset=17):
    from onnx import helper

    graph = helper.make_graph(nodes, "cpu_backend_test", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def test_cpu_is_the_default_backend(ferry_api):
    assert ferry_api.backends()[0]["name"] == "cpu"
    assert "reference" in [b["name"] for b in ferry_api.backends()]


@pytest.mark.parametrize("name", ["efficientnet_b0", "mobilenet_v3_small", "resnet18"])
@pytest.mark.parametrize("threads", [1, 2])
def test_cnn_matches_onnxruntime(ferry_api, name, threads):
    meta = ensure_model("torch", name, "small")
    session = ferry_api.load(str(meta["path"])).compile(backend="cpu", threads=threads)
    assert session.backend == "cpu" and session.options["threads"] == threads
    for seed in (0, 1):
        feeds = make_inputs(meta["inputs"], seed=seed)
        expected = run_ort(meta["path"], feeds)
        got = session.run(feeds)
        for out_name, want in expected.items():
            compare(out_name, got[out_name], want, meta.get("rtol", RTOL["float32"]))


def test_signatures_reshape_in_one_session(ferry_api, onnx_mod, tmp_path):
    """Conv -> SiLU -> global pool over a symbolic batch and spatial size."""
    from onnx import TensorProto as T, helper, numpy_helper

    rng = np.random.default_rng(5)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Sigmoid", ["c"], ["s"], name="sig"),
             helper.make_node("Mul", ["c", "s"], ["m"], name="silu"),
             helper.make_node("GlobalAveragePool", ["m"], ["y"], name="gap")]
    path = save_model(onnx_mod, tmp_path / "silu.onnx", nodes,
                      [helper.make_tensor_value_info("x", T.FLOAT, ["N", 3, "H", "W"])],
                      [helper.make_tensor_value_info("y", T.FLOAT, ["N", 8, 1, 1])], [w, b])
    session = ferry_api.load(path).compile(backend="cpu")
    for shape in [(1, 3, 16, 16), (3, 3, 9, 20), (1, 3, 16, 16)]:
        x = rng.standard_normal(shape).astype(np.float32) * 3
        compare("y", session.run({"x": x})["y"], run_ort(path, {"x": x})["y"])


def test_data_dependent_shapes_fall_back_to_the_interpreter(ferry_api, onnx_mod, tmp_path):
    """NonZero's output size depends on the data: the session cannot plan it; the backend
    runs the model in the reference interpreter instead, run after run."""
    from onnx import TensorProto as T, helper

    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("NonZero", ["r"], ["nz"], name="nonzero")]
    path = save_model(onnx_mod, tmp_path / "nonzero.onnx", nodes,
                      [helper.make_tensor_value_info("x", T.FLOAT, [4, 5])],
                      [helper.make_tensor_value_info("nz", T.INT64, [2, None])])
    session = ferry_api.load(path).compile(backend="cpu")
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = rng.standard_normal((4, 5)).astype(np.float32)
        got = session.run({"x": x})["nz"]
        np.testing.assert_array_equal(got, run_ort(path, {"x": x})["nz"])


@pytest.mark.full
@pytest.mark.parametrize("name", ["mobilenet_v3_small", "efficientnet_b0"])
def test_full_size_models_agree_with_onnxruntime(ferry_api, name):
    meta = ensure_model("torch", name, "full")
    feeds = make_inputs(meta["inputs"], seed=0)
    expected = run_ort(meta["path"], feeds)
    got = ferry_api.load(str(meta["path"])).compile(backend="cpu", threads=2).run(feeds)
    for out_name, want in expected.items():
        rel = float(np.max(np.abs(got[out_name] - want)) / max(1.0, float(np.max(np.abs(want)))))
        assert rel <= 1e-4, f"{name} output {out_name}: max rel. difference {rel:.2e} vs ONNX Runtime"


@pytest.mark.parametrize("conv_algorithm", ["auto", "direct", "winograd"])
def test_conv_algorithm_matches_onnxruntime(ferry_api, onnx_mod, tmp_path, conv_algorithm):
    """Two 3x3 / stride-1 convs of 32 -> 48 -> 48 channels on a 16x16 map with a residual Add
    (the shapes `auto` sends to oneDNN's Winograd kernel on AVX-512, docs/backend.md): every
    conv_algorithm agrees with ONNX Runtime within the f32 tolerance, at batch 1 and 3."""
    from onnx import TensorProto as T, helper, numpy_helper

    rng = np.random.default_rng(11)
    inits = [numpy_helper.from_array(a.astype(np.float32), n) for n, a in [
        ("w1", rng.standard_normal((48, 32, 3, 3)) * 0.1), ("b1", rng.standard_normal(48)),
        ("w2", rng.standard_normal((48, 48, 3, 3)) * 0.1), ("b2", rng.standard_normal(48))]]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c2", "r1"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    path = save_model(onnx_mod, tmp_path / "convs.onnx", nodes,
                      [helper.make_tensor_value_info("x", T.FLOAT, ["n", 32, 16, 16])],
                      [helper.make_tensor_value_info("y", T.FLOAT, ["n", 48, 16, 16])], inits)
    session = ferry_api.load(path).compile(conv_algorithm=conv_algorithm)
    assert session.options["conv_algorithm"] == conv_algorithm
    for batch in (1, 3):
        feeds = {"x": rng.standard_normal((batch, 32, 16, 16)).astype(np.float32)}
        want = run_ort(path, feeds)["y"]
        compare("y", session.run(feeds)["y"], want, RTOL["float32"])
