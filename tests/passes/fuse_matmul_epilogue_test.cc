#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "passes/passes.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

PatternStats pattern(const PassStats& s, const char* name) { return stats_of(s, "fuse_matmul_epilogue", name); }

/// x: f32[2,3,4] @ W f32[4,2] -> %c: f32[2,3,2], followed by `tail` (which defines %y).
std::string matmul_then(const std::string& tail, const std::string& extra_inputs = "") {
  return "graph g (%x: f32[2,3,4]" + extra_inputs + R"() -> (%y) {
    %w = const f32[4,2] [1, -2, 3, 4, -5, 6, 7, 8]
    %c = MatMul(%x, %w) @mm
)" + tail + "\n}\n";
}

TEST(FuseMatMulEpilogue, BiasThenRelu) {
  PassStats stats;
  std::string out = rewrite(matmul_then("%b = const f32[2] [0.5, -1]\n%a = Add(%c, %b) @add\n%y = Relu(%a) @relu"),
                            fuse_matmul_epilogue, &stats);
  EXPECT_EQ(out,
            "graph g (%x: f32[2,3,4]) -> (%y) {\n"
            "  %w = const f32[4,2] [1, -2, 3, 4, -5, 6, 7, 8]\n"
            "  %b = const f32[2] [0.5, -1]\n"
            "  %y = FusedMatMul(%x, %w, %b) {activation=\"Relu\"} : f32[2,3,2] @mm_2\n"
            "}\n");
  EXPECT_EQ(pattern(stats, "bias_or_residual_add").applied, 1);
  EXPECT_EQ(pattern(stats, "activation").applied, 1);
}

TEST(FuseMatMulEpilogue, BiasOfRankTwoBecomesOneDimensional) {
  std::string out = rewrite(matmul_then("%b = const f32[1,1,2] [0.5, -1]\n%y = Add(%b, %c) @add"),
                            fuse_matmul_epilogue);
  EXPECT_NE(out.find("const f32[2] [0.5, -1]"), std::string::npos) << out;
  EXPECT_NE(out.find("%y = FusedMatMul(%x, %w, %b/bias)"), std::string::npos) << out;
}

TEST(FuseMatMulEpilogue, BiasAndResidualAndGeluTanh) {
  std::string out =
      rewrite(matmul_then("%b = const f32[2] [0.5, -1]\n%a = Add(%c, %b) @add\n%r = Add(%z, %a) @residual\n"
                          "%y = Gelu(%r) {approximate=\"tanh\"} @gelu",
                          ", %z: f32[3,2]"),
              fuse_matmul_epilogue, nullptr, 1e-5);
  EXPECT_NE(out.find("%y = FusedMatMul(%x, %w, %b, %z) {activation=\"GeluTanh\"}"), std::string::npos) << out;
}

TEST(FuseMatMulEpilogue, VariableVectorIsABiasAndAnythingElseAResidual) {
  std::string out = rewrite(matmul_then("%a = Add(%c, %v) @add\n%y = Add(%a, %z) @add2", ", %v: f32[2], %z: f32[2,3,1]"),
                            fuse_matmul_epilogue);
  EXPECT_NE(out.find("%y = FusedMatMul(%x, %w, %v, %z)"), std::string::npos) << out;
}

TEST(FuseMatMulEpilogue, GemmAfterCanonicalizationWithSilu) {
  auto canonicalize_then_fuse = [](Graph& g, PassStats& s) {
    FERRY_TRY(canonicalize_gemm(g, s));
    return fuse_matmul_epilogue(g, s);
  };
  std::string out = rewrite(R"(graph g (%x: f32[3,4]) -> (%y) {
    %w = const f32[2,4] [1, -2, 3, 4, -5, 6, 7, 8]
    %b = const f32[2] [0.5, -1]
    %c = Gemm(%x, %w, %b) {transB=1} @fc
    %s = Sigmoid(%c) @sig
    %y = Mul(%s, %c) @silu
  })",
                            canonicalize_then_fuse, nullptr, 1e-5);
  EXPECT_EQ(count(out, "@"), 1) << out;
  EXPECT_NE(out.find("FusedMatMul(%x, %fc/B, %b) {activation=\"SiLU\"}"), std::string::npos) << out;
}

TEST(FuseMatMulEpilogue, IntegerMatMulStays) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: i32[2,2]) -> (%y) {
    %w = const i32[2,2] [1, 2, 3, 4]
    %b = const i32[2] [1, 1]
    %c = MatMul(%x, %w) @mm
    %y = Add(%c, %b) @add
  })",
                            fuse_matmul_epilogue, &stats);
  EXPECT_EQ(count(out, "= MatMul("), 1) << out;
  EXPECT_EQ(pattern(stats, "bias_or_residual_add").matched, 0);
}

TEST(FuseMatMulEpilogueNearMiss, AddAfterTheActivation) {
  PassStats stats;
  std::string out = rewrite(matmul_then("%g = Gelu(%c) @gelu\n%b = const f32[2] [0.5, -1]\n%y = Add(%g, %b) @add"),
                            fuse_matmul_epilogue, &stats, 1e-5);
  EXPECT_EQ(count(out, "= Add("), 1) << out;
  PatternStats s = pattern(stats, "bias_or_residual_add");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason,
            "FusedMatMul already applies Gelu: an Add after the activation does not fuse (only act(x + b + z) does)");
}

TEST(FuseMatMulEpilogueNearMiss, MatMulOutputHasTwoConsumers) {
  PassStats stats;
  rewrite(matmul_then("%r = Relu(%c) @relu\n%y = Add(%r, %c) @add"), fuse_matmul_epilogue, &stats);
  PatternStats s = pattern(stats, "activation");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "MatMul output has 2 consumers");
  EXPECT_EQ(s.near_misses[0].source_nodes, (std::vector<std::string>{"mm", "relu"}));
}

TEST(FuseMatMulEpilogueNearMiss, ResidualWouldEnlargeTheOutput) {
  PassStats stats;
  rewrite(matmul_then("%y = Add(%c, %z) @add", ", %z: f32[4,2,3,2]"), fuse_matmul_epilogue, &stats);
  PatternStats s = pattern(stats, "bias_or_residual_add");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "residual shape [4,2,3,2] does not broadcast into the MatMul output [2,3,2]");
}

}  // namespace
}  // namespace ferry
