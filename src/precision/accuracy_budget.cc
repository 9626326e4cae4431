#include "precision/accuracy_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "validate/metrics.h"

namespace ferry {
namespace {

std::string budget_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// A value judged by its distance from 1 (cosine, top1): enough digits for 3 of that distance,
/// so 0.9999996 does not print as 1.
std::string closeness_num(double v) {
  const double gap = 1 - v;
  const int digits = gap > 0 && gap < 1e-3 ? std::min(17, int(std::ceil(-std::log10(gap))) + 3) : 6;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

/// error / allowed: 0 when exact, +inf when nothing is allowed but there is an error.
double budget_ratio(double error, double allowed) {
  if (error <= 0) return 0;
  return allowed > 0 ? error / allowed : HUGE_VAL;
}

}  // namespace

std::string AccuracyBudget::text() const {
  std::string s;
  auto add = [&](const char* term, const std::optional<double>& v, bool near_one) {
    if (v) s += (s.empty() ? "" : ",") + std::string(term) + (near_one ? closeness_num(*v) : budget_num(*v));
  };
  add("cosine>=", min_cosine, true);
  add("max_rel<=", max_rel, false);
  add("max_abs<=", max_abs, false);
  add("top1>=", min_top1, true);
  return s;
}

Result<AccuracyBudget> parse_accuracy_budget(const std::string& text) {
  AccuracyBudget b;
  std::stringstream in(text);
  std::string term;
  bool any = false;
  while (std::getline(in, term, ',')) {
    const auto bad = [&](const std::string& why) {
      return invalid_argument("--accuracy-budget: term '" + term + "' " + why +
                              " (terms: cosine>=C, max_rel<=R, max_abs<=A, top1>=T)");
    };
    const size_t op = term.find_first_of("<>");
    if (op == std::string::npos || op + 1 >= term.size() || term[op + 1] != '=') return bad("is not NAME>=V or NAME<=V");
    const std::string name = term.substr(0, op), value = term.substr(op + 2);
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(v)) return bad("has no number after the comparison");
    const bool ge = term[op] == '>';
    if (name != "cosine" && name != "top1" && name != "max_rel" && name != "max_abs") return bad("names no metric");
    if ((name == "cosine" || name == "top1") != ge) return bad(ge ? "needs <=" : "needs >=");
    if ((name == "cosine" || name == "top1") && (v < -1 || v > 1)) return bad("must be within [-1, 1]");
    if ((name == "max_rel" || name == "max_abs") && v < 0) return bad("must be >= 0");
    if (name == "cosine") b.min_cosine = v;
    else if (name == "max_rel") b.max_rel = v;
    else if (name == "max_abs") b.max_abs = v;
    else if (name == "top1") b.min_top1 = v;
    else return bad("names no metric");
    any = true;
  }
  if (!any) return invalid_argument("--accuracy-budget is empty (terms: cosine>=C, max_rel<=R, max_abs<=A, top1>=T)");
  return b;
}

AccuracyBudget default_accuracy_budget(DType precision) {
  AccuracyBudget b;
  if (precision == DType::i8) {  // 255 levels per tensor: elementwise relative error is no measure
    b.min_cosine = 0.99;
    return b;
  }
  b.min_cosine = 0.999;
  // bf16: cosine only. Its 8-bit mantissa leaves ~1% of a deep network's output scale on
  // near-zero elements (BERT-base, every matmul bf16: cosine 0.99995, max_rel 9.7), so an
  // elementwise bound raised 112 of its 118 nodes to fp32 and made --precision bf16 a slow fp32.
  if (precision != DType::bf16) b.max_rel = 1e-2;
  return b;
}

void accumulate_metrics(const Tensor& got, const Tensor& ref, AccuracyMetrics& m) {
  if (!is_floating(ref.dtype()) || got.numel() != ref.numel()) return;
  double dot = 0, gg = 0, rr = 0, scale = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) scale = std::max(scale, std::fabs(ref.get_double(i)));
  const double floor = std::max(1e-3 * scale, 1e-30);
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double g = got.get_double(i), r = ref.get_double(i);
    if (!std::isfinite(r)) continue;  // the fp32 run's own NaN / Inf: not the lowering's doing
    if (!std::isfinite(g)) {
      m.score = HUGE_VAL;
      if (m.nonfinite_value.empty()) m.nonfinite_value = "a model output";
      continue;
    }
    const double e = std::fabs(g - r);
    m.max_abs = std::max(m.max_abs, e);
    m.max_rel = std::max(m.max_rel, e / std::max(std::fabs(r), floor));
    dot += g * r, gg += g * g, rr += r * r;
  }
  const double cos = gg == 0 && rr == 0 ? 1.0 : (gg == 0 || rr == 0 ? 0.0 : dot / std::sqrt(gg * rr));
  m.cosine = std::min(m.cosine, cos);
  if (auto top = validate::classifier_agreement(got, ref)) m.top1 = std::min(m.top1.value_or(1.0), top->top1);
}

std::vector<BudgetTermResult> judge_terms(const AccuracyBudget& b, const AccuracyMetrics& m) {
  std::vector<BudgetTermResult> terms;
  // A minimum bound (cosine, top1 <= 1) is judged by its shortfall from 1, a maximum by the value.
  auto add = [&](const char* name, const std::optional<double>& bound, bool at_least, std::optional<double> value) {
    if (!bound) return;
    BudgetTermResult t{name, at_least, *bound, value, 0};
    if (value) t.ratio = at_least ? budget_ratio(1 - *value, 1 - *bound) : budget_ratio(*value, *bound);
    terms.push_back(t);
  };
  add("cosine", b.min_cosine, true, m.cosine);
  add("max_rel", b.max_rel, false, m.max_rel);
  add("max_abs", b.max_abs, false, m.max_abs);
  add("top1", b.min_top1, true, m.top1);
  return terms;
}

void judge(const AccuracyBudget& b, AccuracyMetrics& m) {
  double s = m.nonfinite_value.empty() ? 0 : HUGE_VAL;
  for (const BudgetTermResult& t : judge_terms(b, m)) s = std::max(s, t.ratio);
  m.score = s;
  m.holds = s <= 1;
}

std::string BudgetTermResult::bound_text() const { return at_least ? closeness_num(bound) : budget_num(bound); }

std::string BudgetTermResult::term() const { return name + (at_least ? ">=" : "<=") + bound_text(); }

std::string BudgetTermResult::value_text() const {
  if (!value) return name + " -";
  return name + " " + (at_least ? closeness_num(*value) : budget_num(*value));
}

std::string BudgetTermResult::text() const {
  return value_text() + " (needs " + (at_least ? ">= " : "<= ") + bound_text() + ")";
}

std::string AccuracyMetrics::text() const {
  if (!nonfinite_value.empty())
    return "NaN/Inf in " + nonfinite_value + (nonfinite_node.empty() ? "" : " (node '" + nonfinite_node + "')");
  std::string s = "cosine " + budget_num(cosine) + ", max_rel " + budget_num(max_rel) + ", max_abs " + budget_num(max_abs);
  if (top1) s += ", top1 " + budget_num(*top1);
  return s;
}

}  // namespace ferry
