// Slice on the own strided-copy step (cpu_step_table.cc) against the reference
// interpreter: positive and negative starts/ends, INT64 bounds, negative and >1 steps,
// omitted axes/steps, ranks 1-5, a blocked conv output as data. No reference step.
#include <gtest/gtest.h>

#include <climits>

#include "kernel_test_util.h"
#include "backends/cpu/cpu_session.h"
#include "backends/cpu/cpu_target.h"
#include "passes/pipeline.h"

namespace ferry::testing {
namespace {

struct SliceCase {
  std::vector<int64_t> dims, starts, ends, axes, steps;  // empty axes/steps: omitted
  bool after_conv;                                       // data is a conv output (blocked layouts)
};

Tensor i64s(const std::vector<int64_t>& v) { return Tensor::from_vector<int64_t>(v, {int64_t(v.size())}); }

TEST(SliceStep, SweepMatchesReference) {
  const int64_t M = LLONG_MAX;
  const std::vector<SliceCase> cases = {
      {{2, 116, 7, 7}, {0}, {58}, {1}, {}, false},
      {{2, 116, 7, 7}, {58}, {M}, {1}, {}, false},
      {{1, 16, 9, 8}, {1, 0}, {-1, M}, {2, 3}, {2, 3}, true},
      {{1, 30, 9, 8}, {-1}, {-M}, {1}, {-1}, true},
      {{1, 3, 8, 8, 85}, {0, 4}, {M, M}, {-1, 3}, {1, 1}, false},
      {{4, 9, 13}, {1, -5, 12}, {3, -1, 0}, {}, {1, 2, -3}, false},
      {{37}, {3}, {100}, {}, {}, false},
      {{2, 3, 8, 8, 2}, {0}, {1}, {-1}, {}, false},
      {{1, 24, 10, 10}, {0, 1}, {M, M}, {2, 3}, {2, 2}, true},
  };
  uint32_t seed = 700;
  for (const SliceCase& sc : cases) {
    Tensor x = randn(sc.dims, seed++);
    Tensor w = sc.after_conv ? randn({sc.dims[1], sc.dims[1], 1, 1}, seed++) : Tensor();
    std::map<std::string, Tensor> feeds{{"x", x}};
    auto build = [&](Graph& g) {
      Value* v = g.add_input("x", DType::f32, x.shape());
      if (sc.after_conv) v = g.add_node(Op::Conv, {v, g.add_constant("w", w)}, 1, {}, "conv")->output(0);
      std::vector<Value*> in{v, g.add_constant("starts", i64s(sc.starts)), g.add_constant("ends", i64s(sc.ends))};
      if (!sc.axes.empty() || !sc.steps.empty()) {
        std::vector<int64_t> axes = sc.axes;
        if (axes.empty())
          for (size_t i = 0; i < sc.starts.size(); ++i) axes.push_back(int64_t(i));
        in.push_back(g.add_constant("axes", i64s(axes)));
      }
      if (!sc.steps.empty()) in.push_back(g.add_constant("steps", i64s(sc.steps)));
      Value* y = g.add_node(Op::Slice, in, 1, {}, "slice")->output(0);
      g.set_outputs({y});
    };
    std::string label = "slice " + x.type_string();
    for (bool blocked : {true, false}) {
      auto g = std::make_unique<Graph>();
      build(*g);
      ASSERT_TRUE(infer_shapes(*g).ok()) << label;
      auto want = interpret(*g, feeds);
      ASSERT_TRUE(want.ok()) << label << ": " << want.status().to_string();
      ASSERT_TRUE(optimize(*g, cpu_target(), {}, nullptr).ok()) << label;
      SessionOptions o;
      o.blocked_layouts = blocked;
      auto s = CpuSession::compile(std::move(g), o);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      auto info = (*s)->plan_info({x.dims()});
      ASSERT_TRUE(info.ok()) << label << ": " << info.status().to_string();
      std::string plan;
      int slices = 0;
      for (const StepInfo& st : info->steps) {
        plan += "\n  " + st.op + " " + st.kernel;
        slices += st.op == "Slice" && st.kernel.rfind("slice_strided_copy_", 0) == 0;
      }
      for (const StepInfo& st : info->steps) EXPECT_FALSE(st.reference) << label << plan;
      EXPECT_EQ(slices, 1) << label << plan;
      for (int rep = 0; rep < 2; ++rep) {
        auto got = (*s)->run(feeds);
        ASSERT_TRUE(got.ok()) << label << ": " << got.status().to_string();
        EXPECT_TRUE(close((*got)[0], (*want)[0], 1e-5)) << label << (blocked ? " blocked" : " plain") << plan;
      }
    }
  }
}

}  // namespace
}  // namespace ferry::testing
