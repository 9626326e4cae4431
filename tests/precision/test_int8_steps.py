"""The CPU backend's int8 steps (docs/precision.md, "int8"; src/backends/cpu/onednn/onednn_int8.h)
against the fake quantization the reference backend runs for the same decisions.

`compile(precision="int8")` calibrates both sessions on the same 8 seeded samples, so both
see the same u8 input grid and the same s8 weight grid. The CPU runs Conv / MatMul / Gemm
(and their fused forms) as one oneDNN u8 x s8 primitive: exact s32 sums of
(x_q - z_x) * w_q, scaled once by s_x * s_w[c]. The reference sums the dequantized values
in fp32, so the two differ by fp32 rounding of a K-term sum (K <= 144 here): the bound is
1e-5 of the output's largest magnitude (measured ~1e-7), far below one int8 step of the
output (~1e-2 of it: int8 against fp32 is listed next to it).

Every model has one int8 node, so its input is the graph input and both quantize the same
values. `ferry bench --profile` must name oneDNN's u8s8 implementation for that node; a node
oneDNN cannot take (a MatMul of two activations) runs in fp32 on the dequantized input
instead and still matches. Under ONEDNN_MAX_CPU_ISA=AVX2 (no VNNI: 7-bit weights) the same
agreement holds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import numpy as np  # noqa: E402  (missing packages fail, never skip: CI=true must not pass without them)
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

REL_TOL = 1e-5


def save(path, nodes, x_shape, inits, extra_inputs=()):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))]
    inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in extra_inputs]
    g = helper.make_graph(nodes, "m", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def conv_model(path, cin, cout, k, stride, group, bias, epilogue, hw=10, seed=0):
    rng = np.random.default_rng(seed)
    inits = {"w": rng.normal(0, 0.3, (cout, cin // group, k, k)).astype(np.float32)}
    ins = ["x", "w"]
    if bias:
        inits["b"] = rng.normal(0, 1, cout).astype(np.float32)
        ins.append("b")
    out = "y" if epilogue == "none" else "c"
    nodes = [helper.make_node("Conv", ins, [out], name="conv", kernel_shape=[k, k], strides=[stride, stride],
                              pads=[k // 2] * 4, group=group)]
    if epilogue == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["y"], name="relu"))
    if epilogue == "residual":  # a computed residual: the sum post-op
        nodes.append(helper.make_node("Add", ["c", "x"], ["y"], name="add"))
    save(path, nodes, (2, cin, hw, hw), inits)
    return {"x": rng.normal(0, 1, (2, cin, hw, hw)).astype(np.float32)}


def matmul_model(path, a_shape, b_shape, bias, seed=0):
    rng = np.random.default_rng(seed)
    inits = {"b": rng.normal(0, 0.3, b_shape).astype(np.float32)}
    nodes = [helper.make_node("MatMul", ["x", "b"], ["m" if bias else "y"], name="mm")]
    if bias:
        inits["c"] = rng.normal(0, 1, b_shape[-1]).astype(np.float32)
        nodes.append(helper.make_node("Add", ["m", "c"], ["y"], name="add"))
    save(path, nodes, a_shape, inits)
    return {"x": rng.normal(0, 1, a_shape).astype(np.float32)}


def gemm_model(path, m, k, n, seed=0):
    rng = np.random.default_rng(seed)
    inits = {"w": rng.normal(0, 0.3, (n, k)).astype(np.float32), "c": rng.normal(0, 1, n).astype(np.float32)}
    save(path, [helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm", transB=1)], (m, k), inits)
    return {"x": rng.normal(0, 1, (m, k)).astype(np.float32)}


CONVS = {  # cin, cout, k, stride, group, bias, epilogue
    "1x1": (8, 16, 1, 1, 1, False, "none"),
    "3x3_bias": (8, 16, 3, 1, 1, True, "none"),
    "3x3_stride2_relu": (8, 16, 3, 2, 1, True, "relu"),
    "grouped": (8, 16, 3, 1, 2, True, "none"),
    "depthwise_relu": (16, 16, 3, 1, 16, True, "relu"),
    "rgb_stem": (3, 32, 3, 2, 1, False, "relu"),
    "5x5": (4, 8, 5, 1, 1, True, "none"),
    "residual": (16, 16, 3, 1, 1, True, "residual"),
    # no padding: the input's zero point (~128 here) goes into the bias (onednn_int8.cc,
    # zero_point_folded_bias); K = 512 stresses that f32 fold
    "1x1_wide_bias": (512, 64, 1, 1, 1, True, "none", 6),
    "1x1_stride2_relu": (32, 64, 1, 2, 1, True, "relu"),
}
MATMULS = {  # A, B, bias
    "2d": ((8, 64), (64, 32), False),
    "2d_bias": ((8, 64), (64, 32), True),
    "batched_bias": ((2, 5, 64), (64, 48), True),
    "batched_b3": ((2, 5, 64), (2, 64, 48), False),
    "k_odd": ((7, 33), (33, 17), True),
}


def build(kind, name, path):
    if kind == "conv":
        return conv_model(path, *CONVS[name])
    if kind == "matmul":
        return matmul_model(path, *MATMULS[name])
    return gemm_model(path, *name)


def compare(ferry_api, path, feed):
    model = ferry_api.load(str(path))
    fake = model.compile(backend="reference", precision="int8").run(feed)["y"]
    real = model.compile(backend="cpu", precision="int8").run(feed)["y"]
    fp32 = model.compile(backend="reference", precision="fp32").run(feed)["y"]
    scale = float(np.abs(fake).max())
    return float(np.abs(real - fake).max()) / scale, float(np.abs(fp32 - fake).max()) / scale


def profiled_kernels(ferry_cli, path, tmp_path, env=None):
    trace = tmp_path / "trace.json"
    r = subprocess.run([str(ferry_cli), "bench", str(path), "--precision", "int8", "--warmup", "0", "--iters", "1",
                        "--profile", str(trace)], capture_output=True, text=True, timeout=300, env=env, check=False)
    assert r.returncode == 0, r.stderr
    return [e["args"]["kernel"] for e in json.loads(trace.read_text())["traceEvents"]]


CASES = [("conv", n) for n in CONVS] + [("matmul", n) for n in MATMULS] + [("gemm", (6, 40, 24)), ("gemm", (1, 128, 10))]


@pytest.mark.parametrize("kind,name", CASES, ids=[f"{k}-{n}" for k, n in CASES])
def test_int8_step_matches_fake_quantization(ferry_api, ferry_cli, tmp_path, kind, name):
    path = tmp_path / "m.onnx"
    feed = build(kind, name, path)
    err, int8_vs_fp32 = compare(ferry_api, path, feed)
    assert err <= REL_TOL, f"int8 step vs fake quantization: {err:.3g} of max|y|"
    assert int8_vs_fp32 > 100 * REL_TOL, "the int8 grid must show against fp32 (else the test proves nothing)"
    kernels = profiled_kernels(ferry_cli, path, tmp_path)
    assert any("_u8s8" in k for k in kernels), kernels
    assert not any(k.startswith("dequantize") or "ref_DequantizeLinear" in k for k in kernels), kernels
    from onednn_isa import cpu_flags  # tests/ (AVX2_SCRIPT imports this module without it)

    amx = "amx_int8" in cpu_flags() and not os.environ.get("ONEDNN_MAX_CPU_ISA", "").strip()
    if kind == "conv" and name.startswith("1x1") and amx:
        # the zero point folded into the bias: oneDNN 2.6 picks brgconv_1x1, not its jit_1x1 zero-point kernel
        assert any("brgconv_1x1:avx512_core_amx_int8" in k for k in kernels), kernels


def test_matmul_of_two_activations_stays_fp32_on_the_dequantized_input(ferry_api, ferry_cli, tmp_path):
    path = tmp_path / "xy.onnx"
    save(path, [helper.make_node("MatMul", ["x", "z"], ["y"], name="mm")], (6, 16), {}, [("z", (16, 8))])
    rng = np.random.default_rng(3)
    feed = {"x": rng.normal(0, 1, (6, 16)).astype(np.float32), "z": rng.normal(0, 1, (16, 8)).astype(np.float32)}
    err, _ = compare(ferry_api, path, feed)
    assert err <= REL_TOL
    kernels = profiled_kernels(ferry_cli, path, tmp_path)
    assert not any("u8s8" in k for k in kernels) and any("onednn_matmul_f32" in k for k in kernels), kernels


def test_a_blocked_residual_keeps_the_int8_matmul(ferry_api, ferry_cli, tmp_path):
    """ViT's stem (test_bf16_steps.patch_model): the projection's residual reaches it channels-last
    from the patch conv; the int8 matmul reads a plain copy of it (as the fp32 and bf16 ones do)
    instead of declining, when the node ran as an fp32 matmul on the dequantized input. Between the
    two int8 nodes the LayerNorm's u8 output may land one step off the fake quantization's on a few
    elements (its own summation order), so the bound is a fraction of one int8 step of y (measured
    ~2e-7: none off here, AMX Xeon, also under ONEDNN_MAX_CPU_ISA=AVX2 / AVX512_CORE)."""
    from test_bf16_steps import patch_model

    path = tmp_path / "patch.onnx"
    err, int8_vs_fp32 = compare(ferry_api, path, patch_model(path))
    assert err <= 2e-3, f"int8 steps vs fake quantization: {err:.3g} of max|y|"
    assert int8_vs_fp32 > 100 * REL_TOL
    kernels = profiled_kernels(ferry_cli, path, tmp_path)
    assert not any(k.startswith("onednn_matmul_f32") for k in kernels), kernels
    assert sum(k.startswith("onednn_matmul_u8s8") and "+sum" in k for k in kernels) == 1, kernels


AVX2_SCRIPT = """
import sys, json
sys.path.insert(0, {tests!r})
import test_int8_steps as t
import ferry
from pathlib import Path
out = {{}}
for kind, name in [("conv", "3x3_stride2_relu"), ("conv", "depthwise_relu"), ("matmul", "batched_bias")]:
    p = Path({tmp!r}) / f"{{kind}}_{{name}}.onnx"
    out[f"{{kind}}-{{name}}"] = t.compare(ferry, p, t.build(kind, name, p))
print(json.dumps(out))
"""


def test_int8_steps_without_vnni_use_7bit_weights(ferry_api, ferry_cli, tmp_path):
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2")
    script = AVX2_SCRIPT.format(tests=str(Path(__file__).parent), tmp=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env, check=False)
    assert r.returncode == 0, r.stderr
    for case, (err, _) in json.loads(r.stdout.strip().splitlines()[-1]).items():
        assert err <= REL_TOL, f"{case}: {err:.3g}"
    kernels = profiled_kernels(ferry_cli, tmp_path / "conv_3x3_stride2_relu.onnx", tmp_path, env)
    int8 = [k for k in kernels if "_u8s8" in k]
    assert int8 and not any("vnni" in k for k in int8), kernels
