#include "validate/budget_verdict.h"

#include <cmath>

#include "passes/target_precision.h"

namespace ferry::validate {
namespace {

using Json = nlohmann::ordered_json;

/// Non-finite numbers as the strings the rest of the report uses.
Json budget_json_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace

std::string BudgetRule::origin() const {
  if (given) return "--accuracy-budget";
  return std::string("default for ") + precision_name(precision);
}

std::string BudgetRule::describe() const {
  return "accuracy budget " + budget.text() + " (" + origin() +
         (given ? "" : "; --accuracy-budget to change") + ", --atol/--rtol for elementwise)";
}

std::string BudgetRule::advice(const std::string& model) const {
  if (precision == DType::f32) return "";
  const bool named = mode == "bf16" || mode == "fp16" || mode == "int8" || mode == "auto";
  const std::string p = named ? mode : precision_name(precision);
  // A model with saved decisions was converted already: its source is what to convert again.
  const std::string source = mode == "saved" ? "SOURCE_MODEL" : model;
  const std::string own_budget = given ? " --accuracy-budget '" + budget.text() + "'" : "";
  return "`ferry convert " + source + " -o OUT.onnx --precision " + p + own_budget +
         "` runs the accuracy guard, which raises the layers that break the budget to fp32; or keep a layer fp32 "
         "with --keep-fp32 NODE; --per-layer names the first divergent node (elementwise, e.g. where a NaN / Inf "
         "starts)";
}

std::string BudgetCheck::values() const {
  if (nonfinite_mismatch > 0) return "NaN/Inf x" + std::to_string(nonfinite_mismatch);
  std::string s;
  for (const BudgetTermResult& t : terms) s += (s.empty() ? "" : ", ") + t.value_text();
  return s;
}

bool budget_applies(const Comparison& cmp) {
  return is_floating(cmp.got_dtype) && is_floating(cmp.ref_dtype) && cmp.got_dims == cmp.ref_dims;
}

BudgetCheck check_budget(const Tensor& got, const Tensor& ref, const Comparison& cmp, const AccuracyBudget& budget) {
  BudgetCheck c;
  accumulate_metrics(got, ref, c.metrics);
  judge(budget, c.metrics);
  c.terms = judge_terms(budget, c.metrics);
  c.nonfinite_mismatch = cmp.metrics.nonfinite_mismatch;
  if (c.nonfinite_mismatch > 0) {
    c.problem = "accuracy budget fails: " + cmp.problem;
  } else {
    for (const BudgetTermResult& t : c.terms)
      if (!t.holds()) c.problem += (c.problem.empty() ? "accuracy budget fails: " : "; ") + t.text();
  }
  if (c.problem.empty() && !c.metrics.holds) c.problem = "accuracy budget fails: " + c.metrics.text();
  c.pass = c.problem.empty();
  return c;
}

Json budget_rule_json(const BudgetRule& rule, const std::string& model) {
  Json terms = Json::array();
  for (const BudgetTermResult& t : judge_terms(rule.budget, AccuracyMetrics{})) terms.push_back(t.term());
  Json j;
  j["rule"] = "accuracy_budget";
  j["budget"] = rule.budget.text();
  j["terms"] = terms;
  j["from"] = rule.origin();
  j["precision"] = precision_name(rule.precision);
  const std::string advice = rule.advice(model);
  j["advice"] = advice.empty() ? Json(nullptr) : Json(advice);
  return j;
}

Json budget_check_json(const BudgetCheck& c) {
  Json terms = Json::array();
  for (const BudgetTermResult& t : c.terms)
    terms.push_back({{"term", t.term()},
                     {"value", t.value ? budget_json_number(*t.value) : Json(nullptr)},
                     {"ratio", budget_json_number(t.ratio)},
                     {"pass", t.holds()}});
  Json j;
  j["pass"] = c.pass;
  j["problem"] = c.problem.empty() ? Json(nullptr) : Json(c.problem);
  j["score"] = budget_json_number(c.metrics.score);
  j["nonfinite_mismatch"] = c.nonfinite_mismatch;
  j["terms"] = terms;
  return j;
}

DType lowest_precision(const PrecisionReport& r) {
  auto rank = [](DType d) { return d == DType::i8 ? 0 : d == DType::bf16 ? 1 : d == DType::f16 ? 2 : 3; };
  DType low = DType::f32;
  for (const NodePrecision& n : r.nodes)
    if (rank(n.precision) < rank(low)) low = n.precision;
  return low;
}

}  // namespace ferry::validate
