"""bf16 on hardware (docs/precision.md, "bf16 on the CPU"): on a host whose CPU target accelerates
bf16 (AVX512_BF16 or AMX with a jit / brgemm oneDNN bf16 implementation), Conv / MatMul nodes
at bf16 run as oneDNN bf16 steps (bf16 inputs and weights, fp32 accumulation and output).

Two models, a small CNN (3x3 + Relu, depthwise, 1x1 + residual, pooled Gemm head) and a
transformer-ish block (Q / K / V projections, attention MatMuls of two activations, output
projection, residual, LayerNorm, FFN with Gelu), under `compile(precision="bf16")` and
`ferry run --precision bf16`, against ONNX Runtime fp32: within bf16 error (2e-2 of max|y|)
and not equal to it (the rounding happened). The profile names the bf16 steps, the report
says `accelerated` for the matrix products with constant weights and `emulated` for the rest.
Capped with ONEDNN_MAX_CPU_ISA=AVX512_CORE the target says emulated with its why, no bf16
step runs, and the outputs still hold the tolerance. Hosts without the hardware path check
that everything says emulated (truthfully, per host).
"""

from __future__ import annotations

import json
import os

import pytest

import numpy as np  # noqa: E402  (missing packages fail, never skip: CI=true must not pass without them)
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from bf16_util import ferry, ort_fp32, rel_err  # noqa: E402

BF16_TOL = 2e-2  # of max|y|: 8-bit mantissas on the inputs and weights, fp32 sums
PRODUCTS = {"Conv", "FusedConv", "MatMul", "FusedMatMul"}


def _save(path, nodes, inputs, inits):
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def cnn_model(path):
    rng = np.random.default_rng(0)
    w = lambda *s: (rng.standard_normal(s) / np.sqrt(np.prod(s[1:]))).astype(np.float32)  # noqa: E731
    inits = {"w1": w(32, 8, 3, 3), "b1": rng.normal(0, 0.1, 32).astype(np.float32), "wd": w(32, 1, 3, 3),
             "w2": w(32, 32, 1, 1), "wh": w(10, 32), "bh": np.zeros(10, np.float32)}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1] * 4),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "wd"], ["c2"], name="dw", pads=[1] * 4, group=32),
        helper.make_node("Conv", ["c2", "w2"], ["c3"], name="pw"),
        helper.make_node("Add", ["c3", "r1"], ["s"], name="residual"),
        helper.make_node("GlobalAveragePool", ["s"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "wh", "bh"], ["y"], name="head", transB=1),
    ]
    _save(path, nodes, [("x", [2, 8, 16, 16])], inits)
    return {"x": rng.standard_normal((2, 8, 16, 16)).astype(np.float32)}


def transformer_model(path, t=16, d=64, f=128):
    rng = np.random.default_rng(1)
    w = lambda *s: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)  # noqa: E731
    inits = {"wq": w(d, d), "wk": w(d, d), "wv": w(d, d), "wo": w(d, d), "bq": np.full(d, 0.1, np.float32),
             "w1": w(d, f), "b1": np.zeros(f, np.float32), "w2": w(f, d), "scale": np.array(d ** -0.5, np.float32),
             "g": np.ones(d, np.float32), "z": np.zeros(d, np.float32), "perm": np.array([0, 2, 1], np.int64)}
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "wq"], ["q0"], name="q_proj"), n("Add", ["q0", "bq"], ["q"], name="q_bias"),
        n("MatMul", ["x", "wk"], ["k"], name="k_proj"), n("MatMul", ["x", "wv"], ["v"], name="v_proj"),
        n("Transpose", ["k"], ["kt"], name="kt", perm=[0, 2, 1]),
        n("MatMul", ["q", "kt"], ["s0"], name="scores"), n("Mul", ["s0", "scale"], ["s"], name="scaled"),
        n("Softmax", ["s"], ["a"], name="softmax", axis=-1), n("MatMul", ["a", "v"], ["o"], name="context"),
        n("MatMul", ["o", "wo"], ["p"], name="o_proj"), n("Add", ["p", "x"], ["h"], name="residual"),
        n("LayerNormalization", ["h", "g", "z"], ["ln"], name="ln", axis=-1),
        n("MatMul", ["ln", "w1"], ["f0"], name="ffn1"), n("Add", ["f0", "b1"], ["f1"], name="ffn1_bias"),
        n("Relu", ["f1"], ["f2"], name="ffn_act"), n("MatMul", ["f2", "w2"], ["y"], name="ffn2"),
    ]
    inits.pop("perm")
    _save(path, nodes, [("x", [1, t, d])], inits)
    return {"x": rng.standard_normal((1, t, d)).astype(np.float32)}


def patch_model(path, c=32, d=64, t=16):
    """ViT's stem: a stride-4 patch Conv (channels-last output), Reshape + Transpose to tokens, a
    position Add, then LayerNorm -> projection + bias -> residual onto the tokens. The residual
    reaches the projection in the conv's layout, not plain (the bf16 matmul took it once it
    read a plain copy; it fell back to fp32 before)."""
    rng = np.random.default_rng(2)
    inits = {"wc": (rng.standard_normal((d, c, 4, 4)) / np.sqrt(c * 16)).astype(np.float32),
             "bc": rng.normal(0, 0.1, d).astype(np.float32), "shape": np.array([1, d, t], np.int64),
             "pos": rng.normal(0, 0.5, (1, t, d)).astype(np.float32), "g": np.ones(d, np.float32),
             "z": np.zeros(d, np.float32), "wp": (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32),
             "bp": rng.normal(0, 0.1, d).astype(np.float32)}
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "wc", "bc"], ["pc"], name="patch", kernel_shape=[4, 4], strides=[4, 4]),
        n("Reshape", ["pc", "shape"], ["flat"], name="flatten"),
        n("Transpose", ["flat"], ["tok"], name="tokens", perm=[0, 2, 1]),
        n("Add", ["tok", "pos"], ["h"], name="pos_add"),
        n("LayerNormalization", ["h", "g", "z"], ["ln"], name="ln", axis=-1),
        n("MatMul", ["ln", "wp"], ["p0"], name="proj"), n("Add", ["p0", "bp"], ["p1"], name="proj_bias"),
        n("Add", ["p1", "h"], ["y"], name="residual"),
    ]
    _save(path, nodes, [("x", [1, c, 16, 16])], inits)
    return {"x": rng.standard_normal((1, c, 16, 16)).astype(np.float32)}


MODELS = {"cnn": cnn_model, "transformer": transformer_model, "patch": patch_model}


def bf16_column(ferry_cli, env=None):
    checks = json.loads(ferry(ferry_cli, "env", "--json", "--no-python", env=env).stdout)["checks"]
    return next(c for c in checks if c["section"] == "isa" and c["name"] == "bf16")


def host_accelerates(ferry_cli):
    return "--precision bf16 accelerated" in bf16_column(ferry_cli)["detail"]


def bf16_product_steps(kernels):
    return [k for _, k in kernels if "_bf16" in k and k.startswith(("onednn_conv", "onednn_matmul"))]


def profiled_kernels(ferry_cli, path, tmp_path, env=None):
    trace = tmp_path / "trace.json"
    ferry(ferry_cli, "bench", path, "--precision", "bf16", "--warmup", "0", "--iters", "1", "--profile", trace, env=env)
    return [(e["name"], e["args"]["kernel"]) for e in json.loads(trace.read_text())["traceEvents"] if "args" in e]


@pytest.mark.parametrize("name", list(MODELS))
def test_bf16_matches_onnxruntime_fp32(ferry_api, ferry_cli, ort, tmp_path, name, bf16_attention_cpu):
    path = tmp_path / f"{name}.onnx"
    feed = MODELS[name](path)
    want = ort_fp32(ort, path, feed)
    session = ferry_api.load(str(path)).compile(precision="bf16")
    got = session.run(feed)["y"]
    err = rel_err(got, want)
    assert 0 < err <= BF16_TOL, f"compile(precision='bf16') vs ORT fp32: {err:.3g} of max|y|"
    np.save(tmp_path / "x.npy", feed["x"])
    out = tmp_path / "out"
    r = ferry(ferry_cli, "run", path, "--precision", "bf16", "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", out)
    cli = np.load(out / "y.npy")
    assert 0 < rel_err(cli, want) <= BF16_TOL
    nodes = session.precision["nodes"]
    kernels = profiled_kernels(ferry_cli, path, tmp_path)
    if not host_accelerates(ferry_cli):
        assert all(n["exec"] == "emulated" for n in nodes if n["precision"] == "bf16"), nodes
        assert "bf16 (accelerated)" not in r.stderr, r.stderr
        assert not bf16_product_steps(kernels), kernels
        return
    assert "bf16 (accelerated)" in r.stderr, r.stderr
    for n in nodes:
        # MatMuls of two activations (attention's) have no constant weights: emulated. The fused
        # Attention is accelerated where its bf16 kernel is measured faster (test_bf16_attention.py).
        constant_weights = n["node"] not in ("scores", "context")
        if n["op"] in PRODUCTS and constant_weights:
            assert n["exec"] == "accelerated" and "bf16 accelerated (oneDNN bf16 steps" in n["reason"], n
        elif n["op"] == "Attention":
            assert n["exec"] == ("accelerated" if bf16_attention_cpu else "emulated"), n
        elif n["precision"] == "bf16":
            assert n["exec"] == "emulated", n
    bf16_steps = bf16_product_steps(kernels)
    accelerated = [n for n in nodes if n["exec"] == "accelerated" and n["op"] in PRODUCTS]
    assert len(bf16_steps) == len(accelerated), (bf16_steps, accelerated)
    assert not any("/x_to_" in node for node, _ in kernels), kernels


@pytest.mark.parametrize("name", list(MODELS))
def test_auto_picks_bf16_only_where_it_is_accelerated(ferry_api, ferry_cli, ort, tmp_path, name, bf16_attention_cpu):
    path = tmp_path / f"{name}.onnx"
    feed = MODELS[name](path)
    session = ferry_api.load(str(path)).compile(precision="auto")
    nodes = session.precision["nodes"]
    if not host_accelerates(ferry_cli):
        assert all(n["precision"] == "fp32" for n in nodes), nodes
        return
    for n in nodes:
        if n["exec"] == "accelerated":
            ops = PRODUCTS | {"Attention"} if bf16_attention_cpu else PRODUCTS
            assert n["op"] in ops and n["precision"] == "bf16" and n["reason"].startswith("auto: bf16 accelerated")
        else:
            assert n["precision"] == "fp32" and "auto keeps fp32" in n["reason"], n
    assert any(n["exec"] == "accelerated" for n in nodes)
    assert rel_err(session.run(feed)["y"], ort_fp32(ort, path, feed)) <= BF16_TOL


def test_capped_onednn_isa_says_emulated_and_still_runs(ferry_cli, ort, tmp_path):
    if not host_accelerates(ferry_cli):
        pytest.skip("this host's CPU target does not accelerate bf16: nothing to cap")
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX512_CORE")
    col = bf16_column(ferry_cli, env)
    assert "--precision bf16 emulated" in col["detail"] and "ONEDNN_MAX_CPU_ISA" in col["detail"], col
    path = tmp_path / "cnn.onnx"
    feed = cnn_model(path)
    np.save(tmp_path / "x.npy", feed["x"])
    out = tmp_path / "out"
    r = ferry(ferry_cli, "run", path, "--precision", "bf16", "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", out,
              env=env)
    assert "bf16 (emulated)" in r.stderr and "accelerated" not in r.stderr, r.stderr
    assert 0 < rel_err(np.load(out / "y.npy"), ort_fp32(ort, path, feed)) <= BF16_TOL
    kernels = profiled_kernels(ferry_cli, path, tmp_path, env)
    assert not bf16_product_steps(kernels), f"a bf16 step ran capped: {kernels}"
    assert any(k.startswith("onednn_conv2d_f32") for _, k in kernels), kernels
