// passes/fuse_affine_before_conv.cc — a scalar affine in front of a Conv, folded into its
// weights and bias.
//
//   Conv(x * s + t, W, b)  ==>  Conv(x, W * s, b + t * sum_{c,k} W[m, c, k])    zero padding only
//   Conv(x * s, W, b)      ==>  Conv(x, W * s, b)                               any padding
//
// PP-LCNetV3 (PP-OCRv4's detector and recognizer) ends every block in a learnable affine
// (x * s + t, scalar s and t) before the next Conv; fuse_affine_into_conv folds the ones
// after a Conv, this pass the ones in front of one. With padding, the padded taps read 0,
// not t, so a shift folds only into a Conv without padding (explicit zero pads or VALID);
// a scale alone folds into any (s * 0 = 0). Preconditions: s and t one-element constants,
// finite; each intermediate feeds only the next step and is no graph output; W (and b)
// constants of a float dtype. Folded in double, rounded once to W's dtype.
#include <cmath>

#include "ir/op_attrs.h"
#include "ops/conv_util.h"
#include "passes/fusion_util.h"
#include "passes/match_util.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

/// `v` = y * s (either order), s a finite one-element constant, v read only once: y and s.
bool affine_scale(const Graph& g, Value* v, Value** y, double* s) {
  Node* mul = producer_of(v, Op::Mul);
  if (!mul || !single_consumer(g, v)) return false;
  for (size_t i = 0; i < 2; ++i) {
    std::optional<double> c = scalar_constant(mul->input(1 - i));
    if (c && std::isfinite(*c) && mul->input(i)->shape() == v->shape()) {
      *y = mul->input(i), *s = *c;
      return true;
    }
  }
  return false;
}

/// The Conv reads zero padding nowhere: explicit pads all 0 (or none), or VALID.
bool conv_unpadded(const Node& conv) {
  const WindowAttrSource w = window_attr_source(conv);
  const std::string mode = w.auto_pad ? *w.auto_pad : "NOTSET";
  if (mode == "VALID") return true;
  if (mode != "NOTSET" && !mode.empty()) return false;
  if (!w.pads) return true;
  for (int64_t p : *w.pads)
    if (p != 0) return false;
  return true;
}

bool fuse_affine_before_conv_at(Rewriter& rw, Node& conv) {
  const Graph& g = rw.graph();
  Value* x = conv.input(0);
  const Tensor* w = constant_of(conv.input(1));
  if (!w || !is_floating(w->dtype()) || w->rank() < 3 || w->numel() == 0) return false;
  const Tensor* b = conv.has_input(2) ? constant_of(conv.input(2)) : nullptr;
  if (conv.has_input(2) && !b) return false;
  double s = 1, t = 0;
  Value* y = x;
  std::vector<const Node*> from;
  if (Node* add = producer_of(x, Op::Add); add && single_consumer(g, x)) {
    for (size_t i = 0; i < 2 && y == x; ++i) {
      std::optional<double> c = scalar_constant(add->input(1 - i));
      if (c && std::isfinite(*c) && add->input(i)->shape() == x->shape())
        y = add->input(i), t = *c;
    }
    if (y == x) return false;
    from.push_back(add);
  }
  Value* inner = y;
  if (affine_scale(g, y, &inner, &s)) from.push_back(y->producer());
  if (from.empty() || (s == 1 && t == 0)) return false;
  if (t != 0 && !conv_unpadded(conv))
    return rw.near_miss("a shift in front of a padded Conv: the pads read 0, not the shift", {from.front(), &conv});
  std::vector<double> wv = to_f64(*w);
  const int64_t m = w->dim(0), per = w->numel() / m;
  std::vector<double> bv = b ? to_f64(*b) : std::vector<double>(size_t(m), 0.0);
  for (int64_t o = 0; o < m; ++o) {
    double sum = 0;
    for (int64_t k = 0; k < per; ++k) sum += wv[size_t(o * per + k)];
    bv[size_t(o)] += t * sum;
  }
  for (double& v : wv) v *= s;
  Tensor w2 = Tensor::empty(w->dtype(), w->dims()), b2 = Tensor::empty(w->dtype(), {m});
  store_f64(wv, w2);
  store_f64(bv, b2);
  std::vector<Value*> inputs = {inner, rw.constant(std::move(w2), conv.name() + "/weights")};
  if (b || t != 0) inputs.push_back(rw.constant(std::move(b2), conv.name() + "/bias"));
  from.push_back(&conv);
  Node* folded = rw.create(Op::Conv, std::move(inputs), 1, conv.attrs(), from, conv.name());
  rw.replace_uses(conv.output(0), folded->output(0));
  return true;
}

}  // namespace

Status fuse_affine_before_conv(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"affine_before_conv", Op::Conv, fuse_affine_before_conv_at}};
  return apply_patterns(g, "fuse_affine_before_conv", patterns, stats);
}

}  // namespace ferry
