// ops/det.cc — Det: the determinant of each square matrix of the innermost two axes.
//
//   Det(X)[b...] = det(X[b..., :, :])         X: [*, M, M] -> Y: [*]
//
// Gaussian elimination with partial pivoting in double: det = sign * prod(U[i, i])
// for P X = L U, sign = (-1)^(row swaps). The largest pivot in each column keeps
// the elimination stable; a column without a nonzero pivot gives 0. M = 0 gives 1
// (the empty product), as numpy does.
#include <cmath>
#include <utility>

#include "ops/conv_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

/// det of the n x n row-major matrix `a` (destroyed).
double determinant(double* a, int64_t n) {
  double det = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r * n + c]) > std::fabs(a[pivot * n + c])) pivot = r;
    if (a[pivot * n + c] == 0) return 0.0;
    if (pivot != c) {
      for (int64_t k = 0; k < n; ++k) std::swap(a[c * n + k], a[pivot * n + k]);
      det = -det;
    }
    det *= a[c * n + c];
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / a[c * n + c];
      for (int64_t k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
    }
  }
  return det;
}

Status check_square(const Shape& s) {
  if (!s.rank_known()) return Status::Ok();
  if (s.rank() < 2) return invalid_model("Det needs X of rank >= 2 ([*, M, M]), got " + s.to_string());
  const Dim &m = s[size_t(s.rank() - 2)], &n = s[size_t(s.rank() - 1)];
  if (m.is_static() && n.is_static() && m.value() != n.value())
    return invalid_model("Det needs square matrices, got X " + s.to_string());
  return Status::Ok();
}

}  // namespace

Status infer_Det(InferContext& ctx) {
  FERRY_TRY(check_float_dtype(ctx.input_dtype(0), "X"));
  const Shape& x = ctx.input_shape(0);
  FERRY_TRY(check_square(x));
  if (!x.rank_known()) {
    ctx.set_output(0, ctx.input_dtype(0), Shape::unknown_rank());
    return Status::Ok();
  }
  ctx.set_output(0, ctx.input_dtype(0), Shape(std::vector<Dim>(x.dims().begin(), x.dims().end() - 2)));
  return Status::Ok();
}

Status ref_Det(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  FERRY_TRY(check_float_dtype(x.dtype(), "X"));
  FERRY_TRY(check_square(x.shape()));
  const int64_t n = x.dim(x.rank() - 1);
  std::vector<int64_t> batch(x.dims().begin(), x.dims().end() - 2);
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), batch));
  std::vector<double> v = to_f64(x), out(size_t(y->numel()));
  for (size_t b = 0; b < out.size(); ++b) out[b] = determinant(v.data() + b * size_t(n * n), n);
  store_f64(out, *y);
  return Status::Ok();
}

}  // namespace ferry
