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
// HardSwish; Gelu (approximate=tanh: GeluTanh); Tanh; SiLU as y * Sigmoid(y).
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
namespace {

bool activation(Rewriter& rw, Node& n) { return fuse_activation_epilogue(rw, n, HostFamily::kConv); }
bool silu(Rewriter& rw, Node& n) { return fuse_silu_epilogue(rw, n, HostFamily::kConv); }
bool residual(Rewriter& rw, Node& n) { return fuse_residual_epilogue(rw, n, HostFamily::kConv); }

}  // namespace

Status fuse_conv_epilogue(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {
      {"residual_add", Op::Add, residual},
      {"activation", Op::Relu, activation},
      {"activation", Op::Clip, activation},
      {"activation", Op::LeakyRelu, activation},
      {"activation", Op::Sigmoid, activation},
      {"activation", Op::HardSigmoid, activation},
      {"activation", Op::HardSwish, activation},
      {"activation", Op::Gelu, activation},
      {"activation", Op::Tanh, activation},
      {"silu", Op::Mul, silu},
  };
  return apply_patterns(g, "fuse_conv_epilogue", patterns, stats);
}

}  // namespace ferry
