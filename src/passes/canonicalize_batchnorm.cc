// passes/canonicalize_batchnorm.cc — inference BatchNormalization as a per-channel affine.
//
//   BatchNormalization(x, scale, B, mean, var) {epsilon}  ==>  x * s + t
//     s = scale / sqrt(var + epsilon)          shape [C, 1, ..., 1] (rank(x) - 1 dims)
//     t = B - mean * s
//
// Preconditions: training_mode = 0 (training normalizes with batch statistics);
// scale, B, mean, var constants of C elements each; x floating point of known
// rank >= 2. s and t are computed in double and rounded once to x's dtype. One
// Conv fusion then absorbs Conv+BN, Conv+Mul and Conv+Add alike.
#include <cmath>

#include "ir/op_attrs.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

bool canonicalize(Rewriter& rw, Node& bn) {
  Value* x = bn.input(0);
  if (bn.attrs<BatchNormalizationAttrs>().training_mode != 0)
    return rw.near_miss("training_mode=1: normalizes with batch statistics, not a fixed affine", {&bn});
  if (!is_floating(x->dtype())) return false;
  const Shape& shape = x->shape();
  if (!shape.rank_known() || shape.rank() < 2) return rw.near_miss("rank of the input is not known", {&bn});
  const Tensor* p[4];
  const char* names[4] = {"scale", "B", "mean", "var"};
  for (size_t i = 0; i < 4; ++i) {
    p[i] = constant_of(bn.input(i + 1));
    if (!p[i]) return rw.near_miss(std::string(names[i]) + " is not a constant", {&bn});
  }
  const int64_t c = p[0]->numel();
  for (size_t i = 1; i < 4; ++i)
    if (p[i]->numel() != c) return rw.near_miss("parameters have different sizes", {&bn});
  if (shape[1].is_static() && shape[1].value() != c)
    return rw.near_miss("parameters have " + std::to_string(c) + " elements, input has " + shape[1].to_string() +
                            " channels",
                        {&bn});

  std::vector<int64_t> dims(size_t(shape.rank() - 1), 1);
  dims[0] = c;
  Tensor s = Tensor::empty(x->dtype(), dims), t = Tensor::empty(x->dtype(), dims);
  const double eps = bn.attrs<BatchNormalizationAttrs>().epsilon;
  for (int64_t i = 0; i < c; ++i) {
    double si = p[0]->get_double(i) / std::sqrt(p[3]->get_double(i) + eps);
    s.set_double(i, si);
    t.set_double(i, p[1]->get_double(i) - p[2]->get_double(i) * si);
  }
  Node* mul = rw.create(Op::Mul, {x, rw.constant(std::move(s), bn.name() + "/scale")}, 1, {}, {&bn}, bn.name() + "/mul");
  Node* add = rw.create(Op::Add, {mul->output(0), rw.constant(std::move(t), bn.name() + "/shift")}, 1, {}, {&bn},
                        bn.name() + "/add");
  rw.replace_uses(bn.output(0), add->output(0));
  return true;
}

}  // namespace

Status canonicalize_batchnorm(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"batchnorm_to_mul_add", Op::BatchNormalization, canonicalize}};
  return apply_patterns(g, "canonicalize_batchnorm", patterns, stats);
}

}  // namespace ferry
