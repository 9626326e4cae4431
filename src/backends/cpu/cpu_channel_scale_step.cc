// backends/cpu/cpu_channel_scale_step.cc — y = x * g with g one value per image and channel
// ([N, C, 1, 1] or [1, C, 1, 1]: a squeeze-excitation gate) over a channels-last x, written in
// bf16 for readers that are all bf16 steps, or quantized to u8 for readers that all quantize it
// for int8 steps. oneDNN 2.6's binary has no jit kernel for f32 sources and a bf16 destination
// (ref:any), so without this step the product is written in f32 and reordered into bf16
// (MobileNetV3 / EfficientNet / RegNetY: one reorder per block); its u8 destination runs on
// `jit:uni` at ~1 ns an element on one thread, 4-6x this step's time. The rows are
// native/channel_affine.h's with the gate as the scale and a shift of -0 (x * g exactly).
#include <algorithm>
#include <functional>
#include <memory>

#include "backends/cpu/cpu_step_table.h"
#include "backends/cpu/native/channel_affine.h"
#include "backends/cpu/onednn/onednn_common.h"

namespace ferry {
namespace {

/// One tile's rows: x, its leading dimension, y's (same), rows, channels, the gate row.
using RowsFn = std::function<void(const float* x, int64_t at, void* y, int64_t rows, const float* g)>;

class ChannelScaleStep : public Step {
 public:
  /// x: `images` x `pixels` x `channels`; gate `gate_images` (1 or images) x channels; `out`
  /// bf16 (2 bytes an element) or u8 (1).
  ChannelScaleStep(int64_t images, int64_t gate_images, int64_t channels, int64_t pixels, int x_input,
                   RowsFn rows, std::string name)
      : images_(images), gate_images_(gate_images), channels_(channels), pixels_(pixels), x_input_(x_input),
        rows_(std::move(rows)), name_(std::move(name)) {}
  std::string kernel_name() const override { return name_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    if (io->inputs.size() != 2 || !io->inputs[0] || !io->inputs[1] || io->outputs.size() != 1)
      return internal_error(name_ + ": two inputs and one output expected");
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const ChannelScaleStep& s, StepIO* io) : s_(s), io_(io) {}
    Status run() override {
      const float* x = reinterpret_cast<const float*>(io_->inputs[size_t(s_.x_input_)]->raw());
      const float* g = reinterpret_cast<const float*>(io_->inputs[size_t(1 - s_.x_input_)]->raw());
      s_.run(x, g, io_->outputs[0]->raw());
      return Status::Ok();
    }

   private:
    const ChannelScaleStep& s_;
    StepIO* io_;
  };

  /// Tiles of (image, 64 rows of pixels).
  void run(const float* x, const float* g, void* y) const {
    const int64_t C = channels_, P = pixels_, image = C * P, per = (P + 63) / 64, tiles = images_ * per;
#pragma omp parallel for schedule(static) if (images_ * image * 4 >= (1 << 16))
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t n = t / per, p0 = t % per * 64, rows = std::min<int64_t>(64, P - p0), at = n * image + p0 * C;
      rows_(x, at, y, rows, g + (gate_images_ == 1 ? 0 : n) * C);
    }
  }

  int64_t images_, gate_images_, channels_, pixels_;
  int x_input_;
  RowsFn rows_;
  std::string name_;
};

}  // namespace

Result<onednn::Made> channel_scale_step(const StepRequest& r) {
  const bool u8 = r.out_dtype == DType::u8 && r.requant && r.requant->dtype == DType::u8;
  if (r.node.op() != Op::Mul || r.ops.size() != 2 || (r.out_dtype != DType::bf16 && !u8) || r.out_dims.size() != 4)
    return unsupported("channel scale: a 4-D Mul written in bf16 or u8");
  const std::vector<int64_t>& d = r.out_dims;
  const int xi = r.ops[0].dims == d ? 0 : 1;
  const onednn::Operand& x = r.ops[size_t(xi)];
  const onednn::Operand& g = r.ops[size_t(1 - xi)];
  if (x.dims != d || x.dtype != DType::f32 || g.dtype != DType::f32 || g.dims.size() != 4 ||
      (g.dims[0] != 1 && g.dims[0] != d[0]) || g.dims[1] != d[1] || g.dims[2] != 1 || g.dims[3] != 1)
    return unsupported("channel scale: x [N, C, H, W] f32 times g [N or 1, C, 1, 1] f32");
  const auto st = onednn::dense_strides(x.layout);
  if (!st || (*st)[1] != 1 || (*st)[3] != d[1] || (*st)[2] != d[1] * d[3] || (*st)[0] != d[1] * d[2] * d[3])
    return unsupported("channel scale: x channels-last");
  const int64_t C = d[1];
  auto zeros = std::make_shared<std::vector<float>>(size_t(C), -0.f);
  RowsFn rows;
  if (u8) {
    const ChannelAffineU8Fn k = channel_affine_u8_kernel(r.isa);
    if (!k) return unsupported("channel scale: u8 needs AVX-512");
    const float scale = r.requant->scale, zp = float(r.requant->zero_point);
    rows = [k, C, zeros, scale, zp](const float* x, int64_t at, void* y, int64_t n, const float* g) {
      k(x + at, C, static_cast<uint8_t*>(y) + at, C, n, C, g, zeros->data(), false, scale, zp);
    };
  } else {
    const ChannelAffineBf16Fn k = channel_affine_bf16_kernel(r.isa);
    rows = [k, C, zeros](const float* x, int64_t at, void* y, int64_t n, const float* g) {
      k(x + at, C, static_cast<uint16_t*>(y) + at, C, n, C, g, zeros->data(), false);
    };
  }
  onednn::Made made;
  made.want.assign(2, std::nullopt);
  made.want[size_t(xi)] = x.layout;
  made.want[size_t(1 - xi)] = onednn::plain_desc(DType::f32, g.dims);
  made.out = onednn::with_data_type(x.layout, u8 ? dnnl::memory::data_type::u8 : dnnl::memory::data_type::bf16);
  made.step = std::make_unique<ChannelScaleStep>(d[0], g.dims[0], C, d[2] * d[3], xi, std::move(rows),
                                                 "channel_scale_f32_" + onednn::layout_name(x.layout) +
                                                     (u8 ? "+dst_u8" : "+dst_bf16"));
  return made;
}

}  // namespace ferry
