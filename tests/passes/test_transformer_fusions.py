"""The transformer fusions on real exports: counts, and numbers against ONNX Runtime.

Counts (`ferry inspect MODEL --optimized --json`, op_histogram of the graph
`ferry convert` writes):
  - BERT (tests/models gen, TorchScript export, opset 17): every attention block
    is one Attention node, every GELU one Gelu, every LayerNorm one
    LayerNormalization, and no Softmax / Erf / ReduceMean is left. Small: 2
    layers (5 LayerNorms incl. the embeddings'); full (-m full): BERT-base, 12
    layers, 25 LayerNorms.
  - GPT-2: causal attention fused (the sequence axis is dynamic and its length
    is not tracked through Range, so the Trilu mask cannot be proven [Sq, Sq]:
    it becomes the additive attn_mask Where(tril, 0, -3.4e38), not is_causal),
    tanh GELU fused.
  - DistilBERT, ViT (nn.MultiheadAttention exports): one Attention per layer; also exported with
    dynamic batch and sequence axes (TransformerEncoderLayer, MultiheadAttention with a key padding mask).
  - BERT exported at opset 16 (no LayerNormalization op: PyTorch writes
    ReduceMean/Sub/Pow/Sqrt/Div) fuses to the same counts.
Numbers: `ferry run` on the converted model vs ONNX Runtime on the original,
    |ferry - ort| <= rtol * max(1, |ort|), rtol 1e-4 (the model's own if larger).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("ferry_models_conftest", REPO / "tests" / "models" / "conftest.py")
models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(models)  # puts tests/models/gen on sys.path

from common import make_inputs  # noqa: E402

TIMEOUT_S = 1800


def ferry(*args):
    binary = models.ferry_binary()
    if binary is None:
        models.unavailable("ferry binary not found (set FERRY_BIN)")
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=TIMEOUT_S)


def optimized_histogram(path):
    """Op counts after optimizing; a Gelu that became a FusedMatMul/FusedConv epilogue
    (activation Gelu or GeluTanh) still counts as one Gelu."""
    import tempfile

    import onnx

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "optimized.onnx"
        proc = ferry("convert", path, "-o", out)
        assert proc.returncode == 0, proc.stderr
        m = onnx.load(str(out), load_external_data=False)
    hist = {}
    for n in m.graph.node:
        hist[n.op_type] = hist.get(n.op_type, 0) + 1
        if n.op_type.startswith("Fused"):
            act = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}.get("activation", b"")
            if act in (b"Gelu", b"GeluTanh"):
                hist["Gelu"] = hist.get("Gelu", 0) + 1
    return hist


def check_counts(hist, want, absent):
    for op, n in want.items():
        assert hist.get(op, 0) == n, f"{op}: {hist.get(op, 0)} after optimizing, want {n}; histogram {hist}"
    for op in absent:
        assert op not in hist, f"{op} left after optimizing: {hist}"


def attention_attrs(path):
    import onnx

    m = onnx.load(str(path), load_external_data=False)
    return [{a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
            for n in m.graph.node if n.op_type == "Attention"]


def convert_and_compare(path, specs, tmp_path, rtol=1e-4):
    """ferry convert, then ferry run on the result vs ONNX Runtime on the original."""
    import onnxruntime as ort

    out = tmp_path / "converted.onnx"
    proc = ferry("convert", path, "-o", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    feeds = make_inputs(specs, seed=0)
    args = ["run", out, "--output-dir", tmp_path / "out"]
    for name, arr in feeds.items():
        np.save(tmp_path / f"{name}.npy", arr)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    proc = ferry(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    for o, want in zip(sess.get_outputs(), sess.run(None, feeds)):
        got = np.load(tmp_path / "out" / f"{o.name}.npy")
        assert got.shape == want.shape, o.name
        err = np.abs(got.astype(np.float64) - want) / np.maximum(1.0, np.abs(want))
        assert err.max() <= rtol, f"{o.name}: max relative error {err.max():.3g} > {rtol}"
    return out


BERT_LIKE = ["Softmax", "Erf", "ReduceMean", "Sqrt"]


@pytest.mark.parametrize("size,layers", [("small", 2), pytest.param("full", 12, marks=pytest.mark.full)])
def test_bert_every_block_fused(size, layers, tmp_path):
    meta = models.ensure_model("torch", "bert", size)
    hist = optimized_histogram(meta["path"])
    check_counts(hist, {"Attention": layers, "Gelu": layers, "LayerNormalization": 2 * layers + 1}, BERT_LIKE)
    out = convert_and_compare(meta["path"], meta["inputs"], tmp_path, max(1e-4, meta.get("rtol", 1e-4)))
    for a in attention_attrs(out):
        assert a.get("q_num_heads") == (12 if size == "full" else 2), a  # the 3-D form: wrappers absorbed


def test_gpt2_causal_attention_and_tanh_gelu(tmp_path):
    meta = models.ensure_model("torch", "gpt2", "small")
    hist = optimized_histogram(meta["path"])
    # c_attn's packed [S, 3E] product is cut by one Split: each part becomes its own projection.
    check_counts(hist, {"Attention": 2, "Gelu": 2, "LayerNormalization": 5}, ["Softmax", "Tanh", "Pow", "Split"])
    out = convert_and_compare(meta["path"], meta["inputs"], tmp_path, max(1e-4, meta.get("rtol", 1e-4)))
    import onnx

    atts = [n for n in onnx.load(str(out)).graph.node if n.op_type == "Attention"]
    assert len(atts) == 2
    for n in atts:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        assert attrs.get("q_num_heads") == 2, attrs  # the 3-D form: wrappers absorbed
        assert attrs.get("is_causal") == 1 or (len(n.input) == 4 and n.input[3]), "causal mask lost"


@pytest.mark.parametrize("name", ["distilbert", "vit_b_16"])
def test_multihead_attention_exports(name, tmp_path):
    meta = models.ensure_model("torch", name, "small")
    hist = optimized_histogram(meta["path"])
    check_counts(hist, {"Attention": 2, "Gelu": 2}, ["Softmax", "Erf", "Squeeze", "Unsqueeze"])
    # ViT's batch-1 sequence-first attention: no head-split or merge Transpose left (the stem's one stays).
    assert hist.get("Transpose", 0) <= 1, hist
    out = convert_and_compare(meta["path"], meta["inputs"], tmp_path, max(1e-4, meta.get("rtol", 1e-4)))
    for a in attention_attrs(out):
        assert a.get("q_num_heads", 0) > 0, a  # the 3-D form: wrappers absorbed


@pytest.mark.parametrize("name,layers", [("encoder_dynamic", 2), ("mha_dynamic", 1)])
def test_dynamic_axes_multihead_attention_exports(name, layers, tmp_path):
    """nn.TransformerEncoderLayer / nn.MultiheadAttention exported with dynamic batch and sequence axes:
    the head split Reshapes take their targets from Shape -> Gather -> Concat chains
    (passes/canonicalize_head_split.cc), and attention still fuses; numbers as ONNX Runtime's."""
    meta = models.ensure_model("torch", name, "small")
    hist = optimized_histogram(meta["path"])
    check_counts(hist, {"Attention": layers}, ["Softmax"])
    convert_and_compare(meta["path"], meta["inputs"], tmp_path, max(1e-4, meta.get("rtol", 1e-4)))


def test_bert_opset16_decomposed_layernorm(tmp_path):
    try:
        import torch
    except ImportError as e:
        models.unavailable(f"torch not importable: {e}")
    import warnings

    import export_models

    torch.manual_seed(0)
    built = export_models.BUILDERS["bert"]("small")
    example = tuple(torch.from_numpy(a) for a in make_inputs(built.inputs, seed=0).values())
    path = tmp_path / "bert_opset16.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(built.module.eval(), example, str(path), opset_version=16, dynamo=False,
                          input_names=[s["name"] for s in built.inputs], output_names=built.outputs)
    import onnx

    source_ops = {n.op_type for n in onnx.load(str(path)).graph.node}
    assert "LayerNormalization" not in source_ops and "ReduceMean" in source_ops  # really decomposed
    hist = optimized_histogram(path)
    check_counts(hist, {"Attention": 2, "Gelu": 2, "LayerNormalization": 5}, BERT_LIKE + ["Pow", "Div"])
    convert_and_compare(path, built.inputs, tmp_path)


def export_symbolic_batch(name, tmp_path):
    """The small model re-exported with a symbolic batch axis ('batch'), as bench/run_bench.py does for batch 8."""
    try:
        import torch
    except ImportError as e:
        models.unavailable(f"torch not importable: {e}")
    import warnings

    import export_models

    torch.manual_seed(0)
    built = export_models.BUILDERS[name]("small")
    example = tuple(torch.from_numpy(a) for a in make_inputs(built.inputs, seed=0).values())
    dyn = {k: dict(v) for k, v in (built.dynamic_axes or {}).items()}
    for n in [s["name"] for s in built.inputs] + list(built.outputs):
        dyn.setdefault(n, {})[0] = "batch"
    path = tmp_path / f"{name}_dynbatch.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(built.module.eval(), example, str(path), opset_version=export_models.OPSET, dynamo=False,
                          input_names=[s["name"] for s in built.inputs], output_names=built.outputs,
                          dynamic_axes=dyn, do_constant_folding=True)
    specs = [dict(s, shape=[3] + list(s["shape"][1:])) for s in built.inputs]  # run at batch 3
    return path, specs


@pytest.mark.parametrize("name,layers,absent", [
    ("vit_b_16", 2, ["Softmax", "Erf", "Squeeze"]),
    ("gpt2", 2, ["Softmax", "Tanh"]),
])
def test_symbolic_batch_exports_fuse_as_the_static_ones(name, layers, absent, tmp_path):
    """A symbolic batch keeps its symbol through torch MultiheadAttention's [S*B, E] out projection
    (products of symbols, ir/dim_product.h) and GPT-2's Range(0, seq): every attention fuses, in the
    3-D form, and ViT's sequence-first packed Q/K/V projection becomes three plain projections with
    no Transpose left (unflatten_dense, split_packed_projection, fuse_attention's sequence-first
    merge); numbers as ONNX Runtime's at batch 3."""
    path, specs = export_symbolic_batch(name, tmp_path)
    hist = optimized_histogram(path)
    check_counts(hist, {"Attention": layers}, absent)
    assert hist.get("Transpose", 0) <= 1, hist  # ViT: the stem's patch Transpose only
    out = convert_and_compare(path, specs, tmp_path, 1e-4)
    for a in attention_attrs(out):
        assert a.get("q_num_heads", 0) > 0, a  # the 3-D form: wrappers absorbed


def test_symbolic_batch_swin_shifted_windows_fuse(tmp_path):
    """torchvision Swin with a symbolic batch: the shifted-window blocks add their window mask through a
    [B, nW, H, N, N] view whose B is unknown, so the mask cannot be materialized over B*nW; the windows
    become heads (fold_windows_into_heads) and every block's attention fuses; numbers as ONNX Runtime's
    at batch 3."""
    path, specs = export_symbolic_batch("swin_t", tmp_path)
    static = optimized_histogram(models.ensure_model("torch", "swin_t", "small")["path"])
    hist = optimized_histogram(path)
    assert static.get("Attention", 0) >= 2 and static.get("Softmax", 0) == 0, static
    assert hist.get("Attention", 0) == static["Attention"] and hist.get("Softmax", 0) == 0, (hist, static)
    convert_and_compare(path, specs, tmp_path, 1e-4)
