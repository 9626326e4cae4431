// ops/elementwise_unary.cc — unary elementwise ops: y = f(x), same shape.
//
// Float ops compute in double and round once (see elementwise.h). Formulas are
// written in the form that is accurate over the whole range (expm1 for the
// exponential linear units, the two-sided forms of Sigmoid and Softplus, erfc
// for exact Gelu), which equal the ONNX definitions mathematically.
// Clip, Identity and Dropout live here too: they are elementwise copies.
#include <cstring>

#include "ops/activation.h"
#include "ops/elementwise.h"

namespace ferry {

using namespace ew;  // NOLINT: this file is the elementwise family

namespace {

// log(1 + e^x) without overflow for large x or loss of precision for very negative x.
double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// Round half to even, independent of the floating-point rounding mode; keeps the sign of zero.
double round_half_even(double x) {
  double r = std::floor(x);
  double d = x - r;  // in [0, 1); NaN for inf/NaN, which falls through unchanged
  if (d > 0.5 || (d == 0.5 && std::fmod(r, 2.0) != 0)) r += 1.0;
  return r == 0 ? std::copysign(0.0, x) : r;
}

}  // namespace

// --- arithmetic -----------------------------------------------------------------

Status infer_Abs(InferContext& ctx) { return infer_unary(ctx, kNumeric); }
Status ref_Abs(KernelContext& ctx) {
  return ref_unary<kNumeric>(ctx, [](auto x) -> decltype(x) {
    using C = decltype(x);
    if constexpr (std::is_unsigned_v<C>) return x;
    else if constexpr (std::is_integral_v<C>) return x < 0 ? wrap_neg(x) : x;  // |INT_MIN| wraps to INT_MIN
    else return std::fabs(x);
  });
}

Status infer_Neg(InferContext& ctx) { return infer_unary(ctx, kFloats | kSignedInts); }
Status ref_Neg(KernelContext& ctx) {
  return ref_unary<kFloats | kSignedInts>(ctx, [](auto x) { return wrap_neg(x); });
}

Status infer_Sign(InferContext& ctx) { return infer_unary(ctx, kNumeric); }
Status ref_Sign(KernelContext& ctx) {
  return ref_unary<kNumeric>(ctx, [](auto x) -> decltype(x) {
    using C = decltype(x);
    if constexpr (std::is_integral_v<C>) return C((x > 0) - is_negative(x));
    else return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x;  // NaN stays NaN
  });
}

Status infer_Reciprocal(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Reciprocal(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return 1.0 / x; }); }

Status infer_Sqrt(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Sqrt(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return std::sqrt(x); }); }

Status infer_Floor(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Floor(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return std::floor(x); }); }

Status infer_Ceil(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Ceil(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return std::ceil(x); }); }

Status infer_Round(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Round(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return round_half_even(x); }); }

// --- transcendental ------------------------------------------------------------

Status infer_Exp(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Exp(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return std::exp(x); }); }

Status infer_Log(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Log(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return std::log(x); }); }

Status infer_Sin(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Sin(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return std::sin(x); }); }

Status infer_Cos(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Cos(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return std::cos(x); }); }

Status infer_Tanh(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Tanh(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return std::tanh(x); }); }

Status infer_Erf(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Erf(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return std::erf(x); }); }

// --- activations ---------------------------------------------------------------

// Sigmoid(x) = 1 / (1 + exp(-x))
Status infer_Sigmoid(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Sigmoid(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return act::sigmoid(x); }); }

// Relu(x) = max(0, x); NaN stays NaN.
Status infer_Relu(InferContext& ctx) { return infer_unary(ctx, kFloats | kSignedInts); }
Status ref_Relu(KernelContext& ctx) {
  return ref_unary<kFloats | kSignedInts>(ctx, [](auto x) { return x < 0 ? decltype(x)(0) : x; });
}

// LeakyRelu(x) = x < 0 ? alpha * x : x
Status infer_LeakyRelu(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_LeakyRelu(KernelContext& ctx) {
  const double alpha = as_f32(ctx.attrs<LeakyReluAttrs>().alpha);
  return ref_unary<kFloats>(ctx, [=](double x) { return x < 0 ? alpha * x : x; });
}

// Elu(x) = x < 0 ? alpha * (exp(x) - 1) : x
Status infer_Elu(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Elu(KernelContext& ctx) {
  const double alpha = as_f32(ctx.attrs<EluAttrs>().alpha);
  return ref_unary<kFloats>(ctx, [=](double x) { return x < 0 ? alpha * std::expm1(x) : x; });
}

// Selu(x) = gamma * (x <= 0 ? alpha * (exp(x) - 1) : x)
Status infer_Selu(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Selu(KernelContext& ctx) {
  const SeluAttrs& a = ctx.attrs<SeluAttrs>();
  const double alpha = as_f32(a.alpha), gamma = as_f32(a.gamma);
  return ref_unary<kFloats>(ctx, [=](double x) { return gamma * (x <= 0 ? alpha * std::expm1(x) : x); });
}

// Celu(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
Status infer_Celu(InferContext& ctx) {
  if (as_f32(ctx.attrs<CeluAttrs>().alpha) == 0) return ctx.error("Celu: alpha must not be 0");
  return infer_unary(ctx, kFloats);
}
Status ref_Celu(KernelContext& ctx) {
  const double alpha = as_f32(ctx.attrs<CeluAttrs>().alpha);
  return ref_unary<kFloats>(ctx, [=](double x) {
    return x > 0 ? x : std::min(0.0, alpha * std::expm1(x / alpha));  // NaN stays NaN through expm1
  });
}

// HardSigmoid(x) = max(0, min(1, alpha * x + beta))
Status infer_HardSigmoid(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_HardSigmoid(KernelContext& ctx) {
  const HardSigmoidAttrs& a = ctx.attrs<HardSigmoidAttrs>();
  const double alpha = as_f32(a.alpha), beta = as_f32(a.beta);
  return ref_unary<kFloats>(ctx, [=](double x) { return act::hard_sigmoid(x, alpha, beta); });
}

// HardSwish(x) = x * max(0, min(1, x / 6 + 0.5))
Status infer_HardSwish(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_HardSwish(KernelContext& ctx) {
  return ref_unary<kFloats>(ctx, [](double x) { return act::hard_swish(x); });
}

// Softplus(x) = log(1 + exp(x))
Status infer_Softplus(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Softplus(KernelContext& ctx) { return ref_unary<kFloats>(ctx, [](double x) { return softplus(x); }); }

// Softsign(x) = x / (1 + |x|)
Status infer_Softsign(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Softsign(KernelContext& ctx) {
  return ref_unary<kFloats>(ctx, [](double x) { return x / (1.0 + std::fabs(x)); });
}

// Gelu, approximate=none:  0.5 * x * (1 + erf(x / sqrt(2)))  computed as 0.5 * x * erfc(-x / sqrt(2)),
//   the same value without the cancellation of 1 + erf for negative x.
// Gelu, approximate=tanh:  0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
Status infer_Gelu(InferContext& ctx) {
  const std::string& mode = ctx.attrs<GeluAttrs>().approximate;
  if (mode != "none" && mode != "tanh")
    return ctx.error("Gelu: approximate must be 'none' or 'tanh', got '" + mode + "'");
  return infer_unary(ctx, kFloats);
}
Status ref_Gelu(KernelContext& ctx) {
  if (ctx.attrs<GeluAttrs>().approximate == "tanh")
    return ref_unary<kFloats>(ctx, [](double x) { return act::gelu_tanh(x); });
  return ref_unary<kFloats>(ctx, [](double x) { return act::gelu_erf(x); });
}

// Mish(x) = x * tanh(softplus(x))
Status infer_Mish(InferContext& ctx) { return infer_unary(ctx, kFloats); }
Status ref_Mish(KernelContext& ctx) {
  return ref_unary<kFloats>(ctx, [](double x) { return x * std::tanh(softplus(x)); });
}

// --- logical and classification ----------------------------------------------------

Status infer_Not(InferContext& ctx) { return infer_unary(ctx, kBool); }
Status ref_Not(KernelContext& ctx) { return ref_unary<kBool>(ctx, [](bool x) { return !x; }); }

Status infer_IsNaN(InferContext& ctx) { return infer_unary(ctx, kFloats, DType::boolean); }
Status ref_IsNaN(KernelContext& ctx) {
  return ref_unary<kFloats, true>(ctx, [](double x) { return std::isnan(x); });
}

Status infer_IsInf(InferContext& ctx) { return infer_unary(ctx, kFloats, DType::boolean); }
Status ref_IsInf(KernelContext& ctx) {
  const IsInfAttrs& a = ctx.attrs<IsInfAttrs>();
  const bool neg = a.detect_negative != 0, pos = a.detect_positive != 0;
  return ref_unary<kFloats, true>(ctx, [=](double x) { return std::isinf(x) && (x > 0 ? pos : neg); });
}

// --- Clip: y = min(max(x, lo), hi); an omitted bound is no bound; lo > hi gives hi ---

Status infer_Clip(InferContext& ctx) {
  FERRY_TRY(check_dtype(ctx, ctx.input_dtype(0), kNumeric));
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    FERRY_TRY(check_same_dtype(ctx, 0, i));
    const Shape& s = ctx.input_shape(i);
    // A scalar, or a 1-element 1-D tensor (which ONNX Runtime accepts too).
    bool bad = s.rank_known() && (s.rank() > 1 || (s.rank() == 1 && s[0].is_static() && s[0].value() != 1));
    if (bad)
      return ctx.error(std::string("Clip: ") + (i == 1 ? "min" : "max") + " must be a scalar, got shape " +
                       s.to_string());
  }
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

Status ref_Clip(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  for (size_t i = 1; i < 3; ++i)
    if (ctx.has_input(i) && (ctx.input(i).numel() != 1 || ctx.input(i).dtype() != x.dtype()))
      return invalid_argument(std::string("Clip: ") + (i == 1 ? "min" : "max") + " must be one " +
                              dtype_name(x.dtype()) + " value, got " + ctx.input(i).type_string());
  return visit_dtype<kNumeric>(x.dtype(), [&](auto e) {
    using E = decltype(e);
    using C = typename E::Compute;
    const bool has_lo = ctx.has_input(1), has_hi = ctx.has_input(2);
    const C lo = has_lo ? E::load(ctx.input(1).template data<typename E::Storage>()[0]) : C(0);
    const C hi = has_hi ? E::load(ctx.input(2).template data<typename E::Storage>()[0]) : C(0);
    return ref_unary<bit(E::dtype)>(ctx, [=](C v) {
      if (has_lo && v < lo) v = lo;
      if (has_hi && v > hi) v = hi;
      return v;  // NaN fails both comparisons and stays NaN
    });
  });
}

// --- copies ----------------------------------------------------------------------

Status infer_Identity(InferContext& ctx) {
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}
Status ref_Identity(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  FERRY_ASSIGN_OR_RETURN(Tensor * out, prepare_output(ctx, 0, x.dtype(), x.dims()));
  if (x.nbytes()) std::memcpy(out->raw(), x.raw(), x.nbytes());
  return Status::Ok();
}

// Dropout in inference: output 0 = data, optional output 1 (mask) = all true.
// Inputs: data, ratio (optional float scalar, default 0.5), training_mode (optional bool scalar).
Status infer_Dropout(InferContext& ctx) {
  FERRY_TRY(check_dtype(ctx, ctx.input_dtype(0), kFloats));
  if (ctx.has_input(1) && !is_floating(ctx.input_dtype(1)))
    return ctx.error(std::string("Dropout: ratio must be a float, got ") + dtype_name(ctx.input_dtype(1)));
  if (ctx.has_input(2) && ctx.input_dtype(2) != DType::boolean)
    return ctx.error(std::string("Dropout: training_mode must be bool, got ") + dtype_name(ctx.input_dtype(2)));
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::boolean, ctx.input_shape(0));
  return Status::Ok();
}

Status ref_Dropout(KernelContext& ctx) {
  const double ratio = ctx.has_input(1) && ctx.input(1).numel() > 0 ? ctx.input(1).get_double(0) : 0.5;
  const bool training = ctx.has_input(2) && ctx.input(2).numel() > 0 && ctx.input(2).get_double(0) != 0;
  // Training mode with ratio > 0 drops at random; the reference interpreter only does inference.
  if (training && ratio != 0)
    return unsupported("Dropout: training_mode with ratio " + std::to_string(ratio) +
                       " (random dropout) is not supported; only inference");
  FERRY_TRY(ref_Identity(ctx));
  if (ctx.num_outputs() > 1) {
    FERRY_ASSIGN_OR_RETURN(Tensor * mask, prepare_output(ctx, 1, DType::boolean, ctx.input(0).dims()));
    for (int64_t i = 0; i < mask->numel(); ++i) mask->data<bool>()[i] = true;
  }
  return Status::Ok();
}

}  // namespace ferry
