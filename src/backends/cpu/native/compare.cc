// backends/cpu/native/compare.cc — Equal, Less, LessOrEqual, Greater, GreaterOrEqual with
// numpy broadcasting (broadcast_rows.h), compared in the inputs' own type (f32, f64 and
// the integers; NaN compares false, except that nothing is equal to it), written as
// bool 0 / 1. Rows split across OpenMP threads.
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/broadcast_rows.h"
#include "ops/registry.h"

namespace ferry {
namespace {

constexpr int64_t kCompareParallelMin = 1 << 15;

template <class T, class Cmp>
void compare_rows_native(const BroadcastRows& b, const T* x, const T* y, uint8_t* out, Cmp cmp) {
  const int64_t rows = b.rows(), inner = b.inner(), sx = b.inner_stride(0), sy = b.inner_stride(1);
#pragma omp parallel for schedule(static) if (rows * inner >= kCompareParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + b.offset(0, r);
    const T* yr = y + b.offset(1, r);
    uint8_t* o = out + r * inner;
    if (sx == 1 && sy == 1) {
      for (int64_t j = 0; j < inner; ++j) o[j] = cmp(xr[j], yr[j]);
    } else {
      for (int64_t j = 0; j < inner; ++j) o[j] = cmp(xr[j * sx], yr[j * sy]);
    }
  }
}

template <class T>
bool compare_typed_native(Op op, const BroadcastRows& b, const void* x, const void* y, uint8_t* out) {
  const T* px = static_cast<const T*>(x);
  const T* py = static_cast<const T*>(y);
  switch (op) {
    case Op::Equal: compare_rows_native(b, px, py, out, [](T a, T c) { return a == c; }); return true;
    case Op::Less: compare_rows_native(b, px, py, out, [](T a, T c) { return a < c; }); return true;
    case Op::LessOrEqual: compare_rows_native(b, px, py, out, [](T a, T c) { return a <= c; }); return true;
    case Op::Greater: compare_rows_native(b, px, py, out, [](T a, T c) { return a > c; }); return true;
    case Op::GreaterOrEqual: compare_rows_native(b, px, py, out, [](T a, T c) { return a >= c; }); return true;
    default: return false;
  }
}

bool compare_dispatch_native(DType t, Op op, const BroadcastRows& b, const void* x, const void* y, uint8_t* out) {
  switch (t) {
    case DType::f32: return compare_typed_native<float>(op, b, x, y, out);
    case DType::f64: return compare_typed_native<double>(op, b, x, y, out);
    case DType::i64: return compare_typed_native<int64_t>(op, b, x, y, out);
    case DType::i32: return compare_typed_native<int32_t>(op, b, x, y, out);
    case DType::i16: return compare_typed_native<int16_t>(op, b, x, y, out);
    case DType::i8: return compare_typed_native<int8_t>(op, b, x, y, out);
    case DType::u8: return compare_typed_native<uint8_t>(op, b, x, y, out);
    case DType::u16: return compare_typed_native<uint16_t>(op, b, x, y, out);
    case DType::u32: return compare_typed_native<uint32_t>(op, b, x, y, out);
    case DType::u64: return compare_typed_native<uint64_t>(op, b, x, y, out);
    case DType::boolean: return op == Op::Equal && compare_typed_native<uint8_t>(op, b, x, y, out);
    default: return false;
  }
}

}  // namespace

bool cpu_kernel_accepts_compare(const Node& n, const std::vector<const Tensor*>&,
                                const std::vector<std::vector<int64_t>>& dims) {
  if (n.num_inputs() != 2 || dims.size() != 2 || !n.input(0) || !n.input(1)) return false;
  const DType t = n.input(0)->dtype();
  if (t != n.input(1)->dtype() || t == DType::f16 || t == DType::bf16) return false;
  if (t == DType::boolean && n.op() != Op::Equal) return false;
  for (const auto& d : dims)
    if (d.size() > size_t(kBroadcastMaxRank)) return false;
  return true;
}

Status compare__generic(KernelContext& ctx) {
  const Tensor &x = ctx.input(0), &y = ctx.input(1);
  Tensor& out = ctx.output(0);
  if (out.numel() == 0) return Status::Ok();
  BroadcastRows b;
  const Op op = ctx.node().op();
  if (x.dtype() != y.dtype() || out.dtype() != DType::boolean ||
      !plan_broadcast_rows({&x.dims(), &y.dims()}, out.dims(), &b) ||
      !compare_dispatch_native(x.dtype(), op, b, x.raw(), y.raw(), reinterpret_cast<uint8_t*>(out.raw())))
    return op_reference_kernel(op)(ctx);
  return Status::Ok();
}

}  // namespace ferry
