// api/backend.h — how compile() reaches a backend: one row per backend in the
// table in backends.cc, each with its target description (what the optimizer
// fuses for it, passes/target.h) and a factory that turns the graph optimized
// for that target into an Executor.
//
// Plugging in a backend (e.g. a CUDA one next to src/backends/cpu):
//   1. write its target description and src/api/<name>_backend.cc defining
//        Result<std::unique_ptr<Executor>> make_<name>_executor(std::shared_ptr<const Graph>, const CompileOptions&);
//      whose Executor wraps the backend's compile (in the factory) and
//      reshape -> bind -> run (in run(); reshape again when the input dims change);
//   2. declare both below and add its row to backend_table() in backends.cc.
// compile(), the CLI, the Python package and their tests pick it up from the table.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferry/model.h"
#include "ops/registry.h"
#include "precision/graph_runner.h"

namespace ferry::api {

/// A model compiled for one backend.
///
/// Contract: run() receives inputs already checked by Session::check_inputs
/// (names, dtypes, ranks, static and symbolic dims) and returns the graph
/// outputs in order. It must not write into input buffers, and must keep no
/// reference to an input tensor after it returns (callers lend them, e.g.
/// numpy memory). Calls are serialized by Session.
class Executor {
 public:
  virtual ~Executor() = default;
  /// Inputs in graph-input order; `outputs` entries of the right dtype and dims may be reused.
  virtual Status run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs, const RunObserver* observer) = 0;
  /// Steps and memory for inputs of these dims (graph-input order).
  virtual Result<PlanInfo> plan(const std::vector<std::vector<int64_t>>& input_dims) = 0;
  /// Why this executor runs the model in the reference interpreter, or "".
  virtual std::string fallback_reason() const { return ""; }
};

using MakeExecutor = Result<std::unique_ptr<Executor>> (*)(std::shared_ptr<const Graph> graph,
                                                           const CompileOptions& options);

using MakeTarget = Target (*)(const CompileOptions& options);
using MakePrecisions = TargetPrecisions (*)(const CompileOptions& options);

struct BackendEntry {
  const char* name;
  const char* description;
  MakeExecutor make;
  MakeTarget target;          ///< what the optimizer forms for it
  MakePrecisions precisions;  ///< what the precision pass may lower for it
};

/// How calibration and the accuracy guard run graphs for this backend (precision/graph_runner.h):
/// each call compiles the graph with the backend's factory (as compile() does: on the cpu backend
/// real bf16 / int8 steps for the emulated nodes it runs natively) and runs every sample on it.
GraphRunner backend_graph_runner(const BackendEntry& backend, const CompileOptions& options);

/// The backend table; the first row is the default backend.
const std::vector<BackendEntry>& backend_table();
/// The row named `name`, or invalid_argument listing the backends.
Result<const BackendEntry*> find_backend(const std::string& name);

/// cpu_backend.cc: the compiled CPU session (backends/cpu/cpu_session.h), falling back to
/// the reference interpreter on models it cannot plan.
Result<std::unique_ptr<Executor>> make_cpu_executor(std::shared_ptr<const Graph> graph, const CompileOptions& options);
/// cpu_target() for the options' ISA cap.
Target make_cpu_target(const CompileOptions& options);
/// cpu_precisions() (backends/cpu/cpu_precision.h) for the options' ISA cap.
TargetPrecisions make_cpu_precisions(const CompileOptions& options);
/// The ISA named by CompileOptions::isa ("" = the host's), or invalid_argument.
Result<Isa> parse_isa(const std::string& name);

/// reference_backend.cc: the reference interpreter (runtime/interpreter.h).
Result<std::unique_ptr<Executor>> make_reference_executor(std::shared_ptr<const Graph> graph,
                                                          const CompileOptions& options);
Target make_reference_target(const CompileOptions& options);
TargetPrecisions make_reference_precisions(const CompileOptions& options);
/// The interpreter behind the Executor interface (inputs in graph-input order; the
/// observer gets every graph input and node output; no step times).
Status run_interpreter(const Graph& g, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs,
                       const RunObserver* observer);

}  // namespace ferry::api
