"""External data whose offset, length or dims do not fit the file or 64 bits, and
external-data entries that contradict themselves."""

from __future__ import annotations

import onnx
from onnx import TensorProto

from .builders import _init_model
from .external_data import _data_file, _ext_case, _outside_file
from .registry import DUPLICATE, ESCAPE, OUT_OF_RANGE, TOO_LARGE, both, case


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
