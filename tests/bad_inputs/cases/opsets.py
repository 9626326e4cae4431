"""Opsets and op coverage: an old opset, and ops ferry does not support."""

from __future__ import annotations

from onnx import TensorProto, helper

from .builders import conv_model, f32, make_model
from .registry import both, case, expect


@case
def opset6_conv(ctx):
    """A Conv in a model importing only ai.onnx opset 6 (ferry reads opsets 7 and up)."""
    m = conv_model("conv_old")
    m.opset_import[0].version = 6
    return {"model": ctx.save(m), **both(fragments=["opset"], mentions=["6"])}


@case
def three_unsupported_ops(ctx):
    """Bernoulli, RandomUniformLike and RandomNormalLike (ops ferry has no importer for: random draws):
    all three must be named at once."""
    nodes = [
        helper.make_node("Bernoulli", ["pixels"], ["coins"], name="bernoulli"),
        helper.make_node("RandomUniformLike", ["pixels"], ["uniform"], name="random_uniform_like"),
        helper.make_node("RandomNormalLike", ["pixels"], ["random"], name="random_normal_like"),
    ]
    inputs = [f32("pixels", [1, 1, 8, 8])]
    outputs = [f32("coins", None), f32("uniform", None), f32("random", None)]
    m = make_model(nodes, inputs, outputs, opset=17)
    mention = ["Bernoulli", "RandomUniformLike", "RandomNormalLike"]
    return {"model": ctx.save(m), "run": expect(fragments=["unsupported", "not supported"], mentions=mention),
            "inspect": expect(exit=[0, 2], mentions=mention)}
