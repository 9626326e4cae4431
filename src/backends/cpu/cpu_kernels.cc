#include "backends/cpu/cpu_kernels.h"

#include <mutex>

#include "ops/registry.h"

namespace ferry {

void register_cpu_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
#define FERRY_REGISTER_CPU_KERNEL(op, dtype, isa, fn, in_place) \
  register_kernel({Op::op, DType::dtype, Isa::isa, #fn, &fn, in_place});
    FERRY_CPU_KERNELS(FERRY_REGISTER_CPU_KERNEL)
#undef FERRY_REGISTER_CPU_KERNEL
  });
}

}  // namespace ferry
