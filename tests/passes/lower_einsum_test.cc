// The rewrites are in ir/lower_einsum.ir; a dim that shape inference cannot see needs the
// graph itself (text IR re-infers every shape it parses).
#include <gtest/gtest.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

constexpr const char* kProjection = R"(graph g (%x: f32[N,3,4]) -> (%y) {
  %s = const i64[4] [0, 3, -1, 2]
  %r = Reshape(%x, %s) @split
  %w = const f32[2,2,3] [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
  %y = Einsum(%r, %w) {equation="abcd,cde->abe"} @proj
})";

// tf2onnx's Reshape chains lose dims the weight still names ([?, 32, ?, 16] against
// [8, 16, 128] in g2p BERT): an unknown dim against a static one takes the static size.
TEST(LowerEinsum, UnknownDimTakesTheWeightsSize) {
  auto before = testing::parse_ir(kProjection), after = testing::parse_ir(kProjection);
  after->find_value("r")->set_shape(Shape({Dim::symbol("N"), Dim(3), Dim(), Dim(2)}));
  PassStats stats;
  ASSERT_TRUE(lower_einsum(*after, stats).ok());
  EXPECT_EQ(stats["lower_einsum"]["einsum_to_matmul"].applied, 1);
  ASSERT_TRUE(refresh_shapes(*after).ok());
  const std::string text = testing::ir(*after);
  EXPECT_NE(text.find("%proj/A_shape = const i64[3] [0, 3, 4]"), std::string::npos) << text;
  EXPECT_EQ(text.find("Einsum"), std::string::npos) << text;
  testing::expect_same_outputs(*before, *after, 1e-5);
}

// Unknown against unknown, or against a static 1 (which would broadcast): the Einsum stays.
TEST(LowerEinsum, UnknownAgainstOneStays) {
  auto g = testing::parse_ir(R"(graph g (%x: f32[N,3,4], %w: f32[1,2,3]) -> (%y) {
    %s = const i64[4] [0, 3, -1, 2]
    %r = Reshape(%x, %s) @split
    %y = Einsum(%r, %w) {equation="abcd,cde->abe"} @proj
  })");
  g->find_value("r")->set_shape(Shape({Dim::symbol("N"), Dim(3), Dim(), Dim(2)}));
  PassStats stats;
  ASSERT_TRUE(lower_einsum(*g, stats).ok());
  EXPECT_EQ(stats["lower_einsum"]["einsum_to_matmul"].applied, 0);
  EXPECT_EQ(stats["lower_einsum"]["einsum_to_matmul"].near_misses.size(), 1u);
}

}  // namespace
}  // namespace ferry
