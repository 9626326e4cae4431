// passes/epilogue_patterns.h — the epilogue rewrites fuse_conv_epilogue and
// fuse_matmul_epilogue share; each is rooted at the node that is absorbed.
//
//   act(H(...))                   ==>  FusedH(...) {activation=act, alpha, beta}
//   y * Sigmoid(y), y = H(...)    ==>  FusedH(...) {activation=SiLU}
//   H(...) + z                    ==>  FusedH(..., z)          z broadcasts into H's output
//
// H is a host of the family: Conv, ConvTranspose, FusedConv, FusedConvTranspose
// (kConv) or MatMul, FusedMatMul (kMatMul; float only). A fused op computes
// act(core + bias + z), so a host that already applies an activation takes
// nothing more, and one that has z takes no second one (near misses).
#pragma once

#include <string>

#include "passes/rewriter.h"

namespace ferry {

enum class HostFamily { kConv, kMatMul };

/// The producer of `v` when it is a host of `family`, else null.
Node* epilogue_host(const Value* v, HostFamily family);

/// "" when `host` can take another epilogue stage read by `user`; else the near-miss reason
/// (an activation already applied, the output used elsewhere or a graph output).
std::string epilogue_blocker(const Graph& g, const Node& host, const Node& user);

/// act(H(...)): Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Gelu, Tanh.
bool fuse_activation_epilogue(Rewriter& rw, Node& act, HostFamily family);
/// y * Sigmoid(y) (either operand order) with y = H(...).
bool fuse_silu_epilogue(Rewriter& rw, Node& mul, HostFamily family);
/// H(...) + z, either operand: z becomes H's residual input (index 3).
bool fuse_residual_epilogue(Rewriter& rw, Node& add, HostFamily family);

}  // namespace ferry
