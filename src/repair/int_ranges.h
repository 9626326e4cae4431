// repair/int_ranges.h — the value range of every integer tensor of a graph, proven from
// what the graph fixes: constants, static dims (and the [min, max] a source gives a symbolic
// dim, ModelInfo::dim_ranges), carried through the shape and index arithmetic exporters write
// (Shape, Gather, Concat, Slice, Add, Mul, Div, Range, Cast, Where, ...).
//
//   %s = Shape(%x)                    x: f32[N, 128]       s in [0, 2^40] (N unbounded)
//   %d = Gather(%s, 1)                                     d in [128, 128]
//   %r = Range(0, %d, 1)                                   r in [0, 128]: fits int32
//
// A value the analysis cannot bound (a graph input, a dim without a bound, arithmetic that
// may overflow, an op it does not model) is unbounded. What ranges are for: int64 index math
// that provably fits int32 can run in int32 (`ferry convert --narrow-int64`, repair/narrow_int64.h;
// docs/repair.md), and `ferry inspect` reports which int64 tensors are so proven.
#pragma once

#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace ferry::repair {

/// A closed interval of integers holding every element of a tensor.
struct IntRange {
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
  bool bounded() const { return lo != std::numeric_limits<int64_t>::min() && hi != std::numeric_limits<int64_t>::max(); }
  bool fits_int32() const { return lo >= std::numeric_limits<int32_t>::min() && hi <= std::numeric_limits<int32_t>::max(); }
};

/// The range of every integer (i8..u64) value of `g` (top level; subgraphs are not entered),
/// in topological order; a value the analysis cannot bound maps to the unbounded IntRange.
std::unordered_map<const Value*, IntRange> int_ranges(const Graph& g);

/// The int64 values of `g` whose every element is proven within int32, in graph value order,
/// and how many int64 values `g` has (constants included).
struct NarrowInt64 {
  std::vector<const Value*> proven;
  size_t int64_values = 0;
};
NarrowInt64 int64_proven_int32(const Graph& g);

}  // namespace ferry::repair
