// ops/cast.cc — Cast (to: a ferry dtype name), CastLike (to input 1's dtype) and BitCast
// (the same bytes read as another dtype of the same width).
//
// ONNX Cast semantics, with every case defined (no C++ undefined behavior):
//   float -> float     round to nearest even; overflow gives +-inf. f64 -> f16/bf16
//                      goes through f32 (as ONNX Runtime does).
//   int   -> float     round to nearest even (f16/bf16 through f32).
//   float -> int       truncate toward zero. NaN -> 0; values beyond the target's
//                      range saturate to its min / max (ONNX leaves this undefined;
//                      we pick saturation so the result is deterministic).
//   int   -> int       two's complement wrap-around (keep the low bits): i32 300 -> u8 44.
//   x     -> bool      x != 0 (NaN -> true).
//   bool  -> x         0 or 1.
#include <cstring>

#include "ops/elementwise.h"
#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {

using namespace ew;  // NOLINT: this file is the elementwise family

namespace {

// One element of EI converted to EO's storage.
template <class EI, class EO>
typename EO::Storage convert(typename EI::Storage s) {
  using SO = typename EO::Storage;
  const auto x = EI::load(s);  // double for floats, the integer itself otherwise
  if constexpr (EO::dtype == DType::boolean) {
    return x != 0;
  } else if constexpr (EO::is_float) {
    if constexpr (EI::is_float) return EO::store(x);
    else if constexpr (EO::dtype == DType::f64) return double(x);
    else if constexpr (EO::dtype == DType::f32) return float(x);  // one rounding, not int -> double -> float
    else return EO::store(float(x));
  } else if constexpr (EI::is_float) {
    return saturate_cast<SO>(x);
  } else {
    return SO(x);  // modular since C++20
  }
}

Status cast_into(KernelContext& ctx, DType to) {
  const Tensor& in = ctx.input(0);
  FERRY_ASSIGN_OR_RETURN(Tensor * out, prepare_output(ctx, 0, to, in.dims()));
  return visit_dtype<kAll>(in.dtype(), [&](auto ei) {
    using EI = decltype(ei);
    return visit_dtype<kAll>(to, [&](auto eo) {
      using EO = decltype(eo);
      const auto* pi = in.data<typename EI::Storage>();
      auto* po = out->data<typename EO::Storage>();
      for (int64_t i = 0; i < in.numel(); ++i) po[i] = convert<EI, EO>(pi[i]);
    });
  });
}

Result<DType> cast_target(const NodeContext& ctx) {
  const std::string& to = ctx.attrs<CastAttrs>().to;
  std::optional<DType> t = dtype_from_name(to);
  if (!t) return ctx.error("Cast: 'to' is not a dtype name: '" + to + "'");
  return *t;
}

}  // namespace

Status infer_Cast(InferContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(DType to, cast_target(ctx));
  ctx.set_output(0, to, ctx.input_shape(0));
  return Status::Ok();
}
Status ref_Cast(KernelContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(DType to, cast_target(ctx));
  return cast_into(ctx, to);
}

Status infer_CastLike(InferContext& ctx) {
  ctx.set_output(0, ctx.input_dtype(1), ctx.input_shape(0));
  return Status::Ok();
}
Status ref_CastLike(KernelContext& ctx) { return cast_into(ctx, ctx.input(1).dtype()); }

// --- BitCast: the bytes of x read as dtype `to` (same width; little endian) -----

Status infer_BitCast(InferContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(DType to, dtype_attr(ctx.attrs<BitCastAttrs>().to));
  const DType from = ctx.input_dtype(0);
  if (dtype_size(to) != dtype_size(from))
    return ctx.error(std::string("BitCast: ") + dtype_name(from) + " and " + dtype_name(to) + " differ in width");
  ctx.set_output(0, to, ctx.input_shape(0));
  return Status::Ok();
}

Status ref_BitCast(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  FERRY_ASSIGN_OR_RETURN(DType to, dtype_attr(ctx.attrs<BitCastAttrs>().to));
  if (dtype_size(to) != dtype_size(x.dtype()))
    return ctx.error(std::string("BitCast: ") + dtype_name(x.dtype()) + " and " + dtype_name(to) + " differ in width");
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, to, x.dims()));
  if (x.nbytes()) std::memcpy(y->raw(), x.raw(), x.nbytes());
  if (to == DType::boolean)  // ferry's bool storage is exactly 0 or 1
    for (int64_t i = 0; i < y->numel(); ++i) y->raw()[i] = y->raw()[i] != 0;
  return Status::Ok();
}

}  // namespace ferry
