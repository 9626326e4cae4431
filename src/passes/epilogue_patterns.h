// passes/epilogue_patterns.h — the epilogue rewrites fuse_conv_epilogue and
// fuse_matmul_epilogue share; each is rooted at the node that is absorbed.
//
//   act(H(...))                   ==>  FusedH(...) {activation=act, alpha, beta}
//   y * Sigmoid(y), y = H(...)    ==>  FusedH(...) {activation=SiLU}
//   H(...) + z                    ==>  FusedH(..., z)          z broadcasts into H's output
//
// H is a host of the family: Conv, ConvTranspose, FusedConv, FusedConvTranspose
// (kConv), MatMul, FusedMatMul (kMatMul; float only) or a Mul by a constant, FusedMul
// (kMul; float only: x * s + t with per-channel s, t is a BatchNormalization no
// convolution absorbed). A fused op computes
// act(core + bias + z), so a host that already applies an activation takes
// nothing more, and one that has z takes no second one (near misses).
//
// Every rewrite asks the target first (passes/target.h): it must execute the fused
// op it would form, and apply the activation in that op's epilogue.
#pragma once

#include <string>
#include <vector>

#include "passes/pattern_driver.h"
#include "passes/rewriter.h"
#include "passes/target.h"

namespace ferry {

enum class HostFamily { kConv, kMatMul, kMul };

/// The producer of `v` when it is a host of `family`, else null.
Node* epilogue_host(const Value* v, HostFamily family);

/// "" when `host` can take another epilogue stage read by `user`; else the near-miss reason
/// (an activation already applied, the output used elsewhere or a graph output).
std::string epilogue_blocker(const Graph& g, const Node& host, const Node& user);

/// "" when `target` executes the fused op of `host` (FusedConv for a Conv, ...); else the near-miss reason.
std::string fused_op_blocker(const Node& host, const Target& target);

/// act(H(...)) for a standalone activation node (ir/activation.h's table).
bool fuse_activation_epilogue(Rewriter& rw, Node& act, HostFamily family, const Target& target);
/// y * Sigmoid(y) (either operand order) with y = H(...).
bool fuse_silu_epilogue(Rewriter& rw, Node& mul, HostFamily family, const Target& target);
/// H(...) + z, either operand: z becomes H's residual input (index 3).
bool fuse_residual_epilogue(Rewriter& rw, Node& add, HostFamily family, const Target& target);

/// The activation and SiLU patterns of `family`, one per standalone activation op of the
/// table, rooted at that op; the pass adds its Add pattern in front.
std::vector<Pattern> activation_patterns(HostFamily family, const Target& target);

}  // namespace ferry
