"""`ferry convert --narrow-f64` (docs/repair.md): a float64 model written to compute in
float32 with its f64 interface kept; ONNX Runtime runs the converted file and agrees
with its own f64 run of the original; the measured error is in the report; a model
whose f32 result is far from f64 (catastrophic cancellation) is refused."""

import json
import subprocess

import numpy as np


def f64_model(onnx_mod, path, cancel=False):
    h, nh, T = onnx_mod.helper, onnx_mod.numpy_helper, onnx_mod.TensorProto
    rng = np.random.default_rng(3)
    inits = [nh.from_array(rng.standard_normal((8, 6)), "w"), nh.from_array(rng.standard_normal(6), "b"),
             nh.from_array(np.array(1e8), "big")]
    if cancel:
        nodes = [h.make_node("Add", ["x", "big"], ["a"]), h.make_node("Sub", ["a", "big"], ["y"])]
        out_shape = [3, 8]
    else:
        nodes = [h.make_node("MatMul", ["x", "w"], ["m"]), h.make_node("Add", ["m", "b"], ["a"]),
                 h.make_node("Tanh", ["a"], ["t"]), h.make_node("Softmax", ["t"], ["y"], axis=-1)]
        out_shape = [3, 6]
    graph = h.make_graph(nodes, "f64", [h.make_tensor_value_info("x", T.DOUBLE, [3, 8])],
                         [h.make_tensor_value_info("y", T.DOUBLE, out_shape)], inits)
    onnx_mod.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8), path)
    return path


def convert(ferry_cli, *args):
    return subprocess.run([str(ferry_cli), "convert", *map(str, args)], capture_output=True, text=True, timeout=300)


def test_narrowed_model_matches_f64_and_keeps_its_interface(ferry_cli, onnx_mod, ort, tmp_path):
    model = f64_model(onnx_mod, tmp_path / "m.onnx")
    out, report = tmp_path / "n.onnx", tmp_path / "r.json"
    r = convert(ferry_cli, model, "-o", out, "--narrow-f64", "--no-optimize", "--report", report)  # standard ops only
    assert r.returncode == 0, r.stdout + r.stderr
    (rec,) = json.loads(report.read_text())["repairs"]
    assert rec["rule"] == "narrow_f64" and rec["check"] == "passed", rec
    written = onnx_mod.load(out)
    T = onnx_mod.TensorProto
    assert written.graph.input[0].type.tensor_type.elem_type == T.DOUBLE
    assert written.graph.output[0].type.tensor_type.elem_type == T.DOUBLE
    assert all(t.data_type != T.DOUBLE for t in written.graph.initializer)
    x = np.random.default_rng(0).standard_normal((3, 8))
    so = ["CPUExecutionProvider"]
    (want,) = ort.InferenceSession(str(model), providers=so).run(None, {"x": x})
    (got,) = ort.InferenceSession(str(out), providers=so).run(None, {"x": x})
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    assert not np.array_equal(got, want)  # it really computed in f32


def test_cancellation_is_refused_with_the_error(ferry_cli, onnx_mod, tmp_path):
    model = f64_model(onnx_mod, tmp_path / "m.onnx", cancel=True)
    out = tmp_path / "n.onnx"
    r = convert(ferry_cli, model, "-o", out, "--narrow-f64")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "float32 is not close enough to float64" in r.stderr and "output 'y' element" in r.stderr
    assert not out.exists()
