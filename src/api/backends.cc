// api/backends.cc — the backend table behind CompileOptions::backend.
#include "api/backend.h"
#include "runtime/session.h"

namespace ferry {
namespace api {

const std::vector<BackendEntry>& backend_table() {
  static const std::vector<BackendEntry> table = {
      // name         description                                              factory
      {"cpu",
       "the fast CPU backend (oneDNN convolutions and matmuls, own SIMD kernels, planned memory; as `ferry run`); "
       "models it cannot plan run in the reference interpreter",
       make_cpu_executor, cpu_session_skipped_passes()},
      {"reference", "the reference interpreter: every op, obviously correct, single-threaded", make_reference_executor},
  };
  return table;
}

}  // namespace api

std::vector<BackendInfo> available_backends() {
  std::vector<BackendInfo> out;
  for (const api::BackendEntry& e : api::backend_table()) out.push_back({e.name, e.description});
  return out;
}

}  // namespace ferry
