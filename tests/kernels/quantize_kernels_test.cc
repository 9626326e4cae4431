// QuantizeLinear / DequantizeLinear with one scale and zero point (the QDQ activations of
// int8 models): ferry's kernels against the reference kernel, bit for bit — ties to even,
// saturation, NaN, no zero point, u8 and i8, sizes that split across threads; per-axis
// scales are declined (the reference kernel runs them).
#include <gtest/gtest.h>

#include <limits>

#include "backends/cpu/cpu_kernels.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

Tensor scalar_of(DType t, double v) {
  Tensor s = Tensor::empty(t, {});
  s.set_double(0, v);
  return s;
}

/// Runs `fn` and the reference kernel of `op` on the same inputs; expects identical bytes.
void expect_exact(Op op, KernelFn fn, const std::vector<Tensor>& inputs, const std::string& label) {
  Graph g;
  Node* n = detail::build_one_node(g, op, inputs, {}, 1, {});
  ASSERT_TRUE(infer_shapes(g).ok()) << label;
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined()) feeds[detail::input_name(i)] = inputs[i];
  auto want = interpret(g, feeds);
  ASSERT_TRUE(want.ok()) << label << ": " << want.status().to_string();
  std::vector<Tensor> outs{Tensor::zeros((*want)[0].dtype(), (*want)[0].dims()).value()};
  std::vector<const Tensor*> ins;
  for (const Tensor& t : inputs) ins.push_back(t.defined() ? &t : nullptr);
  while (!ins.empty() && !ins.back()) ins.pop_back();
  KernelContext ctx(*n, ins, &outs);
  ASSERT_TRUE(fn(ctx).ok()) << label;
  ASSERT_EQ(outs[0].dtype(), (*want)[0].dtype()) << label;
  ASSERT_EQ(outs[0].nbytes(), (*want)[0].nbytes()) << label;
  EXPECT_EQ(std::memcmp(outs[0].raw(), (*want)[0].raw(), outs[0].nbytes()), 0) << label;
}

TEST(QuantizeKernels, QuantizeMatchesTheReferenceBitForBit) {
  const float scale = 0.05f;
  for (int64_t n : {int64_t(97), int64_t(1 << 16)})
    for (DType t : {DType::u8, DType::i8})
      for (bool zp : {true, false}) {
        Tensor x = randn({n}, uint32_t(n));
        for (int64_t i = 0; i < n; ++i) x.data<float>()[i] *= 4.f;  // some saturate
        // Exact ties (k + 0.5 steps), NaN, +-inf.
        for (int64_t i = 0; i + 6 < n; i += 11) x.data<float>()[i] = (float(i % 9) - 4.f + 0.5f) * scale;
        x.data<float>()[1] = std::numeric_limits<float>::quiet_NaN();
        x.data<float>()[2] = std::numeric_limits<float>::infinity();
        x.data<float>()[3] = -std::numeric_limits<float>::infinity();
        std::vector<Tensor> ins{x, Tensor::scalar(scale)};
        if (zp) ins.push_back(scalar_of(t, t == DType::u8 ? 128 : -3));
        else if (t == DType::i8) continue;  // no zero point: u8 output
        expect_exact(Op::QuantizeLinear, quantize_linear_f32__generic, ins,
                     std::string(dtype_name(t)) + " n=" + std::to_string(n) + (zp ? " zp" : ""));
      }
}

/// The u8 step the int8 convolutions read (make_quantize_u8_step: any dense layout, AVX2 and
/// generic builds): the reference kernel's bytes, ties, saturation, NaN and +-inf included.
TEST(QuantizeKernels, QuantizeU8StepMatchesTheReferenceBitForBit) {
  const float scale = 0.05f;
  for (int64_t n : {int64_t(97), int64_t((1 << 16) + 5)})
    for (Isa isa : {Isa::generic, Isa::avx2}) {
      Tensor x = randn({n}, uint32_t(n));
      for (int64_t i = 0; i < n; ++i) x.data<float>()[i] *= 4.f;
      for (int64_t i = 0; i + 6 < n; i += 11) x.data<float>()[i] = (float(i % 9) - 4.f + 0.5f) * scale;
      x.data<float>()[1] = std::numeric_limits<float>::quiet_NaN();
      x.data<float>()[2] = std::numeric_limits<float>::infinity();
      x.data<float>()[3] = -std::numeric_limits<float>::infinity();
      Graph g;
      detail::build_one_node(g, Op::QuantizeLinear, {x, Tensor::scalar(scale), scalar_of(DType::u8, 128)}, {}, 1, {});
      ASSERT_TRUE(infer_shapes(g).ok());
      std::map<std::string, Tensor> feeds{{detail::input_name(0), x}, {detail::input_name(1), Tensor::scalar(scale)},
                                          {detail::input_name(2), scalar_of(DType::u8, 128)}};
      auto want = interpret(g, feeds);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      Tensor y = Tensor::zeros(DType::u8, {n}).value();
      std::unique_ptr<Step> step = make_quantize_u8_step(scale, 128, n, "plain", isa);
      StepIO io;
      io.inputs = {&x};
      io.outputs = {&y};
      auto bound = step->bind(&io);
      ASSERT_TRUE(bound.ok());
      ASSERT_TRUE((*bound)->run().ok());
      EXPECT_EQ(std::memcmp(y.raw(), (*want)[0].raw(), size_t(n)), 0) << step->kernel_name() << " n=" << n;
    }
}

TEST(QuantizeKernels, DequantizeMatchesTheReferenceBitForBit) {
  for (int64_t n : {int64_t(131), int64_t(1 << 16), int64_t(4096 * 9 + 13)})
    for (DType t : {DType::u8, DType::i8})
      for (bool zp : {true, false}) {
        Tensor x = Tensor::empty(t, {n});
        for (int64_t i = 0; i < n; ++i) x.set_double(i, t == DType::u8 ? double(i % 256) : double(i % 256) - 128);
        std::vector<Tensor> ins{x, Tensor::scalar(0.0371f)};
        if (zp) ins.push_back(scalar_of(t, t == DType::u8 ? 121 : 5));
        for (auto* k : {dequantize_linear__generic, dequantize_linear__avx2})
          expect_exact(Op::DequantizeLinear, k, ins,
                       std::string(dtype_name(t)) + " n=" + std::to_string(n) + (zp ? " zp" : ""));
      }
}

TEST(QuantizeKernels, PerAxisScalesAreDeclined) {
  Graph g;
  Tensor x = randn({2, 3}, 7), s = randn({3}, 8), zp = Tensor::zeros(DType::u8, {3}).value();
  Node* n = detail::build_one_node(g, Op::QuantizeLinear, {x, s, zp}, attrs({{"axis", int64_t(1)}}), 1, {});
  ASSERT_TRUE(infer_shapes(g).ok());
  EXPECT_FALSE(cpu_kernel_accepts_quantize(*n, {nullptr, nullptr, nullptr}, {{2, 3}, {3}, {3}}));
  EXPECT_TRUE(cpu_kernel_accepts_quantize(*n, {nullptr, nullptr, nullptr}, {{2, 3}, {}, {}}));
}

}  // namespace
}  // namespace ferry::testing
