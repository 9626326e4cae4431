// ir/subgraph.h — the subgraph attributes of a node (If, Loop, Scan) and how the
// node's inputs bind their captures (ir/graph.h, class Graph).
//
//   %y = If(%c, %a, %b) {else_branch=graph ..., then_branch=graph ...}
//
// with else_branch capturing %a and then_branch capturing %b: input 0 is formal
// (the condition), input 1 binds else_branch.captures()[0], input 2 then_branch's.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace ferry {

/// One subgraph attribute of a node and the node inputs that bind its captures.
struct SubgraphUse {
  std::string attr;       ///< "then_branch", "body", ...
  const Graph* graph;     ///< never null (a null attribute is left out)
  size_t capture_begin;   ///< node input binding graph->captures()[0]
};

/// The subgraph attributes of `n` in attribute-name order; empty for most ops.
std::vector<SubgraphUse> node_subgraphs(const Node& n);
/// True when `n` holds a subgraph attribute.
bool has_subgraphs(const Node& n);
/// How many of n's inputs are formal (the rest bind captures).
size_t num_formal_inputs(const Node& n);
/// The inputs of `n` that bind the captures of subgraph `attr`.
std::vector<Value*> capture_inputs(const Node& n, const std::string& attr);

}  // namespace ferry

namespace ferry {

/// The structural rules of a node with subgraphs (the verifier's, and what shape
/// inference and the kernels may then assume): every subgraph present, inputs
/// enough for its captures, and the op's own counts —
///   If    1 formal input; both branches have no inputs and one output per node output
///   Loop  formal inputs (M, cond, v...) = body inputs (i, cond, v...); body outputs
///         (cond, v..., scans...) = node outputs + 1
///   Scan  formal inputs (states..., scan inputs...) = body inputs, num_scan_inputs of
///         them scanned; body outputs (states..., scans...) = node outputs
/// Ok for ops without subgraphs. The message does not name the node.
Status check_subgraph_arity(const Node& n);

}  // namespace ferry
