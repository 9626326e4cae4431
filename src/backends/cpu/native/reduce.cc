// backends/cpu/native/reduce.cc — ReduceMean, ReduceSum, ReduceMax and ReduceMin of f32
// over one contiguous range of axes (GAP-like [N,C,H,W] over {2,3}, the last axis, every
// axis): the input is [outer, R, inner]; each output sums its R inputs in double (as the
// reference kernel does) and is rounded once, or takes their max / min (a NaN among
// them gives NaN, as in the reference). Other axis sets, empty reductions and
// noop_with_empty_axes run on the reference kernel. run() allocates nothing.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/cpu_kernels.h"
#include "ops/registry.h"

namespace ferry {
namespace {

constexpr int kReduceMaxRank = 16;
constexpr int64_t kReduceInnerChunk = 256;
constexpr int64_t kReduceParallelMin = 1 << 15;

enum class ReduceKindNative { kSum, kMean, kMax, kMin };

/// max / min of rows[r * stride + j] over r < R for j < len into dst (NaN wins).
void reduce_extreme_native(const float* src, int64_t R, int64_t stride, int64_t len, bool is_max, float* dst) {
  constexpr int64_t kChunk = 256;
  float acc[kChunk];
  bool nan[kChunk];
  std::fill(acc, acc + len, is_max ? -INFINITY : INFINITY);
  std::fill(nan, nan + len, false);
  for (int64_t r = 0; r < R; ++r) {
    const float* row = src + r * stride;
    if (is_max) {
      for (int64_t j = 0; j < len; ++j) acc[j] = row[j] > acc[j] ? row[j] : acc[j], nan[j] |= row[j] != row[j];
    } else {
      for (int64_t j = 0; j < len; ++j) acc[j] = row[j] < acc[j] ? row[j] : acc[j], nan[j] |= row[j] != row[j];
    }
  }
  for (int64_t j = 0; j < len; ++j) dst[j] = nan[j] ? std::numeric_limits<float>::quiet_NaN() : acc[j];
}

Status reduce_native(KernelContext& ctx, ReduceKindNative kind) {
  const bool mean = kind == ReduceKindNative::kMean;
  const bool extreme = kind == ReduceKindNative::kMax || kind == ReduceKindNative::kMin;
  const bool is_max = kind == ReduceKindNative::kMax;
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const Op op = ctx.node().op();
  const int rank = int(x.rank());
  if (x.dtype() != DType::f32 || y.dtype() != DType::f32 || rank > kReduceMaxRank || x.numel() == 0)
    return op_reference_kernel(op)(ctx);
  bool red[kReduceMaxRank] = {};
  const int64_t naxes = ctx.has_input(1) ? ctx.input(1).numel() : 0;
  if (naxes == 0) {
    if (ctx.attrs<ReduceAttrs>().noop_with_empty_axes != 0) return op_reference_kernel(op)(ctx);
    std::fill(red, red + rank, true);
  } else {
    if (ctx.input(1).dtype() != DType::i64) return op_reference_kernel(op)(ctx);
    const int64_t* ax = ctx.input(1).data<int64_t>();
    for (int64_t i = 0; i < naxes; ++i) {
      const int64_t a = ax[i] < 0 ? ax[i] + rank : ax[i];
      if (a < 0 || a >= rank) return op_reference_kernel(op)(ctx);  // the reference's error
      red[a] = true;
    }
  }
  // The reduced axes of size > 1 must be one run [a0, a1] with no kept axis of size > 1 inside.
  int a0 = -1, a1 = -1;
  for (int d = 0; d < rank; ++d)
    if (red[d] && x.dim(d) > 1) {
      if (a0 < 0) a0 = d;
      a1 = d;
    }
  int64_t outer = 1, R = 1, inner = 1;
  if (a0 >= 0) {
    for (int d = a0; d <= a1; ++d)
      if (!red[d] && x.dim(d) > 1) return op_reference_kernel(op)(ctx);
    for (int d = 0; d < a0; ++d) outer *= x.dim(d);
    for (int d = a0; d <= a1; ++d) R *= x.dim(d);
    for (int d = a1 + 1; d < rank; ++d) inner *= x.dim(d);
  } else {
    outer = x.numel();
  }
  if (y.numel() != outer * inner) return internal_error("native reduce: output size");
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const double div = mean ? double(R) : 1.0;
  if (extreme && inner == 1) {
#pragma omp parallel for schedule(static) if (outer * R >= kReduceParallelMin)
    for (int64_t o = 0; o < outer; ++o) {
      const float* row = px + o * R;
      float acc = is_max ? -INFINITY : INFINITY;
      bool nan = false;
      for (int64_t r = 0; r < R; ++r) {
        acc = is_max ? (row[r] > acc ? row[r] : acc) : (row[r] < acc ? row[r] : acc);
        nan |= row[r] != row[r];
      }
      py[o] = nan ? std::numeric_limits<float>::quiet_NaN() : acc;
    }
    return Status::Ok();
  }
  if (inner == 1) {
#pragma omp parallel for schedule(static) if (outer * R >= kReduceParallelMin)
    for (int64_t o = 0; o < outer; ++o) {
      const float* row = px + o * R;
      double acc = 0;
#pragma omp simd reduction(+ : acc)
      for (int64_t r = 0; r < R; ++r) acc += double(row[r]);
      py[o] = float(acc / div);
    }
    return Status::Ok();
  }
  const int64_t chunks = (inner + kReduceInnerChunk - 1) / kReduceInnerChunk;
#pragma omp parallel for schedule(static) if (outer * R * inner >= kReduceParallelMin)
  for (int64_t t = 0; t < outer * chunks; ++t) {
    const int64_t o = t / chunks, j0 = (t % chunks) * kReduceInnerChunk;
    const int64_t len = std::min(kReduceInnerChunk, inner - j0);
    if (extreme) {
      reduce_extreme_native(px + o * R * inner + j0, R, inner, len, is_max, py + o * inner + j0);
      continue;
    }
    double acc[kReduceInnerChunk];
    std::fill(acc, acc + len, 0.0);
    for (int64_t r = 0; r < R; ++r) {
      const float* src = px + (o * R + r) * inner + j0;
#pragma omp simd
      for (int64_t j = 0; j < len; ++j) acc[j] += double(src[j]);
    }
    float* dst = py + o * inner + j0;
    for (int64_t j = 0; j < len; ++j) dst[j] = float(acc[j] / div);
  }
  return Status::Ok();
}

}  // namespace

bool cpu_kernel_accepts_reduce(const Node& n, const std::vector<const Tensor*>& known,
                               const std::vector<std::vector<int64_t>>& dims) {
  if (dims.empty() || dims[0].size() > size_t(kReduceMaxRank)) return false;
  const std::vector<int64_t>& d = dims[0];
  const int rank = int(d.size());
  int64_t count = 1;
  for (int64_t v : d) count *= v;
  if (count == 0) return false;
  bool red[kReduceMaxRank] = {};
  const bool has_axes = n.num_inputs() > 1 && n.input(1);
  if (has_axes && (known.size() < 2 || !known[1] || known[1]->dtype() != DType::i64)) return false;
  const int64_t naxes = has_axes ? known[1]->numel() : 0;
  if (naxes == 0) {
    if (n.attrs<ReduceAttrs>().noop_with_empty_axes != 0) return false;
    std::fill(red, red + rank, true);
  }
  for (int64_t i = 0; i < naxes; ++i) {
    int64_t a = known[1]->data<int64_t>()[i];
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return false;
    red[a] = true;
  }
  int a0 = -1, a1 = -1;
  for (int k = 0; k < rank; ++k)
    if (red[k] && d[size_t(k)] > 1) {
      if (a0 < 0) a0 = k;
      a1 = k;
    }
  for (int k = std::max(a0, 0); k <= a1; ++k)
    if (!red[k] && d[size_t(k)] > 1) return false;
  return true;
}

Status reduce_mean_f32__generic(KernelContext& ctx) { return reduce_native(ctx, ReduceKindNative::kMean); }
Status reduce_sum_f32__generic(KernelContext& ctx) { return reduce_native(ctx, ReduceKindNative::kSum); }
Status reduce_max_f32__generic(KernelContext& ctx) { return reduce_native(ctx, ReduceKindNative::kMax); }
Status reduce_min_f32__generic(KernelContext& ctx) { return reduce_native(ctx, ReduceKindNative::kMin); }

}  // namespace ferry
