// passes/pass_registry.h — every pass by name, for run_passes (pipeline.h): `ferry opt
// --passes a,b,c` and the .ir pass tests (tests/passes/ir/). The optimizer's order is
// pipeline.cc's list of these names.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "passes/pipeline.h"

namespace ferry {

struct NamedPass {
  const char* name;  ///< the pass function's name: "fuse_gelu"
  Status (*run)(Graph& g, PassStats& stats, const OptimizeOptions& options, const Target& target);
  Op forms = Op::Identity;  ///< the op a fusion makes: it runs only when the target executes it
};

/// Every pass, sorted by name.
std::span<const NamedPass> all_passes();
/// Null when no pass has this name.
const NamedPass* find_pass(std::string_view name);
/// "canonicalize_batchnorm, canonicalize_div_const, ...": for error messages and --help.
std::string pass_names();

}  // namespace ferry
