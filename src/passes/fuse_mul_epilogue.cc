// passes/fuse_mul_epilogue.cc — residual Add and activation after a Mul by a constant,
// as the epilogue of one FusedMul.
//
//   x * s + t              ==>  FusedMul(x, s, -, t)
//   act(x * s [+ t])       ==>  FusedMul(x, s, -, t) {activation=act, alpha, beta}
//
// A BatchNormalization that follows no convolution (DenseNet's norm + relu after every
// Concat, pre-activation ResNets) is x * s + t after canonicalize_batchnorm, then its
// activation: three passes over the tensor, one as a FusedMul (the CPU target runs it as one
// oneDNN binary primitive with the add and the activation as post-ops, or one own step).
// Runs after the Conv and MatMul epilogues, which take what follows their own ops first.
// Preconditions as fuse_conv_epilogue's (passes/epilogue_patterns.h); the Mul has a constant
// operand that broadcasts into the other one (its output keeps that operand's shape).
#include "passes/epilogue_patterns.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {

Status fuse_mul_epilogue_for(Graph& g, PassStats& stats, const Target& target) {
  std::vector<Pattern> patterns = {{"residual_add", Op::Add, [&target](Rewriter& rw, Node& n) {
                                      return fuse_residual_epilogue(rw, n, HostFamily::kMul, target);
                                    }}};
  for (Pattern& p : activation_patterns(HostFamily::kMul, target)) patterns.push_back(std::move(p));
  return apply_patterns(g, "fuse_mul_epilogue", patterns, stats);
}

}  // namespace ferry
