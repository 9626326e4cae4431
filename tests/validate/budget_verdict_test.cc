// The verdict on a lowered model (validate/budget_verdict.h): an accuracy budget decides each
// floating output, the elementwise comparison only informs, integers stay exact, NaN / Inf
// fails, and --per-layer's divergence does not decide.
#include "validate/budget_verdict.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/text_format.h"
#include "validate/reference_provider.h"
#include "validate/validate_report.h"
#include "validate/validator.h"

namespace ferry::validate {
namespace {

const char* kBudgetModel = R"(graph main (%x: f32[4,8], %k: i64[2]) -> (%y, %idx) {
  %a = Add(%x, %x) : f32[4,8] @double1 <- ["double1"]
  %y = Mul(%a, %x) : f32[4,8] @mul1 <- ["mul1"]
  %idx = Identity(%k) : i64[2] @id1 <- ["id1"]
}
)";

std::unique_ptr<Graph> parse_budget_model() {
  auto g = parse_graph(kBudgetModel);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

/// What a lowered node does to its output: element i of every float output of `node` scaled
/// by 1 ± rel (alternating), or set to `poison` when that is not 0.
InterpreterOptions lowered_like(const std::string& node, double rel, float poison = 0) {
  InterpreterOptions o;
  o.on_node_done = [node, rel, poison](const Node& n, const std::vector<Tensor>& outs) {
    if (n.name() != node || outs.empty() || outs[0].dtype() != DType::f32) return;
    float* p = const_cast<float*>(outs[0].data<float>());
    for (int64_t i = 0; i < outs[0].numel(); ++i)
      p[i] = poison != 0 ? poison : float(p[i] * (1 + (i % 2 ? rel : -rel)));
  };
  return o;
}

BudgetRule bf16_rule() {
  BudgetRule r;
  r.precision = DType::bf16;
  r.mode = "bf16";
  r.budget = default_accuracy_budget(DType::bf16);
  return r;
}

Result<ValidationReport> validate_with(InterpreterOptions lowered, std::optional<BudgetRule> rule, bool per_layer) {
  auto ref_graph = parse_budget_model(), test_graph = parse_budget_model();
  InterpreterSubject subject(*test_graph, std::move(lowered));
  auto reference = make_interpreter_reference();
  ValidateOptions o;
  o.model_path = "m.onnx";
  o.per_layer = per_layer;
  o.budget = std::move(rule);
  return run_validation(subject, *ref_graph, *reference, o);
}

TEST(ValidateBudget, BudgetDecidesWhereTheElementwiseToleranceFails) {
  auto elementwise = validate_with(lowered_like("mul1", 4e-3), std::nullopt, false);
  ASSERT_TRUE(elementwise.ok()) << elementwise.status().message();
  EXPECT_FALSE(elementwise->pass());

  auto r = validate_with(lowered_like("mul1", 4e-3), bf16_rule(), true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->pass()) << format_report(*r);
  const OutputResult& y = r->samples[0].outputs[0];
  ASSERT_TRUE(y.budget.has_value());
  EXPECT_TRUE(y.budget->pass);
  EXPECT_FALSE(y.cmp.pass) << "the elementwise comparison is still made";
  EXPECT_GT(y.cmp.metrics.out_of_tolerance, 0);
  ASSERT_EQ(y.budget->terms.size(), 1u);
  EXPECT_EQ(y.budget->terms[0].term(), "cosine>=0.999");
  EXPECT_LT(*y.budget->terms[0].value, 1.0);
  // The integer output stays exact, judged elementwise.
  EXPECT_FALSE(r->samples[0].outputs[1].budget.has_value());
  EXPECT_TRUE(r->samples[0].outputs[1].pass());
  // --per-layer still names the divergent node, for information only.
  ASSERT_TRUE(r->samples[0].per_layer.has_value());
  EXPECT_GE(r->samples[0].per_layer->first_divergent, 0);

  const std::string text = format_report(*r);
  EXPECT_NE(text.find("verdict    accuracy budget cosine>=0.999 (default for bf16; --accuracy-budget to change"),
            std::string::npos) << text;
  EXPECT_NE(text.find("(elementwise, for information)"), std::string::npos) << text;
  EXPECT_NE(text.find("PASS: 2 output comparisons over 1 sample within the accuracy budget cosine>=0.999"),
            std::string::npos) << text;
  auto j = report_json(*r, "test");
  EXPECT_EQ(j["verdict"]["rule"], "accuracy_budget");
  EXPECT_EQ(j["verdict"]["terms"][0], "cosine>=0.999");
  EXPECT_EQ(j["samples"][0]["outputs"][0]["pass"], true);
  EXPECT_EQ(j["samples"][0]["outputs"][0]["elementwise_pass"], false);
  EXPECT_EQ(j["samples"][0]["outputs"][0]["budget"]["terms"][0]["pass"], true);
}

TEST(ValidateBudget, ATighterBudgetFailsNamingTheTermAndWhatToDo) {
  BudgetRule rule = bf16_rule();
  rule.budget = *parse_accuracy_budget("cosine>=0.9999999");
  rule.given = true;
  auto r = validate_with(lowered_like("mul1", 4e-3), rule, false);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->pass());
  const std::string& problem = r->samples[0].outputs[0].budget->problem;
  EXPECT_EQ(problem.rfind("accuracy budget fails: cosine 0.99999", 0), 0u) << problem;
  EXPECT_NE(problem.find("(needs >= 0.9999999)"), std::string::npos) << problem;
  const std::string text = format_report(*r);
  EXPECT_NE(text.find("what to do: `ferry convert m.onnx -o OUT.onnx --precision bf16 --accuracy-budget "
                      "'cosine>=0.9999999'` runs the accuracy guard"),
            std::string::npos) << text;
  EXPECT_NE(text.find("--keep-fp32 NODE"), std::string::npos) << text;
}

TEST(ValidateBudget, NanOrInfFailsAnyBudget) {
  auto r = validate_with(lowered_like("mul1", 0, INFINITY), bf16_rule(), false);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->pass());
  const BudgetCheck& b = *r->samples[0].outputs[0].budget;
  EXPECT_EQ(b.nonfinite_mismatch, 32);
  EXPECT_NE(b.problem.find("non-finite mismatches (NaN/Inf where the reference differs"), std::string::npos)
      << b.problem;
  EXPECT_EQ(b.values(), "NaN/Inf x32");
}

TEST(ValidateBudget, AppliesToFloatingTensorsOfOneShape) {
  const Tensor f = Tensor::from_vector<float>({1, 2, 3}, {3});
  EXPECT_TRUE(budget_applies(compare_tensors(f, f, {})));
  const Tensor i = Tensor::from_vector<int64_t>({1, 2, 3}, {3});
  EXPECT_FALSE(budget_applies(compare_tensors(i, i, {})));
  EXPECT_FALSE(budget_applies(compare_tensors(f, Tensor::from_vector<float>({1, 2, 3}, {1, 3}), {})));
}

TEST(ValidateBudget, LowestPrecisionHasTheLoosestDefault) {
  PrecisionReport r;
  auto add = [&r](DType precision) {
    r.nodes.emplace_back();
    r.nodes.back().precision = precision;
  };
  EXPECT_EQ(lowest_precision(r), DType::f32);
  add(DType::f16);
  EXPECT_EQ(lowest_precision(r), DType::f16);
  add(DType::bf16);
  EXPECT_EQ(lowest_precision(r), DType::bf16);
  add(DType::f32);
  add(DType::i8);
  EXPECT_EQ(lowest_precision(r), DType::i8);
}

}  // namespace
}  // namespace ferry::validate
