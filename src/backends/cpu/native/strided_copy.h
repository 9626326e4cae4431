// backends/cpu/native/strided_copy.h — a layout change between two dense,
// unblocked layouts of the same tensor (e.g. NCHW -> NHWC) as one parallel
// strided copy; a transpose in cache tiles.
//
// oneDNN's reorder for a 3-channel NCHW network input into the NHWC its
// convolutions prefer took 0.25-0.6 ms for 1x3x224x224 here (about 10% of
// MobileNetV3-Small at batch 1); this copy does the same in a fraction.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/step.h"

namespace ferry {

/// dst[sum_i idx_i * dst_strides[i]] = src[src_offset + sum_i idx_i * src_strides[i]] over every index of
/// `dims` (strides in elements of `elem_size` bytes: 1, 2, 4 or 8; negative ones too: a Slice
/// with negative steps), or null when unsupported.
std::unique_ptr<Step> make_strided_copy_step(const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                                             const std::vector<int64_t>& dst_strides, size_t elem_size,
                                             std::string name, int64_t src_offset = 0);

/// dst (contiguous, `dims`) = src read with `src_strides`, when that is a transpose (a dim of
/// stride 1 in src that is not dst's last, both at least 8 long) copied in cache tiles;
/// false (nothing written) otherwise.
bool transpose_tiled_f32(const float* src, float* dst, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& src_strides);

}  // namespace ferry
