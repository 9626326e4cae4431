"""The `ferry` command line, end to end: inspect, run, help, exit codes.

Small ONNX models are built with onnx.helper into tmp_path; `ferry run`
outputs are compared with ONNX Runtime on the same inputs:
    |ferry - ort| <= 1e-4 * max(1, |ort|)   per element.

FERRY_BIN names the binary (default: build/ferry). Under CI=true a missing
binary or Python package fails the test instead of skipping it.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # reported per test below
    np = onnx = None
    IMPORT_ERROR = str(e)
else:
    IMPORT_ERROR = ""


def unavailable(what):
    """Skips the test, or fails it under CI=true where everything must be present."""
    if IN_CI:
        pytest.fail(f"{what} (CI=true: missing prerequisites are failures)", pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="session")
def ferry_bin(ferry_cli):
    return ferry_cli


@pytest.fixture(autouse=True)
def _python_deps():
    if IMPORT_ERROR:
        unavailable(f"numpy/onnx not importable: {IMPORT_ERROR}")


@pytest.fixture
def ferry(ferry_bin, tmp_path):
    """ferry(*args) -> CompletedProcess, run in tmp_path."""

    def run(*args, check_rc=None):
        p = subprocess.run([str(ferry_bin), *map(str, args)], cwd=tmp_path, capture_output=True, text=True,
                           errors="replace", timeout=300)
        assert p.returncode >= 0, f"ferry died from signal {-p.returncode}\nstderr:\n{p.stderr}"
        if check_rc is not None:
            assert p.returncode == check_rc, f"rc {p.returncode} != {check_rc}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
        return p

    return run


def ort_run(model_path, feeds):
    try:
        import onnxruntime as ort
    except ImportError as e:
        unavailable(f"onnxruntime not importable: {e}")
    sess = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds)))


def assert_close(ferry_out, ort_out, what):
    assert ferry_out.shape == ort_out.shape, f"{what}: shape {ferry_out.shape} != {ort_out.shape}"
    assert ferry_out.dtype == ort_out.dtype, f"{what}: dtype {ferry_out.dtype} != {ort_out.dtype}"
    if ferry_out.dtype.kind in "fc":
        err = np.abs(ferry_out.astype(np.float64) - ort_out.astype(np.float64))
        bound = 1e-4 * np.maximum(1.0, np.abs(ort_out.astype(np.float64)))
        worst = int(np.argmax(err - bound)) if err.size else 0
        assert np.all(err <= bound), f"{what}: max excess at flat index {worst}: ferry {ferry_out.flat[worst]}, " \
                                     f"ort {ort_out.flat[worst]}"
    else:
        np.testing.assert_array_equal(ferry_out, ort_out, err_msg=what)


# --- model builders ------------------------------------------------------------


def save(model, path):
    model.ir_version = 8  # what onnxruntime accepts for opset 17
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def conv_model(path):
    """x[N,3,8,8] -> Conv(4, 3x3, pad 1, bias) -> Relu -> GlobalAveragePool -> Flatten -> Gemm(5) -> y[N,5]."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    fc_w = rng.standard_normal((5, 4)).astype(np.float32)
    fc_b = rng.standard_normal(5).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv1", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"], name="relu1"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "convnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])],
        initializer=[const("w", w), const("b", b), const("fc_w", fc_w), const("fc_b", fc_b)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ferry-test",
                              producer_version="1.2.3")
    return save(model, path)


CONV_PARAMS = 4 * 3 * 3 * 3 + 4 + 5 * 4 + 5
CONV_FLOPS = 2 * 1 * 4 * 8 * 8 * 3 * 3 * 3 + 4 * 8 * 8  # 2*N*Cout*H*W*Cin*kh*kw + bias, N = 1


def embedding_model(path):
    """ids[batch,6] (i64) -> Gather(table[20,4]) * Cast(mask) -> y; ids and mask echoed as outputs."""
    table = np.arange(80, dtype=np.float32).reshape(20, 4) / 10
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["emb"], name="gather"),
        helper.make_node("Cast", ["attention_mask"], ["maskf"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["maskf", "axis2"], ["mask3"], name="unsq"),
        helper.make_node("Mul", ["emb", "mask3"], ["y"], name="mul"),
        helper.make_node("Identity", ["input_ids"], ["ids_echo"], name="echo_ids"),
        helper.make_node("Identity", ["attention_mask"], ["mask_echo"], name="echo_mask"),
    ]
    graph = helper.make_graph(
        nodes, "embed",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", 6]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 6, 4]),
         helper.make_tensor_value_info("ids_echo", TensorProto.INT64, ["batch", 6]),
         helper.make_tensor_value_info("mask_echo", TensorProto.INT64, ["batch", 6])],
        initializer=[const("table", table), const("axis2", np.array([2], dtype=np.int64))])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def seq_model(path):
    """x[N,seq] -> Tanh -> y, and x echoed: seq has no default size."""
    graph = helper.make_graph(
        [helper.make_node("Tanh", ["x"], ["y"], name="tanh"), helper.make_node("Identity", ["x"], ["x_echo"])],
        "seq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "seq"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "seq"]),
         helper.make_tensor_value_info("x_echo", TensorProto.FLOAT, ["N", "seq"])])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def unsafe_names_model(path):
    """Outputs whose names are not file names: '../evil', 'a/b', 'a:b', and 'A_B' (same file ignoring case)."""
    names = ("../evil", "a/b", "a:b", "A_B")
    nodes = [helper.make_node(op, ["x"], [n]) for op, n in zip(("Neg", "Abs", "Relu", "Sigmoid"), names)]
    graph = helper.make_graph(
        nodes, "names", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in names])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


UNSUPPORTED = [("frob1", "Frobnicate", "com.example"), ("frob2", "Frobnicate", "com.example"),
               ("random", "RandomNormalLike", "")]


def unsupported_model(path):
    """Three nodes ferry cannot import (two custom-domain ops and RandomNormalLike) between supported ones."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Frobnicate", ["r"], ["f1"], name="frob1", domain="com.example"),
        helper.make_node("Frobnicate", ["f1"], ["f2"], name="frob2", domain="com.example"),
        helper.make_node("RandomNormalLike", ["f2"], ["d"], name="random"),
        helper.make_node("Neg", ["d"], ["y"], name="neg"),
    ]
    graph = helper.make_graph(
        nodes, "unsupported", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.example", 1)])
    model.ir_version = 8
    onnx.save(model, str(path))  # no checker: it rejects the unknown domain
    return path


def error_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("ferry: error:")]


# --- help, version, usage errors -------------------------------------------------


def test_version_and_help(ferry):
    v = ferry("--version", check_rc=0)
    assert v.stdout.startswith("ferry ") and v.stdout.split()[1][0].isdigit(), v.stdout
    h = ferry("--help", check_rc=0)
    for word in ("inspect", "run", "Exit codes", "usage error", "model or input error", "validate"):
        assert word in h.stdout, word
    r = ferry("run", "--help", check_rc=0)
    for word in ("--input", "--shape", "--seed", "--output-dir", "NAME=FILE", "Exit codes"):
        assert word in r.stdout, word
    i = ferry("inspect", "--help", check_rc=0)
    assert "--json" in i.stdout and "Exit codes" in i.stdout


@pytest.mark.parametrize("args, message", [
    ((), "subcommand is required"),
    (("bogus",), "unknown command 'bogus'"),
    (("inspect",), "MODEL is required"),
    (("inspect", "m.onnx", "--bogus"), "--bogus"),
    (("run", "m.onnx", "--seed", "abc"), "abc"),
    (("run", "m.onnx", "--seed", "-1"), "--seed"),
    (("run", "m.onnx", "--shape", "x=1xfoo"), "'1xfoo' is not a shape"),
    (("run", "m.onnx", "--shape", "x=1x2", "--shape", "x=1x3"), "--shape given twice for 'x'"),
    (("run", "m.onnx", "--input", "nofile"), "not of the form NAME=FILE.npy"),
    (("run", "missing.onnx", "--shape", "x"), "not of the form NAME=DIMS"),  # syntax before the model
])
def test_usage_errors_exit_1(ferry, tmp_path, args, message):
    seq_model(tmp_path / "m.onnx")
    p = ferry(*args, check_rc=1)
    assert message in p.stderr, p.stderr
    assert p.stderr.startswith("ferry: error:"), p.stderr


def test_model_errors_exit_2_with_one_line(ferry, tmp_path):
    p = ferry("inspect", "missing.onnx", check_rc=2)
    assert error_lines(p.stderr) and error_lines(p.stderr)[0].startswith("ferry: error: missing.onnx: "), p.stderr
    (tmp_path / "garbage.onnx").write_bytes(b"\x08\x07garbage that is not protobuf \xff\xff\xff" * 10)
    p = ferry("run", "garbage.onnx", check_rc=2)
    assert len(error_lines(p.stderr)) == 1 and "garbage.onnx: " in p.stderr, p.stderr
    good = conv_model(tmp_path / "good.onnx").read_bytes()
    (tmp_path / "trunc.onnx").write_bytes(good[: len(good) // 2])
    for cmd in ("inspect", "run"):
        p = ferry(cmd, "trunc.onnx", check_rc=2)
        assert len(error_lines(p.stderr)) == 1, p.stderr


# --- inspect ---------------------------------------------------------------------


def test_inspect_text(ferry, tmp_path):
    conv_model(tmp_path / "m.onnx")
    out = ferry("inspect", "m.onnx", check_rc=0).stdout
    for text in ("ferry-test 1.2.3", "ir_version 8", "ai.onnx 17", "f32[N,3,8,8]", "f32[N,5]", "Conv", "Gemm",
                 f"{CONV_PARAMS:,} elements", "N counted as 1 (batch = 1)", "supported"):
        assert text in out, f"{text!r} not in:\n{out}"


def test_inspect_json(ferry, tmp_path):
    conv_model(tmp_path / "m.onnx")
    j = json.loads(ferry("inspect", "m.onnx", "--json", check_rc=0).stdout)
    assert j["format"] == "onnx"
    assert j["producer"] == {"name": "ferry-test", "version": "1.2.3"}
    assert j["ir_version"] == 8
    assert j["opsets"] == {"ai.onnx": 17}
    assert j["inputs"] == [{"name": "x", "dtype": "f32", "shape": ["N", 3, 8, 8]}]
    assert j["outputs"] == [{"name": "y", "dtype": "f32", "shape": ["N", 5]}]
    assert j["source_op_histogram"] == {"Conv": 1, "Relu": 1, "GlobalAveragePool": 1, "Flatten": 1, "Gemm": 1}
    assert j["num_source_nodes"] == 5
    assert j["op_histogram"]["Conv"] == 1
    assert j["parameters"]["count"] == CONV_PARAMS
    assert j["parameters"]["bytes"] == 4 * CONV_PARAMS
    assert j["flops"]["by_op"]["Conv"] == CONV_FLOPS
    assert j["flops"]["total"] >= CONV_FLOPS
    assert j["flops"]["symbolic_dims_counted_as_1"] == ["N"]
    assert "batch = 1" in j["flops"]["assumption"]
    assert j["coverage"] == {"supported": True, "num_unsupported": 0, "unsupported": []}
    assert j["error"] is None


def test_inspect_lists_every_unsupported_op(ferry, tmp_path):
    unsupported_model(tmp_path / "u.onnx")
    p = ferry("inspect", "u.onnx", check_rc=2)
    for node, op, _ in UNSUPPORTED:
        assert f"node '{node}': {op}" in p.stdout, p.stdout
    assert "domain com.example" in p.stdout and "opset 1" in p.stdout
    assert "Relu" in p.stdout and "Neg" in p.stdout  # the source histogram is still shown
    lines = error_lines(p.stderr)
    assert len(lines) == 1 and lines[0].startswith("ferry: error: u.onnx: "), p.stderr

    p = ferry("inspect", "u.onnx", "--json", check_rc=2)
    j = json.loads(p.stdout)
    cov = j["coverage"]
    assert cov["supported"] is False and cov["num_unsupported"] == len(UNSUPPORTED)
    got = {(u["node_name"], u["op_type"], u["domain"]) for u in cov["unsupported"]}
    assert got == set(UNSUPPORTED)
    for u in cov["unsupported"]:
        assert u["reason"], u
        assert u["opset"] == (1 if u["domain"] == "com.example" else 17), u
    assert j["source_op_histogram"]["Relu"] == 1
    assert j["error"]


# --- run -------------------------------------------------------------------------


def test_run_matches_onnxruntime(ferry, tmp_path):
    model = conv_model(tmp_path / "m.onnx")
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    p = ferry("run", "m.onnx", "--input", "x=x.npy", "--output-dir", "out", check_rc=0)
    assert "f32[2,5]" in p.stdout and "min " in p.stdout and "mean " in p.stdout, p.stdout
    got = np.load(tmp_path / "out" / "y.npy")
    assert_close(got, ort_run(model, {"x": x})["y"], "y")


def test_run_random_inputs_are_seeded(ferry, tmp_path):
    conv_model(tmp_path / "m.onnx")
    ferry("run", "m.onnx", "--seed", "1", "--output-dir", "a", check_rc=0)
    ferry("run", "m.onnx", "--seed", "1", "--output-dir", "b", check_rc=0)
    ferry("run", "m.onnx", "--seed", "2", "--output-dir", "c", check_rc=0)
    a, b, c = (np.load(tmp_path / d / "y.npy") for d in "abc")
    assert a.shape == (1, 5)  # the symbolic batch N defaults to 1
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_run_gather_indices_and_masks(ferry, tmp_path):
    model = embedding_model(tmp_path / "e.onnx")
    p = ferry("run", "e.onnx", "--shape", "input_ids=3x6", "--output-dir", "out", check_rc=0)
    assert "ints in [0, 20) (Gather indices)" in p.stdout and "0/1 (mask)" in p.stdout, p.stdout
    ids = np.load(tmp_path / "out" / "ids_echo.npy")
    mask = np.load(tmp_path / "out" / "mask_echo.npy")
    assert ids.shape == (3, 6) and mask.shape == (3, 6)  # batch bound by the --shape of input_ids
    assert ids.min() >= 0 and ids.max() < 20 and ids.max() >= 10
    assert set(np.unique(mask)) <= {0, 1}
    ref = ort_run(model, {"input_ids": ids, "attention_mask": mask})
    assert_close(np.load(tmp_path / "out" / "y.npy"), ref["y"], "y")


def test_run_symbolic_dims_need_shape(ferry, tmp_path):
    model = seq_model(tmp_path / "s.onnx")
    p = ferry("run", "s.onnx", check_rc=2)
    assert "--shape x=1x<seq>" in p.stderr and "s.onnx" in p.stderr, p.stderr
    ferry("run", "s.onnx", "--shape", "x=2x5", "--output-dir", "out", check_rc=0)
    x = np.load(tmp_path / "out" / "x_echo.npy")
    assert x.shape == (2, 5) and x.dtype == np.float32
    assert_close(np.load(tmp_path / "out" / "y.npy"), ort_run(model, {"x": x})["y"], "y")
    p = ferry("run", "s.onnx", "--shape", "x=2x5x1", check_rc=2)
    assert "contradicts the model" in p.stderr, p.stderr
    p = ferry("run", "s.onnx", "--shape", "nope=2x5", check_rc=2)
    assert "'nope'" in p.stderr, p.stderr


def test_run_rejects_inputs_that_contradict_the_model(ferry, tmp_path):
    conv_model(tmp_path / "m.onnx")
    np.save(tmp_path / "x64.npy", np.zeros((1, 3, 8, 8), np.float64))
    np.save(tmp_path / "xbad.npy", np.zeros((1, 3, 9, 8), np.float32))
    np.save(tmp_path / "x.npy", np.zeros((1, 3, 8, 8), np.float32))
    (tmp_path / "junk.npy").write_bytes(b"\x93NUMPY\x01\x00\xff\xff{'descr'")
    np.save(tmp_path / "fortran.npy", np.asfortranarray(np.zeros((1, 3, 8, 8), np.float32).transpose(3, 2, 1, 0)))
    for arg, message in (("x=x64.npy", "input 'x' must be f32, got f64"),
                         ("x=xbad.npy", "input 'x' must have shape"),
                         ("x=junk.npy", "input 'x'"),
                         ("x=missing.npy", "cannot open"),
                         ("x=fortran.npy", "Fortran order"),
                         ("z=x.npy", "no input named 'z'")):
        p = ferry("run", "m.onnx", "--input", arg, check_rc=2)
        file = arg.split("=", 1)[1]
        lines = error_lines(p.stderr)
        assert len(lines) == 1 and lines[0].startswith(f"ferry: error: {file}: "), p.stderr
        assert message in p.stderr, p.stderr
    p = ferry("run", "m.onnx", "--input", "x=x.npy", "--shape", "x=2x3x8x8", check_rc=2)
    assert "input 'x'" in p.stderr, p.stderr


def test_run_output_names_stay_inside_the_directory(ferry, tmp_path):
    unsafe_names_model(tmp_path / "n.onnx")
    ferry("run", "n.onnx", "--output-dir", "out/deep", check_rc=0)
    written = sorted(f.name for f in (tmp_path / "out" / "deep").iterdir())
    assert written == [".._evil.npy", "A_B_2.npy", "a_b.npy", "a_b_1.npy"], written
    assert not (tmp_path / "out" / "evil.npy").exists() and not (tmp_path / "evil.npy").exists()
    x = np.load(tmp_path / "out" / "deep" / ".._evil.npy")
    assert x.shape == (2, 3) and x.dtype == np.float32


def test_run_prints_nan_and_inf_counts(ferry, tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Log", ["x"], ["y"], name="log")], "log",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "log.onnx")
    np.save(tmp_path / "x.npy", np.array([-1, 0, 1, np.e], np.float32))
    p = ferry("run", "log.onnx", "--input", "x=x.npy", check_rc=0)
    assert "NaN 1" in p.stdout and "-Inf 1" in p.stdout and "min 0" in p.stdout, p.stdout


def test_run_refuses_to_write_through_symlinks(ferry, tmp_path):
    conv_model(tmp_path / "m.onnx")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "y.npy").symlink_to(tmp_path / "elsewhere.npy")
    p = ferry("run", "m.onnx", "--output-dir", "out", check_rc=2)
    assert "symbolic link" in p.stderr and "y.npy" in p.stderr, p.stderr
    assert not (tmp_path / "elsewhere.npy").exists()


def test_run_writes_bf16_outputs_as_f32(ferry, tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], name="to_bf16", to=TensorProto.BFLOAT16)], "bf16",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [5])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "b.onnx")
    x = np.array([1.0, 1.00390625, 1.01171875, -3.14159, 1e30], np.float32)
    np.save(tmp_path / "x.npy", x)
    p = ferry("run", "b.onnx", "--input", "x=x.npy", "--output-dir", "out", check_rc=0)
    assert "bf16[5]" in p.stdout and "written as f32" in p.stdout, p.stdout
    y = np.load(tmp_path / "out" / "y.npy")
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)  # round to nearest even
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, rounded.view(np.float32))


def test_text_ir_models(ferry, tmp_path):
    (tmp_path / "m.ferry").write_text(
        "graph main (%x: f32[N,2]) -> (%y) {\n"
        "  %w = const f32[2,3] [1, 2, 3, 4, 5, 6]\n"
        "  %y = MatMul(%x, %w) @mm\n"
        "}\n")
    j = json.loads(ferry("inspect", "m.ferry", "--json", check_rc=0).stdout)
    assert j["format"] == "text" and j["outputs"][0]["shape"] == ["N", 3]
    assert j["flops"]["total"] == 2 * 3 * 2 and j["parameters"]["count"] == 6
    np.save(tmp_path / "x.npy", np.array([[1, 1], [0, 2]], np.float32))
    ferry("run", "m.ferry", "--input", "x=x.npy", "--output-dir", "out", check_rc=0)
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "y.npy"), [[5, 7, 9], [8, 10, 12]])
