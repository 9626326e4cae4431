// api/backends.cc — the backend table behind CompileOptions::backend.
#include "api/backend.h"

namespace ferry {
namespace api {

const std::vector<BackendEntry>& backend_table() {
  static const std::vector<BackendEntry> table = {
      // name  description                                                   factory  target
      {"cpu",
       "the fast CPU backend (oneDNN convolutions and matmuls with fused epilogues, own SIMD kernels, planned "
       "memory); models it cannot plan run in the reference interpreter",
       make_cpu_executor, make_cpu_target, make_cpu_precisions},
      {"reference", "the reference interpreter: every op, obviously correct, single-threaded", make_reference_executor,
       make_reference_target, make_reference_precisions},
  };
  return table;
}

GraphRunner backend_graph_runner(const BackendEntry& backend, const CompileOptions& options) {
  return [make = backend.make, options](const Graph& g, const std::vector<std::map<std::string, Tensor>>& samples,
                                        const ValueSink& on_value) -> Result<std::vector<std::vector<Tensor>>> {
    // The caller keeps g alive for the call: the executor borrows it (no copy), so the values
    // it reports are g's own.
    FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Executor> exec, make(std::shared_ptr<const Graph>(std::shared_ptr<const Graph>(), &g), options));
    RunObserver observer;
    if (on_value) observer.on_value = [&](const Value* v, const Tensor& t) { on_value(*v, t); };
    std::vector<std::vector<Tensor>> all;
    for (size_t s = 0; s < samples.size(); ++s) {
      std::vector<Tensor> inputs;
      for (const Value* v : g.inputs()) {
        auto it = samples[s].find(v->name());
        if (it == samples[s].end()) return invalid_argument("sample " + std::to_string(s) + " has no input '" + v->name() + "'");
        inputs.push_back(it->second);
      }
      std::vector<Tensor> outputs;
      FERRY_TRY(exec->run(inputs, &outputs, on_value ? &observer : nullptr).with_context("sample " + std::to_string(s)));
      all.push_back(std::move(outputs));
    }
    return all;
  };
}

Result<const BackendEntry*> find_backend(const std::string& name) {
  std::string names;
  for (const BackendEntry& e : backend_table()) {
    if (name == e.name) return &e;
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  }
  return invalid_argument("unknown backend '" + name + "' (available: " + names + ")");
}

}  // namespace api

std::vector<BackendInfo> available_backends() {
  std::vector<BackendInfo> out;
  for (const api::BackendEntry& e : api::backend_table()) out.push_back({e.name, e.description});
  return out;
}

Result<Target> backend_target(const CompileOptions& options) {
  FERRY_ASSIGN_OR_RETURN(const api::BackendEntry* e, api::find_backend(options.backend));
  if (!options.isa.empty()) { FERRY_TRY(api::parse_isa(options.isa).status()); }
  return e->target(options);
}

Result<TargetPrecisions> backend_precisions(const CompileOptions& options) {
  FERRY_ASSIGN_OR_RETURN(const api::BackendEntry* e, api::find_backend(options.backend));
  if (!options.isa.empty()) { FERRY_TRY(api::parse_isa(options.isa).status()); }
  return e->precisions(options);
}

}  // namespace ferry
