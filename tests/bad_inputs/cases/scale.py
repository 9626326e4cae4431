"""Scale: many nodes, wide fan-out, huge lists (each case a few MB at most)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from .builders import _node_model, _simple, _vi, f32, make_model
from .registry import TOO_LARGE, both, case, expect


@case
def chain_250k_relu(ctx):
    """250,000 Relu nodes in a row (about 9 MB): loads and runs (or fails cleanly) in bounded time."""
    nodes, prev = [], "pixels"
    for i in range(250_000):
        nodes.append(helper.make_node("Relu", [prev], [f"r{i}"], name=f"relu{i}"))
        prev = f"r{i}"
    m = make_model(nodes, [f32("pixels", [4])], [f32(prev, [4])])
    e = expect(exit=[0, 2], fragments=TOO_LARGE + ["depth", "nodes"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def fan_out_100k(ctx):
    """100,000 Neg nodes all reading the same input, summed by nothing: one value with 100k uses."""
    nodes = [helper.make_node("Neg", ["pixels"], [f"n{i}"], name=f"neg{i}") for i in range(100_000)]
    nodes.append(helper.make_node("Identity", ["n99999"], ["y"], name="last"))
    m = make_model(nodes, [f32("pixels", [2])], [f32("y", [2])])
    e = expect(exit=[0, 2], fragments=TOO_LARGE + ["nodes"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def same_name_100k(ctx):
    """100,000 Neg nodes in a row, all named 'same': making the names unique must not be quadratic."""
    nodes, prev = [], "pixels"
    for i in range(100_000):
        nodes.append(helper.make_node("Neg", [prev], [f"v{i}"], name="same"))
        prev = f"v{i}"
    m = make_model(nodes, [f32("pixels", [4])], [f32(prev, [4])])
    return {"model": ctx.save(m), "inputs": {"pixels": ctx.npy(np.arange(4, dtype=np.float32), "x.npy")},
            "output_equals_input": True, "run": expect(exit=[0]), "inspect": expect(exit=[0])}


@case
def concat_50k_inputs(ctx):
    """One Concat of 50,000 inputs."""
    n = helper.make_node("Concat", ["pixels"] * 50_000, ["y"], name="concat_wide", axis=0)
    m = make_model([n], [f32("pixels", [1])], [f32("y", None)])
    e = expect(exit=[0, 2], fragments=TOO_LARGE + ["inputs"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def many_graph_outputs(ctx):
    """50,000 graph outputs, each its own Neg."""
    nodes = [helper.make_node("Neg", ["pixels"], [f"o{i}"], name=f"neg{i}") for i in range(50_000)]
    m = make_model(nodes, [f32("pixels", [1])], [f32(f"o{i}", [1]) for i in range(50_000)])
    e = expect(exit=[0, 2], fragments=TOO_LARGE + ["outputs"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def many_initializers(ctx):
    """100,000 tiny initializers added in a balanced tree of Adds."""
    inits = [numpy_helper.from_array(np.array([float(i)], np.float32), f"c{i}") for i in range(100_000)]
    level, nodes, k = [f"c{i}" for i in range(100_000)], [], 0
    while len(level) > 1:
        nxt = []
        for a, b in zip(level[0::2], level[1::2]):
            nodes.append(helper.make_node("Add", [a, b], [f"s{k}"], name=f"add{k}"))
            nxt.append(f"s{k}")
            k += 1
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    nodes.append(helper.make_node("Identity", [level[0]], ["y"], name="total"))
    m = make_model(nodes, [], [f32("y", [1])], inits)
    e = expect(exit=[0, 2], fragments=TOO_LARGE)
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def huge_attribute_list(ctx):
    """A Transpose whose perm has 1,000,000 entries for a rank-4 input."""
    m = _node_model("Transpose", ["pixels"], name="transpose_long", perm=list(range(1_000_000)))
    return _simple(ctx, m, ["perm", "permutation", "rank"], ["transpose_long"])


@case
def huge_name(ctx):
    """A node name of 4 MB on an op with a bad attribute: the error stays readable."""
    name = "n" * (4 << 20)
    m = _node_model("Transpose", ["pixels"], name=name, perm=[0, 0, 1, 2])
    e = expect(fragments=["perm", "permutation"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def deep_nested_loops(ctx):
    """Loop bodies nested 25 deep, every Loop without outputs (the spec wants one at least): imported
    level by level and refused by the verifier, naming the outer loop, without recursion trouble."""
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"], name="leaf_id")], "leaf",
                             [_vi("i", TensorProto.INT64, []), _vi("c_in", TensorProto.BOOL, [])],
                             [_vi("c_out", TensorProto.BOOL, [])])
    for d in range(25):
        inner = helper.make_node("Loop", ["", "c_in"], [], name=f"loop{d}", body=body)
        body = helper.make_graph([inner, helper.make_node("Identity", ["c_in"], ["c_out"], name=f"id{d}")], f"b{d}",
                                 [_vi("i", TensorProto.INT64, []), _vi("c_in", TensorProto.BOOL, [])],
                                 [_vi("c_out", TensorProto.BOOL, [])])
    n = helper.make_node("Loop", ["", "cond"], [], name="outer_loop", body=body)
    m = make_model([n, helper.make_node("Identity", ["cond"], ["y"], name="id")], [_vi("cond", TensorProto.BOOL, [])],
                   [_vi("y", TensorProto.BOOL, [])])
    return {"model": ctx.save(m), **both(fragments=["outputs, expected 1 or more"], mentions=["outer_loop"])}
