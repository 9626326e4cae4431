// backends/cpu/cpu_session.h — the CPU backend: a compiled session for one graph.
//
// The graph is the optimizer's output for cpu_target() (backends/cpu/cpu_target.h):
// every node runs as it is, fused ops included (a FusedConv is one oneDNN
// convolution whose post-ops come from the node's attributes; no lowering, no
// regrouping). Lifecycle (after XNNPACK), one stage per file:
//   compile  once (cpu_session.cc): topological order, kernel table registered.
//   reshape  once per input-shape signature, cached (cpu_schedule.cc): concrete
//            shapes, shape subgraphs evaluated, a step per node chosen from the
//            step table (cpu_step_table.cc: oneDNN primitives, own kernels, views)
//            with its layouts (blocked nChw8c/16c chains, reorders only at the
//            edges); then lifetimes and the memory plan (cpu_liveness.cc).
//   bind     once per execution context (cpu_bind.cc): one arena, tensor views, bound steps.
//   run      no allocation in steady state (outputs reused when their shapes
//            match). Thread-safe: concurrent runs take separate contexts.
// If, Loop and Scan end a segment (cpu_plan.h); each of their subgraphs is compiled
// once as a session of its own (the optimizer already ran inside it), so a branch
// or a loop body runs on the same kernels as the rest, planned per shape signature.
//
//   optimize(*graph, cpu_target(), {}, nullptr);
//   auto s = CpuSession::compile(std::move(graph), {});
//   auto outs = (*s)->run({{"input", tensor}});
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cpu/conv_algorithm.h"
#include "ferry/status.h"
#include "ir/graph.h"
#include "ops/registry.h"
#include "runtime/plan_info.h"

namespace ferry {

struct SessionOptions {
  /// Every node on its reference kernel (the oracle path, same planner and arena).
  bool reference_kernels = false;
  /// Let oneDNN choose blocked activation layouts (nChw8c / nChw16c) for conv chains.
  bool blocked_layouts = true;
  /// OpenMP threads (shared with oneDNN); 0 = the number of cores.
  int threads = 0;
  /// Highest ISA of ferry's own kernels (capped to the host's; reference = no own kernels).
  Isa isa = Isa::amx;
  /// fp32 3x3 convolutions: oneDNN's Winograd where it gains (auto), always, or never.
  ConvAlgorithm conv_algorithm = ConvAlgorithm::kAuto;
  /// fp32 Attention as three bf16 products a product on AMX tiles (CompileOptions::fp32_math
  /// "bf16x3"; native/attention_amx.cc run_f32x3__amx) where AMX-BF16 is usable and the cap is amx.
  bool fp32_bf16x3 = false;
};

class CpuSession {
 public:
  /// Compiles `graph` (shapes inferred; optimize it for cpu_target() first). The session
  /// only reads the graph, so callers may share it (the interpreter fallback does).
  static Result<std::unique_ptr<CpuSession>> compile(std::shared_ptr<const Graph> graph,
                                                     const SessionOptions& options = {});
  ~CpuSession();

  const Graph& graph() const { return *graph_; }
  int threads() const { return threads_; }
  Isa isa() const { return options_.isa; }

  /// Runs on named inputs; returns the graph outputs in order.
  Result<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs);
  /// Runs on inputs in graph-input order. `outputs` entries whose dtype and
  /// dims already match are written in place (no allocation).
  Status run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs, const RunObserver* observer = nullptr);

  /// The plan for inputs of these dims (graph-input order); reshapes if needed.
  Result<PlanInfo> plan_info(const std::vector<std::vector<int64_t>>& input_dims);

  struct Signature;
  struct Context;

 private:
  CpuSession() = default;
  /// The cached plan of the segment starting at order_[begin] for inputs `values` of `dims`.
  Result<std::shared_ptr<Signature>> signature_for(size_t begin, const std::vector<const Value*>& values,
                                   const std::vector<const std::vector<int64_t>*>& dims);
  /// Runs the data-dependent node `n` that ends a segment: its reference kernel, or for
  /// If / Loop / Scan its subgraphs on nested sessions (nested_session).
  Status run_dynamic(const Node& n, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs,
                     const RunObserver* observer);
  /// The session of subgraph `g` (its captures as inputs after its own), compiled on first use.
  Result<std::shared_ptr<CpuSession>> nested_session(const Graph& g);
  /// Runs one segment's steps on `inputs` (its Signature::inputs); fills `outputs` (last
  /// segment) or `carried` (the values the next segments read).
  Status run_segment(Signature& sig, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs,
                     std::vector<Tensor>* carried, const RunObserver* observer);

  std::shared_ptr<const Graph> graph_;
  SessionOptions options_;
  int threads_ = 1;
  std::vector<const Node*> order_;
  std::vector<const Value*> graph_inputs_;
  std::mutex mu_;
  /// At most kMaxSignatures plans (input shapes x data-dependent segments); the least
  /// recently used goes first, alive until the runs that hold it finish.
  static constexpr size_t kMaxSignatures = 64;
  std::vector<std::shared_ptr<Signature>> signatures_;
  /// Subgraph -> its compiled session (If's branches, Loop and Scan bodies).
  std::mutex nested_mu_;
  std::map<const Graph*, std::shared_ptr<CpuSession>> nested_;
  std::vector<uint64_t> last_used_;
  uint64_t clock_ = 0;
};

}  // namespace ferry
