// runtime/interpreter.h — the reference interpreter: runs any supported graph
// with reference kernels, shapes resolved at run time. Obviously correct
// rather than fast; deterministic.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry {

struct InterpreterOptions {
  /// Called after each node with its outputs (for per-layer validation and dumps).
  std::function<void(const Node&, const std::vector<Tensor>&)> on_node_done;
  /// Keep every intermediate value (for validation); otherwise freed after last use.
  bool keep_intermediates = false;
};

/// Runs `g` on `inputs` (graph input name -> tensor). Every graph input must be
/// given, with its dtype, and dims matching its static dims. Returns the graph
/// outputs in order.
Result<std::vector<Tensor>> interpret(const Graph& g, const std::map<std::string, Tensor>& inputs,
                                      const InterpreterOptions& options = {});

/// Runs subgraph `g` (If's branch, a Loop or Scan body) on `bound`: its inputs, then its
/// captures (ir/graph.h), all non-null. Returns its outputs in order.
Result<std::vector<Tensor>> interpret_subgraph(const Graph& g, const std::vector<const Tensor*>& bound);

/// Runs one node on its reference kernel: output shapes from shape inference on the
/// input values (a data-dependent one, e.g. NonZero's, is allocated by the kernel).
Status run_node(const Node& n, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs);

/// Checks a tensor against a graph input's declared dtype and shape.
Status check_input(const Value& input, const Tensor& t);

}  // namespace ferry
