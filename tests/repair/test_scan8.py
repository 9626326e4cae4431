"""Scan-8 (batch axis, sequence_lens, directions; frontends/onnx/import_scan8.cc): imported
as a Loop over the batch around a Scan-9, and checked against ONNX Runtime's own Scan-8
kernel (onnx.reference implements Scan 9+ only) on both backends: variable sequence
lengths (ORT pads scan outputs with zeros), a reverse scan input over a shorter sequence,
several states, a body that reads an outer initializer, a dynamic batch; `ferry convert`
writes Loop + Scan that ONNX Runtime runs to the same numbers."""

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


def scan8_model(with_lens, batch):
    """state s [2] += x_t * w; out_t = s (forward); rev_t = x_t + c (x scanned backward)."""
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    body = h.make_graph(
        [h.make_node("Mul", ["x_t", "w"], ["p"]), h.make_node("Add", ["s", "p"], ["s_next"]),
         h.make_node("Mul", ["n", "two"], ["n_next"]),
         h.make_node("Identity", ["s_next"], ["out_t"]), h.make_node("Add", ["xr_t", "c"], ["rev_t"])],
        "body",
        [h.make_tensor_value_info("s", T.FLOAT, [2]), h.make_tensor_value_info("n", T.FLOAT, []),
         h.make_tensor_value_info("x_t", T.FLOAT, [2]), h.make_tensor_value_info("xr_t", T.FLOAT, [2])],
        [h.make_tensor_value_info("s_next", T.FLOAT, [2]), h.make_tensor_value_info("n_next", T.FLOAT, []),
         h.make_tensor_value_info("out_t", T.FLOAT, [2]), h.make_tensor_value_info("rev_t", T.FLOAT, [2])],
        [nh.from_array(np.array(2.0, np.float32), "two")])
    node = h.make_node("Scan", ["lens" if with_lens else "", "s0", "n0", "x", "x"], ["s_final", "n_final", "outs", "revs"],
                       num_scan_inputs=2, directions=[0, 1], body=body)
    inputs = [h.make_tensor_value_info("s0", T.FLOAT, [batch, 2]), h.make_tensor_value_info("n0", T.FLOAT, [batch]),
              h.make_tensor_value_info("x", T.FLOAT, [batch, 5, 2])]
    if with_lens:
        inputs.insert(0, h.make_tensor_value_info("lens", T.INT64, [batch]))
    g = h.make_graph([node], "scan8", inputs,
                     [h.make_tensor_value_info("s_final", T.FLOAT, [batch, 2]),
                      h.make_tensor_value_info("n_final", T.FLOAT, [batch]),
                      h.make_tensor_value_info("outs", T.FLOAT, [batch, 5, 2]),
                      h.make_tensor_value_info("revs", T.FLOAT, [batch, 5, 2])],
                     [nh.from_array(np.array([0.5, -1.5], np.float32), "w"),
                      nh.from_array(np.array([10.0, 20.0], np.float32), "c")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 8)])
    m.ir_version = 4  # initializers need not be graph inputs
    onnx.checker.check_model(m)
    return m


def feeds(batch, lens):
    rng = np.random.default_rng(batch)
    f = {"s0": rng.standard_normal((batch, 2)).astype(np.float32), "n0": rng.standard_normal(batch).astype(np.float32),
         "x": rng.standard_normal((batch, 5, 2)).astype(np.float32)}
    if lens is not None:
        f["lens"] = np.array(lens, np.int64)
    return f


def ort_run(path, f):
    import onnxruntime as ort

    s = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, f)))


def ferry_run(binary, path, f, backend, tmp_path):
    out = tmp_path / f"out_{backend}"
    args = [str(binary), "run", str(path), "--backend", backend, "--output-dir", str(out)]
    for name, a in f.items():
        np.save(tmp_path / f"{name}.npy", a)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"ferry run failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return {name: np.load(out / f"{name}.npy") for name in ("s_final", "n_final", "outs", "revs")}


CASES = {
    # name: (with sequence_lens, batch dim as written, feeds' batch, lens)
    "lens_varied": (True, 4, 4, [5, 2, 1, 3]),
    "lens_full": (True, 2, 2, [5, 5]),
    "no_lens": (False, 3, 3, None),
    "no_lens_dynamic_batch": (False, "N", 3, None),
    "lens_dynamic_batch": (True, "N", 2, [4, 1]),
}


@pytest.mark.parametrize("backend", ["reference", "cpu"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_scan8_matches_onnxruntime(case, backend, tmp_path):
    binary = _need()
    import onnx

    with_lens, batch, n, lens = CASES[case]
    path = tmp_path / "scan8.onnx"
    onnx.save(scan8_model(with_lens, batch), path)
    f = feeds(n, lens)
    want = ort_run(path, f)
    if lens is not None and min(lens) < 5:  # ORT pads with zeros past a sequence's end
        b = int(np.argmin(lens))
        assert np.all(want["outs"][b, lens[b]:] == 0) and np.all(want["revs"][b, lens[b]:] == 0)
    got = ferry_run(binary, path, f, backend, tmp_path)
    for name, w in want.items():
        assert got[name].shape == w.shape, f"{name}: shape {got[name].shape}, ORT {w.shape}"
        np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-6, err_msg=f"{case} {backend} {name}")


def test_scan8_convert_writes_loop_and_scan(tmp_path):
    """The converted file holds Loop (+ Scan-9 in its body), passes the checker, and ORT agrees."""
    binary = _need()
    import onnx

    src, dst = tmp_path / "scan8.onnx", tmp_path / "converted.onnx"
    onnx.save(scan8_model(True, "N"), src)
    # --no-optimize: optimized for the cpu target, the body may hold ferry-domain fused ops
    # (FusedMul), which ONNX Runtime cannot run; ferry's own run of the body is checked above.
    cmd = [str(binary), "convert", str(src), "-o", str(dst), "--no-optimize"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"ferry convert failed:\n{proc.stdout}\n{proc.stderr}"
    m = onnx.load(str(dst))
    onnx.checker.check_model(m, full_check=True)
    loops = [n for n in m.graph.node if n.op_type == "Loop"]
    assert len(loops) == 1, [n.op_type for n in m.graph.node]
    assert any(n.op_type == "Scan" for n in loops[0].attribute[0].g.node)
    f = feeds(3, [2, 5, 3])
    want, got = ort_run(src, f), ort_run(dst, f)
    for name, w in want.items():
        np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-6, err_msg=f"converted {name}")


def test_scan8_bad_directions_is_refused(tmp_path):
    binary = _need()
    import onnx

    m = scan8_model(False, 2)
    for a in m.graph.node[0].attribute:
        if a.name == "directions":
            a.ints[:] = [0]
    path = tmp_path / "bad.onnx"
    onnx.save(m, path)
    proc = subprocess.run([str(binary), "inspect", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "directions has 1 entries, num_scan_inputs is 2" in proc.stdout + proc.stderr
