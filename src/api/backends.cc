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
