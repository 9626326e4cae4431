// ops/nonzero.cc — NonZero: the indices of the non-zero elements, as i64[rank, count].
//
// Column j holds the multi-index of the j-th non-zero element in row-major
// order. The count depends on the data, so inference leaves it unknown unless
// the input is a constant, and the kernel allocates its own output. A scalar
// gives [0, count] (rank 0 has no index rows), as the spec's shape says.
#include <cstring>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

/// Whether element i is non-zero; floats compare by value (so -0.0 is zero), others by bytes.
bool nonzero_at(const Tensor& x, int64_t i) {
  if (is_floating(x.dtype())) return x.get_double(i) != 0.0;  // NaN counts as non-zero
  const size_t esz = dtype_size(x.dtype());
  const uint8_t* p = x.raw() + size_t(i) * esz;
  for (size_t b = 0; b < esz; ++b)
    if (p[b]) return true;
  return false;
}

int64_t count_nonzero(const Tensor& x) {
  int64_t n = 0;
  for (int64_t i = 0; i < x.numel(); ++i) n += nonzero_at(x, i);
  return n;
}

}  // namespace

Status infer_NonZero(InferContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  Dim rows = in.rank_known() ? Dim(in.rank()) : Dim();
  Dim count;
  if (const Tensor* x = ctx.input_value(0)) count = count_nonzero(*x);
  ctx.set_output(0, DType::i64, Shape(std::vector<Dim>{rows, count}));
  return Status::Ok();
}

Status ref_NonZero(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank(), count = count_nonzero(x);
  FERRY_ASSIGN_OR_RETURN(Tensor * y, movement_output(ctx, 0, DType::i64, {r, count}));
  int64_t* out = y->data<int64_t>();
  std::vector<int64_t> idx(size_t(r), 0);
  int64_t j = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (nonzero_at(x, i)) {
      for (int64_t d = 0; d < r; ++d) out[d * count + j] = idx[size_t(d)];
      ++j;
    }
    for (int64_t d = r - 1; d >= 0 && ++idx[size_t(d)] == x.dim(d); --d) idx[size_t(d)] = 0;
  }
  return Status::Ok();
}

}  // namespace ferry
