// backends/cpu/cpu_layer_norm_step.cc — LayerNormalization over the last axis of a plain f32
// input, written in bf16 (native/layer_norm.h) where every reader is a bf16 step, or in u8 where
// every reader quantizes it to u8 (int8 steps' input): the f32 output and the reorder into bf16
// (or the QuantizeLinear pass) that oneDNN's layer normalization (same type in and out in 2.6)
// would need are one pass. Constant scale and bias; rows split across the threads.
#include <algorithm>

#include "backends/cpu/cpu_step_table.h"
#include "backends/cpu/native/layer_norm.h"
#include "backends/cpu/onednn/onednn_common.h"
#include "ir/op_attrs.h"

namespace ferry {
namespace {

class LayerNormLowStep : public Step {
 public:
  /// bf16 output, or (q set) u8 quantized by q.
  LayerNormLowStep(int64_t rows, int64_t cols, std::vector<float> scale, std::vector<float> bias, float eps, Isa isa,
                   const onednn::Int8Requant* q)
      : rows_(rows), cols_(cols), scale_(std::move(scale)), bias_(std::move(bias)), eps_(eps) {
    if (q) u8_ = layer_norm_u8_kernel(isa), q_scale_ = q->scale, q_zero_ = float(q->zero_point);
    else bf16_ = layer_norm_bf16_kernel(isa);
  }
  std::string kernel_name() const override { return u8_ ? "layer_norm_f32+dst_u8" : "layer_norm_f32+dst_bf16"; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    if (io->inputs.empty() || !io->inputs[0] || io->outputs.size() != 1)
      return internal_error(kernel_name() + ": one input and one output expected");
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const LayerNormLowStep& s, StepIO* io) : s_(s), io_(io) {}
    Status run() override {
      const float* x = reinterpret_cast<const float*>(io_->inputs[0]->raw());
      void* y = io_->outputs[0]->raw();
      const int64_t rows = s_.rows_, cols = s_.cols_, chunk = 8, chunks = (rows + chunk - 1) / chunk;
      const float* b = s_.bias_.empty() ? nullptr : s_.bias_.data();
#pragma omp parallel for schedule(static) if (rows * cols * 4 >= (1 << 16))
      for (int64_t k = 0; k < chunks; ++k) {
        const int64_t r0 = k * chunk, n = std::min(chunk, rows - r0);
        if (s_.u8_)
          s_.u8_(x + r0 * cols, static_cast<uint8_t*>(y) + r0 * cols, n, cols, s_.scale_.data(), b, s_.eps_, s_.q_scale_,
                 s_.q_zero_);
        else
          s_.bf16_(x + r0 * cols, static_cast<uint16_t*>(y) + r0 * cols, n, cols, s_.scale_.data(), b, s_.eps_);
      }
      return Status::Ok();
    }

   private:
    const LayerNormLowStep& s_;
    StepIO* io_;
  };

  int64_t rows_, cols_;
  std::vector<float> scale_, bias_;
  float eps_;
  LayerNormBf16Fn bf16_ = nullptr;
  LayerNormU8Fn u8_ = nullptr;
  float q_scale_ = 0, q_zero_ = 0;
};

std::vector<float> layer_norm_constant(const onednn::Operand& o) {
  const float* p = o.constant->data<float>();
  return std::vector<float>(p, p + onednn::numel(o.dims));
}

}  // namespace

Result<onednn::Made> layer_norm_low_step(const StepRequest& r) {
  const std::vector<onednn::Operand>& ops = r.ops;
  const onednn::Operand& X = ops[0];
  const bool u8 = r.out_dtype == DType::u8 && r.requant && r.requant->dtype == DType::u8 && layer_norm_u8_kernel(r.isa);
  if ((r.out_dtype != DType::bf16 && !u8) || X.dtype != DType::f32 || X.dims.size() < 2 || !onednn::is_plain(X.layout))
    return unsupported("layer norm bf16 / u8: a plain f32 input written in bf16 or (AVX-512) u8");
  const LayerNormalizationAttrs& a = r.node.attrs<LayerNormalizationAttrs>();
  const int64_t axis = a.axis < 0 ? a.axis + int64_t(X.dims.size()) : a.axis;
  if (axis != int64_t(X.dims.size()) - 1) return unsupported("layer norm bf16: the last axis only");
  const int64_t C = X.dims.back();
  const onednn::Operand* S = ops.size() > 1 && ops[1].present() ? &ops[1] : nullptr;
  const onednn::Operand* B = ops.size() > 2 && ops[2].present() ? &ops[2] : nullptr;
  if (!S || !S->constant || S->dtype != DType::f32 || onednn::numel(S->dims) != C ||
      (B && (!B->constant || B->dtype != DType::f32 || onednn::numel(B->dims) != C)))
    return unsupported("layer norm bf16: constant f32 scale / bias of size C");
  onednn::Made made;
  made.want.assign(ops.size(), std::nullopt);
  made.want[0] = X.layout;
  made.out = onednn::plain_desc(r.out_dtype, X.dims);
  made.step = std::make_unique<LayerNormLowStep>(onednn::numel(X.dims) / C, C, layer_norm_constant(*S),
                                                 B ? layer_norm_constant(*B) : std::vector<float>{}, float(a.epsilon),
                                                 r.isa, u8 ? r.requant : nullptr);
  return made;
}

}  // namespace ferry
