"""QDQ models (onnxruntime.quantization.quantize_static, fixed seeds) on the CPU backend's int8
steps (docs/precision.md, "int8 steps per ISA"; src/backends/cpu/onednn/onednn_int8.h).

Each MatMul / Gemm (a MatMul after optimization) / Conv of a QDQ model must run as one oneDNN
u8 x s8 or s8 x s8 step (`ferry bench --profile` names it) with no DequantizeLinear step for its
input left, and agree with:
* the unlowered path (the reference backend: fp32 ops on the dequantized values, the ONNX
  definition) wherever nothing can saturate: with VNNI always, without VNNI for 7-bit conv weights
  (reduce_range); there a conv with 8-bit weights and a MatMul with asymmetric s8 activations stay
  fp32 (no int8 step), also the definition;
* ONNX Runtime's int8 kernels (all graph optimizations) for full-range weights without VNNI: both
  add pairs of products in int16 (vpmaddubsw) and saturate on the same pairs.
The MLP's first MatMul is followed by a QuantizeLinear (the next MatMul quantizes its input), its
second one is not. Bounds: 1e-5 of max|y| plus one intermediate element one quantization step off
times the largest |weight| (a value within float rounding of a half step may land one step off);
measured 0 on every case here on an AMD EPYC Zen 3 (AVX2, no VNNI).
"""

from __future__ import annotations

import itertools
import json
import subprocess
from pathlib import Path

import pytest

import numpy as np  # noqa: E402
import onnx  # noqa: E402  (missing packages fail, never skip: CI=true must not pass without them)
import onnxruntime as ort  # noqa: E402
import onnxruntime.quantization as quant  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onednn_isa import onednn_has_vnni, ort_int8_saturates


class Samples(quant.CalibrationDataReader):
    def __init__(self, feeds):
        self.it = iter(feeds)

    def get_next(self):
        return next(self.it, None)




def save(path, nodes, x_shape, inits):
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def mlp(path, lead, k, n, rng):
    """x[*lead, k] -> MatMul(w1) + b1 -> MatMul(w2): a trailing Q after the first, none after the second."""
    inits = {"w1": rng.normal(0, 0.3, (k, n)), "b1": rng.normal(0, 1, n), "w2": rng.normal(0, 0.3, (n, k))}
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"], name="mm1"),
             helper.make_node("Add", ["m1", "b1"], ["h"], name="add1"),
             helper.make_node("MatMul", ["h", "w2"], ["y"], name="mm2")]
    save(path, nodes, (*lead, k), {a: v.astype(np.float32) for a, v in inits.items()})
    return (*lead, k)


def gemm(path, lead, k, n, rng):
    inits = {"w": rng.normal(0, 0.3, (n, k)), "c": rng.normal(0, 1, n)}
    save(path, [helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm", transB=1)], (lead[0], k),
         {a: v.astype(np.float32) for a, v in inits.items()})
    return (lead[0], k)


def convnet(path, lead, k, n, rng):
    """x[1, k, 9, 9] -> Conv 3x3 (n, pad 1, bias) -> Relu -> Conv 3x3 (k, stride 2)."""
    inits = {"w1": rng.normal(0, 0.3, (n, k, 3, 3)), "b1": rng.normal(0, 0.1, n), "w2": rng.normal(0, 0.2, (k, n, 3, 3))}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["h1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
             helper.make_node("Conv", ["h2", "w2"], ["y"], name="conv2", strides=[2, 2])]
    save(path, nodes, (1, k, 9, 9), {a: v.astype(np.float32) for a, v in inits.items()})
    return (1, k, 9, 9)


SHAPES = {"2d_odd": ((7,), 33, 17), "batched": ((2, 5), 64, 48), "k_odd_n_wide": ((3,), 31, 70)}
MODES = list(itertools.product([False, True], ["u8", "s8"], [False, True]))  # per_channel, activations, symmetric


def quantized(tmp_path, make, shape, per_channel, act, symmetric, reduce_range=False):
    fp32, q = tmp_path / "fp32.onnx", tmp_path / "q.onnx"
    x_shape = make(fp32, *SHAPES[shape], np.random.default_rng(0))
    calib = [{"x": np.random.default_rng(s).normal(0, 1, x_shape).astype(np.float32)} for s in range(1, 5)]
    quant.quantize_static(str(fp32), str(q), Samples(calib), quant_format=quant.QuantFormat.QDQ,
                          per_channel=per_channel, reduce_range=reduce_range,
                          activation_type=quant.QuantType.QUInt8 if act == "u8" else quant.QuantType.QInt8,
                          weight_type=quant.QuantType.QInt8, extra_options={"ActivationSymmetric": symmetric})
    return q, {"x": np.random.default_rng(11).normal(0, 1, x_shape).astype(np.float32)}


def run_ort(path, feed, optimize):
    so = ort.SessionOptions()
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, feed)[0]


def kernels(ferry_cli, path, tmp_path):
    trace = tmp_path / "trace.json"
    r = subprocess.run([str(ferry_cli), "bench", str(path), "--warmup", "0", "--iters", "1", "--profile", str(trace)],
                       capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    return [(e["name"], e["args"]["kernel"]) for e in json.loads(trace.read_text())["traceEvents"]]


def one_step_bound(path, y):
    """1e-5 max|y| + one intermediate element one quantization step off: the largest activation
    step x the largest |weight|."""
    m = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in m.graph.initializer}
    step = max((float(inits[n.input[1]].max()) for n in m.graph.node if n.op_type == "QuantizeLinear"), default=0.0)
    wmax = max(float(np.abs(inits[n.input[0]]).max() * inits[n.input[1]].max()) for n in m.graph.node
               if n.op_type == "DequantizeLinear" and inits.get(n.input[0]) is not None and inits[n.input[0]].ndim >= 2)
    return 1e-5 * float(np.abs(y).max()) + step * wmax


def check(ferry_api, ferry_cli, tmp_path, q, feed, want_ops, exact):
    int8 = [(n, k) for n, k in kernels(ferry_cli, q, tmp_path) if "_u8s8" in k or "_s8s8" in k]
    assert len(int8) == want_ops, f"{len(int8)} int8 steps, want {want_ops}: {kernels(ferry_cli, q, tmp_path)}"
    if not exact and not ort_int8_saturates():
        # oneDNN capped below VNNI (ONEDNN_MAX_CPU_ISA) on a VNNI CPU: ferry's steps pair products in
        # int16 as oneDNN's non-VNNI kernels do, ORT (uncapped) does not; nothing here computes that
        return
    model = ferry_api.load(str(q))
    got = model.compile(backend="cpu").run(feed)["y"]
    unlowered = model.compile(backend="reference").run(feed)["y"]
    want = unlowered if exact else run_ort(q, feed, optimize=True)
    err = float(np.abs(got.astype(np.float64) - want).max())
    bound = one_step_bound(q, want)
    assert err <= bound, f"cpu int8 vs {'unlowered' if exact else 'ORT int8'}: {err:.3g} (bound {bound:.3g})"
    # the unlowered path is the ONNX definition: ORT without optimizations
    assert float(np.abs(unlowered - run_ort(q, feed, optimize=False)).max()) <= bound


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("per_channel,act,symmetric", MODES, ids=[f"{'pc' if p else 'pt'}-{a}-{'sym' if s else 'asym'}"
                                                                   for p, a, s in MODES])
@pytest.mark.parametrize("make", [mlp, gemm], ids=["mlp", "gemm"])
def test_qdq_matmul_runs_int8(ferry_api, ferry_cli, tmp_path, make, shape, per_channel, act, symmetric):
    q, feed = quantized(tmp_path, make, shape, per_channel, act, symmetric)
    # without VNNI, full-range weights saturate as in ORT; s8 input with a zero point would saturate on
    # other pairs than ORT's, so it runs in fp32 there (the definition)
    zps = input_zero_points(q)
    int8 = len(zps) if onednn_has_vnni() or act == "u8" else sum(z == 0 for z in zps)
    if 0 < int8 < len(zps):  # one int8 step saturating as ORT's, one fp32 one: neither output is a reference
        assert sum("s8s8" in k for _, k in kernels(ferry_cli, q, tmp_path)) == int8
        return
    check(ferry_api, ferry_cli, tmp_path, q, feed, int8, onednn_has_vnni() or int8 == 0)


def input_zero_points(path):
    """Per MatMul / Gemm: the zero point of the DequantizeLinear making its input 0."""
    m = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    dq = {n.output[0]: n for n in m.graph.node if n.op_type == "DequantizeLinear"}
    return [int(inits[dq[n.input[0]].input[2]]) for n in m.graph.node if n.op_type in ("MatMul", "Gemm")]


@pytest.mark.parametrize("reduce_range", [True, False], ids=["7bit", "8bit"])
@pytest.mark.parametrize("per_channel", [True, False], ids=["pc", "pt"])
def test_qdq_conv(ferry_api, ferry_cli, tmp_path, per_channel, reduce_range):
    q, feed = quantized(tmp_path, convnet, "2d_odd", per_channel, "u8", False, reduce_range=reduce_range)
    # without VNNI a conv runs int8 only where nothing can saturate (|w_q| <= 64), else fp32: both exact
    int8 = onednn_has_vnni() or reduce_range
    check(ferry_api, ferry_cli, tmp_path, q, feed, 2 if int8 else 0, True)


def two_heads(path, lead, k, n, rng):
    """x -> MatMul(w1), x -> MatMul(w2), summed: quantize_static gives both one shared DequantizeLinear of x."""
    inits = {"w1": rng.normal(0, 0.3, (k, n)), "w2": rng.normal(0, 0.3, (k, n))}
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["a"], name="mm1"),
             helper.make_node("MatMul", ["x", "w2"], ["b"], name="mm2"),
             helper.make_node("Add", ["a", "b"], ["y"], name="add")]
    save(path, nodes, (*lead, k), {a: v.astype(np.float32) for a, v in inits.items()})
    return (*lead, k)


def test_shared_dequantize_goes_when_every_reader_is_int8(ferry_api, ferry_cli, tmp_path):
    q, feed = quantized(tmp_path, two_heads, "batched", True, "u8", False)
    dq_x = [n for n in onnx.load(q).graph.node if n.op_type == "DequantizeLinear" and n.input[0].startswith("x_")]
    assert len(dq_x) == 1, "quantize_static shares one DequantizeLinear of x between the two MatMuls"
    steps = kernels(ferry_cli, q, tmp_path)
    assert not any(name.endswith(dq_x[0].name) for name, _ in steps), steps
    check(ferry_api, ferry_cli, tmp_path, q, feed, 2, onednn_has_vnni())


@pytest.mark.parametrize("mode", ["auto", "bf16"])
def test_lowered_modes_keep_the_models_own_int8(ferry_api, ferry_cli, tmp_path, mode):
    """--precision auto / bf16 leave a QDQ model's quantized MatMuls fp32 (their int8 is the model's
    semantics): the int8 steps still run them, no bf16 step appears, and the report says why."""
    q, feed = quantized(tmp_path, mlp, "batched", True, "u8", False)
    trace = tmp_path / f"trace_{mode}.json"
    r = subprocess.run([str(ferry_cli), "bench", str(q), "--precision", mode, "--warmup", "0", "--iters", "1",
                        "--profile", str(trace)], capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    ks = [e["args"]["kernel"] for e in json.loads(trace.read_text())["traceEvents"]]
    assert sum("_u8s8" in k for k in ks) == 2, ks  # u8 input: int8 steps on every host
    assert not any("bf16" in k for k in ks), ks
    model = ferry_api.load(str(q))
    session = model.compile(backend="cpu", precision=mode)
    products = [n for n in session.precision["nodes"] if n["op"] in ("MatMul", "FusedMatMul", "Gemm")]
    assert len(products) == 2, session.precision["nodes"]
    for n in products:
        assert n["precision"] == "fp32", n
        assert n["reason"].startswith("fp32: the model's own int8 quantization (QDQ"), n["reason"]
    np.testing.assert_array_equal(session.run(feed)["y"], model.compile(backend="cpu").run(feed)["y"])
