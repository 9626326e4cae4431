// passes/fuse_matmul_epilogue.cc — bias, residual Add and activation after a
// MatMul, as the epilogue of one FusedMatMul.
//
//   MatMul(a, b) + c               ==>  FusedMatMul(a, b, c')        c varies only along the last axis
//   MatMul(a, b) + z               ==>  FusedMatMul(a, b, _, z)      any other z that broadcasts into the output
//   T_P(MatMul(a, b)) + z          ==>  T_P(FusedMatMul(a, b, _, T_Pinv(z)))   z of the Add's shape
//   act(MatMul(a, b))              ==>  FusedMatMul(a, b) {activation=act, alpha, beta}
//   y * Sigmoid(y), y = MatMul(..) ==>  FusedMatMul(..) {activation=SiLU}
//   (each also onto a FusedMatMul that has no activation yet; each only when the
//   target executes FusedMatMul and applies the activation, passes/target.h)
//
// c' is c as a 1-D [N] tensor (N = the output's last dim): a constant of any
// such shape ([N], [1,N], a scalar) is rewritten to [N]; a non-constant c must
// already be 1-D. A second bias-shaped Add becomes z. act and the order rule
// are fuse_conv_epilogue's: the result is always act(a @ b + c' + z); an Add
// after the activation stays outside. Preconditions: float dtype; the MatMul's
// output feeds only the absorbed node and is no graph output; shapes known.
// Gemm arrives as MatMul + Add (canonicalize_gemm), so Gemm + activation fuses too.
#include "ops/conv_util.h"
#include "passes/epilogue_patterns.h"
#include "passes/fusion_util.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"
#include "passes/permutation.h"

namespace ferry {
namespace {

/// c as the 1-D bias of a [..., N] output, or null when c is not bias-shaped.
Value* as_bias(Rewriter& rw, Value* c, const Shape& out) {
  if (!out.rank_known() || out.rank() == 0 || !out[size_t(out.rank() - 1)].is_static()) return nullptr;
  const int64_t n = out[size_t(out.rank() - 1)].value();
  if (const Tensor* t = constant_of(c)) {
    auto values = per_channel_values(*t, out.rank(), out.rank() - 1, n);
    if (!values) return nullptr;
    if (t->rank() == 1 && t->dim(0) == n) return c;
    Tensor bias = Tensor::empty(t->dtype(), {n});
    store_f64(*values, bias);
    return rw.constant(std::move(bias), c->name() + "/bias");
  }
  const Shape& s = c->shape();
  return s.rank_known() && s.rank() == 1 && s[0].is_static() && s[0].value() == n ? c : nullptr;
}

/// T_Pinv(z): u when z = T_P(u) (the previous block's output, once rewritten), else a new
/// Transpose of z. When u is read here, outside the group it was made from, per-layer validation
/// takes u for the source tensor z stood for (u's Value::source_perm transposes the comparison),
/// so z's Transpose stands for none from now on (it would match an earlier source of the group).
Value* untransposed(Rewriter& rw, Value* z, const Perm& p) {
  if (Node* t = producer_of(z, Op::Transpose); t && transpose_perm(*t) == p) {
    t->provenance().clear();
    return t->input(0);
  }
  AttrMap attrs;
  attrs.set("perm", invert(p));
  return rw.create(Op::Transpose, {z}, 1, std::move(attrs), {}, z->name() + "/untransposed")->output(0);
}

// T_P(H(..)) + z  ==>  T_P(FusedMatMul(.., T_Pinv(z))): ConvNeXt's residual after its block's
// Transpose back to NCHW. z of the Add's own shape (no broadcast), not a constant. A stage's
// residual stream then stays channels-last: only its first z (the downsampling conv's output)
// gets a Transpose, a view of that channels-last tensor on the CPU target; the FusedMatMul adds
// z in its sum post-op and no step of its own remains.
bool residual_through_transpose(Rewriter& rw, Node& add, const Target& target) {
  for (size_t i = 0; i < 2; ++i) {
    Node* t = producer_of(add.input(i), Op::Transpose);
    Node* host = t ? epilogue_host(t->input(0), HostFamily::kMatMul) : nullptr;
    Value* z = add.input(1 - i);
    auto p = t ? transpose_perm(*t) : std::nullopt;
    if (!host || !p || constant_of(z) || host->has_input(3) || !has_one_use(rw.graph(), t->output(0)) ||
        !z->shape().is_static() || !(z->shape() == add.output(0)->shape()) || z->dtype() != add.output(0)->dtype())
      continue;
    if (!fused_op_blocker(*host, target).empty() || !epilogue_blocker(rw.graph(), *host, *t).empty()) continue;
    std::vector<Value*> inputs = host->inputs();
    inputs.resize(4, nullptr);
    inputs[3] = untransposed(rw, z, *p);
    Node* fused = rebuild_fused(rw, *host, std::move(inputs), {}, {host, &add});
    AttrMap attrs;
    attrs.set("perm", *p);
    // back computes the Add's output: with the fused node's provenance, it is the value
    // per-layer validation compares with the Add's source tensor while only back reads the fused
    // output; once the next block reads that too (untransposed), the fused output is.
    Node* back = rw.create(Op::Transpose, {fused->output(0)}, 1, std::move(attrs), {fused}, t->name());
    if (add.output(0)->source_perm().empty()) fused->output(0)->set_source_perm(invert(*p));
    rw.replace_uses(add.output(0), back->output(0));
    return true;
  }
  return false;
}

bool bias_or_residual(Rewriter& rw, Node& add, const Target& target) {
  if (residual_through_transpose(rw, add, target)) return true;
  for (size_t i = 0; i < 2; ++i) {
    Node* host = epilogue_host(add.input(i), HostFamily::kMatMul);
    if (!host || host->has_input(2) || !epilogue_blocker(rw.graph(), *host, add).empty()) continue;
    if (!fused_op_blocker(*host, target).empty()) continue;  // the residual pattern records why
    Value* bias = as_bias(rw, add.input(1 - i), host->output(0)->shape());
    if (!bias) continue;
    std::vector<Value*> inputs = host->inputs();
    inputs.resize(4, nullptr);
    inputs[2] = bias;
    Node* fused = rebuild_fused(rw, *host, std::move(inputs), {}, {host, &add});
    rw.replace_uses(add.output(0), fused->output(0));
    return true;
  }
  return fuse_residual_epilogue(rw, add, HostFamily::kMatMul, target);
}

}  // namespace

Status fuse_matmul_epilogue_for(Graph& g, PassStats& stats, const Target& target) {
  std::vector<Pattern> patterns = {{"bias_or_residual_add", Op::Add, [&target](Rewriter& rw, Node& n) {
                                      return bias_or_residual(rw, n, target);
                                    }}};
  for (Pattern& p : activation_patterns(HostFamily::kMatMul, target)) patterns.push_back(std::move(p));
  return apply_patterns(g, "fuse_matmul_epilogue", patterns, stats);
}

}  // namespace ferry
