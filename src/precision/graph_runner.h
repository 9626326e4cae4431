// precision/graph_runner.h — how calibration and the accuracy guard run a graph on their samples.
//
// Both run the model many times (the guard: once per lowered node and sample, then once per
// raise), so the runner decides how long `ferry convert --precision` takes: the reference
// interpreter took 4.6 minutes for MobileNetV2 int8 (53 nodes x 8 samples). The CLI and the
// API pass the backend's own runner (api/backend.h, backend_graph_runner): the graph compiled
// once per lowered set and run on the backend's kernels, which is also what `ferry run` then
// computes (real bf16 / int8 steps where the target runs them natively, not their emulation).
// Without one, the reference interpreter runs them (run_on_interpreter).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry {

/// Sees every value a run computes (plain layout; a bf16 step's output as f32), right after it.
using ValueSink = std::function<void(const Value&, const Tensor&)>;

/// Runs `g` on each sample (graph input name -> tensor) and returns its outputs per sample;
/// `on_value` (may be empty) sees the values of every run in order.
using GraphRunner = std::function<Result<std::vector<std::vector<Tensor>>>(
    const Graph& g, const std::vector<std::map<std::string, Tensor>>& samples, const ValueSink& on_value)>;

/// The reference interpreter: every node on its reference kernel, single-threaded.
Result<std::vector<std::vector<Tensor>>> run_on_interpreter(const Graph& g,
                                                            const std::vector<std::map<std::string, Tensor>>& samples,
                                                            const ValueSink& on_value);

}  // namespace ferry
