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
    model_not_a_file  true where the model path is meant to be missing or a directory

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
    """MaxUnpool, RoiAlign and Det (ops ferry has no importer for): all three must be named at once."""
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("MaxUnpool", ["pixels", "indices"], ["unpooled"], name="max_unpool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("RoiAlign", ["pixels", "rois", "batch_idx"], ["pooled"], name="roi_align"),
        helper.make_node("Det", ["pixels"], ["det"], name="det"),
    ]
    inputs = [f32("pixels", [1, 1, 8, 8]), helper.make_tensor_value_info("indices", TensorProto.INT64, [1, 1, 8, 8]),
              helper.make_tensor_value_info("rois", f, [2, 4]),
              helper.make_tensor_value_info("batch_idx", TensorProto.INT64, [2])]
    outputs = [f32("unpooled", None), f32("pooled", None), f32("det", None)]
    m = make_model(nodes, inputs, outputs, opset=17)
    mention = ["MaxUnpool", "RoiAlign", "Det"]
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


# =====================================================================================
# Issue 7 corpus: more cases per bug class (external data, tensor sizes, dtypes,
# attributes, indices, zero strides, graph structure, scale, truncation, inputs).
# =====================================================================================

INVALID = ["invalid", "must", "not", "expected", "out of range", "bad"]
DTYPE = ["type", "dtype", "like the first input"]
UNSUPPORTED = ["unsupported", "not supported"]


def _node_model(op, inputs, outputs=("y",), name=None, inits=(), in_vis=None, opset=17, **attrs):
    """One node `op` named `name` (default op.lower()); graph inputs `in_vis` (default: f32 'pixels' [1,3,8,8])."""
    n = helper.make_node(op, list(inputs), list(outputs), name=name or op.lower(), **attrs)
    vis = in_vis if in_vis is not None else [f32("pixels", [1, 3, 8, 8])]
    return make_model([n], vis, [f32(o, None) for o in outputs if o], list(inits), opset=opset)


def _simple(ctx, model, fragments, mentions=(), run_only=False, exit=(2,)):
    """A case whose run (and inspect, unless run_only) fails with these fragments and mentions."""
    e = expect(exit=exit, fragments=fragments, mentions=mentions)
    return {"model": ctx.save(model), "run": e, "inspect": expect(exit=[0, 2]) if run_only else e}


def _register(name, doc, fn):
    fn.__name__ = name
    fn.__doc__ = doc
    CASES[name] = fn


# --- external data: traversal -------------------------------------------------------


@case
def external_dotdot_nested(ctx):
    """External data at sub/../../outside/secret.bin: '..' after a real subdirectory."""
    _outside_file(ctx)
    (ctx.dir / "sub").mkdir(exist_ok=True)
    return _ext_case(ctx, "w_nested", "sub/../../outside/secret.bin", ESCAPE + [".."])


@case
def external_dotdot_deep(ctx):
    """External data at ../../../../../../../../etc/passwd."""
    return _ext_case(ctx, "w_deep", "../" * 8 + "etc/passwd", ESCAPE + [".."])


@case
def external_absolute_etc_passwd(ctx):
    """External data at /etc/passwd."""
    return _ext_case(ctx, "w_passwd", "/etc/passwd", ESCAPE + ["absolute"])


@case
def external_absolute_dev_zero(ctx):
    """External data at /dev/zero (endless, not a regular file)."""
    return _ext_case(ctx, "w_devzero", "/dev/zero", ESCAPE + ["absolute"])


@case
def external_symlink_chain(ctx):
    """link_a.bin -> link_b.bin -> ../outside/secret.bin."""
    _outside_file(ctx)
    for link, target in (("link_a.bin", "link_b.bin"), ("link_b.bin", "../outside/secret.bin")):
        path = ctx.dir / link
        if path.is_symlink() or path.exists():
            path.unlink()
        path.symlink_to(target)
    return _ext_case(ctx, "w_chain", "link_a.bin", ESCAPE + ["symlink", "link"])


@case
def external_symlinked_directory(ctx):
    """A symlinked directory inside the model dir pointing outside: d/secret.bin."""
    _outside_file(ctx)
    d = ctx.dir / "d"
    if d.is_symlink() or d.exists():
        d.unlink()
    d.symlink_to(Path("..") / "outside")
    return _ext_case(ctx, "w_symdir", "d/secret.bin", ESCAPE + ["symlink", "link"])


@case
def external_symlink_to_dev_zero(ctx):
    """A symlink inside the model dir to /dev/zero."""
    link = ctx.dir / "zero.bin"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to("/dev/zero")
    return _ext_case(ctx, "w_symzero", "zero.bin", ESCAPE + ["symlink", "link", "regular"])


@case
def external_fifo(ctx):
    """External data in a named pipe: opening it must not block forever."""
    entry = _ext_case(ctx, "w_fifo", "pipe.bin", ["regular", "not a file", "fifo", "pipe", "special"])
    path = ctx.dir / "pipe.bin"
    if path.exists():
        path.unlink()
    try:
        os.mkfifo(path)
    except (OSError, AttributeError) as e:
        entry["skip"] = f"cannot create a FIFO here: {e}"
    return entry


@case
def external_location_directory(ctx):
    """External data location naming a directory inside the model dir."""
    (ctx.dir / "subdir").mkdir(exist_ok=True)
    return _ext_case(ctx, "w_isdir", "subdir", ["directory", "regular", "not a file"])


@case
def external_location_dot(ctx):
    """External data location '.' (the model directory itself)."""
    return _ext_case(ctx, "w_dot", ".", ["directory", "regular", "not a file", "location"])


@case
def external_location_empty(ctx):
    """External data with location ''."""
    return _ext_case(ctx, "w_emptyloc", "", ["location", "empty"])


@case
def external_no_location(ctx):
    """External data with offset and length but no location key."""
    _data_file(ctx)
    t = onnx.TensorProto(name="w_noloc", data_type=TensorProto.FLOAT, dims=[4])
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "length", "16"
    return {"model": ctx.save(_init_model(t)), **both(fragments=["location"], mentions=["w_noloc"])}


@case
def external_nul_in_location(ctx):
    """A location with an embedded NUL: data.bin\\0../../outside/secret.bin."""
    _data_file(ctx)
    _outside_file(ctx)
    return _ext_case(ctx, "w_nul", "data.bin\0../../outside/secret.bin", ["nul", "null", "\\0", "invalid"] + ESCAPE)


@case
def external_file_url(ctx):
    """A location written as a URL: file:///etc/passwd."""
    return _ext_case(ctx, "w_url", "file:///etc/passwd", ["no such", "not found", "cannot open", "does not exist"]
                     + ESCAPE)


@case
def external_in_constant_node(ctx):
    """A Constant node whose value tensor points at ../outside/secret.bin."""
    _outside_file(ctx)
    t = onnx.TensorProto(name="const_value", data_type=TensorProto.FLOAT, dims=[4])
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "../outside/secret.bin"
    n = helper.make_node("Constant", [], ["y"], name="const_escape", value=t)
    m = make_model([n], [], [f32("y", None)])
    return {"model": ctx.save(m), **both(fragments=ESCAPE + [".."], mentions=[["const_escape", "const_value"]])}


# --- external data: offsets and lengths ---------------------------------------------


@case
def external_negative_offset(ctx):
    """offset -8."""
    _data_file(ctx)
    return _ext_case(ctx, "w_negoff", "data.bin", ["offset", "negative", "number", "invalid"], offset=-8, length=16)


@case
def external_offset_not_number(ctx):
    """offset 'sixteen'."""
    _data_file(ctx)
    return _ext_case(ctx, "w_nan_off", "data.bin", ["offset", "number", "integer", "invalid"], offset="sixteen")


@case
def external_length_hex(ctx):
    """length '0x10' (decimal only)."""
    _data_file(ctx)
    return _ext_case(ctx, "w_hexlen", "data.bin", ["length", "number", "integer", "invalid"], length="0x10")


@case
def external_length_disagrees_with_dims(ctx):
    """length 8 for an f32 [4] tensor (16 bytes)."""
    _data_file(ctx)
    return _ext_case(ctx, "w_lenmis", "data.bin", ["length", "bytes", "expected", "size"], length=8)


@case
def external_range_past_end(ctx):
    """offset 8 + length 16 in a 16-byte file: the range ends 8 bytes past the end."""
    _data_file(ctx)
    return _ext_case(ctx, "w_pastend", "data.bin", OUT_OF_RANGE + ["end of file", "bytes"], offset=8, length=16)


@case
def external_huge_dims(ctx):
    """An external f32 [1e6, 1e6] tensor in a 16-byte file (no length given)."""
    _data_file(ctx)
    return _ext_case(ctx, "w_hugeext", "data.bin", TOO_LARGE + OUT_OF_RANGE + ["end of file", "bytes"],
                     dims=(1_000_000, 1_000_000))


@case
def external_dims_overflow(ctx):
    """An external tensor whose element count overflows int64: dims [2^32, 2^32, 2^32]."""
    _data_file(ctx)
    return _ext_case(ctx, "w_extovf", "data.bin", TOO_LARGE + ["overflow", "negative"], dims=(2**32, 2**32, 2**32))


@case
def external_duplicate_location_key(ctx):
    """Two 'location' entries: data.bin and ../outside/secret.bin."""
    _data_file(ctx)
    _outside_file(ctx)
    t = onnx.TensorProto(name="w_twoloc", data_type=TensorProto.FLOAT, dims=[4])
    t.data_location = TensorProto.EXTERNAL
    for v in ("data.bin", "../outside/secret.bin"):
        e = t.external_data.add()
        e.key, e.value = "location", v
    return {"model": ctx.save(_init_model(t)),
            **both(fragments=DUPLICATE + ESCAPE + ["location"], mentions=["w_twoloc"])}


@case
def external_and_raw_data(ctx):
    """data_location EXTERNAL and raw_data both set."""
    _data_file(ctx)
    t = onnx.TensorProto(name="w_both", data_type=TensorProto.FLOAT, dims=[4], raw_data=b"\0" * 16)
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "data.bin"
    return {"model": ctx.save(_init_model(t)),
            **both(fragments=["raw_data", "both", "external", "conflict"], mentions=["w_both"])}


@case
def external_string_tensor(ctx):
    """A STRING tensor stored as external data."""
    _data_file(ctx)
    t = onnx.TensorProto(name="w_strext", data_type=TensorProto.STRING, dims=[2])
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "data.bin"
    return {"model": ctx.save(_init_model(t)), **both(fragments=["string"], mentions=["w_strext"])}


# --- tensor contents ---------------------------------------------------------------


def _tensor_case(ctx, tensor, fragments):
    return {"model": ctx.save(_init_model(tensor)), **both(fragments=fragments, mentions=[tensor.name])}


@case
def raw_data_too_long(ctx):
    """An f32 [2, 3] initializer with 28 bytes of raw_data (24 expected)."""
    t = onnx.TensorProto(name="long_weights", data_type=TensorProto.FLOAT, dims=[2, 3], raw_data=b"\0" * 28)
    return _tensor_case(ctx, t, ["raw_data", "bytes", "size"])


@case
def raw_data_scalar_empty(ctx):
    """An f32 scalar (dims []) with raw_data of 0 bytes... and one float_data: neither holds exactly one value."""
    t = onnx.TensorProto(name="empty_scalar", data_type=TensorProto.FLOAT, dims=[])
    t.raw_data = b"\0\0"
    return _tensor_case(ctx, t, ["raw_data", "bytes", "size"])


@case
def raw_data_zero_dim_nonempty(ctx):
    """An f32 [0, 3] initializer with 12 bytes of raw_data."""
    t = onnx.TensorProto(name="zero_dim_data", data_type=TensorProto.FLOAT, dims=[0, 3], raw_data=b"\0" * 12)
    return _tensor_case(ctx, t, ["raw_data", "bytes", "size"])


@case
def raw_data_i64_odd_length(ctx):
    """An i64 [2] initializer with 15 bytes of raw_data."""
    t = onnx.TensorProto(name="odd_ints", data_type=TensorProto.INT64, dims=[2], raw_data=b"\1" * 15)
    return _tensor_case(ctx, t, ["raw_data", "bytes", "size"])


@case
def float_data_count_mismatch(ctx):
    """An f32 [2, 3] initializer with 5 float_data values."""
    t = onnx.TensorProto(name="few_floats", data_type=TensorProto.FLOAT, dims=[2, 3], float_data=[1.0] * 5)
    return _tensor_case(ctx, t, ["float_data", "values", "elements", "expected", "size"])


@case
def int64_data_count_mismatch(ctx):
    """An i64 [4] initializer with 7 int64_data values."""
    t = onnx.TensorProto(name="many_ints", data_type=TensorProto.INT64, dims=[4], int64_data=[1] * 7)
    return _tensor_case(ctx, t, ["int64_data", "values", "elements", "expected", "size"])


@case
def int32_data_for_f16_mismatch(ctx):
    """An f16 [3] initializer with 1 int32_data value."""
    t = onnx.TensorProto(name="few_halves", data_type=TensorProto.FLOAT16, dims=[3], int32_data=[15360])
    return _tensor_case(ctx, t, ["int32_data", "values", "elements", "expected", "size"])


@case
def double_data_count_mismatch(ctx):
    """An f64 [2] initializer with 3 double_data values."""
    t = onnx.TensorProto(name="three_doubles", data_type=TensorProto.DOUBLE, dims=[2], double_data=[1.0, 2.0, 3.0])
    return _tensor_case(ctx, t, ["double_data", "values", "elements", "expected", "size"])


@case
def raw_and_typed_data(ctx):
    """An f32 [2] initializer with both raw_data and float_data."""
    t = onnx.TensorProto(name="two_sources", data_type=TensorProto.FLOAT, dims=[2], raw_data=b"\0" * 8,
                         float_data=[1.0, 2.0])
    return _tensor_case(ctx, t, ["raw_data", "both", "float_data", "conflict"])


@case
def float_data_for_int_tensor(ctx):
    """An i32 [2] initializer whose values are in float_data (the wrong field for int32)."""
    t = onnx.TensorProto(name="wrong_field", data_type=TensorProto.INT32, dims=[2], float_data=[1.0, 2.0])
    return _tensor_case(ctx, t, ["int32_data", "float_data", "field", "values", "expected", "size", "elements"])


@case
def dims_product_overflow(ctx):
    """An initializer with dims [2^31, 2^31, 2^31] (the element count overflows int64)."""
    t = onnx.TensorProto(name="overflow_dims", data_type=TensorProto.FLOAT, dims=[2**31] * 3, raw_data=b"\0" * 4)
    return _tensor_case(ctx, t, TOO_LARGE + ["overflow", "raw_data"])


@case
def dims_int64_max(ctx):
    """An initializer with dims [2^63 - 1]."""
    t = onnx.TensorProto(name="max_dims", data_type=TensorProto.UINT8, dims=[2**63 - 1], raw_data=b"\0")
    return _tensor_case(ctx, t, TOO_LARGE + ["overflow", "raw_data"])


@case
def dims_overflow_times_dtype(ctx):
    """An f64 initializer of 2^61 + 1 elements: the count fits in int64, the byte size does not."""
    t = onnx.TensorProto(name="bytes_overflow", data_type=TensorProto.DOUBLE, dims=[2**61 + 1], raw_data=b"\0" * 8)
    return _tensor_case(ctx, t, TOO_LARGE + ["overflow", "raw_data"])


@case
def dims_negative_one(ctx):
    """An initializer with dims [-1] (a shape placeholder, not a size)."""
    t = onnx.TensorProto(name="minus_one", data_type=TensorProto.FLOAT, dims=[-1])
    return _tensor_case(ctx, t, ["negative"])


@case
def dims_zero_and_negative(ctx):
    """An initializer with dims [0, -5]: the element count 0 must not hide the negative dim."""
    t = onnx.TensorProto(name="zero_neg", data_type=TensorProto.FLOAT, dims=[0, -5])
    return _tensor_case(ctx, t, ["negative"])


@case
def huge_input_dim_value(ctx):
    """A graph input declared with dim_value 2^62."""
    vi = f32("pixels", [1, 3])
    vi.type.tensor_type.shape.dim[1].dim_value = 2**62
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [vi], [f32("y", None)])
    return {"model": ctx.save(m), **both(fragments=TOO_LARGE, mentions=["pixels"])}


@case
def input_rank_huge(ctx):
    """A graph input of rank 64 (all dims 2: 2^64 elements)."""
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [f32("pixels", [2] * 64)],
                   [f32("y", None)])
    return {"model": ctx.save(m), "run": expect(fragments=TOO_LARGE + ["memory", "size"], mentions=["pixels"]),
            "inspect": expect(exit=[0, 2])}


@case
def float8_initializer(ctx):
    """A FLOAT8E4M3FN initializer (data_type 17)."""
    t = onnx.TensorProto(name="fp8_weights", data_type=17, dims=[2], raw_data=b"\0\0")
    return _tensor_case(ctx, t, ["type", "float8", "unsupported", "not supported"])


@case
def int4_initializer(ctx):
    """An INT4 initializer (data_type 22)."""
    t = onnx.TensorProto(name="int4_weights", data_type=22, dims=[4], raw_data=b"\0\0")
    return _tensor_case(ctx, t, ["type", "int4", "unsupported", "not supported"])


@case
def complex_initializer(ctx):
    """A COMPLEX64 initializer."""
    t = onnx.TensorProto(name="complex_weights", data_type=TensorProto.COMPLEX64, dims=[1], raw_data=b"\0" * 8)
    return _tensor_case(ctx, t, ["type", "complex", "unsupported", "not supported"])


@case
def undefined_dtype_initializer(ctx):
    """An initializer with data_type 0 (UNDEFINED)."""
    t = onnx.TensorProto(name="untyped_weights", data_type=0, dims=[2], raw_data=b"\0" * 8)
    return _tensor_case(ctx, t, ["type", "undefined"])


@case
def segmented_tensor(ctx):
    """An initializer with a segment (chunked tensors are not supported)."""
    t = onnx.TensorProto(name="segmented", data_type=TensorProto.FLOAT, dims=[4], raw_data=b"\0" * 16)
    t.segment.begin, t.segment.end = 0, 2
    return _tensor_case(ctx, t, ["segment", "unsupported", "not supported"])


# --- dtype confusion -----------------------------------------------------------------


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


@case
def add_f32_i64(ctx):
    """Add of an f32 input and an i64 initializer."""
    m = _node_model("Add", ["pixels", "ints"], name="add_mixed", inits=[_const_i64("ints", [1])])
    return _simple(ctx, m, DTYPE, ["add_mixed"])


@case
def matmul_f32_f64(ctx):
    """MatMul of f32 [2, 3] and f64 [3, 2]."""
    w = numpy_helper.from_array(np.ones((3, 2), np.float64), "w64")
    m = _node_model("MatMul", ["pixels", "w64"], name="matmul_mixed", inits=[w], in_vis=[f32("pixels", [2, 3])])
    return _simple(ctx, m, DTYPE, ["matmul_mixed"])


@case
def conv_int64_weight(ctx):
    """Conv of an f32 input with an i64 weight."""
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.int64), "conv_weight")
    m = _node_model("Conv", ["pixels", "conv_weight"], name="conv_int_w", inits=[w])
    return _simple(ctx, m, DTYPE, ["conv_int_w"])


@case
def gather_float_indices(ctx):
    """Gather with f32 indices."""
    idx = numpy_helper.from_array(np.array([0.0, 1.0], np.float32), "float_idx")
    m = _node_model("Gather", ["pixels", "float_idx"], name="gather_fidx", inits=[idx], in_vis=[f32("pixels", [3, 4])])
    return _simple(ctx, m, DTYPE + ["indices", "integer", "int"], ["gather_fidx"])


@case
def reshape_float_shape(ctx):
    """Reshape whose shape input is f32."""
    shp = numpy_helper.from_array(np.array([4.0, 6.0], np.float32), "float_shape")
    m = _node_model("Reshape", ["pixels", "float_shape"], name="reshape_fshape", inits=[shp],
                    in_vis=[f32("pixels", [2, 12])])
    return _simple(ctx, m, DTYPE + ["shape", "int64", "i64"], ["reshape_fshape"])


@case
def cast_to_unknown_type(ctx):
    """Cast with to=999."""
    m = _node_model("Cast", ["pixels"], name="cast_999", to=999)
    return _simple(ctx, m, DTYPE + ["999"], ["cast_999"])


@case
def cast_to_string(ctx):
    """Cast to STRING."""
    m = _node_model("Cast", ["pixels"], name="cast_str", to=TensorProto.STRING)
    return _simple(ctx, m, ["string"] + UNSUPPORTED, ["cast_str"])


@case
def where_float_condition(ctx):
    """Where with an f32 condition."""
    m = _node_model("Where", ["pixels", "pixels", "pixels"], name="where_fcond", in_vis=[f32("pixels", [4])])
    return _simple(ctx, m, DTYPE + ["bool", "condition"], ["where_fcond"])


@case
def concat_mixed_dtypes(ctx):
    """Concat of an f32 input and an i32 initializer."""
    c = numpy_helper.from_array(np.ones((1, 3, 8, 8), np.int32), "i32_block")
    m = _node_model("Concat", ["pixels", "i32_block"], name="concat_mixed", inits=[c], axis=0)
    return _simple(ctx, m, DTYPE, ["concat_mixed"])


@case
def input_without_elem_type(ctx):
    """A graph input whose tensor type has no elem_type."""
    vi = onnx.ValueInfoProto(name="pixels")
    vi.type.tensor_type.shape.dim.add().dim_value = 2
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [vi], [f32("y", None)])
    return {"model": ctx.save(m), **both(fragments=["type"], mentions=["pixels"])}


@case
def input_sequence_type(ctx):
    """A graph input of type sequence<tensor<float>>."""
    vi = helper.make_tensor_sequence_value_info("seq_in", TensorProto.FLOAT, [2])
    m = make_model([helper.make_node("Identity", ["seq_in"], ["y"], name="id")], [vi], [f32("y", None)])
    return {"model": ctx.save(m), **both(fragments=["sequence", "not a tensor"] + UNSUPPORTED, mentions=["seq_in"])}


@case
def relu_on_bool(ctx):
    """Relu of a bool input."""
    m = _node_model("Relu", ["flags"], name="relu_bool", in_vis=[_vi("flags", TensorProto.BOOL, [4])])
    return _simple(ctx, m, DTYPE + ["bool"], ["relu_bool"])


@case
def sqrt_on_int(ctx):
    """Sqrt of an i64 input."""
    m = _node_model("Sqrt", ["ints"], name="sqrt_int", in_vis=[_vi("ints", TensorProto.INT64, [4])])
    return _simple(ctx, m, DTYPE + ["i64", "int"], ["sqrt_int"])


# --- attributes that overstate or contradict tensors ----------------------------------


@case
def conv_kernel_shape_rank_mismatch(ctx):
    """kernel_shape with 3 values for a 2-D conv."""
    return _simple(ctx, conv_model("conv_ks3", kernel_shape=[3, 3, 3]), ["kernel_shape", "kernel"], ["conv_ks3"])


@case
def conv_strides_too_many(ctx):
    """strides with 3 values for a 2-D conv."""
    return _simple(ctx, conv_model("conv_str3", strides=[1, 1, 1]), ["stride"], ["conv_str3"])


@case
def conv_dilations_zero(ctx):
    """dilations [0, 1]."""
    return _simple(ctx, conv_model("conv_dil0", dilations=[0, 1]), ["dilation"], ["conv_dil0"])


@case
def conv_dilations_negative(ctx):
    """dilations [-1, 1]."""
    return _simple(ctx, conv_model("conv_dilneg", dilations=[-1, 1]), ["dilation"], ["conv_dilneg"])


@case
def conv_pads_negative(ctx):
    """pads [-1, -1, -1, -1]."""
    return _simple(ctx, conv_model("conv_padneg", pads=[-1, -1, -1, -1]), ["pad"], ["conv_padneg"])


@case
def conv_pads_huge(ctx):
    """pads of 2^62."""
    return _simple(ctx, conv_model("conv_padhuge", pads=[2**62] * 4), ["pad"] + TOO_LARGE, ["conv_padhuge"])


@case
def conv_kernel_larger_than_input(ctx):
    """A 9x9 kernel over an 8x8 input, no padding."""
    return _simple(ctx, conv_model("conv_bigk", w_shape=(4, 3, 9, 9)),
                   ["kernel", "larger", "input", "output", "size", "dim", "negative"], ["conv_bigk"])


@case
def conv_weight_rank_wrong(ctx):
    """A conv weight of rank 2."""
    return _simple(ctx, conv_model("conv_w2d", w_shape=(4, 27)), ["weight", "rank", "dims", "shape"], ["conv_w2d"])


@case
def conv_bias_wrong_length(ctx):
    """A Conv bias of 7 values for 4 output channels."""
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "conv_weight")
    b = numpy_helper.from_array(np.ones(7, np.float32), "conv_bias")
    m = _node_model("Conv", ["pixels", "conv_weight", "conv_bias"], name="conv_bias7", inits=[w, b])
    return _simple(ctx, m, ["bias", "shape", "channels", "size"], ["conv_bias7"])


@case
def conv_auto_pad_invalid(ctx):
    """auto_pad 'MIDDLE'."""
    return _simple(ctx, conv_model("conv_autopad", auto_pad="MIDDLE"), ["auto_pad", "MIDDLE"], ["conv_autopad"])


@case
def conv_transpose_output_padding_too_big(ctx):
    """ConvTranspose with output_padding 3 >= stride 2."""
    w = numpy_helper.from_array(np.ones((3, 2, 3, 3), np.float32), "ct_weight")
    m = _node_model("ConvTranspose", ["pixels", "ct_weight"], name="convt_outpad", inits=[w], strides=[2, 2],
                    output_padding=[3, 3])
    return _simple(ctx, m, ["output_padding", "stride"], ["convt_outpad"])


@case
def conv_transpose_output_shape_huge(ctx):
    """ConvTranspose with output_shape [2^40, 2^40]."""
    w = numpy_helper.from_array(np.ones((3, 2, 3, 3), np.float32), "ct_weight")
    m = _node_model("ConvTranspose", ["pixels", "ct_weight"], name="convt_huge", inits=[w],
                    output_shape=[2**40, 2**40])
    return _simple(ctx, m, ["output_shape"] + TOO_LARGE + ["pads", "negative", "invalid"], ["convt_huge"],
                   run_only=True)


@case
def batchnorm_scale_wrong_length(ctx):
    """BatchNormalization with a scale of 5 values for 3 channels."""
    inits = [numpy_helper.from_array(np.ones(n, np.float32), nm)
             for nm, n in (("bn_scale", 5), ("bn_bias", 3), ("bn_mean", 3), ("bn_var", 3))]
    m = _node_model("BatchNormalization", ["pixels", "bn_scale", "bn_bias", "bn_mean", "bn_var"], name="bn_bad",
                    inits=inits)
    return _simple(ctx, m, ["scale", "shape", "channel", "size", "broadcast"], ["bn_bad"])


@case
def gemm_trans_mismatch(ctx):
    """Gemm [2, 3] x [2, 4] with transB=1 (needs B [N, 3])."""
    b = numpy_helper.from_array(np.ones((2, 4), np.float32), "gemm_b")
    m = _node_model("Gemm", ["pixels", "gemm_b"], name="gemm_bad", inits=[b], in_vis=[f32("pixels", [2, 3])],
                    transB=1)
    return _simple(ctx, m, ["inner", "dim", "shape", "match"], ["gemm_bad"])


@case
def split_num_outputs_too_many(ctx):
    """Split (opset 18) into num_outputs=8 of an axis of length 3."""
    outs = [f"s{i}" for i in range(8)]
    m = _node_model("Split", ["pixels"], outputs=outs, name="split_many", opset=18, axis=1, num_outputs=8)
    return _simple(ctx, m, ["split", "num_outputs", "outputs"], ["split_many"])


@case
def split_attr_opset11_wrong_sum(ctx):
    """Split (opset 11) with attribute split=[1, 1] of an axis of length 3."""
    m = _node_model("Split", ["pixels"], outputs=["a", "b"], name="split_attr", opset=11, axis=1, split=[1, 1])
    return _simple(ctx, m, ["split", "sum"], ["split_attr"])


@case
def split_negative_size(ctx):
    """Split sizes [4, -1] of an axis of length 3."""
    m = _node_model("Split", ["pixels", "sizes"], outputs=["a", "b"], name="split_neg", axis=1,
                    inits=[_const_i64("sizes", [4, -1])])
    return _simple(ctx, m, ["split", "sum", "negative", "invalid"], ["split_neg"])


@case
def depth_to_space_not_dividing(ctx):
    """DepthToSpace blocksize 2 of 3 channels."""
    m = _node_model("DepthToSpace", ["pixels"], name="d2s_bad", blocksize=2)
    return _simple(ctx, m, ["blocksize", "channel", "divis"], ["d2s_bad"])


@case
def depth_to_space_zero_block(ctx):
    """DepthToSpace blocksize 0."""
    m = _node_model("DepthToSpace", ["pixels"], name="d2s_zero", blocksize=0)
    return _simple(ctx, m, ["blocksize", "positive"], ["d2s_zero"])


@case
def space_to_depth_not_dividing(ctx):
    """SpaceToDepth blocksize 3 of an 8x8 input."""
    m = _node_model("SpaceToDepth", ["pixels"], name="s2d_bad", blocksize=3)
    return _simple(ctx, m, ["blocksize", "divis", "spatial"], ["s2d_bad"])


@case
def transpose_perm_duplicate(ctx):
    """Transpose perm [0, 0, 1, 2]."""
    m = _node_model("Transpose", ["pixels"], name="transpose_dup", perm=[0, 0, 1, 2])
    return _simple(ctx, m, ["perm", "permutation"], ["transpose_dup"])


@case
def transpose_perm_out_of_range(ctx):
    """Transpose perm [0, 1, 2, 9]."""
    m = _node_model("Transpose", ["pixels"], name="transpose_oor", perm=[0, 1, 2, 9])
    return _simple(ctx, m, ["perm", "permutation"] + OUT_OF_RANGE, ["transpose_oor"])


@case
def transpose_perm_wrong_length(ctx):
    """Transpose perm [1, 0] of a rank-4 input."""
    m = _node_model("Transpose", ["pixels"], name="transpose_len", perm=[1, 0])
    return _simple(ctx, m, ["perm", "permutation", "rank"], ["transpose_len"])


@case
def concat_axis_out_of_range(ctx):
    """Concat axis 7 of rank-4 inputs."""
    m = _node_model("Concat", ["pixels", "pixels"], name="concat_axis", axis=7)
    return _simple(ctx, m, ["axis"] + OUT_OF_RANGE, ["concat_axis"])


@case
def concat_shape_mismatch(ctx):
    """Concat along axis 1 of [1, 3, 8, 8] and [1, 3, 4, 4]."""
    c = numpy_helper.from_array(np.ones((1, 3, 4, 4), np.float32), "small_block")
    m = _node_model("Concat", ["pixels", "small_block"], name="concat_shapes", inits=[c], axis=1)
    return _simple(ctx, m, ["shape", "dim", "match"], ["concat_shapes"])


@case
def softmax_axis_out_of_range(ctx):
    """Softmax axis -9 of a rank-4 input."""
    m = _node_model("Softmax", ["pixels"], name="softmax_axis", axis=-9)
    return _simple(ctx, m, ["axis"] + OUT_OF_RANGE, ["softmax_axis"])


@case
def flatten_axis_out_of_range(ctx):
    """Flatten axis 5 of a rank-4 input."""
    m = _node_model("Flatten", ["pixels"], name="flatten_axis", axis=5)
    return _simple(ctx, m, ["axis"] + OUT_OF_RANGE, ["flatten_axis"])


@case
def reduce_axes_out_of_range(ctx):
    """ReduceSum over axis 10 of a rank-4 input."""
    m = _node_model("ReduceSum", ["pixels", "axes"], name="reduce_axes", inits=[_const_i64("axes", [10])])
    return _simple(ctx, m, ["axis", "axes"] + OUT_OF_RANGE, ["reduce_axes"])


@case
def reduce_axes_duplicate(ctx):
    """ReduceMean over axes [1, 1]."""
    m = _node_model("ReduceMean", ["pixels", "axes"], name="reduce_dup", opset=18, inits=[_const_i64("axes", [1, 1])])
    return _simple(ctx, m, ["axis", "axes"] + DUPLICATE, ["reduce_dup"])


@case
def unsqueeze_axes_out_of_range(ctx):
    """Unsqueeze at axis 9 of a rank-4 input."""
    m = _node_model("Unsqueeze", ["pixels", "axes"], name="unsqueeze_axes", inits=[_const_i64("axes", [9])])
    return _simple(ctx, m, ["axis", "axes"] + OUT_OF_RANGE, ["unsqueeze_axes"])


@case
def squeeze_non_unit_axis(ctx):
    """Squeeze axis 1 (size 3)."""
    m = _node_model("Squeeze", ["pixels", "axes"], name="squeeze_bad", inits=[_const_i64("axes", [1])])
    return _simple(ctx, m, ["squeeze", "size 1", "not 1", "axis", "1"], ["squeeze_bad"])


@case
def layernorm_axis_out_of_range(ctx):
    """LayerNormalization axis 6 of a rank-4 input."""
    s = numpy_helper.from_array(np.ones(8, np.float32), "ln_scale")
    m = _node_model("LayerNormalization", ["pixels", "ln_scale"], name="ln_axis", inits=[s], axis=6)
    return _simple(ctx, m, ["axis"] + OUT_OF_RANGE, ["ln_axis"])


@case
def groupnorm_groups_not_dividing(ctx):
    """GroupNormalization num_groups 2 over 3 channels."""
    inits = [numpy_helper.from_array(np.ones(3, np.float32), n) for n in ("gn_scale", "gn_bias")]
    m = _node_model("GroupNormalization", ["pixels", "gn_scale", "gn_bias"], name="gn_bad", opset=21, inits=inits,
                    num_groups=2)
    return _simple(ctx, m, ["group", "channel", "divis"], ["gn_bad"])


@case
def einsum_bad_equation(ctx):
    """Einsum with equation 'ij,jk->ikq' (an output letter no input has)."""
    m = _node_model("Einsum", ["pixels", "pixels"], name="einsum_bad", in_vis=[f32("pixels", [2, 2])],
                    equation="ij,jk->ikq")
    return _simple(ctx, m, ["equation", "einsum", "letter", "label", "subscript"], ["einsum_bad"])


@case
def einsum_garbage_equation(ctx):
    """Einsum with equation '!!->'."""
    m = _node_model("Einsum", ["pixels"], name="einsum_junk", in_vis=[f32("pixels", [2, 2])], equation="!!->")
    return _simple(ctx, m, ["equation", "einsum", "character", "letter", "invalid"], ["einsum_junk"])


@case
def topk_k_larger_than_axis(ctx):
    """TopK with k=100 along an axis of length 8."""
    m = _node_model("TopK", ["pixels", "k"], outputs=["vals", "idx"], name="topk_big", inits=[_const_i64("k", [100])])
    return _simple(ctx, m, ["k", "larger", "axis"], ["topk_big"])


@case
def topk_k_negative(ctx):
    """TopK with k=-1."""
    m = _node_model("TopK", ["pixels", "k"], outputs=["vals", "idx"], name="topk_neg", inits=[_const_i64("k", [-1])])
    return _simple(ctx, m, ["k", "negative", "invalid"], ["topk_neg"])


@case
def onehot_negative_depth(ctx):
    """OneHot with depth -3."""
    inits = [_const_i64("oh_idx", [0, 1]), _const_i64("oh_depth", [-3]),
             numpy_helper.from_array(np.array([0, 1], np.float32), "oh_values")]
    m = _node_model("OneHot", ["oh_idx", "oh_depth", "oh_values"], name="onehot_neg", inits=inits, in_vis=[])
    return _simple(ctx, m, ["depth", "positive", "invalid"], ["onehot_neg"])


@case
def range_zero_delta(ctx):
    """Range(0, 10, 0)."""
    inits = [_const_i64(n, v) for n, v in (("r_start", 0), ("r_limit", 10), ("r_delta", 0))]
    m = _node_model("Range", ["r_start", "r_limit", "r_delta"], name="range_zero", inits=inits, in_vis=[])
    return _simple(ctx, m, ["delta", "zero", "step"], ["range_zero"])


@case
def range_huge(ctx):
    """Range(0, 2^62, 1)."""
    inits = [_const_i64(n, v) for n, v in (("r_start", 0), ("r_limit", 2**62), ("r_delta", 1))]
    m = _node_model("Range", ["r_start", "r_limit", "r_delta"], name="range_huge", inits=inits, in_vis=[])
    return _simple(ctx, m, TOO_LARGE + ["range"], ["range_huge"])


@case
def reshape_two_minus_ones(ctx):
    """Reshape to [-1, -1]."""
    m = _node_model("Reshape", ["pixels", "shape"], name="reshape_2neg", inits=[_const_i64("shape", [-1, -1])])
    return _simple(ctx, m, ["-1", "reshape", "shape", "one"], ["reshape_2neg"])


@case
def reshape_minus_two(ctx):
    """Reshape to [-2, 96]."""
    m = _node_model("Reshape", ["pixels", "shape"], name="reshape_m2", inits=[_const_i64("shape", [-2, 96])])
    return _simple(ctx, m, ["-2", "reshape", "shape", "invalid", "negative"], ["reshape_m2"])


@case
def expand_negative_shape(ctx):
    """Expand to [1, 3, -8, 8]."""
    m = _node_model("Expand", ["pixels", "shape"], name="expand_neg", inits=[_const_i64("shape", [1, 3, -8, 8])])
    return _simple(ctx, m, ["shape", "negative", "invalid", "broadcast"], ["expand_neg"])


@case
def expand_absurd(ctx):
    """Expand [1, 3, 8, 8] to [2^30, 3, 8, 8] (about 2^35 f32 values)."""
    m = _node_model("Expand", ["pixels", "shape"], name="expand_huge", inits=[_const_i64("shape", [2**30, 3, 8, 8])])
    return _simple(ctx, m, TOO_LARGE + ["size"], ["expand_huge"], run_only=True)


@case
def tile_negative_repeats(ctx):
    """Tile with repeats [1, -1, 1, 1]."""
    m = _node_model("Tile", ["pixels", "repeats"], name="tile_neg", inits=[_const_i64("repeats", [1, -1, 1, 1])])
    return _simple(ctx, m, ["repeats", "negative", "invalid"], ["tile_neg"])


@case
def pad_negative_beyond_size(ctx):
    """Pad with pads of -10 on an axis of length 8."""
    m = _node_model("Pad", ["pixels", "pads"], name="pad_neg", inits=[_const_i64("pads", [0, 0, -10, 0, 0, 0, 0, 0])])
    return _simple(ctx, m, ["pad", "negative", "size"], ["pad_neg"])


@case
def pad_huge(ctx):
    """Pad with pads of 2^40."""
    m = _node_model("Pad", ["pixels", "pads"], name="pad_huge", inits=[_const_i64("pads", [0, 0, 2**40, 0, 0, 0, 0, 0])])
    return _simple(ctx, m, ["pad"] + TOO_LARGE, ["pad_huge"])


@case
def pad_wrong_length(ctx):
    """Pad with 3 pads values for a rank-4 input."""
    m = _node_model("Pad", ["pixels", "pads"], name="pad_len", inits=[_const_i64("pads", [1, 1, 1])])
    return _simple(ctx, m, ["pad"], ["pad_len"])


@case
def resize_scales_wrong_length(ctx):
    """Resize with 2 scales for a rank-4 input."""
    scales = numpy_helper.from_array(np.array([2, 2], np.float32), "scales")
    m = _node_model("Resize", ["pixels", "", "scales"], name="resize_len", inits=[scales])
    return _simple(ctx, m, ["scales", "rank"], ["resize_len"])


@case
def resize_negative_scale(ctx):
    """Resize with scales [1, 1, -2, 2]."""
    scales = numpy_helper.from_array(np.array([1, 1, -2, 2], np.float32), "scales")
    m = _node_model("Resize", ["pixels", "", "scales"], name="resize_neg", inits=[scales])
    return _simple(ctx, m, ["scale", "positive", "negative", "invalid"], ["resize_neg"])


@case
def resize_nan_scale(ctx):
    """Resize with scales [1, 1, nan, 2]."""
    scales = numpy_helper.from_array(np.array([1, 1, np.nan, 2], np.float32), "scales")
    m = _node_model("Resize", ["pixels", "", "scales"], name="resize_nan", inits=[scales])
    return _simple(ctx, m, ["scale", "nan", "finite", "positive", "invalid"], ["resize_nan"])


@case
def resize_nan_scale_symbolic_input(ctx):
    """Resize of an input with symbolic dims by scales [1, 1, nan, 2] (fuzz regression: NaN cast to int)."""
    scales = numpy_helper.from_array(np.array([1, 1, np.nan, 2], np.float32), "scales")
    m = _node_model("Resize", ["pixels", "", "scales"], name="resize_nan_sym", inits=[scales],
                    in_vis=[f32("pixels", ["N", 3, 8, "W"])])
    return _simple(ctx, m, ["scale", "positive"], ["resize_nan_sym"])


@case
def resize_nan_and_huge_roi(ctx):
    """Resize-11 tf_crop_and_resize with roi [nan, 2.25e15, ...] (fuzz regression: NaN/huge coordinates cast to int).

    Either result is fair: sampled (NaN coordinates extrapolate) or rejected; never undefined behaviour."""
    roi = numpy_helper.from_array(np.array([np.nan, 2.25e15, 0.1, -0.2, 1, 1, 0.9, 0.8], np.float32), "roi")
    scales = numpy_helper.from_array(np.zeros(0, np.float32), "no_scales")
    sizes = _const_i64("sizes", [1, 2, 4, 5])
    m = _node_model("Resize", ["pixels", "roi", "no_scales", "sizes"], name="resize_roi", inits=[roi, scales, sizes],
                    in_vis=[f32("pixels", [1, 2, 6, 6])], opset=11, mode="linear",
                    coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-7.0)
    e = expect(exit=[0, 2], fragments=["roi", "nan", "finite"])
    return {"model": ctx.save(m), "run": e, "inspect": expect(exit=[0, 2])}


@case
def constant_of_shape_negative(ctx):
    """ConstantOfShape [2, -1]."""
    m = _node_model("ConstantOfShape", ["dims"], name="cos_neg", inits=[_const_i64("dims", [2, -1])], in_vis=[])
    return _simple(ctx, m, ["negative", "invalid", "shape"], ["cos_neg"])


@case
def constant_of_shape_value_two_elements(ctx):
    """ConstantOfShape whose value attribute holds 2 elements (must be 1)."""
    v = numpy_helper.from_array(np.array([1, 2], np.float32), "v")
    m = _node_model("ConstantOfShape", ["dims"], name="cos_val2", inits=[_const_i64("dims", [2])], in_vis=[], value=v)
    return _simple(ctx, m, ["value", "one", "1 element", "single", "element"], ["cos_val2"])


# --- out-of-range indices ------------------------------------------------------------


def _idx_model(op, idx_name, idx, name, data_shape=(3, 4), extra_inits=(), **attrs):
    """op(data, idx): constant indices (idx is an array) or a runtime i64 input (idx is None)."""
    inits = list(extra_inits)
    vis = [f32("pixels", list(data_shape))]
    if idx is None:
        vis.append(_vi(idx_name, TensorProto.INT64, None))
    else:
        inits.append(numpy_helper.from_array(np.asarray(idx, np.int64), idx_name))
    return _node_model(op, ["pixels", idx_name], name=name, inits=inits, in_vis=vis, **attrs)


@case
def gather_negative_index_out_of_range(ctx):
    """Gather row -4 of a [3, 4] input (constant indices)."""
    m = _idx_model("Gather", "rows", [-4], "gather_negoor", axis=0)
    return _simple(ctx, m, OUT_OF_RANGE + ["index", "indices"], ["gather_negoor"])


@case
def gather_index_int64_min(ctx):
    """Gather row -2^63 (constant)."""
    m = _idx_model("Gather", "rows", [-(2**63)], "gather_min", axis=0)
    return _simple(ctx, m, OUT_OF_RANGE + ["index", "indices"], ["gather_min"])


@case
def gather_axis_out_of_range(ctx):
    """Gather along axis 2 of a rank-2 input."""
    m = _idx_model("Gather", "rows", [0], "gather_axis", axis=2)
    return _simple(ctx, m, ["axis"] + OUT_OF_RANGE, ["gather_axis"])


@case
def gather_runtime_index_out_of_range(ctx):
    """Gather with runtime indices [0, 7] (from an .npy) into a [3, 4] input."""
    m = _idx_model("Gather", "rows", None, "gather_rt", axis=0)
    npy = ctx.npy(np.array([0, 7], np.int64), "rows.npy")
    return {"model": ctx.save(m), "inputs": {"rows": npy},
            "run": expect(fragments=OUT_OF_RANGE + ["index", "indices"], mentions=["gather_rt"]),
            "inspect": expect(exit=[0])}


@case
def gather_elements_index_out_of_range(ctx):
    """GatherElements with constant index 5 along an axis of length 3."""
    m = _idx_model("GatherElements", "idx", [[5, 0, 0, 0]], "gathere_oor", axis=0)
    return _simple(ctx, m, OUT_OF_RANGE + ["index", "indices"], ["gathere_oor"])


@case
def gather_elements_runtime_out_of_range(ctx):
    """GatherElements with runtime index -9 along an axis of length 3."""
    m = _idx_model("GatherElements", "idx", None, "gathere_rt", axis=0)
    npy = ctx.npy(np.array([[-9, 0, 0, 0]], np.int64), "idx.npy")
    return {"model": ctx.save(m), "inputs": {"idx": npy},
            "run": expect(fragments=OUT_OF_RANGE + ["index", "indices"], mentions=["gathere_rt"]),
            "inspect": expect(exit=[0])}


@case
def gather_nd_index_out_of_range(ctx):
    """GatherND with constant index [2, 9] into a [3, 4] input."""
    m = _idx_model("GatherND", "idx", [[2, 9]], "gathernd_oor")
    return _simple(ctx, m, OUT_OF_RANGE + ["index", "indices"], ["gathernd_oor"])


@case
def gather_nd_index_too_long(ctx):
    """GatherND with index tuples of length 3 into a rank-2 input."""
    m = _idx_model("GatherND", "idx", [[0, 0, 0]], "gathernd_len")
    return _simple(ctx, m, ["index", "indices", "rank", "last dim"], ["gathernd_len"])


@case
def scatter_nd_index_out_of_range(ctx):
    """ScatterND writing row 10 of a [3, 4] input."""
    upd = numpy_helper.from_array(np.ones((1, 4), np.float32), "upd")
    idx = numpy_helper.from_array(np.array([[10]], np.int64), "idx")
    m = _node_model("ScatterND", ["pixels", "idx", "upd"], name="scatternd_oor", inits=[idx, upd],
                    in_vis=[f32("pixels", [3, 4])])
    return _simple(ctx, m, OUT_OF_RANGE + ["index", "indices"], ["scatternd_oor"])


@case
def scatter_elements_index_out_of_range(ctx):
    """ScatterElements with index -5 along an axis of length 3."""
    upd = numpy_helper.from_array(np.ones((1, 4), np.float32), "upd")
    idx = numpy_helper.from_array(np.array([[-5, 0, 0, 0]], np.int64), "idx")
    m = _node_model("ScatterElements", ["pixels", "idx", "upd"], name="scattere_oor", inits=[idx, upd],
                    in_vis=[f32("pixels", [3, 4])], axis=0)
    return _simple(ctx, m, OUT_OF_RANGE + ["index", "indices"], ["scattere_oor"])


@case
def scatter_nd_runtime_out_of_range(ctx):
    """ScatterND with runtime index [[3]] into a [3, 4] input."""
    upd = numpy_helper.from_array(np.ones((1, 4), np.float32), "upd")
    m = _node_model("ScatterND", ["pixels", "idx", "upd"], name="scatternd_rt", inits=[upd],
                    in_vis=[f32("pixels", [3, 4]), _vi("idx", TensorProto.INT64, [1, 1])])
    npy = ctx.npy(np.array([[3]], np.int64), "idx.npy")
    return {"model": ctx.save(m), "inputs": {"idx": npy},
            "run": expect(fragments=OUT_OF_RANGE + ["index", "indices"], mentions=["scatternd_rt"]),
            "inspect": expect(exit=[0])}


def _slice_model(name, starts, ends, axes=None, steps=None, in_vis=None):
    inits = [_const_i64("starts", starts), _const_i64("ends", ends)]
    ins = ["pixels", "starts", "ends"]
    if axes is not None or steps is not None:
        inits.append(_const_i64("axes", axes if axes is not None else list(range(len(starts)))))
        ins.append("axes")
    if steps is not None:
        inits.append(_const_i64("steps", steps))
        ins.append("steps")
    return _node_model("Slice", ins, name=name, inits=inits, in_vis=in_vis)


@case
def slice_axis_out_of_range(ctx):
    """Slice along axis 6 of a rank-4 input."""
    return _simple(ctx, _slice_model("slice_axis", [0], [1], axes=[6]), ["axis", "axes"] + OUT_OF_RANGE,
                   ["slice_axis"])


@case
def slice_duplicate_axes(ctx):
    """Slice with axes [1, 1]."""
    return _simple(ctx, _slice_model("slice_dup", [0, 0], [1, 1], axes=[1, 1]), ["axis", "axes"] + DUPLICATE,
                   ["slice_dup"])


@case
def slice_zero_step(ctx):
    """Slice with step 0."""
    return _simple(ctx, _slice_model("slice_step0", [0], [2], axes=[2], steps=[0]), ["step", "zero"], ["slice_step0"])


@case
def slice_lengths_disagree(ctx):
    """Slice with 2 starts and 1 end."""
    m = _node_model("Slice", ["pixels", "starts", "ends"], name="slice_len",
                    inits=[_const_i64("starts", [0, 0]), _const_i64("ends", [1])])
    return _simple(ctx, m, ["starts", "ends", "length", "same"], ["slice_len"])


@case
def slice_runtime_step_zero(ctx):
    """Slice with a runtime steps input of [0]."""
    inits = [_const_i64("starts", [0]), _const_i64("ends", [2]), _const_i64("axes", [2])]
    m = _node_model("Slice", ["pixels", "starts", "ends", "axes", "steps"], name="slice_rtstep", inits=inits,
                    in_vis=[f32("pixels", [1, 3, 8, 8]), _vi("steps", TensorProto.INT64, [1])])
    npy = ctx.npy(np.array([0], np.int64), "steps.npy")
    return {"model": ctx.save(m), "inputs": {"steps": npy},
            "run": expect(fragments=["step", "zero"], mentions=["slice_rtstep"]), "inspect": expect(exit=[0])}


@case
def split_runtime_sizes_wrong(ctx):
    """Split with runtime sizes [2, 5] of an axis of length 3."""
    m = _node_model("Split", ["pixels", "sizes"], outputs=["a", "b"], name="split_rt", axis=1,
                    in_vis=[f32("pixels", [1, 3, 8, 8]), _vi("sizes", TensorProto.INT64, [2])])
    npy = ctx.npy(np.array([2, 5], np.int64), "sizes.npy")
    return {"model": ctx.save(m), "inputs": {"sizes": npy},
            "run": expect(fragments=["split", "sum"], mentions=["split_rt"]), "inspect": expect(exit=[0])}


@case
def split_axis_out_of_range(ctx):
    """Split along axis 4 of a rank-4 input."""
    m = _node_model("Split", ["pixels"], outputs=["a", "b"], name="split_axis", opset=18, axis=4, num_outputs=2)
    return _simple(ctx, m, ["axis"] + OUT_OF_RANGE, ["split_axis"])


@case
def reshape_runtime_impossible(ctx):
    """Reshape to a runtime shape [5, 5] of 192 elements."""
    m = _node_model("Reshape", ["pixels", "target"], name="reshape_rt",
                    in_vis=[f32("pixels", [1, 3, 8, 8]), _vi("target", TensorProto.INT64, [2])])
    npy = ctx.npy(np.array([5, 5], np.int64), "target.npy")
    return {"model": ctx.save(m), "inputs": {"target": npy},
            "run": expect(fragments=["reshape", "element", "cannot", "size", "shape"], mentions=["reshape_rt"]),
            "inspect": expect(exit=[0])}


# --- zero strides, kernels and groups -----------------------------------------------


@case
def conv_group_zero(ctx):
    """Conv group 0."""
    return _simple(ctx, conv_model("conv_group0", group=0), ["group"], ["conv_group0"])


@case
def conv_group_negative(ctx):
    """Conv group -1."""
    return _simple(ctx, conv_model("conv_groupneg", group=-1), ["group"], ["conv_groupneg"])


@case
def conv_group_huge(ctx):
    """Conv group 2^62."""
    return _simple(ctx, conv_model("conv_grouphuge", group=2**62), ["group", "channel"], ["conv_grouphuge"])


@case
def conv_kernel_shape_zero(ctx):
    """Conv kernel_shape [0, 0] with a weight of 0x0 kernels."""
    return _simple(ctx, conv_model("conv_k0", w_shape=(4, 3, 0, 0), kernel_shape=[0, 0]), ["kernel"], ["conv_k0"])


@case
def conv_strides_negative(ctx):
    """Conv strides [-1, 1]."""
    return _simple(ctx, conv_model("conv_strneg", strides=[-1, 1]), ["stride"], ["conv_strneg"])


@case
def conv_transpose_zero_strides(ctx):
    """ConvTranspose strides [0, 0]."""
    w = numpy_helper.from_array(np.ones((3, 2, 3, 3), np.float32), "ct_weight")
    m = _node_model("ConvTranspose", ["pixels", "ct_weight"], name="convt_str0", inits=[w], strides=[0, 0])
    return _simple(ctx, m, ["stride"], ["convt_str0"])


@case
def conv_transpose_group_zero(ctx):
    """ConvTranspose group 0."""
    w = numpy_helper.from_array(np.ones((3, 2, 3, 3), np.float32), "ct_weight")
    m = _node_model("ConvTranspose", ["pixels", "ct_weight"], name="convt_g0", inits=[w], group=0)
    return _simple(ctx, m, ["group"], ["convt_g0"])


@case
def avgpool_kernel_zero(ctx):
    """AveragePool kernel_shape [0, 2]."""
    m = _node_model("AveragePool", ["pixels"], name="avgpool_k0", kernel_shape=[0, 2])
    return _simple(ctx, m, ["kernel"], ["avgpool_k0"])


@case
def maxpool_no_kernel_shape(ctx):
    """MaxPool without kernel_shape (required)."""
    m = _node_model("MaxPool", ["pixels"], name="maxpool_nok")
    return _simple(ctx, m, ["kernel_shape", "required", "missing"], ["maxpool_nok"])


@case
def maxpool_dilations_zero(ctx):
    """MaxPool dilations [0, 0]."""
    m = _node_model("MaxPool", ["pixels"], name="maxpool_dil0", kernel_shape=[2, 2], dilations=[0, 0])
    return _simple(ctx, m, ["dilation"], ["maxpool_dil0"])


@case
def avgpool_strides_zero(ctx):
    """AveragePool strides [0, 2]."""
    m = _node_model("AveragePool", ["pixels"], name="avgpool_str0", kernel_shape=[2, 2], strides=[0, 2])
    return _simple(ctx, m, ["stride"], ["avgpool_str0"])


@case
def maxpool_kernel_huge(ctx):
    """MaxPool kernel_shape [2^40, 2]."""
    m = _node_model("MaxPool", ["pixels"], name="maxpool_khuge", kernel_shape=[2**40, 2])
    return _simple(ctx, m, ["kernel"] + TOO_LARGE + ["output", "input"], ["maxpool_khuge"])


# --- graph structure ---------------------------------------------------------------


@case
def cycle_three_nodes(ctx):
    """relu_a -> relu_b -> relu_c -> relu_a."""
    nodes = [helper.make_node("Relu", ["c_out"], ["a_out"], name="relu_a"),
             helper.make_node("Relu", ["a_out"], ["b_out"], name="relu_b"),
             helper.make_node("Relu", ["b_out"], ["c_out"], name="relu_c")]
    m = make_model(nodes, [f32("pixels", [2])], [f32("c_out", [2])])
    return {"model": ctx.save(m), **both(fragments=["cycle"], mentions=[["relu_a", "relu_b", "relu_c"]])}


@case
def self_loop(ctx):
    """A node reading its own output."""
    n = helper.make_node("Add", ["pixels", "loop_out"], ["loop_out"], name="add_self")
    m = make_model([n], [f32("pixels", [2])], [f32("loop_out", [2])])
    return {"model": ctx.save(m), **both(fragments=["cycle"], mentions=["add_self"])}


@case
def cycle_off_the_output_path(ctx):
    """A cycle between two nodes no output depends on, next to a valid Relu."""
    nodes = [helper.make_node("Relu", ["pixels"], ["y"], name="relu_ok"),
             helper.make_node("Neg", ["q_out"], ["p_out"], name="neg_p"),
             helper.make_node("Neg", ["p_out"], ["q_out"], name="neg_q")]
    m = make_model(nodes, [f32("pixels", [2])], [f32("y", [2])])
    return {"model": ctx.save(m), **both(fragments=["cycle"], mentions=[["neg_p", "neg_q"]])}


@case
def empty_node_names(ctx):
    """Three nodes with empty names: ferry names them itself and runs."""
    nodes = [helper.make_node("Neg", ["pixels"], ["a"]), helper.make_node("Neg", ["a"], ["b"]),
             helper.make_node("Identity", ["b"], ["y"])]
    m = make_model(nodes, [f32("pixels", [4])], [f32("y", [4])])
    return {"model": ctx.save(m), "inputs": {"pixels": ctx.npy(np.arange(4, dtype=np.float32), "x.npy")},
            "output_equals_input": True, "run": expect(exit=[0]), "inspect": expect(exit=[0])}


@case
def duplicate_node_names(ctx):
    """Two nodes named 'same': names are labels, the model runs."""
    nodes = [helper.make_node("Neg", ["pixels"], ["a"], name="same"), helper.make_node("Neg", ["a"], ["y"], name="same")]
    m = make_model(nodes, [f32("pixels", [4])], [f32("y", [4])])
    return {"model": ctx.save(m), "inputs": {"pixels": ctx.npy(np.arange(4, dtype=np.float32), "x.npy")},
            "output_equals_input": True, "run": expect(exit=[0]), "inspect": expect(exit=[0])}


@case
def graph_output_not_produced(ctx):
    """A graph output nothing produces."""
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [f32("pixels", [2])],
                   [f32("y", [2]), f32("ghost_output", [2])])
    return {"model": ctx.save(m), **both(fragments=UNDEFINED + ["not produced"], mentions=["ghost_output"])}


@case
def graph_output_empty_name(ctx):
    """A graph output with an empty name."""
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [f32("pixels", [2])],
                   [f32("y", [2]), f32("", [2])])
    return {"model": ctx.save(m), **both(fragments=["name", "empty"] + UNDEFINED, mentions=["output"])}


@case
def graph_input_empty_name(ctx):
    """A graph input with an empty name."""
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [f32("pixels", [2]), f32("", [2])],
                   [f32("y", [2])])
    return {"model": ctx.save(m), **both(fragments=["no name", "empty", "name"], mentions=["input"])}


@case
def graph_input_listed_twice(ctx):
    """The graph input 'pixels' listed twice."""
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [f32("pixels", [2]), f32("pixels", [2])],
                   [f32("y", [2])])
    return {"model": ctx.save(m), **both(fragments=DUPLICATE, mentions=["pixels"])}


@case
def initializer_listed_twice(ctx):
    """The initializer 'w_twice' listed twice."""
    w = numpy_helper.from_array(np.ones(2, np.float32), "w_twice")
    m = make_model([helper.make_node("Add", ["pixels", "w_twice"], ["y"], name="add")], [f32("pixels", [2])],
                   [f32("y", [2])], [w, w])
    return {"model": ctx.save(m), **both(fragments=DUPLICATE, mentions=["w_twice"])}


@case
def initializer_without_name(ctx):
    """An initializer with an empty name."""
    w = numpy_helper.from_array(np.ones(2, np.float32), "")
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [f32("pixels", [2])], [f32("y", [2])],
                   [w])
    return {"model": ctx.save(m), **both(fragments=["no name", "empty", "name"], mentions=["initializer"])}


@case
def node_output_shadows_initializer(ctx):
    """A node writes the value 'w_shadow', which is also an initializer."""
    w = numpy_helper.from_array(np.ones(2, np.float32), "w_shadow")
    m = make_model([helper.make_node("Relu", ["pixels"], ["w_shadow"], name="relu_shadow")], [f32("pixels", [2])],
                   [f32("w_shadow", [2])], [w])
    return {"model": ctx.save(m), **both(fragments=DUPLICATE, mentions=["w_shadow"])}


@case
def node_without_op_type(ctx):
    """A node whose op_type is empty."""
    m = make_model([helper.make_node("", ["pixels"], ["y"], name="nameless_op")], [f32("pixels", [2])],
                   [f32("y", [2])])
    return {"model": ctx.save(m), "run": expect(fragments=["op", "type", "empty", "importer"] + UNSUPPORTED,
                                                mentions=["nameless_op"]),
            "inspect": expect(exit=[0, 2], mentions=["nameless_op"])}


@case
def unknown_op_default_domain(ctx):
    """An op 'FrobnicateV2' in the default domain."""
    m = make_model([helper.make_node("FrobnicateV2", ["pixels"], ["y"], name="frob")], [f32("pixels", [2])],
                   [f32("y", [2])])
    return {"model": ctx.save(m), "run": expect(fragments=UNSUPPORTED, mentions=["frob", "FrobnicateV2"]),
            "inspect": expect(exit=[0, 2], mentions=["FrobnicateV2"])}


@case
def custom_domain_op(ctx):
    """An op of domain com.example."""
    n = helper.make_node("Magic", ["pixels"], ["y"], name="magic", domain="com.example")
    graph = helper.make_graph([n], "bad", [f32("pixels", [2])], [f32("y", [2])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
                          ir_version=8)
    return {"model": ctx.save(m), "run": expect(fragments=UNSUPPORTED + ["domain"], mentions=["magic", "com.example"]),
            "inspect": expect(exit=[0, 2], mentions=["Magic"])}


@case
def too_many_inputs(ctx):
    """Relu with 3 inputs."""
    m = _node_model("Relu", ["pixels", "pixels", "pixels"], name="relu3")
    return _simple(ctx, m, ["input"], ["relu3"])


@case
def too_few_inputs(ctx):
    """Conv with only its data input."""
    m = _node_model("Conv", ["pixels"], name="conv_noweight")
    return _simple(ctx, m, ["input"], ["conv_noweight"])


@case
def too_many_outputs(ctx):
    """Relu with 2 outputs."""
    m = _node_model("Relu", ["pixels"], outputs=["y", "y2"], name="relu_2out")
    return _simple(ctx, m, ["output"], ["relu_2out"])


@case
def no_outputs(ctx):
    """A Relu with no outputs at all (and a graph output from another node)."""
    nodes = [helper.make_node("Relu", ["pixels"], [], name="relu_noout"),
             helper.make_node("Neg", ["pixels"], ["y"], name="neg")]
    m = make_model(nodes, [f32("pixels", [2])], [f32("y", [2])])
    # A node nothing can read is dead: dropping it is as fair as rejecting it.
    e = expect(exit=[0, 2], fragments=["output"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def required_input_empty(ctx):
    """Add whose second input is '' (omitted, but required)."""
    m = _node_model("Add", ["pixels", ""], name="add_missing")
    return _simple(ctx, m, ["input", "required", "missing", "omitted"], ["add_missing"])


@case
def attribute_wrong_type(ctx):
    """Conv strides given as floats."""
    m = conv_model("conv_fstrides")
    a = helper.make_attribute("strides", [1.0, 1.0])
    m.graph.node[0].attribute.append(a)
    return _simple(ctx, m, ["strides", "attribute", "type", "ints", "float"], ["conv_fstrides"])


@case
def attribute_unknown(ctx):
    """Relu with an attribute 'bogus'."""
    m = _node_model("Relu", ["pixels"], name="relu_bogus", bogus=3)
    return _simple(ctx, m, ["bogus", "attribute"], ["relu_bogus"])


@case
def attribute_duplicated(ctx):
    """LeakyRelu with alpha given twice."""
    m = _node_model("LeakyRelu", ["pixels"], name="lrelu_twice", alpha=0.1)
    m.graph.node[0].attribute.append(helper.make_attribute("alpha", 0.2))
    return _simple(ctx, m, DUPLICATE + ["alpha"], ["lrelu_twice"])


@case
def attribute_type_undefined(ctx):
    """An attribute with no type and no value."""
    m = _node_model("LeakyRelu", ["pixels"], name="lrelu_untyped")
    m.graph.node[0].attribute.append(onnx.AttributeProto(name="alpha"))
    return _simple(ctx, m, ["alpha", "attribute", "type", "value"], ["lrelu_untyped"])


@case
def attribute_graph_on_relu(ctx):
    """Relu carrying a GRAPH attribute."""
    g = helper.make_graph([], "sub", [], [])
    m = _node_model("Relu", ["pixels"], name="relu_graph_attr")
    m.graph.node[0].attribute.append(helper.make_attribute("body", g))
    return _simple(ctx, m, ["body", "attribute", "graph"], ["relu_graph_attr"])


@case
def if_node(ctx):
    """An If node with two small branches (control flow is not supported: a clear error)."""
    then_g = helper.make_graph([helper.make_node("Neg", ["pixels"], ["t"], name="then_neg")], "then", [], [f32("t", [2])])
    else_g = helper.make_graph([helper.make_node("Abs", ["pixels"], ["e"], name="else_abs")], "else", [], [f32("e", [2])])
    n = helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)
    m = make_model([n], [_vi("cond", TensorProto.BOOL, []), f32("pixels", [2])], [f32("y", [2])])
    return {"model": ctx.save(m), "run": expect(fragments=UNSUPPORTED, mentions=["branch"]),
            "inspect": expect(exit=[0, 2], mentions=["If"])}


@case
def loop_node(ctx):
    """A Loop node (not supported: a clear error)."""
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"], name="body_id"),
                              helper.make_node("Neg", ["v_in"], ["v_out"], name="body_neg")], "body",
                             [_vi("i", TensorProto.INT64, []), _vi("c_in", TensorProto.BOOL, []), f32("v_in", [2])],
                             [_vi("c_out", TensorProto.BOOL, []), f32("v_out", [2])])
    n = helper.make_node("Loop", ["trip", "cond", "pixels"], ["y"], name="looper", body=body)
    m = make_model([n], [_vi("trip", TensorProto.INT64, []), _vi("cond", TensorProto.BOOL, []), f32("pixels", [2])],
                   [f32("y", [2])])
    return {"model": ctx.save(m), "run": expect(fragments=UNSUPPORTED, mentions=["looper"]),
            "inspect": expect(exit=[0, 2], mentions=["Loop"])}


@case
def local_function_call(ctx):
    """A node calling a model-local function."""
    fn = helper.make_function("local.fns", "Twice", ["x"], ["y"], [helper.make_node("Add", ["x", "x"], ["y"])],
                              [helper.make_opsetid("", 17)])
    n = helper.make_node("Twice", ["pixels"], ["y"], name="call_twice", domain="local.fns")
    graph = helper.make_graph([n], "bad", [f32("pixels", [2])], [f32("y", [2])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local.fns", 1)],
                          ir_version=8, functions=[fn])
    return {"model": ctx.save(m), "run": expect(fragments=UNSUPPORTED + ["function"], mentions=["call_twice"]),
            "inspect": expect(exit=[0, 2], mentions=["Twice"])}


@case
def no_default_opset(ctx):
    """A default-domain node in a model importing no default-domain opset."""
    m = conv_model("conv_noopset")
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    return {"model": ctx.save(m), **both(fragments=["opset"], mentions=["conv_noopset"])}


@case
def future_opset(ctx):
    """Default-domain opset 999."""
    m = conv_model("conv_future")
    m.opset_import[0].version = 999
    return {"model": ctx.save(m), **both(fragments=["opset"], mentions=["999"])}


@case
def negative_ir_version(ctx):
    """ir_version -3."""
    m = valid_model()
    m.ir_version = -3
    return {"model": ctx.save(m), **both(fragments=["ir_version", "ir version", "not a valid"])}


@case
def op_before_its_opset(ctx):
    """GroupNormalization (opset 18+) in an opset-13 model."""
    inits = [numpy_helper.from_array(np.ones(3, np.float32), n) for n in ("gn_scale", "gn_bias")]
    m = _node_model("GroupNormalization", ["pixels", "gn_scale", "gn_bias"], name="gn_early", opset=13, inits=inits,
                    num_groups=3)
    return _simple(ctx, m, ["opset", "exist"], ["gn_early"])


@case
def sparse_initializer(ctx):
    """A sparse initializer."""
    vals = numpy_helper.from_array(np.array([1.0], np.float32), "sparse_w")
    idx = numpy_helper.from_array(np.array([0], np.int64), "")
    sp = helper.make_sparse_tensor(vals, idx, [4])
    m = make_model([helper.make_node("Add", ["pixels", "sparse_w"], ["y"], name="add")], [f32("pixels", [4])],
                   [f32("y", [4])])
    m.graph.sparse_initializer.append(sp)
    return {"model": ctx.save(m), **both(fragments=["sparse"], mentions=["sparse_w"])}


# --- scale: many nodes, wide fan-out, huge lists (each a few MB at most) ---------------


@case
def chain_250k_relu(ctx):
    """250,000 Relu nodes in a row (about 9 MB): loads and runs (or fails cleanly) in bounded time."""
    nodes, prev = [], "pixels"
    for i in range(250_000):
        nodes.append(helper.make_node("Relu", [prev], [f"r{i}"], name=f"relu{i}"))
        prev = f"r{i}"
    m = make_model(nodes, [f32("pixels", [4])], [f32(prev, [4])])
    e = expect(exit=[0, 2], fragments=TOO_LARGE + ["depth", "nodes"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def fan_out_100k(ctx):
    """100,000 Neg nodes all reading the same input, summed by nothing: one value with 100k uses."""
    nodes = [helper.make_node("Neg", ["pixels"], [f"n{i}"], name=f"neg{i}") for i in range(100_000)]
    nodes.append(helper.make_node("Identity", ["n99999"], ["y"], name="last"))
    m = make_model(nodes, [f32("pixels", [2])], [f32("y", [2])])
    e = expect(exit=[0, 2], fragments=TOO_LARGE + ["nodes"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def same_name_100k(ctx):
    """100,000 Neg nodes in a row, all named 'same': making the names unique must not be quadratic."""
    nodes, prev = [], "pixels"
    for i in range(100_000):
        nodes.append(helper.make_node("Neg", [prev], [f"v{i}"], name="same"))
        prev = f"v{i}"
    m = make_model(nodes, [f32("pixels", [4])], [f32(prev, [4])])
    return {"model": ctx.save(m), "inputs": {"pixels": ctx.npy(np.arange(4, dtype=np.float32), "x.npy")},
            "output_equals_input": True, "run": expect(exit=[0]), "inspect": expect(exit=[0])}


@case
def concat_50k_inputs(ctx):
    """One Concat of 50,000 inputs."""
    n = helper.make_node("Concat", ["pixels"] * 50_000, ["y"], name="concat_wide", axis=0)
    m = make_model([n], [f32("pixels", [1])], [f32("y", None)])
    e = expect(exit=[0, 2], fragments=TOO_LARGE + ["inputs"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def many_graph_outputs(ctx):
    """50,000 graph outputs, each its own Neg."""
    nodes = [helper.make_node("Neg", ["pixels"], [f"o{i}"], name=f"neg{i}") for i in range(50_000)]
    m = make_model(nodes, [f32("pixels", [1])], [f32(f"o{i}", [1]) for i in range(50_000)])
    e = expect(exit=[0, 2], fragments=TOO_LARGE + ["outputs"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def many_initializers(ctx):
    """100,000 tiny initializers added in a balanced tree of Adds."""
    inits = [numpy_helper.from_array(np.array([float(i)], np.float32), f"c{i}") for i in range(100_000)]
    level, nodes, k = [f"c{i}" for i in range(100_000)], [], 0
    while len(level) > 1:
        nxt = []
        for a, b in zip(level[0::2], level[1::2]):
            nodes.append(helper.make_node("Add", [a, b], [f"s{k}"], name=f"add{k}"))
            nxt.append(f"s{k}")
            k += 1
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    nodes.append(helper.make_node("Identity", [level[0]], ["y"], name="total"))
    m = make_model(nodes, [], [f32("y", [1])], inits)
    e = expect(exit=[0, 2], fragments=TOO_LARGE)
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def huge_attribute_list(ctx):
    """A Transpose whose perm has 1,000,000 entries for a rank-4 input."""
    m = _node_model("Transpose", ["pixels"], name="transpose_long", perm=list(range(1_000_000)))
    return _simple(ctx, m, ["perm", "permutation", "rank"], ["transpose_long"])


@case
def huge_name(ctx):
    """A node name of 4 MB on an op with a bad attribute: the error stays readable."""
    name = "n" * (4 << 20)
    m = _node_model("Transpose", ["pixels"], name=name, perm=[0, 0, 1, 2])
    e = expect(fragments=["perm", "permutation"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def deep_nested_loops(ctx):
    """Loop bodies nested 25 deep: rejected as unsupported, without recursion trouble."""
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"], name="leaf_id")], "leaf",
                             [_vi("i", TensorProto.INT64, []), _vi("c_in", TensorProto.BOOL, [])],
                             [_vi("c_out", TensorProto.BOOL, [])])
    for d in range(25):
        inner = helper.make_node("Loop", ["", "c_in"], [], name=f"loop{d}", body=body)
        body = helper.make_graph([inner, helper.make_node("Identity", ["c_in"], ["c_out"], name=f"id{d}")], f"b{d}",
                                 [_vi("i", TensorProto.INT64, []), _vi("c_in", TensorProto.BOOL, [])],
                                 [_vi("c_out", TensorProto.BOOL, [])])
    n = helper.make_node("Loop", ["", "cond"], [], name="outer_loop", body=body)
    m = make_model([n, helper.make_node("Identity", ["cond"], ["y"], name="id")], [_vi("cond", TensorProto.BOOL, [])],
                   [_vi("y", TensorProto.BOOL, [])])
    return {"model": ctx.save(m), "run": expect(fragments=UNSUPPORTED, mentions=["outer_loop"]),
            "inspect": expect(exit=[0, 2], mentions=["Loop"])}


# --- files that are not (whole) models ---------------------------------------------


def _truncated(ctx, fraction):
    whole = conv_model("conv", pads=[1, 1, 1, 1]).SerializeToString()
    return ctx.save(whole[: max(1, int(len(whole) * fraction))])


for _frac in (0.01, 0.25, 0.5, 0.9, 0.999):
    def _trunc_case(ctx, _f=_frac):
        return {"model": _truncated(ctx, _f), **both(fragments=PARSE + ["truncated", "graph", "ir_version"])}
    _register(f"truncated_at_{int(_frac * 1000):03d}_permille",
              f"A valid model cut after {_frac:.1%} of its bytes.", _trunc_case)


@case
def gzip_model(ctx):
    """A gzip-compressed model (wrong magic for protobuf)."""
    import gzip
    return {"model": ctx.save(gzip.compress(valid_model().SerializeToString())), **both(fragments=PARSE)}


@case
def zip_model(ctx):
    """An .npz (zip) archive saved as model.onnx."""
    path = ctx.dir / "arrays.npz"
    np.savez(path, a=np.zeros(3))
    return {"model": ctx.save(path.read_bytes()), **both(fragments=PARSE)}


@case
def npy_as_model(ctx):
    """An .npy file saved as model.onnx."""
    path = ctx.dir / "a.npy"
    np.save(path, np.zeros(3, np.float32))
    return {"model": ctx.save(path.read_bytes()), **both(fragments=PARSE)}


@case
def all_ff_bytes(ctx):
    """1 KiB of 0xff bytes."""
    return {"model": ctx.save(b"\xff" * 1024), **both(fragments=PARSE)}


@case
def protobuf_huge_length_prefix(ctx):
    """A graph field whose length prefix claims 2 GB."""
    data = _varint(1 << 3 | 0) + _varint(8) + _varint(7 << 3 | 2) + _varint(2**31 - 1) + b"\0" * 16
    return {"model": ctx.save(data), **both(fragments=PARSE)}


@case
def model_is_directory_entry(ctx):
    """The model path names a directory (a .onnx directory)."""
    d = ctx.dir / "dir.onnx"
    d.mkdir(exist_ok=True)
    return {"model": ctx.rel(d), "model_not_a_file": True, **both(fragments=["directory"])}


@case
def model_missing(ctx):
    """The model path does not exist."""
    return {"model": ctx.rel(ctx.dir / "nowhere.onnx"), "model_not_a_file": True,
            **both(fragments=["no such", "cannot open", "not found", "does not exist"])}


@case
def text_ir_truncated(ctx):
    """Text IR cut in the middle of a node."""
    text = "graph main (%x: f32[2]) -> (%y) {\n  %y = Relu(%x"
    return {"model": ctx.save(text.encode(), "model.ferry"), **both(fragments=["line", "expected"])}


@case
def text_ir_unknown_op(ctx):
    """Text IR calling an op ferry does not have."""
    text = "graph main (%x: f32[2]) -> (%y) {\n  %y = Frobnicate(%x) @frob\n}\n"
    return {"model": ctx.save(text.encode(), "model.ferry"), **both(fragments=["Frobnicate", "unknown op"])}


@case
def text_ir_huge_splat(ctx):
    """Text IR with a constant splat of 2^40 f32 values (4 TB)."""
    text = "graph main () -> (%y) {\n  %y = const f32[1099511627776] splat(0)\n}\n"
    return {"model": ctx.save(text.encode(), "model.ferry"), **both(fragments=TOO_LARGE + ["larger"], mentions=["line"])}


@case
def text_ir_cycle(ctx):
    """Text IR with two nodes reading each other."""
    text = "graph main (%x: f32[2]) -> (%a) {\n  %a = Relu(%b) @ra\n  %b = Relu(%a) @rb\n}\n"
    return {"model": ctx.save(text.encode(), "model.ferry"), "run": expect(fragments=["cycle"], mentions=[["ra", "rb"]]),
            "inspect": expect(exit=[0, 2])}


# --- bad inputs to a good model (more) -----------------------------------------------


def _npy_case(ctx, data, fragments, filename="bad.npy", mentions=("pixels",)):
    path = ctx.dir / filename
    path.write_bytes(data)
    npy = ctx.rel(path)
    return {"model": ctx.save(valid_model()), "inputs": {"pixels": npy}, "file": npy,
            "run": expect(fragments=fragments, mentions=list(mentions)), "inspect": None}


def _npy_bytes(header, data=b"", version=(1, 0)):
    h = header.encode("latin1")
    pad = (64 - (10 + len(h) + 1) % 64) % 64
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY" + bytes(version) + len(h).to_bytes(2, "little") + h + data


NPY = ["npy", "header", "magic", "not a", "invalid", "malformed"]


@case
def npy_wrong_magic(ctx):
    """An input file starting with 'PK' (a zip), not \\x93NUMPY."""
    return _npy_case(ctx, b"PK\x03\x04" + b"\0" * 100, NPY)


@case
def npy_fortran_order(ctx):
    """A Fortran-ordered .npy."""
    data = np.zeros((1, 3, 8, 8), np.float32).tobytes()
    return _npy_case(ctx, _npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 3, 8, 8), }", data),
                     ["fortran"])


@case
def npy_big_endian(ctx):
    """A big-endian '>f4' .npy."""
    data = np.zeros((1, 3, 8, 8), ">f4").tobytes()
    return _npy_case(ctx, _npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1, 3, 8, 8), }", data),
                     ["endian", ">f4"])


@case
def npy_object_dtype(ctx):
    """An object-dtype ('|O') .npy."""
    return _npy_case(ctx, _npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", b"\0" * 16),
                     ["dtype", "descr", "object", "|O", "unsupported", "not supported"])


@case
def npy_negative_shape(ctx):
    """An .npy header with shape (1, -3, 8, 8)."""
    return _npy_case(ctx, _npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, -3, 8, 8), }"),
                     ["shape", "negative", "invalid"])


@case
def npy_huge_shape(ctx):
    """An .npy header with shape (2^40, 2^40) and no data."""
    return _npy_case(ctx, _npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }"),
                     TOO_LARGE + ["shape"])


@case
def npy_header_length_past_end(ctx):
    """An .npy whose header length field (65000) runs past the end of the file."""
    return _npy_case(ctx, b"\x93NUMPY\x01\x00" + (65000).to_bytes(2, "little") + b"{'descr'", NPY + ["truncated"])


@case
def npy_header_not_dict(ctx):
    """An .npy whose header is a Python list, not a dict."""
    return _npy_case(ctx, _npy_bytes("['<f4', False, (1, 3, 8, 8)]"), NPY + ["dict", "descr"])


@case
def npy_unknown_version(ctx):
    """An .npy of format version 9.0."""
    return _npy_case(ctx, _npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", b"\0" * 8,
                                     version=(9, 0)), ["version"])


@case
def npy_extra_trailing_bytes(ctx):
    """An .npy with 5 bytes after its data."""
    data = np.zeros((1, 3, 8, 8), np.float32).tobytes() + b"extra"
    return _npy_case(ctx, _npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 8, 8), }", data),
                     ["bytes", "size", "trailing", "expected", "extra"])


@case
def npy_scalar_for_image(ctx):
    """A 0-d .npy for the [1, 3, 8, 8] input."""
    npy = ctx.npy(np.float32(1.0), "scalar.npy")
    return {"model": ctx.save(valid_model()), "inputs": {"pixels": npy}, "file": npy,
            "run": expect(fragments=["shape", "rank"], mentions=["pixels"]), "inspect": None}


@case
def npy_is_directory(ctx):
    """--input pixels=DIR where DIR is a directory."""
    d = ctx.dir / "dir.npy"
    d.mkdir(exist_ok=True)
    npy = ctx.rel(d)
    return {"model": ctx.save(valid_model()), "inputs": {"pixels": npy}, "file": npy,
            "run": expect(fragments=["directory", "cannot", "read", "not a file"]), "inspect": None}


@case
def input_for_unknown_name(ctx):
    """--input for a name the model has no input for."""
    npy = ctx.npy(np.zeros((1, 3, 8, 8), np.float32), "x.npy")
    return {"model": ctx.save(valid_model()), "inputs": {"no_such_input": npy}, "file": npy,
            "run": expect(fragments=["no input", "not an input", "unknown"], mentions=["no_such_input"]),
            "inspect": None}


@case
def shape_override_huge(ctx):
    """--shape for a symbolic input asking for 10^15 elements."""
    n = helper.make_node("Relu", ["pixels"], ["y"], name="relu")
    m = make_model([n], [f32("pixels", ["N", "C"])], [f32("y", None)])
    return {"model": ctx.save(m), "extra_args": ["--shape", "pixels=1000000000x1000000"],
            "run": expect(fragments=TOO_LARGE + ["memory", "size"], mentions=["pixels"]), "inspect": None}


@case
def shape_override_malformed(ctx):
    """--shape pixels=1x-3: a usage error."""
    return {"model": ctx.save(valid_model()), "extra_args": ["--shape", "pixels=1x-3"], "file": None,
            "run": expect(exit=[1], fragments=["shape", "dim", "invalid", "-3"]), "inspect": None}


@case
def shape_override_rank_mismatch(ctx):
    """--shape pixels=1x3 for a rank-4 input."""
    return {"model": ctx.save(valid_model()), "extra_args": ["--shape", "pixels=1x3"],
            "run": expect(fragments=["shape", "rank", "dims"], mentions=["pixels"]), "inspect": None}


# --- TensorFlow (issue 6): the cases live in tf_cases.py and register through @case ---------
# Run as a script this module is __main__; tf_cases imports it by name, so point that name here.
sys.modules.setdefault("gen_bad_inputs", sys.modules[__name__])
import tf_cases  # noqa: E402,F401


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
