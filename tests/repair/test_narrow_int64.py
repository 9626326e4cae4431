"""`ferry convert --narrow-int64` (docs/repair.md): the index math exporters write (a head split's
Reshape target from Shape -> Gather -> Concat, position ids sliced from an int64 constant) is
written to compute in int32 where the model proves its range; the file passes the ONNX checker,
holds int32 tensors there, keeps its interface, and ONNX Runtime and `ferry run` give the
original's outputs. A model with nothing to narrow converts as usual."""

import json
import subprocess

import numpy as np

SEQ, HIDDEN, HEADS = 16, 64, 4


def head_split_model(onnx_mod, path):
    h, nh, T = onnx_mod.helper, onnx_mod.numpy_helper, onnx_mod.TensorProto
    i64 = lambda name, v: nh.from_array(np.array(v, np.int64), name)  # noqa: E731
    inits = [i64("one", 1), i64("two", 2), i64("heads", HEADS), i64("heads_1d", [HEADS]), i64("minus_one", [-1]),
             i64("axes0", [0]), i64("starts", [0]), i64("axes1", [1]),
             i64("position_ids", np.arange(2 * SEQ).reshape(1, 2 * SEQ)),
             nh.from_array(np.random.default_rng(1).standard_normal((2 * SEQ, HIDDEN)).astype(np.float32), "pos_table")]
    nodes = [h.make_node("Shape", ["x"], ["s"]),
             h.make_node("Gather", ["s", "one"], ["seq"], axis=0),
             h.make_node("Gather", ["s", "two"], ["hidden"], axis=0),
             h.make_node("Div", ["hidden", "heads"], ["head_dim"]),
             h.make_node("Unsqueeze", ["seq", "axes0"], ["seq_1d"]),
             h.make_node("Unsqueeze", ["head_dim", "axes0"], ["head_dim_1d"]),
             h.make_node("Concat", ["minus_one", "seq_1d", "heads_1d", "head_dim_1d"], ["target"], axis=0),
             h.make_node("Slice", ["position_ids", "starts", "seq_1d", "axes1"], ["pos"]),
             h.make_node("Gather", ["pos_table", "pos"], ["pos_emb"], axis=0),
             h.make_node("Add", ["x", "pos_emb"], ["xe"]),
             h.make_node("Reshape", ["xe", "target"], ["split"]),
             h.make_node("Transpose", ["split"], ["y"], perm=[0, 2, 1, 3])]
    graph = h.make_graph(nodes, "head_split", [h.make_tensor_value_info("x", T.FLOAT, ["batch", SEQ, HIDDEN])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["batch", HEADS, SEQ, HIDDEN // HEADS]),
                          h.make_tensor_value_info("seq", T.INT64, [])], inits)
    onnx_mod.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8), path)
    return path


def convert(ferry_cli, *args):
    return subprocess.run([str(ferry_cli), "convert", *map(str, args)], capture_output=True, text=True, timeout=120)


def ferry_run(ferry_cli, model, x, backend, tmp_path):
    out = tmp_path / f"out_{backend}"
    np.save(tmp_path / "x.npy", x)
    r = subprocess.run([str(ferry_cli), "run", str(model), "--backend", backend, "--output-dir", str(out),
                        "--input", f"x={tmp_path / 'x.npy'}"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return np.load(out / "y.npy"), np.load(out / "seq.npy")


def elem_types(onnx_mod, model):
    """Every tensor's element type in `model`, by name (initializers and inferred values)."""
    inferred = onnx_mod.shape_inference.infer_shapes(model, strict_mode=True)
    types = {t.name: t.data_type for t in model.graph.initializer}
    for v in list(inferred.graph.value_info) + list(inferred.graph.output):
        types[v.name] = v.type.tensor_type.elem_type
    return types


def test_head_split_index_math_runs_in_int32(ferry_cli, onnx_mod, ort, tmp_path):
    model = head_split_model(onnx_mod, tmp_path / "m.onnx")
    out, report = tmp_path / "n.onnx", tmp_path / "r.json"
    r = convert(ferry_cli, model, "-o", out, "--narrow-int64", "--no-optimize", "--report", report)
    assert r.returncode == 0, r.stdout + r.stderr
    (rec,) = json.loads(report.read_text())["repairs"]
    assert rec["rule"] == "narrow_int64" and rec["check"] == "passed", rec
    written = onnx_mod.load(out)
    onnx_mod.checker.check_model(written, full_check=True)
    T = onnx_mod.TensorProto
    types = elem_types(onnx_mod, written)
    for name in ("head_dim", "seq_1d", "head_dim_1d", "target", "pos", "position_ids", "heads", "minus_one", "starts"):
        assert types[name] == T.INT32, (name, types[name])
    assert types["axes0"] == T.INT64  # Unsqueeze's axes take int64 only
    casts = {n.output[0]: next(a.i for a in n.attribute if a.name == "to")
             for n in written.graph.node if n.op_type == "Cast"}
    assert sorted(casts.values()) == [T.INT32, T.INT32, T.INT64], casts  # after seq, hidden; before Reshape
    reshape = next(n for n in written.graph.node if n.op_type == "Reshape")
    assert casts[reshape.input[1]] == T.INT64
    assert [i.type.tensor_type.elem_type for i in written.graph.input] == [T.FLOAT]
    assert [o.type.tensor_type.elem_type for o in written.graph.output] == [T.FLOAT, T.INT64]

    x = np.random.default_rng(0).standard_normal((3, SEQ, HIDDEN)).astype(np.float32)
    so = ["CPUExecutionProvider"]
    want = ort.InferenceSession(str(model), providers=so).run(None, {"x": x})
    got = ort.InferenceSession(str(out), providers=so).run(None, {"x": x})
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    for backend in ("cpu", "reference"):
        y, seq = ferry_run(ferry_cli, out, x, backend, tmp_path)
        np.testing.assert_allclose(y, want[0], rtol=1e-6, atol=1e-6, err_msg=backend)
        assert seq.dtype == np.int64 and seq == SEQ


def test_a_model_with_nothing_to_narrow_converts_as_usual(ferry_cli, onnx_mod, tmp_path):
    h, T = onnx_mod.helper, onnx_mod.TensorProto
    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "relu", [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                         [h.make_tensor_value_info("y", T.FLOAT, [2, 3])])
    model = tmp_path / "relu.onnx"
    onnx_mod.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8), model)
    r = convert(ferry_cli, model, "-o", tmp_path / "out.onnx", "--narrow-int64")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "--narrow-int64: 0 int64 values proven within int32" in r.stdout and "nothing narrowed" in r.stdout
    assert (tmp_path / "out.onnx").exists()
