// backends/cpu/native/where_expand.cc — Where(cond, X, Y) and Expand(X, shape) with numpy
// broadcasting (broadcast_rows.h): element copies of any dtype, by element width,
// rows split across OpenMP threads. The output's dims are the planned ones.
#include <cstring>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/broadcast_rows.h"
#include "ops/registry.h"

namespace ferry {
namespace {

constexpr int64_t kSelectParallelMin = 1 << 15;

template <class T>
void where_rows_native(const BroadcastRows& b, const uint8_t* c, const T* x, const T* y, T* out) {
  const int64_t rows = b.rows(), inner = b.inner();
  const int64_t sc = b.inner_stride(0), sx = b.inner_stride(1), sy = b.inner_stride(2);
#pragma omp parallel for schedule(static) if (rows * inner >= kSelectParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* cr = c + b.offset(0, r);
    const T* xr = x + b.offset(1, r);
    const T* yr = y + b.offset(2, r);
    T* o = out + r * inner;
    if (sc == 1 && sx == 1 && sy == 1) {
      for (int64_t j = 0; j < inner; ++j) o[j] = cr[j] ? xr[j] : yr[j];
    } else {
      for (int64_t j = 0; j < inner; ++j) o[j] = cr[j * sc] ? xr[j * sx] : yr[j * sy];
    }
  }
}

template <class T>
void expand_rows_native(const BroadcastRows& b, const T* x, T* out) {
  const int64_t rows = b.rows(), inner = b.inner(), sx = b.inner_stride(0);
#pragma omp parallel for schedule(static) if (rows * inner >= kSelectParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + b.offset(0, r);
    T* o = out + r * inner;
    if (sx == 1) {
      std::memcpy(o, xr, size_t(inner) * sizeof(T));
    } else {
      const T v = xr[0];
      for (int64_t j = 0; j < inner; ++j) o[j] = v;
    }
  }
}

/// Calls f(T{}) with the unsigned type of width `bytes`; false for other widths.
template <class F>
bool by_width(size_t bytes, F&& f) {
  switch (bytes) {
    case 1: f(uint8_t{}); return true;
    case 2: f(uint16_t{}); return true;
    case 4: f(uint32_t{}); return true;
    case 8: f(uint64_t{}); return true;
    default: return false;
  }
}

}  // namespace

bool cpu_kernel_accepts_where(const Node& n, const std::vector<const Tensor*>&,
                              const std::vector<std::vector<int64_t>>& dims) {
  if (n.num_inputs() != 3 || dims.size() != 3 || !n.input(0) || !n.input(1)) return false;
  if (n.input(0)->dtype() != DType::boolean) return false;
  const size_t w = dtype_size(n.input(1)->dtype());
  if (w != 1 && w != 2 && w != 4 && w != 8) return false;
  for (const auto& d : dims)
    if (d.size() > size_t(kBroadcastMaxRank)) return false;
  return true;
}

bool cpu_kernel_accepts_expand(const Node& n, const std::vector<const Tensor*>&,
                               const std::vector<std::vector<int64_t>>& dims) {
  if (dims.empty() || !n.input(0)) return false;
  const size_t w = dtype_size(n.input(0)->dtype());
  return (w == 1 || w == 2 || w == 4 || w == 8) && dims[0].size() <= size_t(kBroadcastMaxRank);
}

Status where__generic(KernelContext& ctx) {
  const Tensor &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  Tensor& out = ctx.output(0);
  if (out.numel() == 0) return Status::Ok();
  BroadcastRows b;
  if (c.dtype() != DType::boolean || x.dtype() != y.dtype() || out.dtype() != x.dtype() ||
      !plan_broadcast_rows({&c.dims(), &x.dims(), &y.dims()}, out.dims(), &b))
    return op_reference_kernel(Op::Where)(ctx);
  const bool done = by_width(dtype_size(x.dtype()), [&](auto t) {
    using T = decltype(t);
    where_rows_native<T>(b, reinterpret_cast<const uint8_t*>(c.raw()), reinterpret_cast<const T*>(x.raw()),
                         reinterpret_cast<const T*>(y.raw()), reinterpret_cast<T*>(out.raw()));
  });
  return done ? Status::Ok() : op_reference_kernel(Op::Where)(ctx);
}

Status expand__generic(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.numel() == 0) return Status::Ok();
  BroadcastRows b;
  if (out.dtype() != x.dtype() || !plan_broadcast_rows({&x.dims()}, out.dims(), &b))
    return op_reference_kernel(Op::Expand)(ctx);
  const bool done = by_width(dtype_size(x.dtype()), [&](auto t) {
    using T = decltype(t);
    expand_rows_native<T>(b, reinterpret_cast<const T*>(x.raw()), reinterpret_cast<T*>(out.raw()));
  });
  return done ? Status::Ok() : op_reference_kernel(Op::Expand)(ctx);
}

}  // namespace ferry
