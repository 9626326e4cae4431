"""Ops given operands of dtypes they do not accept, and inputs without a usable type."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .builders import _const_i64, _node_model, _simple, _vi, f32, make_model
from .registry import DTYPE, UNSUPPORTED, both, case


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
