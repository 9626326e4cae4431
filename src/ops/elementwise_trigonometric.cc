// ops/elementwise_trigonometric.cc — the trigonometric functions beyond Sin and Cos
// (ops/elementwise_unary.cc): Tan, Asin, Acos, Atan and the hyperbolic Sinh, Cosh,
// Asinh, Acosh, Atanh (ONNX opsets 7-22). Computed in double, rounded once (elementwise.h).
#include "ops/elementwise.h"

namespace ferry {

using namespace ew;  // NOLINT: this file is part of the elementwise family

#define FERRY_FLOAT_UNARY(Op, expr)                                              \
  Status infer_##Op(InferContext& ctx) { return infer_unary(ctx, kFloats); }    \
  Status ref_##Op(KernelContext& ctx) {                                          \
    return ref_unary<kFloats>(ctx, [](double x) { return expr; });               \
  }
FERRY_FLOAT_UNARY(Tan, std::tan(x))
FERRY_FLOAT_UNARY(Asin, std::asin(x))
FERRY_FLOAT_UNARY(Acos, std::acos(x))
FERRY_FLOAT_UNARY(Atan, std::atan(x))
FERRY_FLOAT_UNARY(Sinh, std::sinh(x))
FERRY_FLOAT_UNARY(Cosh, std::cosh(x))
FERRY_FLOAT_UNARY(Asinh, std::asinh(x))
FERRY_FLOAT_UNARY(Acosh, std::acosh(x))
FERRY_FLOAT_UNARY(Atanh, std::atanh(x))
#undef FERRY_FLOAT_UNARY

}  // namespace ferry
