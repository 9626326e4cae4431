// Graph outputs are written straight into the caller's tensors when their slot owns
// its buffer alone (cpu_plan.h, Signature::direct_outputs): no copy after the run.
// A caller's tensor is reused only while nobody else holds it, so an output kept from
// an earlier run is never overwritten; outputs that are in-place views or listed twice
// take the copy path. Results equal the interpreter's either way.
#include <gtest/gtest.h>

#include "../kernels/kernel_test_util.h"
#include "backends/cpu/cpu_session.h"

namespace ferry::testing {
namespace {

/// Outputs: Conv(x) (oneDNN, reordered to plain), Sigmoid(Relu(x)) (an elementwise step that
/// would run in place), Softmax(x) (a kernel-table step), and Softmax(x) again (listed twice:
/// copied).
std::unique_ptr<Graph> direct_outputs_graph() {
  auto g = std::make_unique<Graph>();
  Value* x = g->add_input("x", DType::f32, Shape({Dim(2), Dim(8), Dim(16), Dim(16)}));
  auto node = [&](Op op, std::vector<Value*> in, AttrMap a = {}) {
    return g->add_node(op, std::move(in), 1, std::move(a), g->unique_name(op_name(op)))->output(0);
  };
  Value* w = g->add_constant("w", randn({8, 8, 3, 3}, 11));
  Value* c = node(Op::Conv, {x, w}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  Value* s = node(Op::Sigmoid, {node(Op::Relu, {x})});
  Value* m = node(Op::Softmax, {x}, attrs({{"axis", int64_t(-1)}}));
  g->set_outputs({c, s, m, m});
  EXPECT_TRUE(infer_shapes(*g).ok());
  return g;
}

void expect_matches_interpreter(const std::vector<Tensor>& got, const Tensor& x) {
  auto ref = direct_outputs_graph();
  auto want = interpret(*ref, {{"x", x}});
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  ASSERT_EQ(got.size(), want->size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(close(got[i], (*want)[i], 1e-5)) << "output " << i;
}

TEST(CpuDirectOutputs, OutputsOwningTheirBufferAreWrittenIntoTheCallersTensors) {
  auto s = CpuSession::compile(direct_outputs_graph());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  std::vector<Tensor> out;
  Tensor x1 = randn({2, 8, 16, 16}, 1), x2 = randn({2, 8, 16, 16}, 2);
  ASSERT_TRUE((*s)->run({x1}, &out).ok());
  expect_matches_interpreter(out, x1);
  const uint8_t* conv = out[0].raw();
  const uint8_t* softmax = out[2].raw();
  ASSERT_TRUE((*s)->run({x2}, &out).ok());
  expect_matches_interpreter(out, x2);
  EXPECT_EQ(out[0].raw(), conv) << "an unshared output tensor is reused";
  EXPECT_EQ(out[2].raw(), softmax);
  for (const Tensor& t : out) EXPECT_EQ(t.buffer().use_count(), 1) << "the session keeps no reference";
}

TEST(CpuDirectOutputs, DirectOutputsTakeNoArenaSpace) {
  // x -> Softmax -> y: y is the only value and is lent the caller's tensor; Softmax -> Tanh
  // -> y: the intermediate needs the arena, y does not (Tanh writes y, not over its input).
  for (bool two_steps : {false, true}) {
    auto g = std::make_shared<Graph>();
    Value* x = g->add_input("x", DType::f32, Shape({Dim(4), Dim(256)}));
    Value* y = g->add_node(Op::Softmax, {x}, 1, attrs({{"axis", int64_t(-1)}}), "sm")->output(0);
    if (two_steps) y = g->add_node(Op::Tanh, {y}, 1, {}, "t")->output(0);
    g->set_outputs({y});
    ASSERT_TRUE(infer_shapes(*g).ok());
    auto s = CpuSession::compile(g);
    ASSERT_TRUE(s.ok());
    auto info = (*s)->plan_info({{4, 256}});
    ASSERT_TRUE(info.ok()) << info.status().to_string();
    EXPECT_EQ(info->arena_bytes, two_steps ? 4u * 256 * 4 : 0u) << "two steps: " << two_steps;
    std::vector<Tensor> out;
    Tensor in = randn({4, 256}, 9);
    ASSERT_TRUE((*s)->run({in}, &out).ok());
    auto want = interpret(*g, {{"x", in}});
    ASSERT_TRUE(want.ok());
    EXPECT_TRUE(close(out[0], (*want)[0], 1e-5));
  }
}

TEST(CpuDirectOutputs, AnOutputTheCallerStillHoldsIsNeverOverwritten) {
  auto s = CpuSession::compile(direct_outputs_graph());
  ASSERT_TRUE(s.ok());
  std::vector<Tensor> out;
  Tensor x1 = randn({2, 8, 16, 16}, 3), x2 = randn({2, 8, 16, 16}, 4);
  ASSERT_TRUE((*s)->run({x1}, &out).ok());
  std::vector<Tensor> kept = out;  // shares every buffer
  ASSERT_TRUE((*s)->run({x2}, &out).ok());
  expect_matches_interpreter(kept, x1);
  expect_matches_interpreter(out, x2);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NE(out[i].raw(), kept[i].raw()) << "output " << i;
}

}  // namespace
}  // namespace ferry::testing
