"""Files that are not a (whole) model: empty, random, truncated, compressed, other
formats, a directory or nothing at all, and broken text IR."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from .builders import _varint, conv_model, valid_model
from .registry import PARSE, TOO_LARGE, _register, both, case, expect


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
    return {"model": ctx.save(gzip.compress(valid_model().SerializeToString(), mtime=0)), **both(fragments=PARSE)}


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
