// Resize nearest by whole factors on a channels-last or channel-blocked (nChw8c with AVX2
// oneDNN) conv output (cpu_resize_step.cc) against the reference interpreter: scales and sizes, asymmetric / half_pixel rounding, unequal
// factors; the output feeds a channels-last conv, so no reorder may appear around the
// Resize. Near misses: linear mode, a fractional factor, a plain input (the kernel table).
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct ResizeCase {
  std::vector<int64_t> x;
  std::vector<float> scales;   // empty: sizes
  std::vector<int64_t> sizes;
  const char *coord, *rounding, *mode;
  bool after_conv;
  bool own;  // expected on the channels-last copy (when the conv runs channels-last)
};

TEST(ResizeStep, ChannelsLastNearestMatchesAndNeedsNoReorder) {
  const std::vector<ResizeCase> cases = {
      {{1, 32, 5, 6}, {1, 1, 2, 2}, {}, "asymmetric", "floor", "nearest", true, true},
      {{2, 16, 4, 3}, {1, 1, 3, 2}, {}, "half_pixel", "round_prefer_floor", "nearest", true, true},
      {{1, 16, 4, 5}, {}, {1, 16, 8, 20}, "asymmetric", "floor", "nearest", true, true},
      {{1, 16, 4, 5}, {1, 1, 2, 2}, {}, "half_pixel", "round_prefer_floor", "linear", true, false},
      {{1, 16, 4, 5}, {1, 1, 1.5f, 2}, {}, "asymmetric", "floor", "nearest", true, false},
      {{1, 16, 4, 5}, {1, 1, 2, 2}, {}, "asymmetric", "floor", "nearest", false, false},
  };
  uint32_t seed = 7800;
  for (const ResizeCase& rc : cases) {
    const int64_t c = rc.x[1];
    // The head has 16 output channels: oneDNN in the Resize's layout (4 would be a row conv).
    Tensor x = randn(rc.x, seed++), w = randn({c, c, 1, 1}, seed++), hw = randn({16, c, 3, 3}, seed++);
    std::map<std::string, Tensor> feeds{{"x", x}};
    auto build = [&](Graph& g) {
      Value* v = g.add_input("x", DType::f32, x.shape());
      if (rc.after_conv) v = g.add_node(Op::Conv, {v, g.add_constant("w", w)}, 1, {}, "conv")->output(0);
      std::vector<Value*> in{v, g.add_constant("roi", Tensor::empty(DType::f32, {0}))};
      if (!rc.scales.empty()) {
        in.push_back(g.add_constant("scales", Tensor::from_vector<float>(rc.scales, {4})));
      } else {
        in.push_back(g.add_constant("scales", Tensor::empty(DType::f32, {0})));
        in.push_back(g.add_constant("sizes", i64s(rc.sizes)));
      }
      Value* y = g.add_node(Op::Resize, in, 1,
                            attrs({{"mode", std::string(rc.mode)}, {"coordinate_transformation_mode", std::string(rc.coord)},
                                   {"nearest_mode", std::string(rc.rounding)}}),
                            "resize")->output(0);
      Value* h = g.add_node(Op::Conv, {y, g.add_constant("hw", hw)}, 1, attrs({{"pads", ints({1, 1, 1, 1})}}), "head")
                     ->output(0);
      g.set_outputs({h});
    };
    const std::string label = std::string("resize ") + rc.mode + " " + rc.coord + " of " + x.type_string();
    for (bool blocked : {true, false}) {
      SessionRun r;
      ASSERT_TRUE(run_session(build, feeds, blocked, &r)) << label;
      ASSERT_EQ(r.steps_of("Resize").size(), 1u) << r.plan_text;
      const std::string& kernel = r.steps_of("Resize")[0]->kernel;
      // Channels-last or channel-blocked (nChw8c with AVX2 oneDNN) conv outputs take the copy.
      const std::string& ck = r.steps_of("Conv")[0]->kernel;
      const size_t a = ck.find("f32_"), b = ck.find('[');
      const std::string layout = a == std::string::npos || b == std::string::npos ? "" : ck.substr(a + 4, b - a - 4);
      const bool own = rc.own && rc.after_conv && blocked && (layout == "acdb" || layout == "abcd8b" || layout == "abcd16b");
      EXPECT_EQ(kernel == "resize_nearest_strided_copy_" + layout, own) << label << r.plan_text;
      if (own) {
        for (size_t k = 1; k + 1 < r.plan.steps.size(); ++k)
          if (r.plan.steps[k].op == "Resize") {
            EXPECT_TRUE(r.plan.steps[k - 1].op != "Reorder" && r.plan.steps[k + 1].op != "Reorder")
                << label << ": a reorder beside the Resize" << r.plan_text;
          }
      }
      EXPECT_TRUE(outputs_close(r, 1e-4)) << label << (blocked ? " blocked" : " plain");
    }
  }
}

}  // namespace
}  // namespace ferry::testing
