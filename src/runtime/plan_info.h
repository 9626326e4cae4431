// runtime/plan_info.h — what a backend tells about how it runs a graph: its steps
// (for profiles and reports) and its memory, and what a caller may observe during
// a run (step times, every computed value for per-layer validation).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace ferry {

/// One scheduled step.
struct StepInfo {
  std::string nodes;   ///< node name ("(reorder)" for a layout change)
  std::string op;      ///< "FusedConv", "Reorder"
  std::string kernel;  ///< implementation: "onednn_conv_f32[jit:avx2]+sum", "add_f32__avx2", "ref_Resize"
  std::string shapes;  ///< "f32[1,3,224,224] -> f32[1,64,112,112]"
  bool reference = false;  ///< a reference kernel (ours, or oneDNN's ref:any): no fast implementation took the node
  bool serial = false;     ///< runs on the calling thread alone: too small to gain from more (cpu_step_work.h)
};

struct PlanInfo {
  std::vector<StepInfo> steps;
  size_t arena_bytes = 0;      ///< planned peak of intermediate tensors
  size_t naive_bytes = 0;      ///< one buffer per intermediate
  size_t scratch_bytes = 0;    ///< kernel scratch (max over steps)
  size_t num_buffers = 0;
  size_t in_place = 0;         ///< steps writing over their input
  size_t views = 0;            ///< Reshape-like nodes that became views
  size_t folded = 0;           ///< nodes evaluated ahead of the steps (shape subgraphs)
  /// Set when the plan covers the graph only up to this node, whose output shape depends
  /// on the data: from it on, the backend plans at run time (for the shapes that come out).
  std::string runtime_planned_from;
};

/// What a run reports besides its outputs (all optional).
struct RunObserver {
  /// Duration of every step, microseconds, in PlanInfo::steps order.
  std::vector<double>* step_us = nullptr;
  /// With step_us: the StepInfo of every timed step, in run order. A plan in segments
  /// (PlanInfo::runtime_planned_from) lists only its first segment in PlanInfo::steps; this
  /// also has the later segments, the data-dependent nodes (a reference kernel) and the
  /// steps of If / Loop / Scan bodies (each body run's steps in place of the node's).
  std::vector<StepInfo>* steps = nullptr;
  /// Called with every graph value the run computes (plain layout), right after the
  /// step that writes it: per-layer validation. Slow path: it allocates.
  std::function<void(const Value*, const Tensor&)> on_value;
};

}  // namespace ferry
