"""Tensor contents that disagree with the tensor's dims and dtype (raw_data and typed
fields), overflowing dims, and dtypes ferry does not support."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from .builders import _init_model, f32, make_model
from .registry import TOO_LARGE, both, case, expect


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
