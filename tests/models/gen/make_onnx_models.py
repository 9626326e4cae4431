#!/usr/bin/env python3
"""Builds, with onnx.helper, the end-to-end models torch does not emit.

    make_onnx_models.py OUT_DIR [--only NAME...] [--list]

Writes OUT_DIR/NAME.onnx + OUT_DIR/NAME.json (see common.py). Together with
export_models.py this covers every IR op (src/ir/ops.def) with at least one
model that goes file -> ferry -> outputs and is checked against ONNX Runtime.

What is here, and why:
  * tf2onnx-style graphs: NHWC inputs with Transposes around every Conv,
    SAME_UPPER auto_pad, FusedBatchNorm as BatchNormalization, Relu6 as Clip,
    Dense as MatMul + Add, tf.boolean_mask as NonZero + Transpose + GatherND.
  * old opsets whose attributes later became inputs (Upsample at opset 9,
    Clip/Pad/Slice/TopK attribute forms, Split/Squeeze/Unsqueeze/Reduce* axes
    attributes at opset 11, Softmax's pre-13 "flatten to 2-D" axis semantics,
    GroupNormalization-18's per-group scale): the frontend must translate them.
  * every Resize mode / coordinate transformation / nearest rounding mode,
    Resize-10, Resize-11 roi + tf_crop_and_resize, Resize-18 antialias/axes.
  * one model per op family exercising attributes and dtypes (all unary and
    binary elementwise ops, reductions, casts, pooling/conv variants, gather/
    scatter, Einsum, TopK, CumSum, Trilu, NonZero ...).
Weights and constants are seeded (numpy default_rng(0) per model).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import GEN_DIR, generator_hash, temp_path, write_sidecar  # noqa: E402
from onnx_builder import GraphBuilder  # noqa: E402

MODELS = {}


def model(fn):
    """Registers a builder fn(rng) -> GraphBuilder under fn's name."""
    MODELS[fn.__name__] = fn
    return fn


def w(rng, *shape, scale=None):
    """Weights ~ N(0, 1/fan_in): keeps activations O(1) through a few layers."""
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (rng.standard_normal(shape) * (scale or 1.0 / np.sqrt(fan_in))).astype(np.float32)


# --- tf2onnx-style -------------------------------------------------------------------


@model
def tf_nhwc_cnn(rng):
    """A Keras CNN through tf2onnx: NHWC input, Transposes around each conv block."""
    g = GraphBuilder("tf_nhwc_cnn", opset=13)
    x = g.input("input_1", [1, 16, 16, 3])
    to_nchw, to_nhwc = [0, 3, 1, 2], [0, 2, 3, 1]

    def conv_block(x, cin, cout, stride, group=1, dilation=1, relu6=False):
        t = g.op("Transpose", [x], perm=to_nchw)
        kw = {"auto_pad": "SAME_UPPER"} if dilation == 1 else {"pads": [dilation] * 4}
        t = g.op("Conv", [t, g.const(w(rng, cout, cin // group, 3, 3)), g.const(w(rng, cout, scale=0.1))],
                 kernel_shape=[3, 3], strides=[stride, stride], group=group, dilations=[dilation] * 2, **kw)
        # FusedBatchNormV3 -> BatchNormalization with real statistics.
        t = g.op("BatchNormalization", [t, g.const(rng.uniform(0.5, 1.5, cout)), g.const(w(rng, cout, scale=0.1)),
                                        g.const(w(rng, cout, scale=0.1)), g.const(rng.uniform(0.5, 2.0, cout))],
                 epsilon=1e-3)
        t = g.op("Clip", [t, g.const(np.float32(0)), g.const(np.float32(6))]) if relu6 else g.op("Relu", [t])
        return g.op("Transpose", [t], perm=to_nhwc)

    y = conv_block(x, 3, 8, 2)
    y = conv_block(y, 8, 8, 1, group=8, relu6=True)    # depthwise
    y = conv_block(y, 8, 16, 2, dilation=2)
    y = g.op("ReduceMean", [y], axes=[1, 2], keepdims=0)  # GlobalAveragePooling2D in NHWC
    y = g.op("Add", [g.op("MatMul", [y, g.const(w(rng, 16, 10))]), g.const(w(rng, 10, scale=0.1))])
    g.output(g.op("Softmax", [y], axis=-1), "probs")
    return g


@model
def tf_boolean_mask(rng):
    """tf.boolean_mask / tf.where: NonZero -> Transpose -> GatherND, plus TopK and CumSum."""
    g = GraphBuilder("tf_boolean_mask", opset=13)
    x = g.input("x", [3, 5])
    idx = g.op("Transpose", [g.op("NonZero", [g.op("Greater", [x, g.const(np.float32(0.2))])])], perm=[1, 0])
    g.output(idx, "where")
    g.output(g.op("GatherND", [x, idx]), "masked")
    vals, ind = g.op("TopK", [x, g.i64([2])], outputs=2, axis=1)
    g.output(vals, "top_values")
    g.output(ind, "top_indices")
    g.output(g.op("CumSum", [x, g.const(np.int32(1))]), "cumsum")
    return g


# --- attribute forms of old opsets -------------------------------------------------


@model
def attr_forms_opset9(rng):
    """Opset 9: Upsample, and Clip/Pad/Slice/TopK/Dropout with attributes instead of inputs."""
    g = GraphBuilder("attr_forms_opset9", opset=9)
    x = g.input("x", [1, 2, 5, 7])
    g.output(g.op("Upsample", [x, g.const([1, 1, 2, 3])], mode="nearest"), "up_nearest")
    g.output(g.op("Upsample", [x, g.const([1, 1, 2, 2])], mode="linear"), "up_linear")
    g.output(g.op("Clip", [x], min=-0.5, max=0.5), "clip")
    g.output(g.op("Pad", [x], pads=[0, 0, 1, 2, 0, 0, 2, 1], mode="reflect"), "pad_reflect")
    g.output(g.op("Pad", [x], pads=[0, 0, 1, 0, 0, 0, 0, 3], mode="edge"), "pad_edge")
    g.output(g.op("Pad", [x], pads=[0, 1, 0, 1, 0, 0, 1, 0], value=1.5), "pad_const")
    g.output(g.op("Slice", [x], starts=[1, -5], ends=[4, 1000], axes=[2, 3]), "slice")
    vals, ind = g.op("TopK", [g.op("Flatten", [x], axis=2)], outputs=2, k=3)
    g.output(vals, "topk_values")
    g.output(ind, "topk_indices")
    g.output(g.op("Dropout", [x], ratio=0.3), "dropout")
    g.output(g.op("Cast", [x], to=6), "cast_i32")  # TensorProto.INT32
    g.output(g.op("Softmax", [x], axis=2), "softmax_flat")  # pre-13: softmax over dims 2.. flattened
    g.output(g.op("Gemm", [g.op("Flatten", [x]), g.const(w(rng, 70, 4)), g.const(w(rng, 4))]), "gemm")
    return g


@model
def attr_forms_opset11(rng):
    """Opset 11: Split/Squeeze/Unsqueeze/ReduceSum with attributes, Pad/Clip inputs, LogSoftmax axis."""
    g = GraphBuilder("attr_forms_opset11", opset=11)
    x = g.input("x", [2, 6, 1, 4])
    a, b, c = g.op("Split", [x], outputs=3, axis=1, split=[1, 2, 3])
    g.output(g.op("Squeeze", [a], axes=[1, 2]), "squeeze")
    g.output(g.op("Unsqueeze", [b], axes=[0, -1]), "unsqueeze")
    g.output(g.op("ReduceSum", [c], axes=[1, -1], keepdims=1), "reduce_sum")
    s1, s2 = g.op("Split", [x], outputs=2, axis=-1)  # equal halves
    g.output(g.op("Sub", [s1, s2]), "split_equal")
    g.output(g.op("Pad", [x, g.i64([0, 0, 1, 1, 0, 0, 1, 1]), g.const(np.float32(-1))]), "pad")
    g.output(g.op("Clip", [x, g.const(np.float32(-1)), None]), "clip_min_only")
    g.output(g.op("LogSoftmax", [x], axis=1), "log_softmax_flat")
    g.output(g.op("Squeeze", [g.op("ReduceMax", [x], keepdims=1)]), "squeeze_all")
    g.output(g.op("ArgMax", [x], axis=1, keepdims=0), "argmax")
    return g


@model
def group_norm_opset18(rng):
    """GroupNormalization-18: scale and bias per group (21 made them per channel)."""
    # The checker rejects GroupNormalization-18 as deprecated; such files exist anyway.
    g = GraphBuilder("group_norm_opset18", opset=18, check=False)
    x = g.input("x", [2, 6, 3, 3])
    g.output(g.op("GroupNormalization", [x, g.const(rng.uniform(0.5, 1.5, 3)), g.const(w(rng, 3, scale=0.5))],
                  num_groups=3, epsilon=1e-5), "y", dtype="float32", shape=[2, 6, 3, 3])
    return g


# --- Resize -------------------------------------------------------------------------


@model
def resize_modes(rng):
    """Resize-13: nearest (4 rounding modes), linear and cubic, each coordinate transformation."""
    g = GraphBuilder("resize_modes", opset=13)
    x = g.input("x", [1, 2, 4, 5])
    up, down = g.const([1, 1, 2.0, 1.5]), g.const([1, 1, 0.5, 0.6])
    cases = [
        ("nearest_asym_floor", up, None, dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")),
        ("nearest_half_ceil", up, None, dict(mode="nearest", nearest_mode="ceil")),
        ("nearest_align_rpc", None, g.i64([1, 2, 7, 9]), dict(mode="nearest", coordinate_transformation_mode="align_corners", nearest_mode="round_prefer_ceil")),
        ("nearest_half_rpf", down, None, dict(mode="nearest")),
        ("linear_half", up, None, dict(mode="linear")),
        ("linear_pytorch_half", None, g.i64([1, 2, 3, 1]), dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel")),
        ("linear_align", None, g.i64([1, 2, 7, 9]), dict(mode="linear", coordinate_transformation_mode="align_corners")),
        ("linear_asym_down", down, None, dict(mode="linear", coordinate_transformation_mode="asymmetric")),
        ("cubic_half", up, None, dict(mode="cubic", cubic_coeff_a=-0.75)),
        ("cubic_tf_exclude", down, None, dict(mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1)),
        ("cubic_align", None, g.i64([1, 2, 6, 6]), dict(mode="cubic", coordinate_transformation_mode="align_corners")),
    ]
    for name, scales, sizes, attrs in cases:
        g.output(g.op("Resize", [x, None, scales, sizes], name=name, **attrs), name)
    return g


@model
def resize_opset10(rng):
    """Resize-10: (X, scales), nearest/linear, implicitly asymmetric."""
    g = GraphBuilder("resize_opset10", opset=10)
    x = g.input("x", [1, 1, 3, 4])
    g.output(g.op("Resize", [x, g.const([1, 1, 2, 2])], mode="nearest"), "nearest")
    g.output(g.op("Resize", [x, g.const([1, 1, 2, 1.5])], mode="linear"), "linear")
    return g


@model
def resize_opset11(rng):
    """Resize-11: roi input, tf_crop_and_resize with extrapolation value, empty scales.

    (tf_half_pixel_for_nearest, Resize-11 only, is left out: ONNX Runtime no longer runs it.)"""
    g = GraphBuilder("resize_opset11", opset=11)
    x = g.input("x", [1, 2, 6, 6])
    empty = g.const(np.zeros(0, np.float32))
    roi = g.const([0, 0, 0.1, -0.2, 1, 1, 0.9, 0.8])
    g.output(g.op("Resize", [x, roi, empty, g.i64([1, 2, 4, 5])], mode="linear",
                  coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-7.0), "crop_linear")
    g.output(g.op("Resize", [x, roi, empty, g.i64([1, 2, 5, 5])], mode="nearest",
                  coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=3.0), "crop_nearest")
    return g


@model
def resize_opset18(rng):
    """Resize-18/19: the axes attribute, keep_aspect_ratio_policy, downscales.

    antialias=1 is not supported by ferry yet (the importer rejects it with a
    clear error); it is left out here until the kernel lands.
    """
    g = GraphBuilder("resize_opset18", opset=19)
    x = g.input("x", [1, 2, 8, 10])
    g.output(g.op("Resize", [x, None, g.const([0.5, 0.4])], mode="linear", axes=[2, 3]), "down_linear")
    g.output(g.op("Resize", [x, None, g.const([0.6, 0.5])], mode="cubic", axes=[2, 3]), "down_cubic")
    g.output(g.op("Resize", [x, None, None, g.i64([5, 5])], mode="nearest", axes=[2, 3],
                  keep_aspect_ratio_policy="not_larger"), "kar_not_larger")
    g.output(g.op("Resize", [x, None, None, g.i64([4, 4])], mode="linear", axes=[2, 3],
                  keep_aspect_ratio_policy="not_smaller", coordinate_transformation_mode="half_pixel_symmetric"),
             "kar_not_smaller")
    return g


# --- op families ------------------------------------------------------------------


@model
def unary_ops(rng):
    """Every unary elementwise op; Sqrt/Log/Reciprocal get positive inputs."""
    g = GraphBuilder("unary_ops", opset=18)
    x = g.input("x", [2, 3, 8], dist="uniform", low=-3.0, high=3.0)
    p = g.input("p", [2, 3, 8], dist="uniform", low=0.1, high=4.0)
    plain = ["Abs", "Neg", "Exp", "Erf", "Sin", "Cos", "Tanh", "Sigmoid", "Relu", "HardSwish", "Softplus",
             "Softsign", "Mish", "Floor", "Ceil", "Round", "Sign", "Identity"]
    for op in plain:
        g.output(g.op(op, [x]), op.lower())
    for op in ["Sqrt", "Log", "Reciprocal"]:
        g.output(g.op(op, [p]), op.lower())
    g.output(g.op("LeakyRelu", [x], alpha=0.2), "leaky_relu")
    g.output(g.op("Elu", [x], alpha=0.7), "elu")
    g.output(g.op("Selu", [x]), "selu")
    g.output(g.op("Celu", [x], alpha=1.3), "celu")
    g.output(g.op("HardSigmoid", [x], alpha=0.3, beta=0.4), "hard_sigmoid")
    g.output(g.op("Clip", [x, None, g.const(np.float32(1.5))]), "clip_max_only")
    # floor(2x) + 0.5 is exactly k + 1/2: Round must go to the even neighbour.
    halves = g.op("Add", [g.op("Floor", [g.op("Mul", [x, g.const(2.0)])]), g.const(0.5)])
    g.output(g.op("Round", [halves]), "round_halves_to_even")
    return g


@model
def gelu_opset20(rng):
    """Gelu-20, exact (erf) and tanh approximation."""
    g = GraphBuilder("gelu_opset20", opset=20)
    x = g.input("x", [4, 16], dist="uniform", low=-4.0, high=4.0)
    g.output(g.op("Gelu", [x]), "gelu")
    g.output(g.op("Gelu", [x], approximate="tanh"), "gelu_tanh")
    return g


@model
def binary_ops(rng):
    """Binary / variadic elementwise ops with multidirectional broadcasting, float and int."""
    g = GraphBuilder("binary_ops", opset=18)
    a = g.input("a", [2, 3, 4])
    b = g.input("b", [3, 1], dist="uniform", low=0.5, high=2.0)
    pos = g.input("pos", [2, 3, 4], dist="uniform", low=0.2, high=3.0)
    ia = g.input("ia", [2, 3, 4], "int64", "randint", low=-20, high=20)
    ib = g.input("ib", [4], "int64", "randint", low=1, high=7)
    for op in ["Add", "Sub", "Mul", "Div"]:
        g.output(g.op(op, [a, b]), op.lower())
        g.output(g.op(op, [ia, ib]), op.lower() + "_i64")
    g.output(g.op("Pow", [pos, b]), "pow")
    g.output(g.op("Pow", [a, g.const(np.float32(2))]), "pow_square")
    g.output(g.op("Pow", [a, g.const(np.int64(3))]), "pow_int_exponent")
    g.output(g.op("Mod", [ia, ib]), "mod_int")  # sign of divisor, like Python
    g.output(g.op("Mod", [a, b], fmod=1), "fmod")
    g.output(g.op("Mod", [ia, ib], fmod=1), "fmod_int")
    g.output(g.op("PRelu", [a, g.const(rng.uniform(0.0, 0.5, (3, 1)).astype(np.float32))]), "prelu")
    for op in ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]:
        g.output(g.op(op, [ia, ib]), op.lower())
    lt = g.op("Less", [a, b])
    gt = g.op("Greater", [a, g.const(np.float32(-0.3))])
    for op in ["And", "Or", "Xor"]:
        g.output(g.op(op, [lt, gt]), op.lower())
    g.output(g.op("Not", [lt]), "not")
    g.output(g.op("Where", [lt, a, b]), "where")
    for op in ["Min", "Max", "Sum", "Mean"]:
        g.output(g.op(op, [a, b, g.const(w(rng, 4, scale=1.0))]), op.lower() + "_variadic")
    g.output(g.op("Max", [ia, ib]), "max_i64")
    return g


@model
def special_values(rng):
    """IsNaN / IsInf (both flags) on data with inf and nan, and Where selecting them away."""
    g = GraphBuilder("special_values", opset=18)
    x = g.input("x", [2, 6])
    specials = g.const(np.array([[0, np.inf, 0, -np.inf, np.nan, 0], [np.nan, 0, 1, 0, -np.inf, np.inf]], np.float32))
    y = g.op("Add", [x, specials])
    g.output(g.op("IsNaN", [y]), "isnan")
    g.output(g.op("IsInf", [y]), "isinf")
    g.output(g.op("IsInf", [y], detect_negative=0), "isposinf")
    g.output(g.op("IsInf", [y], detect_positive=0), "isneginf")
    finite = g.op("Not", [g.op("Or", [g.op("IsNaN", [y]), g.op("IsInf", [y])])])
    g.output(g.op("Where", [finite, y, g.const(np.float32(0))]), "finite_or_zero")
    return g


@model
def cast_dtypes(rng):
    """Cast between float, integer and bool types; CastLike; outputs of several dtypes."""
    g = GraphBuilder("cast_dtypes", opset=19)
    x = g.input("x", [3, 5], dist="uniform", low=-100.0, high=100.0)
    i = g.input("i", [3, 5], "int64", "randint", low=-1000, high=1000)
    T = TensorProto
    g.output(g.op("Cast", [x], to=T.INT32), "f32_to_i32")      # truncates toward zero
    g.output(g.op("Cast", [x], to=T.INT64), "f32_to_i64")
    g.output(g.op("Cast", [x], to=T.BOOL), "f32_to_bool")
    g.output(g.op("Cast", [x], to=T.FLOAT16), "f32_to_f16")    # round to nearest even
    g.output(g.op("Cast", [x], to=T.DOUBLE), "f32_to_f64")
    g.output(g.op("Cast", [g.op("Cast", [x], to=T.FLOAT16)], to=T.FLOAT), "f16_roundtrip")
    g.output(g.op("Cast", [i], to=T.FLOAT), "i64_to_f32")
    small = g.input("small", [3, 5], "int64", "randint", low=0, high=100)
    g.output(g.op("Cast", [small], to=T.INT8), "i64_to_i8")
    g.output(g.op("Cast", [small], to=T.UINT8), "i64_to_u8")
    g.output(g.op("Cast", [small], to=T.INT32), "i64_to_i32")
    g.output(g.op("Cast", [g.op("Cast", [i], to=T.BOOL)], to=T.FLOAT), "bool_to_f32")
    g.output(g.op("CastLike", [i, x]), "castlike")
    return g


@model
def reductions(rng):
    """Reduce* with axes as an input (opset 18), keepdims, empty axes; ArgMax/ArgMin ties."""
    g = GraphBuilder("reductions", opset=18)
    x = g.input("x", [2, 3, 4], dist="uniform", low=0.5, high=1.5)
    t = g.input("ties", [3, 6], dist="randint", low=0, high=3)  # integer-valued floats: many ties
    ax = g.i64([1])
    for op in ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
               "ReduceSumSquare", "ReduceLogSumExp"]:
        g.output(g.op(op, [x, ax]), op.lower())
    g.output(g.op("ReduceSum", [x, g.i64([0, -1])], keepdims=0), "reducesum_two_axes")
    g.output(g.op("ReduceMax", [x]), "reducemax_all")
    g.output(g.op("ReduceSum", [x, g.i64(np.zeros(0))], noop_with_empty_axes=1), "reducesum_noop")
    g.output(g.op("ReduceMean", [x, g.i64([-2])], keepdims=0), "reducemean_neg")
    g.output(g.op("ArgMax", [t], axis=1), "argmax_first")
    g.output(g.op("ArgMax", [t], axis=1, select_last_index=1), "argmax_last")
    g.output(g.op("ArgMin", [t], axis=0, keepdims=0), "argmin")
    g.output(g.op("ArgMin", [t], axis=-1, keepdims=0, select_last_index=1), "argmin_last")
    return g


@model
def softmax_family(rng):
    """Softmax/LogSoftmax-13 on a middle axis; TopK smallest/unsorted shapes; CumSum modes."""
    g = GraphBuilder("softmax_family", opset=17)
    x = g.input("x", [2, 4, 3, 5])
    g.output(g.op("Softmax", [x], axis=1), "softmax_axis1")
    g.output(g.op("LogSoftmax", [x], axis=-1), "log_softmax")
    v, i = g.op("TopK", [x, g.i64([2])], outputs=2, axis=1, largest=0)
    g.output(v, "topk_smallest_values")
    g.output(i, "topk_smallest_indices")
    v, i = g.op("TopK", [x, g.i64([5])], outputs=2)
    g.output(v, "topk_all_values")
    g.output(i, "topk_all_indices")
    axis = g.i64(2)
    g.output(g.op("CumSum", [x, axis], exclusive=1), "cumsum_exclusive")
    g.output(g.op("CumSum", [x, axis], reverse=1), "cumsum_reverse")
    g.output(g.op("CumSum", [x, g.i64(-1)], exclusive=1, reverse=1), "cumsum_excl_rev")
    return g


@model
def norms(rng):
    """InstanceNormalization, LRN, LayerNormalization over two axes, GroupNormalization-21."""
    g = GraphBuilder("norms", opset=21)
    x = g.input("x", [2, 6, 4, 5])
    g.output(g.op("InstanceNormalization", [x, g.const(rng.uniform(0.5, 1.5, 6)), g.const(w(rng, 6, scale=0.3))],
                  epsilon=1e-4), "instance_norm")
    g.output(g.op("LRN", [x], size=3, alpha=1e-2, beta=0.75, bias=2.0), "lrn")
    g.output(g.op("LayerNormalization", [x, g.const(rng.uniform(0.5, 1.5, (4, 5))), g.const(w(rng, 4, 5, scale=0.3))],
                  axis=-2, epsilon=1e-5), "layer_norm_2axes")
    g.output(g.op("LayerNormalization", [x, g.const(rng.uniform(0.5, 1.5, 5))], axis=-1), "layer_norm_no_bias")
    g.output(g.op("GroupNormalization", [x, g.const(rng.uniform(0.5, 1.5, 6)), g.const(w(rng, 6, scale=0.3))],
                  num_groups=2), "group_norm", dtype="float32", shape=[2, 6, 4, 5])
    g.output(g.op("BatchNormalization", [x, g.const(rng.uniform(0.5, 1.5, 6)), g.const(w(rng, 6, scale=0.3)),
                                         g.const(w(rng, 6, scale=0.3)), g.const(rng.uniform(0.5, 2, 6))]), "batch_norm")
    return g


@model
def conv_variants(rng):
    """Conv 1-D/3-D, SAME_LOWER/VALID, asymmetric pads, no bias; ConvTranspose; Gemm; MatMul."""
    g = GraphBuilder("conv_variants", opset=17)
    x1 = g.input("x1d", [1, 4, 11])
    x2 = g.input("x2d", [2, 4, 7, 6])
    x3 = g.input("x3d", [1, 2, 4, 5, 5])
    g.output(g.op("Conv", [x1, g.const(w(rng, 6, 2, 3)), g.const(w(rng, 6))], group=2, strides=[2], dilations=[2],
                  pads=[2, 1]), "conv1d")
    g.output(g.op("Conv", [x2, g.const(w(rng, 5, 4, 3, 2))], auto_pad="SAME_LOWER", strides=[2, 2]), "conv_same_lower")
    g.output(g.op("Conv", [x2, g.const(w(rng, 3, 4, 2, 3))], auto_pad="VALID"), "conv_valid")
    g.output(g.op("Conv", [x2, g.const(w(rng, 4, 1, 3, 3))], group=4, pads=[0, 1, 2, 0], kernel_shape=[3, 3]),
             "conv_depthwise_asym")
    g.output(g.op("Conv", [x3, g.const(w(rng, 3, 2, 2, 3, 3)), g.const(w(rng, 3))], pads=[0, 1, 1, 1, 1, 0]),
             "conv3d")
    g.output(g.op("ConvTranspose", [x2, g.const(w(rng, 4, 3, 3, 3)), g.const(w(rng, 3))], strides=[2, 2],
                  pads=[1, 1, 1, 1], output_padding=[1, 0]), "convtranspose")
    g.output(g.op("ConvTranspose", [x2, g.const(w(rng, 4, 1, 2, 2))], group=2, dilations=[2, 1], strides=[1, 2]),
             "convtranspose_group")
    g.output(g.op("ConvTranspose", [x2, g.const(w(rng, 4, 2, 3, 3))], strides=[2, 2], output_shape=[14, 12],
                  auto_pad="SAME_UPPER"), "convtranspose_output_shape")
    g.output(g.op("ConvTranspose", [x1, g.const(w(rng, 4, 2, 4))], strides=[3]), "convtranspose1d")
    flat = g.op("Flatten", [x2])  # [2, 168]
    g.output(g.op("Gemm", [flat, g.const(w(rng, 5, 168)), g.const(w(rng, 5))], transB=1, alpha=0.5, beta=2.0),
             "gemm_transb")
    g.output(g.op("Gemm", [g.const(w(rng, 168, 3)), flat, g.const(np.float32(0.25))], transA=1, transB=1), "gemm_transa")
    g.output(g.op("Gemm", [flat, g.const(w(rng, 168, 4))]), "gemm_no_c")
    g.output(g.op("MatMul", [x2, g.const(w(rng, 6, 3))]), "matmul_batched")
    g.output(g.op("MatMul", [g.const(w(rng, 7)), x2]), "matmul_1d_left")
    g.output(g.op("MatMul", [x3, g.op("Transpose", [x3], perm=[0, 1, 2, 4, 3])]), "matmul_5d")
    return g


@model
def pool_variants(rng):
    """MaxPool (ceil, dilation, indices), AveragePool (pads counted or not), global pools, 1-D."""
    g = GraphBuilder("pool_variants", opset=17)
    x = g.input("x", [1, 3, 9, 8])
    x1 = g.input("x1d", [2, 2, 10])
    g.output(g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1), "maxpool_ceil")
    v, i = g.op("MaxPool", [x], outputs=2, kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 0])
    g.output(v, "maxpool_values")
    g.output(i, "maxpool_indices")
    g.output(g.op("MaxPool", [x], kernel_shape=[2, 3], dilations=[2, 2], pads=[1, 1, 1, 1]), "maxpool_dilated")
    g.output(g.op("AveragePool", [x], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
             "avgpool_incl_pad")
    # ceil_mode adds a last, partial window in both axes. (No window may start inside
    # the end padding: ONNX's and PyTorch's/ORT's output sizes disagree there.)
    g.output(g.op("AveragePool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 0, 0], ceil_mode=1),
             "avgpool_excl_pad_ceil")
    g.output(g.op("AveragePool", [x], kernel_shape=[2, 2], auto_pad="SAME_UPPER", strides=[2, 2]), "avgpool_same")
    g.output(g.op("GlobalMaxPool", [x]), "global_max")
    g.output(g.op("GlobalAveragePool", [x]), "global_avg")
    g.output(g.op("MaxPool", [x1], kernel_shape=[3], strides=[2]), "maxpool1d")
    g.output(g.op("AveragePool", [x1], kernel_shape=[4], strides=[3], pads=[1, 2]), "avgpool1d")
    return g


@model
def gather_scatter(rng):
    """Gather (negative indices), GatherElements, GatherND (batch_dims), ScatterND/Elements reductions."""
    g = GraphBuilder("gather_scatter", opset=18)
    x = g.input("x", [3, 4, 5])
    upd = g.input("updates", [2, 5])
    ids = g.input("ids", [2, 3], "int64", "randint", low=-4, high=4)
    g.output(g.op("Gather", [x, ids], axis=1), "gather_runtime_idx")
    g.output(g.op("Gather", [x, g.i64(2)], axis=0), "gather_scalar")
    g.output(g.op("Gather", [x, g.i64([[-1, 0], [1, -2]])], axis=-1), "gather_neg_axis")
    g.output(g.op("GatherElements", [x, g.i64(rng.integers(-4, 4, (3, 2, 5)))], axis=1), "gather_elements")
    g.output(g.op("GatherND", [x, g.i64([[0, 1], [2, 3], [1, -1]])]), "gathernd")
    g.output(g.op("GatherND", [x, g.i64([[1], [0], [3]])], batch_dims=1), "gathernd_batch")
    nd_idx = g.i64([[0, 1], [2, 3]])
    g.output(g.op("ScatterND", [x, nd_idx, upd]), "scatternd")
    g.output(g.op("ScatterND", [x, g.i64([[0, 1], [0, 1]]), upd], reduction="add"), "scatternd_add_dup")
    g.output(g.op("ScatterND", [x, nd_idx, upd], reduction="mul"), "scatternd_mul")
    g.output(g.op("ScatterND", [x, nd_idx, upd], reduction="max"), "scatternd_max")
    g.output(g.op("ScatterND", [x, g.i64([[1]]), g.op("Slice", [x, g.i64([0]), g.i64([1])])]), "scatternd_slice")
    se_idx = g.i64([[[0, 1, 2, 3, 0]], [[3, 2, 1, 0, 1]], [[1, 1, 1, 1, 1]]])  # [3, 1, 5]
    se_upd = g.const(w(rng, 3, 1, 5, scale=1.0))
    g.output(g.op("ScatterElements", [x, se_idx, se_upd], axis=1), "scatter_elements")
    g.output(g.op("ScatterElements", [x, se_idx, se_upd], axis=1, reduction="add"), "scatter_elements_add")
    g.output(g.op("ScatterElements", [x, g.i64([[[-1]]]), g.const(np.ones((1, 1, 1), np.float32))], axis=2,
                  reduction="min"), "scatter_elements_min_neg")
    return g


@model
def shape_ops(rng):
    """Shape(start,end), Size, ConstantOfShape, Range, Expand, Tile, OneHot, Reshape forms, Slice steps."""
    g = GraphBuilder("shape_ops", opset=19)
    x = g.input("x", [2, 3, 4])
    idx = g.input("labels", [2, 3], "int64", "randint", low=-5, high=5)
    shp = g.op("Shape", [x])
    g.output(g.op("Shape", [x], start=1), "shape_tail")
    g.output(g.op("Shape", [x], start=-2, end=-1), "shape_mid")
    g.output(g.op("Size", [x]), "size")
    g.output(g.op("ConstantOfShape", [g.op("Shape", [x], end=2)],
                  value=helper.make_tensor("v", TensorProto.INT64, [1], [7])), "const_of_shape")
    g.output(g.op("ConstantOfShape", [g.i64([2, 0])]), "const_of_shape_empty")
    g.output(g.op("Range", [g.const(np.float32(1)), g.const(np.float32(-2)), g.const(np.float32(-0.7))]), "range_f32")
    n = g.op("Gather", [shp, g.i64(2)])
    g.output(g.op("Range", [g.i64(0), n, g.i64(1)]), "range_i64")
    g.output(g.op("Expand", [g.op("Slice", [x, g.i64([0]), g.i64([1])]), g.i64([3, 1, 1, 1])]), "expand")
    g.output(g.op("Expand", [x, g.i64([2, 1, 1])]), "expand_keep")
    g.output(g.op("Tile", [x, g.i64([1, 2, 3])]), "tile")
    g.output(g.op("OneHot", [idx, g.i64(5), g.const([-1.0, 2.0])], axis=1), "onehot_neg_idx")
    g.output(g.op("Reshape", [x, g.i64([0, -1])]), "reshape_zero")
    g.output(g.op("Reshape", [x, g.i64([4, 1, -1])]), "reshape_minus1")
    g.output(g.op("Flatten", [x], axis=0), "flatten0")
    g.output(g.op("Flatten", [x], axis=-1), "flatten_neg")
    g.output(g.op("Slice", [x, g.i64([-1, 10]), g.i64([-1000, 0]), g.i64([-1, 1]), g.i64([-2, -1])]),
             "slice_neg_step")
    g.output(g.op("Slice", [x, g.i64([1]), g.i64([1])]), "slice_empty")
    g.output(g.op("Transpose", [x]), "transpose_default")
    g.output(g.op("Concat", [x, g.op("Neg", [x])], axis=-2), "concat_neg_axis")
    parts = g.op("Split", [x], outputs=2, axis=1, num_outputs=2)  # 3 -> 2, 1: the last chunk is smaller
    for k, p in enumerate(parts):
        g.output(p, f"split_num_outputs_{k}")
    a, b = g.op("Split", [x, g.i64([1, 3])], outputs=2, axis=-1)
    g.output(a, "split_sizes_a")
    g.output(b, "split_sizes_b")
    g.output(g.op("Unsqueeze", [x, g.i64([-1, 0])]), "unsqueeze_neg")
    g.output(g.op("Squeeze", [g.op("Unsqueeze", [x, g.i64([1, 3])])]), "squeeze_no_axes")
    g.output(g.op("Squeeze", [g.op("Unsqueeze", [x, g.i64([0])]), g.i64([0])]), "squeeze_axes_input")
    g.output(g.op("Pad", [x, g.i64([1, 2, 1, 0]), None, g.i64([0, 2])], mode="reflect"), "pad_reflect_axes")
    g.output(g.op("Pad", [x, g.i64([0, 1, 2, 0, 3, 1]), None], mode="wrap"), "pad_wrap")
    g.output(g.op("Pad", [x, g.i64([0, 0, 1, 0, 0, 2]), g.const(np.float32(9))]), "pad_const")
    g.output(g.op("Dropout", [x, g.const(np.float32(0.5)), g.const(np.bool_(False))]), "dropout_inference")
    return g


@model
def depth_space(rng):
    """DepthToSpace (DCR and CRD), SpaceToDepth, Trilu with k, Einsum equations."""
    g = GraphBuilder("depth_space", opset=17)
    x = g.input("x", [1, 8, 2, 3])
    m = g.input("m", [2, 4, 5])
    g.output(g.op("DepthToSpace", [x], blocksize=2), "d2s_dcr")
    g.output(g.op("DepthToSpace", [x], blocksize=2, mode="CRD"), "d2s_crd")
    g.output(g.op("SpaceToDepth", [g.op("DepthToSpace", [x], blocksize=2)], blocksize=2), "s2d_roundtrip")
    g.output(g.op("SpaceToDepth", [g.op("Reshape", [x, g.i64([1, 2, 4, 6])])], blocksize=2), "s2d")
    g.output(g.op("Trilu", [m]), "triu")
    g.output(g.op("Trilu", [m], upper=0), "tril")
    g.output(g.op("Trilu", [g.input("t", [2, 4, 5]), g.i64(-1)], upper=1), "triu_k_neg")
    g.output(g.op("Trilu", [g.input("ti", [3, 3], "int64", "randint", low=-9, high=9), g.i64(1)], upper=0), "tril_k_int")
    return g


@model
def einsum(rng):
    """Einsum: batched matmul, attention scores, transpose, outer, reduction, ellipsis, diagonal-free trace."""
    g = GraphBuilder("einsum", opset=17)
    a = g.input("a", [2, 3, 4])
    b = g.input("b", [2, 4, 5])
    q = g.input("q", [1, 2, 6, 8])
    k = g.input("k", [1, 2, 7, 8])
    v = g.input("v", [5])
    eqs = [
        ("bij,bjk->bik", [a, b], "bmm"),
        ("bhqd,bhkd->bhqk", [q, k], "attention_scores"),
        ("bij->bji", [a], "transpose"),
        ("i,j->ij", [v, g.const(w(rng, 3, scale=1.0))], "outer"),
        ("bij->b", [a], "reduce"),
        ("...ij,...jk->...ik", [a, b], "ellipsis"),
        ("bij,bjk->ik", [a, b], "contract_batch"),
        ("i,i->", [v, v], "dot"),
    ]
    for eq, ins, name in eqs:
        g.output(g.op("Einsum", ins, equation=eq, name=name), name)
    return g


@model
def dynamic_shapes(rng):
    """Symbolic batch and length: Shape -> Gather -> Concat -> Reshape, Range over a runtime length."""
    g = GraphBuilder("dynamic_shapes", opset=17)
    x = g.input("x", [3, 10, 4], dims=["batch", "len", 4])
    shp = g.op("Shape", [x])
    batch = g.op("Gather", [shp, g.i64([0])])
    length = g.op("Gather", [shp, g.i64(1)])
    y = g.op("Reshape", [x, g.op("Concat", [batch, g.i64([-1, 2])], axis=0)])
    g.output(y, "reshaped")
    pos = g.op("Cast", [g.op("Range", [g.i64(0), length, g.i64(1)])], to=1)
    g.output(g.op("Add", [x, g.op("Unsqueeze", [pos, g.i64([-1])])]), "plus_position")
    ones = g.op("ConstantOfShape", [g.op("Concat", [g.op("Unsqueeze", [length, g.i64([0])])] * 2, axis=0)],
                value=helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0]))
    g.output(g.op("Trilu", [ones], upper=0), "causal_ones")
    return g


# --- transformer ops and decomposed blocks (fuse-xfmr) --------------------------------


@model
def attention_opset23(rng):
    """Attention-23 (3-D with grouped heads, bool mask; 4-D causal with past/present) and RMSNormalization-23."""
    g = GraphBuilder("attention_opset23", opset=23)
    q3 = g.input("q3", [2, 5, 16])
    k3 = g.input("k3", [2, 7, 8])
    v3 = g.input("v3", [2, 7, 12])
    mask = g.input("mask", [5, 7], dtype="bool", dist="mask", valid=5)
    g.output(g.op("Attention", [q3, k3, v3, mask], q_num_heads=4, kv_num_heads=2), "attention_3d")
    q = g.input("q", [1, 2, 3, 4])
    k = g.input("k", [1, 2, 3, 4])
    v = g.input("v", [1, 2, 3, 4])
    past_k = g.input("past_k", [1, 2, 2, 4])
    past_v = g.input("past_v", [1, 2, 2, 4])
    y, pk, pv = g.op("Attention", [q, k, v, None, past_k, past_v], outputs=3, is_causal=1, scale=0.3)
    for value, name in ((y, "attention_causal"), (pk, "present_key"), (pv, "present_value")):
        g.output(value, name)
    x = g.input("x", [2, 3, 8])
    g.output(g.op("RMSNormalization", [x, g.const(w(rng, 8, scale=1.0))], epsilon=1e-6), "rms_norm")
    return g


@model
def decomposed_transformer(rng):
    """A transformer block written out op by op (what fuse_layernorm/rmsnorm/gelu/attention
    take apart): LayerNorm as ReduceMean/Sub/Pow/Sqrt/Div, Keras-style einsum attention
    with an additive mask, RMSNorm as Pow/ReduceMean/Sqrt/Reciprocal, tanh GELU with Pow."""
    g = GraphBuilder("decomposed_transformer", opset=18)
    x = g.input("x", [2, 6, 16])
    mask = g.input("mask", [2, 1, 6, 6], dist="uniform", low=-2.0, high=0.0)
    axes = g.i64([-1])
    mu = g.op("ReduceMean", [x, axes])
    d = g.op("Sub", [x, mu])
    var = g.op("ReduceMean", [g.op("Pow", [d, g.const(2.0)]), axes])
    n = g.op("Div", [d, g.op("Sqrt", [g.op("Add", [var, g.const(1e-5)])])])
    h = g.op("Add", [g.op("Mul", [n, g.const(w(rng, 16, scale=1.0))]), g.const(w(rng, 16, scale=0.1))])
    q, k, v = (g.op("Einsum", [h, g.const(w(rng, 16, 2, 8))], equation="abc,cde->abde") for _ in range(3))
    q = g.op("Mul", [q, g.const(1.0 / np.sqrt(8.0))])
    scores = g.op("Add", [g.op("Einsum", [k, q], equation="aecd,abcd->acbe"), mask])
    att = g.op("Einsum", [g.op("Softmax", [scores], axis=-1), v], equation="acbe,aecd->abcd")
    h = g.op("Add", [h, g.op("Einsum", [att, g.const(w(rng, 2, 8, 16))], equation="abcd,cde->abe")])
    ms = g.op("ReduceMean", [g.op("Pow", [h, g.const(2.0)]), axes])
    r = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [ms, g.const(1e-6)])])])
    h = g.op("Mul", [g.op("Mul", [h, r]), g.const(w(rng, 16, scale=1.0))])
    cube = g.op("Mul", [g.op("Pow", [h, g.const(3.0)]), g.const(0.044715)])
    t = g.op("Tanh", [g.op("Mul", [g.op("Add", [h, cube]), g.const(np.sqrt(2 / np.pi))])])
    g.output(g.op("Mul", [g.op("Mul", [h, g.const(0.5)]), g.op("Add", [t, g.const(1.0)])]), "y")
    return g


SOURCES = [GEN_DIR / "make_onnx_models.py", GEN_DIR / "onnx_builder.py", GEN_DIR / "common.py"]
MODEL_NAMES = list(MODELS)


def build(name, out_dir):
    """Builds one model into out_dir; returns the path of the .onnx file."""
    import onnx

    g = MODELS[name](np.random.default_rng(0))
    proto, specs, outputs = g.build()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.onnx"
    tmp = temp_path(path)
    onnx.save(proto, str(tmp))
    os.replace(tmp, path)  # atomically: the cache is shared by concurrent test runs
    write_sidecar(out_dir, {
        "name": name, "file": path.name, "source": "onnx", "size": "small", "opset": g.opset,
        "inputs": specs, "outputs": outputs, "note": (MODELS[name].__doc__ or "").strip(),
        "generator": generator_hash(*SOURCES),
    })
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME", choices=MODEL_NAMES)
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(MODEL_NAMES))
        return 0
    if not args.out_dir:
        ap.error("OUT_DIR is required")
    for name in args.only or MODEL_NAMES:
        print(build(name, args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
