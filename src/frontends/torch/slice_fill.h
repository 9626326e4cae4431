// frontends/torch/slice_fill.h — fill_ on a slice view (x[a:b, c:d] = v), functionalised.
//
// torch.export keeps `slice -> slice -> fill_` chains that write into a fresh tensor
// (Swin's shifted-window mask: new_zeros, then nine region fills). The base then
// becomes Where(region, v, base), the region a constant mask computed from the
// slices' static bounds (graph_importer.cc applies it and checks nothing else reads
// a stale view).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frontends/torch/torch_tensor.h"
#include "ir/tensor.h"

namespace ferry::torch_import {

/// One aten.slice.Tensor with static arguments: self[..., start:end:step, ...] on `dim`.
struct StaticSlice {
  std::string self;
  int64_t dim = 0, start = 0, end = INT64_MAX, step = 1;
};

/// The node's StaticSlice when it is an aten.slice.Tensor whose bounds are integers.
std::optional<StaticSlice> static_slice(const Json& node);

/// A boolean tensor of shape `dims`, true where the chain of slices (applied from the base
/// outwards) selects; nullopt when a slice's dim or step is out of range.
std::optional<Tensor> slice_region_mask(const std::vector<int64_t>& dims, const std::vector<StaticSlice>& chain);

}  // namespace ferry::torch_import
