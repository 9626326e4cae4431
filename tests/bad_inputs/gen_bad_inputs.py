#!/usr/bin/env python3
"""Writes a corpus of malformed models and inputs, and a manifest of what ferry must say.

    gen_bad_inputs.py OUT_DIR [--only NAME...] [--list]

Every case lives in OUT_DIR/<case>/ (so external-data cases have their own
root directory; OUT_DIR/outside/ holds the files they try to reach). The
manifest OUT_DIR/manifest.json lists, per case:

    name, description
    model        model path, relative to OUT_DIR
    inputs       {input name: .npy path relative to OUT_DIR} passed as --input
    extra_args   further command-line arguments for `ferry run`
    file         the file the error line must name (default: the model)
    run          what `ferry run` must do:
                   exit        allowed exit codes (2: model/input error, 1: usage error, 0: runs)
                   fragments   the error line contains at least one of these (case-insensitive)
                   mentions    ... and every one of these (a list inside means any one of it)
    inspect      the same for `ferry inspect MODEL`, or null where inspect is not meaningful
                 (a bad .npy input does not concern inspect)
    skip         reason the case could not be built here (e.g. no hard links), else absent

Models are written with onnx.helper and raw byte edits; none goes through the
ONNX checker, which would reject most of them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CASES = {}


def case(fn):
    """Registers fn(ctx) -> dict (the manifest entry minus name/description)."""
    CASES[fn.__name__] = fn
    return fn


# Fragments shared by several cases (any one must appear in the error line).
PARSE = ["parse", "protobuf", "not a valid", "not an onnx", "malformed", "corrupt", "decode"]
UNDEFINED = ["undefined", "not defined", "no producer", "unknown value", "not produced", "missing", "does not exist",
             "no value"]
DUPLICATE = ["duplicate", "more than once", "already", "twice", "redefin", "defined again", "not unique"]
TOO_LARGE = ["too large", "too big", "exceed", "overflow", "limit", "absurd", "elements", "bytes"]
OUT_OF_RANGE = ["out of range", "out of bounds", "outside", "beyond", "past the end", "exceeds"]
ESCAPE = ["outside", "escape", "not allowed", "refus", "must stay", "not inside", "within"]


class Ctx:
    """Where a case writes its files; helpers for the usual small models."""

    def __init__(self, out_dir, name):
        self.root = Path(out_dir)
        self.dir = self.root / name
        self.dir.mkdir(parents=True, exist_ok=True)

    def rel(self, path):
        return str(Path(path).relative_to(self.root))

    def save(self, model, filename="model.onnx"):
        """Serializes without checking; returns the path relative to OUT_DIR."""
        path = self.dir / filename
        path.write_bytes(model.SerializeToString() if hasattr(model, "SerializeToString") else model)
        return self.rel(path)

    def npy(self, array, filename):
        path = self.dir / filename
        np.save(path, array)
        return self.rel(path)


def make_model(nodes, inputs, outputs, initializers=(), opset=17, ir_version=8):
    graph = helper.make_graph(nodes, "bad", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version,
                             producer_name="ferry-bad-inputs")


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def conv_model(node_name="conv", w_shape=(4, 3, 3, 3), x_shape=(1, 3, 8, 8), **attrs):
    """x -> Conv(W) -> y with an all-ones weight initializer; attrs go to the Conv."""
    w = numpy_helper.from_array(np.ones(w_shape, np.float32), "conv_weight")
    node = helper.make_node("Conv", ["pixels", "conv_weight"], ["y"], name=node_name, **attrs)
    return make_model([node], [f32("pixels", list(x_shape))], [f32("y", None)], [w])


def valid_model():
    """A correct model (input 'pixels' [1,3,8,8] f32) for the bad-.npy cases."""
    return conv_model("conv", pads=[1, 1, 1, 1])


def expect(exit=(2,), fragments=(), mentions=()):
    return {"exit": list(exit), "fragments": list(fragments), "mentions": list(mentions)}


def both(**kw):
    """The same expectation for run and inspect."""
    e = expect(**kw)
    return {"run": e, "inspect": e}


# --- files that are not a model -------------------------------------------------------


@case
def empty_file(ctx):
    """A 0-byte .onnx file."""
    return {"model": ctx.save(b""), **both(fragments=["empty"] + PARSE)}


@case
def random_bytes(ctx):
    """4 KiB of seeded random bytes."""
    data = np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    return {"model": ctx.save(data), **both(fragments=PARSE)}


@case
def truncated_protobuf(ctx):
    """A valid model cut in the middle of its weight bytes."""
    whole = valid_model().SerializeToString()
    cut = whole[: len(whole) * 2 // 3]
    try:  # make sure the cut really does not parse
        onnx.ModelProto().ParseFromString(cut)
    except Exception:
        pass
    else:
        raise AssertionError("truncated_protobuf: the cut model still parses")
    return {"model": ctx.save(cut), **both(fragments=PARSE + ["truncated"])}


@case
def no_graph(ctx):
    """A ModelProto with an opset but no graph."""
    m = onnx.ModelProto(ir_version=8)
    m.opset_import.append(helper.make_opsetid("", 17))
    return {"model": ctx.save(m), **both(fragments=["graph"])}


@case
def future_ir_version(ctx):
    """ir_version 99."""
    m = valid_model()
    m.ir_version = 99
    return {"model": ctx.save(m), **both(fragments=["ir_version", "ir version"], mentions=["99"])}


# --- graph structure ---------------------------------------------------------------


@case
def missing_initializer(ctx):
    """A Conv weight nothing produces: no initializer, input or node output of that name."""
    node = helper.make_node("Conv", ["pixels", "conv_weight_missing"], ["y"], name="conv_without_weight")
    m = make_model([node], [f32("pixels", [1, 3, 8, 8])], [f32("y", None)])
    return {"model": ctx.save(m), **both(fragments=UNDEFINED, mentions=["conv_weight_missing"])}


@case
def cycle(ctx):
    """relu_a reads relu_b's output and relu_b reads relu_a's."""
    a = helper.make_node("Relu", ["b_out"], ["a_out"], name="relu_a")
    b = helper.make_node("Relu", ["a_out"], ["b_out"], name="relu_b")
    m = make_model([a, b], [f32("pixels", [2])], [f32("a_out", [2])])
    return {"model": ctx.save(m), **both(fragments=["cycle", "topolog", "order"] + UNDEFINED,
                                         mentions=[["relu_a", "relu_b", "a_out", "b_out"]])}


@case
def duplicate_value_names(ctx):
    """Two nodes write the value 'twice_defined'."""
    n1 = helper.make_node("Relu", ["pixels"], ["twice_defined"], name="relu_first")
    n2 = helper.make_node("Sigmoid", ["pixels"], ["twice_defined"], name="sigmoid_second")
    m = make_model([n1, n2], [f32("pixels", [2])], [f32("twice_defined", [2])])
    return {"model": ctx.save(m), **both(fragments=DUPLICATE, mentions=["twice_defined"])}


@case
def output_overwrites_graph_input(ctx):
    """A node's output has the graph input's name."""
    n = helper.make_node("Relu", ["pixels"], ["pixels"], name="relu_clobbers_input")
    m = make_model([n], [f32("pixels", [2])], [f32("pixels", [2])])
    return {"model": ctx.save(m), **both(fragments=DUPLICATE + ["graph input", "cycle"], mentions=["pixels"])}


@case
def chain_10k(ctx):
    """10,000 Neg nodes in a row: must simply run (and give back the input)."""
    nodes, prev = [], "pixels"
    for i in range(10_000):
        nodes.append(helper.make_node("Neg", [prev], [f"v{i}"], name=f"neg{i}"))
        prev = f"v{i}"
    m = make_model(nodes, [f32("pixels", [4])], [f32(prev, [4])])
    return {"model": ctx.save(m), "inputs": {"pixels": ctx.npy(np.arange(4, dtype=np.float32), "x.npy")},
            "output_equals_input": True, "run": expect(exit=[0]), "inspect": expect(exit=[0])}


@case
def chain_100k_identity(ctx):
    """100,000 Identity nodes in a row: running or a clean error, never a stack overflow."""
    nodes, prev = [], "pixels"
    for i in range(100_000):
        nodes.append(helper.make_node("Identity", [prev], [f"v{i}"], name=f"id{i}"))
        prev = f"v{i}"
    m = make_model(nodes, [f32("pixels", [4])], [f32(prev, [4])])
    e = expect(exit=[0, 2], fragments=TOO_LARGE + ["depth", "nodes"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


def _varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, payload):
    """A length-delimited protobuf field (wire type 2)."""
    payload = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _if_graph(depth, then_graph, else_graph):
    """GraphProto bytes holding one If node; encoded by hand because the Python protobuf
    runtime refuses to build messages nested deeper than 100 levels."""
    def graph_attr(name, graph):  # AttributeProto: name = 1, g = 6, type = 20 (GRAPH = 5)
        return _field(1, name) + _field(6, graph) + _varint(20 << 3 | 0) + _varint(5)

    out = f"r{depth}"
    node = (_field(1, "cond") + _field(2, out) + _field(3, f"if{depth}") + _field(4, "If")
            + _field(5, graph_attr("then_branch", then_graph)) + _field(5, graph_attr("else_branch", else_graph)))
    # GraphProto: node = 1, name = 2, output = 12
    return _field(1, node) + _field(2, f"g{depth}") + _field(12, f32(out, [2]).SerializeToString())


@case
def nested_subgraphs(ctx):
    """If inside If ... 300 levels deep (past protobuf's default recursion limit of 100)."""
    def leaf(out):
        return helper.make_graph([helper.make_node("Identity", ["pixels"], [out], name=f"leaf_{out}")], "leaf", [],
                                 [f32(out, [2])]).SerializeToString()

    graph = leaf("r0")
    for depth in range(1, 300):
        graph = _if_graph(depth, graph, leaf(f"e{depth}"))
    # The top graph adds the inputs (GraphProto.input = 11) the branches read from the outer scope.
    graph += _field(11, helper.make_tensor_value_info("cond", TensorProto.BOOL, []).SerializeToString())
    graph += _field(11, f32("pixels", [2]).SerializeToString())
    # ModelProto: ir_version = 1 (varint), graph = 7, opset_import = 8
    model = (_varint(1 << 3 | 0) + _varint(8) + _field(7, graph)
             + _field(8, helper.make_opsetid("", 17).SerializeToString()))
    e = expect(fragments=PARSE + ["depth", "nest", "recurs", "unsupported", "not supported"])
    return {"model": ctx.save(model), "run": e, "inspect": expect(exit=[0, 2])}


# --- tensors -----------------------------------------------------------------------


def _init_model(tensor, consumer="Identity"):
    node = helper.make_node(consumer, [tensor.name], ["y"], name="use_tensor")
    return make_model([node], [], [f32("y", None)], [tensor])


@case
def raw_data_size_mismatch(ctx):
    """An f32 [2, 3] initializer with 20 bytes of raw_data (24 expected)."""
    t = onnx.TensorProto(name="short_weights", data_type=TensorProto.FLOAT, dims=[2, 3], raw_data=b"\0" * 20)
    return {"model": ctx.save(_init_model(t)),
            **both(fragments=["raw_data", "bytes", "size"], mentions=["short_weights"])}


@case
def absurd_initializer_dims(ctx):
    """An initializer claiming [1e6, 1e6] f32 (4 TB) with 16 bytes of data."""
    t = onnx.TensorProto(name="huge_weights", data_type=TensorProto.FLOAT, dims=[1_000_000, 1_000_000],
                         raw_data=b"\0" * 16)
    return {"model": ctx.save(_init_model(t)), **both(fragments=TOO_LARGE + ["raw_data", "size"],
                                                      mentions=["huge_weights"])}


@case
def absurd_input_dims(ctx):
    """A graph input of 1e12 f32 elements: run must refuse to make random data for it."""
    n = helper.make_node("Relu", ["pixels"], ["y"], name="relu")
    m = make_model([n], [f32("pixels", [1_000_000_000_000])], [f32("y", None)])
    return {"model": ctx.save(m), "run": expect(fragments=TOO_LARGE + ["memory", "size"], mentions=["pixels"]),
            "inspect": expect(exit=[0, 2])}


@case
def negative_dims(ctx):
    """An initializer with dims [2, -3]."""
    t = onnx.TensorProto(name="negative_weights", data_type=TensorProto.FLOAT, dims=[2, -3])
    return {"model": ctx.save(_init_model(t)), **both(fragments=["negative"], mentions=["negative_weights"])}


@case
def negative_input_dim(ctx):
    """A graph input declared with dim_value -4.

    Old converters wrote negative dim_values for unknown dims, so reading it as
    unknown is fair for inspect; run must then ask for the size (or reject it)."""
    vi = f32("pixels", [1, 3])
    vi.type.tensor_type.shape.dim[1].dim_value = -4
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [vi], [f32("y", None)])
    return {"model": ctx.save(m), "run": expect(fragments=["negative", "dim", "invalid"], mentions=["pixels"]),
            "inspect": expect(exit=[0, 2])}


@case
def unknown_dtype_enum(ctx):
    """An initializer whose data_type is 999."""
    t = onnx.TensorProto(name="mystery_tensor", data_type=999, dims=[2], raw_data=b"\0" * 8)
    return {"model": ctx.save(_init_model(t)),
            **both(fragments=["type", "999"], mentions=["mystery_tensor"])}


@case
def unknown_input_dtype(ctx):
    """A graph input whose elem_type is 999."""
    vi = helper.make_tensor_value_info("pixels", TensorProto.FLOAT, [2])
    vi.type.tensor_type.elem_type = 999
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [vi], [f32("y", None)])
    return {"model": ctx.save(m), **both(fragments=["type", "999"], mentions=["pixels"])}


@case
def string_tensor(ctx):
    """A STRING initializer fed to an Identity."""
    t = helper.make_tensor("words", TensorProto.STRING, [2], [b"hello", b"world"])
    node = helper.make_node("Identity", ["words"], ["y"], name="use_words")
    m = make_model([node], [], [helper.make_tensor_value_info("y", TensorProto.STRING, [2])], [t])
    return {"model": ctx.save(m), **both(fragments=["string"], mentions=["words"])}


@case
def string_input(ctx):
    """A graph input of type STRING."""
    vi = helper.make_tensor_value_info("text", TensorProto.STRING, [1])
    m = make_model([helper.make_node("Identity", ["text"], ["y"], name="id")], [vi],
                   [helper.make_tensor_value_info("y", TensorProto.STRING, [1])])
    return {"model": ctx.save(m), **both(fragments=["string"], mentions=["text"])}


# --- external data -----------------------------------------------------------------


def _outside_file(ctx):
    """OUT_DIR/outside/secret.bin: 64 bytes outside every case directory."""
    d = ctx.root / "outside"
    d.mkdir(exist_ok=True)
    path = d / "secret.bin"
    if not path.exists():
        path.write_bytes(bytes(range(64)))
    return path


def _external_model(name, location, offset=None, length=None, dims=(4,)):
    t = onnx.TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(dims))
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            entry = t.external_data.add()
            entry.key, entry.value = key, str(value)
    return _init_model(t)


def _ext_case(ctx, tensor, location, fragments, **kw):
    return {"model": ctx.save(_external_model(tensor, location, **kw)),
            **both(fragments=fragments, mentions=[tensor])}


@case
def external_parent_dir(ctx):
    """External data at ../outside/secret.bin (the file exists)."""
    _outside_file(ctx)
    return _ext_case(ctx, "w_parent", "../outside/secret.bin", ESCAPE + [".."])


@case
def external_absolute_path(ctx):
    """External data at the absolute path of an existing file."""
    return _ext_case(ctx, "w_absolute", str(_outside_file(ctx).resolve()), ESCAPE + ["absolute"])


@case
def external_symlink_outside(ctx):
    """External data through a symlink inside the model directory pointing outside it."""
    link = ctx.dir / "link.bin"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(Path("..") / "outside" / _outside_file(ctx).name)
    return _ext_case(ctx, "w_symlink", "link.bin", ESCAPE + ["symlink", "link"])


@case
def external_hardlink(ctx):
    """External data in a file hard-linked to one outside the model directory."""
    target = ctx.dir / "hard.bin"
    if target.exists():
        target.unlink()
    entry = _ext_case(ctx, "w_hardlink", "hard.bin", ["link", "hard"] + ESCAPE)
    try:
        os.link(_outside_file(ctx), target)
    except OSError as e:
        entry["skip"] = f"cannot create a hard link here: {e}"
    return entry


def _data_file(ctx, nbytes=16):
    (ctx.dir / "data.bin").write_bytes(b"\1" * nbytes)


@case
def external_offset_beyond_file(ctx):
    """offset 1024 into a 16-byte file."""
    _data_file(ctx)
    return _ext_case(ctx, "w_offset", "data.bin", OUT_OF_RANGE + ["offset", "end of file"], offset=1024, length=16)


@case
def external_length_beyond_file(ctx):
    """A [1024] f32 tensor (4096 bytes) stored in a 16-byte file."""
    _data_file(ctx)
    return _ext_case(ctx, "w_length", "data.bin", OUT_OF_RANGE + ["length", "end of file", "bytes"],
                     length=4096, dims=(1024,))


@case
def external_offset_overflow(ctx):
    """offset 2^64 - 8 and length 16: offset + length wraps around 64 bits."""
    _data_file(ctx)
    return _ext_case(ctx, "w_overflow", "data.bin", OUT_OF_RANGE + ["overflow", "offset", "too large"],
                     offset=2**64 - 8, length=16)


@case
def external_length_overflow(ctx):
    """offset 8 and length 2^64 - 4: offset + length wraps to 4, inside the file, if computed naively."""
    _data_file(ctx)
    return _ext_case(ctx, "w_wrap", "data.bin", OUT_OF_RANGE + ["overflow", "length", "too large", "expected"],
                     offset=8, length=2**64 - 4)


@case
def external_offset_not_u64(ctx):
    """offset 99999999999999999999999 (does not fit in 64 bits)."""
    _data_file(ctx)
    return _ext_case(ctx, "w_bignum", "data.bin", ["offset", "number", "integer", "overflow", "range", "invalid"],
                     offset="99999999999999999999999", length=16)


@case
def external_negative_length(ctx):
    """length -16."""
    _data_file(ctx)
    return _ext_case(ctx, "w_neglen", "data.bin", ["length", "negative", "number", "invalid"], length=-16)


@case
def external_missing_file(ctx):
    """External data file that does not exist."""
    return _ext_case(ctx, "w_nofile", "nowhere.bin", ["no such", "not found", "cannot open", "does not exist",
                                                       "missing", "not exist"])


# --- attributes contradicting tensors ----------------------------------------------


@case
def conv_kernel_shape_mismatch(ctx):
    """kernel_shape [5, 5] with a 3x3 weight."""
    m = conv_model("conv_ks", kernel_shape=[5, 5])
    return {"model": ctx.save(m), **both(fragments=["kernel_shape", "kernel"], mentions=["conv_ks"])}


@case
def conv_group_not_dividing(ctx):
    """group 2 with 3 input channels."""
    m = conv_model("conv_group", w_shape=(4, 1, 3, 3), group=2)
    return {"model": ctx.save(m), **both(fragments=["group", "channel"], mentions=["conv_group"])}


@case
def conv_pads_wrong_length(ctx):
    """pads with 3 values for a 2-D conv."""
    m = conv_model("conv_pads", pads=[1, 1, 1])
    return {"model": ctx.save(m), **both(fragments=["pads"], mentions=["conv_pads"])}


@case
def conv_zero_strides(ctx):
    """strides [0, 0]."""
    m = conv_model("conv_stride0", strides=[0, 0])
    return {"model": ctx.save(m), **both(fragments=["stride"], mentions=["conv_stride0"])}


@case
def maxpool_zero_strides(ctx):
    """MaxPool with strides [1, 0]."""
    n = helper.make_node("MaxPool", ["pixels"], ["y"], name="pool_stride0", kernel_shape=[2, 2], strides=[1, 0])
    m = make_model([n], [f32("pixels", [1, 3, 8, 8])], [f32("y", None)])
    return {"model": ctx.save(m), **both(fragments=["stride"], mentions=["pool_stride0"])}


def _const_i64(name, values):
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


@case
def reshape_impossible(ctx):
    """Reshape [2, 3] (6 elements) to [4, 2] (8 elements)."""
    n = helper.make_node("Reshape", ["pixels", "target_shape"], ["y"], name="reshape_bad")
    m = make_model([n], [f32("pixels", [2, 3])], [f32("y", None)], [_const_i64("target_shape", [4, 2])])
    return {"model": ctx.save(m), **both(fragments=["reshape", "element", "cannot", "size", "shape"],
                                         mentions=["reshape_bad"])}


@case
def gather_index_out_of_range(ctx):
    """Gather rows [0, 5] of a [3, 4] input (constant indices)."""
    n = helper.make_node("Gather", ["pixels", "rows"], ["y"], name="gather_oob", axis=0)
    m = make_model([n], [f32("pixels", [3, 4])], [f32("y", None)], [_const_i64("rows", [0, 5])])
    return {"model": ctx.save(m), "run": expect(fragments=OUT_OF_RANGE + ["index", "indices"], mentions=["gather_oob"]),
            "inspect": expect(exit=[0, 2])}


@case
def split_sizes_not_summing(ctx):
    """Split sizes [2, 2] of an axis of length 5."""
    n = helper.make_node("Split", ["pixels", "sizes"], ["a", "b"], name="split_bad", axis=0)
    m = make_model([n], [f32("pixels", [5])], [f32("a", None), f32("b", None)], [_const_i64("sizes", [2, 2])])
    return {"model": ctx.save(m), **both(fragments=["split", "sum"], mentions=["split_bad"])}


@case
def matmul_inner_dim_mismatch(ctx):
    """MatMul [2, 3] x [4, 5]."""
    w = numpy_helper.from_array(np.ones((4, 5), np.float32), "mm_weight")
    n = helper.make_node("MatMul", ["pixels", "mm_weight"], ["y"], name="matmul_bad")
    m = make_model([n], [f32("pixels", [2, 3])], [f32("y", None)], [w])
    return {"model": ctx.save(m), **both(fragments=["inner", "dim", "shape", "match"], mentions=["matmul_bad"])}


@case
def broadcast_incompatible(ctx):
    """Add [2, 3] + [4]: not broadcastable."""
    b = numpy_helper.from_array(np.ones(4, np.float32), "bias4")
    n = helper.make_node("Add", ["pixels", "bias4"], ["y"], name="add_bad")
    m = make_model([n], [f32("pixels", [2, 3])], [f32("y", None)], [b])
    return {"model": ctx.save(m), **both(fragments=["broadcast", "shape", "incompatible"], mentions=["add_bad"])}


@case
def tile_absurd_output(ctx):
    """Tile [2, 2] by [1e9, 1e9]: an output of 4e18 elements must be refused, not allocated."""
    n = helper.make_node("Tile", ["pixels", "repeats"], ["y"], name="tile_huge")
    m = make_model([n], [f32("pixels", [2, 2])], [f32("y", None)], [_const_i64("repeats", [10**9, 10**9])])
    return {"model": ctx.save(m), "run": expect(fragments=TOO_LARGE + ["size"], mentions=["tile_huge"]),
            "inspect": expect(exit=[0, 2])}


@case
def constant_of_shape_absurd(ctx):
    """ConstantOfShape [1e6, 1e6, 1e6]."""
    n = helper.make_node("ConstantOfShape", ["dims"], ["y"], name="cos_huge")
    m = make_model([n], [], [f32("y", None)], [_const_i64("dims", [10**6] * 3)])
    return {"model": ctx.save(m), "run": expect(fragments=TOO_LARGE + ["size"], mentions=["cos_huge"]),
            "inspect": expect(exit=[0, 2])}


@case
def resize_absurd_scale(ctx):
    """Resize with scales 1e9 in both spatial axes."""
    scales = numpy_helper.from_array(np.array([1, 1, 1e9, 1e9], np.float32), "scales")
    n = helper.make_node("Resize", ["pixels", "", "scales"], ["y"], name="resize_huge")
    m = make_model([n], [f32("pixels", [1, 1, 4, 4])], [f32("y", None)], [scales])
    return {"model": ctx.save(m), "run": expect(fragments=TOO_LARGE + ["size"], mentions=["resize_huge"]),
            "inspect": expect(exit=[0, 2])}


# --- opsets and op coverage --------------------------------------------------------


@case
def opset6_conv(ctx):
    """A Conv in a model importing only ai.onnx opset 6 (ferry reads opsets 7 and up)."""
    m = conv_model("conv_old")
    m.opset_import[0].version = 6
    return {"model": ctx.save(m), **both(fragments=["opset"], mentions=["6"])}


@case
def three_unsupported_ops(ctx):
    """NonMaxSuppression, RoiAlign and Unique: all three must be named at once."""
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["selected"], name="nms"),
        helper.make_node("RoiAlign", ["pixels", "rois", "batch_idx"], ["pooled"], name="roi_align"),
        helper.make_node("Unique", ["pixels"], ["uniq"], name="unique"),
    ]
    inputs = [helper.make_tensor_value_info("boxes", f, [1, 4, 4]), helper.make_tensor_value_info("scores", f, [1, 1, 4]),
              f32("pixels", [1, 1, 8, 8]), helper.make_tensor_value_info("rois", f, [2, 4]),
              helper.make_tensor_value_info("batch_idx", TensorProto.INT64, [2])]
    outputs = [helper.make_tensor_value_info("selected", TensorProto.INT64, None), f32("pooled", None),
               f32("uniq", None)]
    m = make_model(nodes, inputs, outputs, opset=17)
    mention = ["NonMaxSuppression", "RoiAlign", "Unique"]
    return {"model": ctx.save(m), "run": expect(fragments=["unsupported", "not supported"], mentions=mention),
            "inspect": expect(exit=[0, 2], mentions=mention)}


# --- bad inputs to a good model ----------------------------------------------------


@case
def wrong_shape_npy(ctx):
    """pixels is [1, 3, 8, 8]; the .npy holds [1, 3, 4, 4]."""
    npy = ctx.npy(np.zeros((1, 3, 4, 4), np.float32), "wrong_shape.npy")
    return {"model": ctx.save(valid_model()), "inputs": {"pixels": npy}, "file": npy,
            "run": expect(fragments=["shape", "dim"], mentions=["pixels"]), "inspect": None}


@case
def wrong_dtype_npy(ctx):
    """pixels is f32; the .npy holds int64."""
    npy = ctx.npy(np.zeros((1, 3, 8, 8), np.int64), "wrong_dtype.npy")
    return {"model": ctx.save(valid_model()), "inputs": {"pixels": npy}, "file": npy,
            "run": expect(fragments=["dtype", "type", "i64", "int64"], mentions=["pixels"]), "inspect": None}


@case
def truncated_npy(ctx):
    """An .npy file cut in the middle of its data."""
    path = ctx.dir / "truncated.npy"
    np.save(path, np.zeros((1, 3, 8, 8), np.float32))
    path.write_bytes(path.read_bytes()[:300])
    npy = ctx.rel(path)
    return {"model": ctx.save(valid_model()), "inputs": {"pixels": npy}, "file": npy,
            "run": expect(fragments=["truncated", "short", "expected", "bytes", "size"]), "inspect": None}


@case
def unknown_flag(ctx):
    """A command-line flag ferry does not have: a usage error, exit 1."""
    return {"model": ctx.save(valid_model()), "extra_args": ["--no-such-flag"], "file": None,
            "run": expect(exit=[1], fragments=["no-such-flag", "unknown", "not expected", "extra"]), "inspect": None}


def generate(out_dir, only=None):
    """Writes every case (or `only` those) and the manifest; returns the manifest dict."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cases = []
    for name in only or CASES:
        shutil.rmtree(out_dir / name, ignore_errors=True)
        entry = CASES[name](Ctx(out_dir, name))
        entry = {"name": name, "description": (CASES[name].__doc__ or "").strip(), "inputs": {}, "extra_args": [],
                 **entry}
        entry.setdefault("file", entry["model"])
        cases.append(entry)
    manifest = {"cases": cases}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME", choices=list(CASES))
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(CASES))
        return 0
    if not args.out_dir:
        ap.error("OUT_DIR is required")
    for c in generate(args.out_dir, args.only)["cases"]:
        print(f"{c['name']:32s} {c['model']}" + (f"  (skipped: {c['skip']})" if c.get("skip") else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
