"""Out-of-range indices, axes and slice parameters, in initializers and at run time."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, numpy_helper

from .builders import _const_i64, _node_model, _simple, _vi, f32
from .registry import DUPLICATE, OUT_OF_RANGE, case, expect


def _idx_model(op, idx_name, idx, name, data_shape=(3, 4), extra_inits=(), **attrs):
    """op(data, idx): constant indices (idx is an array) or a runtime i64 input (idx is None)."""
    inits = list(extra_inits)
    vis = [f32("pixels", list(data_shape))]
    if idx is None:
        vis.append(_vi(idx_name, TensorProto.INT64, None))
    else:
        inits.append(numpy_helper.from_array(np.asarray(idx, np.int64), idx_name))
    return _node_model(op, ["pixels", idx_name], name=name, inits=inits, in_vis=vis, **attrs)


@case
def gather_negative_index_out_of_range(ctx):
    """Gather row -4 of a [3, 4] input (constant indices)."""
    m = _idx_model("Gather", "rows", [-4], "gather_negoor", axis=0)
    return _simple(ctx, m, OUT_OF_RANGE + ["index", "indices"], ["gather_negoor"])


@case
def gather_index_int64_min(ctx):
    """Gather row -2^63 (constant)."""
    m = _idx_model("Gather", "rows", [-(2**63)], "gather_min", axis=0)
    return _simple(ctx, m, OUT_OF_RANGE + ["index", "indices"], ["gather_min"])


@case
def gather_axis_out_of_range(ctx):
    """Gather along axis 2 of a rank-2 input."""
    m = _idx_model("Gather", "rows", [0], "gather_axis", axis=2)
    return _simple(ctx, m, ["axis"] + OUT_OF_RANGE, ["gather_axis"])


@case
def gather_runtime_index_out_of_range(ctx):
    """Gather with runtime indices [0, 7] (from an .npy) into a [3, 4] input."""
    m = _idx_model("Gather", "rows", None, "gather_rt", axis=0)
    npy = ctx.npy(np.array([0, 7], np.int64), "rows.npy")
    return {"model": ctx.save(m), "inputs": {"rows": npy},
            "run": expect(fragments=OUT_OF_RANGE + ["index", "indices"], mentions=["gather_rt"]),
            "inspect": expect(exit=[0])}


@case
def gather_elements_index_out_of_range(ctx):
    """GatherElements with constant index 5 along an axis of length 3."""
    m = _idx_model("GatherElements", "idx", [[5, 0, 0, 0]], "gathere_oor", axis=0)
    return _simple(ctx, m, OUT_OF_RANGE + ["index", "indices"], ["gathere_oor"])


@case
def gather_elements_runtime_out_of_range(ctx):
    """GatherElements with runtime index -9 along an axis of length 3."""
    m = _idx_model("GatherElements", "idx", None, "gathere_rt", axis=0)
    npy = ctx.npy(np.array([[-9, 0, 0, 0]], np.int64), "idx.npy")
    return {"model": ctx.save(m), "inputs": {"idx": npy},
            "run": expect(fragments=OUT_OF_RANGE + ["index", "indices"], mentions=["gathere_rt"]),
            "inspect": expect(exit=[0])}


@case
def gather_nd_index_out_of_range(ctx):
    """GatherND with constant index [2, 9] into a [3, 4] input."""
    m = _idx_model("GatherND", "idx", [[2, 9]], "gathernd_oor")
    return _simple(ctx, m, OUT_OF_RANGE + ["index", "indices"], ["gathernd_oor"])


@case
def gather_nd_index_too_long(ctx):
    """GatherND with index tuples of length 3 into a rank-2 input."""
    m = _idx_model("GatherND", "idx", [[0, 0, 0]], "gathernd_len")
    return _simple(ctx, m, ["index", "indices", "rank", "last dim"], ["gathernd_len"])


@case
def scatter_nd_index_out_of_range(ctx):
    """ScatterND writing row 10 of a [3, 4] input."""
    upd = numpy_helper.from_array(np.ones((1, 4), np.float32), "upd")
    idx = numpy_helper.from_array(np.array([[10]], np.int64), "idx")
    m = _node_model("ScatterND", ["pixels", "idx", "upd"], name="scatternd_oor", inits=[idx, upd],
                    in_vis=[f32("pixels", [3, 4])])
    return _simple(ctx, m, OUT_OF_RANGE + ["index", "indices"], ["scatternd_oor"])


@case
def scatter_elements_index_out_of_range(ctx):
    """ScatterElements with index -5 along an axis of length 3."""
    upd = numpy_helper.from_array(np.ones((1, 4), np.float32), "upd")
    idx = numpy_helper.from_array(np.array([[-5, 0, 0, 0]], np.int64), "idx")
    m = _node_model("ScatterElements", ["pixels", "idx", "upd"], name="scattere_oor", inits=[idx, upd],
                    in_vis=[f32("pixels", [3, 4])], axis=0)
    return _simple(ctx, m, OUT_OF_RANGE + ["index", "indices"], ["scattere_oor"])


@case
def scatter_nd_runtime_out_of_range(ctx):
    """ScatterND with runtime index [[3]] into a [3, 4] input."""
    upd = numpy_helper.from_array(np.ones((1, 4), np.float32), "upd")
    m = _node_model("ScatterND", ["pixels", "idx", "upd"], name="scatternd_rt", inits=[upd],
                    in_vis=[f32("pixels", [3, 4]), _vi("idx", TensorProto.INT64, [1, 1])])
    npy = ctx.npy(np.array([[3]], np.int64), "idx.npy")
    return {"model": ctx.save(m), "inputs": {"idx": npy},
            "run": expect(fragments=OUT_OF_RANGE + ["index", "indices"], mentions=["scatternd_rt"]),
            "inspect": expect(exit=[0])}


def _slice_model(name, starts, ends, axes=None, steps=None, in_vis=None):
    inits = [_const_i64("starts", starts), _const_i64("ends", ends)]
    ins = ["pixels", "starts", "ends"]
    if axes is not None or steps is not None:
        inits.append(_const_i64("axes", axes if axes is not None else list(range(len(starts)))))
        ins.append("axes")
    if steps is not None:
        inits.append(_const_i64("steps", steps))
        ins.append("steps")
    return _node_model("Slice", ins, name=name, inits=inits, in_vis=in_vis)


@case
def slice_axis_out_of_range(ctx):
    """Slice along axis 6 of a rank-4 input."""
    return _simple(ctx, _slice_model("slice_axis", [0], [1], axes=[6]), ["axis", "axes"] + OUT_OF_RANGE,
                   ["slice_axis"])


@case
def slice_duplicate_axes(ctx):
    """Slice with axes [1, 1]."""
    return _simple(ctx, _slice_model("slice_dup", [0, 0], [1, 1], axes=[1, 1]), ["axis", "axes"] + DUPLICATE,
                   ["slice_dup"])


@case
def slice_zero_step(ctx):
    """Slice with step 0."""
    return _simple(ctx, _slice_model("slice_step0", [0], [2], axes=[2], steps=[0]), ["step", "zero"], ["slice_step0"])


@case
def slice_lengths_disagree(ctx):
    """Slice with 2 starts and 1 end."""
    m = _node_model("Slice", ["pixels", "starts", "ends"], name="slice_len",
                    inits=[_const_i64("starts", [0, 0]), _const_i64("ends", [1])])
    return _simple(ctx, m, ["starts", "ends", "length", "same"], ["slice_len"])


@case
def slice_runtime_step_zero(ctx):
    """Slice with a runtime steps input of [0]."""
    inits = [_const_i64("starts", [0]), _const_i64("ends", [2]), _const_i64("axes", [2])]
    m = _node_model("Slice", ["pixels", "starts", "ends", "axes", "steps"], name="slice_rtstep", inits=inits,
                    in_vis=[f32("pixels", [1, 3, 8, 8]), _vi("steps", TensorProto.INT64, [1])])
    npy = ctx.npy(np.array([0], np.int64), "steps.npy")
    return {"model": ctx.save(m), "inputs": {"steps": npy},
            "run": expect(fragments=["step", "zero"], mentions=["slice_rtstep"]), "inspect": expect(exit=[0])}


@case
def split_runtime_sizes_wrong(ctx):
    """Split with runtime sizes [2, 5] of an axis of length 3."""
    m = _node_model("Split", ["pixels", "sizes"], outputs=["a", "b"], name="split_rt", axis=1,
                    in_vis=[f32("pixels", [1, 3, 8, 8]), _vi("sizes", TensorProto.INT64, [2])])
    npy = ctx.npy(np.array([2, 5], np.int64), "sizes.npy")
    return {"model": ctx.save(m), "inputs": {"sizes": npy},
            "run": expect(fragments=["split", "sum"], mentions=["split_rt"]), "inspect": expect(exit=[0])}


@case
def split_axis_out_of_range(ctx):
    """Split along axis 4 of a rank-4 input."""
    m = _node_model("Split", ["pixels"], outputs=["a", "b"], name="split_axis", opset=18, axis=4, num_outputs=2)
    return _simple(ctx, m, ["axis"] + OUT_OF_RANGE, ["split_axis"])


@case
def reshape_runtime_impossible(ctx):
    """Reshape to a runtime shape [5, 5] of 192 elements."""
    m = _node_model("Reshape", ["pixels", "target"], name="reshape_rt",
                    in_vis=[f32("pixels", [1, 3, 8, 8]), _vi("target", TensorProto.INT64, [2])])
    npy = ctx.npy(np.array([5, 5], np.int64), "target.npy")
    return {"model": ctx.save(m), "inputs": {"target": npy},
            "run": expect(fragments=["reshape", "element", "cannot", "size", "shape"], mentions=["reshape_rt"]),
            "inspect": expect(exit=[0])}
