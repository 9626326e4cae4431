// passes/pipeline.cc — the optimizer: a plain ordered list of passes.
//
// Order: clean up, fold constants (shapes become constants, so more folds and
// canonical forms become visible), canonicalize (BatchNorm, Gemm, Div into
// Mul/Add/MatMul, the forms fusions expect), move transposes out of the way
// (NHWC imports), clean up again, fuse, sweep. Each fusion asks the target
// (passes/target.h): a pass that forms an op the target does not execute does
// not run (NamedPass::forms), and the epilogue fusions absorb only what the
// target's fused ops apply.
// Subgraphs (If's branches, Loop and Scan bodies) are optimized the same way once
// their graph is done, each as a graph whose captures are inputs: what the
// target runs inside them is fused like the rest.
// After every pass shapes are re-inferred and, in debug builds or with
// verify_each_pass, the graph is verified, so a broken pass is caught at once
// and named.
#include "passes/pipeline.h"

#include <algorithm>

#include "ir/subgraph.h"
#include "ir/verifier.h"
#include "ops/shape_inference.h"
#include "passes/pass_registry.h"
#include "passes/shape_value.h"

namespace ferry {
namespace {

// The optimizer, in order (pass functions in passes/pass_registry.cc).
constexpr const char* kPipeline[] = {
    "eliminate_dead",
    "eliminate_identity",
    "inline_constant_if",  // an If on an initializer; fold_constants inlines the ones that fold
    "fold_constants",
    "canonicalize_batchnorm",
    "canonicalize_gemm",
    "canonicalize_div_const",
    "unflatten_dense",  // torch MultiheadAttention's [S*B, E] out projection on [S, B, E]
    "lower_integer_matmuls",  // ConvInteger / MatMulInteger as f32 Conv / MatMul where the target has no integer kernels
    "propagate_transposes",  // layout: NHWC imports lose their inner transposes
    "eliminate_identity",
    "split_packed_projection",  // after the transposes moved: a packed Q/K/V projection, one per part
    "share_duplicate_constants",
    "eliminate_common_subexpressions",
    // Fusions (passes/fuse_*.cc) go here, one line each.
    // transformer fusions (LayerNorm, RMSNorm, GELU, Attention)
    "fuse_layernorm",
    "fuse_rmsnorm",
    "fuse_gelu",
    "fuse_attention",
    "propagate_transposes",  // again: what the attention fusion leaves (sequence-first outputs) cancels
    "lower_einsum",  // the Einsums attention did not take, as MatMul (epilogues fuse next)
    // Conv / MatMul: fold affines into weights first (Conv+BN), then epilogues
    // (GELU must be one op by now for MatMul+Gelu).
    "pad_wide_convs",  // before the epilogues: the Conv they fuse is the unpadded one
    "fuse_affine_into_conv",
    "lower_conv_transpose",  // after the affine folds (into the ConvTranspose), before the epilogues (onto its Conv)
    "fuse_hardswish",  // HardSwish written out: after the affine folds into its Conv, before that Conv's epilogue
    "fuse_affine_before_conv",  // PP-LCNetV3's x * s + t in front of a Conv; after fuse_hardswish (its / 6 is no affine to fold)
    "fuse_conv_epilogue",
    "fuse_matmul_epilogue",
    "fuse_mul_epilogue",  // what is left of x * s + t (+ act): DenseNet's BatchNorm + Relu after each Concat
    "fuse_swish",  // SiLU the epilogues did not take
    "eliminate_dead",
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

Status run_list(Graph& g, const std::vector<const NamedPass*>& passes, const Target& target,
                const OptimizeOptions& options, PassStats* stats) {
  PassStats local;
  PassStats& s = stats ? *stats : local;
  FERRY_TRY(verify(g).with_context("before optimizing"));
  FERRY_TRY(refresh_shapes(g).with_context("before optimizing"));
  for (const NamedPass* p : passes) {
    if (p->forms != Op::Identity && !target.executes(p->forms)) continue;  // the target would not run it
    const int64_t applied_before = total_applied(s);
    Status st = p->run(g, s, options, target);
    if (!st.ok()) return std::move(st).with_context(std::string("pass ") + p->name);
    // A pass that applied nothing left every shape as it was: skip the whole-graph
    // re-inference (it dominates on 100k-node graphs), unless verifying every pass.
    if (total_applied(s) == applied_before && !kDebugBuild && !options.verify_each_pass) {
      if (options.after_pass) FERRY_TRY(options.after_pass(p->name, g).with_context(std::string("after pass ") + p->name));
      continue;
    }
    FERRY_TRY(after_pass(g, options, p->name));
  }
  return Status::Ok();
}

Status run_list_nested(Graph& g, const std::vector<const NamedPass*>& passes, const Target& target,
                       const OptimizeOptions& options, PassStats* stats, int depth) {
  FERRY_TRY(run_list(g, passes, target, options, stats));
  if (depth >= kMaxSubgraphDepth) return Status::Ok();
  // after_pass hooks (convert --check-passes) run whole models: a subgraph is not one.
  OptimizeOptions inner = options;
  inner.after_pass = nullptr;
  for (Node* n : g.nodes())
    for (const auto& [name, value] : n->attrs().all())
      if (const SubgraphPtr* sub = std::get_if<SubgraphPtr>(&value); sub && *sub) {
        Status st = run_list_nested(**sub, passes, target, inner, stats, depth + 1);
        if (!st.ok()) return std::move(st).with_context("node " + n->describe() + ", subgraph '" + name + "'");
      }
  return Status::Ok();
}

}  // namespace

Status refresh_shapes(Graph& g) { return infer_shapes(g, nullptr, refine_shape); }

Status optimize(Graph& g, const OptimizeOptions& options, PassStats* stats) {
  return optimize(g, reference_target(), options, stats);
}

Status optimize(Graph& g, const Target& target, const OptimizeOptions& options, PassStats* stats) {
  std::vector<const NamedPass*> passes;
  for (const char* name : kPipeline) {
    passes.push_back(find_pass(name));
    FERRY_CHECK(passes.back() != nullptr, std::string("pipeline.cc names no pass '") + name + "'");
  }
  return run_list_nested(g, passes, target, options, stats, 0);
}

Status run_passes(Graph& g, const std::vector<std::string>& names, const Target& target,
                  const OptimizeOptions& options, PassStats* stats) {
  std::vector<const NamedPass*> passes;
  for (const std::string& name : names) {
    passes.push_back(find_pass(name));
    if (!passes.back()) return invalid_argument("no pass named '" + name + "' (passes: " + pass_names() + ")");
  }
  return run_list(g, passes, target, options, stats);
}

}  // namespace ferry
