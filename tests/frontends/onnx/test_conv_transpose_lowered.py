"""ConvTranspose with kernel == stride (no overlap) on the cpu target: the optimizer writes it as a
1x1 Conv + DepthToSpace (passes/lower_conv_transpose.cc) and the cpu backend runs the Conv on
oneDNN; the reference target keeps the ConvTranspose. Outputs are compared with ONNX Runtime (graph
optimizations off) over strides 2 and 3, channel counts, bias / no bias, batch 1 and 2, odd spatial
sizes and a following Relu / BatchNorm; the near misses (kernel != stride, pads, output_padding,
group 2, dilations, weights as a graph input) keep ConvTranspose on the cpu target and still match."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from cli_helpers import converted_ops, ferry_run



def ort_run(path, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]


LOWERED = {
    # id: (batch, ic, oc, h, w, stride, bias, after)
    "s2_ic8_oc16_bias": (1, 8, 16, 7, 9, 2, True, None),
    "s2_ic96_oc64_relu": (1, 96, 64, 11, 13, 2, True, "Relu"),
    "s2_ic96_oc1_sigmoid": (1, 96, 1, 9, 7, 2, True, "Sigmoid"),
    "s3_ic8_oc3_nobias_batch2": (2, 8, 3, 5, 7, 3, False, None),
    "s3_ic1_oc1_bias": (1, 1, 1, 6, 5, 3, True, None),
    "s2_ic1_oc64_nobias": (2, 1, 64, 5, 5, 2, False, None),
    "s2_ic8_oc3_bn_relu_batch2": (2, 8, 3, 9, 11, 2, True, "BatchNormalization+Relu"),
    "s3_ic96_oc16_bn": (1, 96, 16, 5, 9, 3, False, "BatchNormalization"),
}

NEAR_MISSES = {
    # id: (w shape, attrs, weights_input)
    "kernel_3_stride_2": ((8, 4, 3, 3), {"strides": [2, 2]}, False),
    "pads": ((8, 4, 2, 2), {"strides": [2, 2], "pads": [1, 0, 1, 0]}, False),
    "output_padding": ((8, 4, 2, 2), {"strides": [2, 2], "output_padding": [1, 1]}, False),
    "group_2": ((8, 2, 2, 2), {"strides": [2, 2], "group": 2}, False),
    "dilations": ((8, 4, 2, 2), {"strides": [2, 2], "dilations": [2, 2]}, False),
    "stride_per_axis": ((8, 4, 2, 3), {"strides": [2, 3]}, False),
    "weights_input": ((8, 4, 2, 2), {"strides": [2, 2]}, True),
}


def _model(onnx_mod, path, rng, x_shape, w_shape, attrs, bias, after=None, weights_input=False):
    h, nh = onnx_mod.helper, onnx_mod.numpy_helper
    oc = w_shape[1] * attrs.get("group", 1)
    w = rng.normal(0, 0.3, w_shape).astype(np.float32)
    inits, ins = [], ["x", "w"]
    if not weights_input:
        inits.append(nh.from_array(w, "w"))
    if bias:
        inits.append(nh.from_array(rng.normal(0, 0.5, oc).astype(np.float32), "b"))
        ins.append("b")
    nodes = [h.make_node("ConvTranspose", ins, ["t"], **attrs)]
    last = "t"
    for i, op in enumerate(after.split("+") if after else []):
        out = f"a{i}"
        if op == "BatchNormalization":
            for name, v in (("scale", rng.uniform(0.5, 1.5, oc)), ("shift", rng.normal(0, 0.5, oc)),
                            ("mean", rng.normal(0, 0.5, oc)), ("var", rng.uniform(0.5, 2, oc))):
                inits.append(nh.from_array(v.astype(np.float32), f"{name}{i}"))
            nodes.append(h.make_node(op, [last, f"scale{i}", f"shift{i}", f"mean{i}", f"var{i}"], [out]))
        else:
            nodes.append(h.make_node(op, [last], [out]))
        last = out
    nodes.append(h.make_node("Identity", [last], ["y"]))
    f32 = onnx_mod.TensorProto.FLOAT
    graph_inputs = [h.make_tensor_value_info("x", f32, list(x_shape))]
    if weights_input:
        graph_inputs.append(h.make_tensor_value_info("w", f32, list(w_shape)))
    g = h.make_graph(nodes, "g", graph_inputs, [h.make_tensor_value_info("y", f32, None)], inits)
    onnx_mod.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)
    feeds = {"x": rng.normal(0, 1, x_shape).astype(np.float32)}
    if weights_input:
        feeds["w"] = w
    return feeds


def _check_backends(cli, path, feeds, tmp_path):
    want = ort_run(path, feeds)
    for backend in ("cpu", "reference"):
        got = ferry_run(cli, path, feeds, tmp_path, backend)
        assert got.shape == want.shape, (backend, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(want).max()), err_msg=backend)


@pytest.mark.parametrize("case", list(LOWERED))
def test_kernel_equals_stride_lowered_matches_onnxruntime(ferry_cli, onnx_mod, tmp_path, case):
    n, ic, oc, hh, ww, s, bias, after = LOWERED[case]
    path = tmp_path / "m.onnx"
    feeds = _model(onnx_mod, path, np.random.default_rng(7), (n, ic, hh, ww), (ic, oc, s, s),
                   {"strides": [s, s], "kernel_shape": [s, s]}, bias, after)
    ops = converted_ops(ferry_cli, onnx_mod, path, "cpu", tmp_path)
    assert not {"ConvTranspose", "FusedConvTranspose"} & set(ops), ops
    assert "DepthToSpace" in ops and ({"Conv", "FusedConv"} & set(ops)), ops
    if after and after.endswith(("Relu", "Sigmoid")):  # the activation moved before the shuffle, into the Conv
        assert "FusedConv" in ops and not {"Relu", "Sigmoid"} & set(ops), ops
    if after and "BatchNormalization" in after:
        assert "BatchNormalization" not in ops, ops
    ref_ops = converted_ops(ferry_cli, onnx_mod, path, "reference", tmp_path)
    assert {"ConvTranspose", "FusedConvTranspose"} & set(ref_ops) and "DepthToSpace" not in ref_ops, ref_ops
    _check_backends(ferry_cli, path, feeds, tmp_path)


@pytest.mark.parametrize("case", list(NEAR_MISSES))
def test_near_misses_keep_conv_transpose(ferry_cli, onnx_mod, tmp_path, case):
    w_shape, attrs, weights_input = NEAR_MISSES[case]
    path = tmp_path / "m.onnx"
    feeds = _model(onnx_mod, path, np.random.default_rng(9), (1, 8, 7, 6), w_shape, attrs, True,
                   weights_input=weights_input)
    ops = converted_ops(ferry_cli, onnx_mod, path, "cpu", tmp_path)
    assert "ConvTranspose" in ops and "DepthToSpace" not in ops, ops
    _check_backends(ferry_cli, path, feeds, tmp_path)


def test_provenance_maps_back_to_the_conv_transpose(ferry_cli, onnx_mod, tmp_path):
    path = tmp_path / "m.onnx"
    _model(onnx_mod, path, np.random.default_rng(1), (1, 8, 5, 5), (8, 4, 2, 2), {"strides": [2, 2]}, True, "Relu")
    m = onnx_mod.load(str(path))
    m.graph.node[0].name = "up_deconv"
    onnx_mod.save(m, str(path))
    out = tmp_path / "c.onnx"
    r = subprocess.run([str(ferry_cli), "convert", str(path), "--target", "cpu", "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    names = [n.name for n in onnx_mod.load(str(out)).graph.node]
    assert any(n.startswith("up_deconv") for n in names), names


D2S_CASES = {
    # id: (batch, channels into DepthToSpace, h, w, blocksize, mode, conv after)
    "dcr_s2_c4": (1, 4, 9, 7, 2, "DCR", False),
    "dcr_s2_c64_conv": (1, 64, 7, 9, 2, "DCR", True),
    "crd_s2_c64_conv": (2, 64, 5, 7, 2, "CRD", True),
    "dcr_s3_c27": (1, 27, 5, 6, 3, "DCR", False),
    "crd_s3_c144_conv": (1, 144, 5, 5, 3, "CRD", True),
    "dcr_s2_c96_batch2": (2, 96, 6, 5, 2, "DCR", False),
    "dcr_s2_c12_conv": (1, 12, 11, 9, 2, "DCR", True),
}


def _d2s_model(onnx_mod, path, rng, n, c, hh, ww, s, mode, conv_after):
    """Conv (so DepthToSpace reads whatever layout oneDNN gives it) -> DepthToSpace -> [Conv]."""
    h, nh = onnx_mod.helper, onnx_mod.numpy_helper
    inits = [nh.from_array(rng.normal(0, 0.3, (c, 5, 3, 3)).astype(np.float32), "w0")]
    nodes = [h.make_node("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1]),
             h.make_node("DepthToSpace", ["c0"], ["d"], blocksize=s, mode=mode)]
    last = "d"
    if conv_after:
        inits.append(nh.from_array(rng.normal(0, 0.3, (8, c // (s * s), 3, 3)).astype(np.float32), "w1"))
        nodes.append(h.make_node("Conv", ["d", "w1"], ["c1"], pads=[1, 1, 1, 1]))
        last = "c1"
    nodes.append(h.make_node("Identity", [last], ["y"]))
    f32 = onnx_mod.TensorProto.FLOAT
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", f32, [n, 5, hh, ww])],
                     [h.make_tensor_value_info("y", f32, None)], inits)
    onnx_mod.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)
    return {"x": rng.normal(0, 1, (n, 5, hh, ww)).astype(np.float32)}


# How the cpu backend is run: the host's layouts (channels-last from brgconv on AVX-512,
# nChw8c on AVX2), oneDNN capped at AVX2 (nChw8c: the blocked path), plain layouts only.
D2S_LAYOUTS = {"host": ((), {}), "avx2_blocked": ((), {"ONEDNN_MAX_CPU_ISA": "AVX2"}),
               "plain": (("--plain-layouts",), {})}


@pytest.mark.parametrize("layout", list(D2S_LAYOUTS))
@pytest.mark.parametrize("case", list(D2S_CASES))
def test_depth_to_space_step_matches_onnxruntime(ferry_cli, onnx_mod, tmp_path, case, layout):
    import os
    path = tmp_path / "d2s.onnx"
    feeds = _d2s_model(onnx_mod, path, np.random.default_rng(5), *D2S_CASES[case])
    extra, env_add = D2S_LAYOUTS[layout]
    env = {**os.environ, **env_add}
    want = ort_run(path, feeds)
    got = ferry_run(ferry_cli, path, feeds, tmp_path, "cpu", extra, env)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(want).max()))
    trace = tmp_path / "trace.json"
    r = subprocess.run([str(ferry_cli), "bench", str(path), "--iters", "1", "--warmup", "0", "--profile", str(trace),
                        *extra], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    kernels = {e.get("args", {}).get("kernel", "") for e in json.loads(trace.read_text())["traceEvents"]
               if isinstance(e, dict)}
    assert any(k.startswith("depth_to_space_") for k in kernels), kernels  # the own step, not ref_DepthToSpace
