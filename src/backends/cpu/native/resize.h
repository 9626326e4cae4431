// backends/cpu/native/resize.h — the two own Resize kernels behind the kernel table's one
// Resize row (resize_f32__generic dispatches on `mode`).
#pragma once

#include "ops/op_context.h"

namespace ferry {

/// Nearest by whole factors on the last two axes (resize_nearest.cc).
bool resize_nearest_accepts(const Node& n, const std::vector<const Tensor*>& known,
                            const std::vector<std::vector<int64_t>>& dims);
Status resize_nearest_f32(KernelContext& ctx);
/// Bilinear on the last two axes (resize_linear.cc).
bool resize_linear_accepts(const Node& n, const std::vector<const Tensor*>& known,
                           const std::vector<std::vector<int64_t>>& dims);
Status resize_linear_f32(KernelContext& ctx);

}  // namespace ferry
