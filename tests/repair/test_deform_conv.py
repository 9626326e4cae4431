"""The DeformConv repair (src/repair/deform_conv.cc): GridSample at the offset taps + MatMul,
checked against onnx.reference's DeformConv (the ONNX project's implementation) and
ONNX Runtime's (`--check-repairs`) over
padding, strides, dilations, groups, offset groups, mask and bias, with dynamic batch, on
both backends; the ONNX backend suite's four DeformConv cases against their stored outputs;
refused forms name their reason."""

import subprocess
import sys

import numpy as np
import pytest

CASES = {
    # name: (N, C, H, W, OC, kH, kW, attributes, mask, bias)
    "no_padding": (1, 1, 3, 3, 1, 2, 2, {}, False, False),
    "padding": (1, 1, 3, 3, 1, 2, 2, {"pads": [1, 1, 1, 1]}, False, False),
    "mask_bias": (1, 1, 3, 3, 1, 2, 2, {"pads": [1, 1, 1, 1]}, True, True),
    "offset_groups": (1, 2, 3, 3, 1, 2, 2, {"pads": [1, 1, 1, 1], "offset_group": 2}, False, False),
    "strided_dilated": (2, 3, 7, 6, 4, 3, 3, {"pads": [1, 2, 0, 1], "strides": [2, 1], "dilations": [1, 2]}, True, True),
    "groups": (2, 4, 5, 5, 6, 3, 3, {"pads": [1, 1, 1, 1], "group": 2, "offset_group": 2}, True, False),
    "groups_one_offset_group": (1, 4, 6, 5, 2, 2, 3, {"group": 2}, False, True),
}


def out_size(n, k, pad0, pad1, stride, dilation):
    return (n + pad0 + pad1 - ((k - 1) * dilation + 1)) // stride + 1


def make_case(onnx_mod, name, path, dynamic_batch=True):
    N, C, H, W, OC, kh, kw, attrs, mask, bias = CASES[name]
    h, T = onnx_mod.helper, onnx_mod.TensorProto
    pads = attrs.get("pads", [0, 0, 0, 0])
    strides, dil = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    oh = out_size(H, kh, pads[0], pads[2], strides[0], dil[0])
    ow = out_size(W, kw, pads[1], pads[3], strides[1], dil[1])
    og, g = attrs.get("offset_group", 1), attrs.get("group", 1)
    rng = np.random.default_rng(len(name))
    feeds = {"X": rng.standard_normal((N, C, H, W)).astype(np.float32),
             "W": rng.standard_normal((OC, C // g, kh, kw)).astype(np.float32),
             # offsets of a few pixels, so taps land between pixels and outside the image
             "offset": (rng.standard_normal((N, 2 * og * kh * kw, oh, ow)) * 1.5).astype(np.float32)}
    names = ["X", "W", "offset", "", ""]
    if bias:
        feeds["B"] = rng.standard_normal(OC).astype(np.float32)
        names[3] = "B"
    if mask:
        feeds["mask"] = rng.random((N, og * kh * kw, oh, ow)).astype(np.float32)
        names[4] = "mask"
    while not names[-1]:
        names.pop()
    batch = "N" if dynamic_batch else N
    shapes = {"X": [batch, C, H, W], "W": list(feeds["W"].shape), "offset": [batch, *feeds["offset"].shape[1:]],
              "B": [OC], "mask": [batch, *feeds.get("mask", np.zeros((1, 1, 1, 1))).shape[1:]]}
    node = h.make_node("DeformConv", names, ["Y"], name="deform", kernel_shape=[kh, kw], **attrs)
    graph = h.make_graph([node], name, [h.make_tensor_value_info(k, T.FLOAT, shapes[k]) for k in feeds],
                         [h.make_tensor_value_info("Y", T.FLOAT, [batch, OC, oh, ow])])
    onnx_mod.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9), path)
    return feeds


@pytest.mark.parametrize("name", list(CASES))
def test_deform_conv_matches_onnx_reference(name, ferry_api, onnx_mod, tmp_path):
    from onnx.reference import ReferenceEvaluator

    path = tmp_path / f"{name}.onnx"
    feeds = make_case(onnx_mod, name, path)
    (want,) = ReferenceEvaluator(str(path)).run(None, feeds)
    model = ferry_api.load(str(path), repair=True)
    assert [r["rule"] for r in model.inspect()["repairs"]] == ["DeformConv"]
    for backend in ("reference", "cpu"):
        got = model.compile(backend=backend).run(feeds)["Y"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"{name} on {backend}")


# In a subprocess: onnx's case registry is global and fills once per process (another test may
# already have collected it for one op type only).
SUITE_CASES = """
import sys, numpy as np, onnx
from onnx.backend.test.case.node import collect_testcases
out = sys.argv[1]
for i, c in enumerate(collect_testcases("DeformConv")):
    (data,) = c.data_sets
    onnx.save(c.model, f"{out}/{c.name}.onnx")
    np.savez(f"{out}/{c.name}.npz", **{f"in_{k}": x for k, x in enumerate(data[0])}, expected=data[1][0])
"""


def test_onnx_suite_cases(ferry_api, onnx_mod, tmp_path):
    """The backend suite's DeformConv cases (onnx.backend.test.case.node.deformconv), stored outputs."""
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", SUITE_CASES, str(tmp_path)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    models = sorted(tmp_path.glob("*.onnx"))
    assert len(models) == 4, models
    for path in models:
        model = onnx_mod.load(path)
        data = np.load(path.with_suffix(".npz"))
        feeds = {i.name: data[f"in_{k}"] for k, i in enumerate(model.graph.input)}
        got = ferry_api.load(str(path), repair=True).compile(backend="cpu").run(feeds)
        np.testing.assert_allclose(got[model.graph.output[0].name], data["expected"], rtol=1e-4, atol=1e-5,
                                   err_msg=path.stem)


def test_check_repairs_passes_against_onnxruntime(ferry_cli, onnx_mod, tmp_path):
    """--check-repairs compares the node with ONNX Runtime's own DeformConv kernel."""
    path = tmp_path / "m.onnx"
    make_case(onnx_mod, "strided_dilated", path, dynamic_batch=False)
    r = subprocess.run([str(ferry_cli), "convert", str(path), "-o", str(tmp_path / "o.onnx"), "--repair",
                        "--check-repairs"], capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "check: passed: max |ferry - onnxruntime|" in out, out


def test_a_1d_deform_conv_is_refused_with_its_reason(ferry_cli, onnx_mod, tmp_path):
    h, T = onnx_mod.helper, onnx_mod.TensorProto
    node = h.make_node("DeformConv", ["X", "W", "offset"], ["Y"], kernel_shape=[2])
    graph = h.make_graph([node], "d1", [h.make_tensor_value_info("X", T.FLOAT, [1, 1, 5]),
                                        h.make_tensor_value_info("W", T.FLOAT, [1, 1, 2]),
                                        h.make_tensor_value_info("offset", T.FLOAT, [1, 2, 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [1, 1, 4])])
    path = tmp_path / "d1.onnx"
    onnx_mod.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9), path)
    r = subprocess.run([str(ferry_cli), "inspect", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "only 2-D DeformConv" in r.stdout + r.stderr
