// fuse_matmul_epilogue asks the target which residual broadcasts its fused matmul runs fast
// (Target::matmul_residual_any_broadcast); text IR tests run on the reference target (any),
// so these build their own.
#include <gtest/gtest.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

Target narrow_broadcasts() {
  Target t = reference_target();
  t.matmul_residual_any_broadcast = false;
  return t;
}

/// Q K^T + Z for a residual of shape `z` (swin's window attention has a [1, H, S, S] bias).
std::string scores(const std::string& z) {
  return "graph g (%q: f32[4,3,5,8], %k: f32[4,3,8,5], %z: f32" + z + ") -> (%y) {\n"
         "  %s = MatMul(%q, %k) @qk\n"
         "  %y = Add(%s, %z) @bias\n"
         "}";
}

int64_t fused(const std::string& z, const Target& t) {
  auto g = testing::parse_ir(scores(z));
  PassStats stats;
  EXPECT_TRUE(fuse_matmul_epilogue_for(*g, stats, t).ok());
  int64_t n = 0;
  for (const Node* node : g->nodes()) n += node->op() == Op::FusedMatMul;
  return n;
}

TEST(MatmulResidualBroadcast, BatchBroadcastStaysAnAddOnTheNarrowTarget) {
  const Target t = narrow_broadcasts();
  EXPECT_EQ(fused("[1,3,5,5]", t), 0);  // broadcast over the batch: oneDNN's reference matmul
  EXPECT_EQ(fused("[1,1,5,5]", t), 0);
  EXPECT_EQ(fused("[4,3,5,5]", t), 1);  // the output's shape
  EXPECT_EQ(fused("[1,1,1,5]", t), 1);  // a per-column row
  EXPECT_EQ(fused("[5]", t), 1);
  EXPECT_EQ(fused("[4,1,1,5]", t), 1);  // [B, 1, 1, N]: an attention mask
  EXPECT_EQ(fused("[1,3,5,5]", reference_target()), 1);  // the reference target fuses any broadcast
}

TEST(MatmulResidualBroadcast, TheUnfusedAddComputesTheSame) {
  auto before = testing::parse_ir(scores("[1,3,5,5]")), after = testing::parse_ir(scores("[1,3,5,5]"));
  PassStats stats;
  ASSERT_TRUE(fuse_matmul_epilogue_for(*after, stats, narrow_broadcasts()).ok());
  EXPECT_EQ(stats["fuse_matmul_epilogue"]["bias_or_residual_add"].near_misses.size(), 1u);
  testing::expect_same_outputs(*before, *after, 1e-6);
}

}  // namespace
}  // namespace ferry
