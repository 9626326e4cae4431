// passes/fuse_rmsnorm.cc — RMSNormalization (ONNX opset 23) from its decomposed form.
//
//   n = x / Sqrt(ReduceMean(x^2, A) + eps)        (or x * Reciprocal(Sqrt(...)), x * (1 / Sqrt(...)))
//   y = n [* gamma]                               ==>  RMSNormalization(x, gamma) {axis = A[0], epsilon = eps}
//
// x^2 is Pow(x, 2) or Mul(x, x); gamma on either side. This is LLaMA/T5's
// `x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight` as exported.
// Preconditions: x floating point; ReduceMean keepdims=1 over the trailing
// axes [a, rank); eps a scalar constant; gamma keeps the shape of x; every
// intermediate has one use. x = d - mean(d) is a LayerNorm and is left to
// fuse_layernorm (which runs first). Without gamma a ones constant is made.
#include "passes/match_util.h"
#include "passes/normalization_match.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

/// (x, Sqrt node) when `n` is x / Sqrt(.), x * Reciprocal(Sqrt(.)) or x * (1 / Sqrt(.)).
std::pair<Value*, Node*> numerator_and_sqrt(const Graph& g, Node& n, std::vector<const Node*>& nodes) {
  if (n.op() == Op::Div) return {n.input(0), producer_of(n.input(1), Op::Sqrt)};
  for (int i = 0; i < 2; ++i) {
    Value* r = n.input(size_t(i));
    Node* rec = producer_of(r, Op::Reciprocal);
    Node* div = producer_of(r, Op::Div);
    Value* s = rec ? rec->input(0) : (div && scalar_constant(div->input(0)) == 1.0 ? div->input(1) : nullptr);
    if (Node* sqrt = producer_of(s, Op::Sqrt); sqrt && has_one_use(g, r)) {
      nodes.push_back(rec ? rec : div);
      return {n.input(size_t(1 - i)), sqrt};
    }
  }
  return {nullptr, nullptr};
}

bool fuse_rmsnorm_at(Rewriter& rw, Node& norm) {
  Graph& g = rw.graph();
  std::vector<const Node*> nodes = {&norm};
  auto [x, sqrt] = numerator_and_sqrt(g, norm, nodes);
  if (!x || !sqrt) return false;
  Node* add_eps = producer_of(sqrt->input(0), Op::Add);
  if (!add_eps) return false;
  Node* mean = nullptr;
  std::optional<double> eps;
  for (int i = 0; i < 2 && !mean; ++i)
    if ((mean = producer_of(add_eps->input(size_t(i)), Op::ReduceMean))) eps = scalar_constant(add_eps->input(size_t(1 - i)));
  if (!mean || !is_square_of(g, mean->input(0), x)) return false;  // not mean(x^2) of this x
  // Recognized: x / sqrt(mean(x^2) + c). Guards now explain.
  nodes.insert(nodes.end(), {sqrt, add_eps, mean, mean->input(0)->producer()});
  if (Node* sub = producer_of(x, Op::Sub); sub && producer_of(sub->input(1), Op::ReduceMean))
    return rw.near_miss("input is x - mean(x): a LayerNorm that fuse_layernorm did not fuse", nodes);
  if (!eps) return rw.near_miss("epsilon is not a scalar constant", nodes);
  if (!is_floating(x->dtype()) || !x->shape().rank_known())
    return rw.near_miss("input is not floating point of known rank", nodes);
  const int64_t rank = x->shape().rank();
  std::string why;
  auto axes = trailing_mean_axes(*mean, rank, &why);
  if (!axes) return rw.near_miss(why, nodes);
  if (!has_one_use(g, mean->output(0)) || !has_one_use(g, add_eps->output(0)) || !has_one_use(g, sqrt->output(0)))
    return rw.near_miss("an intermediate of the normalization has other consumers", nodes);
  Value* y = norm.output(0);
  Value* gamma = take_scale(g, &y, x, nodes);
  if (!(y->shape() == x->shape())) return rw.near_miss("the result does not keep the shape of x", nodes);
  if (!gamma && !(gamma = ones_scale(rw, x, *axes, norm.name(), &why))) return rw.near_miss(why, nodes);
  if (gamma->dtype() != x->dtype()) return rw.near_miss("scale dtype differs from the input's", nodes);
  AttrMap attrs;
  attrs.set("axis", (*axes)[0]);
  attrs.set("epsilon", f32_attr(*eps));
  Node* rms = rw.create(Op::RMSNormalization, {x, gamma}, 1, std::move(attrs), nodes, norm.name() + "/rmsnorm");
  rw.replace_uses(y, rms->output(0));
  return true;
}

}  // namespace

Status fuse_rmsnorm(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"rmsnorm_div", Op::Div, fuse_rmsnorm_at}, {"rmsnorm_mul_reciprocal", Op::Mul, fuse_rmsnorm_at}};
  return apply_patterns(g, "fuse_rmsnorm", patterns, stats);
}

}  // namespace ferry
