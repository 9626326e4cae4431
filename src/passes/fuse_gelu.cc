// passes/fuse_gelu.cc — GELU from its elementwise decompositions.
//
//   x * 0.5 * (1 + Erf(x * 1/sqrt(2)))                             ==>  Gelu(x)
//   x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))         ==>  Gelu(x) {approximate=tanh}
//
// The outer product is matched as a flattened Mul tree, so every association
// and operand order is covered ((x * A) * 0.5, x * (0.5 * A), (0.5 * x) * A
// ...); x / sqrt(2) arrives here as x * (1/sqrt(2)) (canonicalize_div_const)
// but Div is accepted too; x^3 is Pow(x, 3) or a Mul tree of three x.
// Preconditions: x floating point; constants single-element and equal to the
// formula's within 1e-4 relative (exporters round them to f32 or to a few
// digits); every intermediate has one use; the result has x's shape.
#include "passes/match_util.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752;
constexpr double kSqrt2OverPi = 0.79788456080286536;
constexpr double kTanhCubic = 0.044715;

/// True when `u` is x / sqrt(2) (Mul by 1/sqrt(2) or Div by sqrt(2)).
bool is_x_over_sqrt2(const Graph& g, Value* u, Value* x) {
  if (Node* div = producer_of(u, Op::Div)) {
    auto c = scalar_constant(div->input(1));
    return div->input(0) == x && c && approx(*c, 1 / kInvSqrt2);
  }
  Product p = flatten_product(g, u, 2);
  return p.ok && p.factors.size() == 1 && p.factors[0] == x && approx(p.coefficient, kInvSqrt2);
}

/// True when `v` is c * x^3 for some constant c (returned in *c).
bool is_cubic_term(const Graph& g, Value* v, Value* x, double* c) {
  Product p = flatten_product(g, v, 4);
  if (!p.ok) return false;
  int power = 0;
  for (Value* f : p.factors) {
    if (f == x) {
      ++power;
    } else if (Node* pow = producer_of(f, Op::Pow); pow && pow->input(0) == x && has_one_use(g, f)) {
      auto e = scalar_constant(pow->input(1));
      if (!e || *e != 3) return false;
      power += 3;
    } else {
      return false;
    }
  }
  *c = p.coefficient;
  return power == 3;
}

/// True when `u` is sqrt(2/pi) * (x + 0.044715 * x^3).
bool is_tanh_argument(const Graph& g, Value* u, Value* x) {
  Product outer = flatten_product(g, u, 2);
  if (!outer.ok || outer.factors.size() != 1 || !approx(outer.coefficient, kSqrt2OverPi)) return false;
  Node* add = producer_of(outer.factors[0], Op::Add);
  if (!add || !has_one_use(g, outer.factors[0])) return false;
  Value* cubic = other_operand(*add, x);
  double c = 0;
  return cubic && is_cubic_term(g, cubic, x, &c) && approx(c, kTanhCubic);
}

bool fuse_gelu_at(Rewriter& rw, Node& root) {
  Graph& g = rw.graph();
  Product p = flatten_product(g, root.output(0), 4);
  if (!p.ok || p.factors.size() != 2) return false;
  // Find A = 1 + Erf(u) / 1 + Tanh(u) among the two factors; the other is x.
  for (int i = 0; i < 2; ++i) {
    Value *a = p.factors[size_t(i)], *x = p.factors[size_t(1 - i)];
    Node* add = producer_of(a, Op::Add);
    if (!add) continue;
    Node* inner = nullptr;
    for (Value* in : add->inputs())
      if (in->producer() && (in->producer()->op() == Op::Erf || in->producer()->op() == Op::Tanh)) inner = in->producer();
    if (!inner) continue;
    Value* one = other_operand(*add, inner->output(0));
    auto one_v = scalar_constant(one);
    if (!one_v || *one_v != 1.0) return false;
    // Recognized. From here on a failed guard is a near miss, reported only at
    // the top of the product (an inner Mul of a larger tree stays quiet).
    const bool top = !single_consumer_of(g, root.output(0), Op::Mul);
    auto miss = [&](const std::string& why) {
      return top ? rw.near_miss(why, {&root, add, inner}) : false;
    };
    const bool is_erf = inner->op() == Op::Erf;
    if (!is_floating(x->dtype())) return miss("GELU input is not floating point");
    if (!approx(p.coefficient, 0.5))
      return miss("the product's constant factor is " + std::to_string(p.coefficient) + ", not 0.5");
    if (!has_one_use(g, a) || !has_one_use(g, inner->output(0)))
      return miss(std::string("1 + ") + op_name(inner->op()) + "(...) has more than one consumer");
    if (is_erf && !is_x_over_sqrt2(g, inner->input(0), x))
      return miss("Erf input is not x / sqrt(2) of the same x: found " + found(inner->input(0)));
    if (!is_erf && !is_tanh_argument(g, inner->input(0), x))
      return miss("Tanh input is not sqrt(2/pi) * (x + 0.044715 x^3) of the same x: found " + found(inner->input(0)));
    if (!x->shape().rank_known() || !(root.output(0)->shape() == x->shape()))
      return miss("the product broadcasts x from " + x->shape().to_string() + " to " + root.output(0)->shape().to_string());
    AttrMap attrs;
    if (!is_erf) attrs.set("approximate", std::string("tanh"));
    std::vector<const Node*> from = p.nodes;
    from.insert(from.end(), {add, inner});
    if (Node* u = inner->input(0)->producer()) from.push_back(u);
    Node* gelu = rw.create(Op::Gelu, {x}, 1, std::move(attrs), from, root.name() + "/gelu");
    rw.replace_uses(root.output(0), gelu->output(0));
    return true;
  }
  return false;
}

}  // namespace

Status fuse_gelu(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"gelu_erf_or_tanh", Op::Mul, fuse_gelu_at}};
  return apply_patterns(g, "fuse_gelu", patterns, stats);
}

}  // namespace ferry
