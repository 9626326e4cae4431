// ir/activation.h — the activations a fused op's epilogue applies (attribute
// `activation` of FusedConv / FusedConvTranspose / FusedMatMul), in one table.
//
// Each row: the enum, the attribute spelling, the standalone op it replaces in
// a graph (SiLU is x * Sigmoid(x), i.e. Swish with alpha 1; GeluTanh is Gelu
// with approximate=tanh), and how many of the node's alpha / beta it reads.
// The fusion patterns, the reference kernel (ops/fused.cc), the target
// descriptions (passes/target.h) and the CPU backend's epilogues all read this
// table, so an activation added here reaches each of them or fails to compile.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "ir/op.h"

namespace ferry {

#define FERRY_ACTIVATIONS(X)             \
  X(kNone, "", Identity, 0)              \
  X(kRelu, "Relu", Relu, 0)              \
  X(kClip, "Clip", Clip, 2)              \
  X(kLeakyRelu, "LeakyRelu", LeakyRelu, 1) \
  X(kSigmoid, "Sigmoid", Sigmoid, 0)     \
  X(kHardSigmoid, "HardSigmoid", HardSigmoid, 2) \
  X(kHardSwish, "HardSwish", HardSwish, 0) \
  X(kSiLU, "SiLU", Swish, 0)             \
  X(kGelu, "Gelu", Gelu, 0)              \
  X(kGeluTanh, "GeluTanh", Gelu, 0)      \
  X(kTanh, "Tanh", Tanh, 0)

enum class Activation {
#define FERRY_ACTIVATION_ENUM(e, name, op, params) e,
  FERRY_ACTIVATIONS(FERRY_ACTIVATION_ENUM)
#undef FERRY_ACTIVATION_ENUM
};

/// Every activation, kNone first, in table order.
std::span<const Activation> all_activations();
/// The attribute spelling: "" for kNone, "Relu", "GeluTanh", ...
const char* activation_name(Activation a);
/// "" -> kNone, "Relu" -> kRelu, ...; nullopt for an unknown name.
std::optional<Activation> activation_from_name(std::string_view name);
/// The standalone op the activation replaces (kNone: Identity).
Op activation_op(Activation a);
/// How many of alpha, beta it reads: Clip and HardSigmoid 2, LeakyRelu 1, the rest 0.
int activation_params(Activation a);
/// f(0) == 0: applying it over zero padding (blocked layouts) keeps the padding zero.
bool activation_keeps_zero(Activation a);

}  // namespace ferry
