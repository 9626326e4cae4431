#include "backends/cpu/cpu_epilogue.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "backends/cpu/native/u8_round.h"

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

/// Bytes of someone else's memory (the step context's scratch area) as a Buffer, so the inner
/// step of a QuantizingEpilogueStep writes its f32 output there through an ordinary Tensor.
class BorrowedBytes final : public Buffer {
 public:
  BorrowedBytes(uint8_t* p, size_t n) : p_(p), n_(n) {}
  uint8_t* data() override { return p_; }
  size_t size() const override { return n_; }

 private:
  uint8_t* p_;
  size_t n_;
};

/// y[i] = u8 of x[i] (native/u8_round.h) for i < n.
FERRY_TARGET_AVX512 void quantize_chunk_u8(const float* x, uint8_t* y, int64_t n, float scale, float zero_point) {
  const U8Store store(scale, zero_point);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    store(y + i, m, _mm512_maskz_loadu_ps(m, x + i));
  }
}

/// The primitive step writing its f32 output into scratch, then, chunk by chunk while it is in
/// cache, the activation in place and the requantization into output 0 (u8), as one step.
class QuantizingEpilogueStep : public Step {
 public:
  QuantizingEpilogueStep(std::unique_ptr<Step> inner, ActivationChunk f, std::string name, float alpha,
                         std::vector<int64_t> dims, const onednn::Int8Requant& q)
      : inner_(std::move(inner)), f_(f), name_(std::move(name)), alpha_(alpha), dims_(std::move(dims)),
        scale_(q.scale), zero_point_(float(q.zero_point)) {
    for (int64_t d : dims_) count_ *= d;
  }
  std::string kernel_name() const override { return name_; }
  size_t scratch_bytes() const override { return inner_offset() + size_t(count_) * sizeof(float); }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    auto b = std::make_unique<Bound>(*this, io);
    FERRY_TRY(b->init());
    return std::unique_ptr<BoundStep>(std::move(b));
  }

 private:
  size_t inner_offset() const { return (inner_->scratch_bytes() + 63) / 64 * 64; }

  class Bound : public BoundStep {
   public:
    Bound(const QuantizingEpilogueStep& s, StepIO* io) : s_(s), io_(io) {}
    Status init() {
      const size_t bytes = size_t(s_.count_) * sizeof(float);
      FERRY_ASSIGN_OR_RETURN(f32_, Tensor::view(DType::f32, s_.dims_,
                                                std::make_shared<BorrowedBytes>(io_->scratch + s_.inner_offset(), bytes)));
      inner_io_ = {io_->inputs, {&f32_}, io_->scratch};
      FERRY_ASSIGN_OR_RETURN(inner_, s_.inner_->bind(&inner_io_));
      return Status::Ok();
    }
    Status run() override {
      FERRY_TRY(inner_->run());
      float* y = f32_.data<float>();
      uint8_t* q = io_->outputs[0]->raw();
      const int64_t n = s_.count_, chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (n >= 2 * kChunk)
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t at = c * kChunk, len = std::min(kChunk, n - at);
        s_.f_(y + at, y + at, len, s_.alpha_);
        quantize_chunk_u8(y + at, q + at, len, s_.scale_, s_.zero_point_);
      }
      return Status::Ok();
    }

   private:
    static constexpr int64_t kChunk = 4096;
    const QuantizingEpilogueStep& s_;
    StepIO* io_;
    Tensor f32_;
    StepIO inner_io_;
    std::unique_ptr<BoundStep> inner_;
  };
  std::unique_ptr<Step> inner_;
  ActivationChunk f_;
  std::string name_;
  float alpha_;
  std::vector<int64_t> dims_;
  int64_t count_ = 1;
  float scale_, zero_point_;
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


bool own_requantized_activation(Activation a, Isa isa) {
  if (isa < Isa::avx512 || !native_activation(a, isa)) return false;
  return !exact_post_ops(a, 0.f, 1.f);
}

Result<onednn::Made> append_requantized_activation(onednn::Made made, Activation a, float alpha, Isa isa,
                                                   const onednn::Int8Requant& q) {
  ActivationChunk f = native_activation(a, isa);
  if (!f || isa < Isa::avx512 || q.dtype != DType::u8)
    return unsupported("an own activation with a u8 output: AVX-512 and a u8 destination only");
  if (made.out.data_type() != dnnl::memory::data_type::f32) return unsupported("own epilogue kernels: f32 output only");
  FERRY_ASSIGN_OR_RETURN(std::optional<ChannelPadding> pad, onednn::channel_padding(made.out));
  if (pad) return unsupported("an own activation with a u8 output: a layout without padded channels");
  const dnnl::memory::dims d = made.out.dims();
  std::string name = made.step->kernel_name() + "+" + native_activation_name(a, isa) + "+dst_u8";
  made.step = std::make_unique<QuantizingEpilogueStep>(std::move(made.step), f, std::move(name), alpha,
                                                       std::vector<int64_t>(d.begin(), d.end()), q);
  made.out = onednn::with_data_type(made.out, dnnl::memory::data_type::u8);
  return made;
}

}  // namespace ferry
