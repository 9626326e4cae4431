// ops/movement_util.h — helpers shared by the data-movement reference kernels
// (reshape, transpose, slice, expand_tile, pad, depth_space, ...).
//
// These ops are type-generic: they move elements of dtype_size() bytes and
// never look at their values, so one byte-level loop serves every dtype.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/op_context.h"

namespace ferry {

/// Output `i` of a kernel: the interpreter's preallocated tensor when its dtype
/// and dims match, else a freshly allocated one (fails cleanly on absurd sizes).
Result<Tensor*> movement_output(KernelContext& ctx, size_t i, DType dtype, const std::vector<int64_t>& dims);

/// dst[o] = src[offset + sum_d idx_d(o) * strides[d]] for every flat output
/// index o of `dims` (row-major); strides are in elements and may be 0 or negative.
void strided_copy(const uint8_t* src, uint8_t* dst, size_t elem_size, const std::vector<int64_t>& dims,
                  const std::vector<int64_t>& strides, int64_t offset);

/// "must be an integer tensor" check for index-like inputs (shape, axes, pads, indices).
Status check_integer_input(const InferContext& ctx, size_t i, const char* what);

/// Element count of a 1-D (or scalar) input when its shape is known, else nullopt.
std::optional<int64_t> static_length(const InferContext& ctx, size_t i);

/// "[1,2,3]"
std::string ints_to_string(const std::vector<int64_t>& v);

/// a*b for sizes, saturating just above kMaxDim so products of dims never overflow.
inline int64_t mul_sat(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > (kMaxDim + 1) / b ? kMaxDim + 1 : a * b;
}

}  // namespace ferry
