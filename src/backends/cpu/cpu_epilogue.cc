#include "backends/cpu/cpu_epilogue.h"

#include <cmath>

namespace ferry {
namespace {

using onednn::PostOp;
using dnnl::algorithm;

/// The primitive step, then the activation over its output (in place), as one step.
class EpilogueStep : public Step {
 public:
  EpilogueStep(std::unique_ptr<Step> inner, ActivationChunk f, std::string name, float alpha, int64_t count,
               std::optional<ChannelPadding> pad)
      : inner_(std::move(inner)), f_(f), name_(std::move(name)), alpha_(alpha), count_(count), pad_(pad) {}
  std::string kernel_name() const override { return name_; }
  size_t scratch_bytes() const override { return inner_->scratch_bytes(); }
  int in_place_input() const override { return inner_->in_place_input(); }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    FERRY_ASSIGN_OR_RETURN(auto inner, inner_->bind(io));
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io, std::move(inner)));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const EpilogueStep& s, StepIO* io, std::unique_ptr<BoundStep> inner)
        : s_(s), io_(io), inner_(std::move(inner)) {}
    Status run() override {
      FERRY_TRY(inner_->run());
      float* y = reinterpret_cast<float*>(io_->outputs[0]->raw());
      run_activation(s_.f_, y, y, s_.count_, s_.alpha_);
      if (s_.pad_) s_.pad_->zero(y);
      return Status::Ok();
    }

   private:
    const EpilogueStep& s_;
    StepIO* io_;
    std::unique_ptr<BoundStep> inner_;
  };
  std::unique_ptr<Step> inner_;
  ActivationChunk f_;
  std::string name_;
  float alpha_;
  int64_t count_;
  std::optional<ChannelPadding> pad_;
};

}  // namespace

std::optional<std::vector<PostOp>> exact_post_ops(Activation a, float alpha, float beta) {
  auto one = [](algorithm alg, float x = 0.f, float y = 0.f) {
    return std::vector<PostOp>{PostOp{PostOp::kEltwise, alg, x, y, -1}};
  };
  switch (a) {
    case Activation::kNone: return std::vector<PostOp>{};
    case Activation::kRelu: return one(algorithm::eltwise_relu);
    case Activation::kLeakyRelu: return one(algorithm::eltwise_relu, alpha);
    case Activation::kClip: return one(algorithm::eltwise_clip, alpha, beta);  // [min, max]; +-inf when omitted
    case Activation::kHardSwish: return one(algorithm::eltwise_hardswish);
    case Activation::kHardSigmoid: {  // clip(alpha x + beta, 0, 1)
      auto v = one(algorithm::eltwise_linear, alpha, beta);
      v.push_back({PostOp::kEltwise, algorithm::eltwise_clip, 0.f, 1.f, -1});
      return v;
    }
    // oneDNN 2.6's Gelu post-ops are within 2.6e-7 of the fp64 formula over [-12, 12] (AVX-512
    // and AVX2; bench/RESULTS.md), and cheaper than a second pass over a large output.
    case Activation::kGelu: return one(algorithm::eltwise_gelu_erf);
    case Activation::kGeluTanh: return one(algorithm::eltwise_gelu_tanh);
    default: return std::nullopt;
  }
}

std::optional<std::vector<PostOp>> bf16_output_post_ops(Activation a, float alpha, float beta) {
  if (auto exact = exact_post_ops(a, alpha, beta)) return exact;
  auto one = [](algorithm alg, float x = 0.f) { return std::vector<PostOp>{PostOp{PostOp::kEltwise, alg, x, 0.f, -1}}; };
  switch (a) {
    case Activation::kSigmoid: return one(algorithm::eltwise_logistic);
    case Activation::kTanh: return one(algorithm::eltwise_tanh);
    case Activation::kSiLU: return one(algorithm::eltwise_swish, 1.f);
    default: return std::nullopt;
  }
}

bool cpu_applies(Activation a, Isa isa) {
  return exact_post_ops(a, 0.f, 1.f).has_value() || native_activation(a, isa) != nullptr;
}

Result<onednn::Made> append_native_activation(onednn::Made made, Activation a, float alpha, Isa isa) {
  ActivationChunk f = native_activation(a, isa);
  if (!f) return unsupported(std::string("no own kernel for the ") + activation_name(a) + " epilogue on " + isa_name(isa));
  if (made.out.data_type() != dnnl::memory::data_type::f32) return unsupported("own epilogue kernels: f32 output only");
  FERRY_ASSIGN_OR_RETURN(std::optional<ChannelPadding> pad, onednn::channel_padding(made.out));
  if (activation_keeps_zero(a)) pad.reset();
  const int64_t count = int64_t(made.out.get_size() / sizeof(float));
  std::string name = made.step->kernel_name() + "+" + native_activation_name(a, isa);
  made.step = std::make_unique<EpilogueStep>(std::move(made.step), f, std::move(name), alpha, count, pad);
  return made;
}

}  // namespace ferry
