"""Shape adapters (src/repair/shape_adapters.cc): a node whose input ranks are a form its op
refuses is fed adapted inputs and its outputs adapted back, with --repair.

Each case is a one-node model in the refused form. `ferry convert --repair --no-optimize` writes
it with the adapters (standard ops only); ferry runs that file (reference and cpu backends) and ONNX Runtime runs it too, and
all three must match the op's meaning on seeded random data:
  - unbatched ops (ONNX Runtime and onnx.reference refuse them): ONNX Runtime on the same node
    with the batch axis given (Unsqueeze in the model), squeezed;
  - Gemm with a rank > 2 A: onnx.reference runs the original node itself (np.dot).
(onnx.reference also runs an unbatched AveragePool, but reads it as pooling over all three axes
with one of them dropped: [3, 6, 6] -> [3, 6, 5] for a 2x2 kernel; not a meaning to match.)
Without --repair the node is unsupported and `inspect` offers the adapter; a form the adapter
does not read says why; a node in the op's own form is left alone."""

import json
import subprocess

import numpy as np
import pytest

from model_cache import ferry_binary, unavailable


def _need():
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        unavailable(f"{e.name} not installed")
    binary = ferry_binary()
    if binary is None:
        unavailable("build/ferry is missing (FERRY_BIN overrides)")
    return binary


rng = np.random.default_rng(18)


def W(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# name: (op, attributes, X shape, initializers (in input order after X), outputs, reference)
CASES = {
    "conv2d": ("Conv", {"pads": [1, 1, 1, 1]}, [3, 8, 8], [W(4, 3, 3, 3), W(4)], 1, "batched"),
    "conv1d_strided": ("Conv", {"strides": [2]}, [3, 17], [W(5, 3, 3)], 1, "batched"),
    "conv_grouped": ("Conv", {"group": 2}, [4, 6, 6], [W(6, 2, 3, 3)], 1, "batched"),
    "conv_transpose": ("ConvTranspose", {"strides": [2, 2]}, [3, 5, 5], [W(3, 4, 3, 3)], 1, "batched"),
    "maxpool_indices": ("MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2]}, [3, 8, 8], [], 2, "batched"),
    "maxpool1d": ("MaxPool", {"kernel_shape": [3]}, [4, 10], [], 1, "batched"),
    "averagepool": ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, [3, 7, 7], [], 1, "batched"),
    "lppool": ("LpPool", {"kernel_shape": [2, 2]}, [3, 6, 6], [], 1, "batched"),
    "batchnorm": ("BatchNormalization", {}, [3, 8, 8],
                  [W(3), W(3), W(3), np.abs(W(3)) + 0.5], 1, "batched"),
    "batchnorm_rank1": ("BatchNormalization", {}, [5], [W(5), W(5), W(5), np.abs(W(5)) + 0.5], 1, "batched"),
    "instancenorm": ("InstanceNormalization", {}, [3, 8, 8], [W(3), W(3)], 1, "batched"),
    "gemm_rank3": ("Gemm", {"alpha": 0.5, "beta": 2.0}, [2, 3, 4], [W(4, 5), W(5)], 1, "onnx.reference"),
    "gemm_rank4_transB": ("Gemm", {"transB": 1}, [2, 2, 3, 4], [W(5, 4), W(1, 5)], 1, "onnx.reference"),
}

INPUT_NAMES = {"Conv": ["x", "w", "b"], "ConvTranspose": ["x", "w"], "MaxPool": ["x"], "AveragePool": ["x"],
               "LpPool": ["x"], "BatchNormalization": ["x", "scale", "bias", "mean", "var"],
               "InstanceNormalization": ["x", "scale", "bias"], "Gemm": ["x", "b", "c"]}


def make_model(case, batched=False):
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    op, attrs, shape, inits, nout, _ = CASES[case]
    names = INPUT_NAMES[op][:1 + len(inits)]
    outs = ["y", "indices"][:nout]
    nodes = [h.make_node(op, ["xb" if batched else "x"] + names[1:], [o + "b" for o in outs] if batched else outs,
                         **attrs)]
    if batched:
        axis = nh.from_array(np.array([0], np.int64), "axis0")
        nodes = [h.make_node("Unsqueeze", ["x", "axis0"], ["xb"])] + nodes
        nodes += [h.make_node("Squeeze", [o + "b", "axis0"], [o]) for o in outs]
    initializers = [nh.from_array(a, n) for n, a in zip(names[1:], inits)] + ([axis] if batched else [])
    out_types = [T.FLOAT, T.INT64][:nout]
    g = h.make_graph(nodes, case, [h.make_tensor_value_info("x", T.FLOAT, shape)],
                     [h.make_tensor_value_info(o, t, None) for o, t in zip(outs, out_types)], initializers)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def reference(case, path, feeds):
    import onnx
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator

    if CASES[case][-1] == "onnx.reference":
        m = onnx.load(str(path))
        return dict(zip([o.name for o in m.graph.output], ReferenceEvaluator(m).run(None, feeds)))
    batched = make_model(case, batched=True)
    s = ort.InferenceSession(batched.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def convert(binary, src, dst, *extra):
    proc = subprocess.run([str(binary), "convert", str(src), "-o", str(dst), *extra], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, f"ferry convert failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def ferry_run(binary, path, feeds, backend, tmp_path, names):
    out = tmp_path / f"out_{backend}"
    np.save(tmp_path / "x.npy", feeds["x"])
    proc = subprocess.run([str(binary), "run", str(path), "--backend", backend, "--output-dir", str(out),
                           "--input", f"x={tmp_path / 'x.npy'}"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"ferry run failed:\n{proc.stdout}\n{proc.stderr}"
    return {n: np.load(out / f"{n}.npy") for n in names}


def assert_close(got, want, what, atol=1e-5, rtol=1e-4):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, reference {want.shape}"
    if not np.issubdtype(want.dtype, np.floating):
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, err_msg=what)


@pytest.mark.parametrize("case", sorted(CASES))
def test_adapter_matches_reference(case, tmp_path):
    binary = _need()
    import onnx
    import onnxruntime as ort

    src, dst = tmp_path / "model.onnx", tmp_path / "adapted.onnx"
    onnx.save(make_model(case), src)
    feeds = {"x": W(*CASES[case][2])}
    want = reference(case, src, feeds)
    convert(binary, src, dst, "--repair", "--no-optimize", "--report", str(tmp_path / "report.json"))
    repairs = json.loads((tmp_path / "report.json").read_text())["repairs"]
    form = "rank > 2 A" if CASES[case][0] == "Gemm" else "unbatched"
    assert [r["rule"] for r in repairs] == [f"shape adapter {CASES[case][0]} ({form})"], repairs
    onnx.checker.check_model(onnx.load(str(dst)), full_check=True)
    s = ort.InferenceSession(str(dst), providers=["CPUExecutionProvider"])
    got_ort = dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))
    for name, w in want.items():
        assert_close(got_ort[name], w, f"{case}: ORT on the adapted file, {name}")
    for backend, tol in (("reference", (1e-5, 1e-4)), ("cpu", (1e-4, 1e-3))):
        got = ferry_run(binary, dst, feeds, backend, tmp_path, want.keys())
        for name, w in want.items():
            assert_close(got[name], w, f"{case}: ferry {backend}, {name}", *tol)


def test_without_repair_the_adapter_is_offered(tmp_path):
    binary = _need()
    import onnx

    src = tmp_path / "conv.onnx"
    onnx.save(make_model("conv2d"), src)
    proc = subprocess.run([str(binary), "inspect", str(src)], capture_output=True, text=True, timeout=60)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "X [3,8,8] has rank 3, W [4,3,3,3] rank 4: X has no batch axis" in out, out
    assert "repair available: shape adapter Conv (unbatched) -> Unsqueeze (batch axis), the op, Squeeze (use --repair)" in out


def test_gemm_forms_it_does_not_read_say_why(tmp_path):
    binary = _need()
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    def gemm(shape, b, **attrs):
        g = h.make_graph([h.make_node("Gemm", ["x", "b"], ["y"], **attrs)], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, shape)], [h.make_tensor_value_info("y", T.FLOAT, None)],
                         [nh.from_array(b, "b")])
        return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])

    for m, why in ((gemm([2, 3, 4], W(3, 5), transA=1), "with transA = 1"),
                   (gemm([2, 3, 2, 2], W(5, 12), transB=1), "A's last axis (2) is not B's K (12)")):
        src = tmp_path / "gemm.onnx"
        onnx.save(m, src)
        proc = subprocess.run([str(binary), "inspect", str(src), "--repair"], capture_output=True, text=True, timeout=60)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0 and "no repair applies: shape adapter Gemm (rank > 2 A) " + why in out, out


def test_own_form_is_left_alone(tmp_path):
    """BatchNormalization on [N, C, L] with C on axis 1 is the op's own form: no adapter."""
    binary = _need()
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    g = h.make_graph([h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])], "bn",
                     [h.make_tensor_value_info("x", T.FLOAT, [3, 4, 8])], [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(W(4), n) for n in "sbm"] + [nh.from_array(np.abs(W(4)) + 1, "v")])
    src, dst = tmp_path / "bn.onnx", tmp_path / "out.onnx"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), src)
    convert(binary, src, dst, "--repair", "--report", str(tmp_path / "report.json"))
    assert json.loads((tmp_path / "report.json").read_text())["repairs"] == []


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_hardmax_before_opset13_coerces_to_2d(axis, tmp_path):
    """Hardmax-11 on rank 3 (not an adapter: the importer reads the 2-D coercion exactly, as for
    Softmax-11), with ties (the first maximum of each flattened row wins), against ONNX Runtime."""
    binary = _need()
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto as T, helper as h

    g = h.make_graph([h.make_node("Hardmax", ["x"], ["y"], axis=axis)], "hm",
                     [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])], [h.make_tensor_value_info("y", T.FLOAT, None)])
    src = tmp_path / "hardmax.onnx"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 11)]), src)
    x = np.round(W(2, 3, 4))  # integers: ties across the flattened rows
    want = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    for backend in ("reference", "cpu"):
        np.save(tmp_path / "x.npy", x)
        out = tmp_path / backend
        proc = subprocess.run([str(binary), "run", str(src), "--backend", backend, "--output-dir", str(out),
                               "--input", f"x={tmp_path / 'x.npy'}"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        np.testing.assert_array_equal(np.load(out / "y.npy"), want, err_msg=f"axis {axis} {backend}")


@pytest.mark.parametrize("case", ["conv2d", "maxpool_indices", "instancenorm"])
def test_check_repairs_runs_the_batched_reading(case, tmp_path):
    """--check-repairs: ONNX Runtime refuses the unbatched node, so the check runs it with a batch
    axis of 1 (Reshape around it) on the model's own tensors, and passes."""
    binary = _need()
    import onnx

    m = make_model(case)
    m.graph.node[0].name = "the_node"
    src = tmp_path / "model.onnx"
    onnx.save(m, src)
    convert(binary, src, tmp_path / "out.onnx", "--repair", "--check-repairs", "--report", str(tmp_path / "r.json"))
    [rec] = json.loads((tmp_path / "r.json").read_text())["repairs"]
    assert rec["check"] == "passed", rec
    assert "onnxruntime (the node with a batch axis of 1)" in rec["check_detail"], rec
