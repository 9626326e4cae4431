#include "passes/match_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "ir/op_attrs.h"
#include "ops/registry.h"
#include "ops/shape_util.h"

namespace ferry {

std::optional<double> scalar_constant(const Value* v) {
  const Tensor* t = constant_of(v);
  if (!t || t->numel() != 1 || t->dtype() == DType::boolean) return std::nullopt;
  return t->get_double(0);
}

Value* other_operand(const Node& n, const Value* v) {
  if (n.num_inputs() != 2) return nullptr;
  if (n.input(0) == v && n.input(1) != v) return n.input(1);
  if (n.input(1) == v && n.input(0) != v) return n.input(0);
  return nullptr;
}

Node* single_consumer(const Graph& g, const Value* v) {
  if (!has_one_use(g, v)) return nullptr;
  return v->uses()[0].node;
}

Node* single_consumer_of(const Graph& g, const Value* v, Op op) {
  Node* n = single_consumer(g, v);
  return n && n->op() == op ? n : nullptr;
}

std::string found(const Value* v) {
  if (!v) return "nothing";
  if (v->producer()) return op_name(v->producer()->op());
  return v->is_constant() ? "a constant" : "a graph input";
}

std::optional<std::vector<int64_t>> reduce_axes(const Node& reduce, int64_t rank) {
  if (reduce.num_inputs() < 2 || !reduce.input(1)) {
    if (reduce.attrs<ReduceAttrs>().noop_with_empty_axes != 0) return std::nullopt;
    std::vector<int64_t> all(size_t(std::max<int64_t>(rank, 0)));
    for (int64_t i = 0; i < rank; ++i) all[size_t(i)] = i;
    return all;
  }
  auto axes = known_ints(constant_of(reduce.input(1)));
  if (!axes) return std::nullopt;
  auto norm = normalize_axes(*axes, rank);
  if (!norm.ok()) return std::nullopt;
  std::vector<int64_t> out = *norm;
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

void flatten_into(const Graph& g, Value* v, bool is_root, int depth, Product& p) {
  Node* mul = producer_of(v, Op::Mul);
  if (mul && depth > 0 && (is_root || has_one_use(g, v))) {
    p.nodes.push_back(mul);
    flatten_into(g, mul->input(0), false, depth - 1, p);
    flatten_into(g, mul->input(1), false, depth - 1, p);
    return;
  }
  if (v->is_constant()) {
    auto c = scalar_constant(v);
    if (c)
      p.coefficient *= *c;
    else
      p.ok = false;
    return;
  }
  p.factors.push_back(v);
}

}  // namespace

Product flatten_product(const Graph& g, Value* root, int max_depth) {
  Product p;
  flatten_into(g, root, true, max_depth, p);
  return p;
}

}  // namespace ferry

namespace ferry {

double f32_attr(double v) {
  const float f = float(v);
  char buf[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, double(f));
    if (std::strtof(buf, nullptr) == f) return std::strtod(buf, nullptr);
  }
  return double(f);
}

Value* add_values(Rewriter& rw, Value* a, Value* b, const Node* from, const std::string& name) {
  Node* add = rw.create(Op::Add, {a, b}, 1, {}, {from}, name + "/sum");
  const Tensor *ta = constant_of(a), *tb = constant_of(b);
  if (!ta || !tb || !add->output(0)->shape().is_static()) return add->output(0);
  std::vector<Tensor> outs(1);
  auto t = Tensor::zeros(add->output(0)->dtype(), add->output(0)->shape().static_dims());
  if (!t.ok()) return add->output(0);
  outs[0] = std::move(t).value();
  KernelContext ctx(*add, {ta, tb}, &outs);
  if (!op_reference_kernel(Op::Add)(ctx).ok()) return add->output(0);
  return rw.constant(std::move(outs[0]), name);  // the Add node is left dead and swept
}

}  // namespace ferry
