"""Attributes that overstate or contradict the tensors they describe (shapes, ranks,
axes, sizes, scales), and shape inputs that do the same."""

from __future__ import annotations

import numpy as np
from onnx import helper, numpy_helper

from .builders import _const_i64, _node_model, _simple, f32, make_model
from .registry import DUPLICATE, OUT_OF_RANGE, TOO_LARGE, both, case, expect


@case
def maxpool_zero_strides(ctx):
    """MaxPool with strides [1, 0]."""
    n = helper.make_node("MaxPool", ["pixels"], ["y"], name="pool_stride0", kernel_shape=[2, 2], strides=[1, 0])
    m = make_model([n], [f32("pixels", [1, 3, 8, 8])], [f32("y", None)])
    return {"model": ctx.save(m), **both(fragments=["stride"], mentions=["pool_stride0"])}


@case
def reshape_impossible(ctx):
    """Reshape [2, 3] (6 elements) to [4, 2] (8 elements)."""
    n = helper.make_node("Reshape", ["pixels", "target_shape"], ["y"], name="reshape_bad")
    m = make_model([n], [f32("pixels", [2, 3])], [f32("y", None)], [_const_i64("target_shape", [4, 2])])
    return {"model": ctx.save(m), **both(fragments=["reshape", "element", "cannot", "size", "shape"],
                                         mentions=["reshape_bad"])}


@case
def gather_index_out_of_range(ctx):
    """Gather rows [0, 5] of a [3, 4] input (constant indices)."""
    n = helper.make_node("Gather", ["pixels", "rows"], ["y"], name="gather_oob", axis=0)
    m = make_model([n], [f32("pixels", [3, 4])], [f32("y", None)], [_const_i64("rows", [0, 5])])
    return {"model": ctx.save(m), "run": expect(fragments=OUT_OF_RANGE + ["index", "indices"], mentions=["gather_oob"]),
            "inspect": expect(exit=[0, 2])}


@case
def split_sizes_not_summing(ctx):
    """Split sizes [2, 2] of an axis of length 5."""
    n = helper.make_node("Split", ["pixels", "sizes"], ["a", "b"], name="split_bad", axis=0)
    m = make_model([n], [f32("pixels", [5])], [f32("a", None), f32("b", None)], [_const_i64("sizes", [2, 2])])
    return {"model": ctx.save(m), **both(fragments=["split", "sum"], mentions=["split_bad"])}


@case
def matmul_inner_dim_mismatch(ctx):
    """MatMul [2, 3] x [4, 5]."""
    w = numpy_helper.from_array(np.ones((4, 5), np.float32), "mm_weight")
    n = helper.make_node("MatMul", ["pixels", "mm_weight"], ["y"], name="matmul_bad")
    m = make_model([n], [f32("pixels", [2, 3])], [f32("y", None)], [w])
    return {"model": ctx.save(m), **both(fragments=["inner", "dim", "shape", "match"], mentions=["matmul_bad"])}


@case
def broadcast_incompatible(ctx):
    """Add [2, 3] + [4]: not broadcastable."""
    b = numpy_helper.from_array(np.ones(4, np.float32), "bias4")
    n = helper.make_node("Add", ["pixels", "bias4"], ["y"], name="add_bad")
    m = make_model([n], [f32("pixels", [2, 3])], [f32("y", None)], [b])
    return {"model": ctx.save(m), **both(fragments=["broadcast", "shape", "incompatible"], mentions=["add_bad"])}


@case
def tile_absurd_output(ctx):
    """Tile [2, 2] by [1e9, 1e9]: an output of 4e18 elements must be refused, not allocated."""
    n = helper.make_node("Tile", ["pixels", "repeats"], ["y"], name="tile_huge")
    m = make_model([n], [f32("pixels", [2, 2])], [f32("y", None)], [_const_i64("repeats", [10**9, 10**9])])
    return {"model": ctx.save(m), "run": expect(fragments=TOO_LARGE + ["size"], mentions=["tile_huge"]),
            "inspect": expect(exit=[0, 2])}


@case
def constant_of_shape_absurd(ctx):
    """ConstantOfShape [1e6, 1e6, 1e6]."""
    n = helper.make_node("ConstantOfShape", ["dims"], ["y"], name="cos_huge")
    m = make_model([n], [], [f32("y", None)], [_const_i64("dims", [10**6] * 3)])
    return {"model": ctx.save(m), "run": expect(fragments=TOO_LARGE + ["size"], mentions=["cos_huge"]),
            "inspect": expect(exit=[0, 2])}


@case
def resize_absurd_scale(ctx):
    """Resize with scales 1e9 in both spatial axes."""
    scales = numpy_helper.from_array(np.array([1, 1, 1e9, 1e9], np.float32), "scales")
    n = helper.make_node("Resize", ["pixels", "", "scales"], ["y"], name="resize_huge")
    m = make_model([n], [f32("pixels", [1, 1, 4, 4])], [f32("y", None)], [scales])
    return {"model": ctx.save(m), "run": expect(fragments=TOO_LARGE + ["size"], mentions=["resize_huge"]),
            "inspect": expect(exit=[0, 2])}


@case
def batchnorm_scale_wrong_length(ctx):
    """BatchNormalization with a scale of 5 values for 3 channels."""
    inits = [numpy_helper.from_array(np.ones(n, np.float32), nm)
             for nm, n in (("bn_scale", 5), ("bn_bias", 3), ("bn_mean", 3), ("bn_var", 3))]
    m = _node_model("BatchNormalization", ["pixels", "bn_scale", "bn_bias", "bn_mean", "bn_var"], name="bn_bad",
                    inits=inits)
    return _simple(ctx, m, ["scale", "shape", "channel", "size", "broadcast"], ["bn_bad"])


@case
def gemm_trans_mismatch(ctx):
    """Gemm [2, 3] x [2, 4] with transB=1 (needs B [N, 3])."""
    b = numpy_helper.from_array(np.ones((2, 4), np.float32), "gemm_b")
    m = _node_model("Gemm", ["pixels", "gemm_b"], name="gemm_bad", inits=[b], in_vis=[f32("pixels", [2, 3])],
                    transB=1)
    return _simple(ctx, m, ["inner", "dim", "shape", "match"], ["gemm_bad"])


@case
def split_num_outputs_too_many(ctx):
    """Split (opset 18) into num_outputs=8 of an axis of length 3."""
    outs = [f"s{i}" for i in range(8)]
    m = _node_model("Split", ["pixels"], outputs=outs, name="split_many", opset=18, axis=1, num_outputs=8)
    return _simple(ctx, m, ["split", "num_outputs", "outputs"], ["split_many"])


@case
def split_attr_opset11_wrong_sum(ctx):
    """Split (opset 11) with attribute split=[1, 1] of an axis of length 3."""
    m = _node_model("Split", ["pixels"], outputs=["a", "b"], name="split_attr", opset=11, axis=1, split=[1, 1])
    return _simple(ctx, m, ["split", "sum"], ["split_attr"])


@case
def split_negative_size(ctx):
    """Split sizes [4, -1] of an axis of length 3."""
    m = _node_model("Split", ["pixels", "sizes"], outputs=["a", "b"], name="split_neg", axis=1,
                    inits=[_const_i64("sizes", [4, -1])])
    return _simple(ctx, m, ["split", "sum", "negative", "invalid"], ["split_neg"])


@case
def depth_to_space_not_dividing(ctx):
    """DepthToSpace blocksize 2 of 3 channels."""
    m = _node_model("DepthToSpace", ["pixels"], name="d2s_bad", blocksize=2)
    return _simple(ctx, m, ["blocksize", "channel", "divis"], ["d2s_bad"])


@case
def depth_to_space_zero_block(ctx):
    """DepthToSpace blocksize 0."""
    m = _node_model("DepthToSpace", ["pixels"], name="d2s_zero", blocksize=0)
    return _simple(ctx, m, ["blocksize", "positive"], ["d2s_zero"])


@case
def space_to_depth_not_dividing(ctx):
    """SpaceToDepth blocksize 3 of an 8x8 input."""
    m = _node_model("SpaceToDepth", ["pixels"], name="s2d_bad", blocksize=3)
    return _simple(ctx, m, ["blocksize", "divis", "spatial"], ["s2d_bad"])


@case
def transpose_perm_duplicate(ctx):
    """Transpose perm [0, 0, 1, 2]."""
    m = _node_model("Transpose", ["pixels"], name="transpose_dup", perm=[0, 0, 1, 2])
    return _simple(ctx, m, ["perm", "permutation"], ["transpose_dup"])


@case
def transpose_perm_out_of_range(ctx):
    """Transpose perm [0, 1, 2, 9]."""
    m = _node_model("Transpose", ["pixels"], name="transpose_oor", perm=[0, 1, 2, 9])
    return _simple(ctx, m, ["perm", "permutation"] + OUT_OF_RANGE, ["transpose_oor"])


@case
def transpose_perm_wrong_length(ctx):
    """Transpose perm [1, 0] of a rank-4 input."""
    m = _node_model("Transpose", ["pixels"], name="transpose_len", perm=[1, 0])
    return _simple(ctx, m, ["perm", "permutation", "rank"], ["transpose_len"])


@case
def concat_axis_out_of_range(ctx):
    """Concat axis 7 of rank-4 inputs."""
    m = _node_model("Concat", ["pixels", "pixels"], name="concat_axis", axis=7)
    return _simple(ctx, m, ["axis"] + OUT_OF_RANGE, ["concat_axis"])


@case
def concat_shape_mismatch(ctx):
    """Concat along axis 1 of [1, 3, 8, 8] and [1, 3, 4, 4]."""
    c = numpy_helper.from_array(np.ones((1, 3, 4, 4), np.float32), "small_block")
    m = _node_model("Concat", ["pixels", "small_block"], name="concat_shapes", inits=[c], axis=1)
    return _simple(ctx, m, ["shape", "dim", "match"], ["concat_shapes"])


@case
def softmax_axis_out_of_range(ctx):
    """Softmax axis -9 of a rank-4 input."""
    m = _node_model("Softmax", ["pixels"], name="softmax_axis", axis=-9)
    return _simple(ctx, m, ["axis"] + OUT_OF_RANGE, ["softmax_axis"])


@case
def flatten_axis_out_of_range(ctx):
    """Flatten axis 5 of a rank-4 input."""
    m = _node_model("Flatten", ["pixels"], name="flatten_axis", axis=5)
    return _simple(ctx, m, ["axis"] + OUT_OF_RANGE, ["flatten_axis"])


@case
def reduce_axes_out_of_range(ctx):
    """ReduceSum over axis 10 of a rank-4 input."""
    m = _node_model("ReduceSum", ["pixels", "axes"], name="reduce_axes", inits=[_const_i64("axes", [10])])
    return _simple(ctx, m, ["axis", "axes"] + OUT_OF_RANGE, ["reduce_axes"])


@case
def reduce_axes_duplicate(ctx):
    """ReduceMean over axes [1, 1]."""
    m = _node_model("ReduceMean", ["pixels", "axes"], name="reduce_dup", opset=18, inits=[_const_i64("axes", [1, 1])])
    return _simple(ctx, m, ["axis", "axes"] + DUPLICATE, ["reduce_dup"])


@case
def unsqueeze_axes_out_of_range(ctx):
    """Unsqueeze at axis 9 of a rank-4 input."""
    m = _node_model("Unsqueeze", ["pixels", "axes"], name="unsqueeze_axes", inits=[_const_i64("axes", [9])])
    return _simple(ctx, m, ["axis", "axes"] + OUT_OF_RANGE, ["unsqueeze_axes"])


@case
def squeeze_non_unit_axis(ctx):
    """Squeeze axis 1 (size 3)."""
    m = _node_model("Squeeze", ["pixels", "axes"], name="squeeze_bad", inits=[_const_i64("axes", [1])])
    return _simple(ctx, m, ["squeeze", "size 1", "not 1", "axis", "1"], ["squeeze_bad"])


@case
def layernorm_axis_out_of_range(ctx):
    """LayerNormalization axis 6 of a rank-4 input."""
    s = numpy_helper.from_array(np.ones(8, np.float32), "ln_scale")
    m = _node_model("LayerNormalization", ["pixels", "ln_scale"], name="ln_axis", inits=[s], axis=6)
    return _simple(ctx, m, ["axis"] + OUT_OF_RANGE, ["ln_axis"])


@case
def groupnorm_groups_not_dividing(ctx):
    """GroupNormalization num_groups 2 over 3 channels."""
    inits = [numpy_helper.from_array(np.ones(3, np.float32), n) for n in ("gn_scale", "gn_bias")]
    m = _node_model("GroupNormalization", ["pixels", "gn_scale", "gn_bias"], name="gn_bad", opset=21, inits=inits,
                    num_groups=2)
    return _simple(ctx, m, ["group", "channel", "divis"], ["gn_bad"])


@case
def einsum_bad_equation(ctx):
    """Einsum with equation 'ij,jk->ikq' (an output letter no input has)."""
    m = _node_model("Einsum", ["pixels", "pixels"], name="einsum_bad", in_vis=[f32("pixels", [2, 2])],
                    equation="ij,jk->ikq")
    return _simple(ctx, m, ["equation", "einsum", "letter", "label", "subscript"], ["einsum_bad"])


@case
def einsum_garbage_equation(ctx):
    """Einsum with equation '!!->'."""
    m = _node_model("Einsum", ["pixels"], name="einsum_junk", in_vis=[f32("pixels", [2, 2])], equation="!!->")
    return _simple(ctx, m, ["equation", "einsum", "character", "letter", "invalid"], ["einsum_junk"])


@case
def topk_k_larger_than_axis(ctx):
    """TopK with k=100 along an axis of length 8."""
    m = _node_model("TopK", ["pixels", "k"], outputs=["vals", "idx"], name="topk_big", inits=[_const_i64("k", [100])])
    return _simple(ctx, m, ["k", "larger", "axis"], ["topk_big"])


@case
def topk_k_negative(ctx):
    """TopK with k=-1."""
    m = _node_model("TopK", ["pixels", "k"], outputs=["vals", "idx"], name="topk_neg", inits=[_const_i64("k", [-1])])
    return _simple(ctx, m, ["k", "negative", "invalid"], ["topk_neg"])


@case
def onehot_negative_depth(ctx):
    """OneHot with depth -3."""
    inits = [_const_i64("oh_idx", [0, 1]), _const_i64("oh_depth", [-3]),
             numpy_helper.from_array(np.array([0, 1], np.float32), "oh_values")]
    m = _node_model("OneHot", ["oh_idx", "oh_depth", "oh_values"], name="onehot_neg", inits=inits, in_vis=[])
    return _simple(ctx, m, ["depth", "positive", "invalid"], ["onehot_neg"])


@case
def range_zero_delta(ctx):
    """Range(0, 10, 0)."""
    inits = [_const_i64(n, v) for n, v in (("r_start", 0), ("r_limit", 10), ("r_delta", 0))]
    m = _node_model("Range", ["r_start", "r_limit", "r_delta"], name="range_zero", inits=inits, in_vis=[])
    return _simple(ctx, m, ["delta", "zero", "step"], ["range_zero"])


@case
def range_huge(ctx):
    """Range(0, 2^62, 1)."""
    inits = [_const_i64(n, v) for n, v in (("r_start", 0), ("r_limit", 2**62), ("r_delta", 1))]
    m = _node_model("Range", ["r_start", "r_limit", "r_delta"], name="range_huge", inits=inits, in_vis=[])
    return _simple(ctx, m, TOO_LARGE + ["range"], ["range_huge"])


@case
def reshape_two_minus_ones(ctx):
    """Reshape to [-1, -1]."""
    m = _node_model("Reshape", ["pixels", "shape"], name="reshape_2neg", inits=[_const_i64("shape", [-1, -1])])
    return _simple(ctx, m, ["-1", "reshape", "shape", "one"], ["reshape_2neg"])


@case
def reshape_minus_two(ctx):
    """Reshape to [-2, 96]."""
    m = _node_model("Reshape", ["pixels", "shape"], name="reshape_m2", inits=[_const_i64("shape", [-2, 96])])
    return _simple(ctx, m, ["-2", "reshape", "shape", "invalid", "negative"], ["reshape_m2"])


@case
def expand_negative_shape(ctx):
    """Expand to [1, 3, -8, 8]."""
    m = _node_model("Expand", ["pixels", "shape"], name="expand_neg", inits=[_const_i64("shape", [1, 3, -8, 8])])
    return _simple(ctx, m, ["shape", "negative", "invalid", "broadcast"], ["expand_neg"])


@case
def expand_absurd(ctx):
    """Expand [1, 3, 8, 8] to [2^30, 3, 8, 8] (about 2^35 f32 values)."""
    m = _node_model("Expand", ["pixels", "shape"], name="expand_huge", inits=[_const_i64("shape", [2**30, 3, 8, 8])])
    return _simple(ctx, m, TOO_LARGE + ["size"], ["expand_huge"], run_only=True)


@case
def tile_negative_repeats(ctx):
    """Tile with repeats [1, -1, 1, 1]."""
    m = _node_model("Tile", ["pixels", "repeats"], name="tile_neg", inits=[_const_i64("repeats", [1, -1, 1, 1])])
    return _simple(ctx, m, ["repeats", "negative", "invalid"], ["tile_neg"])


@case
def pad_negative_beyond_size(ctx):
    """Pad with pads of -10 on an axis of length 8."""
    m = _node_model("Pad", ["pixels", "pads"], name="pad_neg", inits=[_const_i64("pads", [0, 0, -10, 0, 0, 0, 0, 0])])
    return _simple(ctx, m, ["pad", "negative", "size"], ["pad_neg"])


@case
def pad_huge(ctx):
    """Pad with pads of 2^40."""
    m = _node_model("Pad", ["pixels", "pads"], name="pad_huge", inits=[_const_i64("pads", [0, 0, 2**40, 0, 0, 0, 0, 0])])
    return _simple(ctx, m, ["pad"] + TOO_LARGE, ["pad_huge"])


@case
def pad_wrong_length(ctx):
    """Pad with 3 pads values for a rank-4 input."""
    m = _node_model("Pad", ["pixels", "pads"], name="pad_len", inits=[_const_i64("pads", [1, 1, 1])])
    return _simple(ctx, m, ["pad"], ["pad_len"])


@case
def resize_scales_wrong_length(ctx):
    """Resize with 2 scales for a rank-4 input."""
    scales = numpy_helper.from_array(np.array([2, 2], np.float32), "scales")
    m = _node_model("Resize", ["pixels", "", "scales"], name="resize_len", inits=[scales])
    return _simple(ctx, m, ["scales", "rank"], ["resize_len"])


@case
def resize_negative_scale(ctx):
    """Resize with scales [1, 1, -2, 2]."""
    scales = numpy_helper.from_array(np.array([1, 1, -2, 2], np.float32), "scales")
    m = _node_model("Resize", ["pixels", "", "scales"], name="resize_neg", inits=[scales])
    return _simple(ctx, m, ["scale", "positive", "negative", "invalid"], ["resize_neg"])


@case
def resize_nan_scale(ctx):
    """Resize with scales [1, 1, nan, 2]."""
    scales = numpy_helper.from_array(np.array([1, 1, np.nan, 2], np.float32), "scales")
    m = _node_model("Resize", ["pixels", "", "scales"], name="resize_nan", inits=[scales])
    return _simple(ctx, m, ["scale", "nan", "finite", "positive", "invalid"], ["resize_nan"])


@case
def resize_nan_scale_symbolic_input(ctx):
    """Resize of an input with symbolic dims by scales [1, 1, nan, 2] (fuzz regression: NaN cast to int)."""
    scales = numpy_helper.from_array(np.array([1, 1, np.nan, 2], np.float32), "scales")
    m = _node_model("Resize", ["pixels", "", "scales"], name="resize_nan_sym", inits=[scales],
                    in_vis=[f32("pixels", ["N", 3, 8, "W"])])
    return _simple(ctx, m, ["scale", "positive"], ["resize_nan_sym"])


@case
def resize_nan_and_huge_roi(ctx):
    """Resize-11 tf_crop_and_resize with roi [nan, 2.25e15, ...] (fuzz regression: NaN/huge coordinates cast to int).

    Either result is fair: sampled (NaN coordinates extrapolate) or rejected; never undefined behaviour."""
    roi = numpy_helper.from_array(np.array([np.nan, 2.25e15, 0.1, -0.2, 1, 1, 0.9, 0.8], np.float32), "roi")
    scales = numpy_helper.from_array(np.zeros(0, np.float32), "no_scales")
    sizes = _const_i64("sizes", [1, 2, 4, 5])
    m = _node_model("Resize", ["pixels", "roi", "no_scales", "sizes"], name="resize_roi", inits=[roi, scales, sizes],
                    in_vis=[f32("pixels", [1, 2, 6, 6])], opset=11, mode="linear",
                    coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-7.0)
    e = expect(exit=[0, 2], fragments=["roi", "nan", "finite"])
    return {"model": ctx.save(m), "run": e, "inspect": expect(exit=[0, 2])}


@case
def constant_of_shape_negative(ctx):
    """ConstantOfShape [2, -1]."""
    m = _node_model("ConstantOfShape", ["dims"], name="cos_neg", inits=[_const_i64("dims", [2, -1])], in_vis=[])
    return _simple(ctx, m, ["negative", "invalid", "shape"], ["cos_neg"])


@case
def constant_of_shape_value_two_elements(ctx):
    """ConstantOfShape whose value attribute holds 2 elements (must be 1)."""
    v = numpy_helper.from_array(np.array([1, 2], np.float32), "v")
    m = _node_model("ConstantOfShape", ["dims"], name="cos_val2", inits=[_const_i64("dims", [2])], in_vis=[], value=v)
    return _simple(ctx, m, ["value", "one", "1 element", "single", "element"], ["cos_val2"])
