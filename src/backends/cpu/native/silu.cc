#include "backends/cpu/native/silu.h"

#include <algorithm>

#include "backends/cpu/native/simd_math.h"

namespace ferry {
namespace {

constexpr int64_t kParallelMin = 1 << 15;
constexpr int64_t kChunk = 4096;

FERRY_INLINE void silu_body(const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = v / (1.0f + simd::exp(-v));  // one rounding fewer than v * sigmoid(v)
  }
}

using Chunk = void (*)(const float*, float*, int64_t);

class SiluStep : public Step {
 public:
  SiluStep(int64_t count, Chunk chunk, const char* name) : count_(count), chunk_(chunk), name_(name) {}
  std::string kernel_name() const override { return name_; }
  int in_place_input() const override { return 0; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    if (io->inputs.size() != 1 || io->outputs.size() != 1 || !io->inputs[0])
      return internal_error("silu step: one input and one output expected");
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const SiluStep& s, StepIO* io) : s_(s), io_(io) {}
    Status run() override {
      // Raw pointers: the planned (possibly blocked) buffers hold count_ floats each.
      const float* x = reinterpret_cast<const float*>(io_->inputs[0]->raw());
      float* y = reinterpret_cast<float*>(io_->outputs[0]->raw());
      const int64_t n = s_.count_;
      const Chunk chunk = s_.chunk_;
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
      for (int64_t blk = 0; blk < (n + kChunk - 1) / kChunk; ++blk) {
        const int64_t lo = blk * kChunk;
        chunk(x + lo, y + lo, std::min(n, lo + kChunk) - lo);
      }
      return Status::Ok();
    }

   private:
    const SiluStep& s_;
    StepIO* io_;
  };
  int64_t count_;
  Chunk chunk_;
  const char* name_;
};

}  // namespace

FERRY_TARGET_AVX512 void silu_f32__avx512(const float* x, float* y, int64_t n) { silu_body(x, y, n); }
FERRY_TARGET_AVX2 void silu_f32__avx2(const float* x, float* y, int64_t n) { silu_body(x, y, n); }

std::unique_ptr<Step> make_silu_step(int64_t count, Isa isa) {
  if (isa >= Isa::avx512) return std::make_unique<SiluStep>(count, &silu_f32__avx512, "silu_f32__avx512");
  if (isa >= Isa::avx2) return std::make_unique<SiluStep>(count, &silu_f32__avx2, "silu_f32__avx2");
  return nullptr;
}

}  // namespace ferry
