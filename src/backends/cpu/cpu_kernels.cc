#include "backends/cpu/cpu_kernels.h"

#include <mutex>

#include "ops/registry.h"

namespace ferry {

namespace {

using AcceptsFn = bool (*)(const Node&, const std::vector<const Tensor*>&, const std::vector<std::vector<int64_t>>&);

AcceptsFn cpu_accepts_for(Op op) {
  switch (op) {
    case Op::Max:
    case Op::Min: return cpu_kernel_accepts_two_inputs;
    case Op::Pow: return cpu_kernel_accepts_pow;
    case Op::Gather: return cpu_kernel_accepts_gather;
    case Op::ReduceMean:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ReduceMin: return cpu_kernel_accepts_reduce;
    case Op::Split: return cpu_kernel_accepts_split;
    case Op::Expand: return cpu_kernel_accepts_expand;
    case Op::Pad: return cpu_kernel_accepts_pad;
    case Op::Cast: return cpu_kernel_accepts_cast;
    case Op::Where: return cpu_kernel_accepts_where;
    case Op::PRelu: return cpu_kernel_accepts_prelu;
    case Op::QuantizeLinear:
    case Op::DequantizeLinear: return cpu_kernel_accepts_quantize;
    case Op::Clip: return cpu_kernel_accepts_clip;
    case Op::Equal:
    case Op::Less:
    case Op::LessOrEqual:
    case Op::Greater:
    case Op::GreaterOrEqual: return cpu_kernel_accepts_compare;
    case Op::Resize: return cpu_kernel_accepts_resize;
    default: return nullptr;
  }
}

}  // namespace

bool cpu_kernel_accepts_two_inputs(const Node& n, const std::vector<const Tensor*>&,
                                   const std::vector<std::vector<int64_t>>& dims) {
  return n.num_inputs() == 2 && dims.size() == 2;
}

bool cpu_kernel_accepts_pow(const Node& n, const std::vector<const Tensor*>&, const std::vector<std::vector<int64_t>>&) {
  return n.num_inputs() == 2 && n.input(1) && n.input(1)->dtype() == DType::f32;
}

bool cpu_kernel_accepts_gather(const Node& n, const std::vector<const Tensor*>&,
                               const std::vector<std::vector<int64_t>>&) {
  return n.num_inputs() == 2 && n.input(1) && (n.input(1)->dtype() == DType::i64 || n.input(1)->dtype() == DType::i32);
}

void register_cpu_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
#define FERRY_REGISTER_CPU_KERNEL(op, dtype, isa, fn, in_place) \
  register_kernel({Op::op, DType::dtype, Isa::isa, #fn, &fn, in_place, /*overrides=*/false, cpu_accepts_for(Op::op)});
    FERRY_CPU_KERNELS(FERRY_REGISTER_CPU_KERNEL)
#undef FERRY_REGISTER_CPU_KERNEL
  });
}

}  // namespace ferry
