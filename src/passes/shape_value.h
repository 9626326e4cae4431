// passes/shape_value.h — what is known about small integer tensors that hold shapes.
//
// Shape arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) builds
// shape vectors at run time whose entries are often known before: a static dim
// is a number, a symbolic dim is the same symbol everywhere. shape_value_of()
// follows such a chain back to Shape nodes and constants and returns one Dim
// per element: static, symbolic or unknown. Constant folding turns fully
// static results into constants and Reshape targets with symbolic entries into
// 0 (copy the input dim) / -1 (infer) entries.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace ferry {

/// One element: a known integer (any value, e.g. Reshape's -1), or a dim that
/// is symbolic or unknown.
struct ShapeElem {
  std::optional<int64_t> value;
  Dim dim;  ///< meaningful when !value
};

/// The elements of a 0-D or 1-D integer tensor, as far as they are known.
struct ShapeValue {
  std::vector<ShapeElem> elems;
  bool scalar = false;  ///< rank 0 (then elems has one entry)
  bool all_known() const;
  /// The elements as integers; only valid when all_known().
  std::vector<int64_t> values() const;
};

/// Follows `v` through Shape, Gather, Unsqueeze, Squeeze, Concat, Slice, Cast
/// and Identity back to constants and shapes; nullopt when `v` is not such a value.
std::optional<ShapeValue> shape_value_of(const Value* v);

/// Node `n`'s output shape made more precise than `inferred` (what the op's own
/// inference gave from constant inputs only) from the shape values of its inputs:
/// * Reshape: the target's shape value (symbols included), so [S, B*H, D] -> [B, H, S, D]
///   style targets built from Shape -> Gather -> Concat keep their symbolic dims;
/// * Range(0, n, 1): n elements when n is a symbolic dim.
/// Graph-level inference (refresh_shapes, the pattern driver) uses it.
Shape refine_shape(const Node& n, const Shape& inferred);

}  // namespace ferry
