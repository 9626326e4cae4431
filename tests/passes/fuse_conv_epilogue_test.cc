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

PatternStats pattern(const PassStats& s, const char* name) { return stats_of(s, "fuse_conv_epilogue", name); }

std::string only_reason(const PatternStats& s) {
  EXPECT_EQ(s.near_misses.size(), 1u);
  return s.near_misses.empty() ? "" : s.near_misses[0].reason;
}

/// A 3x3 conv with bias on x: f32[1,2,4,4] -> %c: f32[1,3,4,4], followed by `tail` (which defines %y).
std::string conv_then(const std::string& tail, const std::string& extra_inputs = "",
                      const std::string& outputs = "%y") {
  return "graph g (%x: f32[1,2,4,4]" + extra_inputs + ") -> (" + outputs + R"() {
    %w = const f32[3,2,3,3] splat(0.25)
    %b = const f32[3] [0.5, -1, 0]
    %c = Conv(%x, %w, %b) {pads=[1,1,1,1]} @conv
)" + tail + "\n}\n";
}

TEST(FuseConvEpilogue, Relu) {
  PassStats stats;
  std::string out = rewrite(conv_then("%y = Relu(%c) @relu"), fuse_conv_epilogue, &stats);
  EXPECT_EQ(out,
            "graph g (%x: f32[1,2,4,4]) -> (%y) {\n"
            "  %w = const f32[3,2,3,3] [0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, "
            "0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, "
            "0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, "
            "0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]\n"
            "  %b = const f32[3] [0.5, -1, 0]\n"
            "  %y = FusedConv(%x, %w, %b) {activation=\"Relu\", pads=[1,1,1,1]} : f32[1,3,4,4] @conv_1\n"
            "}\n");
  EXPECT_EQ(pattern(stats, "activation").applied, 1);
}

TEST(FuseConvEpilogue, ResidualThenRelu) {
  PassStats stats;
  std::string out = rewrite(conv_then("%a = Add(%z, %c) @add\n%y = Relu(%a) @relu", ", %z: f32[1,3,4,4]"),
                            fuse_conv_epilogue, &stats);
  EXPECT_NE(out.find("%y = FusedConv(%x, %w, %b, %z) {activation=\"Relu\", pads=[1,1,1,1]}"), std::string::npos)
      << out;
  EXPECT_EQ(count(out, " = "), 3) << out;
  EXPECT_EQ(pattern(stats, "residual_add").applied, 1);
  EXPECT_EQ(pattern(stats, "activation").applied, 1);
}

TEST(FuseConvEpilogue, ResNetDownsampleAddOfTwoConvs) {
  // Add(conv_a, conv_b) -> Relu: one conv takes the other's output as its residual.
  std::string out = rewrite(R"(graph g (%x: f32[1,2,4,4]) -> (%y) {
    %wa = const f32[3,2,1,1] [1, 2, 3, 4, 5, 6]
    %wb = const f32[3,2,1,1] [-1, 0.5, 2, -2, 1, 0]
    %a = Conv(%x, %wa) @conv_a
    %b = Conv(%x, %wb) @conv_b
    %s = Add(%a, %b) @add
    %y = Relu(%s) @relu
  })",
                            fuse_conv_epilogue);
  EXPECT_EQ(count(out, "= FusedConv("), 1) << out;
  EXPECT_EQ(count(out, "= Conv("), 1) << out;
  EXPECT_NE(out.find("activation=\"Relu\""), std::string::npos) << out;
}

TEST(FuseConvEpilogue, EveryActivation) {
  struct Case {
    const char* tail;
    const char* want;
  };
  const Case cases[] = {
      {"%lo = const f32[] [0]\n%hi = const f32[] [6]\n%y = Clip(%c, %lo, %hi) @relu6",
       "{activation=\"Clip\", alpha=0, beta=6, pads=[1,1,1,1]}"},
      {"%hi = const f32[] [1.5]\n%y = Clip(%c, _, %hi) @clip", "{activation=\"Clip\", alpha=-inf, beta=1.5,"},
      {"%y = LeakyRelu(%c) {alpha=0.125} @leaky", "{activation=\"LeakyRelu\", alpha=0.125, beta=0,"},
      {"%y = Sigmoid(%c) @sig", "{activation=\"Sigmoid\","},
      {"%y = HardSigmoid(%c) {alpha=0.25, beta=0.375} @hs", "{activation=\"HardSigmoid\", alpha=0.25, beta=0.375,"},
      {"%y = HardSwish(%c) @hsw", "{activation=\"HardSwish\","},
      {"%y = Gelu(%c) @gelu", "{activation=\"Gelu\","},
      {"%y = Gelu(%c) {approximate=\"tanh\"} @gelu", "{activation=\"GeluTanh\","},
      {"%y = Tanh(%c) @tanh", "{activation=\"Tanh\","},
      {"%s = Sigmoid(%c) @sig\n%y = Mul(%c, %s) @silu", "{activation=\"SiLU\","},
      {"%s = Sigmoid(%c) @sig\n%y = Mul(%s, %c) @silu", "{activation=\"SiLU\","},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.tail);
    std::string out = rewrite(conv_then(c.tail), fuse_conv_epilogue, nullptr, 1e-5);
    EXPECT_NE(out.find("%y = FusedConv(%x, %w, %b) " + std::string(c.want)), std::string::npos) << out;
    EXPECT_EQ(count(out, "@"), 1) << out;  // one node left
  }
}

TEST(FuseConvEpilogue, ConvTranspose) {
  std::string out = rewrite(R"(graph g (%x: f32[1,2,3,3], %z: f32[3,1,1]) -> (%y) {
    %w = const f32[2,3,2,2] splat(0.5)
    %c = ConvTranspose(%x, %w) {strides=[2,2]} @deconv
    %a = Add(%c, %z) @add
    %y = HardSwish(%a) @act
  })",
                            fuse_conv_epilogue);
  EXPECT_NE(out.find("%y = FusedConvTranspose(%x, %w, _, %z) {activation=\"HardSwish\", strides=[2,2]}"),
            std::string::npos)
      << out;
}

TEST(FuseConvEpilogueNearMiss, AddAfterTheActivation) {
  PassStats stats;
  std::string out = rewrite(conv_then("%r = Relu(%c) @relu\n%y = Add(%r, %z) @add", ", %z: f32[1,3,4,4]"),
                            fuse_conv_epilogue, &stats);
  EXPECT_EQ(count(out, "= Add("), 1) << out;
  EXPECT_EQ(only_reason(pattern(stats, "residual_add")),
            "FusedConv already applies Relu: an Add after the activation does not fuse (only act(x + b + z) does)");
  EXPECT_EQ(pattern(stats, "residual_add").near_misses[0].source_nodes,
            (std::vector<std::string>{"conv", "relu", "add"}));
}

TEST(FuseConvEpilogueNearMiss, SecondActivation) {
  PassStats stats;
  rewrite(conv_then("%r = Relu(%c) @relu\n%y = Tanh(%r) @tanh"), fuse_conv_epilogue, &stats);
  EXPECT_EQ(only_reason(pattern(stats, "activation")),
            "FusedConv already applies Relu: a second activation does not fuse");
}

TEST(FuseConvEpilogueNearMiss, ConvOutputUsedTwice) {
  PassStats stats;
  std::string out = rewrite(conv_then("%y = Relu(%c) @relu", "", "%y, %c"), fuse_conv_epilogue, &stats);
  EXPECT_EQ(count(out, "= Relu("), 1) << out;
  EXPECT_EQ(only_reason(pattern(stats, "activation")), "Conv output is a graph output");

  PassStats stats2;
  rewrite(conv_then("%r = Relu(%c) @relu\n%t = Tanh(%c) @tanh\n%y = Add(%r, %t) @add"), fuse_conv_epilogue, &stats2);
  PatternStats s = pattern(stats2, "activation");
  ASSERT_EQ(s.near_misses.size(), 2u);
  EXPECT_EQ(s.near_misses[0].reason, "Conv output has 2 consumers");
}

TEST(FuseConvEpilogueNearMiss, ResidualWouldEnlargeTheOutput) {
  PassStats stats;
  rewrite(conv_then("%y = Add(%c, %z) @add", ", %z: f32[2,3,4,4]"), fuse_conv_epilogue, &stats);
  EXPECT_EQ(only_reason(pattern(stats, "residual_add")),
            "residual shape [2,3,4,4] does not broadcast into the Conv output [1,3,4,4]");
}

TEST(FuseConvEpilogueNearMiss, SecondResidual) {
  PassStats stats;
  std::string out =
      rewrite(conv_then("%a = Add(%c, %z) @add\n%y = Add(%a, %z) @add2", ", %z: f32[1,3,4,4]"), fuse_conv_epilogue,
              &stats);
  EXPECT_EQ(count(out, "= Add("), 1) << out;
  EXPECT_EQ(pattern(stats, "residual_add").applied, 1);
  EXPECT_EQ(only_reason(pattern(stats, "residual_add")), "FusedConv already has a residual input");
}

TEST(FuseConvEpilogueNearMiss, ClipWithVariableBound) {
  PassStats stats;
  rewrite(conv_then("%y = Clip(%c, _, %hi) @clip", ", %hi: f32[]"), fuse_conv_epilogue, &stats);
  EXPECT_EQ(only_reason(pattern(stats, "activation")), "Clip max is not a constant scalar");
}

TEST(FuseConvEpilogueNearMiss, SiluInputUsedElsewhere) {
  PassStats stats;
  rewrite(conv_then("%s = Sigmoid(%c) @sig\n%m = Mul(%c, %s) @silu\n%y = Add(%m, %c) @add"), fuse_conv_epilogue,
          &stats);
  EXPECT_EQ(only_reason(pattern(stats, "silu")), "Conv output has 3 consumers (x * Sigmoid(x) needs exactly 2)");
}

}  // namespace
}  // namespace ferry
