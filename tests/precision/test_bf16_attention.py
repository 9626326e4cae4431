"""bf16 Attention on the CPU (docs/precision.md, "bf16 Attention"): the CPU target lists the fused
Attention op in bf16's accelerated ops only on CPUs where one of ferry's bf16 kernels is measured
faster than the fp32 one (bench/RESULTS.md): attention_bf16__amx (AMX tiles) where AMX-BF16 is
usable and the dispatch cap is amx, attention_bf16__avx512bf16 on AMD family 0x1A (Zen 5) with
AVX512_BF16. There `--precision bf16` rounds Q, K, V to bf16 and runs that kernel; elsewhere the
node is emulated (output rounded, fp32 kernel).

The rule is recomputed from /proc/cpuinfo (tests/conftest.py bf16_attention_kernel), so the
expectation holds (and can fail) on each host: an AVX2 Zen 3 checks the fp32 kernel and
`emulated`, a Zen 5 the avx512bf16 kernel, an AMX Xeon the AMX kernel (and, capped at avx512, the
fp32 one: vdpbf16ps is slower than fp32 there). Outputs are compared with ONNX Runtime fp32
(within bf16 error, not equal), capped runs must take the kernel the rule names for the cap, and
`auto` must pick bf16 for the Attention node exactly where it is accelerated.
"""

from __future__ import annotations

import json
import os

import pytest

import numpy as np  # noqa: E402  (missing packages fail, never skip: CI=true must not pass without them)
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from bf16_util import ferry, ort_fp32, rel_err  # noqa: E402

BF16_TOL = 2e-2  # of max|y|: Q, K, V and P in bf16, fp32 accumulation and softmax

# Which Attention kernel runs is the subject: the generic dispatch (FERRY_CPU_MAX_ISA=generic) fuses
# no Attention and runs the reference kernel, so there is nothing to choose between.
pytestmark = pytest.mark.skipif(os.environ.get("FERRY_CPU_MAX_ISA", "").lower() in ("generic", "reference"),
                                reason="FERRY_CPU_MAX_ISA=generic: no own Attention kernels to choose between")


def attention_model(path, h=4, s=96, d=64):
    """Q K^T * scale -> Softmax -> @ V on [1, h, s, d] inputs: fuse_attention makes one Attention."""
    n = helper.make_node
    nodes = [n("Transpose", ["k"], ["kt"], name="kt", perm=[0, 1, 3, 2]),
             n("MatMul", ["q", "kt"], ["s0"], name="scores"), n("Mul", ["s0", "scale"], ["s1"], name="scaled"),
             n("Softmax", ["s1"], ["a"], name="softmax", axis=-1), n("MatMul", ["a", "v"], ["y"], name="context")]
    inputs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, h, s, d]) for x in "qkv"]
    g = helper.make_graph(nodes, "attention", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(np.array(d ** -0.5, np.float32), "scale")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    rng = np.random.default_rng(3)
    return {x: rng.standard_normal((1, h, s, d)).astype(np.float32) for x in "qkv"}


def attention_kernels(ferry_cli, path, tmp_path, precision="bf16", env=None):
    trace = tmp_path / "trace.json"
    ferry(ferry_cli, "bench", path, "--precision", precision, "--warmup", "0", "--iters", "1", "--profile", trace,
          env=env)
    events = json.loads(trace.read_text())["traceEvents"]
    return [e["args"]["kernel"] for e in events if "args" in e and e["name"].startswith("Attention ")]


def attention_node(session):
    nodes = [n for n in session.precision["nodes"] if n["op"] == "Attention"]
    assert len(nodes) == 1, session.precision["nodes"]
    return nodes[0]


def test_bf16_attention_kernel_where_the_rule_says(ferry_api, ferry_cli, ort, tmp_path, bf16_attention_cpu):
    path = tmp_path / "attention.onnx"
    feed = attention_model(path)
    want = ort_fp32(ort, path, feed)
    session = ferry_api.load(str(path)).compile(precision="bf16")
    err = rel_err(session.run(feed)["y"], want)
    assert 0 < err <= BF16_TOL, f"compile(precision='bf16') vs ORT fp32: {err:.3g} of max|y|"
    node = attention_node(session)
    kernels = attention_kernels(ferry_cli, path, tmp_path)
    assert len(kernels) == 1, kernels
    if bf16_attention_cpu:
        assert node["exec"] == "accelerated", node
        assert f"Attention: ferry's {'AMX' if 'amx' in bf16_attention_cpu else 'avx512_bf16'} kernel" in node["reason"], node
        assert bf16_attention_cpu in node["reason"], node
        assert kernels == [bf16_attention_cpu], kernels
    else:
        assert node["exec"] == "emulated", node
        assert kernels[0].startswith("attention_f32__"), kernels


@pytest.mark.parametrize("cap", ["FERRY_CPU_MAX_ISA=avx2", "ONEDNN_MAX_CPU_ISA=AVX512_CORE", "FERRY_CPU_MAX_ISA=avx512"])
def test_capped_runs_take_the_kernel_of_the_cap(ferry_cli, ort, tmp_path, cap, bf16_attention_cpu,
                                                bf16_attention_kernel_under):
    if not bf16_attention_cpu:
        pytest.skip("this CPU keeps the fp32 Attention kernel under bf16 (neither usable AMX-BF16 nor AMD family 0x1A "
                    "with avx512_bf16)")
    key, value = cap.split("=")
    env = dict(os.environ, **{key: value})
    path = tmp_path / "attention.onnx"
    feed = attention_model(path)
    kernels = attention_kernels(ferry_cli, path, tmp_path, env=env)
    expected = bf16_attention_kernel_under(env)
    if expected:  # Zen 5 under FERRY_CPU_MAX_ISA=avx512 keeps its avx512bf16 kernel
        assert kernels == [expected], kernels
        return
    assert len(kernels) == 1 and kernels[0].startswith("attention_f32__"), kernels
    for name, x in feed.items():
        np.save(tmp_path / f"{name}.npy", x)
    out = tmp_path / "out"
    r = ferry(ferry_cli, "run", path, "--precision", "bf16", *[a for x in feed for a in ("--input", f"{x}={tmp_path / (x + '.npy')}")],
              "--output-dir", out, env=env)
    assert "bf16 (emulated)" in r.stderr and "accelerated" not in r.stderr, r.stderr
    assert 0 < rel_err(np.load(out / "y.npy"), ort_fp32(ort, path, feed)) <= BF16_TOL


def test_auto_picks_bf16_attention_only_where_accelerated(ferry_api, ferry_cli, ort, tmp_path, bf16_attention_cpu):
    path = tmp_path / "attention.onnx"
    feed = attention_model(path)
    session = ferry_api.load(str(path)).compile(precision="auto")
    node = attention_node(session)
    kernels = attention_kernels(ferry_cli, path, tmp_path, precision="auto")
    if bf16_attention_cpu:
        assert node["precision"] == "bf16" and node["exec"] == "accelerated", node
        assert node["reason"].startswith("auto: bf16 accelerated"), node
        assert kernels == [bf16_attention_cpu], kernels
    else:
        assert node["precision"] == "fp32" and "auto keeps fp32" in node["reason"], node
        assert kernels[0].startswith("attention_f32__"), kernels
    assert rel_err(session.run(feed)["y"], ort_fp32(ort, path, feed)) <= BF16_TOL


def bf16_round(x):
    """Nearest-even bf16, as f32 (ferry's Cast f32 -> bf16 -> f32)."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)


def test_present_outputs_copy_the_rounded_cache(ferry_api, ferry_cli, tmp_path, bf16_attention_cpu):
    """An opset-23 Attention with past_key / past_value and 8 new queries (the bf16 kernel, not the
    decode rows): present_key / present_value are [past; K] as the lowered graph rounds them."""
    b, h, past, s, d = 1, 2, 40, 8, 32
    path = tmp_path / "kv.onnx"
    names = {"q": [b, h, s, d], "k": [b, h, s, d], "v": [b, h, s, d], "pk": [b, h, past, d], "pv": [b, h, past, d]}
    node = helper.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "present_k", "present_v"],
                            name="attn", is_causal=1)
    g = helper.make_graph([node], "kv", [helper.make_tensor_value_info(n, TensorProto.FLOAT, sh) for n, sh in names.items()],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "present_k", "present_v")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)]), str(path))
    rng = np.random.default_rng(5)
    feed = {n: rng.standard_normal(sh).astype(np.float32) for n, sh in names.items()}
    out = ferry_api.load(str(path)).compile(precision="bf16").run(feed)
    np.testing.assert_array_equal(out["present_k"], bf16_round(np.concatenate([feed["pk"], feed["k"]], axis=2)))
    np.testing.assert_array_equal(out["present_v"], bf16_round(np.concatenate([feed["pv"], feed["v"]], axis=2)))
    want = ferry_api.load(str(path)).compile().run(feed)["y"]
    assert 0 < rel_err(out["y"], want) <= BF16_TOL
    kernels = attention_kernels(ferry_cli, path, tmp_path)
    assert kernels == ([bf16_attention_cpu] if bf16_attention_cpu else kernels[:1]) and len(kernels) == 1, kernels
    if not bf16_attention_cpu:
        assert kernels[0].startswith("attention_f32__"), kernels
