// ir/graph_clone.h — a structural copy of a Graph, for code that must rewrite
// a graph while the original stays usable (compiling a model twice, with and
// without the optimizer). Constants share their (immutable) buffers; subgraph
// attributes are copied too, so rewriting the copy's subgraphs leaves the original's.
#pragma once

#include <memory>

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry {

/// A new graph with the same info, inputs, captures, constants, nodes (in
/// topological order, same names, attributes, provenance, value names and
/// types) and outputs. Fails only on a cycle.
Result<std::unique_ptr<Graph>> clone_graph(const Graph& g);

/// clone_graph of a subgraph whose captures become ordinary inputs after its own
/// (what a backend compiles a branch or a loop body as: a graph of its own).
Result<std::unique_ptr<Graph>> clone_subgraph_as_graph(const Graph& sub);

}  // namespace ferry
