// repair/narrow_int64.h — `ferry convert --narrow-int64`: int64 index math whose range the graph
// proves within int32 computed in int32, the interface kept, the outputs checked unchanged.
//
// repair/narrow_int64_plan.h chooses the values: int64 values repair/int_ranges.h proves within
// int32, in regions that need no more Casts than nodes they turn int32. Their producers then
// compute int32 (Cast's `to` and ConstantOfShape's value say int32; Add, Concat, Gather, Slice,
// Range, ... follow their inputs' type), a constant read as int32 gets an int32 copy, a value
// whose producer only makes int64 (Shape, Size, ArgMax, NonZero, TopK, ...) is read through a
// new Cast(to int32), and an input that takes int64 only (Reshape / Expand shape, Unsqueeze axes,
// a graph output, ...) reads through a new Cast(to int64). Casts left int32 -> int32 are removed.
// Graph inputs and outputs keep their dtypes. If / Loop / Scan bodies are left alone, and so is
// every value such a node reads (int_ranges does not enter subgraphs). Shapes are inferred again;
// a graph that no longer type-checks is an internal error naming the node.
//
// check_int64_narrowing runs the original and the narrowed graph on the same seeded random
// inputs in the reference interpreter: every output must be identical (integers equal, floats
// equal, NaN for NaN), because index math narrowed within its range changes no value.
#pragma once

#include "frontends/frontend.h"
#include "ir/graph.h"
#include "runtime/random_inputs.h"

namespace ferry::repair {

struct NarrowInt64Counts {
  int64_t proven = 0;         ///< int64 values int_ranges proves within int32
  int64_t values = 0;         ///< int64 values computed as int32 now
  int64_t constants = 0;      ///< int64 constants given an int32 copy
  int64_t casts_added = 0;    ///< Cast(to int32) after a root, Cast(to int64) before an int64-only reader
  int64_t casts_removed = 0;  ///< Casts the narrowing left int32 -> int32
  bool changed() const { return values + constants + casts_added > 0; }
};

/// Narrows `g` in place (see above); a graph with nothing worth narrowing is returned unchanged.
Result<NarrowInt64Counts> narrow_int64(Graph& g);

/// The repair record of the narrowing ("rule": "narrow_int64"): `check` "passed" when every output
/// of `narrowed` equals `original`'s on seeded random inputs, else "failed" naming the first difference.
Result<RepairRecord> check_int64_narrowing(const Graph& original, const Graph& narrowed,
                                           const NarrowInt64Counts& counts, const RandomInputOptions& inputs);

}  // namespace ferry::repair
