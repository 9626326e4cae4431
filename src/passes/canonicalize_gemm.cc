// passes/canonicalize_gemm.cc — Gemm as MatMul (+ Add), the one form fusions match.
//
//   Gemm(A, B, C) {alpha, beta, transA, transB}  ==>  MatMul(A', B') + C'
//     A' = transA ? A^T : A      B' = alpha * (transB ? B^T : B)      C' = beta * C
//
// Transposes and scales fold into operands that are constants; a non-constant
// operand gets a Transpose node (transA/transB) or a Mul node (alpha with
// neither A nor B constant, beta with C not constant). Without C, or with
// beta = 0 and C a finite constant, there is no Add. Preconditions: A and B of
// rank 2; alpha = beta = 1 unless the dtype is floating point.
#include <cmath>

#include "ir/op_attrs.h"
#include "passes/passes.h"
#include "passes/pattern_driver.h"

namespace ferry {
namespace {

/// Returns t^T (rank 2) scaled by `scale` (scale 1: an exact copy).
Tensor transposed_scaled(const Tensor& t, bool transpose, double scale) {
  const int64_t rows = t.dim(0), cols = t.dim(1);
  Tensor out = Tensor::empty(t.dtype(), transpose ? std::vector<int64_t>{cols, rows} : t.dims());
  const size_t es = dtype_size(t.dtype());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      int64_t src = r * cols + c, dst = transpose ? c * rows + r : src;
      if (scale == 1.0)
        std::memcpy(out.raw() + size_t(dst) * es, t.raw() + size_t(src) * es, es);
      else
        out.set_double(dst, t.get_double(src) * scale);
    }
  return out;
}

bool all_finite(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(t.get_double(i))) return false;
  return true;
}

bool canonicalize_gemm_at(Rewriter& rw, Node& gemm) {
  Value *a = gemm.input(0), *b = gemm.input(1), *c = gemm.input(2);
  const GemmAttrs& attrs = gemm.attrs<GemmAttrs>();
  const double alpha = attrs.alpha, beta = attrs.beta;
  const bool trans_a = attrs.transA != 0, trans_b = attrs.transB != 0;
  if (a->dtype() == DType::undefined) return false;
  if (!is_floating(a->dtype()) && (alpha != 1.0 || (c && beta != 1.0)))
    return rw.near_miss("alpha or beta != 1 on integer operands", {&gemm});
  const Tensor *ca = constant_of(a), *cb = constant_of(b), *cc = constant_of(c);
  if ((ca && ca->rank() != 2) || (cb && cb->rank() != 2)) return false;  // invalid Gemm: leave it to the kernel
  const std::string& name = gemm.name();

  // Where alpha goes: into B if constant, else into A if constant, else a Mul after the MatMul.
  double scale_b = cb ? alpha : 1.0, scale_a = (!cb && ca) ? alpha : 1.0;
  bool mul_after = alpha != 1.0 && !cb && !ca;
  auto operand = [&](Value* v, const Tensor* t, bool trans, double scale, const char* what) -> Value* {
    if (t && (trans || scale != 1.0)) return rw.constant(transposed_scaled(*t, trans, scale), name + "/" + what);
    if (!trans) return v;
    AttrMap perm;
    perm.set("perm", std::vector<int64_t>{1, 0});
    return rw.create(Op::Transpose, {v}, 1, perm, {&gemm}, name + "/transpose_" + what)->output(0);
  };
  Value* a2 = operand(a, ca, trans_a, scale_a, "A");
  Value* b2 = operand(b, cb, trans_b, scale_b, "B");
  Value* y = rw.create(Op::MatMul, {a2, b2}, 1, {}, {&gemm}, name + "/matmul")->output(0);
  auto scalar = [&](double v, const char* what) {
    Tensor s = Tensor::empty(a->dtype(), {});
    s.set_double(0, v);
    return rw.constant(std::move(s), name + "/" + what);
  };
  if (mul_after) y = rw.create(Op::Mul, {y, scalar(alpha, "alpha")}, 1, {}, {&gemm}, name + "/mul_alpha")->output(0);
  if (c && !(beta == 0.0 && cc && all_finite(*cc))) {
    Value* c2 = c;
    if (beta != 1.0 && cc) {
      Tensor scaled = Tensor::empty(cc->dtype(), cc->dims());
      for (int64_t i = 0; i < cc->numel(); ++i) scaled.set_double(i, cc->get_double(i) * beta);
      c2 = rw.constant(std::move(scaled), name + "/C");
    } else if (beta != 1.0) {
      c2 = rw.create(Op::Mul, {c, scalar(beta, "beta")}, 1, {}, {&gemm}, name + "/mul_beta")->output(0);
    }
    y = rw.create(Op::Add, {y, c2}, 1, {}, {&gemm}, name + "/add")->output(0);
  }
  rw.replace_uses(gemm.output(0), y);
  return true;
}

}  // namespace

Status canonicalize_gemm(Graph& g, PassStats& stats) {
  static const std::vector<Pattern> patterns = {{"gemm_to_matmul_add", Op::Gemm, canonicalize_gemm_at}};
  return apply_patterns(g, "canonicalize_gemm", patterns, stats);
}

}  // namespace ferry
