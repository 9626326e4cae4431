// passes/target_precision.h — the precision part of a target description (passes/target.h):
// which lowered precisions a backend offers on this host, and how it executes each.
//
//   none         not offered: nodes stay fp32
//   emulated     storage emulation: outputs and weights rounded, fp32 compute (accuracy as
//                on hardware, no speedup; precision/emulate_precision.h)
//   accelerated  the hardware computes in it, for `accelerated_ops` (faster than fp32)
//
// Each backend publishes one next to its Target (api/backend.h, the backend table):
// reference_precisions() below; the CPU backend's, per ISA, in backends/cpu/cpu_precision.h.
// The precision pass (passes/assign_precision.h) lowers exactly what it offers, and `auto`
// only what it accelerates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/op.h"

namespace ferry {

class Node;

enum class PrecisionExec : uint8_t { none, emulated, accelerated };
const char* precision_exec_name(PrecisionExec e);
/// The user's spelling of a precision: f32 "fp32", bf16 "bf16", f16 "fp16", i8 "int8".
const char* precision_name(DType dtype);

/// One precision a target offers, and why it executes it the way it does.
struct PrecisionSupport {
  DType dtype = DType::f32;  ///< bf16, f16, i8 (int8)
  PrecisionExec exec = PrecisionExec::none;
  std::string why;           ///< why it executes it so: "no bf16 hardware: avx2 only"
  /// Ops it runs accelerated when exec is accelerated; the other floating ops are emulated.
  std::vector<Op> accelerated_ops;
  /// The ops it is offered for (int8: the matrix products); empty: every floating op.
  std::vector<Op> ops;
  /// Non-empty: grouped convolutions that are not depthwise (each group more than one input
  /// channel, RegNet's and ResNeXt's) run on a bf16 step slower than fp32, for this reason (the
  /// CPU backend where oneDNN has an AMX kernel for plain convs but not for them): `auto`
  /// keeps them fp32; an explicit bf16 still runs them on that step (faster than emulation).
  std::string grouped_conv_declined;
};

struct TargetPrecisions {
  std::string target;                     ///< "cpu", "reference"
  std::vector<PrecisionSupport> offered;  ///< besides fp32, which is always native
  /// What `fp32_math="bf16x3"` (CompileOptions) runs here, or why it runs exact ("" where the
  /// target has no such kernel at all).
  std::string fp32_bf16x3;
  /// How it executes `dtype` (exec none, with the reason, when not offered).
  PrecisionSupport of(DType dtype) const;
};

/// Whether `s` runs node `n` on hardware: s is accelerated, n's op is in accelerated_ops, and
/// for the matrix products (Conv, MatMul, Gemm and their fused forms) n's weights (input 1)
/// are an f32 constant, which the steps convert once. Every other node at s's precision
/// is emulated (precision/emulate_precision.h writes each form accordingly).
bool accelerated_for(const PrecisionSupport& s, const Node& n);

/// Whether n is a Conv / FusedConv whose groups take more than one input channel each
/// (its weights [M, C/group, ...] with C/group > 1 and group > 1): not depthwise, not plain.
bool is_grouped_conv(const Node& n);

/// The ops int8 is offered for: Conv, MatMul, Gemm and their fused forms.
const std::vector<Op>& int8_ops();

/// The reference interpreter's: bf16, fp16 and int8 emulated.
TargetPrecisions reference_precisions();

}  // namespace ferry
