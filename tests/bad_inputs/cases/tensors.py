"""Tensors whose declared size, shape or dtype cannot be honoured."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from .builders import _init_model, f32, make_model
from .registry import TOO_LARGE, both, case, expect


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
