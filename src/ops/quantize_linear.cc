// ops/quantize_linear.cc — QuantizeLinear and DequantizeLinear (ONNX opset 21+,
// integer types).
//
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)
//   DequantizeLinear: y = (x - zero_point) * scale
// scale (and zero_point, same shape or a single value, as ONNX Runtime accepts) is per tensor (a scalar or [1]), per axis
// (1-D of x's dim on `axis`), or blocked (x's rank, dim ceil(x_dim / block_size)
// on `axis`, x's dims elsewhere). Q's output dtype is zero_point's, else
// output_dtype, else u8; DQ's is scale's (or output_dtype). Ties round to even.
#include <cmath>

#include "ops/elementwise.h"

namespace ferry {
namespace {

using ew::saturate_cast;

/// Maps an element of x to its scale / zero_point element.
struct ParamIndex {
  enum Kind { per_tensor, per_axis, blocked } kind = per_tensor;
  int64_t axis = 0, block = 1;
  std::vector<int64_t> x_dims, p_strides;

  int64_t of(int64_t i) const {
    if (kind == per_tensor) return 0;
    int64_t off = 0, rest = i;
    for (int64_t d = int64_t(x_dims.size()) - 1; d >= 0; --d) {
      const int64_t idx = rest % x_dims[size_t(d)];
      rest /= x_dims[size_t(d)];
      if (kind == per_axis) {
        if (d == axis) return idx;
      } else {
        off += (d == axis ? idx / block : idx) * p_strides[size_t(d)];
      }
    }
    return off;
  }
};

Result<ParamIndex> param_index(const NodeContext& ctx, const std::vector<int64_t>& x, const std::vector<int64_t>& p) {
  const char* name = op_name(ctx.node().op());
  ParamIndex pi;
  pi.x_dims = x;
  int64_t numel = 1;
  for (int64_t d : p) numel *= d;
  // QuantizeLinear and DequantizeLinear declare the same attributes.
  const QuantizeLinearAttrs& a = ctx.attrs<QuantizeLinearAttrs>();
  const int64_t block = a.block_size;
  if (numel == 1 && p.size() <= 1 && block == 0) return pi;
  FERRY_ASSIGN_OR_RETURN(pi.axis, normalize_axis(a.axis, int64_t(x.size())));
  if (block == 0) {
    if (p.size() != 1 || p[0] != x[size_t(pi.axis)])
      return ctx.error(std::string(name) + ": per-axis scale must be 1-D of the axis dim " +
                       std::to_string(x[size_t(pi.axis)]));
    pi.kind = ParamIndex::per_axis;
    return pi;
  }
  if (block < 0 || p.size() != x.size()) return ctx.error(std::string(name) + ": blocked scale must have x's rank");
  for (size_t d = 0; d < x.size(); ++d) {
    const int64_t want = int64_t(d) == pi.axis ? (x[d] + block - 1) / block : x[d];
    if (p[d] != want) return ctx.error(std::string(name) + ": blocked scale dims do not match x and block_size");
  }
  pi.kind = ParamIndex::blocked;
  pi.block = block;
  pi.p_strides = strides_of(p);
  return pi;
}

bool quantized_dtype(DType t) {
  return t == DType::i8 || t == DType::u8 || t == DType::i16 || t == DType::u16 || t == DType::i32;
}

Result<DType> named_dtype(const NodeContext& ctx, DType fallback) {
  const std::optional<std::string>& name = ctx.attrs<QuantizeLinearAttrs>().output_dtype;
  if (!name) return fallback;
  auto t = dtype_from_name(*name);
  if (!t) return ctx.error("unknown output_dtype '" + *name + "'");
  return *t;
}

Result<DType> quantize_output(const NodeContext& ctx, bool has_zp, DType zp) {
  FERRY_ASSIGN_OR_RETURN(DType t, named_dtype(ctx, has_zp ? zp : DType::u8));
  if (has_zp && t != zp) return ctx.error("QuantizeLinear: output_dtype differs from the zero point's dtype");
  if (!quantized_dtype(t) || t == DType::i32)
    return ctx.error(std::string("QuantizeLinear: output dtype must be i8, u8, i16 or u16, got ") + dtype_name(t));
  return t;
}

}  // namespace

Status infer_QuantizeLinear(InferContext& ctx) {
  const DType x = ctx.input_dtype(0);
  if (!is_floating(x) && x != DType::i32)
    return ctx.error(std::string("QuantizeLinear: x must be floating or i32, got ") + dtype_name(x));
  FERRY_ASSIGN_OR_RETURN(DType out, quantize_output(ctx, ctx.has_input(2), ctx.has_input(2) ? ctx.input_dtype(2) : DType::u8));
  ctx.set_output(0, out, ctx.input_shape(0));
  return Status::Ok();
}

Status ref_QuantizeLinear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  FERRY_ASSIGN_OR_RETURN(DType out_t, quantize_output(ctx, zp != nullptr, zp ? zp->dtype() : DType::u8));
  if (zp && zp->dims() != scale.dims() && zp->numel() != 1)
    return ctx.error("QuantizeLinear: zero point and scale shapes differ (a zero point is one value or one per scale)");
  const bool zp_scalar = zp && zp->numel() == 1;
  FERRY_ASSIGN_OR_RETURN(ParamIndex pi, param_index(ctx, x.dims(), scale.dims()));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ew::prepare_output(ctx, 0, out_t, x.dims()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t p = pi.of(i);
    // x / scale rounded to f32 first, as the spec's reference computes it (it decides ties).
    const double ratio = scale.dtype() == DType::f64 ? x.get_double(i) / scale.get_double(p)
                                                     : double(float(x.get_double(i)) / float(scale.get_double(p)));
    const double q = std::nearbyint(ratio) + (zp ? zp->get_double(zp_scalar ? 0 : p) : 0.0);
    dispatch_dtype(out_t, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) y->data<T>()[i] = saturate_cast<T>(q);
    });
  }
  return Status::Ok();
}

Status infer_DequantizeLinear(InferContext& ctx) {
  const DType x = ctx.input_dtype(0);
  if (!quantized_dtype(x))
    return ctx.error(std::string("DequantizeLinear: x must be i8, u8, i16, u16 or i32, got ") + dtype_name(x));
  if (ctx.has_input(2) && ctx.input_dtype(2) != x)
    return ctx.error("DequantizeLinear: zero point dtype must be x's");
  FERRY_ASSIGN_OR_RETURN(DType out, named_dtype(ctx, ctx.input_dtype(1)));
  if (!is_floating(out)) return ctx.error(std::string("DequantizeLinear: scale must be floating, got ") + dtype_name(out));
  ctx.set_output(0, out, ctx.input_shape(0));
  return Status::Ok();
}

Status ref_DequantizeLinear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (zp && zp->dims() != scale.dims() && zp->numel() != 1)
    return ctx.error("DequantizeLinear: zero point and scale shapes differ (a zero point is one value or one per scale)");
  const bool zp_scalar = zp && zp->numel() == 1;
  FERRY_ASSIGN_OR_RETURN(DType out_t, named_dtype(ctx, scale.dtype()));
  FERRY_ASSIGN_OR_RETURN(ParamIndex pi, param_index(ctx, x.dims(), scale.dims()));
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ew::prepare_output(ctx, 0, out_t, x.dims()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t p = pi.of(i);
    // (x - zp) has at most 17 bits, so the product is exact in double and rounds once on store.
    y->set_double(i, (double(x.get_int(i)) - (zp ? double(zp->get_int(zp_scalar ? 0 : p)) : 0.0)) * scale.get_double(p));
  }
  return Status::Ok();
}

}  // namespace ferry
