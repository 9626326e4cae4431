// Split on a channels-last or channel-blocked conv output (cpu_split_step.cc) against the
// reference interpreter: along channels (YOLOv8's C2f halves), unequal sizes, equal splits
// without sizes, spatial axes; each output feeds a conv in that layout, so no reorder may
// appear around the Split. Near misses: a plain input and (blocked) a spatial axis or a
// channel block cut in two stay on the kernel table's split__generic. nChw8c shows up with
// AVX2 oneDNN (ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 host).
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

/// The layout a oneDNN step's kernel name gives ("onednn_conv2d_f32_acdb[brgconv:...]" -> "acdb").
std::string conv_layout(const std::string& kernel) {
  const size_t a = kernel.find("f32_"), b = kernel.find('[');
  return a == std::string::npos || b == std::string::npos ? "" : kernel.substr(a + 4, b - a - 4);
}

struct SplitCase {
  std::vector<int64_t> x;      // input of the 1x1 conv that makes the Split's input
  int64_t axis;
  std::vector<int64_t> split;  // empty: equal parts
  size_t outputs;
  bool after_conv;             // false: Split on the graph input (plain)
};

TEST(SplitStep, ChannelsLastSplitsMatchAndNeedNoReorder) {
  const std::vector<SplitCase> cases = {
      {{1, 32, 10, 12}, 1, {16, 16}, 2, true},
      {{1, 32, 10, 12}, 1, {8, 24}, 2, true},
      {{2, 48, 7, 9}, 1, {}, 3, true},
      {{1, 16, 10, 12}, 2, {3, 7}, 2, true},
      {{1, 16, 10, 12}, 3, {5, 5, 2}, 3, true},
      {{1, 32, 10, 12}, 1, {16, 16}, 2, false},
      {{1, 32, 10, 12}, 1, {12, 20}, 2, true},  // blocked: a channel block cut in two
  };
  uint32_t seed = 7600;
  for (const SplitCase& sc : cases) {
    const int64_t c = sc.x[1];
    Tensor x = randn(sc.x, seed++), w = randn({c, c, 1, 1}, seed++);
    std::vector<Tensor> heads;
    std::map<std::string, Tensor> feeds{{"x", x}};
    auto build = [&](Graph& g) {
      Value* v = g.add_input("x", DType::f32, x.shape());
      if (sc.after_conv) v = g.add_node(Op::Conv, {v, g.add_constant("w", w)}, 1, {}, "conv")->output(0);
      std::vector<Value*> in{v};
      if (!sc.split.empty()) in.push_back(g.add_constant("split", i64s(sc.split)));
      Node* split = g.add_node(Op::Split, in, sc.outputs, attrs({{"axis", sc.axis}}), "split");
      std::vector<Value*> outs;
      for (size_t i = 0; i < sc.outputs; ++i) {
        // A 3x3 conv per part (channels-last on oneDNN), and the part itself as an output.
        Value* part = split->output(i);
        const int64_t pc = sc.axis == 1 ? (sc.split.empty() ? c / int64_t(sc.outputs) : sc.split[i]) : c;
        Tensor hw = randn({16, pc, 3, 3}, 7700 + uint32_t(i));  // 16: oneDNN (4 would be a row conv)
        outs.push_back(g.add_node(Op::Conv, {part, g.add_constant("hw" + std::to_string(i), hw)}, 1,
                                  attrs({{"pads", ints({1, 1, 1, 1})}}), "head" + std::to_string(i))
                           ->output(0));
      }
      outs.push_back(split->output(0));
      g.set_outputs(outs);
    };
    const std::string label = "split axis " + std::to_string(sc.axis) + " of " + x.type_string();
    for (bool blocked : {true, false}) {
      SessionRun r;
      ASSERT_TRUE(run_session(build, feeds, blocked, &r)) << label;
      EXPECT_TRUE(r.reference_steps().empty()) << label << r.plan_text;
      ASSERT_EQ(r.steps_of("Split").size(), 1u) << r.plan_text;
      const std::string& kernel = r.steps_of("Split")[0]->kernel;
      // The own copy for a channels-last conv output, and for a channel-blocked one (nChw8c on
      // AVX2 oneDNN) split along the channels in whole blocks; else the kernel table's Split.
      const std::string layout = sc.after_conv && blocked ? conv_layout(r.steps_of("Conv")[0]->kernel) : "plain";
      const int64_t block = layout == "abcd8b" ? 8 : layout == "abcd16b" ? 16 : 0;
      bool whole_blocks = block && sc.axis == 1;
      for (size_t i = 0; whole_blocks && i < sc.outputs; ++i)
        whole_blocks = (sc.split.empty() ? c / int64_t(sc.outputs) : sc.split[i]) % block == 0;
      const bool own = layout == "acdb" || whole_blocks;
      EXPECT_EQ(kernel, own ? "split_strided_copy_" + layout : "split__generic") << label << r.plan_text;
      if (own) {
        // Reorders: only the graph input's and the graph outputs' (to plain), none around the Split.
        size_t split_at = 0;
        for (size_t k = 0; k < r.plan.steps.size(); ++k)
          if (r.plan.steps[k].op == "Split") split_at = k;
        for (size_t k = split_at + 1; k < r.plan.steps.size() && r.plan.steps[k].op == "Reorder"; ++k)
          ADD_FAILURE() << label << ": a reorder right after the Split" << r.plan_text;
        EXPECT_NE(r.plan.steps[split_at - 1].op, "Reorder") << label << r.plan_text;
      }
      EXPECT_TRUE(outputs_close(r, 1e-4)) << label << (blocked ? " blocked" : " plain");
    }
  }
}

}  // namespace
}  // namespace ferry::testing
