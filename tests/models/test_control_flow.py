"""If, Loop and Scan end to end: hand-built ONNX models vs ONNX Runtime and onnx.reference.

Each model is run with `ferry run --backend cpu` and `--backend reference` and must match
ONNX Runtime within 1e-5 (relative, at least 1e-6 absolute); onnx.reference.ReferenceEvaluator
must agree with ONNX Runtime too (two independent oracles) where it implements the case. The models cover what real models
do with control flow: nested If, reads of outer-scope values (inputs and initializers) from
branches and bodies, a Loop with carried values and scan outputs, a Loop stopped by its
condition, Scan in both directions with a state. `ferry convert` output must load in ONNX
Runtime and give the same numbers (subgraphs written back with their outer-scope reads).
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from model_cache import ferry_binary, unavailable



def _need():
    try:
        import onnx as _onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        unavailable(f"{e.name} not installed")
    binary = ferry_binary()
    if binary is None:
        unavailable("build/ferry is missing (FERRY_BIN overrides)")
    return binary


def _helpers():
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    return onnx, TensorProto, helper, numpy_helper


def _model(graph, opset=17):
    onnx, _, helper, _ = _helpers()
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def nested_if_model():
    """y = x > 0 ? (sum(x) > 1 ? x * w : x + w) : -x, with w an outer initializer."""
    onnx, TP, h, nh = _helpers()
    w = nh.from_array(np.array([0.5, -2.0, 3.0], np.float32), "w")
    inner_then = h.make_graph([h.make_node("Mul", ["x", "w"], ["it"])], "inner_then", [],
                              [h.make_tensor_value_info("it", TP.FLOAT, [3])])
    inner_else = h.make_graph([h.make_node("Add", ["x", "w"], ["ie"])], "inner_else", [],
                              [h.make_tensor_value_info("ie", TP.FLOAT, [3])])
    outer_then = h.make_graph(
        [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
         h.make_node("Greater", ["s", "one"], ["c2"]),
         h.make_node("If", ["c2"], ["ot"], then_branch=inner_then, else_branch=inner_else)],
        "outer_then", [], [h.make_tensor_value_info("ot", TP.FLOAT, [3])])
    outer_else = h.make_graph([h.make_node("Neg", ["x"], ["oe"])], "outer_else", [],
                              [h.make_tensor_value_info("oe", TP.FLOAT, [3])])
    g = h.make_graph(
        [h.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
         h.make_node("Greater", ["m", "zero"], ["c"]),
         h.make_node("If", ["c"], ["y"], then_branch=outer_then, else_branch=outer_else)],
        "nested_if", [h.make_tensor_value_info("x", TP.FLOAT, [3])],
        [h.make_tensor_value_info("y", TP.FLOAT, [3])],
        [w, nh.from_array(np.array(0, np.float32), "zero"), nh.from_array(np.array(1, np.float32), "one")])
    return _model(g)


def loop_model():
    """Loop M times: acc += x * i (carried), emits acc and i*w (scan outputs); cond stays true."""
    onnx, TP, h, nh = _helpers()
    body = h.make_graph(
        [h.make_node("Cast", ["i"], ["fi"], to=TP.FLOAT),
         h.make_node("Mul", ["x", "fi"], ["xi"]),
         h.make_node("Add", ["acc_in", "xi"], ["acc_out"]),
         h.make_node("Mul", ["fi", "w"], ["scan"]),
         h.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("cond_in", TP.BOOL, []),
         h.make_tensor_value_info("acc_in", TP.FLOAT, [2, 3])],
        [h.make_tensor_value_info("cond_out", TP.BOOL, []), h.make_tensor_value_info("acc_out", TP.FLOAT, [2, 3]),
         h.make_tensor_value_info("scan", TP.FLOAT, [3])])
    g = h.make_graph(
        [h.make_node("Loop", ["M", "", "acc0"], ["acc", "scans"], body=body)],
        "loop", [h.make_tensor_value_info("x", TP.FLOAT, [2, 3]), h.make_tensor_value_info("M", TP.INT64, []),
                 h.make_tensor_value_info("acc0", TP.FLOAT, [2, 3])],
        [h.make_tensor_value_info("acc", TP.FLOAT, [2, 3]), h.make_tensor_value_info("scans", TP.FLOAT, [None, 3])],
        [nh.from_array(np.array([1.0, 2.0, 3.0], np.float32), "w")])
    return _model(g)


def while_model():
    """while (s < limit): s = s * 2 + x (cond computed in the body; no trip count)."""
    onnx, TP, h, nh = _helpers()
    body = h.make_graph(
        [h.make_node("Mul", ["s_in", "two"], ["s2"]),
         h.make_node("Add", ["s2", "x"], ["s_out"]),
         h.make_node("ReduceSum", ["s_out"], ["tot"], keepdims=0),
         h.make_node("Less", ["tot", "limit"], ["cond_out"])],
        "while_body",
        [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("cond_in", TP.BOOL, []),
         h.make_tensor_value_info("s_in", TP.FLOAT, [4])],
        [h.make_tensor_value_info("cond_out", TP.BOOL, []), h.make_tensor_value_info("s_out", TP.FLOAT, [4])],
        [nh.from_array(np.array(2, np.float32), "two")])
    g = h.make_graph(
        [h.make_node("Loop", ["", "go", "s0"], ["s"], body=body)],
        "while", [h.make_tensor_value_info("x", TP.FLOAT, [4]), h.make_tensor_value_info("s0", TP.FLOAT, [4]),
                  h.make_tensor_value_info("go", TP.BOOL, []), h.make_tensor_value_info("limit", TP.FLOAT, [])],
        [h.make_tensor_value_info("s", TP.FLOAT, [4])])
    return _model(g)


def scan_model():
    """Scan over x [T, 3] forward and y [T, 3] backward: state += x_t * y_t, out_t = state (reversed out)."""
    onnx, TP, h, nh = _helpers()
    body = h.make_graph(
        [h.make_node("Mul", ["xt", "yt"], ["p"]),
         h.make_node("Add", ["st_in", "p"], ["st_out"]),
         h.make_node("Add", ["st_out", "bias"], ["out_t"])],
        "scan_body",
        [h.make_tensor_value_info("st_in", TP.FLOAT, [3]), h.make_tensor_value_info("xt", TP.FLOAT, [3]),
         h.make_tensor_value_info("yt", TP.FLOAT, [3])],
        [h.make_tensor_value_info("st_out", TP.FLOAT, [3]), h.make_tensor_value_info("out_t", TP.FLOAT, [3])])
    g = h.make_graph(
        [h.make_node("Scan", ["st0", "x", "y"], ["st", "outs"], body=body, num_scan_inputs=2,
                     scan_input_directions=[0, 1], scan_output_directions=[1], scan_output_axes=[1])],
        "scan", [h.make_tensor_value_info("st0", TP.FLOAT, [3]), h.make_tensor_value_info("x", TP.FLOAT, [5, 3]),
                 h.make_tensor_value_info("y", TP.FLOAT, [5, 3]), h.make_tensor_value_info("bias", TP.FLOAT, [3])],
        [h.make_tensor_value_info("st", TP.FLOAT, [3]), h.make_tensor_value_info("outs", TP.FLOAT, [3, 5])])
    return _model(g, opset=16)


# onnx.reference (1.23) cannot run these: its Loop needs the cond input, its Scan reads forward only.
NO_ONNX_REFERENCE = {"loop", "loop_zero_trips", "scan"}

rng = np.random.default_rng(7)
CASES = {
    "nested_if_then_then": (nested_if_model, {"x": np.array([1.0, 2.0, -0.5], np.float32)}),
    "nested_if_then_else": (nested_if_model, {"x": np.array([0.25, 0.5, -0.5], np.float32)}),
    "nested_if_else": (nested_if_model, {"x": np.array([-1.0, -2.0, -0.5], np.float32)}),
    "loop": (loop_model, {"x": rng.standard_normal((2, 3)).astype(np.float32), "M": np.array(4, np.int64),
                          "acc0": rng.standard_normal((2, 3)).astype(np.float32)}),
    "loop_zero_trips": (loop_model, {"x": rng.standard_normal((2, 3)).astype(np.float32), "M": np.array(0, np.int64),
                                     "acc0": rng.standard_normal((2, 3)).astype(np.float32)}),
    "while": (while_model, {"x": np.array([0.5, 1.0, 0.25, 2.0], np.float32), "s0": np.ones(4, np.float32),
                            "go": np.array(True), "limit": np.array(300.0, np.float32)}),
    "scan": (scan_model, {"st0": rng.standard_normal(3).astype(np.float32),
                          "x": rng.standard_normal((5, 3)).astype(np.float32),
                          "y": rng.standard_normal((5, 3)).astype(np.float32),
                          "bias": rng.standard_normal(3).astype(np.float32)}),
}


def _ort(path, feeds):
    import onnxruntime as ort

    s = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def _ferry_run(binary, path, feeds, backend, tmp_path):
    out = tmp_path / f"out_{backend}"
    args = [str(binary), "run", str(path), "--backend", backend, "--output-dir", str(out)]
    for name, a in feeds.items():
        np.save(tmp_path / f"{name}.npy", a)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"ferry run failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return out


def _assert_close(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_onnxruntime(case, backend, tmp_path):
    binary = _need()
    import onnx
    from onnx.reference import ReferenceEvaluator

    make, feeds = CASES[case]
    model = make()
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    want = _ort(path, feeds)
    if case not in NO_ONNX_REFERENCE:
        ref = dict(zip([o.name for o in model.graph.output], ReferenceEvaluator(model).run(None, feeds)))
        for name, w in want.items():
            np.testing.assert_allclose(ref[name], w, rtol=1e-5, atol=1e-6, err_msg=f"onnx.reference vs ORT: {name}")
    out = _ferry_run(binary, path, feeds, backend, tmp_path)
    for name, w in want.items():
        _assert_close(np.load(out / f"{name}.npy"), w, f"{case} {backend} {name}")


@pytest.mark.parametrize("case", ["nested_if_then_else", "loop", "scan"])
def test_convert_round_trip(case, tmp_path):
    """`ferry convert` writes the subgraphs back: the file passes the checker and ORT gives the same numbers."""
    binary = _need()
    import onnx

    make, feeds = CASES[case]
    src, dst = tmp_path / "model.onnx", tmp_path / "converted.onnx"
    onnx.save(make(), src)
    proc = subprocess.run([str(binary), "convert", str(src), "-o", str(dst)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, f"ferry convert failed:\n{proc.stdout}\n{proc.stderr}"
    onnx.checker.check_model(onnx.load(str(dst)), full_check=True)
    want, got = _ort(src, feeds), _ort(dst, feeds)
    for name, w in want.items():
        _assert_close(got[name], w, f"converted {case} {name}")


def test_constant_condition_is_inlined(tmp_path):
    """An If on an initializer leaves no If in the converted (optimized) model."""
    binary = _need()
    import onnx

    _, TP, h, nh = _helpers()
    then_g = h.make_graph([h.make_node("Relu", ["x"], ["t"])], "then", [], [h.make_tensor_value_info("t", TP.FLOAT, [4])])
    else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"])], "else", [], [h.make_tensor_value_info("e", TP.FLOAT, [4])])
    g = h.make_graph([h.make_node("If", ["flag"], ["y"], then_branch=then_g, else_branch=else_g)], "const_if",
                     [h.make_tensor_value_info("x", TP.FLOAT, [4])], [h.make_tensor_value_info("y", TP.FLOAT, [4])],
                     [nh.from_array(np.array(False), "flag")])
    src, dst = tmp_path / "model.onnx", tmp_path / "converted.onnx"
    onnx.save(_model(g), src)
    proc = subprocess.run([str(binary), "convert", str(src), "-o", str(dst)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    ops = [n.op_type for n in onnx.load(str(dst)).graph.node]
    assert ops == ["Neg"], ops
    feeds = {"x": np.array([1.0, -2.0, 3.0, -4.0], np.float32)}
    _assert_close(_ort(dst, feeds)["y"], -feeds["x"], "inlined If")


def test_deep_nesting_runs(tmp_path):
    """If nested 30 deep (protobuf's own recursion limit of 100 messages stops a file at about 33
    levels; ferry's kMaxSubgraphDepth = 32 is tested through the text IR, tests/ir/subgraph_test.cc)."""
    binary = _need()
    import onnx

    _, TP, h, _ = _helpers()
    inner = h.make_graph([h.make_node("Identity", ["x"], ["y0"])], "g0", [], [h.make_tensor_value_info("y0", TP.FLOAT, [1])])
    depth = 30
    for d in range(1, depth + 1):
        leaf = h.make_graph([h.make_node("Neg", ["x"], [f"e{d}"])], f"e{d}", [],
                            [h.make_tensor_value_info(f"e{d}", TP.FLOAT, [1])])
        node = h.make_node("If", ["c"], [f"y{d}"], then_branch=inner, else_branch=leaf)
        inner = h.make_graph([node], f"g{d}", [], [h.make_tensor_value_info(f"y{d}", TP.FLOAT, [1])])
    g = h.make_graph(list(inner.node), "deep", [h.make_tensor_value_info("x", TP.FLOAT, [1]),
                                                h.make_tensor_value_info("c", TP.BOOL, [])],
                     [h.make_tensor_value_info(f"y{depth}", TP.FLOAT, [1])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path / "deep.onnx"
    onnx.save(m, path)
    for backend in ("cpu", "reference"):
        for c in (True, False):
            feeds = {"x": np.array([2.5], np.float32), "c": np.array(c)}
            out = _ferry_run(binary, path, feeds, backend, tmp_path)
            _assert_close(np.load(out / f"y{depth}.npy"), feeds["x"] if c else -feeds["x"], f"depth {depth} {backend} {c}")
