// quantize_dynamic's DynamicQuantizeLinear -> MatMulInteger -> Cast(f32) on the CPU
// backend's exact integer step (cpu_dynamic_int8_matmul_step.h) against the reference
// interpreter's MatMulInteger (exact int32): bit-equal (the f32 MatMul the lowering
// leaves rounds its partial sums past 2^24; on these random operands they stay below,
// so that path passes too: a zero point or offset sign error fails every case).
// int8 and uint8 weights (zero points 0, 119), K not a multiple of 4, batched A, the
// VNNI sums (AVX512 ISA, where the CPU has AVX512_VNNI) and the AVX2 vpmaddwd sums.
#include <gtest/gtest.h>

#include <random>

#include "backends/cpu/native/u8s8_gemm.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct DynMatMulCase {
  std::vector<int64_t> a;  // A's dims [..., K]
  int64_t N;
  bool u8;
};

void check_dyn_matmul(const DynMatMulCase& c, Isa isa, const std::string& kernel, uint32_t seed) {
  const int64_t K = c.a.back();
  Tensor x = randn(c.a, seed);
  std::mt19937 rng(seed + 1);
  Tensor b = Tensor::empty(c.u8 ? DType::u8 : DType::i8, {K, c.N});
  for (int64_t i = 0; i < b.numel(); ++i) {
    if (c.u8) b.data<uint8_t>()[i] = uint8_t(rng() % 256);
    else b.data<int8_t>()[i] = int8_t(int(rng() % 256) - 128);
  }
  Tensor zb = Tensor::empty(b.dtype(), {});
  if (c.u8) zb.data<uint8_t>()[0] = 119;
  else zb.data<int8_t>()[0] = 0;
  auto build = [&](Graph& g) {
    Value* in = g.add_input("x", DType::f32, x.shape());
    Node* dq = g.add_node(Op::DynamicQuantizeLinear, {in}, 3, {}, "dql");
    Node* mm = g.add_node(Op::MatMulInteger, {dq->output(0), g.add_constant("b", b), dq->output(2),
                                              g.add_constant("zb", zb)}, 1, {}, "mmi");
    Node* cast = g.add_node(Op::Cast, {mm->output(0)}, 1, attrs({{"to", std::string("f32")}}), "cast");
    g.set_outputs({cast->output(0)});
  };
  std::string label = "A " + Shape::from_dims(c.a).to_string() + " N " + std::to_string(c.N) +
                      (c.u8 ? " u8" : " s8") + " isa " + isa_name(isa);
  SessionRun run;
  SessionOptions o;
  o.threads = 2;
  o.isa = isa;
  ASSERT_TRUE(run_session(build, {{"x", x}}, o, &run, 2)) << label;
  bool found = false;
  for (const StepInfo& s : run.plan.steps) found |= s.kernel.rfind(kernel, 0) == 0;
  EXPECT_TRUE(found) << label << run.plan_text;
  EXPECT_TRUE(outputs_close(run, 0.0)) << label;  // exact: the integer sums, one rounding to f32
}

const std::vector<DynMatMulCase> kDynMatMulCases = {
    {{22, 1024}, 300, true},  // ddddocr's classifier's shape of A (N cut from 8210)
    {{22, 1024}, 130, false},
    {{1, 37}, 65, true},      // K % 4 != 0, N across a tile edge
    {{2, 3, 20}, 64, false},  // batched A
    {{5, 8}, 1, true},
};

TEST(DynamicInt8MatMulStep, VnniSumsEqualTheReference) {
  if (host_isa() < Isa::avx512 || !u8s8_host_has_vnni512()) GTEST_SKIP() << "needs AVX512_VNNI";
  uint32_t seed = 8100;
  for (const DynMatMulCase& c : kDynMatMulCases) check_dyn_matmul(c, Isa::avx512, "u8s8_matmul_dynamic_zp__avx512_vnni", seed += 10);
}

TEST(DynamicInt8MatMulStep, Avx2MaddSumsEqualTheReference) {
  if (host_isa() < Isa::avx2) GTEST_SKIP() << "needs AVX2";
  uint32_t seed = 8200;
  for (const DynMatMulCase& c : kDynMatMulCases) check_dyn_matmul(c, Isa::avx2, "u8s8_matmul_dynamic_zp__avx2_madd16", seed += 10);
}

}  // namespace
}  // namespace ferry::testing
