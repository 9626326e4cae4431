// passes/pipeline.h — the optimizer: a plain ordered list of passes (pipeline.cc).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"
#include "passes/passes.h"
#include "passes/rewriter.h"
#include "passes/target.h"

namespace ferry {

struct OptimizeOptions {
  /// Largest constant (bytes) constant folding may create.
  size_t fold_size_limit = kDefaultFoldSizeLimit;
  /// Run the verifier after every pass (always on in debug builds).
  bool verify_each_pass = false;
  /// Called after each pass with its name and the graph (shapes re-inferred);
  /// a failed Status stops the pipeline. For per-pass checks and dumps.
  std::function<Status(const std::string& pass, const Graph& g)> after_pass;
};

/// Optimizes `g` in place for `target` (passes/target.h): a fusion runs only where the
/// target executes what it forms. Fills `stats` (the fusion report's data; may be null).
Status optimize(Graph& g, const Target& target, const OptimizeOptions& options = {}, PassStats* stats = nullptr);
/// optimize() for the reference target: every fusion (tests, the reference backend).
Status optimize(Graph& g, const OptimizeOptions& options, PassStats* stats);

/// Runs the named passes (passes/pass_registry.h) in order, the way optimize() runs
/// its list (for `target`): `ferry opt --passes a,b,c` and the .ir pass tests. An
/// unknown name is an invalid-argument error that lists the passes there are.
Status run_passes(Graph& g, const std::vector<std::string>& names, const Target& target,
                  const OptimizeOptions& options, PassStats* stats);

/// infer_shapes(), tolerating op families whose shape inference is not written
/// yet (their outputs stay unknown).
Status refresh_shapes(Graph& g);

}  // namespace ferry
