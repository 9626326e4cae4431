// passes/canonicalize_div_const.cc — division by a constant as multiplication.
//
//   Div(x, c)  ==>  Mul(x, r)      r = 1 / c, element by element, rounded once to dtype(x)
//
// Preconditions: x and c floating point of one dtype; c a constant whose every
// element is nonzero and whose reciprocal is finite and normal in that dtype
// (1/c overflowing or losing precision in a subnormal would change results by
// more than an ulp). Integer division truncates and is left alone.
// Multiplication is cheaper than division and is what fusions absorb.
#include <cfloat>
#include <cmath>

#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

/// Smallest positive normal number of a floating-point dtype.
double min_normal(DType t) {
  switch (t) {
    case DType::f64: return DBL_MIN;
    case DType::f16: return 6.103515625e-05;  // 2^-14
    default: return FLT_MIN;                  // f32 and bf16 share the exponent range
  }
}

bool canonicalize_div_const_at(Rewriter& rw, Node& div) {
  Value *x = div.input(0), *c = div.input(1);
  const Tensor* t = constant_of(c);
  if (!t || !is_floating(t->dtype()) || x->dtype() != t->dtype()) return false;
  Tensor r = Tensor::empty(t->dtype(), t->dims());
  for (int64_t i = 0; i < t->numel(); ++i) {
    double v = t->get_double(i);
    if (v == 0 || std::isnan(v)) return rw.near_miss("divisor has a zero or NaN element", {&div});
    r.set_double(i, 1.0 / v);
    double back = r.get_double(i);
    if (!std::isfinite(back) || std::fabs(back) < min_normal(t->dtype()))
      return rw.near_miss("1/c is not a normal number for divisor element " + std::to_string(v), {&div});
  }
  Node* mul = rw.create(Op::Mul, {x, rw.constant(std::move(r), div.name() + "/reciprocal")}, 1, {}, {&div},
                        div.name() + "/mul");
  rw.replace_uses(div.output(0), mul->output(0));
  return true;
}

}  // namespace

Status canonicalize_div_const(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"div_by_constant_to_mul", Op::Div, canonicalize_div_const_at}};
  return apply_patterns(g, "canonicalize_div_const", patterns, stats);
}

}  // namespace ferry
