"""External data whose location escapes the model directory (.., absolute paths,
symlinks, hard links, devices, FIFOs) or is not a usable file name."""

from __future__ import annotations

import os
from pathlib import Path

import onnx
from onnx import TensorProto, helper

from .builders import _init_model, f32, make_model
from .external_data import _data_file, _ext_case, _outside_file
from .registry import ESCAPE, both, case


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


@case
def external_missing_file(ctx):
    """External data file that does not exist."""
    return _ext_case(ctx, "w_nofile", "nowhere.bin", ["no such", "not found", "cannot open", "does not exist",
                                                       "missing", "not exist"])


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
