// fuse_affine_before_conv: a scalar x * s + t in front of a Conv goes into its weights and
// bias; each case is checked against the graph before the pass on random inputs.
#include <gtest/gtest.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

int64_t affine_before_count(const Graph& g, Op op) {
  int64_t n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}

std::string affine_conv_text(const std::string& pads, bool shift, bool bias) {
  return std::string("graph g (%x: f32[1,4,6,7]) -> (%y) {\n"
                     "  %w = const f32[3,4,") + (pads.empty() ? "1,1" : "3,3") + "] splat(0.25)\n"
         "  %b = const f32[3] [0.5, -1, 2]\n"
         "  %s = const f32[] [1.75]\n"
         "  %t = const f32[1] [-0.5]\n"
         "  %m = Mul(%x, %s) @lab_scale\n" +
         (shift ? "  %a = Add(%t, %m) @lab_shift\n" : "  %a = Identity(%m) @id\n") +
         "  %y = Conv(%a, %w" + (bias ? ", %b" : "") + ")" + (pads.empty() ? "" : " {pads=" + pads + "}") + " @conv\n}";
}

struct Folded {
  int64_t muls, adds, applied;
  size_t near_misses;
};

Folded fold_affine(const std::string& text) {
  auto before = testing::parse_ir(text), after = testing::parse_ir(text);
  PassStats stats;
  EXPECT_TRUE(eliminate_identity(*after, stats).ok());
  EXPECT_TRUE(fuse_affine_before_conv(*after, stats).ok());
  EXPECT_TRUE(refresh_shapes(*after).ok());
  testing::expect_same_outputs(*before, *after, 1e-5);
  const auto& p = stats["fuse_affine_before_conv"]["affine_before_conv"];
  return {affine_before_count(*after, Op::Mul), affine_before_count(*after, Op::Add), p.applied, p.near_misses.size()};
}

TEST(FuseAffineBeforeConv, ScaleAndShiftFoldIntoAnUnpaddedConv) {
  for (bool bias : {true, false}) {
    const Folded f = fold_affine(affine_conv_text("", true, bias));
    EXPECT_EQ(f.applied, 1) << bias;
    EXPECT_EQ(f.muls + f.adds, 0) << bias;
  }
}

TEST(FuseAffineBeforeConv, AScaleAloneFoldsIntoAPaddedConv) {
  const Folded f = fold_affine(affine_conv_text("[1,1,1,1]", false, true));
  EXPECT_EQ(f.applied, 1);
  EXPECT_EQ(f.muls, 0);
}

TEST(FuseAffineBeforeConv, AShiftInFrontOfAPaddedConvStays) {
  // The padded taps read 0, not the shift: folding would change the border outputs.
  const Folded f = fold_affine(affine_conv_text("[1,1,1,1]", true, true));
  EXPECT_EQ(f.applied, 0);
  EXPECT_EQ(f.near_misses, 1u);
  EXPECT_EQ(f.muls + f.adds, 2);
}

TEST(FuseAffineBeforeConv, AnAffineReadTwiceStays) {
  const char* text = R"(graph g (%x: f32[1,4,6,7]) -> (%y, %a) {
    %w = const f32[3,4,1,1] splat(0.25)
    %s = const f32[] [1.75]
    %a = Mul(%x, %s) @lab_scale
    %y = Conv(%a, %w) @conv
  })";
  const Folded f = fold_affine(text);
  EXPECT_EQ(f.applied, 0);
  EXPECT_EQ(f.muls, 1);
}

}  // namespace
}  // namespace ferry
