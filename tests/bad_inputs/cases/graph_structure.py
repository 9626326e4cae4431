"""Graph structure: undefined and duplicate values, cycles, inputs, outputs, nodes
and attributes that do not fit their op, subgraphs, functions, opsets and IR versions."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .builders import _field, _node_model, _simple, _varint, _vi, conv_model, f32, make_model, valid_model
from .registry import DUPLICATE, PARSE, TOO_LARGE, UNDEFINED, UNSUPPORTED, both, case, expect


@case
def missing_initializer(ctx):
    """A Conv weight nothing produces: no initializer, input or node output of that name."""
    node = helper.make_node("Conv", ["pixels", "conv_weight_missing"], ["y"], name="conv_without_weight")
    m = make_model([node], [f32("pixels", [1, 3, 8, 8])], [f32("y", None)])
    return {"model": ctx.save(m), **both(fragments=UNDEFINED, mentions=["conv_weight_missing"])}


@case
def cycle(ctx):
    """relu_a reads relu_b's output and relu_b reads relu_a's."""
    a = helper.make_node("Relu", ["b_out"], ["a_out"], name="relu_a")
    b = helper.make_node("Relu", ["a_out"], ["b_out"], name="relu_b")
    m = make_model([a, b], [f32("pixels", [2])], [f32("a_out", [2])])
    return {"model": ctx.save(m), **both(fragments=["cycle", "topolog", "order"] + UNDEFINED,
                                         mentions=[["relu_a", "relu_b", "a_out", "b_out"]])}


@case
def duplicate_value_names(ctx):
    """Two nodes write the value 'twice_defined'."""
    n1 = helper.make_node("Relu", ["pixels"], ["twice_defined"], name="relu_first")
    n2 = helper.make_node("Sigmoid", ["pixels"], ["twice_defined"], name="sigmoid_second")
    m = make_model([n1, n2], [f32("pixels", [2])], [f32("twice_defined", [2])])
    return {"model": ctx.save(m), **both(fragments=DUPLICATE, mentions=["twice_defined"])}


@case
def output_overwrites_graph_input(ctx):
    """A node's output has the graph input's name."""
    n = helper.make_node("Relu", ["pixels"], ["pixels"], name="relu_clobbers_input")
    m = make_model([n], [f32("pixels", [2])], [f32("pixels", [2])])
    return {"model": ctx.save(m), **both(fragments=DUPLICATE + ["graph input", "cycle"], mentions=["pixels"])}


@case
def chain_10k(ctx):
    """10,000 Neg nodes in a row: must simply run (and give back the input)."""
    nodes, prev = [], "pixels"
    for i in range(10_000):
        nodes.append(helper.make_node("Neg", [prev], [f"v{i}"], name=f"neg{i}"))
        prev = f"v{i}"
    m = make_model(nodes, [f32("pixels", [4])], [f32(prev, [4])])
    return {"model": ctx.save(m), "inputs": {"pixels": ctx.npy(np.arange(4, dtype=np.float32), "x.npy")},
            "output_equals_input": True, "run": expect(exit=[0]), "inspect": expect(exit=[0])}


@case
def chain_100k_identity(ctx):
    """100,000 Identity nodes in a row: running or a clean error, never a stack overflow."""
    nodes, prev = [], "pixels"
    for i in range(100_000):
        nodes.append(helper.make_node("Identity", [prev], [f"v{i}"], name=f"id{i}"))
        prev = f"v{i}"
    m = make_model(nodes, [f32("pixels", [4])], [f32(prev, [4])])
    e = expect(exit=[0, 2], fragments=TOO_LARGE + ["depth", "nodes"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


def _if_graph(depth, then_graph, else_graph):
    """GraphProto bytes holding one If node; encoded by hand because the Python protobuf
    runtime refuses to build messages nested deeper than 100 levels."""
    def graph_attr(name, graph):  # AttributeProto: name = 1, g = 6, type = 20 (GRAPH = 5)
        return _field(1, name) + _field(6, graph) + _varint(20 << 3 | 0) + _varint(5)

    out = f"r{depth}"
    node = (_field(1, "cond") + _field(2, out) + _field(3, f"if{depth}") + _field(4, "If")
            + _field(5, graph_attr("then_branch", then_graph)) + _field(5, graph_attr("else_branch", else_graph)))
    # GraphProto: node = 1, name = 2, output = 12
    return _field(1, node) + _field(2, f"g{depth}") + _field(12, f32(out, [2]).SerializeToString())


@case
def nested_subgraphs(ctx):
    """If inside If ... 300 levels deep (past protobuf's default recursion limit of 100)."""
    def leaf(out):
        return helper.make_graph([helper.make_node("Identity", ["pixels"], [out], name=f"leaf_{out}")], "leaf", [],
                                 [f32(out, [2])]).SerializeToString()

    graph = leaf("r0")
    for depth in range(1, 300):
        graph = _if_graph(depth, graph, leaf(f"e{depth}"))
    # The top graph adds the inputs (GraphProto.input = 11) the branches read from the outer scope.
    graph += _field(11, helper.make_tensor_value_info("cond", TensorProto.BOOL, []).SerializeToString())
    graph += _field(11, f32("pixels", [2]).SerializeToString())
    # ModelProto: ir_version = 1 (varint), graph = 7, opset_import = 8
    model = (_varint(1 << 3 | 0) + _varint(8) + _field(7, graph)
             + _field(8, helper.make_opsetid("", 17).SerializeToString()))
    e = expect(fragments=PARSE + ["depth", "nest", "recurs", "unsupported", "not supported"])
    return {"model": ctx.save(model), "run": e, "inspect": expect(exit=[0, 2])}


@case
def cycle_three_nodes(ctx):
    """relu_a -> relu_b -> relu_c -> relu_a."""
    nodes = [helper.make_node("Relu", ["c_out"], ["a_out"], name="relu_a"),
             helper.make_node("Relu", ["a_out"], ["b_out"], name="relu_b"),
             helper.make_node("Relu", ["b_out"], ["c_out"], name="relu_c")]
    m = make_model(nodes, [f32("pixels", [2])], [f32("c_out", [2])])
    return {"model": ctx.save(m), **both(fragments=["cycle"], mentions=[["relu_a", "relu_b", "relu_c"]])}


@case
def self_loop(ctx):
    """A node reading its own output."""
    n = helper.make_node("Add", ["pixels", "loop_out"], ["loop_out"], name="add_self")
    m = make_model([n], [f32("pixels", [2])], [f32("loop_out", [2])])
    return {"model": ctx.save(m), **both(fragments=["cycle"], mentions=["add_self"])}


@case
def cycle_off_the_output_path(ctx):
    """A cycle between two nodes no output depends on, next to a valid Relu."""
    nodes = [helper.make_node("Relu", ["pixels"], ["y"], name="relu_ok"),
             helper.make_node("Neg", ["q_out"], ["p_out"], name="neg_p"),
             helper.make_node("Neg", ["p_out"], ["q_out"], name="neg_q")]
    m = make_model(nodes, [f32("pixels", [2])], [f32("y", [2])])
    return {"model": ctx.save(m), **both(fragments=["cycle"], mentions=[["neg_p", "neg_q"]])}


@case
def empty_node_names(ctx):
    """Three nodes with empty names: ferry names them itself and runs."""
    nodes = [helper.make_node("Neg", ["pixels"], ["a"]), helper.make_node("Neg", ["a"], ["b"]),
             helper.make_node("Identity", ["b"], ["y"])]
    m = make_model(nodes, [f32("pixels", [4])], [f32("y", [4])])
    return {"model": ctx.save(m), "inputs": {"pixels": ctx.npy(np.arange(4, dtype=np.float32), "x.npy")},
            "output_equals_input": True, "run": expect(exit=[0]), "inspect": expect(exit=[0])}


@case
def duplicate_node_names(ctx):
    """Two nodes named 'same': names are labels, the model runs."""
    nodes = [helper.make_node("Neg", ["pixels"], ["a"], name="same"), helper.make_node("Neg", ["a"], ["y"], name="same")]
    m = make_model(nodes, [f32("pixels", [4])], [f32("y", [4])])
    return {"model": ctx.save(m), "inputs": {"pixels": ctx.npy(np.arange(4, dtype=np.float32), "x.npy")},
            "output_equals_input": True, "run": expect(exit=[0]), "inspect": expect(exit=[0])}


@case
def graph_output_not_produced(ctx):
    """A graph output nothing produces."""
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [f32("pixels", [2])],
                   [f32("y", [2]), f32("ghost_output", [2])])
    return {"model": ctx.save(m), **both(fragments=UNDEFINED + ["not produced"], mentions=["ghost_output"])}


@case
def graph_output_empty_name(ctx):
    """A graph output with an empty name."""
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [f32("pixels", [2])],
                   [f32("y", [2]), f32("", [2])])
    return {"model": ctx.save(m), **both(fragments=["name", "empty"] + UNDEFINED, mentions=["output"])}


@case
def graph_input_empty_name(ctx):
    """A graph input with an empty name."""
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [f32("pixels", [2]), f32("", [2])],
                   [f32("y", [2])])
    return {"model": ctx.save(m), **both(fragments=["no name", "empty", "name"], mentions=["input"])}


@case
def graph_input_listed_twice(ctx):
    """The graph input 'pixels' listed twice."""
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [f32("pixels", [2]), f32("pixels", [2])],
                   [f32("y", [2])])
    return {"model": ctx.save(m), **both(fragments=DUPLICATE, mentions=["pixels"])}


@case
def initializer_listed_twice(ctx):
    """The initializer 'w_twice' listed twice."""
    w = numpy_helper.from_array(np.ones(2, np.float32), "w_twice")
    m = make_model([helper.make_node("Add", ["pixels", "w_twice"], ["y"], name="add")], [f32("pixels", [2])],
                   [f32("y", [2])], [w, w])
    return {"model": ctx.save(m), **both(fragments=DUPLICATE, mentions=["w_twice"])}


@case
def initializer_without_name(ctx):
    """An initializer with an empty name."""
    w = numpy_helper.from_array(np.ones(2, np.float32), "")
    m = make_model([helper.make_node("Relu", ["pixels"], ["y"], name="relu")], [f32("pixels", [2])], [f32("y", [2])],
                   [w])
    return {"model": ctx.save(m), **both(fragments=["no name", "empty", "name"], mentions=["initializer"])}


@case
def node_output_shadows_initializer(ctx):
    """A node writes the value 'w_shadow', which is also an initializer."""
    w = numpy_helper.from_array(np.ones(2, np.float32), "w_shadow")
    m = make_model([helper.make_node("Relu", ["pixels"], ["w_shadow"], name="relu_shadow")], [f32("pixels", [2])],
                   [f32("w_shadow", [2])], [w])
    return {"model": ctx.save(m), **both(fragments=DUPLICATE, mentions=["w_shadow"])}


@case
def node_without_op_type(ctx):
    """A node whose op_type is empty."""
    m = make_model([helper.make_node("", ["pixels"], ["y"], name="nameless_op")], [f32("pixels", [2])],
                   [f32("y", [2])])
    return {"model": ctx.save(m), "run": expect(fragments=["op", "type", "empty", "importer"] + UNSUPPORTED,
                                                mentions=["nameless_op"]),
            "inspect": expect(exit=[0, 2], mentions=["nameless_op"])}


@case
def unknown_op_default_domain(ctx):
    """An op 'FrobnicateV2' in the default domain."""
    m = make_model([helper.make_node("FrobnicateV2", ["pixels"], ["y"], name="frob")], [f32("pixels", [2])],
                   [f32("y", [2])])
    return {"model": ctx.save(m), "run": expect(fragments=UNSUPPORTED, mentions=["frob", "FrobnicateV2"]),
            "inspect": expect(exit=[0, 2], mentions=["FrobnicateV2"])}


@case
def custom_domain_op(ctx):
    """An op of domain com.example."""
    n = helper.make_node("Magic", ["pixels"], ["y"], name="magic", domain="com.example")
    graph = helper.make_graph([n], "bad", [f32("pixels", [2])], [f32("y", [2])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
                          ir_version=8)
    return {"model": ctx.save(m), "run": expect(fragments=UNSUPPORTED + ["domain"], mentions=["magic", "com.example"]),
            "inspect": expect(exit=[0, 2], mentions=["Magic"])}


@case
def too_many_inputs(ctx):
    """Relu with 3 inputs."""
    m = _node_model("Relu", ["pixels", "pixels", "pixels"], name="relu3")
    return _simple(ctx, m, ["input"], ["relu3"])


@case
def too_few_inputs(ctx):
    """Conv with only its data input."""
    m = _node_model("Conv", ["pixels"], name="conv_noweight")
    return _simple(ctx, m, ["input"], ["conv_noweight"])


@case
def too_many_outputs(ctx):
    """Relu with 2 outputs."""
    m = _node_model("Relu", ["pixels"], outputs=["y", "y2"], name="relu_2out")
    return _simple(ctx, m, ["output"], ["relu_2out"])


@case
def no_outputs(ctx):
    """A Relu with no outputs at all (and a graph output from another node)."""
    nodes = [helper.make_node("Relu", ["pixels"], [], name="relu_noout"),
             helper.make_node("Neg", ["pixels"], ["y"], name="neg")]
    m = make_model(nodes, [f32("pixels", [2])], [f32("y", [2])])
    # A node nothing can read is dead: dropping it is as fair as rejecting it.
    e = expect(exit=[0, 2], fragments=["output"])
    return {"model": ctx.save(m), "run": e, "inspect": e}


@case
def required_input_empty(ctx):
    """Add whose second input is '' (omitted, but required)."""
    m = _node_model("Add", ["pixels", ""], name="add_missing")
    return _simple(ctx, m, ["input", "required", "missing", "omitted"], ["add_missing"])


@case
def attribute_wrong_type(ctx):
    """Conv strides given as floats."""
    m = conv_model("conv_fstrides")
    a = helper.make_attribute("strides", [1.0, 1.0])
    m.graph.node[0].attribute.append(a)
    return _simple(ctx, m, ["strides", "attribute", "type", "ints", "float"], ["conv_fstrides"])


@case
def attribute_unknown(ctx):
    """Relu with an attribute 'bogus'."""
    m = _node_model("Relu", ["pixels"], name="relu_bogus", bogus=3)
    return _simple(ctx, m, ["bogus", "attribute"], ["relu_bogus"])


@case
def attribute_duplicated(ctx):
    """LeakyRelu with alpha given twice."""
    m = _node_model("LeakyRelu", ["pixels"], name="lrelu_twice", alpha=0.1)
    m.graph.node[0].attribute.append(helper.make_attribute("alpha", 0.2))
    return _simple(ctx, m, DUPLICATE + ["alpha"], ["lrelu_twice"])


@case
def attribute_type_undefined(ctx):
    """An attribute with no type and no value."""
    m = _node_model("LeakyRelu", ["pixels"], name="lrelu_untyped")
    m.graph.node[0].attribute.append(onnx.AttributeProto(name="alpha"))
    return _simple(ctx, m, ["alpha", "attribute", "type", "value"], ["lrelu_untyped"])


@case
def attribute_graph_on_relu(ctx):
    """Relu carrying a GRAPH attribute."""
    g = helper.make_graph([], "sub", [], [])
    m = _node_model("Relu", ["pixels"], name="relu_graph_attr")
    m.graph.node[0].attribute.append(helper.make_attribute("body", g))
    return _simple(ctx, m, ["body", "attribute", "graph"], ["relu_graph_attr"])


@case
def if_branch_output_count(ctx):
    """An If whose then_branch has two outputs for the node's one: a clear error naming the branch."""
    then_g = helper.make_graph([helper.make_node("Neg", ["pixels"], ["t"], name="then_neg"),
                                helper.make_node("Abs", ["pixels"], ["t2"], name="then_abs")], "then", [],
                               [f32("t", [2]), f32("t2", [2])])
    else_g = helper.make_graph([helper.make_node("Abs", ["pixels"], ["e"], name="else_abs")], "else", [], [f32("e", [2])])
    n = helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)
    m = make_model([n], [_vi("cond", TensorProto.BOOL, []), f32("pixels", [2])], [f32("y", [2])])
    return {"model": ctx.save(m), **both(fragments=["then_branch has 2 outputs"], mentions=["branch"])}


@case
def loop_without_bound(ctx):
    """A Loop with neither a trip count nor a condition would never end: run refuses it."""
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"], name="body_id"),
                              helper.make_node("Neg", ["v_in"], ["v_out"], name="body_neg")], "body",
                             [_vi("i", TensorProto.INT64, []), _vi("c_in", TensorProto.BOOL, []), f32("v_in", [2])],
                             [_vi("c_out", TensorProto.BOOL, []), f32("v_out", [2])])
    n = helper.make_node("Loop", ["", "", "pixels"], ["y"], name="looper", body=body)
    m = make_model([n], [f32("pixels", [2])], [f32("y", [2])])
    return {"model": ctx.save(m), "run": expect(fragments=["never end"], mentions=["looper"]),
            "inspect": expect(exit=[0])}


@case
def local_function_call(ctx):
    """A node calling a model-local function."""
    fn = helper.make_function("local.fns", "Twice", ["x"], ["y"], [helper.make_node("Add", ["x", "x"], ["y"])],
                              [helper.make_opsetid("", 17)])
    n = helper.make_node("Twice", ["pixels"], ["y"], name="call_twice", domain="local.fns")
    graph = helper.make_graph([n], "bad", [f32("pixels", [2])], [f32("y", [2])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local.fns", 1)],
                          ir_version=8, functions=[fn])
    return {"model": ctx.save(m), "run": expect(fragments=UNSUPPORTED + ["function"], mentions=["call_twice"]),
            "inspect": expect(exit=[0, 2], mentions=["Twice"])}


@case
def no_default_opset(ctx):
    """A default-domain node in a model importing no default-domain opset."""
    m = conv_model("conv_noopset")
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    return {"model": ctx.save(m), **both(fragments=["opset"], mentions=["conv_noopset"])}


@case
def future_opset(ctx):
    """Default-domain opset 999."""
    m = conv_model("conv_future")
    m.opset_import[0].version = 999
    return {"model": ctx.save(m), **both(fragments=["opset"], mentions=["999"])}


@case
def negative_ir_version(ctx):
    """ir_version -3."""
    m = valid_model()
    m.ir_version = -3
    return {"model": ctx.save(m), **both(fragments=["ir_version", "ir version", "not a valid"])}


@case
def op_before_its_opset(ctx):
    """GroupNormalization (opset 18+) in an opset-13 model."""
    inits = [numpy_helper.from_array(np.ones(3, np.float32), n) for n in ("gn_scale", "gn_bias")]
    m = _node_model("GroupNormalization", ["pixels", "gn_scale", "gn_bias"], name="gn_early", opset=13, inits=inits,
                    num_groups=3)
    return _simple(ctx, m, ["opset", "exist"], ["gn_early"])


@case
def sparse_initializer(ctx):
    """A sparse initializer."""
    vals = numpy_helper.from_array(np.array([1.0], np.float32), "sparse_w")
    idx = numpy_helper.from_array(np.array([0], np.int64), "")
    sp = helper.make_sparse_tensor(vals, idx, [4])
    m = make_model([helper.make_node("Add", ["pixels", "sparse_w"], ["y"], name="add")], [f32("pixels", [4])],
                   [f32("y", [4])])
    m.graph.sparse_initializer.append(sp)
    return {"model": ctx.save(m), **both(fragments=["sparse"], mentions=["sparse_w"])}
