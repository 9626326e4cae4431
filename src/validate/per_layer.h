// validate/per_layer.h — layer-by-layer comparison and the first divergent node.
//
// Every node output of the graph under test is matched to a reference tensor:
//   1. by name: ferry's importer names each value after the source tensor it
//      stands for, so an unrewritten value matches its source tensor directly;
//   2. by provenance, for values a rewrite renamed: a value made by node n
//      stands for source node S (an entry of n's provenance, last first) when
//      it leaves S's group (it is a graph output, or some reader does not have
//      S in its provenance) and the reference lists S's outputs (GoldenSet::
//      nodes): output i of n is S's output i when the counts agree, or S's
//      only output when n has a single escaping value. Shapes must agree.
// A value whose name is a known source tensor the reference could not provide
// (GoldenSet::skipped, or absent) is not matched through provenance: it is the
// same tensor, just missing. Helper values of a decomposition stay unmatched.
//
// The first divergent node is the first node, in topological order of the
// graph under test, with a matched output that fails its tolerance. Nodes
// before it agree with the reference, so it is where the error starts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"
#include "validate/golden_dir.h"
#include "validate/metrics.h"
#include "validate/subject.h"
#include "validate/tolerance.h"

namespace ferry::validate {

/// An IR value and the reference tensor it is compared with.
struct TensorMatch {
  const Node* node = nullptr;  ///< the producer in the graph under test
  const Value* value = nullptr;
  size_t topo_index = 0;  ///< the node's position in topological order
  std::string reference;  ///< the reference tensor's name
  std::string via;        ///< "name" or "provenance"
};

/// Matches the node outputs of `g` to tensors of `ref` (see the file comment), in topological order.
Result<std::vector<TensorMatch>> match_tensors(const Graph& g, const GoldenSet& ref);

/// One compared node output.
struct LayerResult {
  TensorMatch match;
  std::string node_name, op;
  std::vector<std::string> provenance;
  std::string value_name;
  Comparison cmp;
};

struct PerLayerResult {
  std::vector<LayerResult> layers;  ///< topological order
  int64_t first_divergent = -1;     ///< index into layers; -1 when all agree
  int64_t node_outputs = 0;         ///< node outputs in the graph under test
  int64_t unmatched = 0;            ///< node outputs with no reference counterpart
  std::vector<std::string> notes;   ///< e.g. provenance matches skipped for a shape change

  const LayerResult* first_divergence() const {
    return first_divergent < 0 ? nullptr : &layers[size_t(first_divergent)];
  }
};

/// Compares every matched node output (`got`: the subject's captured tensors).
Result<PerLayerResult> compare_layers(const Graph& g, const ValueTensors& got, const GoldenSet& ref,
                                      const ToleranceTable& tolerances);

}  // namespace ferry::validate
