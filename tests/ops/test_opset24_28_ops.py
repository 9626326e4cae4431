"""The ops of opsets 24-28 that conformance brought in, against onnx.reference,
on the attribute and input combinations the ONNX node tests leave out:

- Attention-25's sliding window (left/right, with and without is_causal),
  composed with nonpad_kv_seqlen (opset 24), GQA, a float mask, softcap and
  every qk_matmul_output mode, in the 3-D and 4-D forms;
- LinearAttention's four update rules with GQA, per-head and per-key decay,
  per-head and shared beta, a past state and an explicit scale, f32 and f64;
- CausalConvWithState with bias, past state and silu together, and K=1;
- SwiGLU with alpha (f64), TensorScatter along a middle axis and wrapping
  circularly, the three windows (periodic and symmetric, f64 output),
  MeanVarianceNormalization over other axes, SpaceToDepth-28 CRD.

One opset-28 model per family (tests/ops/test_vision_signal_ops.py's Model),
run with `ferry run` on the reference backend and on the cpu backend (whose
fused attention kernel must leave these forms to the reference kernel); every
output must match onnx.reference within 1e-4 * max(1, |expected|). onnxruntime
1.x does not implement these opsets, so the reference is the only oracle.
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("ferry_vision_signal_ops", HERE / "test_vision_signal_ops.py")
vso = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vso)


def rand(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def attention():
    rng = np.random.default_rng(11)
    m = vso.Model(28)
    q3, k3, v3 = (m.input(n, rand(rng, 2, s, h * 4)) for n, s, h in [("q3", 3, 4), ("k3", 7, 2), ("v3", 7, 2)])
    q4, k4, v4 = (m.input(n, rand(rng, 2, h, s, 4)) for n, h, s in [("q4", 2, 5), ("k4", 2, 6), ("v4", 2, 6)])
    nonpad = m.input("nonpad", np.array([5, 7], np.int64))
    nonpad4 = m.input("nonpad4", np.array([6, 3], np.int64))
    mask = m.input("mask", rand(rng, 3, 7))
    heads = dict(q_num_heads=4, kv_num_heads=2)
    windows = [(-1, -1), (2, -1), (1, 0), (0, 2), (3, 1)]
    for left, right in windows:
        for causal in (0, 1):
            w = dict(left_window_size=left, right_window_size=right, is_causal=causal)
            tag = f"l{left}_r{right}_c{causal}".replace("-", "m")
            m.node("Attention", [q3, k3, v3, "", "", "", nonpad], f"att3_nonpad_{tag}", **heads, **w)
            m.node("Attention", [q3, k3, v3, mask], f"att3_mask_{tag}", **heads, **w)
            m.node("Attention", [q4, k4, v4, "", "", "", nonpad4], f"att4_nonpad_{tag}", **w)
    for mode in range(4):
        # present_key/value are named (the Model helper makes every output a graph output), which
        # rules out nonpad_kv_seqlen here (the spec forbids the two together).
        m.node("Attention", [q3, k3, v3, mask], [f"att3_mode{mode}_{o}" for o in ("y", "present_k", "present_v", "qk")],
               **heads, left_window_size=2, right_window_size=1, qk_matmul_output_mode=mode,
               softcap=2.0 if mode else 0.0)  # onnx.reference's mode 0 returns the softcapped scores, not the raw ones
    return m


def linear_attention(dtype):
    rng = np.random.default_rng(12)
    m = vso.Model(28)
    b, t, hq, hkv, dk, dv = 2, 5, 4, 2, 3, 2
    q = m.input("q", rand(rng, b, t, hq * dk, dtype=dtype))
    k = m.input("k", (rand(rng, b, t, hkv * dk, dtype=dtype) / 2))
    v = m.input("v", rand(rng, b, t, hkv * dv, dtype=dtype))
    past = m.input("past", rand(rng, b, hkv, dk, dv, dtype=dtype))
    g_head = m.input("g_head", -np.abs(rand(rng, b, t, hkv, dtype=dtype)))
    g_key = m.input("g_key", -np.abs(rand(rng, b, t, hkv * dk, dtype=dtype)))
    beta_head = m.input("beta_head", rng.uniform(0, 1, (b, t, hkv)).astype(dtype))
    beta_one = m.input("beta_one", rng.uniform(0, 1, (b, t, 1)).astype(dtype))
    heads = dict(q_num_heads=hq, kv_num_heads=hkv)
    forms = {
        "linear": [("", "")],
        "gated": [(g_head, ""), (g_key, "")],
        "delta": [("", beta_head), ("", beta_one)],
        "gated_delta": [(g_head, beta_one), (g_key, beta_head)],
    }
    for rule, inputs in forms.items():
        for i, (g, beta) in enumerate(inputs):
            for with_past in (0, 1):
                name = f"la_{rule}{i}_p{with_past}"
                m.node("LinearAttention", [q, k, v, past if with_past else "", g, beta], [name, name + "_state"],
                       update_rule=rule, **heads, **({"scale": 0.7} if with_past else {}))
    return m


def small_ops():
    rng = np.random.default_rng(13)
    m = vso.Model(28)
    x = m.input("x", rand(rng, 2, 3, 6))
    w4, w1 = m.input("w4", rand(rng, 3, 1, 4)), m.input("w1", rand(rng, 3, 1, 1))
    bias, state = m.input("bias", rand(rng, 3)), m.input("state", rand(rng, 2, 3, 3))
    m.node("CausalConvWithState", [x, w4, bias, state], ["ccws_all", "ccws_all_state"], activation="silu")
    m.node("CausalConvWithState", [x, w4, "", state], ["ccws_swish", "ccws_swish_state"], activation="swish")
    m.node("CausalConvWithState", [x, w1, bias], ["ccws_k1", "ccws_k1_state"])
    a, b = m.input("a", rand(rng, 3, 5, dtype=np.float64)), m.input("b", rand(rng, 3, 5, dtype=np.float64))
    m.node("SwiGLU", [a, b], "swiglu_alpha", alpha=1.7)
    cache, upd = m.input("cache", rand(rng, 2, 5, 3)), m.input("upd", rand(rng, 2, 3, 3))
    at = m.input("at", np.array([1, 4], np.int64))
    m.node("TensorScatter", [cache, upd, at], "scatter_circular", axis=1, mode="circular")
    m.node("TensorScatter", [cache, upd, m.input("at0", np.array([2, 0], np.int64))], "scatter_linear", axis=-2)
    cache4, upd4 = m.input("cache4", rand(rng, 2, 2, 3, 6)), m.input("upd4", rand(rng, 2, 2, 3, 2))
    m.node("TensorScatter", [cache4, upd4, at], "scatter_last_axis", axis=3, mode="circular")
    size = m.input("size", np.array(7, np.int64))
    for op in ("HannWindow", "HammingWindow", "BlackmanWindow"):
        for periodic in (0, 1):
            m.node(op, [size], f"{op}_p{periodic}", periodic=periodic, output_datatype=11)
    img = m.input("img", rand(rng, 2, 3, 6, 9))
    m.node("MeanVarianceNormalization", [img], "mvn_axes_1_3", axes=[1, 3])
    m.node("MeanVarianceNormalization", [img], "mvn_default")
    m.node("SpaceToDepth", [img], "s2d_crd", blocksize=3, mode="CRD")
    m.node("SpaceToDepth", [img], "s2d_dcr", blocksize=3)
    return m


FAMILIES = {
    "attention": attention,
    "linear_attention_f32": lambda: linear_attention(np.float32),
    "linear_attention_f64": lambda: linear_attention(np.float64),
    "small_ops": small_ops,
}


def run_ferry(binary, m, tmp_path, backend):
    import onnx

    path = tmp_path / "model.onnx"
    onnx.save(m.proto(), path)
    out = tmp_path / f"out_{backend}"
    args = [str(binary), "run", str(path), "--backend", backend, "--output-dir", str(out)]
    for name, value in m.feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"ferry run --backend {backend} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return {name: np.load(out / f"{name}.npy") for name in m.outputs}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_matches_reference(family, tmp_path, ferry_cli, onnx_mod):
    m = FAMILIES[family]()
    want = m.reference_outputs(vso.REFERENCE_FAILS)
    assert set(want) == set(m.outputs)
    bad = []
    for backend in ("reference", "cpu"):
        got = run_ferry(ferry_cli, m, tmp_path, backend)
        bad += [vso.compare(f"{backend}:{name}", got[name], want[name], "onnx.reference") for name in m.outputs]
    bad = [b for b in bad if b]
    assert not bad, f"{len(bad)} mismatches in {2 * len(m.outputs)} outputs:\n" + "\n".join(bad)


REFUSED_ATTENTION = {  # (opset, inputs, outputs, attributes) -> the importer's message
    "nonpad_at_opset_23": (23, ["q", "k", "v", "", "", "", "n"], ["Y"], {},
                           "input 7 (nonpad_kv_seqlen) is not defined for Attention at opset 23"),
    "window_at_opset_24": (24, ["q", "k", "v"], ["Y"], {"left_window_size": 1},
                           "attribute 'left_window_size' is not defined for Attention at opset 24"),
    "heads_with_4d_at_opset_25": (25, ["q", "k", "v"], ["Y"], {"q_num_heads": 2, "kv_num_heads": 2},
                                  "takes q_num_heads and kv_num_heads only with 3-D inputs"),
    "nonpad_with_present": (24, ["q", "k", "v", "", "", "", "n"], ["Y", "present_key"], {},
                            "nonpad_kv_seqlen (an external cache) cannot be used with the present_key"),
}


@pytest.mark.parametrize("case", sorted(REFUSED_ATTENTION))
def test_attention_forms_outside_the_opset_are_refused(case, tmp_path, ferry_cli, onnx_mod):
    from onnx import TensorProto, helper

    opset, inputs, outputs, attrs, message = REFUSED_ATTENTION[case]
    ins = [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 2, 3, 4]) for x in "qkv"]
    ins.append(helper.make_tensor_value_info("n", TensorProto.INT64, [1]))
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
    node = helper.make_node("Attention", inputs, outputs, **attrs)
    model = helper.make_model(helper.make_graph([node], "g", ins, outs), opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / "model.onnx"
    onnx_mod.save(model, path)
    proc = subprocess.run([str(ferry_cli), "inspect", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and message in proc.stderr, f"rc {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
