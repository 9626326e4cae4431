// backends/cpu/cpu_channel_scale_step.cc — y = x * g with g one value per image and channel
// ([N, C, 1, 1] or [1, C, 1, 1]: a squeeze-excitation gate) over a channels-last x (the
// layout of the bf16 steps' activations), written in bf16 for readers that are all bf16 steps. oneDNN 2.6's binary has no jit kernel for f32 sources and a bf16 destination
// (ref:any), so without this step the product is written in f32 and reordered into bf16
// (MobileNetV3 / EfficientNet / RegNetY: one reorder per block). The rows are
// native/channel_affine.h's with the gate as the scale and a shift of -0 (x * g exactly).
#include <algorithm>

#include "backends/cpu/cpu_step_table.h"
#include "backends/cpu/native/channel_affine.h"
#include "backends/cpu/onednn/onednn_common.h"

namespace ferry {
namespace {

class ChannelScaleStep : public Step {
 public:
  /// x: `images` x `pixels` x `channels`; gate `gate_images` (1 or images) x channels.
  ChannelScaleStep(int64_t images, int64_t gate_images, int64_t channels, int64_t pixels, int x_input, Isa isa,
                   std::string name)
      : images_(images), gate_images_(gate_images), channels_(channels), pixels_(pixels), x_input_(x_input), zeros_(size_t(channels), -0.f), kernel_(channel_affine_bf16_kernel(isa)),
        name_(std::move(name)) {}
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
      s_.run(x, g, reinterpret_cast<uint16_t*>(io_->outputs[0]->raw()));
      return Status::Ok();
    }

   private:
    const ChannelScaleStep& s_;
    StepIO* io_;
  };

  /// Tiles of (image, 64 rows of pixels).
  void run(const float* x, const float* g, uint16_t* y) const {
    const int64_t C = channels_, P = pixels_, image = C * P, per = (P + 63) / 64, tiles = images_ * per;
#pragma omp parallel for schedule(static) if (images_ * image * 4 >= (1 << 16))
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t n = t / per, p0 = t % per * 64, rows = std::min<int64_t>(64, P - p0), at = n * image + p0 * C;
      kernel_(x + at, C, y + at, C, rows, C, g + (gate_images_ == 1 ? 0 : n) * C, zeros_.data(), false);
    }
  }

  int64_t images_, gate_images_, channels_, pixels_;
  int x_input_;
  std::vector<float> zeros_;
  ChannelAffineBf16Fn kernel_;
  std::string name_;
};

}  // namespace

Result<onednn::Made> channel_scale_bf16_step(const StepRequest& r) {
  if (r.node.op() != Op::Mul || r.ops.size() != 2 || r.out_dtype != DType::bf16 || r.out_dims.size() != 4)
    return unsupported("channel scale: a 4-D Mul written in bf16");
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
  onednn::Made made;
  made.want.assign(2, std::nullopt);
  made.want[size_t(xi)] = x.layout;
  made.want[size_t(1 - xi)] = onednn::plain_desc(DType::f32, g.dims);
  made.out = onednn::with_data_type(x.layout, dnnl::memory::data_type::bf16);
  made.step = std::make_unique<ChannelScaleStep>(d[0], g.dims[0], d[1], d[2] * d[3], xi, r.isa,
                                                 "channel_scale_f32_" + onednn::layout_name(x.layout) + "+dst_bf16");
  return made;
}

}  // namespace ferry
