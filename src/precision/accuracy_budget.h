// precision/accuracy_budget.h — what "accurate enough" means for the accuracy guard:
// a comma-separated list of bounds on the model outputs of the lowered run against the
// fp32 run, each over every output and calibration sample:
//   cosine>=C    min cosine similarity (flattened tensors)
//   max_rel<=R   max |g−r| / max(|r|, 1e-3·max|r|): relative error, elements near zero
//                judged against the tensor's own scale (fp16 subnormals otherwise fail any bound)
//   max_abs<=A   max |g−r|
//   top1>=T      top-1 agreement of classifier-like outputs ([batch, classes >= 5])
// Any NaN / Inf where the fp32 run is finite fails every budget.
// Defaults: bf16 "cosine>=0.999" (8-bit mantissa: no elementwise bound, see the .cc), fp16
// "cosine>=0.999,max_rel<=1e-2", int8 "cosine>=0.99".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/tensor.h"

namespace ferry {

struct AccuracyBudget {
  std::optional<double> min_cosine, max_rel, max_abs, min_top1;
  std::string text() const;  ///< "cosine>=0.999,max_rel<=0.01"
};

/// Parses the text above; invalid_argument naming the term that is wrong.
Result<AccuracyBudget> parse_accuracy_budget(const std::string& text);
/// The default budget for lowering to `precision` (bf16 / f16 / i8).
AccuracyBudget default_accuracy_budget(DType precision);

/// The measured distance of a lowered run from the fp32 run.
struct AccuracyMetrics {
  double cosine = 1, max_rel = 0, max_abs = 0;
  std::optional<double> top1;
  std::string nonfinite_node;  ///< the first node whose output became NaN / Inf ("" if none)
  std::string nonfinite_value;
  /// How far over the budget: max over its terms of error / allowed (<= 1 holds); +inf on NaN / Inf.
  double score = 0;
  bool holds = true;
  std::string text() const;  ///< "cosine 0.99998, max_rel 3.1e-04, max_abs 2.0e-03"
};

/// One term of a budget against measured metrics.
struct BudgetTermResult {
  std::string name;             ///< "cosine", "max_rel", "max_abs", "top1"
  bool at_least = false;        ///< the bound is a minimum (cosine, top1), else a maximum
  double bound = 0;
  std::optional<double> value;  ///< nullopt: not measured (top1 of an output that is no classifier)
  double ratio = 0;             ///< error / allowed error: <= 1 holds
  bool holds() const { return ratio <= 1; }
  std::string bound_text() const;  ///< "0.999"
  std::string term() const;        ///< "cosine>=0.999"
  std::string value_text() const;  ///< "cosine 0.99876" (a cosine / top1 with the digits its distance from 1 needs)
  std::string text() const;        ///< "cosine 0.99876 (needs >= 0.999)"
};

/// Adds the comparison of one output `got` with its fp32 `ref` to `m`.
void accumulate_metrics(const Tensor& got, const Tensor& ref, AccuracyMetrics& m);
/// Each term of `budget` on `m`, in the order of AccuracyBudget::text().
std::vector<BudgetTermResult> judge_terms(const AccuracyBudget& budget, const AccuracyMetrics& m);
/// Sets m.score and m.holds for `budget`: the largest ratio of judge_terms(), +inf on NaN / Inf.
void judge(const AccuracyBudget& budget, AccuracyMetrics& m);

}  // namespace ferry
