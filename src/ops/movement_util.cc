#include "ops/movement_util.h"

#include <cstring>

namespace ferry {

Result<Tensor*> movement_output(KernelContext& ctx, size_t i, DType dtype, const std::vector<int64_t>& dims) {
  Tensor& t = ctx.output(i);
  if (t.defined() && t.dtype() == dtype && t.dims() == dims) return &t;
  return ctx.allocate_output(i, dtype, dims);
}

void strided_copy(const uint8_t* src, uint8_t* dst, size_t elem_size, const std::vector<int64_t>& dims,
                  const std::vector<int64_t>& strides, int64_t offset) {
  auto n = checked_numel(dims);
  if (!n || *n == 0) return;
  if (dims.empty()) {
    std::memcpy(dst, src + offset * int64_t(elem_size), elem_size);
    return;
  }
  // Walk the output in order; the innermost axis is a contiguous run when its stride is 1.
  const size_t r = dims.size();
  const int64_t inner = dims[r - 1], inner_stride = strides[r - 1];
  const int64_t esz = int64_t(elem_size);
  std::vector<int64_t> idx(r, 0);
  int64_t src_off = offset;
  for (int64_t o = 0; o < *n; o += inner) {
    const uint8_t* s = src + src_off * esz;
    uint8_t* d = dst + o * esz;
    if (inner_stride == 1) {
      std::memcpy(d, s, size_t(inner) * elem_size);
    } else {
      for (int64_t k = 0; k < inner; ++k) std::memcpy(d + k * esz, s + k * inner_stride * esz, elem_size);
    }
    // Advance the outer multi-index (odometer), keeping src_off in step.
    for (size_t ax = r - 1; ax-- > 0;) {
      src_off += strides[ax];
      if (++idx[ax] < dims[ax]) break;
      src_off -= strides[ax] * dims[ax];
      idx[ax] = 0;
    }
  }
}

Status check_integer_input(const InferContext& ctx, size_t i, const char* what) {
  if (ctx.has_input(i) && !is_integer(ctx.input_dtype(i)))
    return ctx.error(std::string(what) + " must be an integer tensor, got " + dtype_name(ctx.input_dtype(i)));
  return Status::Ok();
}

std::optional<int64_t> static_length(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return std::nullopt;
  const Shape& s = ctx.input_shape(i);
  if (s.rank_known() && s.rank() == 0) return 1;
  if (s.rank_known() && s.rank() == 1 && s[0].is_static()) return s[0].value();
  return std::nullopt;
}

std::string ints_to_string(const std::vector<int64_t>& v) { return "[" + dims_to_string(v, ',') + "]"; }

}  // namespace ferry
