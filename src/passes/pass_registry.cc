#include "passes/pass_registry.h"

#include "passes/passes.h"

namespace ferry {
namespace {

template <Status (*pass)(Graph&, PassStats&)>
Status plain(Graph& g, PassStats& stats, const OptimizeOptions&) {
  return pass(g, stats);
}

Status fold(Graph& g, PassStats& stats, const OptimizeOptions& options) {
  return fold_constants(g, stats, options.fold_size_limit);
}

#define FERRY_PASS(name) {#name, plain<name>}
constexpr NamedPass kPasses[] = {
    FERRY_PASS(canonicalize_batchnorm),
    FERRY_PASS(canonicalize_div_const),
    FERRY_PASS(canonicalize_gemm),
    FERRY_PASS(eliminate_common_subexpressions),
    FERRY_PASS(eliminate_dead),
    FERRY_PASS(eliminate_identity),
    {"fold_constants", fold},
    FERRY_PASS(fuse_affine_into_conv),
    FERRY_PASS(fuse_attention),
    FERRY_PASS(fuse_conv_epilogue),
    FERRY_PASS(fuse_gelu),
    FERRY_PASS(fuse_layernorm),
    FERRY_PASS(fuse_matmul_epilogue),
    FERRY_PASS(fuse_rmsnorm),
    FERRY_PASS(propagate_transposes),
    FERRY_PASS(share_duplicate_constants),
};
#undef FERRY_PASS

}  // namespace

std::span<const NamedPass> all_passes() { return kPasses; }

const NamedPass* find_pass(std::string_view name) {
  for (const NamedPass& p : kPasses)
    if (name == p.name) return &p;
  return nullptr;
}

std::string pass_names() {
  std::string names;
  for (const NamedPass& p : kPasses) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

}  // namespace ferry
