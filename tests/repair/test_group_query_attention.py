"""The com.microsoft.GroupQueryAttention repair (src/repair/contrib_group_query_attention.cc)
against ONNX Runtime's CPU kernel: the first prompt (with a right-padded batch), a decode
step over a past cache (rows of different lengths, and a cache buffer longer than the
sequence), a chunk after a past (batch 1), packed QKV, rotary (half and interleaved, a
partial rotary dim), multi-query and multi-head head counts, scale and softcap. Output,
present_key and present_value must match on both backends."""

import numpy as np
import pytest

H = 32  # ORT's CPU kernel wants head sizes (and rotary halves) that are multiples of 16 (8)

CASES = {
    # name: B, S, Nq, Nkv, P (past length, None: no past), seqlens_k, attributes, packed
    "prompt": (1, 4, 4, 2, None, [3], {}, False),
    "prompt_padded_rotary": (2, 4, 4, 2, None, [3, 1], {"do_rotary": 1}, False),
    "decode_ragged_rotary": (2, 1, 4, 2, 5, [5, 3], {"do_rotary": 1}, False),
    "decode_shared_buffer": (2, 1, 4, 2, 8, [5, 3], {}, False),
    "chunk_after_past": (1, 3, 4, 2, 5, [7], {"do_rotary": 1, "rotary_interleaved": 1}, False),
    "packed_mqa": (2, 1, 4, 1, 6, [6, 2], {}, True),
    "mha_scale_softcap": (1, 3, 2, 2, 4, [6], {"scale": 0.3, "softcap": 5.0}, False),
    "partial_rotary": (2, 1, 4, 2, 5, [5, 4], {"do_rotary": 1}, False),
}


def build(onnx_mod, name, path):
    B, S, nq, nkv, P, seqlens, attrs, packed = CASES[name]
    h, T = onnx_mod.helper, onnx_mod.TensorProto
    rng = np.random.default_rng(len(name))
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    feeds, names, inputs = {}, [], []

    def add(key, value, ttype=T.FLOAT):
        feeds[key] = value
        names.append(key)
        inputs.append(h.make_tensor_value_info(key, ttype, list(value.shape)))

    if packed:
        add("query", f32(B, S, (nq + 2 * nkv) * H))
        names += ["", ""]
    else:
        add("query", f32(B, S, nq * H))
        add("key", f32(B, S, nkv * H))
        add("value", f32(B, S, nkv * H))
    if P is None:
        names += ["", ""]
    else:
        add("past_key", f32(B, nkv, P, H))
        add("past_value", f32(B, nkv, P, H))
    add("seqlens_k", np.array(seqlens, np.int32), T.INT32)
    total = np.array(max(seqlens) + 1, np.int32)
    feeds["total_sequence_length"] = total
    names.append("total_sequence_length")
    inputs.append(h.make_tensor_value_info("total_sequence_length", T.INT32, []))
    if attrs.get("do_rotary"):
        half = H // 4 if name == "partial_rotary" else H // 2
        t = np.arange(32)[:, None] * (10000.0 ** (-np.arange(half) / half))[None]
        add("cos_cache", np.cos(t).astype(np.float32))
        add("sin_cache", np.sin(t).astype(np.float32))
    node = h.make_node("GroupQueryAttention", names, ["out", "present_key", "present_value"], name="gqa",
                       domain="com.microsoft", num_heads=nq, kv_num_heads=nkv, **attrs)
    outs = [h.make_tensor_value_info(n, T.FLOAT, None) for n in ("out", "present_key", "present_value")]
    model = h.make_model(h.make_graph([node], name, inputs, outs),
                         opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)], ir_version=8)
    onnx_mod.save(model, path)
    return feeds


@pytest.mark.parametrize("name", list(CASES))
def test_group_query_attention_matches_onnxruntime(name, ferry_api, onnx_mod, ort, tmp_path):
    path = tmp_path / f"{name}.onnx"
    feeds = build(onnx_mod, name, path)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    model = ferry_api.load(str(path), repair=True)
    assert [r["rule"] for r in model.inspect()["repairs"]] == ["com.microsoft.GroupQueryAttention"]
    for backend in ("reference", "cpu"):
        got = model.compile(backend=backend).run(feeds)
        for out, w in zip(("out", "present_key", "present_value"), want):
            assert got[out].shape == w.shape, f"{name} {out} {backend}: {got[out].shape} vs ORT {w.shape}"
            np.testing.assert_allclose(got[out], w, rtol=1e-4, atol=1e-5, err_msg=f"{name} {out} on {backend}")


def test_sliding_window_is_refused(ferry_cli, onnx_mod, tmp_path):
    import subprocess

    h, T = onnx_mod.helper, onnx_mod.TensorProto
    node = h.make_node("GroupQueryAttention", ["q", "k", "v", "", "", "sk", "tot"], ["o"], domain="com.microsoft",
                       num_heads=2, kv_num_heads=1, local_window_size=4)
    ins = [h.make_tensor_value_info("q", T.FLOAT, [1, 3, 32]), h.make_tensor_value_info("k", T.FLOAT, [1, 3, 16]),
           h.make_tensor_value_info("v", T.FLOAT, [1, 3, 16]), h.make_tensor_value_info("sk", T.INT32, [1]),
           h.make_tensor_value_info("tot", T.INT32, [])]
    path = tmp_path / "window.onnx"
    onnx_mod.save(h.make_model(h.make_graph([node], "w", ins, [h.make_tensor_value_info("o", T.FLOAT, None)]),
                               opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)]), path)
    r = subprocess.run([str(ferry_cli), "inspect", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "local_window_size (sliding window) is not handled" in r.stdout + r.stderr
