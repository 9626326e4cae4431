// ops/matmul.cc — MatMul with numpy semantics.
//
//   Y[b..., i, j] = sum_k A[b..., i, k] * B[b..., k, j]
//   A 1-D [K] is read as [1, K] and B 1-D [K] as [K, 1]; the added dim is
//   removed from the result. Batch dims (all but the last two) broadcast.
//
// Floats accumulate in double; integers (i32, i64, u32, u64) modulo 2^64, which
// equals the wrap-around result in the element type.
#include "ops/conv_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

bool matmul_dtype(DType t) {
  return is_floating(t) || t == DType::i32 || t == DType::i64 || t == DType::u32 || t == DType::u64;
}

/// A and B as matrices with batch prefixes, after 1-D promotion.
struct MatMulShapes {
  std::vector<Dim> a_batch, b_batch;
  Dim m, ka, kb, n;
  bool a_vector = false, b_vector = false;
};

Result<MatMulShapes> split_shapes(const Shape& a, const Shape& b) {
  if (a.rank() == 0 || b.rank() == 0)
    return invalid_model("MatMul inputs must be at least 1-D, got " + a.to_string() + " and " + b.to_string());
  MatMulShapes s;
  const std::vector<Dim>& ad = a.dims();
  const std::vector<Dim>& bd = b.dims();
  s.a_vector = ad.size() == 1;
  s.b_vector = bd.size() == 1;
  s.m = s.a_vector ? Dim(1) : ad[ad.size() - 2];
  s.ka = ad.back();
  s.kb = s.b_vector ? bd[0] : bd[bd.size() - 2];
  s.n = s.b_vector ? Dim(1) : bd.back();
  if (!s.a_vector) s.a_batch.assign(ad.begin(), ad.end() - 2);
  if (!s.b_vector) s.b_batch.assign(bd.begin(), bd.end() - 2);
  if (s.ka.is_static() && s.kb.is_static() && s.ka.value() != s.kb.value())
    return invalid_model("inner dimensions differ: A " + a.to_string() + " has K = " + s.ka.to_string() + ", B " +
                         b.to_string() + " has K = " + s.kb.to_string());
  return s;
}

Result<Shape> output_shape(const MatMulShapes& s, const Shape& a, const Shape& b) {
  auto batch = broadcast_shapes(Shape(s.a_batch), Shape(s.b_batch));
  if (!batch.ok())
    return invalid_model("batch dims of A " + a.to_string() + " and B " + b.to_string() + " do not broadcast");
  std::vector<Dim> dims = batch->dims();
  if (!s.a_vector) dims.push_back(s.m);
  if (!s.b_vector) dims.push_back(s.n);
  return Shape(std::move(dims));
}

}  // namespace

Status infer_MatMul(InferContext& ctx) {
  const DType t = ctx.input_dtype(0);
  if (!matmul_dtype(t))
    return invalid_model(std::string("A has dtype ") + dtype_name(t) +
                         "; MatMul takes f32, f64, f16, bf16, i32, i64, u32, u64");
  FERRY_TRY(check_same_dtype(t, ctx.input_dtype(1), "B"));
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  if (!a.rank_known() || !b.rank_known()) {
    ctx.set_output(0, t, Shape::unknown_rank());
    return Status::Ok();
  }
  FERRY_ASSIGN_OR_RETURN(MatMulShapes s, split_shapes(a, b));
  FERRY_ASSIGN_OR_RETURN(Shape out, output_shape(s, a, b));
  ctx.set_output(0, t, std::move(out));
  return Status::Ok();
}

Status ref_MatMul(KernelContext& ctx) {
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  if (!matmul_dtype(A.dtype()) || B.dtype() != A.dtype())
    return invalid_model("MatMul inputs must share one of f32, f64, f16, bf16, i32, i64, u32, u64");
  FERRY_ASSIGN_OR_RETURN(MatMulShapes s, split_shapes(A.shape(), B.shape()));
  FERRY_ASSIGN_OR_RETURN(Shape out, output_shape(s, A.shape(), B.shape()));
  const std::vector<int64_t> ydims = out.static_dims();
  Tensor& Y = ctx.output(0);
  if (!Y.defined() || Y.dims() != ydims) FERRY_TRY(ctx.allocate_output(0, A.dtype(), ydims).status());

  const int64_t M = s.m.value(), K = s.ka.value(), N = s.n.value();
  std::vector<int64_t> a_batch = Shape(s.a_batch).static_dims(), b_batch = Shape(s.b_batch).static_dims();
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> batch, broadcast_dims(a_batch, b_batch));
  const std::vector<int64_t> a_str = broadcast_strides(a_batch, batch), b_str = broadcast_strides(b_batch, batch);
  const int64_t nbatch = product(batch);

  // One M x N product per broadcast batch index; a_str/b_str count whole matrices.
  auto run = [&](auto a, auto b, auto& y) {
    for (int64_t i = 0; i < nbatch; ++i) {
      int64_t ao = broadcast_offset(i, batch, a_str) * M * K;
      int64_t bo = broadcast_offset(i, batch, b_str) * K * N;
      matmul_rows(a.data() + ao, b.data() + bo, y.data() + i * M * N, M, K, N);
    }
  };
  if (is_integer(A.dtype())) {
    std::vector<uint64_t> y(size_t(Y.numel()));
    run(to_u64(A), to_u64(B), y);
    store_u64(y, Y);
  } else {
    std::vector<double> y(size_t(Y.numel()));
    run(to_f64(A), to_f64(B), y);
    store_f64(y, Y);
  }
  return Status::Ok();
}

}  // namespace ferry
