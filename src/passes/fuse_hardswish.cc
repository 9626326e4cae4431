// passes/fuse_hardswish.cc — HardSwish written out, as one HardSwish op.
//
//   x * Clip(x + 3, 0, 6) * (1/6)      ==>  HardSwish(x)   any order of the product
//   x * HardSigmoid(x) {1/6, 0.5}      ==>  HardSwish(x)
//
// ONNX's HardSwish(x) = x * max(0, min(1, x / 6 + 0.5)) is the same function. Exporters
// write it out: Paddle2ONNX as x * Clip(x + 3, 0, 6) / 6 (PP-OCR's detectors and
// recognizers, PP-LCNet; the Div becomes * 1/6 in canonicalize_div_const), torch as
// x * (relu6(x + 3) / 6). Written out, the Conv before it has two readers and none of its
// epilogue fuses; as one op, fuse_conv_epilogue takes it into the Conv. Runs before the
// epilogue fusions. Preconditions: the Add, Clip (or HardSigmoid) and inner Mul read as
// written, each feeding only the next and no graph output; 3, 0, 6 and 1/6 within 1e-6
// (what f32 rounding leaves); x floating point.
#include "passes/fusion_util.h"
#include "passes/match_util.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

/// Whether `gate` is x's HardSwish gate, divided by 6 already (HardSigmoid: 1) or not
/// (Clip(x + 3, 0, 6): 6): the factor the product's coefficient must undo; 0 when it is
/// not a gate on x (why set when it is a Clip whose bounds are not constants).
double hardswish_gate(const Node* gate, const Value* x, std::string* why) {
  if (!gate) return 0;
  if (gate->op() == Op::HardSigmoid) {
    const HardSigmoidAttrs& a = gate->attrs<HardSigmoidAttrs>();
    return gate->input(0) == x && approx(a.alpha, 1.0 / 6, 1e-6) && approx(a.beta, 0.5, 1e-6) ? 1 : 0;
  }
  if (gate->op() != Op::Clip) return 0;
  std::optional<EpilogueActivation> clip = epilogue_activation(*gate, why);
  if (!clip || clip->alpha != 0 || clip->beta != 6) return 0;
  const Node* add = gate->input(0)->producer();
  if (!add || add->op() != Op::Add || other_operand(*add, x) == nullptr) return 0;
  std::optional<double> three = scalar_constant(other_operand(*add, x));
  if (!three || !approx(*three, 3, 1e-6)) return 0;
  return 6;
}

bool fuse_hardswish_at(Rewriter& rw, Node& root) {
  const Graph& g = rw.graph();
  Product p = flatten_product(g, root.output(0));
  if (!p.ok || p.factors.size() != 2 || !is_floating(root.output(0)->dtype())) return false;
  for (size_t i = 0; i < 2; ++i) {
    Value* x = p.factors[i];
    Node* gate = p.factors[1 - i]->producer();
    std::string why;
    const double scale = hardswish_gate(gate, x, &why);
    if (scale == 0) {
      if (!why.empty()) return rw.near_miss(why, {gate, &root});
      continue;
    }
    if (!approx(p.coefficient * scale, 1, 1e-6)) continue;  // an inner Mul of the product, or not / 6
    if (!single_consumer(g, gate->output(0))) return rw.near_miss("the HardSwish gate has other consumers", {gate, &root});
    if (gate->op() == Op::Clip && !single_consumer(g, gate->input(0)))
      return rw.near_miss("x + 3 has other consumers", {gate, &root});
    std::vector<const Node*> from(p.nodes.begin(), p.nodes.end());
    from.push_back(gate);
    if (gate->op() == Op::Clip) from.push_back(gate->input(0)->producer());
    Node* hs = rw.create(Op::HardSwish, {x}, 1, {}, from, root.name());
    rw.replace_uses(root.output(0), hs->output(0));
    return true;
  }
  return false;
}

}  // namespace

Status fuse_hardswish(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"hardswish", Op::Mul, fuse_hardswish_at}};
  return apply_patterns(g, "fuse_hardswish", patterns, stats);
}

}  // namespace ferry
