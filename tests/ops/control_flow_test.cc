// If, Loop and Scan on the reference interpreter (ops/if.cc, loop.cc, scan.cc), against
// values computed by hand; the ONNX Runtime comparisons are tests/models/test_control_flow.py.
#include <gtest/gtest.h>

#include "ir/text_format.h"
#include "ir/verifier.h"
#include "ops/shape_inference.h"
#include "runtime/interpreter.h"

namespace ferry {
namespace {

std::unique_ptr<Graph> load(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  if (!g.ok()) return std::make_unique<Graph>();
  EXPECT_TRUE(verify(**g).ok()) << verify(**g).to_string();
  Status st = infer_shapes(**g);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return std::move(g).value();
}

std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = float(t.get_double(i));
  return v;
}

const char* kIf =
    "graph g (%c: bool[], %x: f32[2]) -> (%y) {\n"
    "  %y = If(%c, %x, %x) {else_branch=graph e () captures (%x: f32[2]) -> (%e) {\n"
    "    %w = const f32[2] [2, 3]\n"
    "    %e = Mul(%x, %w) @mul\n"
    "  }, then_branch=graph t () captures (%x: f32[2]) -> (%t) {\n"
    "    %t = Relu(%x) @relu\n"
    "  }} @if\n"
    "}\n";

TEST(ControlFlow, IfRunsTheTakenBranch) {
  auto g = load(kIf);
  const Tensor x = Tensor::from_vector<float>({-1, 4}, {2});
  auto yes = interpret(*g, {{"c", Tensor::scalar<bool>(true)}, {"x", x}});
  ASSERT_TRUE(yes.ok()) << yes.status().to_string();
  EXPECT_EQ(floats((*yes)[0]), (std::vector<float>{0, 4}));
  auto no = interpret(*g, {{"c", Tensor::scalar<bool>(false)}, {"x", x}});
  ASSERT_TRUE(no.ok()) << no.status().to_string();
  EXPECT_EQ(floats((*no)[0]), (std::vector<float>{-2, 12}));
}

TEST(ControlFlow, IfMergesBranchShapes) {
  auto g = load(
      "graph g (%c: bool[], %x: f32[2,3]) -> (%y) {\n"
      "  %y = If(%c, %x, %x) {else_branch=graph e () captures (%x: f32[2,3]) -> (%e) {\n"
      "    %e = Transpose(%x) {perm=[1,0]} @tr\n"
      "  }, then_branch=graph t () captures (%x: f32[2,3]) -> (%x) {\n"
      "  }} @if\n"
      "}\n");
  EXPECT_EQ(g->outputs()[0]->type_string(), "f32[?,?]");
}

// Loop M times: acc += i (carried), scan output acc * 2; stops early when acc >= limit.
const char* kLoop =
    "graph g (%m: i64[], %go: bool[], %acc0: f32[1], %limit: f32[]) -> (%acc, %scan) {\n"
    "  %acc, %scan = Loop(%m, %go, %acc0, %limit) {body=graph body (%i: i64[], %cin: bool[], %a: f32[1]) captures "
    "(%limit: f32[]) -> (%cout, %a2, %s) {\n"
    "    %two = const f32[] [2]\n"
    "    %fi = Cast(%i) {to=\"f32\"} @cast\n"
    "    %a2 = Add(%a, %fi) @add\n"
    "    %s = Mul(%a2, %two) @mul\n"
    "    %cout = Less(%a2, %limit) @less\n"
    "  }} @loop\n"
    "}\n";

TEST(ControlFlow, LoopCarriesAndStacks) {
  auto g = load(kLoop);
  EXPECT_EQ(g->outputs()[1]->type_string(), "f32[?,1]");
  auto out = interpret(*g, {{"m", Tensor::scalar<int64_t>(4)},
                            {"go", Tensor::scalar<bool>(true)},
                            {"acc0", Tensor::from_vector<float>({10}, {1})},
                            {"limit", Tensor::scalar<float>(100)}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(floats((*out)[0]), (std::vector<float>{16}));  // 10 + 0 + 1 + 2 + 3
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(floats((*out)[1]), (std::vector<float>{20, 22, 26, 32}));
  // The condition stops it after the iteration that reaches 13.
  auto early = interpret(*g, {{"m", Tensor::scalar<int64_t>(10)},
                              {"go", Tensor::scalar<bool>(true)},
                              {"acc0", Tensor::from_vector<float>({10}, {1})},
                              {"limit", Tensor::scalar<float>(13)}});
  ASSERT_TRUE(early.ok()) << early.status().to_string();
  EXPECT_EQ(floats((*early)[0]), (std::vector<float>{13}));
  EXPECT_EQ(floats((*early)[1]), (std::vector<float>{20, 22, 26}));
  // Zero trips: the initial value, and an empty scan output.
  auto none = interpret(*g, {{"m", Tensor::scalar<int64_t>(0)},
                             {"go", Tensor::scalar<bool>(true)},
                             {"acc0", Tensor::from_vector<float>({10}, {1})},
                             {"limit", Tensor::scalar<float>(13)}});
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  EXPECT_EQ(floats((*none)[0]), (std::vector<float>{10}));
  EXPECT_EQ((*none)[1].dims(), (std::vector<int64_t>{0, 1}));
}

TEST(ControlFlow, LoopWithoutBoundIsRefused) {
  auto g = load(
      "graph g (%a0: f32[1]) -> (%a) {\n"
      "  %a = Loop(_, _, %a0) {body=graph body (%i: i64[], %c: bool[], %a: f32[1]) -> (%c, %a) {\n"
      "  }} @loop\n"
      "}\n");
  auto out = interpret(*g, {{"a0", Tensor::from_vector<float>({1}, {1})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().to_string(),
            "invalid model: running node 'loop' (Loop): neither M nor cond is given: the loop would never end");
}

// state += x_t (x forward along axis 1), out_t = state; outputs reversed along axis 0.
TEST(ControlFlow, ScanAlongAxesAndDirections) {
  auto g = load(
      "graph g (%s0: f32[2], %x: f32[2,3]) -> (%s, %y) {\n"
      "  %s, %y = Scan(%s0, %x) {body=graph body (%st: f32[2], %xt: f32[2]) -> (%st2, %st2) {\n"
      "    %st2 = Add(%st, %xt) @add\n"
      "  }, num_scan_inputs=1, scan_input_axes=[1], scan_output_directions=[1]} @scan\n"
      "}\n");
  EXPECT_EQ(g->outputs()[1]->type_string(), "f32[3,2]");
  auto out = interpret(*g, {{"s0", Tensor::from_vector<float>({0, 100}, {2})},
                            {"x", Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(floats((*out)[0]), (std::vector<float>{6, 115}));
  // steps: [1,104], [3,109], [6,115]; reversed along the new axis 0
  EXPECT_EQ(floats((*out)[1]), (std::vector<float>{6, 115, 3, 109, 1, 104}));
}

}  // namespace
}  // namespace ferry
