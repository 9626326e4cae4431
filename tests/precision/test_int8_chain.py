"""Chained int8 steps (docs/precision.md, "Chained int8 steps"; src/backends/cpu/cpu_int8_requant.h):
an int8 Conv / MatMul whose every reader is QuantizeLinear(y, s, z) (one scale and zero point)
writes that u8 / s8 output itself (`+dst_u8` / `+dst_s8` in the step name), the QuantizeLinear
takes no step. The reference backend (the interpreter) runs the graph as written: the fp32 op on
the dequantized values, then QuantizeLinear (x / s, round half to even, + z, saturate).

The models are QDQ chains with fixed scales, and every QuantizeLinear output is a graph output
(u8 / s8), so each requantization is compared where it happens. The step multiplies by 1 / s
instead of dividing by s and adds z in f32 before rounding: a value within an ulp of a .5 tie
may land one step off. The bound is therefore **one quantization step** per element, at most
0.5% of the elements off (measured: 0 off on every case here, AMD EPYC Zen 5, VNNI), and the
chain must differ from the plain fp32 run (the quantization is really applied).

Without VNNI oneDNN's u8 x s8 convolutions pair products in int16: the convs here use 7-bit
weights (|w_q| <= 64) so they run int8 on every host (onednn_int8.cc), exact.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

import numpy as np  # noqa: E402  (missing packages fail, never skip: CI=true must not pass without them)
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onednn_isa import ferry_dispatch_has_avx512, onednn_has_vnni

STEP = 0.05  # every activation scale; zero points 128 (u8) / 0 (s8)


class Chain:
    """A QDQ graph under construction: q() quantizes a value (a graph output), dq() dequantizes it."""

    def __init__(self, act="u8", seed=0):
        self.nodes, self.inits, self.outputs = [], {}, []
        self.rng = np.random.default_rng(seed)
        self.act = act
        self.inits["s"] = np.array(STEP, np.float32)
        self.inits["z"] = np.array(128 if act == "u8" else 0, np.uint8 if act == "u8" else np.int8)

    def q(self, x):
        y = f"{x}_q"
        self.nodes.append(helper.make_node("QuantizeLinear", [x, "s", "z"], [y], name=f"{x}_quant"))
        self.outputs.append((y, TensorProto.UINT8 if self.act == "u8" else TensorProto.INT8))
        return y

    def dq(self, xq):
        y = f"{xq}_dq"
        self.nodes.append(helper.make_node("DequantizeLinear", [xq, "s", "z"], [y], name=f"{xq}_dequant"))
        return y

    def weights(self, name, shape, axis):
        """Per-channel s8 weights (|w_q| <= 64) through a DequantizeLinear along `axis`."""
        n = shape[axis]
        self.inits[f"{name}_q"] = self.rng.integers(-64, 65, shape).astype(np.int8)
        fan_in = np.prod(shape) / n  # w_q has std ~37: the layer's gain is ~1
        self.inits[f"{name}_s"] = (self.rng.uniform(0.7, 1.3, n) / (37 * fan_in**0.5)).astype(np.float32)
        self.nodes.append(helper.make_node("DequantizeLinear", [f"{name}_q", f"{name}_s"], [name], axis=axis,
                                           name=f"{name}_dequant"))
        return name

    def bias(self, name, n):
        self.inits[name] = self.rng.normal(0, 0.5, n).astype(np.float32)
        return name

    def conv(self, x, name, cin, cout, k, stride=1, group=1, relu=False):
        w = self.weights(f"{name}_w", (cout, cin // group, k, k), 0)
        out = f"{name}_c" if relu else name
        self.nodes.append(helper.make_node("Conv", [x, w, self.bias(f"{name}_b", cout)], [out], name=name,
                                           kernel_shape=[k, k], strides=[stride] * 2, pads=[k // 2] * 4, group=group))
        if relu:
            self.nodes.append(helper.make_node("Relu", [out], [name], name=f"{name}_relu"))
        return name

    def matmul(self, x, name, k, n):
        w = self.weights(f"{name}_w", (k, n), 1)
        self.nodes.append(helper.make_node("MatMul", [x, w], [f"{name}_m"], name=name))
        self.nodes.append(helper.make_node("Add", [f"{name}_m", self.bias(f"{name}_b", n)], [name], name=f"{name}_add"))
        return name

    def save(self, path, x_shape, float_outputs=()):
        outs = [helper.make_tensor_value_info(n, t, None) for n, t in self.outputs]
        outs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in float_outputs]
        g = helper.make_graph(self.nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
                              outs, [numpy_helper.from_array(v, k) for k, v in self.inits.items()])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
        return {"x": self.rng.normal(0, 1.5, x_shape).astype(np.float32)}


def conv_chain(path):
    """1x1 -> 3x3 -> depthwise 3x3 -> strided 3x3 -> residual 3x3 (+ the block's input) -> 1x1."""
    c = Chain()
    h = c.dq(c.q("x"))
    h = c.dq(c.q(c.conv(h, "pw", 8, 16, 1, relu=True)))
    h = c.dq(c.q(c.conv(h, "c3", 16, 16, 3)))
    h = c.dq(c.q(c.conv(h, "dw", 16, 16, 3, group=16, relu=True)))
    h = c.dq(c.q(c.conv(h, "s2", 16, 24, 3, stride=2)))
    r = c.conv(h, "res", 24, 24, 3)
    c.nodes.append(helper.make_node("Add", [r, h], ["sum"], name="residual"))
    h = c.dq(c.q("sum"))
    c.q(c.conv(h, "last", 24, 8, 1))
    return c.save(path, (1, 8, 14, 14)), 6  # int8 convs


def matmul_chain(path, act="u8"):
    """[2, 7, 32] -> MatMul+bias (48) -> MatMul+bias (40) -> MatMul+bias (16)."""
    c = Chain(act)
    h = c.dq(c.q("x"))
    for name, k, n in (("mm1", 32, 48), ("mm2", 48, 40), ("mm3", 40, 16)):
        h = c.q(c.matmul(h, name, k, n))
        if name != "mm3":
            h = c.dq(h)
    return c.save(path, (2, 7, 32)), 3


def branch_chain(path):
    """conv a's output is read by its QuantizeLinear and by a Relu (an fp32 node): a keeps an f32
    output; conv b's output is also a graph output (f32): b keeps it too; conv c requantizes."""
    c = Chain()
    h = c.dq(c.q("x"))
    a = c.conv(h, "a", 8, 16, 3)
    c.nodes.append(helper.make_node("Relu", [a], ["a_relu"], name="a_relu_node"))
    b = c.conv(c.dq(c.q(a)), "b", 16, 16, 1)
    cc = c.conv(c.dq(c.q(b)), "cc", 16, 8, 3)
    c.q(cc)
    return c.save(path, (1, 8, 10, 10), float_outputs=("a_relu", "b")), 3


def gate_chain(path, channels=16, batch=1):
    """A squeeze-excitation gate between two int8 convs: a = conv(x) (read by the pooling and the
    Mul: it stays f32), m = a * Sigmoid(GlobalAveragePool(a)) (one gate per image and channel),
    read only by its QuantizeLinear."""
    c = Chain()
    a = c.conv(c.dq(c.q("x")), "a", 8, channels, 1)
    c.nodes.append(helper.make_node("GlobalAveragePool", [a], ["pooled"], name="pool"))
    c.nodes.append(helper.make_node("Sigmoid", ["pooled"], ["gate"], name="gate_sigmoid"))
    c.nodes.append(helper.make_node("Mul", [a, "gate"], ["gated"], name="gate_mul"))
    c.q(c.conv(c.dq(c.q("gated")), "b", channels, 8, 1))
    return c.save(path, (batch, 8, 10, 10)), 2


def concat_affine_chain(path):
    """DenseNet's layer: two int8 convs (3x3 and 1x1) concatenated, a batch-norm affine and ReLU
    on the concatenation, read only by its QuantizeLinear (the next int8 conv's input)."""
    c = Chain()
    h = c.dq(c.q("x"))
    a, b = c.conv(h, "a", 8, 16, 3), c.conv(h, "b", 8, 16, 1)
    c.nodes.append(helper.make_node("Concat", [a, b], ["cat"], name="cat", axis=1))
    c.inits["bn_s"] = c.rng.uniform(0.5, 1.5, (1, 32, 1, 1)).astype(np.float32)
    c.inits["bn_b"] = c.rng.normal(0, 0.5, (1, 32, 1, 1)).astype(np.float32)
    c.nodes.append(helper.make_node("Mul", ["cat", "bn_s"], ["bn_m"], name="bn_scale"))
    c.nodes.append(helper.make_node("Add", ["bn_m", "bn_b"], ["bn_a"], name="bn_shift"))
    c.nodes.append(helper.make_node("Relu", ["bn_a"], ["bn"], name="bn_relu"))
    c.q(c.conv(c.dq(c.q("bn")), "next", 32, 8, 1))
    return c.save(path, (1, 8, 12, 12)), 3


def layer_norm_chain(path):
    """A pre-norm transformer's LayerNorm read by two int8 projections, each through a QuantizeLinear
    of the same scale and zero point (as a QDQ model quantizes one tensor per reader)."""
    c = Chain()
    c.inits["ln_s"] = c.rng.uniform(0.5, 1.5, 96).astype(np.float32)
    c.inits["ln_b"] = c.rng.normal(0, 0.2, 96).astype(np.float32)
    c.nodes.append(helper.make_node("LayerNormalization", ["x", "ln_s", "ln_b"], ["ln"], name="ln", axis=-1))
    for name, n in (("mq", 48), ("mv", 40)):
        c.nodes.append(helper.make_node("QuantizeLinear", ["ln", "s", "z"], [f"ln_q_{name}"], name=f"ln_quant_{name}"))
        c.outputs.append((f"ln_q_{name}", TensorProto.UINT8))
        c.q(c.matmul(c.dq(f"ln_q_{name}"), name, 96, n))
    return c.save(path, (2, 10, 96)), 2


@pytest.mark.parametrize("make,node,kernel", [(concat_affine_chain, "cat", "concat_affine"),
                                              (layer_norm_chain, "ln", "layer_norm")], ids=["concat_affine", "layer_norm"])
def test_own_steps_read_only_by_quantize_write_u8(ferry_api, ferry_cli, tmp_path, make, node, kernel):
    """DenseNet's concat affine and a LayerNorm whose readers all quantize it to u8 write that u8
    themselves (native/u8_round.h, AVX-512): no f32 output, no QuantizeLinear step; the bytes equal
    the interpreter's QuantizeLinear up to one step on at most 0.5% of them (compare())."""
    path = tmp_path / "m.onnx"
    feed, n_int8 = make(path)
    compare(ferry_api, path, feed)
    ks = profile(ferry_cli, path, tmp_path)
    by_node = {n.split(" ", 1)[-1]: k for n, k in ks}
    assert len(int8_steps(ks)) == n_int8, ks
    if not ferry_dispatch_has_avx512():
        pytest.skip("the u8 outputs of own steps are AVX-512 kernels; this host (or FERRY_CPU_MAX_ISA) has none")
    assert kernel in by_node[node] and by_node[node].endswith("+dst_u8"), ks
    # the graph input's QuantizeLinear is the only one left (the layer norm chain has none)
    assert sum(k.startswith("quantize_linear") for _, k in ks) == (1 if make is concat_affine_chain else 0), ks


def silu_chain(path):
    """EfficientNet's expand conv: an int8 1x1 conv whose SiLU (x * Sigmoid(x), fused into the conv)
    output is read only by its QuantizeLinear, then an int8 depthwise conv."""
    c = Chain()
    a = c.conv(c.dq(c.q("x")), "a", 8, 24, 1)
    c.nodes.append(helper.make_node("Sigmoid", [a], ["a_sig"], name="a_sigmoid"))
    c.nodes.append(helper.make_node("Mul", [a, "a_sig"], ["a_silu"], name="a_silu"))
    c.q(c.conv(c.dq(c.q("a_silu")), "dw", 24, 24, 3, group=24))
    return c.save(path, (1, 8, 10, 10)), 2


def test_an_activation_without_an_exact_post_op_writes_u8(ferry_api, ferry_cli, tmp_path):
    """SiLU has no exact oneDNN post-op: the int8 conv writes f32 into scratch, ferry's SiLU and the
    requantization follow in the same step (cpu_epilogue.h append_requantized_activation), so no
    QuantizeLinear step; the bytes equal the interpreter's within compare()'s bound."""
    path = tmp_path / "m.onnx"
    feed, n_int8 = silu_chain(path)
    compare(ferry_api, path, feed)
    ks = profile(ferry_cli, path, tmp_path)
    assert len(int8_steps(ks)) == n_int8, ks
    if not ferry_dispatch_has_avx512():
        pytest.skip("the requantizing epilogue is an AVX-512 kernel; this host (or FERRY_CPU_MAX_ISA) has none")
    conv_a = [k for n, k in ks if n.split(" ", 1)[-1].startswith("a")]
    assert len(conv_a) == 1 and "swish" in conv_a[0] and conv_a[0].endswith("+dst_u8"), ks
    assert sum(k.startswith("quantize_linear") for _, k in ks) == 1, ks  # the graph input's


@pytest.mark.parametrize("channels,batch", [(16, 1), (20, 3), (72, 2)])
def test_a_mul_read_only_by_quantize_writes_u8(ferry_api, ferry_cli, tmp_path, channels, batch):
    """The gate product writes u8: ferry's channel scale over channels-last x (AVX-512; channel
    counts off the 16-lane width, a gate per image), else oneDNN's binary with a requantizing
    post-op; the bytes equal the interpreter's within compare()'s bound."""
    path = tmp_path / "m.onnx"
    feed, n_int8 = gate_chain(path, channels, batch)
    compare(ferry_api, path, feed)
    ks = profile(ferry_cli, path, tmp_path)
    by_node = {n.split(" ", 1)[-1]: k for n, k in ks}
    assert "+dst_u8" in by_node["gate_mul"], ks
    # the int8 conv writes a channels-last; the gate product on AVX-512 is ferry's step
    assert "_acdb" in by_node["a"], ks
    assert by_node["gate_mul"].startswith("channel_scale_f32_acdb") == ferry_dispatch_has_avx512(), ks
    assert "+dst_u8" not in by_node["a"], ks  # the pooling reads it in f32
    # the graph input's QuantizeLinear is the only one left: the Mul's took no step
    assert sum(k.startswith("quantize_linear") for _, k in ks) == 1, ks
    assert len(int8_steps(ks)) == n_int8, ks


def image_chain(path, shape):
    """An int8 model's image input: QuantizeLinear(x) read only by the first int8 conv (3x3,
    stride 2, channels-last), whose f32 output is the graph output."""
    c = Chain()
    c.nodes.append(helper.make_node("QuantizeLinear", ["x", "s", "z"], ["x_q"], name="x_quant"))
    c.conv(c.dq("x_q"), "first", shape[1], 16, 3, stride=2)
    return c.save(path, shape, float_outputs=("first",)), 1


@pytest.mark.parametrize("shape", [(1, 3, 24, 24), (2, 3, 17, 19), (1, 1, 9, 33), (2, 4, 7, 5), (1, 2, 16, 16)])
def test_an_image_input_is_quantized_channels_last_in_one_step(ferry_api, ferry_cli, tmp_path, shape):
    """The input's QuantizeLinear writes the u8 channels-last layout the first int8 conv reads, in
    one step (native/quantize_nhwc.cc, C <= 4, AVX512_VBMI), instead of a plain u8 and a reorder:
    the conv's output equals the interpreter's (a misplaced byte would not), ragged pixel tails and
    several images included."""
    path = tmp_path / "m.onnx"
    feed, n_int8 = image_chain(path, shape)
    feed["x"][0, 0, 0, :3] = [1e6, -1e6, np.nan]  # saturation both ways, NaN -> the zero point's
    got, want = compare(ferry_api, path, feed)
    assert np.abs(got["first"] - want["first"]).max() <= 1e-5 * np.abs(want["first"]).max()
    ks = profile(ferry_cli, path, tmp_path)
    assert len(int8_steps(ks)) == n_int8, ks
    quant = [k for _, k in ks if k.startswith("quantize_linear")]
    assert len(quant) == 1, ks
    reorders_of_xq = [k for n, k in ks if n.startswith("Reorder") and k.startswith("strided_copy_plain_to")]
    if ferry_dispatch_has_avx512() and host_has_vbmi() and shape[1] > 1:  # one channel: plain is channels-last
        assert quant[0] == "quantize_linear_f32_u8_plain_to_acdb__avx512_vbmi" and not reorders_of_xq, ks
    else:
        assert quant[0].startswith("quantize_linear_f32_u8_plain"), ks


def host_has_vbmi():
    with open("/proc/cpuinfo") as f:
        return " avx512vbmi " in f.read().replace("\n", " ")


def profile(ferry_cli, path, tmp_path):
    trace = tmp_path / "trace.json"
    r = subprocess.run([str(ferry_cli), "bench", str(path), "--warmup", "0", "--iters", "1", "--profile", str(trace)],
                       capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    return [(e["name"], e["args"]["kernel"]) for e in json.loads(trace.read_text())["traceEvents"]]


def compare(ferry_api, path, feed):
    model = ferry_api.load(str(path))
    got = model.compile(backend="cpu").run(feed)
    want = model.compile(backend="reference").run(feed)
    assert set(got) == set(want)
    for k in want:
        g, w = np.asarray(got[k]), np.asarray(want[k])
        assert g.dtype == w.dtype, k
        if g.dtype == np.float32:
            assert np.abs(g - w).max() <= 1e-5 * max(1.0, float(np.abs(w).max())), k
            continue
        d = np.abs(g.astype(np.int32) - w.astype(np.int32))
        assert d.max() <= 1, f"{k}: {int(d.max())} quantization steps off"
        assert (d > 0).mean() <= 5e-3, f"{k}: {(d > 0).mean():.2%} of the elements one step off"
        lim = np.iinfo(w.dtype)
        assert len(np.unique(w)) > 40 and np.isin(w, [lim.min, lim.max]).mean() < 0.1, \
            f"{k}: a degenerate or saturated output (the test's scales are off)"
    return got, want


def int8_steps(kernels):
    return [k for _, k in kernels if "_u8s8" in k or "_s8s8" in k]


@pytest.mark.parametrize("make", [conv_chain, matmul_chain], ids=["convs", "matmuls"])
def test_chain_writes_u8_and_matches_the_interpreter(ferry_api, ferry_cli, tmp_path, make):
    path = tmp_path / "m.onnx"
    feed, n_int8 = make(path)
    compare(ferry_api, path, feed)
    ks = profile(ferry_cli, path, tmp_path)
    steps = int8_steps(ks)
    assert len(steps) == n_int8, ks
    assert sum("+dst_u8" in k for k in steps) == n_int8, steps
    # the only QuantizeLinear left is the graph input's
    assert sum(k.startswith("quantize_linear") for _, k in ks) == 1, ks
    # no DequantizeLinear step left: the residual Add (fused into the res conv's step) reads the
    # block's input DequantizeLinear(s2_q) as s2_q, a sum post-op in the u8 destination
    dq = [n for n, k in ks if n.startswith("DequantizeLinear")]
    assert dq == [], dq
    if make is conv_chain:
        res = [k for n, k in ks if n.split(" ", 1)[-1].startswith("res")]
        assert len(res) == 1 and "+sum" in res[0] and "+dst_u8" in res[0], ks


@pytest.mark.skipif(not onednn_has_vnni(), reason="s8 activations run int8 here only with VNNI "
                                                  "(the host or ONEDNN_MAX_CPU_ISA has none)")
def test_s8_chain_writes_s8(ferry_api, ferry_cli, tmp_path):
    path = tmp_path / "m.onnx"
    feed, n_int8 = matmul_chain(path, act="s8")
    compare(ferry_api, path, feed)
    steps = int8_steps(profile(ferry_cli, path, tmp_path))
    assert len(steps) == n_int8 and all("s8s8" in k and "+dst_s8" in k for k in steps), steps


def test_a_reader_that_is_not_quantize_keeps_f32(ferry_api, ferry_cli, tmp_path):
    path = tmp_path / "m.onnx"
    feed, n_int8 = branch_chain(path)
    got, want = compare(ferry_api, path, feed)
    assert np.abs(got["b"] - want["b"]).max() <= 1e-5 * float(np.abs(want["b"]).max())
    ks = profile(ferry_cli, path, tmp_path)
    by_node = {n.split(" ", 1)[-1]: k for n, k in ks}
    assert "+dst_u8" not in by_node["a"] and "+dst_u8" not in by_node["b"], ks
    assert "+dst_u8" in by_node["cc"], ks
    assert len(int8_steps(ks)) == n_int8, ks


def conv_relu_chain(path, layers, x_shape, rng, gain):
    """An fp32 chain of Conv (weights ~ N(0, gain / sqrt(fan_in)), pads k // 2) + Relu: conv0, conv1, ...;
    the last Relu writes the graph output y."""
    nodes, inits, x = [], {}, "x"
    for i, (cin, cout, k) in enumerate(layers):
        inits[f"w{i}"] = rng.normal(0, gain / (cin * k * k) ** 0.5, (cout, cin, k, k)).astype(np.float32)
        inits[f"b{i}"] = rng.normal(0, 0.1, cout).astype(np.float32)
        y = "y" if i == len(layers) - 1 else f"h{i}"
        nodes.append(helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], name=f"conv{i}", pads=[k // 2] * 4))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [y], name=f"relu{i}"))
        x = y
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_precision_int8_chain_drops_quantize_steps(ferry_api, ferry_cli, tmp_path):
    """`--precision int8` on an fp32 conv chain: every conv but the last (a graph output) writes u8,
    and the output stays within the fake quantization's own distance to fp32 of it."""
    rng = np.random.default_rng(3)
    path = tmp_path / "fp32.onnx"
    conv_relu_chain(path, [(8, 16, 1), (16, 16, 3), (16, 16, 3), (16, 8, 1)], (1, 8, 12, 12), rng, 0.4 * 2)
    trace = tmp_path / "t.json"
    r = subprocess.run([str(ferry_cli), "bench", str(path), "--precision", "int8", "--warmup", "0", "--iters", "1",
                        "--profile", str(trace)], capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    ks = [e["args"]["kernel"] for e in json.loads(trace.read_text())["traceEvents"]]
    steps = [k for k in ks if "_u8s8" in k]
    assert len(steps) == 4, ks
    assert sum("+dst_u8" in k for k in steps) == 3, steps
    assert sum(k.startswith("quantize_linear") for k in ks) == 1, ks  # the graph input's only
    feed = {"x": rng.normal(0, 1, (1, 8, 12, 12)).astype(np.float32)}
    model = ferry_api.load(str(path))
    real = model.compile(backend="cpu", precision="int8").run(feed)["y"]
    fake = model.compile(backend="reference", precision="int8").run(feed)["y"]
    fp32 = model.compile(backend="reference", precision="fp32").run(feed)["y"]
    scale = float(np.abs(fake).max())
    # one intermediate u8 one step off moves y by about one step times the weights' sum: far below
    # int8's own distance to fp32, which must be real (the chain is quantized)
    assert float(np.abs(real - fake).max()) / scale <= 0.25 * float(np.abs(fp32 - fake).max()) / scale
    assert float(np.abs(fp32 - fake).max()) / scale > 1e-3


def test_quantize_of_a_blocked_fp32_output_is_the_own_kernel(ferry_cli, tmp_path):
    """With oneDNN capped at AVX2 an fp32 conv chain runs nChw8c (abcd8b); the QuantizeLinear in
    front of the int8 conv after it takes that output channels-last (one f32 reorder) and runs
    ferry's AVX2 kernel, not the generic one (1.3 ms of MobileNetV2's 9 ms before), with the
    reference backend's numbers under the same cap."""
    rng = np.random.default_rng(5)
    path = tmp_path / "fp32.onnx"
    conv_relu_chain(path, [(16, 32, 3), (32, 32, 3), (32, 16, 1)], (1, 16, 14, 14), rng, 1.0)
    keep = ["--precision", "int8", "--keep-fp32", "conv0", "--keep-fp32", "conv1"]
    capped = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2", FERRY_CPU_MAX_ISA="avx2")
    trace = tmp_path / "t.json"
    r = subprocess.run([str(ferry_cli), "bench", str(path), *keep, "--warmup", "0", "--iters", "1",
                        "--profile", str(trace)], capture_output=True, text=True, timeout=300, check=False, env=capped)
    assert r.returncode == 0, r.stderr
    ks = [e["args"]["kernel"] for e in json.loads(trace.read_text())["traceEvents"]]
    assert any("_f32_abcd8b" in k for k in ks), f"the premise: an fp32 conv in nChw8c under the AVX2 cap; {ks}"
    quant = [k for k in ks if k.startswith("quantize_linear")]
    assert quant and all(k.endswith("__avx2") for k in quant), ks
    outs = {}
    for backend in ("cpu", "reference"):  # both under the cap: the same int8 decisions (7-bit weights without VNNI)
        d = tmp_path / backend
        r = subprocess.run([str(ferry_cli), "run", str(path), *keep, "--backend", backend, "--output-dir", str(d)],
                           capture_output=True, text=True, timeout=300, check=False, env=capped)
        assert r.returncode == 0, r.stderr
        outs[backend] = np.load(d / "y.npy")
    y, ref = outs["cpu"], outs["reference"]
    # the interpreter's fake quantization, up to the f32 summation order (measured 6e-7 of max 0.3)
    assert np.abs(y - ref).max() <= 1e-4 * np.abs(ref).max(), np.abs(y - ref).max()
    assert np.abs(ref).max() > 0.1


def residual_net(path, blocks=3, ch=16, hw=12, seed=3):
    """An fp32 network of ResNet-style blocks: x -> stem conv+relu -> [conv+relu -> conv, + block
    input, relu] x blocks -> global average pool. 7-bit-safe only through ferry's own grid."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], {}

    def conv(x, name, cin, cout, relu, k=3):
        inits[f"{name}_w"] = (rng.normal(0, 1, (cout, cin, k, k)) / (k * cin**0.5)).astype(np.float32)
        inits[f"{name}_b"] = rng.normal(0, 0.1, cout).astype(np.float32)
        out = f"{name}_c" if relu else name
        nodes.append(helper.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [out], name=name, pads=[k // 2] * 4))
        if relu:
            nodes.append(helper.make_node("Relu", [out], [name], name=f"{name}_relu"))
        return name

    h = conv("x", "stem", 3, ch, True)
    for b in range(blocks):
        cin, cout = (ch, 2 * ch) if b == 1 else (ch * (2 if b > 1 else 1),) * 2  # block 1 widens: a downsample
        t = conv(conv(h, f"b{b}a", cin, cout, True), f"b{b}b", cout, cout, False)
        z = conv(h, f"ds{b}", cin, cout, False, k=1) if cin != cout else h
        nodes.append(helper.make_node("Add", [t, z], [f"b{b}_sum"], name=f"b{b}_add"))
        nodes.append(helper.make_node("Relu", [f"b{b}_sum"], [f"b{b}"], name=f"b{b}_relu"))
        h = f"b{b}"
    nodes.append(helper.make_node("GlobalAveragePool", [h], ["y"], name="pool"))
    g = helper.make_graph(nodes, "resnet_blocks", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, hw, hw])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return {"x": rng.normal(0, 1, (1, 3, hw, hw)).astype(np.float32)}


def test_own_int8_keeps_the_residual_stream_in_u8(ferry_api, ferry_cli, tmp_path):
    """`ferry convert --precision int8` on ResNet-style blocks (precision/emulate_precision.h):
    each block's residual is read as DequantizeLinear(QuantizeLinear(z)) at z's calibration, so
    every block but the last writes u8 and reads its residual in u8 (a sum post-op), block 1's
    the output of its 1x1 downsample conv (read by the residual alone: calibrated as the
    residual), which writes u8 too; the only QuantizeLinear step left is the stem's input, the
    only DequantizeLinear the last block's residual (its output goes to the pool in f32). The
    cpu backend matches the interpreter running the same graph, and both differ from fp32."""
    src, out = tmp_path / "blocks.onnx", tmp_path / "blocks_int8.onnx"
    feed = residual_net(src)
    r = subprocess.run([str(ferry_cli), "convert", str(src), "-o", str(out), "--precision", "int8",
                        "--accuracy-budget", "cosine>=0", "--samples", "4"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    ref32 = ferry_api.load(str(src)).compile(precision="fp32").run(feed)["y"]
    model = ferry_api.load(str(out))
    got, want = model.compile(backend="cpu").run(feed)["y"], model.compile(backend="reference").run(feed)["y"]
    assert np.abs(got - want).max() <= 0.02 * np.abs(want).max(), (got.ravel()[:8], want.ravel()[:8])
    assert not np.array_equal(want, ref32) and np.abs(want - ref32).max() <= 0.2 * np.abs(ref32).max()
    ks = profile(ferry_cli, out, tmp_path)
    steps = int8_steps(ks)
    if not onednn_has_vnni() and not steps:
        return  # capped below VNNI: every node emulated (fp32 on the fake-quantized values)
    by_node = {n.split(" ", 1)[-1]: k for n, k in ks}
    for b in range(2):
        k = next(v for n, v in by_node.items() if n.startswith(f"b{b}b") and "/" not in n)
        assert "+sum" in k and "+dst_u8" in k, (b, k)
    ds = next(v for n, v in by_node.items() if n.startswith("ds1") and "/" not in n)
    assert "+dst_u8" in ds, ds
    last = next(v for n, v in by_node.items() if n.startswith("b2b") and "/" not in n)
    assert "+sum" in last and "+dst_u8" not in last, last
    assert sum(k.startswith("quantize_linear") for _, k in ks) == 1, ks
    assert sum(k.startswith("dequantize_linear") for _, k in ks) == 1, ks
