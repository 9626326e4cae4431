"""Zero, negative or absurd strides, kernels, dilations and groups."""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from .builders import _node_model, _simple, conv_model
from .registry import TOO_LARGE, case


@case
def conv_group_zero(ctx):
    """Conv group 0."""
    return _simple(ctx, conv_model("conv_group0", group=0), ["group"], ["conv_group0"])


@case
def conv_group_negative(ctx):
    """Conv group -1."""
    return _simple(ctx, conv_model("conv_groupneg", group=-1), ["group"], ["conv_groupneg"])


@case
def conv_group_huge(ctx):
    """Conv group 2^62."""
    return _simple(ctx, conv_model("conv_grouphuge", group=2**62), ["group", "channel"], ["conv_grouphuge"])


@case
def conv_kernel_shape_zero(ctx):
    """Conv kernel_shape [0, 0] with a weight of 0x0 kernels."""
    return _simple(ctx, conv_model("conv_k0", w_shape=(4, 3, 0, 0), kernel_shape=[0, 0]), ["kernel"], ["conv_k0"])


@case
def conv_strides_negative(ctx):
    """Conv strides [-1, 1]."""
    return _simple(ctx, conv_model("conv_strneg", strides=[-1, 1]), ["stride"], ["conv_strneg"])


@case
def conv_transpose_zero_strides(ctx):
    """ConvTranspose strides [0, 0]."""
    w = numpy_helper.from_array(np.ones((3, 2, 3, 3), np.float32), "ct_weight")
    m = _node_model("ConvTranspose", ["pixels", "ct_weight"], name="convt_str0", inits=[w], strides=[0, 0])
    return _simple(ctx, m, ["stride"], ["convt_str0"])


@case
def conv_transpose_group_zero(ctx):
    """ConvTranspose group 0."""
    w = numpy_helper.from_array(np.ones((3, 2, 3, 3), np.float32), "ct_weight")
    m = _node_model("ConvTranspose", ["pixels", "ct_weight"], name="convt_g0", inits=[w], group=0)
    return _simple(ctx, m, ["group"], ["convt_g0"])


@case
def avgpool_kernel_zero(ctx):
    """AveragePool kernel_shape [0, 2]."""
    m = _node_model("AveragePool", ["pixels"], name="avgpool_k0", kernel_shape=[0, 2])
    return _simple(ctx, m, ["kernel"], ["avgpool_k0"])


@case
def maxpool_no_kernel_shape(ctx):
    """MaxPool without kernel_shape (required)."""
    m = _node_model("MaxPool", ["pixels"], name="maxpool_nok")
    return _simple(ctx, m, ["kernel_shape", "required", "missing"], ["maxpool_nok"])


@case
def maxpool_dilations_zero(ctx):
    """MaxPool dilations [0, 0]."""
    m = _node_model("MaxPool", ["pixels"], name="maxpool_dil0", kernel_shape=[2, 2], dilations=[0, 0])
    return _simple(ctx, m, ["dilation"], ["maxpool_dil0"])


@case
def avgpool_strides_zero(ctx):
    """AveragePool strides [0, 2]."""
    m = _node_model("AveragePool", ["pixels"], name="avgpool_str0", kernel_shape=[2, 2], strides=[0, 2])
    return _simple(ctx, m, ["stride"], ["avgpool_str0"])


@case
def maxpool_kernel_huge(ctx):
    """MaxPool kernel_shape [2^40, 2]."""
    m = _node_model("MaxPool", ["pixels"], name="maxpool_khuge", kernel_shape=[2**40, 2])
    return _simple(ctx, m, ["kernel"] + TOO_LARGE + ["output", "input"], ["maxpool_khuge"])
