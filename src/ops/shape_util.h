// ops/shape_util.h — helpers shared by shape inference and reference kernels.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace ferry {

/// axis in [-rank, rank) -> [0, rank); error naming the axis otherwise.
Result<int64_t> normalize_axis(int64_t axis, int64_t rank);
/// Normalizes and checks a list of axes (no duplicates).
Result<std::vector<int64_t>> normalize_axes(const std::vector<int64_t>& axes, int64_t rank);

/// ONNX multidirectional broadcasting of two shapes (symbolic aware). An
/// unknown dim broadcast against a static 1 gives the unknown dim; against a
/// static n > 1 gives n.
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);
Result<std::vector<int64_t>> broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

/// Row-major strides of `dims` (in elements).
std::vector<int64_t> strides_of(const std::vector<int64_t>& dims);
/// Strides for reading a tensor of `in_dims` broadcast to `out_dims`
/// (0 on broadcast axes; in_dims right-aligned to out_dims).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims);

/// Offset, in elements, of flat output index `i` of `out_dims` into an input with `in_strides`.
int64_t broadcast_offset(int64_t i, const std::vector<int64_t>& out_dims, const std::vector<int64_t>& in_strides);

/// Dim arithmetic that keeps symbols when it can: static*static is static, else unknown.
Dim dim_mul(const Dim& a, const Dim& b);
Dim dim_add(const Dim& a, const Dim& b);

/// The value of a shape-like constant input as int64s, or nullopt when not known.
std::optional<std::vector<int64_t>> known_ints(const Tensor* t);

/// A dtype-name attribute (BitCast's to, EyeLike's dtype) as a DType; `fallback` when absent.
Result<DType> dtype_attr(const std::optional<std::string>& name, DType fallback = DType::undefined);

}  // namespace ferry
