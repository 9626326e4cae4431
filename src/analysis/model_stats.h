// analysis/model_stats.h — what a model is made of: inputs and outputs, op
// histogram, parameters, and a FLOP estimate per node.
//
// FLOPs count a multiply-add as 2 and are estimated from the shapes on the
// graph (run infer_shapes first). Symbolic and unknown dims are counted as 1
// ("batch = 1"); the symbols so treated are listed in `assumed_one`, and the
// summary states the assumption. Per op family:
//   Conv           2 * N*Cout*prod(out spatial) * Cin/group * prod(kernel) (+ N*Cout*prod(out spatial) with bias)
//   ConvTranspose  2 * N*Cin*prod(in spatial) * Cout/group * prod(kernel)  (+ output numel with bias)
//   Gemm           2*M*N*K (+ M*N with C)        MatMul  2 * numel(out) * K
//   Einsum         operands * prod(all index sizes) (naive evaluation; no ellipsis)
//   pooling        numel(out) * prod(kernel); global pooling numel(in)
//   elementwise    one per output element and operand pair (variadic: n-1)
//   norms          BatchNormalization 2/element (a per-channel scale and shift);
//                  Layer/Instance/GroupNormalization 7/element (mean, subtract,
//                  square-accumulate, normalize, scale, shift); LRN (size+3)/element
//   softmax        5/element; reductions one per input element
//   data movement  0 (Reshape, Transpose, Gather, Concat, Slice, ...)
// A node whose shapes are not known well enough gets no estimate and is
// listed in `nodes_without_estimate`; the total is then a lower bound.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace ferry {

/// A graph input or output as the user sees it.
struct TensorInfo {
  std::string name;
  DType dtype = DType::undefined;
  Shape shape;
};

/// The FLOP estimate of one node.
struct NodeFlops {
  const Node* node = nullptr;
  std::optional<int64_t> flops;  ///< nullopt: shapes unknown, no estimate
};

struct ModelStats {
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  std::map<std::string, int64_t> op_histogram;  ///< IR op name -> node count
  int64_t num_nodes = 0;

  int64_t num_constants = 0;
  int64_t parameter_count = 0;  ///< elements over all constants
  int64_t parameter_bytes = 0;

  int64_t total_flops = 0;                       ///< sum over nodes with an estimate
  std::map<std::string, int64_t> flops_by_op;    ///< IR op name -> FLOPs
  std::vector<NodeFlops> node_flops;             ///< every node, in topological order when available
  std::vector<std::string> nodes_without_estimate;  ///< describe() of nodes with unknown shapes or no FLOP model
  std::set<std::string> assumed_one;             ///< symbolic dims counted as 1 ("?" for unknown dims)

  /// "multiply-add = 2 FLOPs; symbolic dims N, seq counted as 1 (batch = 1)".
  std::string flops_assumption() const;
};

/// FLOPs of one node from the shapes of its inputs and outputs; nullopt when
/// they are unknown. Symbolic dims met are added to `assumed_one` (may be null).
std::optional<int64_t> estimate_node_flops(const Node& n, std::set<std::string>* assumed_one);

/// Statistics of a graph whose shapes were inferred (unknown shapes only lose FLOP estimates).
ModelStats compute_model_stats(const Graph& g);

}  // namespace ferry
