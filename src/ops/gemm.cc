// ops/gemm.cc — Gemm: Y = alpha * A' * B' + beta * C.
//
//   A' = transA ? A^T : A  (M x K),   B' = transB ? B^T : B  (K x N),
//   C broadcasts unidirectionally to (M, N) and is optional (treated as 0).
//
// Floats accumulate in double. Integers (i32, i64, u32, u64) accumulate modulo
// 2^64, so the result equals the wrap-around result in the element type; with a
// non-integral alpha or beta they go through double and saturate. As in BLAS
// and ONNX Runtime, beta = 0 ignores C entirely (a NaN in C does not leak).
#include <cmath>
#include <type_traits>

#include "ops/conv_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

bool gemm_dtype(DType t) {
  return is_floating(t) || t == DType::i32 || t == DType::i64 || t == DType::u32 || t == DType::u64;
}

/// Checks C against (M, N): rank <= 2, each dim 1 or equal (unidirectional broadcasting).
Status check_c(const Shape& c, const Dim& m, const Dim& n) {
  if (!c.rank_known()) return Status::Ok();
  if (c.rank() > 2) return invalid_model("C must have rank <= 2, got shape " + c.to_string());
  const Dim* want[2] = {&m, &n};
  for (int64_t i = 0; i < c.rank(); ++i) {
    const Dim& d = c[size_t(i)];
    const Dim& w = *want[2 - c.rank() + i];
    if (d.is_static() && w.is_static() && d.value() != 1 && d.value() != w.value())
      return invalid_model("C of shape " + c.to_string() + " cannot broadcast to the output [" + m.to_string() + "," +
                           n.to_string() + "]");
  }
  return Status::Ok();
}

struct GemmDims {
  Dim m, k, n;
};

Result<GemmDims> gemm_dims(const NodeContext& ctx, const Shape& a, const Shape& b) {
  if (a.rank_known() && a.rank() != 2) return invalid_model("A must be 2-D, got shape " + a.to_string());
  if (b.rank_known() && b.rank() != 2) return invalid_model("B must be 2-D, got shape " + b.to_string());
  const bool ta = ctx.attrs<GemmAttrs>().transA != 0, tb = ctx.attrs<GemmAttrs>().transB != 0;
  GemmDims d;
  Dim ka, kb;
  if (a.rank_known()) {
    d.m = a[ta ? 1 : 0];
    ka = a[ta ? 0 : 1];
  }
  if (b.rank_known()) {
    kb = b[tb ? 1 : 0];
    d.n = b[tb ? 0 : 1];
  }
  if (ka.is_static() && kb.is_static() && ka.value() != kb.value())
    return invalid_model("inner dimensions differ: A " + a.to_string() + (ta ? " (transposed)" : "") + " and B " +
                         b.to_string() + (tb ? " (transposed)" : ""));
  d.k = ka.is_static() ? ka : kb;
  return d;
}

// Row-major copy of src (rows x cols), transposed when `t`.
template <class V>
std::vector<V> maybe_transpose(std::vector<V> src, int64_t rows, int64_t cols, bool t) {
  if (!t) return src;
  std::vector<V> dst(src.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[size_t(j * rows + i)] = src[size_t(i * cols + j)];
  return dst;
}

}  // namespace

Status infer_Gemm(InferContext& ctx) {
  const DType t = ctx.input_dtype(0);
  if (!gemm_dtype(t))
    return invalid_model(std::string("A has dtype ") + dtype_name(t) + "; Gemm takes f32, f64, f16, bf16, i32, i64, u32, u64");
  FERRY_TRY(check_same_dtype(t, ctx.input_dtype(1), "B"));
  if (ctx.has_input(2)) FERRY_TRY(check_same_dtype(t, ctx.input_dtype(2), "C"));
  FERRY_ASSIGN_OR_RETURN(GemmDims d, gemm_dims(ctx, ctx.input_shape(0), ctx.input_shape(1)));
  if (ctx.has_input(2)) FERRY_TRY(check_c(ctx.input_shape(2), d.m, d.n));
  ctx.set_output(0, t, Shape(std::vector<Dim>{d.m, d.n}));
  return Status::Ok();
}

Status ref_Gemm(KernelContext& ctx) {
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  const Tensor* C = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (!gemm_dtype(A.dtype()) || A.dtype() != B.dtype() || (C && C->dtype() != A.dtype()))
    return invalid_model("Gemm inputs must share one of f32, f64, f16, bf16, i32, i64, u32, u64");
  FERRY_ASSIGN_OR_RETURN(GemmDims d, gemm_dims(ctx, A.shape(), B.shape()));
  if (C) FERRY_TRY(check_c(C->shape(), d.m, d.n));
  const bool ta = ctx.attrs<GemmAttrs>().transA != 0, tb = ctx.attrs<GemmAttrs>().transB != 0;
  const int64_t M = d.m.value(), K = d.k.value(), N = d.n.value();
  const double alpha = ctx.attrs<GemmAttrs>().alpha, beta = ctx.attrs<GemmAttrs>().beta;

  Tensor& Y = ctx.output(0);
  if (!Y.defined() || Y.dims() != std::vector<int64_t>{M, N})
    FERRY_TRY(ctx.allocate_output(0, A.dtype(), {M, N}).status());
  // C read through broadcast strides over (M, N).
  std::vector<int64_t> cstr = C ? broadcast_strides(C->dims(), {M, N}) : std::vector<int64_t>{0, 0};
  auto c_at = [&](int64_t i, int64_t j) { return i * cstr[0] + j * cstr[1]; };

  const bool integral_scales = alpha == std::trunc(alpha) && beta == std::trunc(beta) &&
                               std::fabs(alpha) < 9e15 && std::fabs(beta) < 9e15;
  if (is_integer(A.dtype()) && integral_scales) {
    std::vector<uint64_t> a = maybe_transpose(to_u64(A), A.dim(0), A.dim(1), ta);
    std::vector<uint64_t> b = maybe_transpose(to_u64(B), B.dim(0), B.dim(1), tb);
    std::vector<uint64_t> y(size_t(M * N));
    matmul_rows(a.data(), b.data(), y.data(), M, K, N);
    const uint64_t al = uint64_t(int64_t(alpha)), be = uint64_t(int64_t(beta));
    std::vector<uint64_t> c = C ? to_u64(*C) : std::vector<uint64_t>();
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        uint64_t v = al * y[size_t(i * N + j)];
        if (C && be != 0) v += be * c[size_t(c_at(i, j))];
        y[size_t(i * N + j)] = v;
      }
    store_u64(y, Y);
    return Status::Ok();
  }
  std::vector<double> a = maybe_transpose(to_f64(A), A.dim(0), A.dim(1), ta);
  std::vector<double> b = maybe_transpose(to_f64(B), B.dim(0), B.dim(1), tb);
  std::vector<double> y(size_t(M * N));
  matmul_rows(a.data(), b.data(), y.data(), M, K, N);
  std::vector<double> c = C ? to_f64(*C) : std::vector<double>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double v = alpha * y[size_t(i * N + j)];
      if (C && beta != 0) v += beta * c[size_t(c_at(i, j))];  // BLAS: beta = 0 ignores C (even NaN)
      y[size_t(i * N + j)] = v;
    }
  store_f64(y, Y);
  return Status::Ok();
}

}  // namespace ferry
