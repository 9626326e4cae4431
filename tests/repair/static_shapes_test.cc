// repair/static_shapes.h: --shape dims written into the graph, symbols bound across
// inputs, shapes re-inferred; every mismatch an error naming the input.
#include <gtest/gtest.h>

#include "../frontends/onnx/onnx_test_util.h"
#include "ir/text_format.h"
#include "ops/shape_inference.h"
#include "repair/static_shapes.h"

namespace ferry {
namespace {

std::unique_ptr<Graph> two_inputs() {
  auto g = parse_graph(R"(graph g (%x: f32[N,3,H,W], %m: f32[N,W]) -> (%y, %z) {
  %y = Relu(%x)
  %z = Neg(%m)
})");
  EXPECT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE(infer_shapes(**g).ok());
  return std::move(g).value();
}

TEST(StaticShapes, BindsTheInputAndItsSymbolsEverywhere) {
  auto g = two_inputs();
  auto bound = repair::bind_input_shapes(*g, {{"x", {2, 3, 8, 16}}});
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  EXPECT_EQ(*bound, (std::vector<std::string>{"H=8", "N=2", "W=16"}));
  EXPECT_EQ(g->inputs()[1]->shape().to_string(), "[2,16]");
  EXPECT_EQ(g->outputs()[0]->shape().to_string(), "[2,3,8,16]");
  EXPECT_EQ(g->outputs()[1]->shape().to_string(), "[2,16]");
}

TEST(StaticShapes, MismatchesNameTheInput) {
  auto g = two_inputs();
  auto r = repair::bind_input_shapes(*g, {{"y", {1}}});
  EXPECT_CONTAINS(r.status().message(), "the model has no input 'y'");
  r = repair::bind_input_shapes(*g, {{"x", {1, 3, 8}}});
  EXPECT_CONTAINS(r.status().message(), "input 'x' has rank 4, 3 dims given");
  r = repair::bind_input_shapes(*g, {{"x", {1, 4, 8, 8}}});
  EXPECT_CONTAINS(r.status().message(), "dim 1 of input 'x' is 3, 4 given");
  r = repair::bind_input_shapes(*g, {{"x", {1, 3, 8, 8}}, {"m", {2, 8}}});
  EXPECT_CONTAINS(r.status().message(), "symbol N is");
}

}  // namespace
}  // namespace ferry
