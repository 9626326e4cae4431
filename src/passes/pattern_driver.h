// passes/pattern_driver.h — the one greedy driver: runs a pass's patterns to a fixpoint.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "passes/rewriter.h"

namespace ferry {

/// Returns true when it rewrote `root`; false (after rw.near_miss, if the
/// pattern was recognized but a guard failed) when not. May capture options.
using PatternFn = std::function<bool(Rewriter& rw, Node& root)>;

/// A rewrite rooted at nodes of op `root`.
struct Pattern {
  const char* name;
  Op root;
  PatternFn fn;
};

/// Applies `patterns` greedily until nothing changes (or `max_iterations`
/// sweeps), indexed by root op, visiting nodes in topological order; once
/// something changed, each node's output types are re-inferred before its
/// patterns run. Sweeps dead nodes after each sweep. Near
/// misses are recorded once per (pattern, node) — the last sweep's verdict.
/// Stats go to stats[pass_name][pattern.name].
Status apply_patterns(Graph& g, const std::string& pass_name, const std::vector<Pattern>& patterns,
                      PassStats& stats, int max_iterations = 20);

}  // namespace ferry
