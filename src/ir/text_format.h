// ir/text_format.h — the textual IR: print and parse, round-tripping exactly.
//
//   graph main (%x: f32[N,3,8,8], %m: i64[?,128]) -> (%y, %z) {
//     %w = const f32[4,3,3,3] [0.1, ...]
//     %c = Conv(%x, %w, _) {auto_pad="NOTSET", pads=[1,1,1,1]} : f32[N,4,8,8] @conv1 <- ["conv1"]
//     %a, %b = Split(%c) {axis=1, num_outputs=2} : f32[N,2,8,8], f32[N,2,8,8] @split1
//     %y = Relu(%a) : f32[N,2,8,8] @relu1
//     %z = Identity(%b) @id1
//   }
//
// Values are `%name`, node names `@name`; names outside [A-Za-z0-9_.:/-]+ (or
// ending in ':') are quoted: %"weird name". Omitted optional inputs print as `_`.
// A type is dtype + shape: `f32[N,?,8]` (symbol, unknown and static dims),
// `f32[*]` (unknown rank), `?[2]` (unknown dtype), `?` (nothing known); the
// `: types` clause of a node is omitted when nothing is known of any output.
// Attributes print sorted by name and parse typed by the op's schema (so
// alpha=1 is a float where alpha is declared float); unknown ones are errors.
// A tensor attribute reads `value=tensor f32[2] [0, 1]`. A subgraph attribute
// (If, Loop, Scan: ir/subgraph.h) is a graph of its own, indented one level, with
// its outer-scope reads after `captures`; they bind the node's trailing inputs:
//
//   %y = If(%c, %x) {else_branch=graph e () captures (%x: f32[2]) -> (%x) {
//   }, then_branch=graph t () -> (%t) {
//     %t = const f32[2] [0, 1]
//   }} : f32[2] @if
//
// Constant data prints exactly: floats as the shortest text that reads back to
// the same bits (at most 9 / 17 significant digits for f32 / f64), f16 and bf16
// as their exact f32 value (read back through f32_to_f16 / f32_to_bf16), inf,
// -inf, nan, -nan (NaN payloads are not kept), integers in decimal, bool as
// true/false. Hand-written text may also use `splat(v)` for a constant filled
// with one value: `%z = const f32[2,2] splat(0.5)`. `// comments` are allowed.
//
// Nodes print in graph.topo_order() (insertion order if there is a cycle);
// the parser accepts references to values defined further down. The parser
// checks syntax, names and attribute kinds; it does not verify the graph
// (arity, required attributes, cycles): call verify() (ir/verifier.h).
#pragma once

#include <memory>
#include <string>

#include "ferry/status.h"
#include "ir/attr.h"
#include "ir/graph.h"

namespace ferry {

struct PrintOptions {
  /// Constants with more elements than this print as `<N elements>` (not parseable). -1: all.
  int64_t max_constant_elements = -1;
  bool show_provenance = true;
};

std::string print_graph(const Graph& g, const PrintOptions& options = {});
/// Parses text IR; errors read "line L, column C: message".
Result<std::unique_ptr<Graph>> parse_graph(const std::string& text);

/// One attribute value as the printer writes it: 3, 1.5, "same", [1,2], tensor f32[1] [0].
std::string print_attr_value(const AttrValue& v, const PrintOptions& options = {});
/// Reads one attribute value of the given kind (the inverse of print_attr_value).
Result<AttrValue> parse_attr_value(const std::string& text, AttrKind kind);

}  // namespace ferry
