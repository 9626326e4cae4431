// backends/cpu/native/gather.cc — Gather along any axis as row copies: for every
// outer index and every index value, one memcpy of the inner block (the trailing
// dims), split across OpenMP threads. Indices (i32 or i64, negative from the back)
// are range-checked first, as the reference kernel does; run() allocates nothing.
#include <cstring>

#include "backends/cpu/cpu_kernels.h"
#include "ops/registry.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

constexpr int64_t kGatherParallelBytes = 1 << 16;

template <class I>
Status gather_rows_native(const uint8_t* src, uint8_t* dst, const I* idx, int64_t nidx, int64_t outer, int64_t dim,
                          size_t inner_bytes) {
  for (int64_t j = 0; j < nidx; ++j)
    if (int64_t(idx[j]) < -dim || int64_t(idx[j]) >= dim)
      return invalid_model("index " + std::to_string(int64_t(idx[j])) + " is out of range for a dim of size " +
                           std::to_string(dim));
  const int64_t rows = outer * nidx;
#pragma omp parallel for schedule(static) if (rows * int64_t(inner_bytes) >= kGatherParallelBytes)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r / nidx, j = r % nidx;
    int64_t i = int64_t(idx[j]);
    if (i < 0) i += dim;
    std::memcpy(dst + size_t(r) * inner_bytes, src + size_t(o * dim + i) * inner_bytes, inner_bytes);
  }
  return Status::Ok();
}

}  // namespace

Status gather__generic(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  Tensor& y = ctx.output(0);
  if (data.rank() == 0) return ctx.error("cannot gather from a scalar");
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<GatherAttrs>().axis, data.rank()));
  const int64_t dim = data.dim(axis);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.dim(d);
  for (int64_t d = axis + 1; d < data.rank(); ++d) inner *= data.dim(d);
  const int64_t nidx = indices.numel();
  if (y.dtype() != data.dtype() || y.numel() != outer * nidx * inner)
    return internal_error("native gather: output of " + y.type_string() + " for " + data.type_string());
  if (y.numel() == 0) return Status::Ok();
  const size_t inner_bytes = size_t(inner) * dtype_size(data.dtype());
  if (indices.dtype() == DType::i64)
    return gather_rows_native(data.raw(), y.raw(), indices.data<int64_t>(), nidx, outer, dim, inner_bytes);
  if (indices.dtype() == DType::i32)
    return gather_rows_native(data.raw(), y.raw(), indices.data<int32_t>(), nidx, outer, dim, inner_bytes);
  return op_reference_kernel(Op::Gather)(ctx);
}

}  // namespace ferry
