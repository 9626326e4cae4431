// passes/normalization_match.h — what fuse_layernorm and fuse_rmsnorm both match:
// the square, the trailing reduced axes and the scale (gamma) of a decomposed norm.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "passes/rewriter.h"

namespace ferry {

/// True when `sq` is v^2 (Pow(v, 2) or Mul(v, v)) with one use.
bool is_square_of(const Graph& g, const Value* sq, const Value* v);

/// The ReduceMean's axes when they are the trailing axes [a, rank) of a rank-`rank`
/// input and it keeps dims; nullopt with the reason in *why otherwise.
std::optional<std::vector<int64_t>> trailing_mean_axes(const Node& mean, int64_t rank, std::string* why);

/// The scale of the normalized value *y: the other operand of a Mul that is *y's
/// only consumer and keeps x's shape (then *y becomes the Mul's output and the Mul
/// joins `nodes`), else null.
Value* take_scale(const Graph& g, Value** y, const Value* x, std::vector<const Node*>& nodes);

/// Ones of x's dtype over x's `axes` (the scale of a norm without one), named
/// "<name>/ones"; null with the reason in *why when those dims are not static.
Value* ones_scale(Rewriter& rw, const Value* x, const std::vector<int64_t>& axes, const std::string& name,
                  std::string* why);

}  // namespace ferry
