"""Every repair rule (src/repair/repair_table.def) checked numerically: one
com.microsoft (or pre-opset-17 default-domain) node on seeded random data over
its documented domain, run by ONNX Runtime (which implements the op itself) and
by ferry loaded with repair=True, on the reference interpreter and on the cpu
backend; tolerances in repair_util.TOLERANCE. Also: the forms a rule refuses
say why, and ops without a rule say so."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from repair_util import assert_close, ferry_outputs, ort_outputs

MS = "com.microsoft"
_TYPES = {np.dtype("float32"): TensorProto.FLOAT, np.dtype("int32"): TensorProto.INT32,
          np.dtype("int64"): TensorProto.INT64}


def node_model(op, inputs, outputs, domain=MS, opset=14, out_types=None, **attrs):
    """One node. inputs: (name, array, is_initializer) or None for an omitted input;
    outputs: names ("" = omitted). Returns (ModelProto, feeds)."""
    names, graph_inputs, inits, feeds = [], [], [], {}
    for entry in inputs:
        if entry is None:
            names.append("")
            continue
        name, arr, init = entry
        names.append(name)
        if init:
            inits.append(numpy_helper.from_array(arr, name))
        else:
            graph_inputs.append(helper.make_tensor_value_info(name, _TYPES[arr.dtype], list(arr.shape)))
            feeds[name] = arr
    node = helper.make_node(op, names, outputs, domain=domain, name=f"{op}_0", **attrs)
    out_types = out_types or {}
    outs = [helper.make_tensor_value_info(o, out_types.get(o, TensorProto.FLOAT), None) for o in outputs if o]
    graph = helper.make_graph([node], f"{op}_case", graph_inputs, outs, inits)
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8), feeds


def rnd(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def cases():
    rng = np.random.default_rng(18)
    B, S, H, NH = 2, 5, 16, 4
    x = lambda: ("x", rnd(rng, B, S, H, scale=2.0), False)  # noqa: E731
    yield "Gelu", node_model("Gelu", [x()], ["y"])
    yield "BiasGelu", node_model("BiasGelu", [x(), ("b", rnd(rng, H), True)], ["y"])
    yield "FastGelu_bias", node_model("FastGelu", [x(), ("b", rnd(rng, H), True)], ["y"])
    yield "FastGelu", node_model("FastGelu", [x()], ["y"])
    yield "QuickGelu", node_model("QuickGelu", [x()], ["y"])
    yield "QuickGelu_alpha", node_model("QuickGelu", [x()], ["y"], alpha=1.3)
    img = lambda: ("x", rnd(rng, 1, 3, 7, 7), False)  # noqa: E731
    w, bc = rnd(rng, 4, 3, 3, 3, scale=0.3), rnd(rng, 4)
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1], dilations=[1, 1], group=1)
    yield "FusedConv_Relu", node_model("FusedConv", [img(), ("w", w, True), ("b", bc, True)], ["y"],
                                       activation="Relu", **conv)
    yield "FusedConv_LeakyRelu", node_model("FusedConv", [img(), ("w", w, True), ("b", bc, True)], ["y"],
                                            activation="LeakyRelu", activation_params=[0.1], **conv)
    yield "FusedConv_Clip", node_model("FusedConv", [img(), ("w", w, True), ("b", bc, True)], ["y"],
                                       activation="Clip", activation_params=[0.0, 0.5], **conv)
    yield "FusedConv_HardSigmoid_stride", node_model(
        "FusedConv", [img(), ("w", w, True)], ["y"], activation="HardSigmoid", activation_params=[0.3, 0.4],
        kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 0, 0])
    yield "FusedConv_Sigmoid_Z", node_model(
        "FusedConv", [img(), ("w", w, True), ("b", bc, True), ("z", rnd(rng, 1, 4, 7, 7), False)], ["y"],
        activation="Sigmoid", **conv)
    yield "FusedConv_Tanh", node_model("FusedConv", [img(), ("w", w, True), ("b", bc, True)], ["y"],
                                       activation="Tanh", **conv)
    yield "FusedMatMul_alpha", node_model("FusedMatMul", [("a", rnd(rng, 2, 3, 6, 8), False),
                                                          ("b", rnd(rng, 8, 5), True)], ["y"], alpha=0.25)
    yield "FusedMatMul_transA_transB", node_model(
        "FusedMatMul", [("a", rnd(rng, 3, 8, 6), False), ("b", rnd(rng, 3, 5, 8), False)], ["y"],
        alpha=-1.5, transA=1, transB=1, transBatchA=0, transBatchB=0)
    ln = lambda: [("gamma", rnd(rng, H), True), ("beta", rnd(rng, H), True)]  # noqa: E731
    yield "SkipLayerNormalization_bias_sum", node_model(
        "SkipLayerNormalization", [x(), ("skip", rnd(rng, B, S, H), False), *ln(), ("bias", rnd(rng, H), True)],
        ["y", "", "", "sum"], epsilon=1e-5)
    yield "SkipLayerNormalization_plain", node_model(
        "SkipLayerNormalization", [x(), ("skip", rnd(rng, B, S, H), False), ("gamma", rnd(rng, H), True)], ["y"])
    yield "SkipSimplifiedLayerNormalization", node_model(
        "SkipSimplifiedLayerNormalization",
        [x(), ("skip", rnd(rng, B, S, H), False), ("gamma", rnd(rng, H), True), ("bias", rnd(rng, H), True)],
        ["y", "", "", "sum"], epsilon=1e-6)
    V, P = 30, 8
    emb = lambda: [("word", rnd(rng, V, H), True), ("pos", rnd(rng, P, H), True)]  # noqa: E731
    ids = ("ids", rng.integers(0, V, (B, S)).astype(np.int32), False)
    yield "EmbedLayerNormalization_bert", node_model(
        "EmbedLayerNormalization",
        [ids, ("seg_ids", rng.integers(0, 2, (B, S)).astype(np.int32), False), *emb(),
         ("seg", rnd(rng, 2, H), True), *ln(), ("mask", np.array([[1] * S, [1] * (S - 2) + [0] * 2], np.int32), False),
         ("pos_ids", np.tile(np.arange(S, dtype=np.int32), (1, 1)), False)],
        ["y", "mask_index", "sum"], epsilon=1e-5, out_types={"mask_index": TensorProto.INT32})
    yield "EmbedLayerNormalization_gpt2", node_model(
        "EmbedLayerNormalization", [ids, None, *emb(), None, *ln()], ["y", "", "sum"], epsilon=1e-5)
    yield "LayerNormalization_opset14", node_model(
        "LayerNormalization", [x(), *ln()], ["y"], domain="", axis=-1, epsilon=1e-5)
    yield "SimplifiedLayerNormalization_opset14", node_model(
        "SimplifiedLayerNormalization", [x(), ("gamma", rnd(rng, H), True)], ["y"], domain="", axis=-1,
        epsilon=1e-6)
    qkv = lambda: [x(), ("w", rnd(rng, H, 3 * H, scale=0.3), True), ("b", rnd(rng, 3 * H), True)]  # noqa: E731
    lengths = np.array([S, S - 2], np.int32)
    yield "Attention_mask_index", node_model("Attention", [*qkv(), ("mask_index", lengths, False)], ["y"],
                                             num_heads=NH)
    raw = np.array([[1, 1, 1, 1, 1], [1, 0, 1, 1, 0]], np.int32)
    yield "Attention_raw_mask_scale", node_model("Attention", [*qkv(), ("mask", raw, False)], ["y"],
                                                 num_heads=NH, scale=0.2, mask_filter_value=-1e4)
    yield "Attention_unidirectional", node_model("Attention", qkv(), ["y"], num_heads=NH, unidirectional=1)
    L = 7
    kv = lambda: [("key", rnd(rng, B, L, H), False), ("value", rnd(rng, B, L, H), False)]  # noqa: E731
    yield "MultiHeadAttention_bias", node_model(
        "MultiHeadAttention", [x(), *kv(), ("bias", rnd(rng, 3 * H), True)], ["y"], num_heads=NH)
    yield "MultiHeadAttention_key_padding_mask", node_model(
        "MultiHeadAttention", [x(), *kv(), None, ("kpm", np.array([[1] * L, [1] * 3 + [0] * 4], np.int32), False)],
        ["y"], num_heads=NH, scale=0.3)
    yield "MultiHeadAttention_key_lengths", node_model(
        "MultiHeadAttention", [x(), *kv(), None, ("kpm", np.array([L, 3], np.int32), False)], ["y"], num_heads=NH)
    yield "MultiHeadAttention_causal_self", node_model(
        "MultiHeadAttention", [x(), ("key", rnd(rng, B, S, H), False), ("value", rnd(rng, B, S, H), False)], ["y"],
        num_heads=NH, unidirectional=1)
    yield "Attention_unidirectional_raw_mask", node_model("Attention", [*qkv(), ("mask", raw, False)], ["y"],
                                                          num_heads=NH, unidirectional=1)
    yield "Attention_bias", node_model("Attention", [*qkv(), None, None, ("attn_bias", rnd(rng, 1, NH, S, S), False)],
                                       ["y"], num_heads=NH)
    yield from rotary_cases(rng)


def rotary_cases(rng):
    """com.microsoft.RotaryEmbedding(input, position_ids, cos_cache, sin_cache): 3-D with num_heads and
    4-D inputs, interleaved or not, a partial rotary dim, position ids [B, S] or an offset [1]."""
    B, S, NH, HD, MAX = 2, 5, 3, 8, 16
    caches = lambda r: [("cos", rnd(rng, MAX, r // 2), True), ("sin", rnd(rng, MAX, r // 2), True)]  # noqa: E731
    pos = lambda: ("pos", rng.integers(0, MAX - S, (B, S)).astype(np.int64), False)  # noqa: E731
    x3 = lambda: ("x", rnd(rng, B, S, NH * HD), False)  # noqa: E731
    x4 = lambda: ("x", rnd(rng, B, NH, S, HD), False)  # noqa: E731
    yield "RotaryEmbedding_3d", node_model("RotaryEmbedding", [x3(), pos(), *caches(HD)], ["y"], num_heads=NH)
    yield "RotaryEmbedding_3d_interleaved_partial", node_model(
        "RotaryEmbedding", [x3(), pos(), *caches(4)], ["y"], num_heads=NH, interleaved=1, rotary_embedding_dim=4)
    yield "RotaryEmbedding_4d", node_model("RotaryEmbedding", [x4(), pos(), *caches(HD)], ["y"], interleaved=1)
    yield "RotaryEmbedding_offset", node_model(
        "RotaryEmbedding", [x3(), ("pos", np.array([4], np.int64), False), *caches(HD)], ["y"], num_heads=NH)


CASES = dict(cases())


@pytest.mark.parametrize("case", sorted(CASES))
def test_rule_matches_onnxruntime(case, tmp_path, ferry_api, ort):
    model, feeds = CASES[case]
    path = tmp_path / f"{case}.onnx"
    onnx.save(model, path)
    want = ort_outputs(ort, path, feeds)
    op = model.graph.node[0].op_type
    for backend in ("reference", "cpu"):
        got, repairs = ferry_outputs(ferry_api, path, feeds, backend)
        assert [r["op_type"] for r in repairs] == [op], repairs
        assert_close(got, want, backend, case)
