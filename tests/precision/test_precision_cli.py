"""Mixed precision end to end (docs/precision.md): `ferry convert --precision`, the accuracy
guard, the decisions saved in the ONNX model and read back by `ferry run` and the Python
package, `--precision auto` on this CPU, and the CLI errors.

The emulation is checked against numpy: Neg(x) under bf16 / fp16 must equal
-(x rounded by ml_dtypes.bfloat16 / numpy.float16), bit for bit, on edge values (ties,
subnormals, overflow, NaN, Inf), on the reference and the cpu backend.

The precision-sensitive model: fc1 -> ln_big (LayerNormalization, scale 1e5: its
activations exceed fp16's 65504) -> ln_norm (LayerNormalization over those large
activations, back to O(1)) -> fc2 -> softmax. Under fp16 the guard must keep exactly
ln_big in fp32 (its output overflows; every other node stays within the budget).

FERRY_BIN names the binary (default: build/ferry). Under CI=true missing prerequisites fail.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(what):
    if IN_CI:
        pytest.fail(f"{what} (CI=true: missing prerequisites are failures)", pytrace=False)
    pytest.skip(what)


try:
    import ml_dtypes
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # reported per test
    np = onnx = ml_dtypes = None
    IMPORT_ERROR = str(e)
else:
    IMPORT_ERROR = ""


@pytest.fixture(scope="module")
def ferry_bin(ferry_cli):
    if IMPORT_ERROR:
        unavailable(f"numpy / onnx / ml_dtypes not importable: {IMPORT_ERROR}")
    return ferry_cli


def ferry(bin_path, *args, expect=0):
    r = subprocess.run([str(bin_path), *map(str, args)], capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == expect, f"ferry {' '.join(map(str, args))}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def neg_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])
    g = helper.make_graph([helper.make_node("Neg", ["x"], ["y"], name="neg")], "neg", [x], [y])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def edge_values():
    """Ties, subnormals, overflow, NaN and Inf for both formats, then random values over a wide range."""
    f = np.float32
    special = [1 + 2.0**-8, 1 + 3 * 2.0**-8, 1 + 2.0**-11, 1 + 3 * 2.0**-11, 65504, 65519, 65520, 1e5, -1e5,
               2.0**-24, 2.0**-25, 3 * 2.0**-25, 2.0**-26, 2.0**-133, 2.0**-134, 3 * 2.0**-134, 3.4e38,
               np.inf, -np.inf, np.nan, 0.0, -0.0, 0.1, -2.5]
    rng = np.random.default_rng(0)
    rest = rng.standard_normal(64 - len(special)) * np.exp(rng.uniform(-20, 20, 64 - len(special)))
    return np.concatenate([np.array(special, dtype=f), rest.astype(f)])


@pytest.mark.parametrize("backend", ["reference", "cpu"])
@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_emulation_rounds_like_numpy(ferry_bin, ferry_api, tmp_path, backend, precision):
    path = tmp_path / "neg.onnx"
    neg_model(path)
    x = edge_values()
    session = ferry_api.load(str(path)).compile(backend=backend, precision=precision)
    got = session.run({"x": x})["y"]
    storage = ml_dtypes.bfloat16 if precision == "bf16" else np.float16
    with np.errstate(over="ignore"):  # fp16 overflow to Inf is the point
        want = (-x).astype(storage).astype(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    assert np.array_equal(got[finite].view(np.uint32), want[finite].view(np.uint32)), (
        f"{precision} on {backend}: {x[finite][got[finite] != want[finite]]}")
    nodes = session.precision["nodes"]
    assert [(n["node"], n["precision"], n["exec"]) for n in nodes] == [("neg", precision, "emulated")]
    assert "no speedup" in nodes[0]["reason"]


def sensitive_model(path):
    rng = np.random.default_rng(1)
    d, c = 32, 10
    w1 = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    b1 = (rng.standard_normal(d) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((d, c)) * 0.3).astype(np.float32)
    b2 = np.zeros(c, np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"), (np.full(d, 1e5, np.float32), "big_scale"),
        (np.zeros(d, np.float32), "zero"), (np.ones(d, np.float32), "one")]]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h"], name="fc1_bias"),
        helper.make_node("LayerNormalization", ["h", "big_scale", "zero"], ["big"], name="ln_big", axis=-1),
        helper.make_node("LayerNormalization", ["big", "one", "zero"], ["norm"], name="ln_norm", axis=-1),
        helper.make_node("MatMul", ["norm", "w2"], ["l0"], name="fc2"),
        helper.make_node("Add", ["l0", "b2"], ["logits"], name="fc2_bias"),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    g = helper.make_graph(nodes, "sensitive", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, d])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, c])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


@pytest.fixture(scope="module")
def converted(ferry_bin, tmp_path_factory):
    """The sensitive model converted with --precision fp16 (guard on, default budget, 8 samples)."""
    tmp = tmp_path_factory.mktemp("precision")
    src, out, report = tmp / "sensitive.onnx", tmp / "out.onnx", tmp / "report.json"
    sensitive_model(src)
    r = ferry(ferry_bin, "convert", src, "-o", out, "--precision", "fp16", "--report", report)
    return src, out, json.loads(report.read_text())["precision"], r.stdout


def by_source(nodes, name):
    """The decision for the optimized node made from source node `name` (fusions keep a source name)."""
    hits = [n for n in nodes if n["node"] == name]
    assert len(hits) == 1, f"no decision for {name}: {[n['node'] for n in nodes]}"
    return hits[0]


def test_guard_keeps_exactly_the_overflowing_layer_fp32(converted):
    _, _, prec, stdout = converted
    assert prec["mode"] == "fp16"
    fp32 = [n["node"] for n in prec["nodes"] if n["precision"] == "fp32"]
    assert fp32 == ["ln_big"], prec
    big = by_source(prec["nodes"], "ln_big")
    assert big["sensitivity"] == "inf"
    assert "raised by the accuracy guard" in big["reason"] and "NaN/Inf" in big["reason"], big["reason"]
    for n in prec["nodes"]:
        if n["node"] != "ln_big":
            assert n["precision"] == "fp16" and n["exec"] == "emulated", n
            assert isinstance(n["sensitivity"], float) and n["sensitivity"] < 1, n
    assert "raised 1 of" in prec["guard"] and "holds on 8 seeded random samples" in prec["guard"], prec["guard"]
    assert "ln_big" in stdout and "raised by the accuracy guard" in stdout


def test_decisions_round_trip_through_the_model(ferry_bin, ferry_api, converted, tmp_path):
    src, out, prec, _ = converted
    meta = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    saved = json.loads(meta["ferry.precision"])
    assert {k: v["precision"] for k, v in saved["nodes"].items()} == {n["node"]: n["precision"] for n in prec["nodes"]}
    r = ferry(ferry_bin, "run", out, "--output-dir", tmp_path)
    assert "precision saved:" in r.stderr and "fp32: 1 node" in r.stderr, r.stderr
    session = ferry_api.load(str(out)).compile()
    back = {n["node"]: n["precision"] for n in session.precision["nodes"]}
    assert back == {n["node"]: n["precision"] for n in prec["nodes"]}
    assert all(n["reason"].startswith("saved in the model: ") for n in session.precision["nodes"])
    # The lowered run stays within the budget of the fp32 run on a fresh input.
    x = np.random.default_rng(7).standard_normal((4, 32)).astype(np.float32)
    ref = ferry_api.load(str(src)).compile(precision="fp32").run({"x": x})["y"]
    got = session.run({"x": x})["y"]
    assert np.isfinite(got).all()
    cos = float(np.dot(got.ravel(), ref.ravel()) / (np.linalg.norm(got) * np.linalg.norm(ref)))
    assert cos >= 0.999, cos
    # Without the guard's decision (everything fp16), ln_big overflows.
    raw = ferry_api.load(str(src)).compile(precision="fp16").run({"x": x})["y"]
    assert np.isnan(raw).any()
    written = np.load(tmp_path / "y.npy")
    assert np.isfinite(written).all()


def host_accelerates_bf16(ferry_bin):
    """What `ferry env` says; checked against the CPU flags in test_env_reports_what_precision_can_use."""
    checks = json.loads(ferry(ferry_bin, "env", "--json", "--no-python").stdout)["checks"]
    return "--precision bf16 accelerated" in next(c for c in checks if c["name"] == "bf16")["detail"]


def test_auto_keeps_fp32_on_this_cpu_with_the_reason(ferry_bin, ferry_api, converted):
    src = converted[0]
    session = ferry_api.load(str(src)).compile(precision="auto")
    nodes = session.precision["nodes"]
    accelerated = host_accelerates_bf16(ferry_bin)
    kept = []
    for n in nodes:
        if accelerated and n["op"] in ("MatMul", "FusedMatMul"):  # fc1, fc2: oneDNN bf16 steps
            assert n["precision"] == "bf16" and n["exec"] == "accelerated", n
            assert n["reason"].startswith("auto: bf16 accelerated (oneDNN bf16 steps"), n["reason"]
            continue
        assert n["precision"] == "fp32", n
        assert "auto keeps fp32, nothing faster on this CPU" in n["reason"], n["reason"]
        kept.append(n)
    assert kept and len(kept) < len(nodes) if accelerated else len(kept) == len(nodes)
    if accelerated:
        assert "bf16: accelerated for Conv, FusedConv, MatMul, FusedMatMul with constant weights only" in kept[0]["reason"]
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu_flags = set(next((line.split(":", 1)[1].split() for line in cpuinfo if line.startswith("flags")), []))
    if not cpu_flags & {"avx512f", "avx512_bf16", "amx_bf16"} and "avx2" in cpu_flags:
        assert "bf16: no bf16 hardware: avx2 only" in nodes[0]["reason"], nodes[0]["reason"]
    r = ferry(ferry_bin, "bench", src, "--precision", "auto", "--iters", "1", "--warmup", "0", "--json")
    assert json.loads(r.stdout)["precision"] == "auto"


@pytest.mark.parametrize("args, message", [
    (["--precision", "fp8"], "--precision: unknown mode 'fp8'"),
    (["--precision", "fp16", "--accuracy-budget", "cosine>0.9"], "term 'cosine>0.9' is not NAME>=V"),
    (["--precision", "fp16", "--accuracy-budget", "psnr>=30"], "names no metric"),
    (["--precision", "fp16", "--keep-fp32", "nope"], "--keep-fp32: no node named 'nope'"),
    (["--precision", "fp16", "--force", "ln_big"], "not of the form NODE=PRECISION"),
    (["--precision", "fp16", "--force", "ln_big=fp12"], "unknown precision 'fp12'"),
    (["--precision", "fp16", "--samples", "2", "--calibration", "c.npz"], "exclude each other"),
    (["--precision", "fp16", "--samples", "0"], "--samples must be between 1 and 10000"),
])
def test_convert_usage_errors(ferry_bin, converted, tmp_path, args, message):
    r = ferry(ferry_bin, "convert", converted[0], "-o", tmp_path / "o.onnx", *args, expect=1)
    assert message in r.stderr, r.stderr


def test_forced_overflow_is_a_model_error_naming_the_node(ferry_bin, converted, tmp_path):
    r = ferry(ferry_bin, "convert", converted[0], "-o", tmp_path / "o.onnx", "--precision", "fp16",
              "--force", "ln_big=fp16", "--samples", "2", expect=2)
    assert "node 'ln_big' (LayerNormalization) makes NaN/Inf" in r.stderr, r.stderr


def test_run_flags_and_calibration_file(ferry_bin, converted, tmp_path):
    src = converted[0]
    r = ferry(ferry_bin, "run", src, "--precision", "bf16", "--keep-fp32", "softmax")
    assert "precision bf16: " in r.stderr and "bf16 (emulated): " in r.stderr and "fp32: 1 node" in r.stderr, r.stderr
    # fc1 and fc2 (MatMuls with constant weights) run on oneDNN's bf16 steps where the CPU has them
    assert ("bf16 (accelerated): 2 nodes" in r.stderr) == host_accelerates_bf16(ferry_bin), r.stderr
    r = ferry(ferry_bin, "run", src, "--keep-fp32", "nope", expect=1)
    assert "--keep-fp32: no node named 'nope'" in r.stderr
    calib = tmp_path / "calib.npz"
    np.savez(calib, x=np.random.default_rng(3).standard_normal((3, 4, 32)).astype(np.float32))
    rep = tmp_path / "r.json"
    ferry(ferry_bin, "convert", src, "-o", tmp_path / "o.onnx", "--precision", "fp16", "--calibration", calib,
          "--report", rep)
    prec = json.loads(rep.read_text())["precision"]
    assert "calib.npz (3 samples)" in prec["guard"], prec["guard"]
    assert [n["node"] for n in prec["nodes"] if n["precision"] == "fp32"] == ["ln_big"]


def test_python_compile_errors(ferry_api, converted):
    model = ferry_api.load(str(converted[0]))
    with pytest.raises(ferry_api.InvalidArgumentError, match=r"unknown precision mode 'fp8' \(modes: fp32, bf16"):
        model.compile(precision="fp8")
    with pytest.raises(ferry_api.InvalidArgumentError, match="--keep-fp32: no node named 'nope'"):
        model.compile(precision="fp16", keep_fp32=["nope"])
    with pytest.raises(TypeError, match="option 'keep_fp32' must be a list of str"):
        model.compile(keep_fp32="ln_big")
    s = model.compile(precision="fp16", keep_fp32=["ln_big"], force=["softmax=bf16"])
    got = {n["node"]: (n["precision"], n["reason"]) for n in s.precision["nodes"]}
    assert got["ln_big"] == ("fp32", "fp32: --keep-fp32")
    assert got["softmax"][0] == "bf16" and got["softmax"][1].startswith("bf16: --force")
    assert s.options["precision"] == "fp16"


def test_env_reports_what_precision_can_use(ferry_bin):
    r = ferry(ferry_bin, "env", "--json", "--no-python")
    checks = {c["name"]: c for c in json.loads(r.stdout)["checks"] if c["section"] == "isa"}
    for p in ("bf16", "fp16"):
        assert checks[p]["detail"].startswith(f"--precision {p} "), checks[p]
    # ferry has no fp16 steps: emulated on every host, said as a warning with the consequence
    assert "emulated" in checks["fp16"]["detail"] and checks["fp16"]["status"] == "warn", checks["fp16"]
    assert "fp16 storage" in checks["fp16"]["detail"] and "fp32 compute" in checks["fp16"]["detail"], checks["fp16"]
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu_flags = set(next((line.split(":", 1)[1].split() for line in cpuinfo if line.startswith("flags")), []))
    # with AVX512-FP16 present the reason is oneDNN 2.6 (no fp16 kernels), not an ISA cap
    if "avx512_fp16" in cpu_flags:
        assert "has no fp16 kernels" in checks["fp16"]["detail"] and "capped" not in checks["fp16"]["detail"], checks["fp16"]
    else:
        assert "no fp16 hardware" in checks["fp16"]["detail"], checks["fp16"]
    # bf16 runs on oneDNN's bf16 steps where the CPU has bf16 hardware and nothing caps the ISA
    # a cap below bf16 (oneDNN's AVX512_CORE_BF16 and AVX512_CORE_AMX keep it; ferry's needs avx512+)
    onednn_cap = (os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA") or "").upper()
    ferry_cap = os.environ.get("FERRY_CPU_MAX_ISA", "").lower()
    capped = (onednn_cap not in ("", "ALL", "AVX512_CORE_BF16", "AVX512_CORE_AMX")) or ferry_cap in ("generic", "avx2")
    if cpu_flags & {"avx512_bf16", "amx_bf16"} and not capped:
        assert checks["bf16"]["detail"].startswith("--precision bf16 accelerated: oneDNN bf16 steps"), checks["bf16"]
        assert checks["bf16"]["status"] == "ok", checks["bf16"]
    else:
        assert "emulated" in checks["bf16"]["detail"] and checks["bf16"]["status"] == "warn", checks["bf16"]
