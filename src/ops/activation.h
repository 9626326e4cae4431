// ops/activation.h — scalar activation functions, shared by the unary ops
// (elementwise_unary.cc) and the epilogues of the fused ops (fused.cc), so a
// fused activation computes exactly what the standalone op does.
//
// All in double; each equals its ONNX definition mathematically and is written
// in the form that is accurate over the whole range (see elementwise_unary.cc).
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "ir/activation.h"

namespace ferry {

namespace act {

inline constexpr double kSqrt1_2 = 0.70710678118654752440;      // 1/sqrt(2)
inline constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2/pi)

/// 1 / (1 + e^-x), evaluated on the side where the exponential cannot overflow.
inline double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

/// Clamps y to [0, 1]; NaN stays NaN.
inline double clamp01(double y) { return y < 0 ? 0.0 : (y > 1 ? 1.0 : y); }

/// max(0, min(1, alpha * x + beta))
inline double hard_sigmoid(double x, double alpha, double beta) { return clamp01(alpha * x + beta); }

/// x * max(0, min(1, x / 6 + 0.5))
inline double hard_swish(double x) { return x * clamp01(x / 6.0 + 0.5); }

/// 0.5 * x * (1 + erf(x / sqrt(2))), as 0.5 * x * erfc(-x / sqrt(2)): no cancellation for negative x.
inline double gelu_erf(double x) { return 0.5 * x * std::erfc(-x * kSqrt1_2); }

/// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
inline double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x))); }

}  // namespace act

/// act(x) with its parameters: Clip [alpha, beta] = [min, max]; LeakyRelu alpha;
/// HardSigmoid alpha, beta; the others take none. NaN stays NaN.
inline double apply_activation(Activation a, double x, double alpha, double beta) {
  switch (a) {
    case Activation::kNone: return x;
    case Activation::kRelu: return x < 0 ? 0.0 : x;
    case Activation::kClip: {  // as Clip: min first, then max (so min > max gives max)
      if (x < alpha) x = alpha;
      return x > beta ? beta : x;
    }
    case Activation::kLeakyRelu: return x < 0 ? alpha * x : x;
    case Activation::kSigmoid: return act::sigmoid(x);
    case Activation::kHardSigmoid: return act::hard_sigmoid(x, alpha, beta);
    case Activation::kHardSwish: return act::hard_swish(x);
    case Activation::kSiLU: return x * act::sigmoid(x);
    case Activation::kGelu: return act::gelu_erf(x);
    case Activation::kGeluTanh: return act::gelu_tanh(x);
    case Activation::kTanh: return std::tanh(x);
  }
  return x;
}

}  // namespace ferry
