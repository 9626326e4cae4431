"""Conv / ConvTranspose / MatMul fusions end to end.

1. Small graphs built here (onnx.helper) with the patterns the fusions target,
   including forms the torch exports do not have (BatchNormalization that is
   not pre-folded, ConvTranspose + BN, Gemm + BatchNorm1d, every activation):
       ferry convert MODEL -o OUT.onnx --check-passes
   writes the fused ops in domain "ferry"; `ferry run OUT.onnx` must match
   ONNX Runtime on the original model (|ferry - ort| <= 1e-4 * max(1, |ort|)),
   and the converted graph must hold the expected ops and none of the fused ones.
2. Op counts on the end-to-end model set after `ferry inspect --optimized --json`:
   ResNet-50 keeps no BatchNormalization and no standalone Relu, MobileNetV3
   (small and large) no standalone HardSwish / HardSigmoid, EfficientNet-B0 no
   standalone Sigmoid. The small models run by default, the full-size ones with -m full.

FERRY_BIN names the binary (default build/ferry); under CI=true a missing
prerequisite fails instead of skipping.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("ferry_models_conftest", REPO / "tests" / "models" / "conftest.py")
models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(models)  # puts tests/models/gen on sys.path

from common import make_inputs  # noqa: E402

RTOL = 1e-4


def ferry(*args, timeout=600, env=None):
    binary = models.ferry_binary()
    if binary is None:
        models.unavailable("ferry binary not found (set FERRY_BIN)")
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})


def onnx_modules():
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
        from onnx_builder import GraphBuilder
    except ImportError as e:
        models.unavailable(f"onnx / onnxruntime not importable: {e}")
    return GraphBuilder


def rand(rng, *shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (rng.standard_normal(shape) * (scale or 1.0 / np.sqrt(fan_in))).astype(np.float32)


def bn(g, rng, x, c):
    """BatchNormalization with real statistics (not folded by an exporter)."""
    return g.op("BatchNormalization", [x, g.const(rng.uniform(0.5, 1.5, c)), g.const(rand(rng, c, scale=0.2)),
                                       g.const(rand(rng, c, scale=0.2)), g.const(rng.uniform(0.5, 2.0, c))],
                epsilon=1e-3)


# --- the graphs: name -> (builder, ops expected after optimizing, ops that must be gone) ---------


def conv_block_chain(GraphBuilder, rng):
    """MobileNetV2-like: Conv+BN+Relu6, pw+BN+Relu6 -> dw+BN+HardSwish -> pw+BN + residual + Relu, grouped conv."""
    g = GraphBuilder("conv_block_chain", opset=17)
    x = g.input("x", [2, 4, 8, 8])
    relu6 = lambda t: g.op("Clip", [t, g.const(np.float32(0)), g.const(np.float32(6))])  # noqa: E731
    t = relu6(bn(g, rng, g.op("Conv", [x, g.const(rand(rng, 8, 4, 3, 3)), g.const(rand(rng, 8))], pads=[1, 1, 1, 1]), 8))
    e = relu6(bn(g, rng, g.op("Conv", [t, g.const(rand(rng, 16, 8, 1, 1))]), 16))               # pointwise expand
    d = g.op("HardSwish", [bn(g, rng, g.op("Conv", [e, g.const(rand(rng, 16, 1, 3, 3))], group=16,
                                             pads=[1, 1, 1, 1]), 16)])                          # depthwise
    p = bn(g, rng, g.op("Conv", [d, g.const(rand(rng, 8, 16, 1, 1))]), 8)                        # pointwise project
    p = g.op("Relu", [g.op("Add", [p, t])])                                                      # residual
    q = g.op("Conv", [p, g.const(rand(rng, 8, 4, 3, 3))], group=2, strides=[2, 2], pads=[1, 1, 1, 1])
    g.output(g.op("LeakyRelu", [bn(g, rng, q, 8)], alpha=0.2), "y")
    return g


def conv_bn_activations_separate(GraphBuilder, rng):
    """One conv per activation (so each conv output has one consumer), each with BN folded in."""
    g = GraphBuilder("conv_bn_each_activation", opset=17)
    x = g.input("x", [1, 3, 6, 6])
    acts = {
        "relu": lambda t: g.op("Relu", [t]),
        "relu6": lambda t: g.op("Clip", [t, g.const(np.float32(0)), g.const(np.float32(6))]),
        "clip_max_only": lambda t: g.op("Clip", [t, None, g.const(np.float32(0.5))]),
        "leaky": lambda t: g.op("LeakyRelu", [t], alpha=0.2),
        "sigmoid": lambda t: g.op("Sigmoid", [t]),
        "hard_sigmoid": lambda t: g.op("HardSigmoid", [t], alpha=0.25, beta=0.4),
        "hard_swish": lambda t: g.op("HardSwish", [t]),
        "silu": lambda t: g.op("Mul", [t, g.op("Sigmoid", [t])]),
        "tanh": lambda t: g.op("Tanh", [t]),
    }
    for name, act in acts.items():
        t = g.op("Conv", [x, g.const(rand(rng, 4, 3, 3, 3)), g.const(rand(rng, 4))], pads=[1, 1, 1, 1])
        t = g.op("Mul", [t, g.const(rng.uniform(0.5, 2, (4, 1, 1)).astype(np.float32))])  # Conv + Mul
        t = g.op("Add", [g.const(rand(rng, 1, 4, 1, 1)), t])                               # Conv + Add
        g.output(act(bn(g, rng, t, 4)), name)
    return g


def conv_transpose_bn_relu(GraphBuilder, rng):
    """ConvTranspose (grouped) + BN + residual + Relu; ConvTranspose + Sigmoid."""
    g = GraphBuilder("conv_transpose_bn_relu", opset=17)
    x = g.input("x", [1, 4, 5, 5])
    z = g.input("z", [1, 6, 10, 10])
    t = g.op("ConvTranspose", [x, g.const(rand(rng, 4, 3, 2, 2)), g.const(rand(rng, 6))], group=2, strides=[2, 2])
    g.output(g.op("Relu", [g.op("Add", [bn(g, rng, t, 6), z])]), "y")
    u = g.op("ConvTranspose", [x, g.const(rand(rng, 4, 2, 3, 3))], strides=[2, 2], pads=[1, 1, 1, 1],
             output_padding=[1, 1])
    g.output(g.op("Sigmoid", [u]), "s")
    return g


def matmul_epilogues(GraphBuilder, rng):
    """Gemm + Relu, Gemm + BatchNorm1d, MatMul + bias + Gelu (erf and tanh), MatMul + bias + residual."""
    g = GraphBuilder("matmul_epilogues", opset=20)
    x = g.input("x", [3, 16])
    h = g.op("Relu", [g.op("Gemm", [x, g.const(rand(rng, 8, 16)), g.const(rand(rng, 8))], transB=1)])
    b = g.op("Gemm", [h, g.const(rand(rng, 8, 6))])
    g.output(bn(g, rng, b, 6), "gemm_bn")
    s = g.input("s", [2, 5, 16])
    m = g.op("Add", [g.op("MatMul", [s, g.const(rand(rng, 16, 12))]), g.const(rand(rng, 12))])
    gelu = g.op("Gelu", [m])
    m2 = g.op("Add", [g.op("MatMul", [gelu, g.const(rand(rng, 12, 16))]), g.const(rand(rng, 1, 16))])
    g.output(g.op("Add", [s, m2]), "residual")
    t = g.op("Add", [g.op("MatMul", [s, g.const(rand(rng, 16, 4))]), g.const(rand(rng, 4))])
    g.output(g.op("Gelu", [t], approximate="tanh"), "gelu_tanh")
    return g


def convnext_stage(GraphBuilder, rng):
    """Two ConvNeXt blocks after a downsampling conv: depthwise 7x7, Transpose to NHWC, LayerNorm,
    pointwise MatMuls with Gelu, Transpose back, layer scale, residual (torchvision's CNBlock)."""
    g = GraphBuilder("convnext_stage", opset=20)
    x = g.input("x", [1, 4, 12, 12])
    r = g.op("Conv", [x, g.const(rand(rng, 8, 4, 2, 2)), g.const(rand(rng, 8))], strides=[2, 2])
    for _ in range(2):
        d = g.op("Conv", [r, g.const(rand(rng, 8, 1, 7, 7)), g.const(rand(rng, 8))], group=8, pads=[3, 3, 3, 3])
        t = g.op("Transpose", [d], perm=[0, 2, 3, 1])
        n = g.op("LayerNormalization", [t, g.const(rand(rng, 8)), g.const(rand(rng, 8))], axis=-1, epsilon=1e-6)
        h = g.op("Gelu", [g.op("Add", [g.op("MatMul", [n, g.const(rand(rng, 8, 32))]), g.const(rand(rng, 32))])])
        m = g.op("Add", [g.op("MatMul", [h, g.const(rand(rng, 32, 8))]), g.const(rand(rng, 8))])
        back = g.op("Transpose", [m], perm=[0, 3, 1, 2])
        r = g.op("Add", [g.op("Mul", [g.const(rng.uniform(0.5, 2, (8, 1, 1)).astype(np.float32)), back]), r])
    g.output(r, "y")
    return g


GRAPHS = {
    "convnext_stage": (convnext_stage, {"FusedMatMul": 4}, {"Mul", "FusedMul", "Add", "MatMul", "Gelu"}),
    "conv_block_chain": (conv_block_chain, {"FusedConv": 5},
                         {"BatchNormalization", "Relu", "Clip", "HardSwish", "LeakyRelu", "Add", "Mul", "Conv"}),
    "conv_bn_each_activation": (conv_bn_activations_separate, {"FusedConv": 9},
                                {"BatchNormalization", "Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid",
                                 "HardSwish", "Tanh", "Mul", "Add", "Conv"}),
    "conv_transpose_bn_relu": (conv_transpose_bn_relu, {"FusedConvTranspose": 2},
                               {"BatchNormalization", "Relu", "Sigmoid", "Add", "Mul", "ConvTranspose"}),
    "matmul_epilogues": (matmul_epilogues, {"FusedMatMul": 5},
                         {"Gemm", "MatMul", "Relu", "Gelu", "Add", "Mul", "BatchNormalization"}),
}


def ops_of(onnx_path):
    import onnx

    model = onnx.load(str(onnx_path))
    return Counter(n.op_type for n in model.graph.node), {n.op_type: n.domain for n in model.graph.node}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_fused_graph_converts_runs_and_matches_onnxruntime(name, tmp_path):
    GraphBuilder = onnx_modules()
    import onnx
    import onnxruntime as ort

    build, want_ops, gone_ops = GRAPHS[name]
    g = build(GraphBuilder, np.random.default_rng(0))
    proto, specs, outputs = g.build()
    src, out, report = tmp_path / f"{name}.onnx", tmp_path / "out.onnx", tmp_path / "report.json"
    onnx.save(proto, str(src))

    shapes = [a for s in specs for a in ("--shape", f"{s['name']}={'x'.join(map(str, s['shape']))}")]
    # The cpu target has no FusedConvTranspose kernel (passes/target.h: it does not ask for
    # the fusion), so that graph is fused for the reference target, which executes every op.
    target = "reference" if "FusedConvTranspose" in want_ops else "cpu"
    proc = ferry("convert", src, "-o", out, "--target", target, "--report", report, "--check-passes", *shapes)
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts, domains = ops_of(out)
    for op, n in want_ops.items():
        assert counts[op] == n, f"{op}: {counts[op]} in the converted graph, want {n}: {dict(counts)}"
        assert domains[op] == "ferry"
    assert not (gone_ops & set(counts)), f"left unfused: {sorted(gone_ops & set(counts))} in {dict(counts)}"

    feeds = make_inputs(specs, seed=0)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(src), opts, providers=["CPUExecutionProvider"])
    expected = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))

    in_dir, out_dir = tmp_path / "in", tmp_path / "outputs"
    in_dir.mkdir()
    cmd = ["run", out, "--output-dir", out_dir]
    for i, (input_name, arr) in enumerate(feeds.items()):
        np.save(in_dir / f"{i}.npy", arr)
        cmd += ["--input", f"{input_name}={in_dir / f'{i}.npy'}"]
    proc = ferry(*cmd)
    assert proc.returncode == 0, f"ferry run on the converted model failed:\n{proc.stderr[-3000:]}"
    for out_name, want in expected.items():
        got = np.load(out_dir / f"{out_name}.npy")
        assert got.shape == want.shape and got.dtype == want.dtype, out_name
        err = np.abs(got.astype(np.float64) - want) / np.maximum(1.0, np.abs(want))
        assert err.max() <= RTOL, f"output {out_name}: max relative error {err.max():.3g}"

    rep = json.loads(report.read_text())
    passes = {p["name"] for p in rep["passes"]}
    assert {"fuse_affine_into_conv", "fuse_conv_epilogue", "fuse_matmul_epilogue"} <= passes


@pytest.mark.parametrize("caps", [{}, {"ONEDNN_MAX_CPU_ISA": "AVX2", "FERRY_CPU_MAX_ISA": "avx2"}],
                         ids=["host", "avx2_caps"])
def test_convnext_stage_runs_without_a_step_for_its_transposes(caps, tmp_path):
    """ConvNeXt's NCHW <-> NHWC Transposes are views on the cpu target: of the channels-last conv
    output on AVX-512, of a reorder of the nChw8c one into channels-last under the AVX2 caps (not a
    reorder to plain plus a transpose copy); the layer scale and residual are in the MatMul (no
    FusedMul step). Outputs match ONNX Runtime either way, layer by layer too."""
    GraphBuilder = onnx_modules()
    import onnx
    import onnxruntime as ort

    proto, specs, _ = convnext_stage(GraphBuilder, np.random.default_rng(0)).build()
    src = tmp_path / "convnext_stage.onnx"
    onnx.save(proto, str(src))
    trace = tmp_path / "trace.json"
    proc = ferry("bench", src, "--warmup", "0", "--iters", "1", "--threads", "2", "--profile", trace, env=caps)
    assert proc.returncode == 0, proc.stderr[-3000:]
    steps = [(e["cat"], e["args"]["kernel"]) for e in json.loads(trace.read_text())["traceEvents"] if e.get("ph") == "X"]
    assert not [s for s in steps if s[0] in ("Transpose", "FusedMul", "Mul", "Add")], steps
    assert [s for s in steps if s[0] == "FusedMatMul"], steps

    feeds = make_inputs(specs, seed=0)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(str(src), opts, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    np.save(tmp_path / "x.npy", feeds["x"])
    proc = ferry("run", src, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "out", env=caps)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = np.load(tmp_path / "out" / "y.npy")
    assert np.max(np.abs(got.astype(np.float64) - want) / np.maximum(1.0, np.abs(want))) <= RTOL
    # Layer by layer too: the values the rewrites made stand for the right source tensors.
    proc = ferry("validate", src, "--per-layer", env=caps)
    assert proc.returncode == 0 and "all within tolerance" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-2000:]


# --- op counts on the model set ---------------------------------------------------------------------

COUNT_CASES = {
    # model: ops that must not remain after optimizing
    "resnet50": {"BatchNormalization", "Relu"},
    "mobilenet_v3_small": {"HardSwish", "HardSigmoid", "BatchNormalization"},
    "mobilenet_v3_large": {"HardSwish", "HardSigmoid", "BatchNormalization"},
    "efficientnet_b0": {"Sigmoid", "BatchNormalization"},
    "mobilenet_v2": {"Clip", "BatchNormalization"},
}


def _count_params():
    params = []
    for name in COUNT_CASES:
        params.append(pytest.param(name, "small", id=f"small-{name}"))
        params.append(pytest.param(name, "full", id=f"full-{name}", marks=pytest.mark.full))
    return params


def optimized_histogram(meta):
    proc = ferry("inspect", meta["path"], "--optimized", "--json", timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)["op_histogram"]


@pytest.mark.parametrize("name,size", _count_params())
def test_no_standalone_ops_left(name, size):
    meta = models.ensure_model("torch", name, size)
    hist = optimized_histogram(meta)
    left = {op: hist[op] for op in COUNT_CASES[name] if op in hist}
    assert not left, f"{name} ({size}) still has {left} after optimizing; histogram {hist}"
    assert hist.get("FusedConv", 0) > 0, hist


def test_resnet50_convs_all_fused_with_their_relus():
    """ResNet-50: every Relu is absorbed by the conv before it (with the residual Add where there is one);
    only the 4 downsample convs, whose output is another conv's residual input, stay plain Convs."""
    import onnx

    meta = models.ensure_model("torch", "resnet50", "small")
    source = Counter(n.op_type for n in onnx.load(str(meta["path"])).graph.node)
    hist = optimized_histogram(meta)
    assert hist.get("Conv", 0) == source["Conv"] - hist.get("FusedConv", 0)
    assert hist.get("FusedConv", 0) == source["Relu"], hist  # every Relu follows a conv (+ BN) or a residual Add
    assert "Add" not in hist, hist  # residual Adds became FusedConv inputs, the fc bias a FusedMatMul bias
    assert hist.get("FusedMatMul", 0) == 1, hist
