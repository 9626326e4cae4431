// ir/text_format.h — the textual IR: print and parse, round-tripping exactly.
//
//   graph main (%x: f32[N,3,8,8]) -> (%y) {
//     %w = const f32[4,3,3,3] [0.1, ...]
//     %c = Conv(%x, %w) {pads=[1,1,1,1]} : f32[N,4,8,8] @conv1 <- ["conv1"]
//     %y = Relu(%c) : f32[N,4,8,8] @relu1 <- ["relu1"]
//   }
//
// Omitted optional inputs print as `_`. Constant data prints exactly (floats
// with 9/17 significant digits, f16/bf16 as their f32 value).
#pragma once

#include <memory>
#include <string>

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry {

struct PrintOptions {
  /// Constants with more elements than this print as `<N elements>` (not parseable). -1: all.
  int64_t max_constant_elements = -1;
  bool show_provenance = true;
};

std::string print_graph(const Graph& g, const PrintOptions& options = {});
/// Parses text IR; errors name the line and column.
Result<std::unique_ptr<Graph>> parse_graph(const std::string& text);

}  // namespace ferry
