#include "passes/pass_registry.h"

#include "passes/passes.h"

namespace ferry {
namespace {

template <Status (*pass)(Graph&, PassStats&)>
Status plain(Graph& g, PassStats& stats, const OptimizeOptions&, const Target&) {
  return pass(g, stats);
}

template <Status (*pass)(Graph&, PassStats&, const Target&)>
Status for_target(Graph& g, PassStats& stats, const OptimizeOptions&, const Target& target) {
  return pass(g, stats, target);
}

Status fold(Graph& g, PassStats& stats, const OptimizeOptions& options, const Target&) {
  return fold_constants(g, stats, options.fold_size_limit);
}

#define FERRY_PASS(name) {#name, plain<name>}
#define FERRY_FUSION(name, op) {#name, plain<name>, Op::op}
constexpr NamedPass kPasses[] = {
    FERRY_PASS(canonicalize_batchnorm),
    FERRY_PASS(canonicalize_div_const),
    FERRY_PASS(canonicalize_gemm),
    FERRY_PASS(eliminate_common_subexpressions),
    FERRY_PASS(eliminate_dead),
    FERRY_PASS(eliminate_identity),
    {"fold_constants", fold},
    FERRY_PASS(fuse_affine_before_conv),
    FERRY_PASS(fuse_affine_into_conv),
    FERRY_FUSION(fuse_attention, Attention),
    {"fuse_conv_epilogue", for_target<fuse_conv_epilogue_for>},  // asks the target per fused op and activation
    FERRY_FUSION(fuse_gelu, Gelu),
    FERRY_FUSION(fuse_hardswish, HardSwish),
    FERRY_FUSION(fuse_layernorm, LayerNormalization),
    {"fuse_matmul_epilogue", for_target<fuse_matmul_epilogue_for>},
    {"fuse_mul_epilogue", for_target<fuse_mul_epilogue_for>},
    FERRY_FUSION(fuse_rmsnorm, RMSNormalization),
    FERRY_FUSION(fuse_swish, Swish),
    FERRY_PASS(inline_constant_if),
    FERRY_PASS(lower_einsum),
    {"lower_conv_transpose", for_target<lower_conv_transpose_for>},  // asks the target whether its deconvolution is fast
    {"lower_integer_matmuls", for_target<lower_integer_matmuls_for>},  // asks the target whether it runs them
    {"pad_wide_convs", for_target<pad_wide_convs_for>},  // asks the target how wide a pad its kernels take
    FERRY_PASS(propagate_transposes),
    FERRY_PASS(share_duplicate_constants),
    FERRY_PASS(split_packed_projection),
    FERRY_PASS(unflatten_dense),
};
#undef FERRY_FUSION
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
