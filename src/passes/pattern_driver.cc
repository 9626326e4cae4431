#include "passes/pattern_driver.h"

#include <algorithm>

namespace ferry {

Status apply_patterns(Graph& g, const std::string& pass_name, const std::vector<Pattern>& patterns,
                      PassStats& stats, int max_iterations) {
  // Pattern indices by root op; per-sweep counters by slot index (a name lookup
  // per node and pattern is measurable on graphs of 10^5+ nodes).
  // Patterns sharing a name share one counter (several root ops, one rewrite).
  std::vector<std::vector<size_t>> by_op(kNumOps);
  for (size_t i = 0; i < patterns.size(); ++i) by_op[size_t(patterns[i].root)].push_back(i);
  std::vector<std::string> names;  // slot -> pattern name
  std::vector<size_t> slot(patterns.size());
  for (size_t i = 0; i < patterns.size(); ++i) {
    auto it = std::find(names.begin(), names.end(), patterns[i].name);
    slot[i] = size_t(it - names.begin());
    if (it == names.end()) names.push_back(patterns[i].name);
  }
  auto& pass_stats = stats[pass_name];
  for (const Pattern& p : patterns) pass_stats[p.name];  // every pattern appears in the report

  for (int iter = 0; iter < max_iterations; ++iter) {
    // Near misses are re-evaluated each sweep; keep only the last sweep's.
    std::vector<PatternStats> sweep(names.size());
    std::vector<bool> tried(names.size(), false);
    bool changed = false;
    FERRY_ASSIGN_OR_RETURN(auto order, g.topo_order());
    for (Node* n : order) {
      // Earlier rewrites in this sweep may have made n's input types more
      // precise (a Reshape target folded to a constant): in topological order,
      // refreshing each node first keeps every type up to date for the patterns.
      if (iter > 0 || changed) refresh_types(*n);
      for (size_t pi : by_op[size_t(n->op())]) {
        const Pattern* p = &patterns[pi];
        // A node whose output lost all uses in this sweep is dead: skip it.
        bool dead = true;
        for (Value* o : n->outputs()) dead &= o->uses().empty() && !g.is_graph_output(o);
        if (dead) break;
        PatternStats& ps = sweep[slot[pi]];
        tried[slot[pi]] = true;
        Rewriter rw(g, &ps);
        if (p->fn(rw, *n)) {
          ++ps.matched;
          ++ps.applied;
          changed = true;
          // A rewrite in place (a Reshape target folded) makes n's own outputs more precise: refresh
          // them now, so the rest of this sweep sees them (nodes are only freed after the sweep).
          refresh_types(*n);
          break;  // the node may be gone or changed: next node
        }
        changed |= rw.changed();
      }
    }
    for (size_t k = 0; k < names.size(); ++k) {
      if (!tried[k]) continue;
      const PatternStats& s = sweep[k];
      PatternStats& total = pass_stats[names[k]];
      total.applied += s.applied;
      total.matched = total.applied;  // recomputed below from the latest near misses
      if (!changed || iter + 1 == max_iterations) total.near_misses = s.near_misses;
      total.matched = total.applied + int64_t(total.near_misses.size());
    }
    g.remove_dead();
    if (!changed) return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace ferry
