#include "precision/accuracy_guard.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <set>
#include <utility>

#include "analysis/model_stats.h"
#include "ir/graph_clone.h"
#include "precision/calibrate_int8.h"
#include "precision/emulate_precision.h"

namespace ferry {
namespace {

/// Whether `t` holds a NaN or an Inf. Every value of every guard run passes here (BERT: ~15M
/// per run), so f32 is read directly, in blocks the compiler vectorizes (element-wise
/// get_double was a quarter of a bf16 convert's time).
bool guard_has_nonfinite(const Tensor& t) {
  if (t.dtype() == DType::f32) {
    const float* p = t.data<float>();
    const int64_t n = t.numel();
    for (int64_t i = 0; i < n; i += 4096) {
      bool bad = false;
      for (int64_t j = i; j < std::min(n, i + 4096); ++j) bad |= !(std::fabs(p[j]) <= std::numeric_limits<float>::max());
      if (bad) return true;
    }
    return false;
  }
  if (t.dtype() != DType::f16 && t.dtype() != DType::bf16) return false;
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(t.get_double(i))) return true;
  return false;
}

std::string guard_score_text(double s) {
  if (!std::isfinite(s)) return "inf (NaN/Inf)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", s);
  return buf;
}

/// Runs `g` with a given set of nodes lowered and compares it with the fp32 run.
class GuardRunner {
 public:
  GuardRunner(const Graph& g, const TargetPrecisions& t, const GuardOptions& o,
              std::map<std::string, ActivationQuant> act)
      : g_(g), t_(t), o_(o), act_(std::move(act)) {}

  Status init() {
    auto out = run(g_, [&](const Value& v, const Tensor& t) {
      if (v.producer() && guard_has_nonfinite(t)) fp32_nonfinite_.insert(v.producer()->name());
    });
    if (!out.ok()) return out.status().with_context("accuracy guard: the fp32 run");
    ref_ = std::move(out).value();
    return Status::Ok();
  }

  Result<AccuracyMetrics> evaluate(const std::map<std::string, DType>& lowered) {
    FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> c, clone_graph(g_));
    std::map<const Node*, const Node*> owner;
    FERRY_TRY(lower_emulated_precision(*c, lowered, t_, &owner, &act_).status());
    AccuracyMetrics m;
    auto out = run(*c, [&](const Value& v, const Tensor& t) {
      const Node* n = v.producer();
      if (!m.nonfinite_node.empty() || !n) return;
      auto it = owner.find(n);
      const Node& blamed = it == owner.end() ? *n : *it->second;
      if (fp32_nonfinite_.count(blamed.name())) return;  // the fp32 run has NaN/Inf there too
      if (guard_has_nonfinite(t)) {
        m.nonfinite_node = blamed.name();
        m.nonfinite_value = "'" + v.name() + "'";
      }
    });
    if (!out.ok()) return out.status().with_context("accuracy guard: a lowered run");
    for (size_t s = 0; s < out->size() && s < ref_.size(); ++s)
      for (size_t k = 0; k < (*out)[s].size() && k < ref_[s].size(); ++k) accumulate_metrics((*out)[s][k], ref_[s][k], m);
    judge(o_.budget, m);
    return m;
  }

 private:
  Result<std::vector<std::vector<Tensor>>> run(const Graph& g, const ValueSink& on_value) const {
    return o_.runner ? o_.runner(g, o_.samples, on_value) : run_on_interpreter(g, o_.samples, on_value);
  }

  const Graph& g_;
  const TargetPrecisions& t_;
  const GuardOptions& o_;
  std::map<std::string, ActivationQuant> act_;  ///< int8 nodes' calibration
  std::vector<std::vector<Tensor>> ref_;
  std::set<std::string> fp32_nonfinite_;
};

NodePrecision* guard_decision(PrecisionReport& r, const std::string& node) {
  for (NodePrecision& d : r.nodes)
    if (d.node == node) return &d;
  return nullptr;
}

/// The node to raise next: the first NaN/Inf's node when it is lowered, else the most sensitive.
Result<NodePrecision*> guard_pick_node(PrecisionReport& r, const std::map<std::string, DType>& lowered,
                                 const AccuracyMetrics& cur, const GuardOptions& o) {
  if (!cur.nonfinite_node.empty() && lowered.count(cur.nonfinite_node)) {
    NodePrecision* d = guard_decision(r, cur.nonfinite_node);
    if (d->pinned)
      return invalid_argument("accuracy guard: node '" + d->node + "' (" + d->op + ") makes NaN/Inf in " +
                              cur.nonfinite_value + " at " + precision_name(d->precision) +
                              ", and --force keeps it there");
    return d;
  }
  NodePrecision* best = nullptr;
  std::string pinned;
  for (NodePrecision& d : r.nodes) {
    if (!lowered.count(d.node)) continue;
    if (d.pinned) {
      pinned += (pinned.empty() ? "" : ", ") + d.node;
      continue;
    }
    if (!best || d.sensitivity.value_or(0) > best->sensitivity.value_or(0)) best = &d;
  }
  if (!best)
    return invalid_argument("accuracy guard: budget " + o.budget.text() + " not met on " + o.samples_from + " (" +
                            cur.text() + ") and the nodes still lowered are pinned by --force: " + pinned);
  return best;
}

/// A node the greedy loop raised to fp32, with what it had before.
struct GuardRaise {
  std::string node;
  DType precision;
  std::string exec, reason;
};

/// The FLOPs of `node` in `g` (0 when unknown): the refinement's order.
int64_t guard_node_flops(const Graph& g, const std::string& node) {
  const Node* n = g.find_node(node);
  return n ? estimate_node_flops(*n, nullptr).value_or(0) : 0;
}

/// The greedy loop raises the most sensitive node first, so an early raise can be unnecessary
/// once later ones hold the budget. Tries each raised node at its lowered precision again, the
/// costliest (FLOPs) first, and keeps it there when the budget still holds; one run each.
/// Returns how many were lowered again.
Result<size_t> guard_relower(const Graph& g, PrecisionReport& report, std::vector<GuardRaise> raises,
                             GuardRunner& runner, std::map<std::string, DType>& lowered, AccuracyMetrics& cur) {
  std::stable_sort(raises.begin(), raises.end(), [&](const GuardRaise& a, const GuardRaise& b) {
    return guard_node_flops(g, a.node) > guard_node_flops(g, b.node);
  });
  size_t relowered = 0;
  for (const GuardRaise& r : raises) {
    lowered[r.node] = r.precision;
    FERRY_ASSIGN_OR_RETURN(AccuracyMetrics m, runner.evaluate(lowered));
    if (!m.holds) {
      lowered.erase(r.node);
      continue;
    }
    NodePrecision* d = guard_decision(report, r.node);
    d->precision = r.precision;
    d->exec = r.exec;
    d->reason = r.reason + "; raised by the accuracy guard, then lowered again: the budget holds without it once "
                "later raises were made (" + m.text() + ")";
    cur = m;
    ++relowered;
  }
  return relowered;
}

}  // namespace

Status run_accuracy_guard(const Graph& g, const TargetPrecisions& target, PrecisionReport& report,
                          const GuardOptions& options) {
  if (options.samples.empty()) return invalid_argument("accuracy guard: no calibration samples");
  std::map<std::string, DType> lowered = lowered_nodes(report);
  if (lowered.empty()) {
    report.guard_summary = "nothing lowered: no accuracy to check";
    return Status::Ok();
  }
  GuardRunner runner(g, target, options, activation_quant(report));
  FERRY_TRY(runner.init());
  std::map<std::string, AccuracyMetrics> alone;
  for (NodePrecision& d : report.nodes) {
    if (!lowered.count(d.node)) continue;
    FERRY_ASSIGN_OR_RETURN(AccuracyMetrics m, runner.evaluate({{d.node, d.precision}}));
    d.sensitivity = m.score;
    alone[d.node] = m;
  }
  FERRY_ASSIGN_OR_RETURN(AccuracyMetrics cur, runner.evaluate(lowered));
  const AccuracyMetrics all_lowered = cur;
  const size_t candidates = lowered.size();
  size_t raised = 0, to_bf16 = 0;
  std::vector<GuardRaise> raises;  // fp32 raises the refinement may undo
  const PrecisionSupport bf16 = target.of(DType::bf16);
  while (!cur.holds) {
    FERRY_ASSIGN_OR_RETURN(NodePrecision * d, guard_pick_node(report, lowered, cur, options));
    const std::string why = "raised by the accuracy guard (sensitivity " + guard_score_text(d->sensitivity.value_or(0)) +
                            ": lowered alone " + alone[d->node].text() + "; the model with it at " +
                            precision_name(d->precision) + ": " + cur.text() + ")";
    // An int8 node goes to bf16 where the target runs it there on hardware (faster than fp32;
    // bf16's error is far below int8's): it stays a candidate, with its bf16-alone sensitivity.
    const Node* n = g.find_node(d->node);
    if (d->precision == DType::i8 && cur.nonfinite_node != d->node && n && accelerated_for(bf16, *n)) {
      d->reason = "bf16: " + why + "; bf16 accelerated (" + bf16.why + ")";
      d->precision = DType::bf16;
      d->exec = precision_exec_name(PrecisionExec::accelerated);
      lowered[d->node] = DType::bf16;
      FERRY_ASSIGN_OR_RETURN(AccuracyMetrics m, runner.evaluate({{d->node, DType::bf16}}));
      d->sensitivity = m.score;
      alone[d->node] = m;
      ++to_bf16;
    } else {
      if (cur.nonfinite_node != d->node) raises.push_back({d->node, d->precision, d->exec, d->reason});
      d->reason = "fp32: " + why;
      d->precision = DType::f32;
      d->exec = "native";
      lowered.erase(d->node);
      ++raised;
    }
    FERRY_ASSIGN_OR_RETURN(cur, runner.evaluate(lowered));
  }
  FERRY_ASSIGN_OR_RETURN(size_t relowered, guard_relower(g, report, raises, runner, lowered, cur));
  raised -= relowered;
  for (NodePrecision& d : report.nodes)
    if (lowered.count(d.node)) d.reason += "; guard: sensitivity " + guard_score_text(d.sensitivity.value_or(0));
  report.guard_summary = "budget " + options.budget.text() + " holds on " + options.samples_from + ": " + cur.text() +
                         "; raised " + std::to_string(raised) + " of " + std::to_string(candidates) +
                         " lowered nodes to fp32" + (to_bf16 ? ", " + std::to_string(to_bf16) + " int8 nodes to bf16" : "") +
                         (relowered ? " (" + std::to_string(relowered) + " more raised, then lowered again: the later raises made them unnecessary)" : "") +
                         " (everything lowered: " + all_lowered.text() +
                         "); sensitivity = budget score with the node lowered alone (1 = at the budget)";
  if (options.samples.size() < kGuardGeneralizingSamples)
    report.guard_summary += "; judged on " + std::to_string(options.samples.size()) + " input" +
                            (options.samples.size() == 1 ? "" : "s") + ": on trained models judged on 4-8 the budget "
                            "missed by up to 0.016 on other inputs, on 16 by at most 0.001 (docs/precision.md)";
  return Status::Ok();
}

}  // namespace ferry
