// backends/cpu/native/copy.cc — Reshape, Flatten, Squeeze, Unsqueeze and Identity where the
// planner cannot make them a view (the input is a graph input or a constant, not an arena
// value): one memcpy of the data, any dtype.
#include <cstring>

#include "backends/cpu/cpu_kernels.h"
#include "ops/registry.h"

namespace ferry {

Status copy__generic(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (y.dtype() != x.dtype() || y.numel() != x.numel()) return op_reference_kernel(ctx.node().op())(ctx);
  if (y.raw() != x.raw() && x.nbytes() > 0) std::memcpy(y.raw(), x.raw(), x.nbytes());
  return Status::Ok();
}

}  // namespace ferry
