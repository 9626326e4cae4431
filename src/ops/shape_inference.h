// ops/shape_inference.h — static shape and dtype inference over a whole graph.
#pragma once

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry {

/// Sets dtype and shape of every node output, in topological order, from the
/// graph inputs and constants. Unknown stays unknown; contradictions fail
/// with "node 'x' (Op): ..." context; `failed` (if given) is then set to that node.
/// `refine`, when given, may make an inferred output shape more precise from what the
/// graph knows beyond constants (passes: symbolic Reshape targets, passes/shape_value.h).
using RefineShapeFn = Shape (*)(const Node& n, const Shape& inferred);
Status infer_shapes(Graph& g, const Node** failed = nullptr, RefineShapeFn refine = nullptr);

}  // namespace ferry
