// ops/shape_inference.h — static shape and dtype inference over a whole graph.
#pragma once

#include "ferry/status.h"
#include "ir/graph.h"
#include "ops/op_context.h"

namespace ferry {

/// Sets dtype and shape of every node output, in topological order, from the
/// graph inputs and constants. Unknown stays unknown; contradictions fail
/// with "node 'x' (Op): ..." context; `failed` (if given) is then set to that node.
/// `refine`, when given, may make an inferred output shape more precise from what the
/// graph knows beyond constants (passes: symbolic Reshape targets, passes/shape_value.h).
using RefineShapeFn = Shape (*)(const Node& n, const Shape& inferred);
/// A node with subgraphs first types their captures from its inputs and infers them
/// (their own stored types stay current); its shape function then reads their outputs.
Status infer_shapes(Graph& g, const Node** failed = nullptr, RefineShapeFn refine = nullptr);

/// The output facts of subgraph `g` for inputs `bound` (its inputs, then its captures),
/// without touching `g`: what the shape functions of If, Loop and Scan call, on the
/// graph and in the interpreter alike (so concurrent runs may share the graph).
Result<std::vector<OutputInfo>> infer_subgraph_outputs(const Graph& g, const std::vector<InputInfo>& bound);

}  // namespace ferry
