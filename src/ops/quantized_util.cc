// ops/quantized_util.cc — see quantized_util.h.
#include "ops/quantized_util.h"

#include <cmath>

#include "ops/conv_util.h"
#include "ops/elementwise.h"

namespace ferry {

bool is_quantized8(DType t) { return t == DType::u8 || t == DType::i8; }

Status check_required_inputs(const InferContext& ctx, const std::vector<const char*>& names) {
  for (size_t i = 0; i < names.size(); ++i)
    if (!ctx.has_input(i)) return invalid_model(std::string("input ") + std::to_string(i) + " (" + names[i] + ") is required");
  return Status::Ok();
}

Result<Tensor> shifted_operand(const Tensor& x, const Tensor* zp, int64_t axis, DType out, const std::string& what) {
  FERRY_ASSIGN_OR_RETURN(Tensor y, Tensor::zeros(out, x.dims()));
  const int64_t nzp = zp ? zp->numel() : 1;
  int64_t inner = 1, channels = 1;
  if (nzp != 1) {
    if (axis < 0 || axis >= x.rank() || zp->rank() != 1 || nzp != x.dim(axis))
      return invalid_model(what + " must be a scalar or 1-D of " +
                           (axis >= 0 && axis < x.rank() ? std::to_string(x.dim(axis)) : std::string("1")) +
                           " values, got shape " + zp->shape().to_string());
    channels = nzp;
    for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = (i / inner) % channels;
    const double v = double(x.get_int(i)) - (zp ? double(zp->get_int(nzp == 1 ? 0 : c)) : 0.0);
    y.set_double(i, v);
  }
  return y;
}

Status check_quant_params(const Tensor& scale, const Tensor* zp, int64_t channels, DType zp_dtype,
                          const std::string& what) {
  if (!is_floating(scale.dtype()))
    return invalid_model(what + " scale must be floating, got " + dtype_name(scale.dtype()));
  if (scale.numel() != 1 && (scale.rank() != 1 || scale.numel() != channels))
    return invalid_model(what + " scale must be a scalar or 1-D of " + std::to_string(channels) + " values, got shape " +
                         scale.shape().to_string());
  if (!zp) return Status::Ok();
  if (zp->dtype() != zp_dtype)
    return invalid_model(what + " zero point must be " + dtype_name(zp_dtype) + ", got " + dtype_name(zp->dtype()));
  if (zp->numel() != scale.numel())
    return invalid_model(what + " zero point has " + std::to_string(zp->numel()) + " values, its scale " +
                         std::to_string(scale.numel()));
  return Status::Ok();
}

std::vector<double> requant_multipliers(const Tensor& sx, const Tensor& sw, const Tensor& sy, int64_t n) {
  std::vector<double> m(static_cast<size_t>(n));
  for (int64_t c = 0; c < n; ++c) {
    const float x = float(sx.get_double(sx.numel() == 1 ? 0 : c));
    const float w = float(sw.get_double(sw.numel() == 1 ? 0 : c));
    m[size_t(c)] = double(float(x * w) / float(sy.get_double(0)));
  }
  return m;
}

void store_requantized(Tensor& y, int64_t i, double acc, double m, double zp) {
  const double q = std::nearbyint(acc * m) + zp;
  if (y.dtype() == DType::u8)
    y.data<uint8_t>()[i] = ew::saturate_cast<uint8_t>(q);
  else
    y.data<int8_t>()[i] = ew::saturate_cast<int8_t>(q);
}

}  // namespace ferry
