// validate/budget_verdict.h — the verdict on a lowered model (docs/validate.md, "Lowered models").
//
// When ferry's side runs some node below fp32 (bf16 / fp16 / int8, from --precision or the
// model's saved decisions), fp32's elementwise tolerance fails it almost always. Each
// floating output is judged instead by an accuracy budget against the fp32 reference: the
// accuracy guard's own terms, metrics and scoring (precision/accuracy_budget.h), with the
// guard's default for the lowest precision in use unless --accuracy-budget gives one. The
// elementwise comparison is still made and reported, as information. Outputs the budget does
// not apply to (integers, bool, a shape or dtype mismatch, a missing tensor) keep the
// elementwise verdict, and a NaN / Inf where the reference differs fails whatever the budget.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/tensor.h"
#include "passes/assign_precision.h"
#include "precision/accuracy_budget.h"
#include "validate/metrics.h"

namespace ferry::validate {

/// What decides the verdict when it is not fp32's elementwise tolerance.
struct BudgetRule {
  AccuracyBudget budget;
  DType precision = DType::f32;  ///< the lowest precision ferry's side runs (f32: nothing lowered)
  std::string mode;              ///< the mode that lowered it: "bf16", "auto", "saved" (the model's decisions)
  bool given = false;            ///< --accuracy-budget; else the guard's default for `precision`
  /// "default for bf16" or "--accuracy-budget".
  std::string origin() const;
  /// "accuracy budget cosine>=0.999 (default for bf16; --accuracy-budget to change, --atol/--rtol for elementwise)"
  std::string describe() const;
  /// What to do when an output of `model` breaks it ("" when nothing is lowered).
  std::string advice(const std::string& model) const;
};

/// One output (or intermediate) judged by the budget.
struct BudgetCheck {
  bool pass = false;
  AccuracyMetrics metrics;              ///< the guard's metrics of this tensor alone
  std::vector<BudgetTermResult> terms;  ///< each term's value and ratio
  int64_t nonfinite_mismatch = 0;       ///< NaN / Inf where the reference differs (fails any budget)
  std::string problem;                  ///< why it fails ("" when it passes)
  /// "cosine 0.99998, max_rel 0.0034" (the terms' values), or the NaN / Inf count.
  std::string values() const;
};

/// Whether the budget decides `cmp` (the elementwise comparison): both sides floating, same shape.
bool budget_applies(const Comparison& cmp);
/// Judges `got` against `ref` by `budget`; `cmp` is their elementwise comparison.
BudgetCheck check_budget(const Tensor& got, const Tensor& ref, const Comparison& cmp, const AccuracyBudget& budget);

/// JSON (docs/validate.md): {"rule": "accuracy_budget", "budget", "terms", "from", "precision", "advice"}.
nlohmann::ordered_json budget_rule_json(const BudgetRule& rule, const std::string& model);
/// JSON: {"pass", "problem", "score", "nonfinite_mismatch", "terms": [{"term", "value", "ratio", "pass"}]}.
nlohmann::ordered_json budget_check_json(const BudgetCheck& check);

/// The lowest precision `r` runs, whose default budget is the loosest: i8, then bf16 (8-bit
/// mantissa), then f16; f32 when nothing is lowered.
DType lowest_precision(const PrecisionReport& r);

}  // namespace ferry::validate
