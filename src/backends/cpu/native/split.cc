// backends/cpu/native/split.cc — Split of any dtype along any axis as row copies: output i
// takes, for every outer index, the run of its planned size along the axis times the
// inner dims; the (output, outer) copies are split across OpenMP threads.
#include <cstring>

#include "backends/cpu/cpu_kernels.h"
#include "ops/registry.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

constexpr int64_t kSplitParallelBytes = 1 << 16;
constexpr size_t kSplitMaxOutputs = 64;

}  // namespace

bool cpu_kernel_accepts_split(const Node& n, const std::vector<const Tensor*>&,
                              const std::vector<std::vector<int64_t>>& dims) {
  return !dims.empty() && !dims[0].empty() && n.num_outputs() <= kSplitMaxOutputs;
}

Status split__generic(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const size_t n = ctx.num_outputs();
  if (x.rank() == 0 || n > kSplitMaxOutputs) return op_reference_kernel(Op::Split)(ctx);
  FERRY_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attrs<SplitAttrs>().axis, x.rank()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const size_t esz = dtype_size(x.dtype());
  int64_t col[kSplitMaxOutputs + 1] = {0};
  for (size_t i = 0; i < n; ++i) {
    const Tensor& y = ctx.output(i);
    if (y.dtype() != x.dtype() || y.rank() != x.rank()) return internal_error("native split: planned output type");
    col[i + 1] = col[i] + y.dim(axis) * inner;
  }
  const int64_t in_row = x.dim(axis) * inner;
  if (col[n] != in_row) return internal_error("native split: planned sizes do not cover the axis");
  const int64_t tasks = int64_t(n) * outer;
#pragma omp parallel for schedule(static) if (x.numel() * int64_t(esz) >= kSplitParallelBytes)
  for (int64_t t = 0; t < tasks; ++t) {
    const size_t i = size_t(t / outer);
    const int64_t o = t % outer, run = col[i + 1] - col[i];
    if (run == 0) continue;
    std::memcpy(ctx.output(i).raw() + size_t(o * run) * esz, x.raw() + size_t(o * in_row + col[i]) * esz,
                size_t(run) * esz);
  }
  return Status::Ok();
}

}  // namespace ferry
