// Concat on oneDNN's concat primitive against the reference interpreter: blocked conv
// outputs along channels (whole blocks stay blocked, a padded block goes plain), a
// plain graph input and a constant beside them, other axes and ranks. No step may
// run a reference implementation.
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct ConcatCase {
  std::vector<int64_t> conv_channels;  // one conv output per entry (0: the plain input "p")
  int64_t axis;
  bool constant;                       // a constant operand last
};

TEST(OnednnConcat, BlockedPlainAndConstantOperands) {
  const std::vector<ConcatCase> cases = {
      {{16, 32}, 1, false}, {{16, 32, 8}, 1, true}, {{30, 16}, 1, false}, {{16, 30}, 1, false},
      {{16, 0}, 1, false},  {{0, 24}, 1, true},     {{16, 16}, 2, false}, {{8, 8}, 3, true},
      {{16, 16}, 0, false}, {{12, 20}, -3, false},
  };
  uint32_t seed = 500;
  for (const ConcatCase& cc : cases) {
    const int64_t H = 6, W = 5;
    Tensor x = randn({2, 4, H, W}, seed++);
    std::vector<Tensor> ws, bs;
    for (int64_t c : cc.conv_channels) ws.push_back(randn({c ? c : 1, 4, 3, 3}, seed++)), bs.push_back(randn({c ? c : 1}, seed++));
    // The plain input and the constant take the first conv's shape (with the axis dim changed to 3).
    std::vector<int64_t> like{2, cc.conv_channels[0] ? cc.conv_channels[0] : 8, H, W};
    const int64_t ax = cc.axis < 0 ? cc.axis + 4 : cc.axis;
    std::vector<int64_t> pd = like;
    pd[size_t(ax)] = 3;
    Tensor p = randn(pd, seed++), k = randn(pd, seed++);
    std::map<std::string, Tensor> feeds{{"x", x}, {"p", p}};
    auto build = [&](Graph& g) {
      Value* xv = g.add_input("x", DType::f32, x.shape());
      Value* pv = g.add_input("p", DType::f32, p.shape());
      std::vector<Value*> in;
      for (size_t i = 0; i < cc.conv_channels.size(); ++i) {
        if (!cc.conv_channels[i]) {
          in.push_back(pv);
          continue;
        }
        in.push_back(g.add_node(Op::Conv, {xv, g.add_constant("w" + std::to_string(i), ws[i]),
                                           g.add_constant("b" + std::to_string(i), bs[i])},
                                1, attrs({{"pads", ints({1, 1, 1, 1})}}), "conv" + std::to_string(i))->output(0));
      }
      if (cc.constant) in.push_back(g.add_constant("k", k));
      Value* y = g.add_node(Op::Concat, in, 1, attrs({{"axis", cc.axis}}), "cat")->output(0);
      // A consumer in oneDNN, so a blocked concat output stays blocked.
      y = g.add_node(Op::MaxPool, {y}, 1, attrs({{"kernel_shape", ints({2, 2})}}), "pool")->output(0);
      g.set_outputs({y});
    };
    std::string label = "concat axis " + std::to_string(cc.axis) + " of";
    for (int64_t c : cc.conv_channels) label += " " + (c ? "conv" + std::to_string(c) : std::string("plain"));
    if (cc.constant) label += " const";
    for (bool blocked : {true, false}) {
      SessionRun r;
      ASSERT_TRUE(run_session(build, feeds, blocked, &r)) << label;
      EXPECT_TRUE(r.reference_steps().empty()) << label << ": a reference step" << r.plan_text;
      // oneDNN for a blocked lead (nChw8c / 16c), the own copy over plain or channels-last ones.
      int concat = 0;
      for (const StepInfo* st : r.steps_of("Concat"))
        concat += st->kernel.rfind("onednn_concat_f32_", 0) == 0 || st->kernel.rfind("concat_copy_f32_", 0) == 0;
      EXPECT_EQ(concat, 1) << label << r.plan_text;
      if (!blocked) { EXPECT_EQ(r.steps_of("Concat")[0]->kernel, "concat_copy_f32_plain") << label; }
      EXPECT_TRUE(outputs_close(r, 1e-5)) << label << (blocked ? " blocked" : " plain");
    }
  }
}

struct CopyConcatCase {
  std::vector<std::vector<int64_t>> dims;  // graph inputs
  int64_t axis;
  bool constant;       // a constant operand (the first input's shape) last
  bool after_conv;     // input 0 through a 1x1 conv (channels-last on oneDNN's brgconv)
};

// The own copy: runs of one float (basic-pitch's 8 x [1,172,309,1] on the last axis), mixed
// runs, a channels-last conv output with a 1-channel operand beside it (blocked: oneDNN),
// channel-blocked operands in whole blocks (nChw8c with AVX2 oneDNN), constants, rank 1-5.
TEST(ConcatCopy, RunsOfAnyLengthMatchTheReference) {
  const std::vector<CopyConcatCase> cases = {
      {{{1, 17, 31, 1}, {1, 17, 31, 1}, {1, 17, 31, 1}}, 3, false, false},
      {{{1, 17, 9, 2}, {1, 17, 4, 2}}, 2, true, false},
      {{{2, 3}, {2, 5}, {2, 1}}, -1, false, false},
      {{{7}, {300}}, 0, true, false},
      {{{2, 3, 4, 5, 6}, {2, 3, 1, 5, 6}}, 2, false, false},
      {{{1, 32, 9, 11}, {1, 1, 9, 11}}, 1, false, true},
      {{{1, 16, 9, 11}, {1, 16, 9, 11}}, 3, false, true},
      {{{1, 16, 9, 11}, {1, 8, 9, 11}}, 1, false, true},  // nChw8c (AVX2 oneDNN): whole blocks
      {{{1, 40000}, {1, 20001}, {1, 3}}, 1, false, false},      // one long row: pieces of each run
      {{{2, 3, 20000}, {2, 1, 20000}}, 1, true, false},          // few long rows
  };
  uint32_t seed = 7400;
  for (const CopyConcatCase& cc : cases) {
    std::map<std::string, Tensor> feeds;
    for (size_t i = 0; i < cc.dims.size(); ++i) feeds["x" + std::to_string(i)] = randn(cc.dims[i], seed++);
    Tensor k = randn(cc.dims[0], seed++);
    const int64_t c0 = cc.after_conv ? cc.dims[0][1] : 1;
    Tensor w = randn({c0, c0, 1, 1}, seed++);
    auto build = [&](Graph& g) {
      std::vector<Value*> in;
      for (size_t i = 0; i < cc.dims.size(); ++i) {
        const Tensor& t = feeds.at("x" + std::to_string(i));
        in.push_back(g.add_input("x" + std::to_string(i), DType::f32, t.shape()));
      }
      if (cc.after_conv) in[0] = g.add_node(Op::Conv, {in[0], g.add_constant("w", w)}, 1, {}, "conv")->output(0);
      if (cc.constant) in.push_back(g.add_constant("k", k));
      g.set_outputs({g.add_node(Op::Concat, in, 1, attrs({{"axis", cc.axis}}), "cat")->output(0)});
    };
    for (bool blocked : {true, false}) {
      SessionRun r;
      ASSERT_TRUE(run_session(build, feeds, blocked, &r)) << cc.dims[0].size() << "-D axis " << cc.axis;
      EXPECT_TRUE(r.reference_steps().empty()) << r.plan_text;
      ASSERT_EQ(r.steps_of("Concat").size(), 1u) << r.plan_text;
      const std::string& kernel = r.steps_of("Concat")[0]->kernel;
      const std::string& ck = blocked && cc.after_conv ? r.steps_of("Conv")[0]->kernel : std::string();
      const size_t a = ck.find("f32_"), b = ck.find('[');
      const std::string layout = a == std::string::npos || b == std::string::npos ? "plain" : ck.substr(a + 4, b - a - 4);
      const int64_t block = layout == "abcd8b" ? 8 : layout == "abcd16b" ? 16 : 0;
      bool whole_blocks = block && (cc.axis == 1 || cc.axis == -3);
      for (const auto& d : cc.dims) whole_blocks = whole_blocks && d[1] % block == 0;
      const bool along_channels = cc.axis == 1 || cc.axis == -3;
      if (layout == "plain" || layout == "acdb" || whole_blocks) {
        EXPECT_EQ(kernel, "concat_copy_f32_" + layout) << r.plan_text;
      } else if (block && along_channels) {  // a block cut between operands: plain, as oneDNN would
        EXPECT_EQ(kernel, "concat_copy_f32_plain") << r.plan_text;
      }
      EXPECT_TRUE(outputs_close(r, cc.after_conv ? 1e-5 : 0.0)) << cc.dims[0].size() << "-D axis " << cc.axis << r.plan_text;
    }
  }
}

}  // namespace
}  // namespace ferry::testing
