"""End to end: Keras models exported by TensorFlow, run by ferry, checked against TensorFlow.

gen/make_tf_models.py writes each model as a SavedModel directory and as a
frozen GraphDef, with seeded inputs and TensorFlow's outputs on them (cached
under tests/models/generated/tf/, regenerated when the generator changes;
generating needs tensorflow-cpu). Each form runs through

    ferry run MODEL --input NAME=FILE.npy --output-dir DIR

and every output must match TensorFlow's:
    |ferry - tf| <= 1e-4 * max(1, |tf|)   per element; shapes equal.

Malformed SavedModels (made by corrupting a copy of a generated one) must be
rejected with a clear message and exit status 2, never a crash.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import json
import numpy as np
import pytest

from model_cache import cache_dir, ferry_binary, unavailable

import make_tf_models
from common import generator_hash, read_sidecar

RTOL = 1e-4
TIMEOUT_S = 600
# Run by default (a few seconds each once generated); the rest are marked `full`.
DEFAULT_MODELS = ["mobilenet_v2", "resnet50", "transformer_encoder", "transformer_encoder_dynamic", "mixed_ops", "raw_ops",
                  "grouped_conv", "math_ops", "select_ops"]
# Models of TensorFlow ops one by one (op coverage), not convnets: the layout test does not apply.
OP_COVERAGE_MODELS = ["math_ops", "select_ops"]


def tensorflow_python():
    """An interpreter with tensorflow: this one (TensorFlow itself runs in a subprocess, never in pytest)."""
    r = subprocess.run([sys.executable, "-c", "import tensorflow"], capture_output=True, text=True)
    if r.returncode != 0:
        unavailable(f"tensorflow not importable in {sys.executable}: {r.stderr.strip().splitlines()[-1:]}")
    return sys.executable


def ensure_tf_model(name):
    out = cache_dir("tf")
    meta = read_sidecar(out, name)
    fresh = meta is not None and meta.get("generator") == generator_hash(*make_tf_models.SOURCES) \
        and (out / name / "expected.npz").exists()
    if not fresh:
        r = subprocess.run([tensorflow_python(), str(Path(make_tf_models.__file__)), name, "--out", str(out)],
                           capture_output=True, text=True, timeout=3600)
        assert r.returncode == 0, f"generating {name} failed:\n{r.stderr[-4000:]}"
        meta = read_sidecar(out, name)
    meta["dir"] = out / name
    meta["root"] = out
    return meta


def ferry():
    exe = ferry_binary()
    if exe is None:
        unavailable("ferry binary not built (set FERRY_BIN or build build/ferry)")
    return exe


def run_ferry(*args, timeout=TIMEOUT_S):
    # errors="backslashreplace": a corrupted file's bytes can reach an error message (see the notes).
    return subprocess.run([str(ferry()), *map(str, args)], capture_output=True, text=True,
                          errors="backslashreplace", timeout=timeout)


def _params():
    out = []
    for name in make_tf_models.MODEL_NAMES:
        marks = [] if name in DEFAULT_MODELS else [pytest.mark.full]
        for form in ("saved_model", "frozen"):
            out.append(pytest.param(name, form, id=f"{name}-{form}", marks=marks))
    return out


# Transposes left after optimizing, per model: one at the NHWC graph input where the
# model has convolutions. mixed_ops keeps a second: its Dense layer runs on the
# [N, H*W, C] sequence a Reshape makes of NHWC data (Tensordot: Reshape to
# [N*H*W, C], MatMul over C), so after the last convolution the NCHW result must
# be put back in channel-last order once; it is a [0,2,1] Transpose of the
# flattened sequence, between the last Conv and the MatMul, not between convolutions.
# raw_ops: einsum "abc,abd->acd" sums over b, so lower_einsum moves A's b last for the MatMul.
EXPECTED_TRANSPOSES = {"mobilenet_v2": 1, "resnet50": 1, "grouped_conv": 1, "mixed_ops": 2,
                       "transformer_encoder": 0, "transformer_encoder_dynamic": 0, "raw_ops": 1}
CONV_LIKE = {"Conv", "FusedConv", "ConvTranspose", "AveragePool", "MaxPool", "GlobalAveragePool", "GlobalMaxPool"}


def transposes_around_convs(onnx_file):
    """For each Transpose of the ONNX graph: (name, a conv/pool upstream, a conv/pool downstream, a MatMul downstream)."""
    import onnx

    graph = onnx.load(str(onnx_file)).graph
    producer = {o: n for n in graph.node for o in n.output}
    consumers = {}
    for n in graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    def reaches(node, step, ops):
        seen, todo = set(), list(step(node))
        while todo:
            n = todo.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if n.op_type in ops:
                return True
            todo.extend(step(n))
        return False

    up = lambda n: [producer[i] for i in n.input if i in producer]
    down = lambda n: [c for o in n.output for c in consumers.get(o, [])]
    return [(n.name, reaches(n, up, CONV_LIKE), reaches(n, down, CONV_LIKE), reaches(n, down, {"MatMul", "FusedMatMul"}))
            for n in graph.node if n.op_type == "Transpose"]


@pytest.mark.parametrize("name", [m for m in DEFAULT_MODELS if m not in OP_COVERAGE_MODELS])
@pytest.mark.parametrize("form", ["saved_model", "frozen"])
def test_nhwc_transposes_only_at_the_boundary_after_optimizing(name, form, tmp_path):
    """Issue 6: NHWC is imported faithfully (a Transpose around every Conv and pool) and the
    optimizer's layout passes leave no Transpose between convolutions: only the one at the
    graph input (and mixed_ops' Dense on a flattened sequence, see EXPECTED_TRANSPOSES)."""
    meta = ensure_tf_model(name)
    model = meta["root"] / meta[form]["file"]
    before = json.loads(run_ferry("inspect", model, "--json").stdout)["op_histogram"]
    r = run_ferry("inspect", model, "--optimized", "--json")
    assert r.returncode == 0, r.stderr
    after = json.loads(r.stdout)["op_histogram"]
    convs = sum(before.get(op, 0) for op in CONV_LIKE)
    if convs:
        assert before.get("Transpose", 0) >= 2 * convs, before
    assert after.get("Transpose", 0) == EXPECTED_TRANSPOSES[name], after

    onnx_file = tmp_path / "optimized.onnx"
    r = run_ferry("convert", model, "-o", onnx_file)
    assert r.returncode == 0, r.stderr
    found = transposes_around_convs(onnx_file)
    assert len(found) == EXPECTED_TRANSPOSES[name], found
    assert not [t for t, conv_up, conv_down, _ in found if conv_up and conv_down], f"between convolutions: {found}"
    # The input's: nothing but layout-agnostic ops (a Pad) before it, convolutions after.
    assert len([t for t, conv_up, conv_down, _ in found if not conv_up and conv_down]) == (1 if convs else 0), found
    # mixed_ops' second: after the last convolution, on the way to the Dense layer's MatMul.
    rest = [(t, matmul) for t, conv_up, conv_down, matmul in found if conv_up]
    assert len(rest) == (1 if name == "mixed_ops" else 0) and all(matmul for _, matmul in rest), found


@pytest.mark.parametrize("name,form", _params())
def test_tf_model_matches_tensorflow(name, form, tmp_path):
    meta = ensure_tf_model(name)
    spec = meta[form]
    model = meta["root"] / spec["file"]
    x = np.load(meta["dir"] / "inputs.npz")["input"]
    in_file = tmp_path / "input.npy"
    np.save(in_file, x)
    expected = np.load(meta["dir"] / "expected.npz")
    r = run_ferry("run", model, "--input", f"{spec['inputs'][0]}={in_file}", "--output-dir", tmp_path / "out")
    assert r.returncode == 0, f"ferry run failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    for out_name in spec["outputs"]:
        ref = expected[f"{form}:{out_name}"]
        got = np.load(tmp_path / "out" / f"{out_name}.npy")
        assert got.shape == ref.shape, f"{out_name}: shape {got.shape}, TensorFlow {ref.shape}"
        err = np.abs(got.astype(np.float64) - ref) / np.maximum(1.0, np.abs(ref))
        assert err.max() <= RTOL, f"{out_name}: max relative error {err.max():.3g} > {RTOL}"


@pytest.mark.parametrize("name", ["transformer_encoder", "transformer_encoder_dynamic"])
@pytest.mark.parametrize("form", ["saved_model", "frozen"])
def test_keras_multi_head_attention_is_one_attention_node(name, form, tmp_path):
    """Keras MultiHeadAttention (einsum form, scores scaled after the einsum in Keras 3; the
    dynamic variant has a symbolic sequence axis) becomes one Attention node; the numbers are
    checked against TensorFlow by test_tf_model_matches_tensorflow."""
    import onnx

    meta = ensure_tf_model(name)
    out = tmp_path / "optimized.onnx"
    r = run_ferry("convert", meta["root"] / meta[form]["file"], "-o", out)
    assert r.returncode == 0, r.stdout + r.stderr
    ops = [n.op_type for n in onnx.load(str(out)).graph.node]
    assert ops.count("Attention") == 1 and "Softmax" not in ops, ops


@pytest.mark.parametrize("form", ["saved_model", "frozen"])
def test_bench_and_convert_take_tf_models(form, tmp_path):
    """Issue 6: every command takes a TF model. `bench` measures it; `convert` writes an
    ONNX file that ferry runs again with TensorFlow's results."""
    meta = ensure_tf_model("mixed_ops")
    spec = meta[form]
    model = meta["root"] / spec["file"]
    r = run_ferry("bench", model, "--warmup", "1", "--iters", "3", "--json")
    assert r.returncode == 0, f"ferry bench failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    stats = json.loads(r.stdout)
    assert stats["latency_ms"]["p50"] > 0 and stats["throughput_per_s"] > 0, stats

    onnx_file = tmp_path / "converted.onnx"
    r = run_ferry("convert", model, "-o", onnx_file)
    assert r.returncode == 0, f"ferry convert failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    in_file = tmp_path / "input.npy"
    np.save(in_file, np.load(meta["dir"] / "inputs.npz")["input"])
    expected = np.load(meta["dir"] / "expected.npz")
    r = run_ferry("run", onnx_file, "--input", f"{spec['inputs'][0]}={in_file}", "--output-dir", tmp_path / "out")
    assert r.returncode == 0, f"ferry run of the converted model failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    for out_name in spec["outputs"]:
        ref = expected[f"{form}:{out_name}"]
        got = np.load(tmp_path / "out" / f"{out_name}.npy")
        assert got.shape == ref.shape
        err = np.abs(got.astype(np.float64) - ref) / np.maximum(1.0, np.abs(ref))
        assert err.max() <= RTOL, f"{out_name}: max relative error {err.max():.3g} > {RTOL}"


# --- malformed SavedModels -------------------------------------------------------------


@pytest.fixture
def saved_model_copy(tmp_path):
    meta = ensure_tf_model("mixed_ops")
    dst = tmp_path / "model"
    shutil.copytree(meta["root"] / meta["saved_model"]["file"], dst)
    return dst


def expect_model_error(path, *needles, extra=()):
    r = run_ferry("inspect", path, *extra)
    assert r.returncode == 2, f"expected exit 2, got {r.returncode}:\n{r.stdout}\n{r.stderr}"
    text = r.stdout + r.stderr
    for needle in needles:
        assert needle in text, f"{needle!r} not in:\n{text}"


def test_missing_variables_dir(saved_model_copy):
    shutil.rmtree(saved_model_copy / "variables")
    expect_model_error(saved_model_copy, "no variables/ directory")


def test_truncated_index(saved_model_copy):
    index = saved_model_copy / "variables" / "variables.index"
    data = index.read_bytes()
    index.write_bytes(data[: len(data) // 2])
    expect_model_error(saved_model_copy, "variables.index", "checkpoint index")


def test_corrupt_index_block(saved_model_copy):
    index = saved_model_copy / "variables" / "variables.index"
    data = bytearray(index.read_bytes())
    data[3] ^= 0xFF  # inside the first data block: its checksum no longer matches
    index.write_bytes(bytes(data))
    expect_model_error(saved_model_copy, "checksum mismatch")


def test_truncated_checkpoint_data(saved_model_copy):
    shard = next((saved_model_copy / "variables").glob("variables.data-*"))
    data = shard.read_bytes()
    shard.write_bytes(data[: len(data) // 3])
    expect_model_error(saved_model_copy, "checkpoint is truncated")


def test_corrupt_checkpoint_data(saved_model_copy):
    shard = next((saved_model_copy / "variables").glob("variables.data-*"))
    data = bytes(b ^ 0x55 for b in shard.read_bytes())  # every tensor (and the object graph) corrupt
    shard.write_bytes(data)
    expect_model_error(saved_model_copy, "checkpoint")


def test_shard_outside_model_dir(saved_model_copy, tmp_path):
    shard = next((saved_model_copy / "variables").glob("variables.data-*"))
    outside = tmp_path / "elsewhere.data"
    shutil.move(shard, outside)
    os.symlink(outside, shard)
    expect_model_error(saved_model_copy, "outside the model directory")


def test_missing_saved_model_pb(saved_model_copy):
    (saved_model_copy / "saved_model.pb").unlink()
    expect_model_error(saved_model_copy, "no saved_model.pb")


def test_garbage_saved_model_pb(saved_model_copy):
    (saved_model_copy / "saved_model.pb").write_bytes(b"\xff\xff\xff\xff not a protobuf")
    expect_model_error(saved_model_copy, "saved_model.pb")


def test_unknown_signature(saved_model_copy):
    expect_model_error(saved_model_copy, "no signature 'nope'", "serving_default", extra=("--signature", "nope"))


def test_truncated_frozen_graph(tmp_path):
    meta = ensure_tf_model("mixed_ops")
    data = (meta["root"] / meta["frozen"]["file"]).read_bytes()
    bad = tmp_path / "bad.pb"
    bad.write_bytes(data[: len(data) // 2])
    expect_model_error(bad, "bad.pb")


# --- ferry validate --reference tensorflow -----------------------------------------------


def per_layer_counts(stdout):
    """(compared, total) from the "per-layer: C of T node outputs" line of `ferry validate`."""
    line = next(l for l in stdout.splitlines() if "per-layer:" in l)
    compared, total = (int(w) for w in line.split("per-layer:")[1].split("node outputs")[0].split(" of "))
    return compared, total


def validate_env():
    return dict(os.environ, FERRY_PYTHON=tensorflow_python())  # the validate bridge runs TensorFlow in it


@pytest.mark.parametrize("form", ["frozen", "saved_model"])
# mobilenet_v2: fused Conv+BN+Relu6 nodes named after their conv must be compared with the
# Relu6's tensor, not the conv's that shares their name (a false divergence before).
@pytest.mark.parametrize("name", ["mixed_ops", "mobilenet_v2"])
def test_validate_against_tensorflow(name, form, tmp_path):
    meta = ensure_tf_model(name)
    model = meta["root"] / meta[form]["file"]
    r = subprocess.run([str(ferry()), "validate", str(model), "--per-layer", "--json", str(tmp_path / "v.json")],
                       capture_output=True, text=True, timeout=TIMEOUT_S, env=validate_env())
    assert r.returncode == 0, f"ferry validate failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    report = json.loads((tmp_path / "v.json").read_text())
    assert "tensorflow" in json.dumps(report)
    # Layers match TensorFlow's tensors: most node outputs have a reference. A SavedModel's
    # nodes are inlined from its functions; the bridge freezes the signature's function and
    # names its tensors as ferry names the inlined nodes ("<call node>/<node>").
    compared, total = per_layer_counts(r.stdout)
    assert compared >= total // 2, r.stdout
    layers = report["samples"][0]["per_layer"]["layers"]
    assert len(layers) == compared and all(l["pass"] for l in layers)
    if form == "saved_model":
        inlined = [l for l in layers if l["reference_tensor"].startswith("StatefulPartitionedCall/StatefulPartitionedCall/")]
        assert len(inlined) >= total // 2, [l["reference_tensor"] for l in layers]


def test_saved_model_per_layer_names_the_node_of_a_perturbed_tensor(tmp_path):
    """Fault injection: TensorFlow's reference for a SavedModel saved with its intermediates,
    one intermediate perturbed; `--per-layer` names the ferry node made from that TF node."""
    meta = ensure_tf_model("mixed_ops")
    model = meta["root"] / meta["saved_model"]["file"]
    golden = tmp_path / "golden"
    r = subprocess.run([str(ferry()), "validate", str(model), "--per-layer", "--save-reference", str(golden),
                        "--json", str(tmp_path / "ok.json")],
                       capture_output=True, text=True, timeout=TIMEOUT_S, env=validate_env())
    assert r.returncode == 0, f"ferry validate failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    layers = json.loads((tmp_path / "ok.json").read_text())["samples"][0]["per_layer"]["layers"]
    # A float layer in the middle of the network (past the first convolution).
    floats = [l for l in layers if l["dtype"] == "f32" and l["index"] > 0]
    victim = floats[len(floats) // 2]
    manifest = json.loads((golden / "manifest.json").read_text())
    assert victim["reference_tensor"] in manifest["intermediates"]
    source = next(n for n, outs in manifest["nodes"].items() if victim["reference_tensor"] in outs)
    path = golden / manifest["tensors"][victim["reference_tensor"]]
    arr = np.load(path)
    np.save(path, arr + np.float32(1.0))

    r = run_ferry("validate", model, "--reference", f"golden:{golden}", "--per-layer", "--json", tmp_path / "bad.json")
    assert r.returncode == 3, f"expected a mismatch (3), got {r.returncode}:\n{r.stdout}\n{r.stderr}"
    assert f"first divergent node '{victim['node']}'" in r.stdout, r.stdout
    sample = json.loads((tmp_path / "bad.json").read_text())["samples"][0]
    d = sample["per_layer"]["first_divergence"]
    assert d["node"] == victim["node"] and d["reference_tensor"] == victim["reference_tensor"]
    assert source in d["provenance"], (source, d["provenance"])
    assert d["pass"] is False and d["metrics"]["max_abs"] == pytest.approx(1.0, abs=1e-3)
    # Only the golden intermediate was edited: the output still agrees.
    assert sample["outputs"][0]["pass"] is True


@pytest.mark.parametrize("victim", ["saved_model.pb", "variables/variables.index"])
def test_truncations_and_bit_flips_never_crash(victim, saved_model_copy):
    """Every cut and flip of a SavedModel file is an error (exit 2, one message) or still imports: never a crash."""
    path = saved_model_copy / victim
    original = path.read_bytes()
    rng = np.random.default_rng(7)
    variants = [original[:n] for n in sorted(set(rng.integers(0, len(original), 12).tolist()))]
    for pos in rng.integers(0, len(original), 12).tolist():
        b = bytearray(original)
        b[pos] ^= 1 << int(rng.integers(0, 8))
        variants.append(bytes(b))
    for data in variants:
        path.write_bytes(data)
        r = run_ferry("inspect", saved_model_copy, timeout=120)
        assert r.returncode in (0, 2), f"exit {r.returncode} for a {len(data)}-byte {victim}:\n{r.stderr}"
        if r.returncode == 2:
            lines = [l for l in r.stderr.splitlines() if l.strip()]
            assert len(lines) == 1 and lines[0].startswith("ferry: error:"), r.stderr


# --- ferry ops -----------------------------------------------------------------------------


def test_ops_table_is_the_committed_doc():
    """docs/tensorflow_ops.md is `ferry ops --framework tensorflow --markdown`, and lists the issue's ops."""
    from model_cache import REPO

    r = run_ferry("ops", "--framework", "tensorflow", "--markdown", timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (REPO / "docs" / "tensorflow_ops.md").read_text(), \
        "docs/tensorflow_ops.md is stale: regenerate it with build/ferry ops --markdown > docs/tensorflow_ops.md"
    listed = {line.split("|")[1].strip() for line in r.stdout.splitlines() if line.startswith("| ") and "---" not in line}
    required = """Conv2D DepthwiseConv2dNative BiasAdd FusedBatchNormV3 MatMul BatchMatMulV2 Relu Relu6 Elu Selu
        Sigmoid Tanh Softmax Swish Erf Add AddV2 Sub Mul RealDiv Maximum Minimum Rsqrt Square SquaredDifference
        Mean Sum Max MaxPool AvgPool Pad MirrorPad ConcatV2 Reshape Transpose Squeeze ExpandDims Shape StridedSlice
        Pack Unpack Split SplitV GatherV2 Fill Range Cast Identity IdentityN NoOp Placeholder Const ResizeBilinear
        ResizeNearestNeighbor Einsum""".split()
    assert not [op for op in required if op not in listed]
    r = run_ferry("ops", "--framework", "onnx", timeout=60)
    assert r.returncode == 0 and "Conv " in r.stdout


def test_inspect_lists_every_unsupported_tf_op(tmp_path):
    """A frozen graph with two unknown ops: inspect names both, with the reason, and exits 2."""
    meta = ensure_tf_model("raw_ops")
    bad = tmp_path / "custom.pb"
    edit = (
        "import sys\n"
        "from tensorflow.core.framework import graph_pb2\n"
        "g = graph_pb2.GraphDef()\n"
        "g.ParseFromString(open(sys.argv[1], 'rb').read())\n"
        "n = 0\n"
        "for node in g.node:\n"
        "    if node.op in ('Softplus', 'Einsum'):\n"
        "        node.op = 'MyCustom' + node.op\n"
        "        n += 1\n"
        "open(sys.argv[2], 'wb').write(g.SerializeToString())\n"
        "print(n)\n"
    )
    r = subprocess.run([tensorflow_python(), "-c", edit, str(meta["root"] / meta["frozen"]["file"]), str(bad)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    renamed = int(r.stdout.strip().splitlines()[-1])
    r = run_ferry("inspect", bad)
    assert r.returncode == 2
    assert f"{renamed} unsupported nodes" in r.stdout, r.stdout
    assert "MyCustomSoftplus" in r.stdout and "MyCustomEinsum" in r.stdout and "no importer for this op" in r.stdout
