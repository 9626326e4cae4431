"""`ferry convert --shape NAME=DIMS --static-shapes` (docs/cli.md): the dims the user gives
are written into the converted model (a symbol bound once is bound in every input),
ONNX Runtime runs the result, and a dim that contradicts the model is refused."""

import subprocess

import numpy as np


def dynamic_model(onnx_mod, path):
    h, T = onnx_mod.helper, onnx_mod.TensorProto
    nodes = [h.make_node("Add", ["x", "z"], ["s"]), h.make_node("Relu", ["s"], ["y"])]
    graph = h.make_graph(nodes, "dyn", [h.make_tensor_value_info("x", T.FLOAT, ["N", 8]),
                                        h.make_tensor_value_info("z", T.FLOAT, ["N", 8])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["N", 8])])
    onnx_mod.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8), path)
    return path


def dims(value_info):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in value_info.type.tensor_type.shape.dim]


def test_static_shapes_are_written(ferry_cli, onnx_mod, ort, tmp_path):
    model, out = dynamic_model(onnx_mod, tmp_path / "m.onnx"), tmp_path / "s.onnx"
    r = subprocess.run([str(ferry_cli), "convert", str(model), "-o", str(out), "--shape", "x=3x8", "--static-shapes",
                        "--no-optimize"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "static shapes: 1 input(s) fixed, N=3" in r.stdout
    m = onnx_mod.load(out)
    assert [dims(i) for i in m.graph.input] == [[3, 8], [3, 8]]
    assert dims(m.graph.output[0]) == [3, 8]
    x, z = (np.random.default_rng(i).standard_normal((3, 8)).astype(np.float32) for i in (0, 1))
    (y,) = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, {"x": x, "z": z})
    np.testing.assert_allclose(y, np.maximum(x + z, 0), rtol=1e-6)


def test_a_contradicting_dim_is_refused(ferry_cli, onnx_mod, tmp_path):
    model = dynamic_model(onnx_mod, tmp_path / "m.onnx")
    r = subprocess.run([str(ferry_cli), "convert", str(model), "-o", str(tmp_path / "s.onnx"), "--shape", "x=3x4",
                        "--static-shapes"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "dim 1 of input 'x' is 8, 4 given" in r.stderr, r.stderr
