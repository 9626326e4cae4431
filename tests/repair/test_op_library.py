"""Op libraries (docs/repair.md, "Op libraries"): a user's decomposition of a custom op,
as a text-IR file or registered from Python, replaces the op's nodes at import, is
listed like a repair, and goes through the same numerical check — against the
reference function a Python op library registers (`--check-repairs`,
ferry.op_library.check). A wrong decomposition fails that check."""

import json
import subprocess
import textwrap

import numpy as np
import pytest

SCALED_TANH = textwrap.dedent("""\
    op com.example.ScaledTanh {alpha: float = 1.0}
    graph scaled_tanh (%x: f32[*]) -> (%y) {
      %a = const f32[] [$alpha]
      %t = Tanh(%x)
      %y = Mul(%t, %a)
    }
    """)
# The same op with a mistake (Sigmoid for Tanh): the check must catch it.
WRONG_TANH = SCALED_TANH.replace("Tanh(%x)", "Sigmoid(%x)")

PY_LIBRARY = textwrap.dedent('''\
    import numpy as np
    import ferry
    ferry.register_ops("""{text}""", reference={{"com.example.ScaledTanh": lambda x, alpha=1.0: alpha * np.tanh(x)}})
    ''')


def custom_model(onnx_mod, path, alpha=2.5):
    h = onnx_mod.helper
    node = h.make_node("ScaledTanh", ["x"], ["z"], name="scaled", domain="com.example", alpha=alpha)
    relu = h.make_node("Relu", ["z"], ["y"], name="relu")
    graph = h.make_graph([node, relu], "custom",
                         [h.make_tensor_value_info("x", onnx_mod.TensorProto.FLOAT, [2, 3, 4])],
                         [h.make_tensor_value_info("y", onnx_mod.TensorProto.FLOAT, [2, 3, 4])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18), h.make_opsetid("com.example", 1)],
                         ir_version=9)
    onnx_mod.save(model, path)
    return path


def run_cli(ferry_cli, *args):
    return subprocess.run([str(ferry_cli), *map(str, args)], capture_output=True, text=True, timeout=300)


def write(path, text):
    path.write_text(text)
    return path


@pytest.fixture
def registry(ferry_api):
    from ferry import op_library
    op_library.clear()
    yield op_library
    op_library.clear()


def test_without_a_library_the_op_is_unsupported(ferry_cli, onnx_mod, tmp_path):
    model = custom_model(onnx_mod, tmp_path / "m.onnx")
    r = run_cli(ferry_cli, "inspect", model)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "ScaledTanh" in r.stdout and "no importer for ops of domain 'com.example'" in r.stdout


def test_convert_with_a_text_library_writes_the_decomposition(ferry_cli, onnx_mod, ort, tmp_path):
    model = custom_model(onnx_mod, tmp_path / "m.onnx")
    lib = write(tmp_path / "ops.fir", SCALED_TANH)
    out, report = tmp_path / "out.onnx", tmp_path / "report.json"
    # --no-optimize: the optimized graph for the cpu target may hold ferry-domain fused ops
    # (FusedMul for 2.5 * tanh(x) then Max 0), which ONNX Runtime cannot run.
    r = run_cli(ferry_cli, "convert", model, "-o", out, "--op-library", lib, "--report", report, "--no-optimize")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "op library" in r.stdout and "scaled" in r.stdout
    repairs = json.loads(report.read_text())["repairs"]
    assert [(x["node_name"], x["rule"]) for x in repairs] == [("scaled", f"op library {lib}:1")]
    # The converted model holds only standard ops: ONNX Runtime runs it and agrees with the op's meaning.
    written = onnx_mod.load(out)
    assert {n.domain for n in written.graph.node} <= {"", "ai.onnx"}
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32) * 2
    (y,) = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(y, np.maximum(2.5 * np.tanh(x), 0), rtol=1e-5, atol=1e-6)


def test_inspect_lists_the_library_repair(ferry_cli, onnx_mod, tmp_path):
    model = custom_model(onnx_mod, tmp_path / "m.onnx")
    lib = write(tmp_path / "ops.fir", SCALED_TANH)
    r = run_cli(ferry_cli, "inspect", model, "--op-library", lib, "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    repairs = json.loads(r.stdout)["repairs"]
    assert repairs[0]["node_name"] == "scaled" and repairs[0]["became"] == ["Tanh", "Mul"]


def test_check_repairs_against_the_python_reference(ferry_cli, onnx_mod, tmp_path):
    model = custom_model(onnx_mod, tmp_path / "m.onnx")
    lib = write(tmp_path / "ops.py", PY_LIBRARY.format(text=SCALED_TANH))
    report = tmp_path / "report.json"
    r = run_cli(ferry_cli, "convert", model, "-o", tmp_path / "out.onnx", "--op-library", lib, "--check-repairs",
                "--report", report)
    assert r.returncode == 0, r.stdout + r.stderr
    (rec,) = json.loads(report.read_text())["repairs"]
    assert rec["check"] == "passed", rec
    assert "the reference of" in rec["check_detail"] and "ops.py" in rec["check_detail"]


def test_a_wrong_decomposition_fails_the_check(ferry_cli, onnx_mod, tmp_path):
    model = custom_model(onnx_mod, tmp_path / "m.onnx")
    lib = write(tmp_path / "ops.py", PY_LIBRARY.format(text=WRONG_TANH))
    out = tmp_path / "out.onnx"
    r = run_cli(ferry_cli, "convert", model, "-o", out, "--op-library", lib, "--check-repairs")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "node 'scaled'" in r.stderr and "does not match" in r.stderr
    assert not out.exists()


def test_a_text_library_has_no_reference_to_check_against(ferry_cli, onnx_mod, tmp_path):
    model = custom_model(onnx_mod, tmp_path / "m.onnx")
    lib = write(tmp_path / "ops.fir", SCALED_TANH)
    report = tmp_path / "report.json"
    r = run_cli(ferry_cli, "convert", model, "-o", tmp_path / "o.onnx", "--op-library", lib, "--check-repairs",
                "--report", report)
    assert r.returncode == 0, r.stdout + r.stderr
    (rec,) = json.loads(report.read_text())["repairs"]
    assert rec["check"] == "not run" and "no reference implementation" in rec["check_detail"]


def test_library_errors_name_the_file_and_line(ferry_cli, onnx_mod, tmp_path):
    model = custom_model(onnx_mod, tmp_path / "m.onnx")
    bad = write(tmp_path / "bad.fir", SCALED_TANH.replace("%t = Tanh(%x)", "%t = Tanh(%x"))
    r = run_cli(ferry_cli, "convert", model, "-o", tmp_path / "o.onnx", "--op-library", bad)
    assert r.returncode == 2 and f"{bad}: op com.example.ScaledTanh: line 5" in r.stderr, r.stderr
    broken_py = write(tmp_path / "broken.py", "raise RuntimeError('no such thing')\n")
    r = run_cli(ferry_cli, "convert", model, "-o", tmp_path / "o.onnx", "--op-library", broken_py)
    assert r.returncode == 2 and "RuntimeError: no such thing" in r.stderr, r.stderr


def test_python_registration_and_check(registry, ferry_api, onnx_mod, tmp_path):
    model = custom_model(onnx_mod, tmp_path / "m.onnx", alpha=0.5)
    with pytest.raises(ferry_api.UnsupportedError):
        ferry_api.load(str(model))
    ferry_api.register_ops(SCALED_TANH, reference={"com.example.ScaledTanh": lambda x, alpha=1.0: alpha * np.tanh(x)})
    loaded = ferry_api.load(str(model))
    assert loaded.inspect()["repairs"][0]["rule"] == "op library <registered>:1"
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4)
    y = loaded.compile(backend="cpu").run({"x": x})["y"]
    np.testing.assert_allclose(y, np.maximum(0.5 * np.tanh(x), 0), rtol=1e-5, atol=1e-6)
    worst = registry.check("com.example.ScaledTanh", [x], {"alpha": 1.5})
    assert worst < 1e-5


def test_python_check_catches_a_wrong_decomposition(registry, ferry_api):
    ferry_api.register_ops(WRONG_TANH, reference={"com.example.ScaledTanh": lambda x, alpha=1.0: alpha * np.tanh(x)})
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(AssertionError, match="ScaledTanh: output y0"):
        registry.check("com.example.ScaledTanh", [x])
