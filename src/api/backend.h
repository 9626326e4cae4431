// api/backend.h — how compile() reaches a backend: one row per backend in the
// table in backends.cc, each a factory that turns a (possibly optimized)
// graph into an Executor.
//
// Plugging in a backend (e.g. the compiled CPU runtime in src/backends/cpu):
//   1. write src/api/<name>_backend.cc defining
//        Result<std::unique_ptr<Executor>> make_<name>_executor(std::shared_ptr<const Graph>, const CompileOptions&);
//      whose Executor wraps the backend's compile (in the factory) and
//      reshape -> bind -> run (in run(); reshape again when the input dims change);
//   2. declare it below and add its row to backend_table() in backends.cc.
// compile(), the Python package and its tests pick it up from the table.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferry/model.h"

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
  virtual Result<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs) = 0;
};

using MakeExecutor = Result<std::unique_ptr<Executor>> (*)(std::shared_ptr<const Graph> graph,
                                                           const CompileOptions& options);

struct BackendEntry {
  const char* name;
  const char* description;
  MakeExecutor make;
  /// Optimizer passes compile() skips for this backend (fused ops it has no fast kernel for).
  std::vector<std::string> skip_passes = {};
};

/// The backend table; the first row is the default backend.
const std::vector<BackendEntry>& backend_table();

/// cpu_backend.cc: the compiled CPU session (runtime/session.h), falling back to the
/// reference interpreter on models it cannot plan, as `ferry run` does.
Result<std::unique_ptr<Executor>> make_cpu_executor(std::shared_ptr<const Graph> graph, const CompileOptions& options);

/// reference_backend.cc: the reference interpreter (runtime/interpreter.h).
Result<std::unique_ptr<Executor>> make_reference_executor(std::shared_ptr<const Graph> graph,
                                                          const CompileOptions& options);

}  // namespace ferry::api
