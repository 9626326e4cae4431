// The accuracy guard (precision/accuracy_guard.h) on a graph whose middle node overflows
// fp16 (x * 32768 > 65504 for |x| > 2): the guard raises exactly that node, the others stay
// fp16, and every decision carries its sensitivity and reason. Forcing the node to fp16 is
// an error naming it. A graph whose rounding errors partly cancel shows the refinement: the
// greedy loop raises four nodes, and three of them go back to fp16 once the fourth holds the budget.
#include "precision/accuracy_guard.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/text_format.h"
#include "ops/shape_inference.h"

namespace ferry {
namespace {

const char* kOverflow = R"(graph g (%x: f32[2,4]) -> (%y) {
  %up = const f32[] [32768]
  %down = const f32[] [0.000030517578125]
  %big = Mul(%x, %up) @scale_up
  %back = Mul(%big, %down) @scale_down
  %y = Tanh(%back) @tanh
})";

std::unique_ptr<Graph> parse(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_TRUE(infer_shapes(**g).ok());
  return std::move(g).value();
}

GuardOptions options() {
  GuardOptions o;
  o.budget = default_accuracy_budget(DType::f16);
  o.samples.push_back({{"x", Tensor::from_vector(std::vector<float>{3, -1, 0.5f, 2.5f, 0.1f, -3, 1, 0}, {2, 4})}});
  o.samples_from = "one sample";
  return o;
}

const NodePrecision& decision(const PrecisionReport& r, const std::string& node) {
  for (const NodePrecision& d : r.nodes)
    if (d.node == node) return d;
  ADD_FAILURE() << node;
  return r.nodes.front();
}

TEST(AccuracyGuard, RaisesExactlyTheNodeThatOverflows) {
  auto g = parse(kOverflow);
  auto r = assign_precision(*g, reference_precisions(), {.mode = "fp16"});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(run_accuracy_guard(*g, reference_precisions(), *r, options()).ok());
  const NodePrecision& up = decision(*r, "scale_up");
  EXPECT_EQ(up.precision, DType::f32);
  EXPECT_TRUE(up.sensitivity && std::isinf(*up.sensitivity));
  EXPECT_NE(up.reason.find("raised by the accuracy guard"), std::string::npos) << up.reason;
  EXPECT_NE(up.reason.find("NaN/Inf"), std::string::npos) << up.reason;
  for (const char* n : {"scale_down", "tanh"}) {
    EXPECT_EQ(decision(*r, n).precision, DType::f16) << n;
    ASSERT_TRUE(decision(*r, n).sensitivity) << n;
    EXPECT_LT(*decision(*r, n).sensitivity, 1.0) << n;
  }
  EXPECT_EQ(lowered_nodes(*r).count("scale_up"), 0u);
  EXPECT_NE(r->guard_summary.find("raised 1 of 3"), std::string::npos) << r->guard_summary;
}

TEST(AccuracyGuard, SaysWhenItJudgedTooFewInputsToCarryOver) {
  auto g = parse(kOverflow);
  GuardOptions few = options(), many = options();
  many.samples.assign(kGuardGeneralizingSamples, few.samples[0]);
  for (const GuardOptions* o : {&few, &many}) {
    auto r = assign_precision(*g, reference_precisions(), {.mode = "fp16"});
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(run_accuracy_guard(*g, reference_precisions(), *r, *o).ok());
    const bool noted = r->guard_summary.find("judged on 1 input: on trained models") != std::string::npos;
    EXPECT_EQ(noted, o == &few) << r->guard_summary;
  }
}

TEST(AccuracyGuard, ForcedNodeThatOverflowsIsAnError) {
  auto g = parse(kOverflow);
  auto r = assign_precision(*g, reference_precisions(), {.mode = "fp16", .force = {"scale_up=fp16"}});
  ASSERT_TRUE(r.ok());
  Status st = run_accuracy_guard(*g, reference_precisions(), *r, options());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("node 'scale_up' (Mul) makes NaN/Inf"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("--force"), std::string::npos) << st.message();
}

TEST(AccuracyGuard, NothingLoweredNothingToCheck) {
  auto g = parse(kOverflow);
  auto r = assign_precision(*g, reference_precisions(), {.mode = "fp32"});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(run_accuracy_guard(*g, reference_precisions(), *r, options()).ok());
  EXPECT_EQ(r->guard_summary, "nothing lowered: no accuracy to check");
}

// x = 1; five nodes x * k_i whose fp16 rounding errs by -0.45, +0.3, +0.3, +0.3, +0.3 units of
// 2^-10 (k = 1 + 0.45u rounds down to 1, k = 1 + 0.7u up to 1 + u); their sum is kept fp32, so
// the output's error is the sum of the lowered nodes' errors. Budget max_abs <= 0.47u: every
// node holds alone, all five together (0.75u) do not. Greedy raises a (the most sensitive),
// then b, c, d (1.2, 0.9, 0.6 -> 0.3u); tried again one at a time, a (-0.15u), b (+0.15u) and
// c (+0.45u) hold, d (+0.75u) does not.
TEST(AccuracyGuard, RefinementLowersAgainWhatLaterRaisesMadeUnnecessary) {
  const double u = 1.0 / 1024;
  auto k = [&](double f) { return std::to_string(1 + f * u); };
  auto g = parse("graph g (%x: f32[1]) -> (%y) {\n"
                 "  %ka = const f32[] [" + k(0.45) + "]\n  %kb = const f32[] [" + k(0.7) + "]\n"
                 "  %va = Mul(%x, %ka) @a\n  %vb = Mul(%x, %kb) @b\n  %vc = Mul(%x, %kb) @c\n"
                 "  %vd = Mul(%x, %kb) @d\n  %ve = Mul(%x, %kb) @e\n"
                 "  %s1 = Add(%va, %vb) @s1\n  %s2 = Add(%s1, %vc) @s2\n  %s3 = Add(%s2, %vd) @s3\n"
                 "  %y = Add(%s3, %ve) @s4\n}");
  auto r = assign_precision(*g, reference_precisions(),
                            {.mode = "fp16", .keep_fp32 = {"s1", "s2", "s3", "s4"}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  GuardOptions o;
  auto budget = parse_accuracy_budget("max_abs<=" + std::to_string(0.47 * u));
  ASSERT_TRUE(budget.ok()) << budget.status().to_string();
  o.budget = *budget;
  o.samples.push_back({{"x", Tensor::from_vector(std::vector<float>{1}, {1})}});
  o.samples_from = "one sample";
  ASSERT_TRUE(run_accuracy_guard(*g, reference_precisions(), *r, o).ok());
  for (const char* n : {"a", "b", "c", "e"}) EXPECT_EQ(decision(*r, n).precision, DType::f16) << n;
  EXPECT_EQ(decision(*r, "d").precision, DType::f32);
  EXPECT_NE(decision(*r, "a").reason.find("then lowered again"), std::string::npos) << decision(*r, "a").reason;
  EXPECT_NE(r->guard_summary.find("raised 1 of 5"), std::string::npos) << r->guard_summary;
  EXPECT_NE(r->guard_summary.find("3 more raised, then lowered again"), std::string::npos) << r->guard_summary;
}

}  // namespace
}  // namespace ferry
