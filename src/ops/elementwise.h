// ops/elementwise.h — shared machinery of the elementwise op families
// (elementwise_unary.cc, elementwise_binary.cc, elementwise_variadic.cc, cast.cc).
//
// One template per arity over a scalar functor, so each op is one line:
//
//   Status ref_Add(KernelContext& ctx) { return ref_binary<kNumeric>(ctx, [](auto a, auto b) { return add(a, b); }); }
//
// Numerics: every floating dtype is computed in double and rounded once when
// stored (f16/bf16 through f32, see ir/dtype.h). For + - * / sqrt this is
// exactly the f32 result (double has more than 2*24+2 bits, so the double
// rounding is innocuous); for transcendental functions it is the correctly
// rounded value in all but vanishingly rare cases — the oracle should be the
// true value, not one implementation's error. Integers compute in their own
// type with two's complement wrap-around (through uint64_t: no signed-overflow
// UB); integer division by zero is an error, never a crash.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/op_context.h"
#include "ops/shape_util.h"

namespace ferry::ew {

// --- dtype sets --------------------------------------------------------------

constexpr uint32_t bit(DType t) { return uint32_t(1) << unsigned(t); }
inline constexpr uint32_t kFloats = bit(DType::f32) | bit(DType::f16) | bit(DType::bf16) | bit(DType::f64);
inline constexpr uint32_t kSignedInts = bit(DType::i8) | bit(DType::i16) | bit(DType::i32) | bit(DType::i64);
inline constexpr uint32_t kUnsignedInts = bit(DType::u8) | bit(DType::u16) | bit(DType::u32) | bit(DType::u64);
inline constexpr uint32_t kInts = kSignedInts | kUnsignedInts;
inline constexpr uint32_t kNumeric = kFloats | kInts;
inline constexpr uint32_t kBool = bit(DType::boolean);
inline constexpr uint32_t kAll = kNumeric | kBool;

// --- element traits: storage type, compute type, load / store -----------------

template <DType D> struct StorageOf;
#define FERRY_EW_STORAGE(e, ty, n) \
  template <>                      \
  struct StorageOf<DType::e> {     \
    using type = ty;               \
  };
FERRY_DTYPES(FERRY_EW_STORAGE)
#undef FERRY_EW_STORAGE

/// Storage and compute types of dtype D: floats compute in double, others in their own type.
template <DType D>
struct Elem {
  static constexpr DType dtype = D;
  static constexpr bool is_float = D == DType::f32 || D == DType::f16 || D == DType::bf16 || D == DType::f64;
  using Storage = typename StorageOf<D>::type;
  using Compute = std::conditional_t<is_float, double, Storage>;
  static Compute load(Storage s) {
    if constexpr (D == DType::f16) return f16_to_f32(s);
    else if constexpr (D == DType::bf16) return bf16_to_f32(s);
    else return Compute(s);
  }
  static Storage store(Compute c) {
    // double -> f32 follows IEEE (out of range becomes +-inf), as GCC and Clang define it.
    if constexpr (D == DType::f16) return f32_to_f16(float(c));
    else if constexpr (D == DType::bf16) return f32_to_bf16(float(c));
    else return Storage(c);
  }
};

template <class F, class E>
Status call_visitor(F& fn, E e) {
  if constexpr (std::is_void_v<decltype(fn(e))>) {
    fn(e);
    return Status::Ok();
  } else {
    return fn(e);
  }
}

/// Calls fn(Elem<t>{}) when t is in Mask (only those are instantiated); fn returns void or Status.
template <uint32_t Mask, class Fn>
Status visit_dtype(DType t, Fn&& fn) {
  switch (t) {
#define FERRY_EW_CASE(e, ty, n)                                                      \
  case DType::e:                                                                     \
    if constexpr ((Mask & bit(DType::e)) != 0) return call_visitor(fn, Elem<DType::e>{}); \
    break;
    FERRY_DTYPES(FERRY_EW_CASE)
#undef FERRY_EW_CASE
    default:
      break;
  }
  return unsupported(std::string("reference kernel has no ") + dtype_name(t) + " case");
}

// --- scalar helpers --------------------------------------------------------------

/// Two's complement wrap-around arithmetic for integers (no signed-overflow UB); plain for doubles.
template <class T> T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(uint64_t(a) + uint64_t(b));
  else return a + b;
}
template <class T> T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(uint64_t(a) - uint64_t(b));
  else return a - b;
}
template <class T> T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(uint64_t(a) * uint64_t(b));
  else return a * b;
}
template <class T> T wrap_neg(T a) {
  if constexpr (std::is_integral_v<T>) return T(uint64_t(0) - uint64_t(a));
  else return -a;
}

/// x < 0, without "always false" warnings for unsigned types.
template <class T> constexpr bool is_negative(T x) {
  if constexpr (std::is_unsigned_v<T>) return false;
  else return x < 0;
}

/// double -> integer T, truncating toward zero; NaN -> 0, out of range saturates to T's min / max.
/// (A plain C++ conversion of NaN or an out-of-range value is undefined behavior.)
template <class T>
T saturate_cast(double v) {
  static_assert(std::is_integral_v<T>);
  if (std::isnan(v)) return T(0);
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else {
    const double hi_excl = std::ldexp(1.0, std::numeric_limits<T>::digits);  // 2^digits: first value too big
    const double lo = double(std::numeric_limits<T>::min());                  // exact: 0 or -2^digits
    if (v >= hi_excl) return std::numeric_limits<T>::max();
    if (v <= lo - 1.0) return std::numeric_limits<T>::min();
    return T(v);  // trunc(v) is in range here
  }
}

// --- broadcasting ------------------------------------------------------------------

/// Calls f(out_index, offsets) for each element of `out_dims` in row-major order, where
/// offsets[k] is the element offset into input k (of dims in_dims[k], broadcast to out_dims).
template <class F>
void for_each_broadcast(const std::vector<int64_t>& out_dims, const std::vector<std::vector<int64_t>>& in_dims,
                        F&& f) {
  int64_t total = 1;
  for (int64_t d : out_dims) total *= d;
  if (total == 0) return;
  const size_t rank = out_dims.size(), k = in_dims.size();
  std::vector<std::vector<int64_t>> strides(k);
  bool all_same = true;
  for (size_t j = 0; j < k; ++j) {
    strides[j] = broadcast_strides(in_dims[j], out_dims);
    all_same = all_same && in_dims[j] == out_dims;
  }
  std::vector<int64_t> off(k, 0);
  if (all_same) {  // no broadcasting: every offset is the output index
    for (int64_t i = 0; i < total; ++i) {
      for (size_t j = 0; j < k; ++j) off[j] = i;
      f(i, off.data());
    }
    return;
  }
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    f(i, off.data());
    for (size_t d = rank; d-- > 0;) {  // odometer increment
      ++idx[d];
      for (size_t j = 0; j < k; ++j) off[j] += strides[j][d];
      if (idx[d] < out_dims[d]) break;
      for (size_t j = 0; j < k; ++j) off[j] -= strides[j][d] * out_dims[d];
      idx[d] = 0;
    }
  }
}

/// Output i as `dtype[dims]`: the interpreter's preallocated tensor when it matches, else a new one.
inline Result<Tensor*> prepare_output(KernelContext& ctx, size_t i, DType dtype, const std::vector<int64_t>& dims) {
  Tensor& t = ctx.output(i);
  if (t.defined() && t.dtype() == dtype && t.dims() == dims) return &t;
  return ctx.allocate_output(i, dtype, dims);
}

/// A float attribute as the f32 value ONNX stores (so the default 0.2 is 0.2f, as in an
/// imported model and in ONNX Runtime), widened to double for the computation.
inline double as_f32(double attr) { return float(attr); }

// --- shape inference helpers -----------------------------------------------------

/// "Sqrt does not accept i64" unless t is in mask.
inline Status check_dtype(const NodeContext& ctx, DType t, uint32_t mask) {
  if (t != DType::undefined && (mask & bit(t))) return Status::Ok();
  return ctx.error(std::string(op_name(ctx.node().op())) + " does not accept " + dtype_name(t));
}

/// "Add: input dtypes f32 and i64 differ" unless inputs i and j have the same dtype.
inline Status check_same_dtype(const InferContext& ctx, size_t i, size_t j) {
  if (ctx.input_dtype(i) == ctx.input_dtype(j)) return Status::Ok();
  return ctx.error(std::string(op_name(ctx.node().op())) + ": input dtypes " + dtype_name(ctx.input_dtype(i)) +
                   " and " + dtype_name(ctx.input_dtype(j)) + " differ");
}

/// Multidirectional broadcast of the shapes of all present inputs.
inline Result<Shape> broadcast_inputs(const InferContext& ctx) {
  Shape out;
  bool first = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    if (first) {
      out = ctx.input_shape(i);
      first = false;
    } else {
      FERRY_ASSIGN_OR_RETURN(out, broadcast_shapes(out, ctx.input_shape(i)));
    }
  }
  return out;
}

/// Unary op: input 0 in `mask`; output 0 has the input's shape and `out` dtype (undefined: same as input).
inline Status infer_unary(InferContext& ctx, uint32_t mask, DType out = DType::undefined) {
  FERRY_TRY(check_dtype(ctx, ctx.input_dtype(0), mask));
  ctx.set_output(0, out == DType::undefined ? ctx.input_dtype(0) : out, ctx.input_shape(0));
  return Status::Ok();
}

/// Broadcasting op over all inputs of one dtype in `mask`; output dtype `out` (undefined: the inputs').
inline Status infer_broadcast(InferContext& ctx, uint32_t mask, DType out = DType::undefined) {
  FERRY_TRY(check_dtype(ctx, ctx.input_dtype(0), mask));
  for (size_t i = 1; i < ctx.num_inputs(); ++i) FERRY_TRY(check_same_dtype(ctx, 0, i));
  FERRY_ASSIGN_OR_RETURN(Shape shape, broadcast_inputs(ctx));
  ctx.set_output(0, out == DType::undefined ? ctx.input_dtype(0) : out, std::move(shape));
  return Status::Ok();
}

// --- kernel templates --------------------------------------------------------------

/// out = f(x) elementwise over input 0 (dtype in Mask). f gets and returns the compute
/// type (double for floats), or returns bool when BoolOut.
template <uint32_t Mask, bool BoolOut = false, class F>
Status ref_unary(KernelContext& ctx, F&& f) {
  const Tensor& x = ctx.input(0);
  return visit_dtype<Mask>(x.dtype(), [&](auto e) -> Status {
    using E = decltype(e);
    using EO = std::conditional_t<BoolOut, Elem<DType::boolean>, E>;
    FERRY_ASSIGN_OR_RETURN(Tensor * out, prepare_output(ctx, 0, EO::dtype, x.dims()));
    const auto* px = x.data<typename E::Storage>();
    auto* po = out->data<typename EO::Storage>();
    for (int64_t i = 0; i < x.numel(); ++i) po[i] = EO::store(f(E::load(px[i])));
    return Status::Ok();
  });
}

/// out = f(a, b) elementwise with broadcasting; a and b share a dtype in Mask. f gets the
/// compute type and returns it, or bool when BoolOut.
template <uint32_t Mask, bool BoolOut = false, class F>
Status ref_binary(KernelContext& ctx, F&& f) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype())
    return invalid_argument(std::string("input dtypes ") + dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()) +
                            " differ");
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> dims, broadcast_dims(a.dims(), b.dims()));
  return visit_dtype<Mask>(a.dtype(), [&](auto e) -> Status {
    using E = decltype(e);
    using EO = std::conditional_t<BoolOut, Elem<DType::boolean>, E>;
    FERRY_ASSIGN_OR_RETURN(Tensor * out, prepare_output(ctx, 0, EO::dtype, dims));
    const auto* pa = a.data<typename E::Storage>();
    const auto* pb = b.data<typename E::Storage>();
    auto* po = out->data<typename EO::Storage>();
    for_each_broadcast(dims, {a.dims(), b.dims()}, [&](int64_t i, const int64_t* off) {
      po[i] = EO::store(f(E::load(pa[off[0]]), E::load(pb[off[1]])));
    });
    return Status::Ok();
  });
}

}  // namespace ferry::ew
