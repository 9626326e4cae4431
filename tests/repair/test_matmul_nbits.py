"""The com.microsoft.MatMulNBits repair (src/repair/contrib_quantized.cc) on files written
by ONNX Runtime's own weight-only quantizer (onnxruntime.quantization.MatMulNBitsQuantizer:
2/4/8 bits, symmetric and asymmetric, a K that is not a multiple of the block, HQQ's float
zero points): ferry with repairs matches ONNX Runtime on each, on both backends."""

import numpy as np
import pytest

K, N = 80, 24  # K = 2.5 blocks of 32: the last block is ragged


def float_model(onnx_mod, bias):
    h, nh, T = onnx_mod.helper, onnx_mod.numpy_helper, onnx_mod.TensorProto
    rng = np.random.default_rng(7)
    inits = [nh.from_array(rng.standard_normal((K, N)).astype(np.float32) * 0.2, "w")]
    nodes = [h.make_node("MatMul", ["a", "w"], ["m" if bias else "y"], name="mm")]
    if bias:
        inits.append(nh.from_array(rng.standard_normal(N).astype(np.float32), "b"))
        nodes.append(h.make_node("Add", ["m", "b"], ["y"], name="add"))
    graph = h.make_graph(nodes, "mm", [h.make_tensor_value_info("a", T.FLOAT, [2, 3, K])],
                         [h.make_tensor_value_info("y", T.FLOAT, [2, 3, N])], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


CASES = {
    "4bit_asym": dict(bits=4, is_symmetric=False),
    "4bit_sym": dict(bits=4, is_symmetric=True),
    "8bit_asym": dict(bits=8, is_symmetric=False),
    "2bit_asym": dict(bits=2, is_symmetric=False),
}


def quantize(onnx_mod, case, tmp_path):
    from onnxruntime.quantization import matmul_nbits_quantizer as mnq

    model = float_model(onnx_mod, bias=case != "4bit_sym")
    if case == "hqq":
        q = mnq.MatMulNBitsQuantizer(model, algo_config=mnq.HQQWeightOnlyQuantConfig(block_size=32, bits=4))
    else:
        q = mnq.MatMulNBitsQuantizer(model, block_size=32, **CASES[case])
    q.process()
    path = tmp_path / f"{case}.onnx"
    onnx_mod.save(q.model.model, path)
    ops = {(n.domain, n.op_type) for n in onnx_mod.load(path).graph.node}
    assert ("com.microsoft", "MatMulNBits") in ops, ops
    return path


@pytest.mark.parametrize("case", [*CASES, "hqq"])
def test_matmul_nbits_matches_onnxruntime(case, ferry_api, onnx_mod, ort, tmp_path):
    path = quantize(onnx_mod, case, tmp_path)
    a = np.random.default_rng(1).standard_normal((2, 3, K)).astype(np.float32)
    (want,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"a": a})
    model = ferry_api.load(str(path), repair=True)
    assert [r["rule"] for r in model.inspect()["repairs"]] == ["com.microsoft.MatMulNBits"]
    for backend in ("reference", "cpu"):
        got = model.compile(backend=backend).run({"a": a})["y"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"{case} on {backend}")


def test_without_repair_the_rule_is_offered(ferry_api, onnx_mod, tmp_path):
    path = quantize(onnx_mod, "4bit_asym", tmp_path)
    info = ferry_api.inspect(str(path))
    (u,) = info["coverage"]["unsupported"]
    assert u["op_type"] == "MatMulNBits" and "repair available: com.microsoft.MatMulNBits" in u["proposed_repair"]

