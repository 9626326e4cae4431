"""Conv and ConvTranspose attributes and weights that contradict each other or the
input: kernel shapes, groups, pads, strides, dilations, ranks, bias length."""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from .builders import _node_model, _simple, conv_model
from .registry import TOO_LARGE, both, case


@case
def conv_kernel_shape_mismatch(ctx):
    """kernel_shape [5, 5] with a 3x3 weight."""
    m = conv_model("conv_ks", kernel_shape=[5, 5])
    return {"model": ctx.save(m), **both(fragments=["kernel_shape", "kernel"], mentions=["conv_ks"])}


@case
def conv_group_not_dividing(ctx):
    """group 2 with 3 input channels."""
    m = conv_model("conv_group", w_shape=(4, 1, 3, 3), group=2)
    return {"model": ctx.save(m), **both(fragments=["group", "channel"], mentions=["conv_group"])}


@case
def conv_pads_wrong_length(ctx):
    """pads with 3 values for a 2-D conv."""
    m = conv_model("conv_pads", pads=[1, 1, 1])
    return {"model": ctx.save(m), **both(fragments=["pads"], mentions=["conv_pads"])}


@case
def conv_zero_strides(ctx):
    """strides [0, 0]."""
    m = conv_model("conv_stride0", strides=[0, 0])
    return {"model": ctx.save(m), **both(fragments=["stride"], mentions=["conv_stride0"])}


@case
def conv_kernel_shape_rank_mismatch(ctx):
    """kernel_shape with 3 values for a 2-D conv."""
    return _simple(ctx, conv_model("conv_ks3", kernel_shape=[3, 3, 3]), ["kernel_shape", "kernel"], ["conv_ks3"])


@case
def conv_strides_too_many(ctx):
    """strides with 3 values for a 2-D conv."""
    return _simple(ctx, conv_model("conv_str3", strides=[1, 1, 1]), ["stride"], ["conv_str3"])


@case
def conv_dilations_zero(ctx):
    """dilations [0, 1]."""
    return _simple(ctx, conv_model("conv_dil0", dilations=[0, 1]), ["dilation"], ["conv_dil0"])


@case
def conv_dilations_negative(ctx):
    """dilations [-1, 1]."""
    return _simple(ctx, conv_model("conv_dilneg", dilations=[-1, 1]), ["dilation"], ["conv_dilneg"])


@case
def conv_pads_negative(ctx):
    """pads [-1, -1, -1, -1]."""
    return _simple(ctx, conv_model("conv_padneg", pads=[-1, -1, -1, -1]), ["pad"], ["conv_padneg"])


@case
def conv_pads_huge(ctx):
    """pads of 2^62."""
    return _simple(ctx, conv_model("conv_padhuge", pads=[2**62] * 4), ["pad"] + TOO_LARGE, ["conv_padhuge"])


@case
def conv_kernel_larger_than_input(ctx):
    """A 9x9 kernel over an 8x8 input, no padding."""
    return _simple(ctx, conv_model("conv_bigk", w_shape=(4, 3, 9, 9)),
                   ["kernel", "larger", "input", "output", "size", "dim", "negative"], ["conv_bigk"])


@case
def conv_weight_rank_wrong(ctx):
    """A conv weight of rank 2."""
    return _simple(ctx, conv_model("conv_w2d", w_shape=(4, 27)), ["weight", "rank", "dims", "shape"], ["conv_w2d"])


@case
def conv_bias_wrong_length(ctx):
    """A Conv bias of 7 values for 4 output channels."""
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "conv_weight")
    b = numpy_helper.from_array(np.ones(7, np.float32), "conv_bias")
    m = _node_model("Conv", ["pixels", "conv_weight", "conv_bias"], name="conv_bias7", inits=[w, b])
    return _simple(ctx, m, ["bias", "shape", "channels", "size"], ["conv_bias7"])


@case
def conv_auto_pad_invalid(ctx):
    """auto_pad 'MIDDLE'."""
    return _simple(ctx, conv_model("conv_autopad", auto_pad="MIDDLE"), ["auto_pad", "MIDDLE"], ["conv_autopad"])


@case
def conv_transpose_output_padding_too_big(ctx):
    """ConvTranspose with output_padding 3 >= stride 2."""
    w = numpy_helper.from_array(np.ones((3, 2, 3, 3), np.float32), "ct_weight")
    m = _node_model("ConvTranspose", ["pixels", "ct_weight"], name="convt_outpad", inits=[w], strides=[2, 2],
                    output_padding=[3, 3])
    return _simple(ctx, m, ["output_padding", "stride"], ["convt_outpad"])


@case
def conv_transpose_output_shape_huge(ctx):
    """ConvTranspose with output_shape [2^40, 2^40]."""
    w = numpy_helper.from_array(np.ones((3, 2, 3, 3), np.float32), "ct_weight")
    m = _node_model("ConvTranspose", ["pixels", "ct_weight"], name="convt_huge", inits=[w],
                    output_shape=[2**40, 2**40])
    return _simple(ctx, m, ["output_shape"] + TOO_LARGE + ["pads", "negative", "invalid"], ["convt_huge"],
                   run_only=True)
