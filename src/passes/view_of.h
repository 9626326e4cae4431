// passes/view_of.h — which elements of an earlier value a chain of views reads.
//
// Reshape, Squeeze, Unsqueeze, Flatten and Transpose move no data in meaning: the
// result is a strided view of the value the chain starts from. view_of() follows
// such producers back to the first value that is not one (the base) and gives per
// output dim its stride in the base's row-major order, as dims (ir/dim_product.h,
// so symbolic sizes and strides compare: "S*E"). Patterns use it to recognize a
// layout however an exporter spelled it: [B, S, H*D] -> [B, H, S, D] is strides
// [S*E, D, E, 1] whether it came as Transpose(Reshape(x, [B, S, H, D])) or, at
// batch 1, as Reshape(Transpose(Reshape(x, [S, H, D])), [1, H, S, D]).
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace ferry {

struct StridedView {
  const Value* base = nullptr;
  std::vector<Dim> dims, strides;  ///< strides of dims of size 1 are meaningless
};

/// The view `v` is of its base, following at most `max_ops` view ops and stopping at
/// `stop` (then the base) if the chain reaches it; nullopt when a shape on the way is not
/// known or a Reshape regroups elements a Transpose had reordered (no strided view then).
std::optional<StridedView> view_of(const Value* v, int max_ops = 8, const Value* stop = nullptr);

/// The values a chain of view ops starting at `v` reads, nearest first (v's producer's
/// input, its producer's input, ...), at most `max_ops`.
std::vector<const Value*> view_sources(const Value* v, int max_ops = 8);

/// The row-major (contiguous) strides of `dims`.
std::vector<Dim> contiguous_strides(const std::vector<Dim>& dims);

/// `a` and `b` have the same dims and, on every dim not of size 1, the same stride.
bool same_view(const StridedView& a, const StridedView& b);

}  // namespace ferry
