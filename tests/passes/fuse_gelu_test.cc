#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

constexpr double kRtol = 1e-5;  // Gelu's kernel rounds once; the decomposition rounds at every step

TEST(FuseGelu, ErfFormAsPyTorchExportsIt) {
  // x / sqrt(2) already canonicalized to x * 0.70710677.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2,8]) -> (%y) {
    %c = const f32[] [0.70710677]
    %one = const f32[] [1]
    %half = const f32[] [0.5]
    %u = Mul(%x, %c) @u
    %e = Erf(%u) @erf
    %a = Add(%e, %one) @add
    %m = Mul(%x, %a) @mul
    %y = Mul(%m, %half) @mul_half
  })",
                            fuse_gelu, &stats, kRtol);
  EXPECT_EQ(out,
            "graph g (%x: f32[2,8]) -> (%y) {\n"
            "  %y = Gelu(%x) : f32[2,8] @mul_half/gelu\n"
            "}\n");
  PatternStats s = stats_of(stats, "fuse_gelu", "gelu_erf_or_tanh");
  EXPECT_EQ(s.applied, 1);
  EXPECT_TRUE(s.near_misses.empty());
}

TEST(FuseGelu, ErfFormWithDivAndHalfFirst) {
  // 0.5 * (x * (1 + erf(x / 1.4142135)))
  std::string out = rewrite(R"(graph g (%x: f32[3,4]) -> (%y) {
    %s = const f32[] [1.4142135]
    %one = const f32[1] [1]
    %half = const f32[] [0.5]
    %u = Div(%x, %s) @u
    %e = Erf(%u) @erf
    %a = Add(%one, %e) @add
    %m = Mul(%a, %x) @mul
    %y = Mul(%half, %m) @mul_half
  })",
                            fuse_gelu, nullptr, kRtol);
  EXPECT_NE(out.find("%y = Gelu(%x) : f32[3,4]"), std::string::npos) << out;
  EXPECT_EQ(out.find("Erf"), std::string::npos) << out;
}

TEST(FuseGelu, TanhFormWithPow) {
  std::string out = rewrite(R"(graph g (%x: f32[2,8]) -> (%y) {
    %three = const f32[] [3]
    %c2 = const f32[] [0.044715]
    %c1 = const f32[] [0.7978846]
    %one = const f32[] [1]
    %half = const f32[] [0.5]
    %p = Pow(%x, %three) @pow
    %cube = Mul(%p, %c2) @cube
    %in = Add(%x, %cube) @inner
    %u = Mul(%in, %c1) @u
    %t = Tanh(%u) @tanh
    %a = Add(%t, %one) @add
    %hx = Mul(%x, %half) @halfx
    %y = Mul(%hx, %a) @mul
  })",
                            fuse_gelu, nullptr, kRtol);
  EXPECT_EQ(out,
            "graph g (%x: f32[2,8]) -> (%y) {\n"
            "  %y = Gelu(%x) {approximate=\"tanh\"} : f32[2,8] @mul/gelu\n"
            "}\n");
}

TEST(FuseGelu, TanhFormAsGpt2ExportsIt) {
  // x*x*x as two Muls, constants on the left.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[1,4,8]) -> (%y) {
    %c2 = const f32[] [0.044714998]
    %c1 = const f32[] [0.79788458]
    %one = const f32[] [1]
    %half = const f32[] [0.5]
    %xx = Mul(%x, %x) @m0
    %xxx = Mul(%x, %xx) @m1
    %cube = Mul(%c2, %xxx) @m2
    %in = Add(%x, %cube) @a1
    %u = Mul(%c1, %in) @m3
    %t = Tanh(%u) @tanh
    %a = Add(%one, %t) @a2
    %m = Mul(%x, %a) @m4
    %y = Mul(%half, %m) @m5
  })",
                            fuse_gelu, &stats, kRtol);
  EXPECT_NE(out.find("%y = Gelu(%x) {approximate=\"tanh\"}"), std::string::npos) << out;
  EXPECT_EQ(out.find("Tanh("), std::string::npos) << out;
  EXPECT_EQ(stats_of(stats, "fuse_gelu", "gelu_erf_or_tanh").applied, 1);
}

TEST(FuseGeluNearMiss, ErfOfAnotherValue) {
  PassStats stats;
  const std::string text =
      "graph g (%x: f32[4], %z: f32[4]) -> (%y) {\n"
      "  %c = const f32[] [0.70710677]\n"
      "  %one = const f32[] [1]\n"
      "  %half = const f32[] [0.5]\n"
      "  %u = Mul(%z, %c) : f32[4] @u\n"
      "  %e = Erf(%u) : f32[4] @erf\n"
      "  %a = Add(%e, %one) : f32[4] @add\n"
      "  %m = Mul(%x, %a) : f32[4] @mul\n"
      "  %y = Mul(%m, %half) : f32[4] @mul_half\n"
      "}\n";
  EXPECT_EQ(rewrite(text, fuse_gelu, &stats), text);
  PatternStats s = stats_of(stats, "fuse_gelu", "gelu_erf_or_tanh");
  EXPECT_EQ(s.applied, 0);
  ASSERT_EQ(s.near_misses.size(), 1u);  // reported once, at the top of the product
  EXPECT_EQ(s.near_misses[0].reason, "Erf input is not x / sqrt(2) of the same x: found Mul");
  EXPECT_EQ(s.near_misses[0].source_nodes, (std::vector<std::string>{"mul_half", "add", "erf"}));
}

TEST(FuseGeluNearMiss, WrongCoefficientAndSharedIntermediate) {
  PassStats stats;
  const std::string text =
      "graph g (%x: f32[4]) -> (%y, %e) {\n"
      "  %c = const f32[] [0.70710677]\n"
      "  %one = const f32[] [1]\n"
      "  %q = const f32[] [0.25]\n"
      "  %u = Mul(%x, %c) : f32[4] @u\n"
      "  %e = Erf(%u) : f32[4] @erf\n"
      "  %a = Add(%e, %one) : f32[4] @add\n"
      "  %m = Mul(%x, %a) : f32[4] @mul\n"
      "  %y = Mul(%m, %q) : f32[4] @mul_q\n"
      "}\n";
  EXPECT_EQ(rewrite(text, fuse_gelu, &stats), text);
  PatternStats s = stats_of(stats, "fuse_gelu", "gelu_erf_or_tanh");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "the product's constant factor is 0.250000, not 0.5");
}

TEST(FuseGeluNearMiss, ErfWithAnotherConsumer) {
  PassStats stats;
  const std::string text =
      "graph g (%x: f32[4]) -> (%y, %e) {\n"
      "  %c = const f32[] [0.70710677]\n"
      "  %one = const f32[] [1]\n"
      "  %half = const f32[] [0.5]\n"
      "  %u = Mul(%x, %c) : f32[4] @u\n"
      "  %e = Erf(%u) : f32[4] @erf\n"
      "  %a = Add(%e, %one) : f32[4] @add\n"
      "  %m = Mul(%x, %a) : f32[4] @mul\n"
      "  %y = Mul(%m, %half) : f32[4] @mul_half\n"
      "}\n";
  EXPECT_EQ(rewrite(text, fuse_gelu, &stats), text);
  PatternStats s = stats_of(stats, "fuse_gelu", "gelu_erf_or_tanh");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "1 + Erf(...) has more than one consumer");
}

}  // namespace
}  // namespace ferry
