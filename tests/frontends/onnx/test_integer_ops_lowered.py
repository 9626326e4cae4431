"""ConvInteger / MatMulInteger (onnxruntime's quantize_dynamic) on the cpu target: the optimizer
writes them as f32 Conv / MatMul on the zero-point-shifted operands (passes/lower_integer_matmuls.cc)
and the cpu backend runs those on oneDNN; the reference target keeps the integer ops. Outputs are
compared with ONNX Runtime (graph optimizations off: the ops as written) over a sweep of dtypes,
zero points (absent, constant, per channel, computed by DynamicQuantizeLinear), groups, strides,
pads and dilations; integer outputs must be equal, the quantizer's float chains (+ bias, Cast, Mul
by the scale) within float rounding. DynamicQuantizeLinear and the DequantizeLinear the lowering
writes run on own kernels over the convolutions' layouts (no reference kernel in the profile)."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from cli_helpers import converted_ops, ferry_run

CONV_CASES = {
    # id: (x dtype, w dtype, x shape, w shape, attrs, zx, zw)  zx/zw: None, a value, "per-channel"
    "u8u8_zps": (np.uint8, np.uint8, (1, 4, 9, 9), (6, 4, 3, 3), {"pads": [1, 1, 1, 1]}, 131, 119),
    "u8u8_strided_dilated": (np.uint8, np.uint8, (2, 3, 11, 10), (5, 3, 3, 3),
                             {"strides": [2, 1], "dilations": [2, 2], "pads": [2, 1, 2, 1]}, 7, 250),
    "u8u8_per_channel_zw": (np.uint8, np.uint8, (1, 4, 8, 8), (6, 4, 1, 1), {}, 0, "per-channel"),
    "u8u8_grouped": (np.uint8, np.uint8, (1, 6, 7, 7), (6, 2, 3, 3), {"group": 3, "pads": [1, 1, 1, 1]}, 100, 128),
    "u8u8_depthwise": (np.uint8, np.uint8, (1, 8, 6, 6), (8, 1, 3, 3), {"group": 8}, 255, 0),
    "u8u8_no_zero_points": (np.uint8, np.uint8, (1, 3, 6, 6), (4, 3, 2, 2), {}, None, None),
    "u8u8_conv1d": (np.uint8, np.uint8, (1, 4, 20), (3, 4, 5), {"pads": [2, 2]}, 90, 160),
}

MATMUL_CASES = {
    # id: (a dtype, b dtype, a shape, b shape, za, zb)
    "u8u8_2d": (np.uint8, np.uint8, (5, 33), (33, 17), 128, 119),
    "u8s8_batched_a": (np.uint8, np.int8, (2, 3, 40), (40, 9), 17, 0),
    "s8s8": (np.int8, np.int8, (4, 16), (16, 8), -3, 5),
    "u8u8_per_column_zb": (np.uint8, np.uint8, (3, 24), (24, 6), 60, "per-column"),
    "u8u8_no_zero_points": (np.uint8, np.uint8, (2, 12), (12, 5), None, None),
}


def _info(h, name, arr_or_dtype, shape=None):
    from onnx import helper
    return h.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(arr_or_dtype)), shape)


def _values(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def _zero_point(rng, z, dtype, channels):
    if z is None:
        return None
    if isinstance(z, str):
        return _values(rng, dtype, (channels,))
    return np.array(z, dtype)


def integer_model(onnx_mod, path, op, x_dt, w_dt, x_shape, w_shape, attrs, zx, zw, rng, weights_input=False):
    """One ConvInteger / MatMulInteger with constant weights (or weights as a graph input)."""
    h, nh = onnx_mod.helper, onnx_mod.numpy_helper
    w = _values(rng, w_dt, w_shape)
    channels = w_shape[0] if op == "ConvInteger" else w_shape[-1]
    inits, ins = [], ["x", "w"]
    if not weights_input:
        inits.append(nh.from_array(w, "w"))
    zx_arr, zw_arr = _zero_point(rng, zx, x_dt, 1), _zero_point(rng, zw, w_dt, channels)
    if zx_arr is not None or zw_arr is not None:
        ins.append("zx" if zx_arr is not None else "")
        if zx_arr is not None:
            inits.append(nh.from_array(zx_arr, "zx"))
    if zw_arr is not None:
        ins.append("zw")
        inits.append(nh.from_array(zw_arr, "zw"))
    node = h.make_node(op, ins, ["y"], **attrs)
    graph_inputs = [_info(h, "x", x_dt, list(x_shape))] + ([_info(h, "w", w_dt, list(w_shape))] if weights_input else [])
    g = h.make_graph([node], "g", graph_inputs, [_info(h, "y", np.int32, None)], inits)
    onnx_mod.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)
    feeds = {"x": _values(rng, x_dt, x_shape)}
    if weights_input:
        feeds["w"] = w
    return feeds


def dynamic_conv_model(onnx_mod, path, rng, x_shape=(1, 6, 12, 12), oc=8):
    """quantize_dynamic's form: DynamicQuantizeLinear -> ConvInteger -> + bias (quantized at run time
    by the input's scale) -> Cast -> Mul(scale) -> Relu -> DynamicQuantizeLinear -> MatMulInteger."""
    h, nh = onnx_mod.helper, onnx_mod.numpy_helper
    w = _values(rng, np.uint8, (oc, x_shape[1], 3, 3))
    b = rng.normal(0, 0.5, oc).astype(np.float32)
    w2 = _values(rng, np.uint8, (x_shape[3], 5))
    inits = [nh.from_array(w, "w"), nh.from_array(np.array(121, np.uint8), "wz"),
             nh.from_array(np.array(0.004, np.float32), "ws"), nh.from_array(b, "b"),
             nh.from_array(np.array([1, oc, 1, 1], np.int64), "bshape"),
             nh.from_array(w2, "w2"), nh.from_array(np.array(131, np.uint8), "w2z"),
             nh.from_array(np.array(0.01, np.float32), "w2s")]
    nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             h.make_node("Mul", ["xs", "ws"], ["s"]),
             h.make_node("Div", ["b", "s"], ["bq_f"]),
             h.make_node("Floor", ["bq_f"], ["bq_r"]),
             h.make_node("Cast", ["bq_r"], ["bq_i"], to=6),
             h.make_node("Reshape", ["bq_i", "bshape"], ["bq"]),
             h.make_node("ConvInteger", ["xq", "w", "xz", "wz"], ["c"], pads=[1, 1, 1, 1]),
             h.make_node("Add", ["c", "bq"], ["cb"]),
             h.make_node("Cast", ["cb"], ["cf"], to=1),
             h.make_node("Mul", ["cf", "s"], ["conv"]),
             h.make_node("Relu", ["conv"], ["r"]),
             h.make_node("DynamicQuantizeLinear", ["r"], ["rq", "rs", "rz"]),
             h.make_node("MatMulInteger", ["rq", "w2", "rz", "w2z"], ["m"]),
             h.make_node("Cast", ["m"], ["mf"], to=1),
             h.make_node("Mul", ["rs", "w2s"], ["s2"]),
             h.make_node("Mul", ["mf", "s2"], ["y"])]
    g = h.make_graph(nodes, "g", [_info(h, "x", np.float32, list(x_shape))], [_info(h, "y", np.float32, None)], inits)
    onnx_mod.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)
    return {"x": rng.normal(0, 1, x_shape).astype(np.float32)}


def ort_run(path, feeds):
    """ONNX Runtime without graph optimizations; onnx.reference for what ORT refuses (a per-channel
    ConvInteger weight zero point, some MatMulInteger type pairs), said so by ORT's error."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    except Exception as e:  # noqa: BLE001 - only ORT's "not supported" errors fall back
        if not any(s in str(e) for s in ("NOT_IMPLEMENTED", "Could not find an implementation", "not supported")):
            raise
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(str(path)).run(None, feeds)[0]


@pytest.mark.parametrize("case", list(CONV_CASES))
def test_conv_integer_lowered_equals_onnxruntime(ferry_cli, onnx_mod, tmp_path, case):
    x_dt, w_dt, xs, ws, attrs, zx, zw = CONV_CASES[case]
    path = tmp_path / "m.onnx"
    feeds = integer_model(onnx_mod, path, "ConvInteger", x_dt, w_dt, xs, ws, attrs, zx, zw, np.random.default_rng(3))
    want = ort_run(path, feeds)
    ops = converted_ops(ferry_cli, onnx_mod, path, "cpu", tmp_path)
    assert "ConvInteger" not in ops and ("Conv" in ops or "FusedConv" in ops), ops
    assert "ConvInteger" in converted_ops(ferry_cli, onnx_mod, path, "reference", tmp_path)
    for backend in ("cpu", "reference"):
        got = ferry_run(ferry_cli, path, feeds, tmp_path, backend)
        assert got.dtype == np.int32 and got.shape == want.shape, (backend, got.dtype, got.shape, want.shape)
        np.testing.assert_array_equal(got, want, err_msg=backend)


@pytest.mark.parametrize("case", list(MATMUL_CASES))
def test_matmul_integer_lowered_equals_onnxruntime(ferry_cli, onnx_mod, tmp_path, case):
    a_dt, b_dt, a_shape, b_shape, za, zb = MATMUL_CASES[case]
    path = tmp_path / "m.onnx"
    feeds = integer_model(onnx_mod, path, "MatMulInteger", a_dt, b_dt, a_shape, b_shape, {}, za, zb,
                          np.random.default_rng(5))
    want = ort_run(path, feeds)
    assert "MatMulInteger" not in converted_ops(ferry_cli, onnx_mod, path, "cpu", tmp_path)
    for backend in ("cpu", "reference"):
        got = ferry_run(ferry_cli, path, feeds, tmp_path, backend)
        assert got.dtype == np.int32 and got.shape == want.shape, (backend, got.dtype, got.shape, want.shape)
        np.testing.assert_array_equal(got, want, err_msg=backend)


def test_computed_weights_stay_on_the_integer_kernel(ferry_cli, onnx_mod, tmp_path):
    path = tmp_path / "m.onnx"
    x_dt, w_dt, xs, ws, attrs, zx, zw = CONV_CASES["u8u8_zps"]
    feeds = integer_model(onnx_mod, path, "ConvInteger", x_dt, w_dt, xs, ws, attrs, zx, zw, np.random.default_rng(4),
                          weights_input=True)
    assert "ConvInteger" in converted_ops(ferry_cli, onnx_mod, path, "cpu", tmp_path)
    np.testing.assert_array_equal(ferry_run(ferry_cli, path, feeds, tmp_path, "cpu"), ort_run(path, feeds))


def test_dynamic_quantization_chain_matches_onnxruntime_on_own_kernels(ferry_cli, onnx_mod, tmp_path):
    path = tmp_path / "dyn.onnx"
    feeds = dynamic_conv_model(onnx_mod, path, np.random.default_rng(11))
    want = ort_run(path, feeds)
    ops = converted_ops(ferry_cli, onnx_mod, path, "cpu", tmp_path)
    # The int32 detour (Add of the i32 bias, Cast) is gone: the bias adds in f32 after the Conv.
    assert not {"ConvInteger", "MatMulInteger"} & set(ops) and ops.count("Cast") <= 2, ops
    for backend in ("cpu", "reference"):
        got = ferry_run(ferry_cli, path, feeds, tmp_path, backend)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max(), err_msg=backend)
    trace = tmp_path / "trace.json"
    r = subprocess.run([str(ferry_cli), "bench", str(path), "--iters", "2", "--warmup", "1", "--profile", str(trace)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    events = json.loads(trace.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    kernels = {e["name"].split(" ")[0]: e.get("args", {}).get("kernel", "") for e in events if e.get("ph") == "X"}
    assert kernels.get("DynamicQuantizeLinear", "").startswith("dynamic_quantize_linear_f32_u8"), kernels
    assert kernels.get("DequantizeLinear", "").startswith("dequantize_linear_u8_f32"), kernels


def test_dynamic_quantize_of_nan_is_a_clear_error(ferry_cli, onnx_mod, tmp_path):
    path = tmp_path / "dyn.onnx"
    feeds = dynamic_conv_model(onnx_mod, path, np.random.default_rng(12))
    feeds["x"][0, 1, 2, 3] = np.nan
    np.save(tmp_path / "x.npy", feeds["x"])
    r = subprocess.run([str(ferry_cli), "run", str(path), "--input", f"x={tmp_path / 'x.npy'}",
                        "--output-dir", str(tmp_path / "o")], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "NaN" in r.stdout + r.stderr, r.stdout + r.stderr
