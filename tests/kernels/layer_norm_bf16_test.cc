// The bf16-output LayerNorm kernels (backends/cpu/native/layer_norm.h) against the reference
// LayerNormalization rounded to bf16: row lengths that leave vector tails, with and without a
// bias, every ISA the host runs; each element within one bf16 step of the rounded reference
// (the mean / variance summation order differs from the reference's, which may move a value
// across a rounding boundary), plus the f32 rounding of its terms where y cancels to near 0.
#include <cmath>

#include "backends/cpu/native/layer_norm.h"
#include "ir/dtype.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

TEST(LayerNormBf16, RowsMatchTheRoundedReference) {
  int checked = 0;
  for (Isa isa : {Isa::generic, Isa::avx512}) {
    if (isa > host_isa()) continue;
    const LayerNormBf16Fn kernel = layer_norm_bf16_kernel(isa);
    for (int64_t cols : {1, 15, 16, 17, 96, 100, 768}) {
      for (bool bias : {true, false}) {
        const int64_t rows = 5;
        Tensor x = randn({rows, cols}, 600 + cols), s = randn({cols}, 601), b = randn({cols}, 602);
        for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 3.f + 4.f * x.data<float>()[i];  // a mean to remove
        std::vector<Tensor> ins = {x, s};
        if (bias) ins.push_back(b);
        auto want = run_op(Op::LayerNormalization, ins, attrs({{"axis", int64_t(-1)}, {"epsilon", 1e-5}}));
        ASSERT_TRUE(want.ok()) << want.status().to_string();
        std::vector<uint16_t> y(size_t(rows * cols), 0xffff);
        kernel(x.data<float>(), y.data(), rows, cols, s.data<float>(), bias ? b.data<float>() : nullptr, 1e-5f);
        for (int64_t i = 0; i < rows * cols; ++i) {
          const float w = (*want)[0].data<float>()[i], got = bf16_to_f32(y[size_t(i)]);
          // one bf16 step at |w|, plus f32 rounding of the terms (a y near 0 cancels d * s against b)
          const int64_t c = i % cols;
          const float terms = 4.f * std::fabs(s.data<float>()[c]) + (bias ? std::fabs(b.data<float>()[c]) : 0.f);
          const float step = (w == 0 ? 0.f : std::ldexp(1.f, std::ilogb(w) - 7)) + 1e-5f * terms;
          ASSERT_LE(std::fabs(got - w), step) << "isa " << int(isa) << " cols " << cols << " bias " << bias << " at " << i
                                              << ": " << got << " vs " << w;
        }
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 14);
}

}  // namespace
}  // namespace ferry::testing
