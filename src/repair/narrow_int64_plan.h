// repair/narrow_int64_plan.h — which int64 values `ferry convert --narrow-int64` makes int32
// (repair/narrow_int64.h rewrites the graph by this plan).
//
// Candidates: the int64 values repair/int_ranges.h proves within int32, less graph inputs and
// every value an If / Loop / Scan node reads (subgraphs are left alone). A candidate is
//   constant  an int32 copy is read where int32 is read (by a native, or in an index group —
//             Gather indices, Slice starts..steps — of candidates only: constants alone too,
//             which costs no Cast); the int64 original stays for the other readers
//   native    its producer computes int32: Cast (`to`), ConstantOfShape (its value), or an op
//             typed like its data inputs (Add, Concat, Gather's data, Slice's data, Range, ...)
//             whose data inputs are all candidates
//   root      any other producer (Shape, Size, ArgMax, NonZero, TopK, a data input not narrowed):
//             it stays int64, and int32 readers read it through one new Cast(to int32)
// A native value read where int32 is not accepted (Reshape / Expand shape, Unsqueeze axes, Tile
// repeats, GatherND indices, an op not listed, a graph output) is read through one new
// Cast(to int64), shared by all such readers.
//
//   %d = Gather(%s, 1)                  s = Shape(x): int64, d a root
//   %d32 = Cast(%d) {to="i32"}          (new)
//   %h = Div(%d32, %heads32)            native: computes int32
//   %t = Concat(%m1_32, %h, ...)        native
//   %t64 = Cast(%t) {to="i64"}          (new) Reshape's shape is int64 only
//   %y = Reshape(%x, %t64)
//
// Regions — candidates joined through the data inputs of the nodes that compute them — are
// narrowed whole or not at all. A region is kept when the Casts it needs (its roots read as int32,
// its natives read as int64) are no more than the nodes it turns int32: the rewrite never adds
// more Casts than int64 nodes it removes (Gather(Shape) -> Reshape alone stays int64). Dropping
// a region can leave a neighbour needing more Casts (an index group of Slice or Equal is int32
// only when all of it is), so the choice repeats until no region is dropped; every round drops
// candidates, so it ends.
#pragma once

#include <unordered_set>

#include "ir/graph.h"

namespace ferry::repair {

/// How input `i` of `n` may be int32: `data` typed like output 0 (the op computes in that type),
/// `index` one of the node's index inputs (Gather / GatherElements indices, Slice starts..steps,
/// the operands of a comparison), which may be int32 together whatever the output, `any` of any
/// dtype (Cast, Shape, Size, Where's condition), `int64` int64 only (all other inputs).
enum class Int32Read { data, index, any, int64 };
Int32Read int32_read(const Node& n, size_t i);

/// The values to narrow and how each input reads them after the rewrite.
struct Int64Plan {
  std::unordered_set<const Value*> values;  ///< constants, natives and roots
  size_t proven = 0;                        ///< int64 values int_ranges proves within int32

  bool has(const Value* v) const { return v && values.count(v) > 0; }
  /// In the plan, not a constant, and its producer computes int32.
  bool native(const Value* v) const;
  /// Whether input `i` of `n` reads int32 after the rewrite (false when its value is not in the plan).
  bool reads_int32(const Node& n, size_t i) const;
};

/// The plan for `g` (top level only).
Int64Plan plan_int64_narrowing(const Graph& g);

}  // namespace ferry::repair
