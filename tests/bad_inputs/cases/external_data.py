"""Helpers for the external-data cases: tensors stored in a file next to the model,
and the file OUT_DIR/outside/secret.bin that no case may reach."""

from __future__ import annotations

import onnx
from onnx import TensorProto

from .builders import _init_model
from .registry import both


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


def _data_file(ctx, nbytes=16):
    (ctx.dir / "data.bin").write_bytes(b"\1" * nbytes)
