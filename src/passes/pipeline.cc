// passes/pipeline.cc — the optimizer: a plain ordered list of passes.
//
// Order: clean up, fold constants (shapes become constants, so more folds and
// canonical forms become visible), canonicalize (BatchNorm, Gemm, Div into
// Mul/Add/MatMul, the forms fusions expect), move transposes out of the way
// (NHWC imports), clean up again, fuse, sweep. Each fusion asks the target
// (passes/target.h): a pass that forms an op the target does not execute does
// not run, and the epilogue fusions absorb only what the target's fused ops apply.
// After every pass shapes are re-inferred and, in debug builds or with
// verify_each_pass, the graph is verified, so a broken pass is caught at once
// and named.
#include "passes/pipeline.h"

#include <algorithm>

#include "ir/verifier.h"
#include "ops/shape_inference.h"
#include "passes/shape_value.h"

namespace ferry {
namespace {

using PassFn = std::function<Status(Graph&, PassStats&)>;

struct PassEntry {
  const char* name;
  PassFn run;
  Op forms = Op::Identity;  ///< the op a fusion makes: it runs only when the target executes it
};

#ifdef NDEBUG
constexpr bool kDebugBuild = false;
#else
constexpr bool kDebugBuild = true;
#endif

Status after_pass(Graph& g, const OptimizeOptions& options, const char* name) {
  Status st = refresh_shapes(g);
  if (st.ok() && (kDebugBuild || options.verify_each_pass)) st = verify(g);
  if (st.ok() && options.after_pass) st = options.after_pass(name, g);
  return std::move(st).with_context(std::string("after pass ") + name);
}

int64_t total_applied(const PassStats& s) {
  int64_t n = 0;
  for (const auto& [pass, patterns] : s)
    for (const auto& [name, st] : patterns) n += st.applied;
  return n;
}

}  // namespace

Status refresh_shapes(Graph& g) { return infer_shapes(g, nullptr, refine_reshape_shape); }

Status optimize(Graph& g, const OptimizeOptions& options, PassStats* stats) {
  return optimize(g, reference_target(), options, stats);
}

Status optimize(Graph& g, const Target& target, const OptimizeOptions& options, PassStats* stats) {
  PassStats local;
  PassStats& s = stats ? *stats : local;
  auto fold = [&](Graph& graph, PassStats& st) { return fold_constants(graph, st, options.fold_size_limit); };

  const PassEntry passes[] = {
      {"eliminate_dead", eliminate_dead},
      {"eliminate_identity", eliminate_identity},
      {"fold_constants", fold},
      {"canonicalize_batchnorm", canonicalize_batchnorm},
      {"canonicalize_gemm", canonicalize_gemm},
      {"canonicalize_div_const", canonicalize_div_const},
      {"propagate_transposes", propagate_transposes},  // layout: NHWC imports lose their inner transposes
      {"eliminate_identity", eliminate_identity},
      {"share_duplicate_constants", share_duplicate_constants},
      {"eliminate_common_subexpressions", eliminate_common_subexpressions},
      // Fusions (passes/fuse_*.cc) go here, one line each.
      // transformer fusions (LayerNorm, RMSNorm, GELU, Attention)
      {"fuse_layernorm", fuse_layernorm, Op::LayerNormalization},
      {"fuse_rmsnorm", fuse_rmsnorm, Op::RMSNormalization},
      {"fuse_gelu", fuse_gelu, Op::Gelu},
      {"fuse_attention", fuse_attention, Op::Attention},
      // Conv / MatMul: fold affines into weights first (Conv+BN), then epilogues
      // (GELU must be one op by now for MatMul+Gelu), then mark conv pairs on the final FusedConvs.
      {"fuse_affine_into_conv", fuse_affine_into_conv},
      {"fuse_conv_epilogue", [&](Graph& graph, PassStats& st) { return fuse_conv_epilogue_for(graph, st, target); }},
      {"fuse_matmul_epilogue", [&](Graph& graph, PassStats& st) { return fuse_matmul_epilogue_for(graph, st, target); }},
      {"fuse_swish", fuse_swish, Op::Swish},  // SiLU the epilogues did not take
      {"mark_dw_pw_conv_pairs", mark_dw_pw_conv_pairs},
      {"eliminate_dead", eliminate_dead},
  };

  FERRY_TRY(verify(g).with_context("before optimizing"));
  FERRY_TRY(refresh_shapes(g).with_context("before optimizing"));
  for (const PassEntry& p : passes) {
    if (p.forms != Op::Identity && !target.executes(p.forms)) continue;  // the target would not run it
    const int64_t applied_before = total_applied(s);
    Status st = p.run(g, s);
    if (!st.ok()) return std::move(st).with_context(std::string("pass ") + p.name);
    // A pass that applied nothing left every shape as it was: skip the whole-graph
    // re-inference (it dominates on 100k-node graphs), unless verifying every pass.
    if (total_applied(s) == applied_before && !kDebugBuild && !options.verify_each_pass) {
      if (options.after_pass) FERRY_TRY(options.after_pass(p.name, g).with_context(std::string("after pass ") + p.name));
      continue;
    }
    FERRY_TRY(after_pass(g, options, p.name));
  }
  return Status::Ok();
}

}  // namespace ferry
