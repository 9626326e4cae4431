#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

PatternStats pattern(const PassStats& stats, const std::string& name) {
  return stats_of(stats, "propagate_transposes", name);
}

TEST(PropagateTransposes, NhwcConvChainKeepsTransposesOnlyAtTheBoundaries) {
  // tf2onnx: NHWC in, each Conv wrapped in Transposes, bias Add and Relu in NHWC between them.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[1,4,4,3]) -> (%y) {
    %w1 = const f32[2,3,1,1] [1, 2, 3, -1, 0.5, 2]
    %w2 = const f32[2,2,1,1] [1, -1, 0.5, 0.25]
    %b = const f32[2] [0.5, -1]
    %t1 = Transpose(%x) {perm=[0,3,1,2]} @t1
    %c1 = Conv(%t1, %w1) @conv1
    %t2 = Transpose(%c1) {perm=[0,2,3,1]} @t2
    %a = Add(%t2, %b) @bias
    %r = Relu(%a) @relu
    %t3 = Transpose(%r) {perm=[0,3,1,2]} @t3
    %c2 = Conv(%t3, %w2) @conv2
    %y = Transpose(%c2) {perm=[0,2,3,1]} @t4
  })",
                            propagate_transposes, &stats);
  EXPECT_EQ(out,
            "graph g (%x: f32[1,4,4,3]) -> (%y) {\n"
            "  %w1 = const f32[2,3,1,1] [1, 2, 3, -1, 0.5, 2]\n"
            "  %w2 = const f32[2,2,1,1] [1, -1, 0.5, 0.25]\n"
            "  %bias/permuted = const f32[2,1,1] [0.5, -1]\n"
            "  %t1 = Transpose(%x) {perm=[0,3,1,2]} : f32[1,3,4,4] @t1\n"
            "  %c1 = Conv(%t1, %w1) : f32[1,2,4,4] @conv1\n"
            "  %bias_1 = Add(%c1, %bias/permuted) : f32[1,2,4,4] @bias_1\n"
            "  %relu_1 = Relu(%bias_1) : f32[1,2,4,4] @relu_1\n"
            "  %c2 = Conv(%relu_1, %w2) : f32[1,2,4,4] @conv2\n"
            "  %y = Transpose(%c2) {perm=[0,2,3,1]} : f32[1,4,4,2] @t4\n"
            "}\n");
  EXPECT_EQ(pattern(stats, "sink_elementwise").applied, 1);
  EXPECT_EQ(pattern(stats, "sink_unary").applied, 1);
  EXPECT_EQ(pattern(stats, "cancel_pair").applied, 1);
}

}  // namespace
}  // namespace ferry
