"""Opsets and op coverage: an old opset, and ops ferry does not support."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from .builders import conv_model, f32, make_model
from .registry import both, case, expect


@case
def opset5_relu_add(ctx):
    """Conv -> Relu -> Add in a model importing ai.onnx opset 5: Conv is the same op at opset 7,
    Relu (redefined at 6) and Add (at 6 and 7) are not, so both are named, with the opset."""
    w = numpy_helper.from_array(np.ones([4, 3, 3, 3], np.float32), "conv_weight")
    nodes = [helper.make_node("Conv", ["pixels", "conv_weight"], ["c"], name="conv_old"),
             helper.make_node("Relu", ["c"], ["r"], name="relu_old"),
             helper.make_node("Add", ["r", "r"], ["y"], name="add_old")]
    m = make_model(nodes, [f32("pixels", [1, 3, 8, 8])], [f32("y", None)], [w], opset=5)
    e = expect(exit=[2], fragments=["redefined"], mentions=["Relu", "Add", "opset 6"])
    return {"model": ctx.save(m), "run": e, "inspect": dict(e, exit=[0, 2])}


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
