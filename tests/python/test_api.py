"""The Python package `ferry` (python/src/ferry_ext.cc over include/ferry/model.h).

- every end-to-end model (small torch exports and hand-built ONNX graphs)
  through load -> compile -> run, compared with ONNX Runtime on the same
  inputs, with the tolerances of tests/models/test_models.py;
- inspect() agrees with the model (inputs, symbolic dims, op counts, coverage);
- every error path raises the right ferry.FerryError subclass with ferry's
  message: missing file, the malformed-model corpus (tests/bad_inputs), wrong
  input names, dtypes, shapes, symbolic dims, unknown compile options;
- memory: inputs are lent without copying when C-contiguous with the model's
  dtype (measured with tracemalloc, which sees numpy's data allocations),
  outputs never alias inputs or model constants, and stay valid after the
  Session and Model are gone;
- dtypes f32, f16, i64 and bool in and out;
- the pure Python parts (ferry.errors, ferry.reference) import without the
  extension, and the type stubs name exactly what the extension defines.
"""

from __future__ import annotations

import math
import ast
import gc
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import export_models
from common import make_inputs
from model_cache import REPO, ensure_model, unavailable
from test_models import RTOL, compare, run_ort

try:
    import make_onnx_models

    ONNX_NAMES = make_onnx_models.MODEL_NAMES
except ImportError:  # onnx missing: the onnx_mod fixture says so
    ONNX_NAMES = []

MODELS = [pytest.param("torch", n, id=f"torch-{n}") for n in export_models.MODEL_NAMES] + [
    pytest.param("onnx", n, id=f"onnx-{n}") for n in ONNX_NAMES
]


# --- small models built here ------------------------------------------------------


def save_model(onnx, path, nodes, inputs, outputs, initializers=(), opset=17):
    from onnx import helper

    graph = helper.make_graph(nodes, "api_test", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8,
                              producer_name="ferry-api-tests")
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def vi(name, elem, shape):
    from onnx import helper

    return helper.make_tensor_value_info(name, elem, shape)


@pytest.fixture
def add_model(onnx_mod, tmp_path):
    """y = a + b, a and b f32[N, 3] (N symbolic)."""
    from onnx import TensorProto as T, helper

    return save_model(onnx_mod, tmp_path / "add.onnx", [helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                      [vi("a", T.FLOAT, ["N", 3]), vi("b", T.FLOAT, ["N", 3])], [vi("y", T.FLOAT, ["N", 3])])


# --- end to end against ONNX Runtime ------------------------------------------------


@pytest.mark.parametrize("source,name", MODELS)
def test_model_matches_onnxruntime(ferry_api, source, name):
    meta = ensure_model(source, name, "small")
    feeds = make_inputs(meta["inputs"], seed=0)
    expected = run_ort(meta["path"], feeds)
    model = ferry_api.load(str(meta["path"]))
    assert [t.name for t in model.outputs] == list(expected)
    assert [t.name for t in model.inputs] == [s["name"] for s in meta["inputs"]]
    # Every backend this build has, so a new one is checked against ONNX Runtime as soon as it is in the table.
    for backend in [b["name"] for b in ferry_api.backends()]:
        for optimize in (True, False) if source == "onnx" else (True,):
            got = model.compile(optimize=optimize, backend=backend).run(feeds)
            assert list(got) == list(expected), "outputs come back in model order"
            for out_name, want in expected.items():
                compare(out_name, got[out_name], want, meta.get("rtol", RTOL["float32"]))


def test_save_round_trips_through_onnxruntime(ferry_api, tmp_path):
    meta = ensure_model("onnx", "shape_ops", "small")
    feeds = make_inputs(meta["inputs"], seed=1)
    model = ferry_api.load(str(meta["path"]))
    out = tmp_path / "saved.onnx"
    model.save(str(out))
    expected = run_ort(meta["path"], feeds)
    resaved = run_ort(out, feeds)
    reloaded = ferry_api.load(str(out)).compile().run(feeds)
    for name, want in expected.items():
        compare(name, resaved[name], want)
        compare(name, reloaded[name], want)


def test_symbolic_batch_runs_at_several_sizes(ferry_api, add_model):
    session = ferry_api.load(add_model).compile()
    for n in (1, 4, 7):
        a = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
        b = np.full((n, 3), 0.5, np.float32)
        np.testing.assert_array_equal(session.run({"a": a, "b": b})["y"], a + b)


# --- inspect -----------------------------------------------------------------------


def test_inspect_describes_the_model(ferry_api):
    meta = ensure_model("onnx", "dynamic_shapes", "small")
    model = ferry_api.load(str(meta["path"]))
    info = model.inspect()
    assert info["format"] == "onnx" and info["error"] is None
    assert info["inputs"] == [{"name": "x", "dtype": "f32", "shape": ["batch", "len", 4]}]
    assert model.inputs[0].shape == ("batch", "len", 4)
    assert model.inputs[0].dtype == "f32" and model.inputs[0].numpy_dtype == np.float32
    assert [o["name"] for o in info["outputs"]] == [t.name for t in model.outputs]
    assert sum(info["op_histogram"].values()) == info["num_nodes"] > 0
    assert info["coverage"] == {"supported": True, "num_unsupported": 0, "unsupported": []}
    assert ferry_api.inspect(str(meta["path"])) == info
    optimized = model.inspect(optimized=True)
    assert optimized["error"] is None and 0 < optimized["num_nodes"] <= info["num_nodes"]


def test_unsupported_ops_are_all_reported(ferry_api, tmp_path):
    import gen_bad_inputs

    case = gen_bad_inputs.generate(tmp_path, ["three_unsupported_ops"])["cases"][0]
    path = str(tmp_path / case["model"])
    info = ferry_api.inspect(path)
    cov = info["coverage"]
    assert not cov["supported"] and cov["num_unsupported"] == 3
    assert {u["op_type"] for u in cov["unsupported"]} == {"Bernoulli", "RandomUniformLike", "RandomNormalLike"}
    assert all(u["reason"] for u in cov["unsupported"]), cov["unsupported"]
    assert "Bernoulli" in info["error"]
    with pytest.raises(ferry_api.UnsupportedError) as e:
        ferry_api.load(path)
    assert {u["node_name"] for u in e.value.unsupported} == {"bernoulli", "random_uniform_like", "random_normal_like"}
    assert all(set(u) >= {"reason", "proposed_repair", "domain", "opset"} for u in e.value.unsupported)
    for op in ("Bernoulli", "RandomUniformLike", "RandomNormalLike"):
        assert op in str(e.value)


# --- errors ------------------------------------------------------------------------


def test_missing_file_raises_file_error(ferry_api, tmp_path):
    path = str(tmp_path / "nowhere.onnx")
    with pytest.raises(ferry_api.FileError) as e:
        ferry_api.load(path)
    assert isinstance(e.value, OSError) and isinstance(e.value, ferry_api.FerryError)
    assert path in str(e.value) and "cannot open" in str(e.value)
    with pytest.raises(ferry_api.FileError):
        ferry_api.inspect(path)


def _corpus_cases():
    import gen_bad_inputs

    return [name for name in gen_bad_inputs.CASES]


@pytest.mark.parametrize("case_name", _corpus_cases())
def test_malformed_corpus_raises_ferry_errors(ferry_api, tmp_path, case_name):
    """Each model of tests/bad_inputs that `ferry run` must reject raises a FerryError whose
    message has the manifest's fragments and mentions, from load, compile or run (on zeros)."""
    import gen_bad_inputs

    case = gen_bad_inputs.generate(tmp_path, [case_name])["cases"][0]
    expect = case["run"]
    if case.get("skip") or case["inputs"] or case["extra_args"] or 0 in expect["exit"] or 1 in expect["exit"]:
        pytest.skip("not a model that must fail on its own")
    path = str(tmp_path / case["model"])
    with pytest.raises(ferry_api.FerryError) as e:
        session = ferry_api.load(path).compile()
        feeds = {}
        for t in session.inputs:
            if t.shape is None or not all(isinstance(d, int) for d in t.shape) or math.prod(t.shape) > 1 << 20:
                pytest.skip("its inputs cannot be made here (the CLI's random inputs are what it tests)")
            feeds[t.name] = np.zeros(t.shape, t.numpy_dtype)
        session.run(feeds)
    message = str(e.value).lower()
    if expect["fragments"]:
        assert any(f.lower() in message for f in expect["fragments"]), (expect["fragments"], str(e.value))
    for m in expect["mentions"]:
        options = m if isinstance(m, list) else [m]
        assert any(o.lower() in message for o in options), (m, str(e.value))


def test_wrong_inputs_raise_invalid_argument(ferry_api, add_model):
    session = ferry_api.load(add_model).compile()
    a = np.ones((2, 3), np.float32)
    cases = [
        ({"a": a, "b": a, "c": a}, ["no input named 'c'", "'a' f32[N,3]", "'b' f32[N,3]"]),
        ({"a": a}, ["missing input 'b'"]),
        ({"a": a, "b": a.astype(np.float64)}, ["input 'b' must be f32 (numpy float32), got numpy float64"]),
        ({"a": a, "b": np.ones((2, 4), np.float32)}, ["input 'b' must have shape [N,3], got [2,4]"]),
        ({"a": a, "b": np.ones((2, 3, 1), np.float32)}, ["input 'b' must have shape [N,3]"]),
        ({"a": a, "b": np.ones((5, 3), np.float32)}, ["input 'b'", "'N'", "2", "input 'a'"]),
        ({"a": a, "b": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}, ["input 'b' must be f32", "float64"]),
    ]
    for feeds, fragments in cases:
        with pytest.raises(ferry_api.InvalidArgumentError) as e:
            session.run(feeds)
        assert isinstance(e.value, ValueError)
        for f in fragments:
            assert f in str(e.value), (f, str(e.value))
    with pytest.raises(TypeError, match="mapping"):
        session.run([a, a])
    with pytest.raises(TypeError, match="names must be str"):
        session.run({0: a, "b": a})


def test_compile_options_are_checked(ferry_api, add_model):
    model = ferry_api.load(add_model)
    with pytest.raises(TypeError, match="unknown option 'optimise'"):
        model.compile(optimise=False)
    with pytest.raises(TypeError, match="option 'optimize' must be a bool, got str"):
        model.compile(optimize="no")
    with pytest.raises(TypeError, match="option 'threads' must be an int or None"):
        model.compile(threads=1.5)
    with pytest.raises(ferry_api.InvalidArgumentError, match=r"unknown backend 'cuda' \(available: cpu, reference"):
        model.compile(backend="cuda")
    with pytest.raises(ferry_api.InvalidArgumentError, match="threads must be >= 0"):
        model.compile(threads=-1)
    with pytest.raises(ferry_api.InvalidArgumentError, match=r"unknown conv_algorithm 'fast' \(auto, direct, winograd\)"):
        model.compile(conv_algorithm="fast")
    with pytest.raises(TypeError, match="option 'conv_algorithm' must be a str"):
        model.compile(conv_algorithm=1)
    with pytest.raises(ferry_api.InvalidArgumentError, match=r"unknown fp32_math 'tf32' \(exact, bf16x3\)"):
        model.compile(fp32_math="tf32")
    with pytest.raises(TypeError, match="option 'fp32_math' must be a str"):
        model.compile(fp32_math=3)
    session = model.compile(optimize=False, backend="reference", threads=2)
    assert session.options == {"optimize": False, "backend": "reference", "threads": 2, "isa": "",
                               "blocked_layouts": True, "reference_kernels": False, "conv_algorithm": "auto",
                               "fp32_math": "exact", "precision": ""}
    assert session.backend == "reference"
    assert [b["name"] for b in ferry_api.backends()][:2] == ["cpu", "reference"]
    assert model.compile().backend == "cpu", "the default backend is the first row, as for `ferry run`"


def test_concurrent_runs_agree_with_serial_ones(ferry_api):
    """run() releases the GIL; calls on one session from several threads are serialized,
    on separate sessions they overlap; either way each result is the serial one (bitwise)."""
    from concurrent.futures import ThreadPoolExecutor

    meta = ensure_model("torch", "mobilenet_v3_small", "small")
    model = ferry_api.load(str(meta["path"]))
    feeds = [make_inputs(meta["inputs"], seed=s) for s in range(4)]
    shared = model.compile()
    serial = [shared.run(f) for f in feeds]
    with ThreadPoolExecutor(4) as pool:
        same_session = list(pool.map(shared.run, feeds))
        own_sessions = list(pool.map(lambda f: model.compile().run(f), feeds))
    for want, a, b in zip(serial, same_session, own_sessions):
        for name in want:
            np.testing.assert_array_equal(a[name], want[name])
            np.testing.assert_array_equal(b[name], want[name])


# --- memory ------------------------------------------------------------------------


@pytest.fixture
def reduce_model(onnx_mod, tmp_path):
    """s = ReduceSum(x) over all axes, x f32[256, 1024] (1 MiB in, 4 bytes out)."""
    from onnx import TensorProto as T, helper

    node = helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0, name="sum")
    return save_model(onnx_mod, tmp_path / "reduce.onnx", [node], [vi("x", T.FLOAT, [256, 1024])],
                      [vi("s", T.FLOAT, [])], opset=13)


def _numpy_peak_during(fn):
    """Peak bytes traced by tracemalloc (numpy's data allocations included) while fn runs."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = fn()
        return result, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_contiguous_inputs_are_not_copied(ferry_api, reduce_model):
    session = ferry_api.load(reduce_model).compile()
    x = np.random.default_rng(0).standard_normal((256, 2048)).astype(np.float32)
    contiguous = np.ascontiguousarray(x[:, :1024])
    strided = x[:, ::2]  # the same size, but not C-contiguous: must be copied (1 MiB)
    assert strided.nbytes == contiguous.nbytes == 1 << 20
    lent, peak_lent = _numpy_peak_during(lambda: session.run({"x": contiguous}))
    np.testing.assert_allclose(lent["s"], contiguous.sum(dtype=np.float64), rtol=1e-4)
    copied, peak_copied = _numpy_peak_during(lambda: session.run({"x": strided}))
    np.testing.assert_allclose(copied["s"], strided.sum(dtype=np.float64), rtol=1e-4)
    assert peak_copied >= strided.nbytes, "tracemalloc must see the copy of a strided input"
    assert peak_lent < strided.nbytes // 4, f"a contiguous input was copied ({peak_lent} bytes allocated)"
    readonly = np.frombuffer(contiguous.tobytes(), np.float32).reshape(256, 1024)
    assert not readonly.flags.writeable
    np.testing.assert_array_equal(session.run({"x": readonly})["s"], lent["s"])


def test_outputs_own_their_memory_and_outlive_the_session(ferry_api):
    meta = ensure_model("torch", "resnet18", "small")
    feeds = make_inputs(meta["inputs"], seed=0)
    model = ferry_api.load(str(meta["path"]))
    session = model.compile()
    out = session.run(feeds)["logits"]
    expected = out.copy()
    assert out.flags.c_contiguous and out.flags.writeable and not out.flags.owndata
    assert type(out.base).__name__ == "PyCapsule", "the output's memory is handed over, not copied"
    del session, model
    gc.collect()
    ferry_api.load(str(meta["path"])).compile().run(feeds)  # reuse freed memory, if it was freed
    np.testing.assert_array_equal(out, expected)


def test_outputs_never_alias_inputs_or_constants(ferry_api, onnx_mod, tmp_path):
    from onnx import TensorProto as T, helper, numpy_helper

    nodes = [helper.make_node("Identity", ["x"], ["same"], name="id"),
             helper.make_node("Reshape", ["x", "shape"], ["flat"], name="flat"),
             helper.make_node("Identity", ["table"], ["const"], name="const_out")]
    inits = [numpy_helper.from_array(np.array([-1], np.int64), "shape"),
             numpy_helper.from_array(np.arange(4, dtype=np.float32), "table")]
    path = save_model(onnx_mod, tmp_path / "alias.onnx", nodes, [vi("x", T.FLOAT, [2, 2])],
                      [vi("same", T.FLOAT, [2, 2]), vi("flat", T.FLOAT, [4]), vi("const", T.FLOAT, [4])], inits)
    for optimize in (False, True):
        session = ferry_api.load(path).compile(optimize=optimize)
        x = np.arange(4, dtype=np.float32).reshape(2, 2)
        first = session.run({"x": x})
        for name in ("same", "flat"):
            assert not np.shares_memory(first[name], x), name
        np.testing.assert_array_equal(first["flat"], x.ravel())
        first["const"][:] = 99  # must not write into the model's constant
        first["same"][:] = 7
        assert not np.shares_memory(first["same"], first["flat"])
        np.testing.assert_array_equal(x, np.arange(4, dtype=np.float32).reshape(2, 2))
        np.testing.assert_array_equal(session.run({"x": x})["const"], np.arange(4, dtype=np.float32))


# --- dtypes ------------------------------------------------------------------------


def test_dtypes_in_and_out(ferry_api, onnx_mod, tmp_path):
    from onnx import TensorProto as T, helper

    nodes = [helper.make_node("Add", ["h", "h"], ["h2"], name="add_f16"),
             helper.make_node("Mul", ["i", "i"], ["i2"], name="mul_i64"),
             helper.make_node("Not", ["b"], ["nb"], name="not_bool"),
             helper.make_node("Cast", ["b"], ["bf"], to=T.FLOAT, name="cast_bool"),
             helper.make_node("Cast", ["h"], ["h32"], to=T.FLOAT, name="cast_f16"),
             helper.make_node("Greater", ["f", "h32"], ["gt"], name="greater")]
    inputs = [vi("h", T.FLOAT16, [2, 3]), vi("i", T.INT64, [2, 3]), vi("b", T.BOOL, [2, 3]), vi("f", T.FLOAT, [2, 3])]
    outputs = [vi("h2", T.FLOAT16, [2, 3]), vi("i2", T.INT64, [2, 3]), vi("nb", T.BOOL, [2, 3]),
               vi("bf", T.FLOAT, [2, 3]), vi("gt", T.BOOL, [2, 3])]
    path = save_model(onnx_mod, tmp_path / "dtypes.onnx", nodes, inputs, outputs)
    rng = np.random.default_rng(3)
    feeds = {"h": rng.standard_normal((2, 3)).astype(np.float16),
             "i": rng.integers(-1000, 1000, (2, 3)).astype(np.int64),
             "b": rng.integers(0, 2, (2, 3)).astype(bool),
             "f": rng.standard_normal((2, 3)).astype(np.float32)}
    model = ferry_api.load(path)
    assert [t.dtype for t in model.inputs] == ["f16", "i64", "bool", "f32"]
    assert [t.numpy_dtype for t in model.outputs] == [np.float16, np.int64, np.bool_, np.float32, np.bool_]
    got = model.compile().run(feeds)
    expected = run_ort(path, feeds)
    for name, want in expected.items():
        assert got[name].dtype == want.dtype, name
        np.testing.assert_array_equal(got[name], want, err_msg=name)
    with pytest.raises(ferry_api.InvalidArgumentError, match="input 'i' must be i64 \\(numpy int64\\), got numpy int32"):
        model.compile().run({**feeds, "i": feeds["i"].astype(np.int32)})
    swapped = {**feeds, "i": feeds["i"].astype(">i8")}  # big-endian: converted, same values
    np.testing.assert_array_equal(model.compile().run(swapped)["i2"], expected["i2"])


def test_bf16_through_ml_dtypes(ferry_api, onnx_mod, tmp_path):
    """bf16 has no numpy dtype: ferry takes and returns ml_dtypes.bfloat16 arrays."""
    try:
        import ml_dtypes
    except ImportError as e:
        unavailable(f"ml_dtypes not importable (it comes with onnx): {e}")
    from onnx import TensorProto as T, helper

    nodes = [helper.make_node("Cast", ["x"], ["y"], to=T.BFLOAT16, name="to_bf16"),
             helper.make_node("Mul", ["b", "b"], ["bb"], name="square_bf16"),
             helper.make_node("Cast", ["bb"], ["z"], to=T.FLOAT, name="to_f32")]
    path = save_model(onnx_mod, tmp_path / "bf16.onnx", nodes, [vi("x", T.FLOAT, [7]), vi("b", T.BFLOAT16, [7])],
                      [vi("y", T.BFLOAT16, [7]), vi("z", T.FLOAT, [7])])
    model = ferry_api.load(path)
    assert model.inputs[1].dtype == "bf16" and model.inputs[1].numpy_dtype == ml_dtypes.bfloat16
    x = np.array([0.0, 1.0, -2.5, 3.14159, 1e-3, 65504.0, -1e30], np.float32)
    b = np.array([0.5, 1.5, -2.0, 3.0, 0.25, -8.0, 10.0], np.float32).astype(ml_dtypes.bfloat16)
    out = model.compile().run({"x": x, "b": b})
    assert out["y"].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(out["y"].view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))
    np.testing.assert_array_equal(out["z"], (b.astype(np.float32) ** 2).astype(ml_dtypes.bfloat16).astype(np.float32))


# --- the package itself ------------------------------------------------------------


def test_pure_python_parts_need_no_extension(ferry_api, tmp_path):
    """`python -m ferry.reference` (what `ferry validate` runs with PYTHONPATH=python) and
    ferry.errors import without loading ferry._ferry."""
    code = ("import sys, ferry, ferry.errors, ferry.reference\n"
            "assert 'ferry._ferry' not in sys.modules, 'the extension was imported eagerly'\n"
            "assert issubclass(ferry.InvalidArgumentError, ValueError)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "python"), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([sys.executable, "-m", "ferry.reference", "--help"], capture_output=True, text=True,
                          env=env, cwd=tmp_path)
    assert proc.returncode == 0 and "onnxruntime" in proc.stdout, proc.stderr


def test_type_stubs_match_the_extension(ferry_api):
    ext = sys.modules["ferry._ferry"]
    stub = Path(ext.__file__).with_name("_ferry.pyi")
    assert stub.is_file(), f"no type stubs next to {ext.__file__}"
    assert Path(ext.__file__).with_name("py.typed").is_file()
    tree = ast.parse(stub.read_text())
    stub_names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    ext_names = {n for n in dir(ext) if not n.startswith("_")}
    assert stub_names == ext_names
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        members = {n.name for n in cls.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("__")}
        public = {n for n in dir(getattr(ext, cls.name)) if not n.startswith("_")}
        assert members == public, cls.name
    for name in ext_names:
        assert getattr(ext, name).__doc__, f"{name} has no docstring"
