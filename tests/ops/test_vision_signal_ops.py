"""GridSample, AffineGrid, NonMaxSuppression, DFT, Unique and Col2Im against onnx.reference and onnxruntime.

The ONNX backend node tests (ferry conformance) cover one or a few cases per
attribute; these models cover the combinations they leave out: every
GridSample mode x padding x align_corners in 2-D (and 3-D without cubic, which
onnxruntime does not implement) with grid points well outside [-1, 1], the
opset-16 mode names, f64, random NonMaxSuppression problems, DFT lengths that
pad and cut along every axis (opset 17 and 20 forms), Unique along axes, and
Col2Im with strides, pads and dilations. Each family is one multi-node model,
run with

    ferry run MODEL --input NAME=FILE.npy ... --output-dir DIR

and every output must match the ONNX reference implementation (onnx.reference)
and onnxruntime: same dtype and shape, integers equal, floats within
1e-4 * max(1, |expected|). Where onnxruntime 1.32 departs from the reference
(ORT_DEVIATES: cubic sampling with border padding, odd-length inverse one-sided
DFT, 3-D Col2Im with pads/strides/dilations) only the reference is checked;
where the reference cannot run (REFERENCE_FAILS) only onnxruntime is. Inputs
are seeded random draws (no ties in scores, no nearest-mode ties at .5 in
practice).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("ferry_models_conftest", REPO / "tests" / "models" / "conftest.py")
models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(models)

F32, F64, I64 = 1, 11, 7  # onnx.TensorProto element types


class Model:
    """A multi-node, default-domain model built up node by node, with its input values."""

    def __init__(self, opset):
        self.opset, self.nodes, self.inputs, self.feeds, self.outputs = opset, [], [], {}, []

    def input(self, name, value):
        self.feeds[name] = value
        return name

    def node(self, op, inputs, outs, **attrs):
        """Adds a node; `outs` is an output name or a list of them (all become graph outputs)."""
        outs = [outs] if isinstance(outs, str) else outs
        self.nodes.append((op, inputs, outs, attrs))
        self.outputs += outs

    def proto(self, nodes=None, opset=None):
        """The model, or a model of just `nodes` (whose outputs become the graph outputs)."""
        import onnx
        from onnx import helper

        nodes = self.nodes if nodes is None else nodes
        elem = {np.dtype(np.float32): F32, np.dtype(np.float64): F64, np.dtype(np.int64): I64}
        ins = [helper.make_tensor_value_info(n, elem[v.dtype], list(v.shape)) for n, v in self.feeds.items()]
        outs = [onnx.ValueInfoProto(name=o) for _, _, node_outs, _ in nodes for o in node_outs]
        graph = helper.make_graph([helper.make_node(op, i, o, name=o[0], **a) for op, i, o, a in nodes], "g", ins, outs)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset or self.opset)])

    def reference_outputs(self, skip):
        """onnx.reference's outputs, node by node, for the nodes whose first output `skip` does not match.

        GridSample-16's mode names (which onnx.reference does not know) run as GridSample-22."""
        from onnx.reference import ReferenceEvaluator

        out = {}
        for op, ins, outs, attrs in self.nodes:
            if skip.search(outs[0]):
                continue
            opset = self.opset
            if op == "GridSample" and attrs.get("mode") in ("bilinear", "bicubic"):
                attrs, opset = {**attrs, "mode": attrs["mode"][2:]}, 22
            feeds = {k: v for k, v in self.feeds.items() if k in ins}
            model = self.proto([(op, ins, outs, attrs)], opset)
            model.graph.ClearField("input")
            model.graph.input.extend([i for i in self.proto().graph.input if i.name in feeds])
            out.update(zip(outs, ReferenceEvaluator(model).run(None, feeds)))
        return out


def grid_sample_2d(opset=22, dtype=np.float32):
    rng = np.random.default_rng(1)
    m = Model(opset)
    x = m.input("X", rng.standard_normal((2, 3, 5, 4)).astype(dtype))
    g = m.input("grid", rng.uniform(-1.8, 1.8, (2, 6, 7, 2)).astype(dtype))
    modes = ["nearest", "bilinear", "bicubic"] if opset < 20 else ["nearest", "linear", "cubic"]
    for mode in modes:
        for pad in ["zeros", "border", "reflection"]:
            for align in [0, 1]:
                m.node("GridSample", [x, g], f"{mode}_{pad}_{align}", mode=mode, padding_mode=pad, align_corners=align)
    return m


def grid_sample_3d():
    rng = np.random.default_rng(2)
    m = Model(22)
    x = m.input("X", rng.standard_normal((2, 2, 3, 4, 5)).astype(np.float32))
    g = m.input("grid", rng.uniform(-1.8, 1.8, (2, 3, 2, 4, 3)).astype(np.float32))
    for mode in ["nearest", "linear"]:
        for pad in ["zeros", "border", "reflection"]:
            for align in [0, 1]:
                m.node("GridSample", [x, g], f"{mode}_{pad}_{align}", mode=mode, padding_mode=pad, align_corners=align)
    return m


def affine_grid():
    rng = np.random.default_rng(3)
    m = Model(20)
    t2 = m.input("theta2", rng.standard_normal((2, 2, 3)).astype(np.float32))
    t3 = m.input("theta3", rng.standard_normal((2, 3, 4)).astype(np.float32))
    s2 = m.input("size2", np.array([2, 3, 4, 5], np.int64))
    s3 = m.input("size3", np.array([2, 1, 3, 2, 4], np.int64))
    for align in [0, 1]:
        m.node("AffineGrid", [t2, s2], f"grid2d_{align}", align_corners=align)
        m.node("AffineGrid", [t3, s3], f"grid3d_{align}", align_corners=align)
    return m


def non_max_suppression():
    rng = np.random.default_rng(4)
    m = Model(11)
    corners = rng.uniform(0, 10, (3, 40, 4)).astype(np.float32)  # corner order varies: flipped boxes too
    centres = np.concatenate([rng.uniform(0, 10, (3, 40, 2)), rng.uniform(0.5, 4, (3, 40, 2))], axis=2).astype(np.float32)
    b = m.input("corners", corners)
    c = m.input("centres", centres)
    s = m.input("scores", rng.permutation(3 * 2 * 40).reshape(3, 2, 40).astype(np.float32) / 240)  # distinct
    mx = m.input("max_out", np.array([25], np.int64))
    lo, hi = m.input("iou_lo", np.array([0.1], np.float32)), m.input("iou_hi", np.array([0.5], np.float32))
    thr = m.input("score_thr", np.array([0.3], np.float32))
    m.node("NonMaxSuppression", [b, s, mx, lo], "corners_iou_lo")
    m.node("NonMaxSuppression", [b, s, mx, hi, thr], "corners_iou_hi_thr")
    m.node("NonMaxSuppression", [c, s, mx, lo], "centres_iou_lo", center_point_box=1)
    m.node("NonMaxSuppression", [c, s, mx, hi, thr], "centres_iou_hi_thr", center_point_box=1)
    m.node("NonMaxSuppression", [b, s, mx], "corners_iou_default")
    return m


def dft(opset):
    rng = np.random.default_rng(5)
    m = Model(opset)
    real = m.input("real", rng.standard_normal((2, 6, 5, 1)).astype(np.float32))
    cplx = m.input("complex", rng.standard_normal((2, 6, 5, 2)).astype(np.float32))
    lengths = {n: m.input(f"n{n}", np.array(n, np.int64)) for n in (3, 8, 9)}
    axes = {a: m.input(f"axis{a}".replace("-", "m"), np.array(a, np.int64)) for a in (1, 2, -2, -3)}
    k = 0
    for x, xname in [(real, "real"), (cplx, "complex")]:
        for axis in (1, 2, -2, -3):
            for n in (None, 3, 8, 9):
                for inverse, onesided in [(0, 0), (0, 1), (1, 0), (1, 1)]:
                    if onesided and (xname == "real") == bool(inverse):
                        continue  # one-sided: rfft takes real input, irfft complex
                    if opset < 20 and axis < 0:
                        continue  # DFT-17's axis attribute was documented for the non-negative range
                    ins = [x, lengths[n] if n else ""]
                    attrs = {"inverse": inverse, "onesided": onesided}
                    if opset >= 20:
                        ins.append(axes[axis])
                    else:
                        attrs["axis"] = axis
                    m.node("DFT", ins, f"dft{k}_{xname}_axis{axis}_n{n}_inv{inverse}_one{onesided}", **attrs)
                    k += 1
    return m


def unique():
    rng = np.random.default_rng(6)
    m = Model(11)
    ints = m.input("ints", rng.integers(0, 3, (4, 6, 2)).astype(np.int64))
    floats = m.input("floats", rng.integers(-3, 3, (5, 4)).astype(np.float32) / 2)
    for name, x, rank in [("ints", ints, 3), ("floats", floats, 2)]:
        for sorted_ in (0, 1):
            m.node("Unique", [x], [f"{name}_flat_s{sorted_}_{o}" for o in "yivc"], sorted=sorted_)
            for axis in range(-rank, rank):
                outs = [f"{name}_axis{axis}_s{sorted_}_{o}".replace("-", "m") for o in "yivc"]
                m.node("Unique", [x], outs, sorted=sorted_, axis=axis)
    return m


def col2im():
    rng = np.random.default_rng(7)
    m = Model(18)
    configs = [  # image, block, strides, dilations, pads, channels
        ([5, 6], [2, 3], [1, 1], [1, 1], [0, 0, 0, 0], 2),
        ([7, 6], [3, 2], [2, 1], [1, 2], [1, 0, 0, 1], 3),
        ([4, 5, 6], [2, 1, 3], [1, 2, 2], [2, 1, 1], [1, 0, 1, 0, 1, 1], 2),
    ]
    for k, (image, block, strides, dilations, pads, ch) in enumerate(configs):
        r = len(image)
        blocks = [(image[i] + pads[i] + pads[i + r] - (dilations[i] * (block[i] - 1) + 1)) // strides[i] + 1
                  for i in range(r)]
        x = m.input(f"x{k}", rng.standard_normal((2, ch * int(np.prod(block)), int(np.prod(blocks)))).astype(np.float32))
        i = m.input(f"image{k}", np.array(image, np.int64))
        b = m.input(f"block{k}", np.array(block, np.int64))
        m.node("Col2Im", [x, i, b], f"col2im{k}", strides=strides, dilations=dilations, pads=pads)
    return m


FAMILIES = {
    "gridsample_2d": lambda: grid_sample_2d(),
    "gridsample_2d_f64": lambda: grid_sample_2d(dtype=np.float64),
    "gridsample_opset16": lambda: grid_sample_2d(opset=16),
    "gridsample_3d": grid_sample_3d,
    "affinegrid": affine_grid,
    "nonmaxsuppression": non_max_suppression,
    "dft_opset20": lambda: dft(20),
    "dft_opset17": lambda: dft(17),
    "unique": unique,
    "col2im": col2im,
}

# Outputs where onnxruntime 1.32 departs from the ONNX reference (ferry follows the reference):
ORT_DEVIATES = re.compile(
    r"cubic_border"            # cubic sampling with border padding
    r"|_n[39]_inv1_one1"       # inverse one-sided DFT of odd length
    r"|^col2im2$"              # 3-D Col2Im with pads, strides and dilations
)
# Nodes onnx.reference (1.23) cannot evaluate: an omitted optional NonMaxSuppression input,
# and unsorted Unique (it gathers Y along axis 0 whatever the axis).
REFERENCE_FAILS = re.compile(r"^corners_iou_default$|^(ints|floats)_.*_s0_")


def compare(name, got, want, oracle):
    """A mismatch message, or None."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{name}: ferry {got.dtype}{list(got.shape)}, {oracle} {want.dtype}{list(want.shape)}"
    if np.issubdtype(want.dtype, np.floating):
        g, e = got.astype(np.float64), want.astype(np.float64)
        with np.errstate(invalid="ignore"):  # inf - inf; g == e accepts equal infinities
            off = ~((g == e) | (np.abs(g - e) <= 1e-4 * np.maximum(1.0, np.abs(e))))
        if off.any():
            at = tuple(int(i) for i in np.argwhere(off)[0])
            return f"{name}: {int(off.sum())} of {g.size} differ from {oracle}; first at {at}: ferry {g[at]}, {oracle} {e[at]}"
        return None
    if not np.array_equal(got, want):
        return f"{name}: ferry {got.tolist()}, {oracle} {want.tolist()}"
    return None


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_matches_reference(family, tmp_path):
    try:
        import onnx
        import onnxruntime as ort
        import onnx.reference  # noqa: F401
    except ImportError as e:
        models.unavailable(f"onnx/onnxruntime not importable: {e}")
    binary = models.ferry_binary()
    if binary is None:
        models.unavailable("ferry binary not found (set FERRY_BIN)")
    m = FAMILIES[family]()
    proto = m.proto()
    reference = m.reference_outputs(REFERENCE_FAILS)
    runtime = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    onnxruntime = dict(zip(m.outputs, runtime.run(None, m.feeds)))

    path = tmp_path / "model.onnx"
    onnx.save(proto, path)
    args = [str(binary), "run", str(path), "--output-dir", str(tmp_path / "out")]
    for name, value in m.feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"ferry run failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"

    bad = []
    for name in m.outputs:
        got = np.load(tmp_path / "out" / f"{name}.npy")
        oracles = [(reference.get(name), "onnx.reference"), (None if ORT_DEVIATES.search(name) else onnxruntime[name], "onnxruntime")]
        oracles = [(want, who) for want, who in oracles if want is not None]
        assert oracles, f"{name}: no oracle checks this output"
        bad += [compare(name, got, want, who) for want, who in oracles]
    bad = [b for b in bad if b]
    assert not bad, f"{len(bad)} mismatches in {len(m.outputs)} outputs:\n" + "\n".join(bad)
