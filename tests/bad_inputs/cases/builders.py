"""Small models and raw protobuf pieces the cases are made of."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from .registry import expect


def make_model(nodes, inputs, outputs, initializers=(), opset=17, ir_version=8):
    graph = helper.make_graph(nodes, "bad", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version,
                             producer_name="ferry-bad-inputs")


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def conv_model(node_name="conv", w_shape=(4, 3, 3, 3), x_shape=(1, 3, 8, 8), **attrs):
    """x -> Conv(W) -> y with an all-ones weight initializer; attrs go to the Conv."""
    w = numpy_helper.from_array(np.ones(w_shape, np.float32), "conv_weight")
    node = helper.make_node("Conv", ["pixels", "conv_weight"], ["y"], name=node_name, **attrs)
    return make_model([node], [f32("pixels", list(x_shape))], [f32("y", None)], [w])


def valid_model():
    """A correct model (input 'pixels' [1,3,8,8] f32) for the bad-.npy cases."""
    return conv_model("conv", pads=[1, 1, 1, 1])


def _varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, payload):
    """A length-delimited protobuf field (wire type 2)."""
    payload = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _init_model(tensor, consumer="Identity"):
    node = helper.make_node(consumer, [tensor.name], ["y"], name="use_tensor")
    return make_model([node], [], [f32("y", None)], [tensor])


def _const_i64(name, values):
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


def _node_model(op, inputs, outputs=("y",), name=None, inits=(), in_vis=None, opset=17, **attrs):
    """One node `op` named `name` (default op.lower()); graph inputs `in_vis` (default: f32 'pixels' [1,3,8,8])."""
    n = helper.make_node(op, list(inputs), list(outputs), name=name or op.lower(), **attrs)
    vis = in_vis if in_vis is not None else [f32("pixels", [1, 3, 8, 8])]
    return make_model([n], vis, [f32(o, None) for o in outputs if o], list(inits), opset=opset)


def _simple(ctx, model, fragments, mentions=(), run_only=False, exit=(2,)):
    """A case whose run (and inspect, unless run_only) fails with these fragments and mentions."""
    e = expect(exit=exit, fragments=fragments, mentions=mentions)
    return {"model": ctx.save(model), "run": e, "inspect": expect(exit=[0, 2]) if run_only else e}


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)
