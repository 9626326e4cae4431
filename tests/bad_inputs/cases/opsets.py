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
    """MaxUnpool, RoiAlign and RandomNormalLike (ops ferry has no importer for): all three must be named at once."""
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("MaxUnpool", ["pixels", "indices"], ["unpooled"], name="max_unpool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("RoiAlign", ["pixels", "rois", "batch_idx"], ["pooled"], name="roi_align"),
        helper.make_node("RandomNormalLike", ["pixels"], ["random"], name="random_normal_like"),
    ]
    inputs = [f32("pixels", [1, 1, 8, 8]), helper.make_tensor_value_info("indices", TensorProto.INT64, [1, 1, 8, 8]),
              helper.make_tensor_value_info("rois", f, [2, 4]),
              helper.make_tensor_value_info("batch_idx", TensorProto.INT64, [2])]
    outputs = [f32("unpooled", None), f32("pooled", None), f32("random", None)]
    m = make_model(nodes, inputs, outputs, opset=17)
    mention = ["MaxUnpool", "RoiAlign", "RandomNormalLike"]
    return {"model": ctx.save(m), "run": expect(fragments=["unsupported", "not supported"], mentions=mention),
            "inspect": expect(exit=[0, 2], mentions=mention)}
