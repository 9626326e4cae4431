// ops/elementwise_binary.cc — binary elementwise ops with ONNX multidirectional
// broadcasting (numpy rules), plus PRelu (slope broadcast to X) and Where.
//
// Integer semantics (no UB, no crash):
//   Add Sub Mul wrap around (two's complement), like ONNX Runtime in practice.
//   Div truncates toward zero; INT_MIN / -1 wraps to INT_MIN; x / 0 is an error.
//   Mod fmod=0: remainder with the sign of the divisor (Python, numpy.mod; floats too, opset 28);
//       fmod=1: remainder with the sign of the dividend (C fmod); x mod 0 is an error.
//   Pow with an integer base: exact integer power (wrapping) for integer exponents,
//       0 for |base| > 1 and a negative exponent, an error for 0 ** negative;
//       for a float exponent, pow in double truncated toward zero (saturating).
#include "ops/elementwise.h"

namespace ferry {

using namespace ew;  // NOLINT: this file is the elementwise family

namespace {

Status integer_division_by_zero(const char* op) {
  return invalid_argument(std::string(op) + ": integer division by zero");
}

// Integer a / b truncating toward zero; b != 0 checked by the caller.
template <class T>
T int_div(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrap_neg(a);  // INT_MIN / -1 overflows
  }
  return T(a / b);
}

// Integer a % b with the sign of the dividend (C); b != 0.
template <class T>
T int_fmod(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;  // INT_MIN % -1 overflows
  }
  return T(a % b);
}

// Integer a mod b with the sign of the divisor (Python); b != 0.
template <class T>
T int_mod(T a, T b) {
  T r = int_fmod(a, b);
  if constexpr (std::is_signed_v<T>) {
    if (r != 0 && ((r < 0) != (b < 0))) r = T(r + b);  // |r| < |b| and opposite signs: no overflow
  }
  return r;
}

// Floor modulo a - floor(a / b) * b for floats (Mod fmod=0, opset 28; CPython's float %):
// the sign of b, zero results are +-0 with the sign of b, x mod +-inf is x or b by sign,
// and inf, NaN or a zero divisor give NaN (all through fmod).
double float_mod(double a, double b) {
  double r = std::fmod(a, b);
  if (r == 0) return std::copysign(0.0, b);
  if ((r < 0) != (b < 0)) r += b;
  return r;
}

// base ** e for integers, e >= 0, by squaring modulo 2^64 (then truncated to T: wraps like repeated Mul).
template <class T>
T int_pow(T base, uint64_t e) {
  uint64_t result = 1, b = uint64_t(base);
  for (; e; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return T(result);
}

// Binary op whose integer cases can divide by zero: f(a, b, &div0).
template <uint32_t Mask, class F>
Status ref_binary_div(KernelContext& ctx, const char* op, F f) {
  bool div0 = false;
  FERRY_TRY(ref_binary<Mask>(ctx, [&](auto a, auto b) { return f(a, b, &div0); }));
  return div0 ? integer_division_by_zero(op) : Status::Ok();
}

}  // namespace

// --- arithmetic -----------------------------------------------------------------

Status infer_Add(InferContext& ctx) { return infer_broadcast(ctx, kNumeric); }
Status ref_Add(KernelContext& ctx) { return ref_binary<kNumeric>(ctx, [](auto a, auto b) { return wrap_add(a, b); }); }

Status infer_Sub(InferContext& ctx) { return infer_broadcast(ctx, kNumeric); }
Status ref_Sub(KernelContext& ctx) { return ref_binary<kNumeric>(ctx, [](auto a, auto b) { return wrap_sub(a, b); }); }

Status infer_Mul(InferContext& ctx) { return infer_broadcast(ctx, kNumeric); }
Status ref_Mul(KernelContext& ctx) { return ref_binary<kNumeric>(ctx, [](auto a, auto b) { return wrap_mul(a, b); }); }

Status infer_Div(InferContext& ctx) { return infer_broadcast(ctx, kNumeric); }
Status ref_Div(KernelContext& ctx) {
  return ref_binary_div<kNumeric>(ctx, "Div", [](auto a, auto b, bool* div0) -> decltype(a) {
    if constexpr (std::is_integral_v<decltype(a)>) {
      if (b == 0) return *div0 = true, decltype(a)(0);
      return int_div(a, b);
    } else {
      return a / b;
    }
  });
}

Status infer_Mod(InferContext& ctx) {
  const int64_t fmod = ctx.attrs<ModAttrs>().fmod;
  if (fmod != 0 && fmod != 1) return ctx.error("Mod: fmod must be 0 or 1, got " + std::to_string(fmod));
  return infer_broadcast(ctx, kNumeric);
}
Status ref_Mod(KernelContext& ctx) {
  const bool c_fmod = ctx.attrs<ModAttrs>().fmod != 0;
  return ref_binary_div<kNumeric>(ctx, "Mod", [=](auto a, auto b, bool* div0) -> decltype(a) {
    if constexpr (std::is_integral_v<decltype(a)>) {
      if (b == 0) return *div0 = true, decltype(a)(0);
      return c_fmod ? int_fmod(a, b) : int_mod(a, b);
    } else {
      return c_fmod ? std::fmod(a, b) : float_mod(a, b);
    }
  });
}

// Pow(base, exponent): exponent may have another numeric dtype; output has the base's dtype.
constexpr uint32_t kPowBase = kFloats | bit(DType::i32) | bit(DType::i64);
Status infer_Pow(InferContext& ctx) {
  FERRY_TRY(check_dtype(ctx, ctx.input_dtype(0), kPowBase));
  FERRY_TRY(check_dtype(ctx, ctx.input_dtype(1), kNumeric));
  FERRY_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1)));
  ctx.set_output(0, ctx.input_dtype(0), std::move(shape));
  return Status::Ok();
}
Status ref_Pow(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> dims, broadcast_dims(x.dims(), y.dims()));
  // The exponent, whatever its dtype, as doubles (exact for |e| <= 2^53) and, when integral, as int64.
  const bool int_exponent = is_integer(y.dtype());
  const std::vector<double> ed = y.to_double_vector();
  const std::vector<int64_t> ei = int_exponent ? y.to_int_vector() : std::vector<int64_t>{};
  bool zero_to_negative = false;
  FERRY_TRY(visit_dtype<kPowBase>(x.dtype(), [&](auto e) -> Status {
    using E = decltype(e);
    using C = typename E::Compute;
    FERRY_ASSIGN_OR_RETURN(Tensor * out, prepare_output(ctx, 0, E::dtype, dims));
    const auto* px = x.data<typename E::Storage>();
    auto* po = out->data<typename E::Storage>();
    for_each_broadcast(dims, {x.dims(), y.dims()}, [&](int64_t i, const int64_t* off) {
      C b = E::load(px[off[0]]);
      C r;
      if constexpr (!std::is_integral_v<C>) {
        r = std::pow(b, ed[size_t(off[1])]);
      } else if (!int_exponent) {
        r = saturate_cast<C>(std::pow(double(b), ed[size_t(off[1])]));
      } else if (int64_t k = ei[size_t(off[1])]; k >= 0) {
        r = int_pow(b, uint64_t(k));
      } else {  // b ** -k = 1 / b ** k, truncated toward zero
        zero_to_negative |= b == 0;
        r = b == 1 ? C(1) : b == -1 ? C(k % 2 ? -1 : 1) : C(0);
      }
      po[i] = E::store(r);
    });
    return Status::Ok();
  }));
  if (zero_to_negative) return invalid_argument("Pow: integer 0 raised to a negative power");
  return Status::Ok();
}

// PRelu(x, slope) = x < 0 ? slope * x : x, slope broadcast unidirectionally to x's shape.
constexpr uint32_t kPReluTypes = kFloats | bit(DType::i32) | bit(DType::i64) | bit(DType::u32) | bit(DType::u64);
Status infer_PRelu(InferContext& ctx) {
  FERRY_TRY(check_dtype(ctx, ctx.input_dtype(0), kPReluTypes));
  FERRY_TRY(check_same_dtype(ctx, 0, 1));
  const Shape& xs = ctx.input_shape(0);
  const Shape& ss = ctx.input_shape(1);
  if (xs.rank_known() && ss.rank_known()) {
    bool ok = ss.rank() <= xs.rank();
    for (int64_t i = 0; ok && i < ss.rank(); ++i) {
      const Dim& s = ss[size_t(i)];
      const Dim& d = xs[size_t(xs.rank() - ss.rank() + i)];
      ok = !(s.is_static() && d.is_static() && s.value() != 1 && s.value() != d.value());
    }
    if (!ok)
      return ctx.error("PRelu: slope shape " + ss.to_string() + " does not broadcast to input shape " +
                       xs.to_string());
  }
  ctx.set_output(0, ctx.input_dtype(0), xs);
  return Status::Ok();
}
Status ref_PRelu(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& s = ctx.input(1);
  auto dims = broadcast_dims(x.dims(), s.dims());
  if (!dims.ok() || *dims != x.dims())
    return invalid_argument("PRelu: slope " + s.type_string() + " does not broadcast to input " + x.type_string());
  return ref_binary<kPReluTypes>(ctx, [](auto a, auto slope) { return is_negative(a) ? wrap_mul(slope, a) : a; });
}

// --- comparisons (bool output) ----------------------------------------------------

Status infer_Equal(InferContext& ctx) { return infer_broadcast(ctx, kAll, DType::boolean); }
Status ref_Equal(KernelContext& ctx) { return ref_binary<kAll, true>(ctx, [](auto a, auto b) { return a == b; }); }

Status infer_Less(InferContext& ctx) { return infer_broadcast(ctx, kNumeric, DType::boolean); }
Status ref_Less(KernelContext& ctx) { return ref_binary<kNumeric, true>(ctx, [](auto a, auto b) { return a < b; }); }

Status infer_LessOrEqual(InferContext& ctx) { return infer_broadcast(ctx, kNumeric, DType::boolean); }
Status ref_LessOrEqual(KernelContext& ctx) {
  return ref_binary<kNumeric, true>(ctx, [](auto a, auto b) { return a <= b; });
}

Status infer_Greater(InferContext& ctx) { return infer_broadcast(ctx, kNumeric, DType::boolean); }
Status ref_Greater(KernelContext& ctx) {
  return ref_binary<kNumeric, true>(ctx, [](auto a, auto b) { return a > b; });
}

Status infer_GreaterOrEqual(InferContext& ctx) { return infer_broadcast(ctx, kNumeric, DType::boolean); }
Status ref_GreaterOrEqual(KernelContext& ctx) {
  return ref_binary<kNumeric, true>(ctx, [](auto a, auto b) { return a >= b; });
}

// --- logical (bool only) --------------------------------------------------------------

Status infer_And(InferContext& ctx) { return infer_broadcast(ctx, kBool); }
Status ref_And(KernelContext& ctx) { return ref_binary<kBool>(ctx, [](bool a, bool b) { return a && b; }); }

Status infer_Or(InferContext& ctx) { return infer_broadcast(ctx, kBool); }
Status ref_Or(KernelContext& ctx) { return ref_binary<kBool>(ctx, [](bool a, bool b) { return a || b; }); }

Status infer_Xor(InferContext& ctx) { return infer_broadcast(ctx, kBool); }
Status ref_Xor(KernelContext& ctx) { return ref_binary<kBool>(ctx, [](bool a, bool b) { return a != b; }); }

// --- Where(condition, X, Y) = condition ? X : Y, all three broadcast ------------------

Status infer_Where(InferContext& ctx) {
  if (ctx.input_dtype(0) != DType::boolean)
    return ctx.error(std::string("Where: condition must be bool, got ") + dtype_name(ctx.input_dtype(0)));
  FERRY_TRY(check_same_dtype(ctx, 1, 2));
  FERRY_ASSIGN_OR_RETURN(Shape shape, broadcast_inputs(ctx));
  ctx.set_output(0, ctx.input_dtype(1), std::move(shape));
  return Status::Ok();
}
Status ref_Where(KernelContext& ctx) {
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (c.dtype() != DType::boolean || x.dtype() != y.dtype())
    return invalid_argument("Where: expected bool condition and equal X, Y dtypes, got " + c.type_string() + ", " +
                            x.type_string() + ", " + y.type_string());
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> dims, broadcast_dims(c.dims(), x.dims()));
  FERRY_ASSIGN_OR_RETURN(dims, broadcast_dims(dims, y.dims()));
  return visit_dtype<kAll>(x.dtype(), [&](auto e) -> Status {
    using S = typename decltype(e)::Storage;  // a pure selection: copy storage, no conversion
    FERRY_ASSIGN_OR_RETURN(Tensor * out, prepare_output(ctx, 0, x.dtype(), dims));
    const bool* pc = c.data<bool>();
    const S* px = x.data<S>();
    const S* py = y.data<S>();
    S* po = out->data<S>();
    for_each_broadcast(dims, {c.dims(), x.dims(), y.dims()}, [&](int64_t i, const int64_t* off) {
      po[i] = pc[off[0]] ? px[off[1]] : py[off[2]];
    });
    return Status::Ok();
  });
}

}  // namespace ferry
