"""Bad inputs to a good model: wrong or malformed .npy files, unknown input names,
bad --shape overrides and unknown flags."""

from __future__ import annotations

import numpy as np
from onnx import helper

from .builders import f32, make_model, valid_model
from .registry import TOO_LARGE, case, expect


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
