// Kernels that cover part of their op (KernelEntry::accepts): the planner gives the
// node to the own kernel only where it computes it itself, and to the reference
// kernel — reported as a reference step — otherwise. Both against the interpreter.
#include <gtest/gtest.h>

#include <functional>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct AcceptCase {
  std::string label;
  std::function<void(Graph&, Value*)> build;  // adds the node under test on input x and sets the outputs
  std::string kernel;                         // expected kernel of that node ("" : the reference kernel)
};

TEST(KernelAccepts, PartialKernelsDeclineAtPlanTime) {
  Tensor x = randn({1, 8, 6, 5}, 900);
  auto i64s = [](std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(v, {int64_t(v.size())}); };
  auto f32s = [](std::vector<float> v) { return Tensor::from_vector<float>(v, {int64_t(v.size())}); };
  auto resize = [&](const char* mode, const char* coord, const char* rounding, std::vector<float> scales) {
    return [=](Graph& g, Value* v) {
      Value* y = g.add_node(Op::Resize, {v, g.add_constant("roi", Tensor::empty(DType::f32, {0})),
                                         g.add_constant("scales", f32s(scales))},
                            1, attrs({{"mode", std::string(mode)}, {"coordinate_transformation_mode", std::string(coord)},
                                      {"nearest_mode", std::string(rounding)}}), "node")->output(0);
      g.set_outputs({y});
    };
  };
  auto reduce = [&](Op op, std::vector<int64_t> axes) {
    return [=](Graph& g, Value* v) {
      Value* y = g.add_node(op, {v, g.add_constant("axes", i64s(axes))}, 1, attrs({{"keepdims", int64_t(1)}}), "node")
                     ->output(0);
      g.set_outputs({y});
    };
  };
  const std::vector<AcceptCase> cases = {
      {"nearest 2x asymmetric floor", resize("nearest", "asymmetric", "floor", {1, 1, 2, 2}), "resize_f32__generic"},
      {"nearest 3x half_pixel", resize("nearest", "half_pixel", "round_prefer_floor", {1, 1, 3, 3}),
       "resize_f32__generic"},
      {"linear 2x", resize("linear", "half_pixel", "round_prefer_floor", {1, 1, 2, 2}), "resize_f32__generic"},
      {"linear 1.5x align_corners", resize("linear", "align_corners", "round_prefer_floor", {1, 1, 1.5f, 1.5f}),
       "resize_f32__generic"},
      {"cubic 2x", resize("cubic", "half_pixel", "round_prefer_floor", {1, 1, 2, 2}), ""},
      {"linear over channels", resize("linear", "half_pixel", "round_prefer_floor", {1, 2, 2, 2}), ""},
      {"nearest 1.5x", resize("nearest", "asymmetric", "floor", {1, 1, 1.5f, 1.5f}), ""},
      {"nearest 2x asymmetric round", resize("nearest", "asymmetric", "round_prefer_floor", {1, 1, 2, 2}), ""},
      {"mean over H,W", reduce(Op::ReduceMean, {2, 3}), "reduce_mean_f32__generic"},
      {"sum over C", reduce(Op::ReduceSum, {1}), "reduce_sum_f32__generic"},
      {"mean over N,H (1, 6: one run)", reduce(Op::ReduceMean, {0, 2}), "reduce_mean_f32__generic"},
      {"mean over C,W", reduce(Op::ReduceMean, {1, 3}), ""},
      {"max of three", [](Graph& g, Value* v) {
         Value* a = g.add_node(Op::Relu, {v}, 1, {}, "a")->output(0);
         Value* y = g.add_node(Op::Max, {v, a, g.add_constant("k", Tensor::scalar(0.25f))}, 1, {}, "node")->output(0);
         g.set_outputs({y});
       }, ""},
      {"max of two", [](Graph& g, Value* v) {
         Value* a = g.add_node(Op::Sigmoid, {v}, 1, {}, "a")->output(0);
         Value* y = g.add_node(Op::Max, {v, a}, 1, {}, "node")->output(0);
         g.set_outputs({y});
       }, "max_f32__"},
  };
  for (const AcceptCase& c : cases) {
    SessionRun r;
    auto build = [&](Graph& g) { c.build(g, g.add_input("x", DType::f32, x.shape())); };
    ASSERT_TRUE(run_session(build, {{"x", x}}, false, &r, 1)) << c.label;
    bool found = false;
    for (const StepInfo& st : r.plan.steps) {
      if (st.nodes != "node") continue;
      found = true;
      if (c.kernel.empty()) {
        EXPECT_TRUE(st.reference) << c.label << ": " << st.kernel;
      } else {
        EXPECT_FALSE(st.reference) << c.label << ": " << st.kernel;
        EXPECT_EQ(st.kernel.rfind(c.kernel, 0), 0u) << c.label << ": " << st.kernel;
      }
    }
    EXPECT_TRUE(found) << c.label;
    EXPECT_TRUE(outputs_close(r, 1e-5)) << c.label;
  }
}

}  // namespace
}  // namespace ferry::testing
