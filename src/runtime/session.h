// runtime/session.h — the compiled session: the fast CPU path for one graph.
//
// Lifecycle (after XNNPACK):
//   compile  once: pick a kernel per node (oneDNN, own SIMD kernels from
//            backends/cpu/kernels.def, else the reference kernel), decide which
//            elementwise nodes fold into a Conv/MatMul epilogue.
//   reshape  once per input-shape signature (cached): concrete shapes, shape
//            subgraphs evaluated, oneDNN primitives created, weights packed,
//            layouts chosen (blocked nChw16c chains with reorders only at the
//            boundaries), memory planned (planner/memory_plan.h; in place for
//            eligible elementwise steps, views for Reshape-like nodes).
//   bind     once per execution context: one arena, tensor views, bound steps.
//   run      no allocation in steady state (outputs reused when their shapes
//            match). Thread-safe: concurrent runs take separate contexts.
//
//   auto s = CpuSession::compile(std::move(graph), {});
//   auto outs = (*s)->run({{"input", tensor}});
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry {

struct SessionOptions {
  /// Every node on its reference kernel (the oracle path, same planner and arena).
  bool reference_kernels = false;
  /// Let oneDNN choose blocked activation layouts (nChw16c) for conv chains.
  bool blocked_layouts = true;
  /// Fold elementwise successors of Conv/MatMul into oneDNN post-ops.
  bool fuse_epilogues = true;
  /// Also fold Sigmoid / Tanh / Gelu / Elu (oneDNN's approximations; off: own kernels).
  bool fuse_transcendental = false;
  /// OpenMP threads (shared with oneDNN); 0 = the number of cores.
  int threads = 0;
};

/// One scheduled step, for reports and profiles.
struct StepInfo {
  std::string nodes;   ///< node name(s): anchor first, then fused nodes
  std::string op;      ///< "Conv", "Conv+Relu", "Reorder"
  std::string kernel;  ///< kernel name
  std::string shapes;  ///< "f32[1,3,224,224] -> f32[1,64,112,112]"
};

struct PlanInfo {
  std::vector<StepInfo> steps;
  size_t arena_bytes = 0;      ///< planned peak of intermediate tensors
  size_t naive_bytes = 0;      ///< one buffer per intermediate
  size_t scratch_bytes = 0;    ///< kernel scratch (max over steps)
  size_t num_buffers = 0;
  size_t in_place = 0;         ///< steps writing over their input
  size_t views = 0;            ///< Reshape-like nodes that became views
  size_t folded = 0;           ///< nodes evaluated at reshape (shape subgraphs)
};

/// Optimizer passes to skip before compiling a CpuSession: their fused ops (Attention,
/// RMSNormalization, a standalone Gelu) have no fast kernel here and would run on
/// reference kernels, while their unfused parts run on native and oneDNN steps.
const std::vector<std::string>& cpu_session_skipped_passes();

class CpuSession {
 public:
  /// Compiles `graph` (shapes inferred; run the optimizer first for speed).
  static Result<std::unique_ptr<CpuSession>> compile(std::unique_ptr<Graph> graph, const SessionOptions& options = {});
  ~CpuSession();

  const Graph& graph() const { return *graph_; }
  int threads() const { return threads_; }

  /// Runs on named inputs; returns the graph outputs in order.
  Result<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs);
  /// Runs on inputs in graph-input order. `outputs` entries whose dtype and
  /// dims already match are written in place (no allocation). With
  /// `step_us`, fills the duration of every step (microseconds).
  Status run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs, std::vector<double>* step_us = nullptr);

  /// The plan for inputs of these dims (graph-input order); reshapes if needed.
  Result<PlanInfo> plan_info(const std::vector<std::vector<int64_t>>& input_dims);

  struct Signature;
  struct Context;

 private:
  CpuSession() = default;
  Result<Signature*> signature_for(const std::vector<const std::vector<int64_t>*>& dims);
  Result<std::unique_ptr<Signature>> reshape(const std::vector<std::vector<int64_t>>& dims);

  std::unique_ptr<Graph> graph_;
  SessionOptions options_;
  int threads_ = 1;
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Signature>> signatures_;
};

}  // namespace ferry
