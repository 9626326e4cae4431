#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

TEST(CanonicalizeGemm, TransposeAndAlphaFoldIntoConstantWeightsBetaIntoBias) {
  PassStats stats;
  // B' = 2 * B^T; C' = 0.5 * C.
  std::string out = rewrite(R"(graph g (%a: f32[2,3]) -> (%y) {
    %b = const f32[4,3] [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    %c = const f32[4] [1, 2, 3, 4]
    %y = Gemm(%a, %b, %c) {alpha=2, beta=0.5, transB=1} @gemm
  })",
                            canonicalize_gemm, &stats, 1e-5);
  EXPECT_EQ(out,
            "graph g (%a: f32[2,3]) -> (%y) {\n"
            "  %gemm/B = const f32[3,4] [2, 8, 14, 20, 4, 10, 16, 22, 6, 12, 18, 24]\n"
            "  %gemm/C = const f32[4] [0.5, 1, 1.5, 2]\n"
            "  %gemm/matmul = MatMul(%a, %gemm/B) : f32[2,4] @gemm/matmul\n"
            "  %y = Add(%gemm/matmul, %gemm/C) : f32[2,4] @gemm/add\n"
            "}\n");
  EXPECT_EQ(stats_of(stats, "canonicalize_gemm", "gemm_to_matmul_add").applied, 1);
}

TEST(CanonicalizeGemm, NonConstantOperandsGetTransposeAndMulNodes) {
  std::string out = rewrite(R"(graph g (%a: f32[3,2], %b: f32[3,4], %c: f32[2,4]) -> (%y) {
    %y = Gemm(%a, %b, %c) {alpha=0.5, beta=3, transA=1} @gemm
  })",
                            canonicalize_gemm, nullptr, 1e-5);
  EXPECT_EQ(out,
            "graph g (%a: f32[3,2], %b: f32[3,4], %c: f32[2,4]) -> (%y) {\n"
            "  %gemm/alpha = const f32[] [0.5]\n"
            "  %gemm/beta = const f32[] [3]\n"
            "  %gemm/transpose_A = Transpose(%a) {perm=[1,0]} : f32[2,3] @gemm/transpose_A\n"
            "  %gemm/matmul = MatMul(%gemm/transpose_A, %b) : f32[2,4] @gemm/matmul\n"
            "  %gemm/mul_alpha = Mul(%gemm/matmul, %gemm/alpha) : f32[2,4] @gemm/mul_alpha\n"
            "  %gemm/mul_beta = Mul(%c, %gemm/beta) : f32[2,4] @gemm/mul_beta\n"
            "  %y = Add(%gemm/mul_alpha, %gemm/mul_beta) : f32[2,4] @gemm/add\n"
            "}\n");
}

TEST(CanonicalizeGemm, WithoutBiasThereIsNoAdd) {
  std::string out = rewrite(R"(graph g (%a: f32[2,3], %b: f32[3,4]) -> (%y) {
    %y = Gemm(%a, %b) @gemm
  })",
                            canonicalize_gemm);
  EXPECT_EQ(out,
            "graph g (%a: f32[2,3], %b: f32[3,4]) -> (%y) {\n"
            "  %y = MatMul(%a, %b) : f32[2,4] @gemm/matmul\n"
            "}\n");
}

TEST(CanonicalizeGemm, ProvenanceIsTheGemm) {
  auto g = testing::parse_ir(R"(graph g (%a: f32[2,3], %b: f32[3,4]) -> (%y) {
    %y = Gemm(%a, %b) @gemm <- ["fc1"]
  })");
  PassStats stats;
  ASSERT_TRUE(canonicalize_gemm(*g, stats).ok());
  ASSERT_EQ(g->nodes().size(), 1u);
  EXPECT_EQ(g->nodes()[0]->provenance(), std::vector<std::string>{"fc1"});
}

}  // namespace
}  // namespace ferry
