// backends/cpu/cpu_dynamic_int8_matmul_step.cc — see cpu_dynamic_int8_matmul_step.h.
#include "backends/cpu/cpu_dynamic_int8_matmul_step.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/native/u8s8_gemm.h"

namespace ferry {
namespace {

using onednn::Made;
using onednn::Operand;

class DynamicInt8MatMulStep : public Step {
 public:
  DynamicInt8MatMulStep(U8S8Packed b, int64_t M, int32_t offset) : b_(std::move(b)), M_(M), offset_(offset) {
    name_ = std::string("u8s8_matmul_dynamic_zp__") + (b_.vnni ? "avx512_vnni" : "avx2_madd16");
  }
  std::string kernel_name() const override { return name_; }
  Result<std::unique_ptr<BoundStep>> bind(StepIO* io) const override {
    if (io->inputs.size() < 2 || !io->inputs[0] || !io->inputs[1] || io->outputs.empty() || !io->outputs[0])
      return internal_error(name_ + " step: a_q, a_zp and y expected");
    return std::unique_ptr<BoundStep>(std::make_unique<Bound>(*this, io));
  }

 private:
  class Bound : public BoundStep {
   public:
    Bound(const DynamicInt8MatMulStep& s, StepIO* io)
        : s_(s),
          io_(io),
          acc_(size_t(s.M_ * s.b_.Np)),
          rows_(s.b_.K % 4 ? size_t(s.M_ * u8s8_row_bytes(s.b_)) : 0),
          rowsum_(size_t(s.M_)) {}
    Status run() override {
      const U8S8Packed& b = s_.b_;
      const uint8_t* a = io_->inputs[0]->data<uint8_t>();
      int64_t lda = b.K;
      if (!rows_.empty()) {  // K not a multiple of 4: rows padded with zeros
        lda = u8s8_row_bytes(b);
        for (int64_t m = 0; m < s_.M_; ++m) std::memcpy(rows_.data() + m * lda, a + m * b.K, size_t(b.K));
        a = rows_.data();
      }
      for (int64_t m = 0; m < s_.M_; ++m) {
        int32_t sum = 0;
        for (int64_t k = 0; k < b.K; ++k) sum += a[m * lda + k];
        rowsum_[size_t(m)] = sum;
      }
      const int64_t tiles = u8s8_tiles(b);
      const int nt = int(std::min<int64_t>(omp_get_max_threads(), tiles));
      if (nt <= 1) {
        columns(a, lda, 0, tiles);
        return Status::Ok();
      }
#pragma omp parallel num_threads(nt)
      {
        const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
        columns(a, lda, tiles * t / n, tiles * (t + 1) / n);
      }
      return Status::Ok();
    }

   private:
    /// Column tiles [t0, t1): the integer sums of the codes c = B' - offset, then
    /// y = f32(sum a c - a_zp colsum(c) + offset (rowsum(a) - K a_zp)) = f32(sum (a - a_zp) B').
    void columns(const uint8_t* a, int64_t lda, int64_t t0, int64_t t1) {
      const U8S8Packed& b = s_.b_;
      u8s8_sums(a, lda, s_.M_, b, acc_.data(), t0, t1);
      const int32_t zp = int32_t(io_->inputs[1]->data<uint8_t>()[0]);
      float* y = io_->outputs[0]->data<float>();
      const int64_t n0 = t0 * 64, n1 = std::min(b.N, t1 * 64);
      for (int64_t m = 0; m < s_.M_; ++m) {
        const int32_t row = s_.offset_ * (rowsum_[size_t(m)] - int32_t(b.K) * zp);
        for (int64_t n = n0; n < n1; ++n)
          y[m * b.N + n] = float(acc_[size_t(m * b.Np + n)] - zp * b.colsum[size_t(n)] + row);
      }
    }

    const DynamicInt8MatMulStep& s_;
    StepIO* io_;
    std::vector<int32_t> acc_;
    std::vector<uint8_t> rows_;
    std::vector<int32_t> rowsum_;
  };

  U8S8Packed b_;
  int64_t M_;
  int32_t offset_;  ///< B' = c + offset_ with s8 codes c (uint8 weights minus their zero point span [-255, 255])
  std::string name_;
};

}  // namespace

Result<Made> make_dynamic_int8_matmul_step(const StepRequest& r) {
  const std::vector<Operand>& ops = r.ops;
  if (r.isa < Isa::avx2) return unsupported("dynamic int8 matmul: needs AVX2");
  if (ops.size() != 3 || ops[0].dtype != DType::u8 || ops[0].dims.size() < 2 || ops[2].dtype != DType::u8)
    return unsupported("dynamic int8 matmul: u8 a_q of rank >= 2 and a u8 zero point");
  const Tensor* b = ops[1].constant;
  if (!b || b->dtype() != DType::f32 || b->rank() != 2 || b->dims()[0] != ops[0].dims.back())
    return unsupported("dynamic int8 matmul: a constant f32 B [K, N]");
  const int64_t K = b->dims()[0], N = b->dims()[1];
  const float* bd = b->data<float>();
  float lo = bd[0], hi = bd[0];
  for (int64_t i = 0; i < K * N; ++i) {
    if (!(std::fabs(bd[i]) <= 255.f) || bd[i] != std::nearbyint(bd[i]))
      return unsupported("dynamic int8 matmul: B' is not integer-valued in [-255, 255]");
    lo = std::min(lo, bd[i]), hi = std::max(hi, bd[i]);
  }
  if (hi - lo > 255.f) return unsupported("dynamic int8 matmul: B' spans more than 256 values");
  const int32_t offset = int32_t(lo) + 128;  // codes B' - offset in [-128, 127]
  if (K > 16384) return unsupported("dynamic int8 matmul: K above 16384 (int32 sums)");
  int64_t M = 1;
  for (size_t i = 0; i + 1 < ops[0].dims.size(); ++i) M *= ops[0].dims[i];
  if (M < 1 || K < 1 || N < 1) return unsupported("dynamic int8 matmul: empty");
  const bool vnni = r.isa >= Isa::avx512 && u8s8_host_has_vnni512();
  Made made;
  made.step = std::make_unique<DynamicInt8MatMulStep>(
      u8s8_pack(K, N, vnni, [&](int64_t k, int64_t n) { return int32_t(bd[k * N + n]) - offset; }), M, offset);
  made.want.assign(2, std::nullopt);
  made.want[0] = onednn::plain_desc(DType::u8, ops[0].dims);
  made.out = dnnl::memory::desc();  // plain
  return made;
}

}  // namespace ferry
