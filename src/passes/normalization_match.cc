#include "passes/normalization_match.h"

#include "ir/op_attrs.h"
#include "passes/match_util.h"

namespace ferry {

bool is_square_of(const Graph& g, const Value* sq, const Value* v) {
  if (!has_one_use(g, sq)) return false;
  if (Node* pow = producer_of(sq, Op::Pow)) {
    auto e = scalar_constant(pow->input(1));
    return pow->input(0) == v && e && *e == 2.0;
  }
  Node* mul = producer_of(sq, Op::Mul);
  return mul && mul->input(0) == v && mul->input(1) == v;
}

std::optional<std::vector<int64_t>> trailing_mean_axes(const Node& mean, int64_t rank, std::string* why) {
  auto axes = reduce_axes(mean, rank);
  if (!axes) return *why = "ReduceMean axes are not constant", std::nullopt;
  if (mean.attrs<ReduceAttrs>().keepdims != 1) return *why = "ReduceMean has keepdims=0", std::nullopt;
  for (size_t i = 0; i < axes->size(); ++i)
    if ((*axes)[i] != rank - int64_t(axes->size()) + int64_t(i))
      return *why = "ReduceMean axes " + ints_to_string(*axes) + " are not the last axes of a rank-" +
                    std::to_string(rank) + " input",
             std::nullopt;
  if (axes->empty()) return *why = "ReduceMean reduces no axis", std::nullopt;
  return axes;
}

Value* take_scale(const Graph& g, Value** y, const Value* x, std::vector<const Node*>& nodes) {
  Node* mul = single_consumer_of(g, *y, Op::Mul);
  if (!mul || !(mul->output(0)->shape() == x->shape())) return nullptr;
  Value* gamma = other_operand(*mul, *y);
  if (!gamma) return nullptr;
  nodes.push_back(mul);
  *y = mul->output(0);
  return gamma;
}

Value* ones_scale(Rewriter& rw, const Value* x, const std::vector<int64_t>& axes, const std::string& name,
                  std::string* why) {
  std::vector<int64_t> dims;
  for (int64_t a : axes) {
    const Dim& dim = x->shape()[size_t(a)];
    if (!dim.is_static()) return *why = "no scale and the normalized dims are not static", nullptr;
    dims.push_back(dim.value());
  }
  Tensor ones = Tensor::empty(x->dtype(), dims);
  for (int64_t i = 0; i < ones.numel(); ++i) ones.set_double(i, 1.0);
  return rw.constant(std::move(ones), name + "/ones");
}

}  // namespace ferry
