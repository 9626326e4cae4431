// pad_wide_convs asks the target how wide a pad its convolutions take; text IR tests run on
// the reference target (no limit), so these build their own.
#include <gtest/gtest.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

Target limited(int64_t limit) {
  Target t = reference_target();
  t.conv_pad_limit = limit;
  return t;
}

int64_t count(const Graph& g, Op op) {
  int64_t n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}

constexpr const char* kWide = R"(graph g (%x: f32[1,4,6,20], %w: f32[3,4,3,9], %b: f32[3]) -> (%y) {
  %y = Conv(%x, %w, %b) {pads=[1, 4, 1, 5]} @conv
})";

TEST(PadWideConvs, WidePadBecomesAPadNode) {
  auto before = testing::parse_ir(kWide), after = testing::parse_ir(kWide);
  PassStats stats;
  ASSERT_TRUE(pad_wide_convs_for(*after, stats, limited(3)).ok());
  ASSERT_TRUE(refresh_shapes(*after).ok());
  EXPECT_EQ(stats["pad_wide_convs"]["explicit_pad"].applied, 1);
  const std::string text = testing::ir(*after);
  EXPECT_NE(text.find("const i64[8] [0, 0, 0, 4, 0, 0, 0, 5]"), std::string::npos) << text;
  EXPECT_NE(text.find("pads=[1,0,1,0]"), std::string::npos) << text;
  EXPECT_NE(text.find(": f32[1,4,6,29]"), std::string::npos) << text;
  testing::expect_same_outputs(*before, *after, 1e-5);
}

TEST(PadWideConvs, NarrowPadsAndNoLimitStay) {
  for (const Target& t : {limited(5), reference_target()}) {
    auto g = testing::parse_ir(kWide);
    PassStats stats;
    ASSERT_TRUE(pad_wide_convs_for(*g, stats, t).ok());
    EXPECT_EQ(count(*g, Op::Pad), 0) << t.conv_pad_limit;
  }
}

TEST(PadWideConvs, OneDimensionalConv) {
  const char* text = R"(graph g (%x: f32[2,3,50], %w: f32[2,3,9]) -> (%y) {
    %y = Conv(%x, %w) {pads=[8, 0]} @conv1d
  })";
  auto before = testing::parse_ir(text), after = testing::parse_ir(text);
  PassStats stats;
  ASSERT_TRUE(pad_wide_convs_for(*after, stats, limited(3)).ok());
  ASSERT_TRUE(refresh_shapes(*after).ok());
  EXPECT_EQ(count(*after, Op::Pad), 1);
  EXPECT_NE(testing::ir(*after).find("const i64[6] [0, 0, 8, 0, 0, 0]"), std::string::npos) << testing::ir(*after);
  testing::expect_same_outputs(*before, *after, 1e-5);
}

}  // namespace
}  // namespace ferry
