"""STFT, MelWeightMatrix, RoiAlign, MaxUnpool and TfIdfVectorizer against onnx.reference and onnxruntime.

The ONNX backend node tests have one to seven cases per op; these models
cover the rest of each schema: STFT with and without a window, a frame_length
that differs from the window, real (one- and two-sided) and complex signals;
MelWeightMatrix over several sample rates and band edges and an f64 output;
RoiAlign in both modes and both coordinate conventions, sampling_ratio 0 and
fixed, rois that reach outside the image, opset 10 and 16; MaxUnpool after a
MaxPool with pads and strides, 1-D to 3-D, with an output_shape; TfIdfVectorizer
in its three modes with and without weights, skips, and uni- to tri-grams.
Each family is one multi-node model run with `ferry run` on the reference and
the cpu backends; every output must match onnx.reference and onnxruntime
(tests/ops/test_vision_signal_ops.py's comparison: floats within
1e-4 * max(1, |expected|), integers equal).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("ferry_vision_signal_ops", HERE / "test_vision_signal_ops.py")
vso = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vso)
_spec = importlib.util.spec_from_file_location("ferry_opset24_28_ops", HERE / "test_opset24_28_ops.py")
_o28 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_o28)
run_ferry = _o28.run_ferry  # ferry run on one backend -> {output: array}


def stft():
    rng = np.random.default_rng(21)
    m = vso.Model(17)
    real = m.input("real", rng.standard_normal((2, 64, 1)).astype(np.float32))
    cplx = m.input("cplx", rng.standard_normal((2, 40, 2)).astype(np.float32))
    hann = m.input("hann", (np.sin(np.pi * np.arange(16) / 16) ** 2).astype(np.float32))
    step3, step8 = m.input("step3", np.array(3, np.int64)), m.input("step8", np.array(8, np.int64))
    len16, len20 = m.input("len16", np.array(16, np.int64)), m.input("len20", np.array(20, np.int64))
    for one in (0, 1):
        m.node("STFT", [real, step8, hann], f"real_hann_one{one}", onesided=one)
        m.node("STFT", [real, step3, "", len20], f"real_len20_one{one}", onesided=one)
        m.node("STFT", [real, step8, hann, len16], f"real_hann_len16_one{one}", onesided=one)
    m.node("STFT", [cplx, step3, hann], "cplx_hann", onesided=0)
    m.node("STFT", [cplx, step8, "", len16], "cplx_len16", onesided=0)
    return m


def mel_weight_matrix():
    m = vso.Model(17)
    configs = [(8, 64, 16000, 0.0, 8000.0), (20, 512, 22050, 300.0, 8000.0), (40, 400, 16000, 20.0, 7600.0),
               (5, 16, 8000, 100.0, 3000.0), (64, 1024, 44100, 0.0, 22050.0)]
    for k, (bins, dft, rate, lo, hi) in enumerate(configs):
        ins = [m.input(f"bins{k}", np.array(bins, np.int64)), m.input(f"dft{k}", np.array(dft, np.int64)),
               m.input(f"rate{k}", np.array(rate, np.int64)), m.input(f"lo{k}", np.array(lo, np.float32)),
               m.input(f"hi{k}", np.array(hi, np.float32))]
        m.node("MelWeightMatrix", ins, f"mel{k}")
        if k == 1:
            m.node("MelWeightMatrix", ins, f"mel{k}_f64", output_datatype=vso.F64)
    return m


def roi_align(opset):
    rng = np.random.default_rng(22)
    m = vso.Model(opset)
    x = m.input("X", rng.standard_normal((2, 3, 10, 12)).astype(np.float32))
    corners = rng.uniform(-3, 26, (7, 2, 2))  # some boxes reach outside the (scaled) image
    boxes = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1).astype(np.float32)
    rois = m.input("rois", boxes)
    batch = m.input("batch", rng.integers(0, 2, 7).astype(np.int64))
    conventions = ["half_pixel", "output_half_pixel"] if opset >= 16 else [None]
    for mode in ("avg", "max"):
        for ctm in conventions:
            for ratio in (0, 2):
                attrs = dict(mode=mode, output_height=3, output_width=4, sampling_ratio=ratio, spatial_scale=0.5)
                if ctm:
                    attrs["coordinate_transformation_mode"] = ctm
                m.node("RoiAlign", [x, rois, batch], f"{mode}_{ctm}_s{ratio}", **attrs)
    return m


def max_unpool():
    rng = np.random.default_rng(23)
    m = vso.Model(11)
    configs = [  # input shape, kernel, strides, pads, output_shape (None: the unpooled size)
        ((1, 2, 6, 6), [2, 2], [2, 2], [0, 0, 0, 0], None),
        ((2, 3, 7, 5), [3, 2], [2, 1], [1, 0, 1, 1], None),
        ((1, 2, 9), [3], [3], [0, 0], [1, 2, 11]),
        ((1, 1, 4, 5, 6), [2, 2, 3], [2, 2, 3], [0, 0, 0, 0, 0, 0], [1, 1, 4, 5, 6]),  # back to MaxPool's input
        ((1, 2, 6, 6), [2, 2], [2, 2], [0, 0, 0, 0], [1, 2, 7, 8]),
    ]
    for k, (shape, kernel, strides, pads, out_shape) in enumerate(configs):
        x = m.input(f"x{k}", rng.standard_normal(shape).astype(np.float32))
        pool = dict(kernel_shape=kernel, strides=strides, pads=pads)
        m.node("MaxPool", [x], [f"pooled{k}", f"indices{k}"], **pool)
        ins = [f"pooled{k}", f"indices{k}"]
        if out_shape is not None:
            ins.append(m.input(f"out_shape{k}", np.array(out_shape, np.int64)))
        m.node("MaxUnpool", ins, f"unpooled{k}", **pool)
    return m


def tfidf():
    rng = np.random.default_rng(24)
    m = vso.Model(9)
    tokens2 = m.input("tokens2", rng.integers(0, 7, (3, 14)).astype(np.int64))
    tokens1 = m.input("tokens1", rng.integers(0, 7, 12).astype(np.int64))
    # 4 unigrams, 3 bigrams, 2 trigrams
    pool = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 1, 2, 3, 0, 1, 2]
    counts = [0, 4, 10]
    indexes = [0, 1, 2, 3, 4, 5, 6, 7, 8]
    weights = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    for mode in ("TF", "IDF", "TFIDF"):
        for lo, hi in ((1, 1), (1, 3), (2, 3), (3, 3)):
            for skip in (0, 2):
                base = dict(mode=mode, min_gram_length=lo, max_gram_length=hi, max_skip_count=skip,
                            ngram_counts=counts, ngram_indexes=indexes, pool_int64s=pool)
                m.node("TfIdfVectorizer", [tokens2], f"{mode}_{lo}{hi}_s{skip}", **base)
                if mode != "TF":
                    m.node("TfIdfVectorizer", [tokens2], f"{mode}_{lo}{hi}_s{skip}_w", **base, weights=weights)
    m.node("TfIdfVectorizer", [tokens1], "rank1_shuffled_columns", mode="TF", min_gram_length=1, max_gram_length=2,
           max_skip_count=1, ngram_counts=[0, 4], ngram_indexes=[5, 0, 2, 6, 1, 3, 4], pool_int64s=pool[:10])
    return m


FAMILIES = {
    "stft": stft,
    "melweightmatrix": mel_weight_matrix,
    "roialign_opset16": lambda: roi_align(16),
    "roialign_opset10": lambda: roi_align(10),
    "maxunpool": max_unpool,
    "tfidfvectorizer": tfidf,
}

# Outputs where onnxruntime departs from the ONNX reference (ferry follows the reference): none.
ORT_DEVIATES = re.compile(r"^$")
# Outputs onnx.reference (1.23) gets wrong or cannot compute (onnxruntime checks them alone):
# RoiAlign-10 (the reference has only RoiAlign-16, whose default shifts by half a pixel; opset 10
# does not shift, as onnxruntime's RoiAlign-10), IDF / TFIDF without weights (len(None)), and
# MaxUnpool with an output_shape: the reference scatters into the unpooled size and pastes that
# into output_shape's corner (and fails when MaxPool's indices reach past it, as they do when
# unpooling back to an input whose size the pooling floored); ferry follows PyTorch and
# onnxruntime, whose indices index output_shape itself.
REFERENCE_FAILS = re.compile(r"_None_|^(IDF|TFIDF)_\d\d_s\d$|^unpooled[234]$")


def reference_outputs(m):
    """onnx.reference's outputs of the whole model, less the nodes REFERENCE_FAILS names."""
    from onnx.reference import ReferenceEvaluator

    nodes = [n for n in m.nodes if not REFERENCE_FAILS.search(n[2][0])]
    names = [o for n in nodes for o in n[2]]
    return dict(zip(names, ReferenceEvaluator(m.proto(nodes)).run(None, m.feeds)))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_matches_reference_and_onnxruntime(family, tmp_path, ferry_cli, onnx_mod):
    import onnxruntime as ort

    m = FAMILIES[family]()
    reference = reference_outputs(m)
    session = ort.InferenceSession(m.proto().SerializeToString(), providers=["CPUExecutionProvider"])
    onnxruntime = dict(zip(m.outputs, session.run(None, m.feeds)))
    bad = []
    for backend in ("reference", "cpu"):
        got = run_ferry(ferry_cli, m, tmp_path, backend)
        for name in m.outputs:
            assert name in reference or not ORT_DEVIATES.search(name), f"{name}: no oracle checks this output"
            if name in reference:
                bad.append(vso.compare(f"{backend}:{name}", got[name], reference[name], "onnx.reference"))
            if not ORT_DEVIATES.search(name):
                bad.append(vso.compare(f"{backend}:{name}", got[name], onnxruntime[name], "onnxruntime"))
    bad = [b for b in bad if b]
    assert not bad, f"{len(bad)} mismatches in {2 * len(m.outputs)} outputs:\n" + "\n".join(bad)
