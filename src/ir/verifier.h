// ir/verifier.h — structural checks of a graph.
#pragma once

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry {

/// Checks: arity and attributes against the op table (kinds, required ones,
/// no unknown names), every input produced or a graph input/constant, unique
/// value names, no cycles, outputs produced, uses consistent with inputs.
/// The error names the node and the problem.
Status verify(const Graph& g);

}  // namespace ferry
