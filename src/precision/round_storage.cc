#include "precision/round_storage.h"

namespace ferry {

float round_to_bf16(float x) { return bf16_to_f32(f32_to_bf16(x)); }
float round_to_f16(float x) { return f16_to_f32(f32_to_f16(x)); }

void round_storage(DType precision, const float* x, float* out, int64_t n) {
  if (precision == DType::bf16) {
    for (int64_t i = 0; i < n; ++i) out[i] = round_to_bf16(x[i]);
  } else if (precision == DType::f16) {
    for (int64_t i = 0; i < n; ++i) out[i] = round_to_f16(x[i]);
  } else if (out != x) {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i];
  }
}

Result<Tensor> rounded_copy(const Tensor& t, DType precision) {
  if (t.dtype() != DType::f32) return invalid_argument("rounded_copy: expected f32, got " + t.type_string());
  FERRY_ASSIGN_OR_RETURN(Tensor out, Tensor::uninitialized(DType::f32, t.dims()));
  round_storage(precision, t.data<float>(), out.data<float>(), t.numel());
  return out;
}

}  // namespace ferry
