// passes/fuse_conv_epilogue.cc — residual Add and activation after a Conv or
// ConvTranspose, as the epilogue of one FusedConv / FusedConvTranspose.
//
//   Conv(x, W, b) + z              ==>  FusedConv(x, W, b, z)
//   act(Conv(x, W, b))             ==>  FusedConv(x, W, b) {activation=act, alpha, beta}
//   y * Sigmoid(y), y = Conv(...)  ==>  FusedConv(...) {activation=SiLU}
//   act(FusedConv(x, W, b, z))     ==>  FusedConv(x, W, b, z) {activation=act}
//   (likewise ConvTranspose -> FusedConvTranspose)
//
// act: Relu; Clip with constant (or omitted) bounds, alpha = min, beta = max
// (Relu6 is Clip 0..6); LeakyRelu (alpha); Sigmoid; HardSigmoid (alpha, beta);
// HardSwish; Gelu (approximate=tanh: GeluTanh); Tanh; SiLU as y * Sigmoid(y)
// or Swish; each only when the target applies it in the fused op's epilogue
// (ir/activation.h's table, passes/target.h).
// The result is always act(conv + b + z): an Add after an activation, a second
// activation or a second residual stay outside (near misses). Preconditions:
// the conv's output feeds only the absorbed node (for SiLU: the Sigmoid and
// the Mul) and is no graph output; z broadcasts into the conv's output without
// enlarging it (shapes known). Per-channel constant Adds were folded into b
// already (fuse_affine_into_conv); a bias add is therefore not a pattern here.
// Patterns: epilogue_patterns.h.
#include "passes/epilogue_patterns.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {

Status fuse_conv_epilogue_for(Graph& g, PassStats& stats, const Target& target) {
  std::vector<Pattern> patterns = {{"residual_add", Op::Add, [&target](Rewriter& rw, Node& n) {
                                      return fuse_residual_epilogue(rw, n, HostFamily::kConv, target);
                                    }}};
  for (Pattern& p : activation_patterns(HostFamily::kConv, target)) patterns.push_back(std::move(p));
  return apply_patterns(g, "fuse_conv_epilogue", patterns, stats);
}

}  // namespace ferry
