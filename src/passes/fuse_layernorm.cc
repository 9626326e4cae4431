// passes/fuse_layernorm.cc — LayerNormalization from its decomposed form.
//
//   d = x - ReduceMean(x, A)
//   n = d / Sqrt(ReduceMean(d^2, A) + eps)        (or d * Reciprocal(Sqrt(...)), d * (1 / Sqrt(...)))
//   y = n [* gamma] [+ beta]                      ==>  LayerNormalization(x, gamma, beta) {axis = A[0], epsilon = eps}
//
// d^2 is Pow(d, 2) or Mul(d, d); operands of Sub/Mul/Add/Div in either order
// where the op commutes. This is what PyTorch (opset < 17), TF/Keras via
// tf2onnx (SquaredDifference lowered to Sub + Mul) and hand-written models emit.
// Preconditions: x floating point; both ReduceMeans keepdims=1 over the same
// axes A, which are the trailing axes [a, rank); eps a scalar constant; gamma
// and beta (any values) keep the shape of x; every intermediate has one use
// (d has its two). Without gamma a ones constant is made (normalized dims
// must be static).
#include "passes/match_util.h"
#include "passes/normalization_match.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

/// The denominator when `n` is d / s, d * Reciprocal(s) or d * (1 / s); the nodes used go to `nodes`.
Value* denominator(const Graph& g, Node& n, Value** d, std::vector<const Node*>& nodes) {
  if (n.op() == Op::Div) {
    *d = n.input(0);
    return n.input(1);
  }
  for (int i = 0; i < 2; ++i) {
    Value* r = n.input(size_t(i));
    if (!has_one_use(g, r)) continue;
    if (Node* rec = producer_of(r, Op::Reciprocal)) {
      *d = n.input(size_t(1 - i));
      nodes.push_back(rec);
      return rec->input(0);
    }
    if (Node* div = producer_of(r, Op::Div); div && scalar_constant(div->input(0)) == 1.0) {
      *d = n.input(size_t(1 - i));
      nodes.push_back(div);
      return div->input(1);
    }
  }
  return nullptr;
}

bool fuse_layernorm_at(Rewriter& rw, Node& norm) {
  Graph& g = rw.graph();
  std::vector<const Node*> nodes = {&norm};
  Value* d = nullptr;
  Value* s = denominator(g, norm, &d, nodes);
  Node* sqrt = producer_of(s, Op::Sqrt);
  Node* sub = producer_of(d, Op::Sub);
  if (!sqrt || !sub) return false;
  Value* x = sub->input(0);
  Node* mean = producer_of(sub->input(1), Op::ReduceMean);
  if (!mean || mean->input(0) != x) return false;  // not x - mean(x)
  // Recognized: x - mean(x) over something with a square root. Guards now explain.
  nodes.insert(nodes.end(), {sqrt, sub, mean});
  Node* add_eps = producer_of(sqrt->input(0), Op::Add);
  if (!add_eps) return rw.near_miss("Sqrt input is not variance + eps: found " + found(sqrt->input(0)), nodes);
  nodes.push_back(add_eps);
  Node* var = nullptr;
  std::optional<double> eps;
  for (int i = 0; i < 2 && !var; ++i)
    if ((var = producer_of(add_eps->input(size_t(i)), Op::ReduceMean))) eps = scalar_constant(add_eps->input(size_t(1 - i)));
  if (!var) return rw.near_miss("variance is not a ReduceMean", nodes);
  nodes.push_back(var);
  if (!eps) return rw.near_miss("epsilon is not a scalar constant", nodes);
  if (!is_square_of(g, var->input(0), d))
    return rw.near_miss("variance is not the mean of (x - mean)^2: found " + found(var->input(0)), nodes);
  nodes.push_back(var->input(0)->producer());
  if (!is_floating(x->dtype()) || !x->shape().rank_known())
    return rw.near_miss("input is not floating point of known rank", nodes);
  const int64_t rank = x->shape().rank();
  std::string why;
  auto axes = trailing_mean_axes(*mean, rank, &why);
  if (!axes) return rw.near_miss(why, nodes);
  auto vaxes = trailing_mean_axes(*var, rank, &why);
  if (!vaxes) return rw.near_miss(why, nodes);
  if (*vaxes != *axes) return rw.near_miss("mean and variance reduce different axes", nodes);
  bool d_private = !g.is_graph_output(d);
  for (const auto& u : d->uses()) d_private &= u.node == &norm || u.node == var->input(0)->producer();
  if (!d_private || !has_one_use(g, mean->output(0)) ||
      !has_one_use(g, var->output(0)) || !has_one_use(g, add_eps->output(0)) || !has_one_use(g, s))
    return rw.near_miss("an intermediate of the normalization has other consumers", nodes);

  // Optional affine tail: * gamma, + beta.
  Value* y = norm.output(0);
  Value* gamma = take_scale(g, &y, x, nodes);
  Value* beta = nullptr;
  if (Node* add = single_consumer_of(g, y, Op::Add); add && add->output(0)->shape() == x->shape()) {
    beta = other_operand(*add, y);
    if (beta) nodes.push_back(add), y = add->output(0);
  }
  if (!(y->shape() == x->shape())) return rw.near_miss("the result does not keep the shape of x", nodes);
  if (!gamma && !(gamma = ones_scale(rw, x, *axes, norm.name(), &why))) return rw.near_miss(why, nodes);
  if (gamma->dtype() != x->dtype() || (beta && beta->dtype() != x->dtype()))
    return rw.near_miss("scale or bias dtype differs from the input's", nodes);
  AttrMap attrs;
  attrs.set("axis", (*axes)[0]);
  attrs.set("epsilon", f32_attr(*eps));
  std::vector<Value*> ins = {x, gamma};
  if (beta) ins.push_back(beta);
  Node* ln = rw.create(Op::LayerNormalization, ins, 1, std::move(attrs), nodes, norm.name() + "/layernorm");
  rw.replace_uses(y, ln->output(0));
  return true;
}

}  // namespace

Status fuse_layernorm(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"layernorm_div", Op::Div, fuse_layernorm_at}, {"layernorm_mul_reciprocal", Op::Mul, fuse_layernorm_at}};
  return apply_patterns(g, "fuse_layernorm", patterns, stats);
}

}  // namespace ferry
