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

PatternStats pairs(const PassStats& s) { return stats_of(s, "mark_dw_pw_conv_pairs", "dw_pw_pair"); }

// Weights: depthwise 3x3 over 4 channels, pointwise 4 -> 6 and 6 -> 4.
constexpr const char* kWeights = R"(
    %wdw = const f32[4,1,3,3] splat(0.125)
    %wpw = const f32[6,4,1,1] [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, -1, 2, -3, 4]
    %wpw2 = const f32[4,6,1,1] splat(0.5)
    %wdw6 = const f32[6,1,3,3] splat(-0.25))";

std::string graph(const std::string& body, const std::string& outputs = "%y") {
  return "graph g (%x: f32[1,4,5,5]) -> (" + outputs + ") {" + kWeights + "\n" + body + "\n}\n";
}

TEST(MarkDwPwConvPairs, DepthwiseThenPointwise) {
  PassStats stats;
  std::string out = rewrite(graph(R"(
    %d = Conv(%x, %wdw) {group=4, pads=[1,1,1,1]} @dw
    %y = FusedConv(%d, %wpw) {activation="Relu"} @pw)"),
                            mark_dw_pw_conv_pairs, &stats);
  EXPECT_NE(out.find("= FusedConv(%x, %wdw) {group=4, pads=[1,1,1,1]}"), std::string::npos) << out;
  EXPECT_NE(out.find("%y = FusedConv(%dw_1, %wpw) {activation=\"Relu\", pair=\"dw_pw\"}"), std::string::npos) << out;
  EXPECT_EQ(pairs(stats).applied, 1);
}

TEST(MarkDwPwConvPairs, PointwiseThenDepthwise) {
  std::string out = rewrite(graph(R"(
    %p = Conv(%x, %wpw) @pw
    %y = Conv(%p, %wdw6) {group=6, pads=[1,1,1,1], strides=[2,2]} @dw)"),
                            mark_dw_pw_conv_pairs);
  EXPECT_NE(out.find("{group=6, pads=[1,1,1,1], pair=\"pw_dw\", strides=[2,2]}"), std::string::npos) << out;
  EXPECT_EQ(count(out, "= Conv("), 0) << out;
}

TEST(MarkDwPwConvPairs, InvertedResidualChainPairsTheFirstTwo) {
  // MobileNetV2: pw (expand) -> dw -> pw (project). A conv joins one pair at most.
  PassStats stats;
  std::string out = rewrite(graph(R"(
    %e = Conv(%x, %wpw) @expand
    %d = Conv(%e, %wdw6) {group=6, pads=[1,1,1,1]} @dw
    %y = Conv(%d, %wpw2) @project)"),
                            mark_dw_pw_conv_pairs, &stats);
  EXPECT_EQ(count(out, "pair="), 1) << out;
  EXPECT_NE(out.find("pair=\"pw_dw\""), std::string::npos) << out;
  ASSERT_EQ(pairs(stats).near_misses.size(), 1u);
  EXPECT_EQ(pairs(stats).near_misses[0].reason, "dw_pw: the first conv is already the second of a pw_dw pair");
}

TEST(MarkDwPwConvPairsNearMiss, FirstConvHasTwoConsumers) {
  PassStats stats;
  std::string out = rewrite(graph(R"(
    %d = Conv(%x, %wdw) {group=4, pads=[1,1,1,1]} @dw
    %y = Conv(%d, %wpw) @pw)",
                                  "%y, %d"),
                            mark_dw_pw_conv_pairs, &stats);
  EXPECT_EQ(count(out, "pair="), 0) << out;
  ASSERT_EQ(pairs(stats).near_misses.size(), 1u);
  EXPECT_EQ(pairs(stats).near_misses[0].reason, "dw_pw: Conv output is a graph output");
}

TEST(MarkDwPwConvPairsNearMiss, FirstConvHasAResidual) {
  PassStats stats;
  rewrite(graph(R"(
    %d = FusedConv(%x, %wdw, _, %x) {group=4, pads=[1,1,1,1]} @dw
    %y = Conv(%d, %wpw) @pw)"),
          mark_dw_pw_conv_pairs, &stats);
  ASSERT_EQ(pairs(stats).near_misses.size(), 1u);
  EXPECT_EQ(pairs(stats).near_misses[0].reason, "dw_pw: the first conv has a residual input");
}

TEST(MarkDwPwConvPairs, NotAPair) {
  // A 3x3 dense conv after a depthwise one, a strided 1x1, a grouped (not depthwise) conv: nothing to mark.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[1,4,5,5]) -> (%y, %z, %u) {
    %wdw = const f32[4,1,3,3] splat(0.125)
    %w3 = const f32[2,4,3,3] splat(0.5)
    %w1 = const f32[2,4,1,1] splat(0.5)
    %wg = const f32[4,2,3,3] splat(0.5)
    %d = Conv(%x, %wdw) {group=4} @dw
    %y = Conv(%d, %w3) @dense
    %d2 = Conv(%x, %wdw) {group=4} @dw2
    %z = Conv(%d2, %w1) {strides=[2,2]} @strided
    %g = Conv(%x, %wg) {group=2} @grouped
    %u = Conv(%g, %w1) @pw
  })",
                            mark_dw_pw_conv_pairs, &stats);
  EXPECT_EQ(count(out, "FusedConv"), 0) << out;
  EXPECT_EQ(pairs(stats).matched, 0);
}

}  // namespace
}  // namespace ferry
