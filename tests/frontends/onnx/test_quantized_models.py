"""Quantized ONNX models as ONNX Runtime's quantization tools write them, through ferry
against ONNX Runtime on the same inputs:

- `quantize_dynamic` (DynamicQuantizeLinear -> MatMulInteger / ConvInteger -> Cast -> Mul)
  on a small MLP and a small conv net;
- `quantize_static`, QDQ format (QuantizeLinear / DequantizeLinear pairs around fp32
  Conv / MatMul, per-channel weights) and QOperator format (QLinearConv / QLinearMatMul),
  calibrated with min-max on a few generated samples;
- DequantizeLinear with a scale of shape [1] and a zero point of shape [] (smart_turn_v3's form).

Each model runs with `ferry run` on the reference and the cpu backend. ORT runs with its
graph optimizations off, so it executes the ops as written. Integer ops are exact; where
ferry and ORT requantize, a tie may round differently, so outputs agree within one
quantization step of the model's output (the output DequantizeLinear's scale) plus float
rounding; ORT requantizes in fixed point, so QOperator models may differ by one step per
QLinear op, and there ferry must equal onnx.reference exactly.
"""

from __future__ import annotations

import functools
import importlib.util
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("ferry_models_conftest", REPO / "tests" / "models" / "conftest.py")
models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(models)

try:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static
except ImportError as e:  # reported per test
    IMPORT_ERROR = str(e)
else:
    IMPORT_ERROR = ""


@pytest.fixture(scope="module")
def ferry_bin():
    if IMPORT_ERROR:
        models.unavailable(f"onnx / onnxruntime (with onnxruntime.quantization) not importable: {IMPORT_ERROR}")
    binary = models.ferry_binary()
    if binary is None:
        models.unavailable("ferry binary not found (set FERRY_BIN)")
    return binary


def mlp(path, rng, bias=True):
    """x[4, 16] -> MatMul(16x32) (+ b) -> Relu -> MatMul(32x8) (+ b). Without the biases
    quantize_static's QOperator form has no QLinearAdd (an ORT contrib op ferry does not import)."""
    w1, b1 = rng.normal(0, 0.3, (16, 32)).astype(np.float32), rng.normal(0, 0.1, 32).astype(np.float32)
    w2, b2 = rng.normal(0, 0.3, (32, 8)).astype(np.float32), rng.normal(0, 0.1, 8).astype(np.float32)
    if bias:
        nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"), helper.make_node("Add", ["h0", "b1"], ["h1"]),
                 helper.make_node("Relu", ["h1"], ["h2"]), helper.make_node("MatMul", ["h2", "w2"], ["h3"], name="fc2"),
                 helper.make_node("Add", ["h3", "b2"], ["y"])]
        inits = [numpy_helper.from_array(a, n) for a, n in [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2")]]
    else:
        nodes = [helper.make_node("MatMul", ["x", "w1"], ["h1"], name="fc1"), helper.make_node("Relu", ["h1"], ["h2"]),
                 helper.make_node("MatMul", ["h2", "w2"], ["y"], name="fc2")]
        inits = [numpy_helper.from_array(a, n) for a, n in [(w1, "w1"), (w2, "w2")]]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return {"x": rng.normal(0, 1, (4, 16)).astype(np.float32)}


def convnet(path, rng):
    """x[1, 3, 10, 10] -> Conv 3x3 (8, pad 1) -> Relu -> Conv 3x3 (4, stride 2)."""
    w1, b1 = rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), rng.normal(0, 0.1, 8).astype(np.float32)
    w2, b2 = rng.normal(0, 0.2, (4, 8, 3, 3)).astype(np.float32), rng.normal(0, 0.1, 4).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["h1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["h1"], ["h2"]),
             helper.make_node("Conv", ["h2", "w2", "b2"], ["y"], name="conv2", strides=[2, 2])]
    inits = [numpy_helper.from_array(a, n) for a, n in [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2")]]
    g = helper.make_graph(nodes, "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 10, 10])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return {"x": rng.normal(0, 1, (1, 3, 10, 10)).astype(np.float32)}


class Samples(CalibrationDataReader):
    def __init__(self, feeds):
        self.it = iter(feeds)

    def get_next(self):
        return next(self.it, None)


def host_has_vnni():
    flags = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").exists() else []
    return "avx512_vnni" in flags or "avx_vnni" in flags


def run_ort(path, feeds, optimize=False):
    """ONNX Runtime without graph optimizations (the ops as defined), or with them (its int8 kernels)."""
    so = ort.SessionOptions()
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def run_ferry(binary, path, feeds, tmp_path, backend):
    out = tmp_path / f"out_{backend}"
    args = [str(binary), "run", str(path), "--backend", backend, "--output-dir", str(out)]
    for name, arr in feeds.items():
        np.save(tmp_path / f"{name}.npy", arr)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"ferry run failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return {o.name: np.load(out / f"{o.name}.npy") for o in onnx.load(path).graph.output}


def output_step(path):
    """The scale of the DequantizeLinear that makes the graph output (0: none)."""
    m = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "DequantizeLinear" and n.output[0] in {o.name for o in m.graph.output}:
            return float(np.max(inits[n.input[1]]))
    return 0.0


def op_types(path):
    return {n.op_type for n in onnx.load(path).graph.node}


def check(binary, path, feeds, tmp_path, want_ops, cpu_vs_ort_int8=False):
    """ferry's reference backend against ORT without optimizations; its cpu backend too, or, with
    `cpu_vs_ort_int8` (a QDQ model: ferry's cpu backend runs its MatMul / Conv on int8 steps, which on
    x86 without VNNI saturate as ONNX Runtime's do, docs/precision.md), against ORT's int8 kernels."""
    assert want_ops <= op_types(path), f"{path.name} lacks {want_ops - op_types(path)}: {sorted(op_types(path))}"
    wants = {"reference": run_ort(path, feeds), "cpu": run_ort(path, feeds, optimize=cpu_vs_ort_int8)}
    # ORT requantizes in its own fixed-point arithmetic: one step per requantizing op may differ.
    requantizing = sum(n.op_type in ("QLinearConv", "QLinearMatMul") for n in onnx.load(path).graph.node)
    tol = output_step(path) * max(requantizing, 1) * 1.01 + 1e-5
    for backend in ("reference", "cpu"):
        got = run_ferry(binary, path, feeds, tmp_path, backend)
        for name, w in wants[backend].items():
            g = got[name]
            assert g.shape == w.shape and g.dtype == w.dtype, f"{backend} {name}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
            err = np.abs(g.astype(np.float64) - w.astype(np.float64))
            bound = tol + 1e-5 * np.abs(w)
            assert np.all(err <= bound), f"{backend} {name}: max |ferry - ort| {err.max():.3g} (allowed {tol:.3g})"


@pytest.mark.parametrize("make", [mlp, convnet], ids=["mlp", "convnet"])
def test_quantize_dynamic(ferry_bin, tmp_path, make):
    rng = np.random.default_rng(7)
    fp32 = tmp_path / "fp32.onnx"
    feeds = make(fp32, rng)
    q = tmp_path / "dynamic.onnx"
    quantize_dynamic(str(fp32), str(q), weight_type=QuantType.QUInt8 if make is convnet else QuantType.QInt8)
    integer_op = "ConvInteger" if make is convnet else "MatMulInteger"
    check(ferry_bin, q, feeds, tmp_path, {"DynamicQuantizeLinear", integer_op})


@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
@pytest.mark.parametrize("make", [mlp, convnet], ids=["mlp", "convnet"])
def test_quantize_static(ferry_bin, tmp_path, make, fmt):
    if make is mlp and fmt == "QOperator":
        make = functools.partial(mlp, bias=False)
    fp32 = tmp_path / "fp32.onnx"
    calib = [make(tmp_path / "unused.onnx", np.random.default_rng(s)) for s in range(4)]
    feeds = make(fp32, np.random.default_rng(11))
    q = tmp_path / f"static_{fmt}.onnx"
    # QOperator: 7-bit weights (reduce_range). On x86 without VNNI, ORT's u8 x s8 kernels sum pairs of
    # products in int16 (vpmaddubsw), which saturates with full-range weights: there ORT is off by up
    # to 20 steps from the ONNX definition (and from onnx.reference, which ferry matches exactly).
    quantize_static(str(fp32), str(q), Samples(calib), quant_format=getattr(QuantFormat, fmt), per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, reduce_range=fmt == "QOperator")
    if fmt == "QDQ":
        want_ops = {"QuantizeLinear", "DequantizeLinear", "Conv" if make is convnet else "MatMul"}
    else:
        want_ops = {"QLinearConv"} if make is convnet else {"QLinearMatMul"}
        assert not op_types(q) - {"QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul", "Relu"}
    # ferry's int8 MatMul steps saturate where ORT's do (the same pairs); its int8 convolutions
    # without VNNI run only where nothing can saturate (else fp32: the definition), ORT's do saturate.
    check(ferry_bin, q, feeds, tmp_path, want_ops, cpu_vs_ort_int8=fmt == "QDQ" and (make is mlp or host_has_vnni()))
    if fmt == "QOperator":  # the ONNX reference's requantization is ferry's, exactly
        m = onnx.load(q)
        m.opset_import[0].version = 21  # onnx.reference implements DequantizeLinear from 19 on; same semantics here
        want = ReferenceEvaluator(m).run(None, feeds)[0]
        got = run_ferry(ferry_bin, q, feeds, tmp_path, "reference")[m.graph.output[0].name]
        np.testing.assert_array_equal(got, want)


def test_dequantize_scale_of_one_value_and_a_scalar_zero_point(ferry_bin, tmp_path):
    """W (i8 [4, 3]) dequantized with a scale of shape [1] and a zero point of shape [] (the
    form smart_turn_v3 has: the shapes differ, the values are per tensor), then MatMul'd."""
    rng = np.random.default_rng(3)
    wq = rng.integers(-100, 100, (4, 3)).astype(np.int8)
    nodes = [helper.make_node("DequantizeLinear", ["wq", "scale", "zp"], ["w"]),
             helper.make_node("MatMul", ["x", "w"], ["y"])]
    inits = [numpy_helper.from_array(wq, "wq"), numpy_helper.from_array(np.array([0.02], np.float32), "scale"),
             numpy_helper.from_array(np.array(3, np.int8), "zp")]
    g = helper.make_graph(nodes, "dq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], inits)
    path = tmp_path / "dq.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    check(ferry_bin, path, {"x": rng.normal(0, 1, (2, 4)).astype(np.float32)}, tmp_path, {"DequantizeLinear"})


def test_bad_zero_point_dtype_is_a_clear_error(ferry_bin, tmp_path):
    """A QLinearMatMul whose a_zero_point is i8 while a is u8: exit 2, the node and the problem named."""
    nodes = [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"], name="qmm")]
    inits = [numpy_helper.from_array(np.array(0.1, np.float32), "sa"), numpy_helper.from_array(np.array(1, np.int8), "za"),
             numpy_helper.from_array(np.ones((3, 2), np.int8), "b"), numpy_helper.from_array(np.array(0.1, np.float32), "sb"),
             numpy_helper.from_array(np.array(0, np.int8), "zb"), numpy_helper.from_array(np.array(0.2, np.float32), "sy"),
             numpy_helper.from_array(np.array(0, np.uint8), "zy")]
    g = helper.make_graph(nodes, "bad", [helper.make_tensor_value_info("a", TensorProto.UINT8, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 2])], inits)
    path = tmp_path / "bad.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    proc = subprocess.run([str(ferry_bin), "run", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "qmm" in proc.stderr and "a_zero_point must have a's dtype" in proc.stderr, proc.stderr


def test_missing_scale_is_a_clear_error(ferry_bin, tmp_path):
    """A QLinearConv with its w_scale omitted (an empty input name): exit 2, naming the node and the input."""
    nodes = [helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "", "zw", "sy", "zy"], ["y"], name="qconv")]
    inits = [numpy_helper.from_array(np.array(0.1, np.float32), "sx"), numpy_helper.from_array(np.array(0, np.uint8), "zx"),
             numpy_helper.from_array(np.ones((2, 1, 1, 1), np.int8), "w"), numpy_helper.from_array(np.array(0, np.int8), "zw"),
             numpy_helper.from_array(np.array(0.2, np.float32), "sy"), numpy_helper.from_array(np.array(0, np.uint8), "zy")]
    g = helper.make_graph(nodes, "bad", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 1, 2, 2])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    path = tmp_path / "bad.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    proc = subprocess.run([str(ferry_bin), "run", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "node 'qconv' (QLinearConv): required input 4 is omitted" in proc.stderr, proc.stderr
