#include "ops/registry.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace ferry {
namespace {

struct OpFns {
  InferFn infer;
  KernelFn ref;
};

constexpr OpFns kFns[] = {
#define FERRY_OP(name, ...) {&infer_##name, &ref_##name},
#include "ir/ops.def"
#undef FERRY_OP
};

std::vector<KernelEntry>& kernel_table() {
  static std::vector<KernelEntry> t;
  return t;
}

}  // namespace

InferFn op_infer_fn(Op op) { return kFns[size_t(op)].infer; }
KernelFn op_reference_kernel(Op op) { return kFns[size_t(op)].ref; }

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::reference: return "reference";
    case Isa::generic: return "generic";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::amx: return "amx";
  }
  return "?";
}

namespace {

Isa detected_isa() {
  static const Isa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
      // AMX: CPUID.(7,0):EDX bit 24 (AMX-TILE) and bit 22 (AMX-BF16).
      unsigned a, b, c, d;
      __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
      if ((d >> 24 & 1) && (d >> 22 & 1)) return Isa::amx;
      return Isa::avx512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
    return Isa::generic;
  }();
  return isa;
}

/// FERRY_CPU_MAX_ISA=generic|avx2|avx512|amx caps the ISA (like oneDNN's ONEDNN_MAX_CPU_ISA), so the
/// lower rows of the kernel table can be run and compared on a bigger host.
Isa isa_cap() {
  static const Isa cap = [] {
    const char* e = std::getenv("FERRY_CPU_MAX_ISA");
    if (!e) return Isa::amx;
    for (Isa i : {Isa::reference, Isa::generic, Isa::avx2, Isa::avx512, Isa::amx})
      if (std::strcmp(e, isa_name(i)) == 0) return i;
    return Isa::amx;
  }();
  return cap;
}

}  // namespace

Isa host_isa() { return std::min(detected_isa(), isa_cap()); }

void register_kernel(const KernelEntry& entry) { kernel_table().push_back(entry); }

const KernelEntry* select_kernel(Op op, DType dtype, Isa isa) {
  const KernelEntry* best = nullptr;
  for (const KernelEntry& e : kernel_table())
    if (e.op == op && e.dtype == dtype && e.isa <= isa && (!best || e.isa > best->isa)) best = &e;
  return best;
}

const std::vector<KernelEntry>& registered_kernels() { return kernel_table(); }

Status infer_node(const Node& node, std::vector<InputInfo> inputs, std::vector<OutputInfo>* outputs) {
  InferContext ctx(node, std::move(inputs));
  Status st = op_infer_fn(node.op())(ctx);
  if (!st.ok()) return std::move(st).with_context("node " + node.describe());
  *outputs = ctx.outputs();
  return Status::Ok();
}

}  // namespace ferry
