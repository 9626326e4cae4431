// backends/cpu/cpu_int8_requant.h — when an int8 step may write its output already
// requantized (u8 / s8): every reader of the node's output 0 is a QuantizeLinear with the
// same per-tensor constant scale and zero point (a chain of int8 convolutions, each
// reading DequantizeLinear(QuantizeLinear(y))), and nothing else reads it. The scheduler
// (cpu_schedule.cc, try_int8) then has the int8 step write those QuantizeLinear outputs
// (onednn/onednn_int8.h, Int8Requant), and the QuantizeLinear nodes take no step.
#pragma once

#include <optional>

#include "backends/cpu/onednn/onednn_int8.h"
#include "ir/graph.h"

namespace ferry {

/// The quantization of a per-tensor QuantizeLinear node `q` (constant f32 scale > 0 of one
/// element, constant u8 / i8 zero point of one element or none), or nullopt.
std::optional<onednn::Int8Requant> per_tensor_quantize(const Node& q);

/// The one requantization every reader of `n`'s output 0 applies, or nullopt (a reader that
/// is not such a QuantizeLinear, two different ones, a graph output, another output used).
std::optional<onednn::Int8Requant> int8_requant_readers(const Graph& g, const Node& n);

}  // namespace ferry
