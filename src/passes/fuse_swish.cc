// passes/fuse_swish.cc — SiLU written out, as one Swish op.
//
//   x * Sigmoid(x)   ==>  Swish(x) {alpha = 1}          either operand order
//
// Exporters write SiLU this way (EfficientNet, YOLO, LLaMA's MLP). A SiLU after a
// Conv or MatMul was absorbed into its epilogue already (fuse_*_epilogue run first);
// this pass takes the rest, so a target runs one pass over memory instead of two.
// Preconditions: the Sigmoid reads x and feeds only the Mul (and is no graph
// output); x is floating point.
#include "passes/match_util.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

bool fuse_swish_at(Rewriter& rw, Node& mul) {
  for (size_t i = 0; i < 2; ++i) {
    Value* x = mul.input(i);
    Node* sig = producer_of(mul.input(1 - i), Op::Sigmoid);
    if (!sig || sig->input(0) != x || mul.input(0) == mul.input(1)) continue;
    if (!is_floating(x->dtype())) return false;
    if (rw.graph().is_graph_output(sig->output(0)) || sig->output(0)->uses().size() != 1)
      return rw.near_miss("Sigmoid output has other consumers", {sig, &mul});
    AttrMap attrs;
    attrs.set("alpha", 1.0);
    Node* swish = rw.create(Op::Swish, {x}, 1, std::move(attrs), {sig, &mul}, mul.name());
    rw.replace_uses(mul.output(0), swish->output(0));
    return true;
  }
  return false;
}

}  // namespace

Status fuse_swish(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"silu", Op::Mul, fuse_swish_at}};
  return apply_patterns(g, "fuse_swish", patterns, stats);
}

}  // namespace ferry
