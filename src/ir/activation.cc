#include "ir/activation.h"

namespace ferry {
namespace {

struct ActivationRow {
  Activation act;
  const char* name;
  Op op;
  int params;
};

constexpr ActivationRow kActivationRows[] = {
#define FERRY_ACTIVATION_ROW(e, name, op, params) {Activation::e, name, Op::op, params},
    FERRY_ACTIVATIONS(FERRY_ACTIVATION_ROW)
#undef FERRY_ACTIVATION_ROW
};

constexpr Activation kAllActivations[] = {
#define FERRY_ACTIVATION_ENUM(e, name, op, params) Activation::e,
    FERRY_ACTIVATIONS(FERRY_ACTIVATION_ENUM)
#undef FERRY_ACTIVATION_ENUM
};

const ActivationRow& activation_row(Activation a) { return kActivationRows[static_cast<size_t>(a)]; }

}  // namespace

std::span<const Activation> all_activations() { return kAllActivations; }
const char* activation_name(Activation a) { return activation_row(a).name; }
Op activation_op(Activation a) { return activation_row(a).op; }
int activation_params(Activation a) { return activation_row(a).params; }

std::optional<Activation> activation_from_name(std::string_view name) {
  for (const ActivationRow& r : kActivationRows)
    if (name == r.name) return r.act;
  return std::nullopt;
}

bool activation_keeps_zero(Activation a) {
  // Sigmoid(0) = 0.5 and HardSigmoid(0) = beta; Clip keeps 0 only for some bounds, so it
  // counts as not keeping it.
  switch (a) {
    case Activation::kNone: case Activation::kRelu: case Activation::kLeakyRelu: case Activation::kHardSwish: case Activation::kSiLU:
    case Activation::kGelu: case Activation::kGeluTanh: case Activation::kTanh: return true;
    default: return false;
  }
}

}  // namespace ferry
