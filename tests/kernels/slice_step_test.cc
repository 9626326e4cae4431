// Slice on the own strided-copy step (cpu_step_table.cc) against the reference
// interpreter: positive and negative starts/ends, INT64 bounds, negative and >1 steps,
// omitted axes/steps, ranks 1-5, a blocked conv output as data. No reference step.
#include <gtest/gtest.h>

#include <climits>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct SliceCase {
  std::vector<int64_t> dims, starts, ends, axes, steps;  // empty axes/steps: omitted
  bool after_conv;                                       // data is a conv output (blocked layouts)
};


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
      // size-1 and contiguous dims merged into longer rows (basic-pitch's harmonic stacking)
      {{1, 17, 31, 1}, {5}, {M}, {2}, {}, false},
      {{1, 17, 31, 1}, {-2}, {3}, {2}, {-1}, false},
      {{2, 1, 6, 5, 4}, {1}, {5}, {2}, {}, false},
      {{1, 1, 1, 40}, {3}, {39}, {3}, {2}, false},
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
      SessionRun r;
      ASSERT_TRUE(run_session(build, feeds, blocked, &r)) << label;
      EXPECT_TRUE(r.reference_steps().empty()) << label << r.plan_text;
      int slices = 0;
      for (const StepInfo* st : r.steps_of("Slice")) slices += st->kernel.rfind("slice_strided_copy_", 0) == 0;
      EXPECT_EQ(slices, 1) << label << r.plan_text;
      EXPECT_TRUE(outputs_close(r, 1e-5)) << label << (blocked ? " blocked" : " plain");
    }
  }
}

}  // namespace
}  // namespace ferry::testing
