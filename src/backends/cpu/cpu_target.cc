#include "backends/cpu/cpu_target.h"

#include <algorithm>

#include "backends/cpu/cpu_epilogue.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_step_table.h"
#include "backends/cpu/native/activation.h"

namespace ferry {
namespace {

/// A fusion's product runs fast: a oneDNN / own-kernel step, or a kernel-table row.
bool runs_fast(Op op, Isa isa) {
  if (op == Op::Gelu) return native_activation(Activation::kGelu, isa) != nullptr;  // steps need the ISA's kernel
  if (op == Op::Swish) return native_activation(Activation::kSiLU, isa) != nullptr;
  return step_row(op) != nullptr || select_kernel(op, DType::f32, isa) != nullptr;
}

}  // namespace

Target cpu_target(Isa isa) {
  isa = std::min(isa, host_isa());
  register_cpu_kernels();
  Target t;
  t.name = "cpu";
  t.isa = isa_name(isa);
  // The ops a fusion forms (reference_target() lists them all); the CPU keeps those it runs fast.
  for (Op op : reference_target().ops)
    if (runs_fast(op, isa)) t.ops.push_back(op);
  for (Activation a : all_activations())
    if (cpu_applies(a, isa)) {
      t.conv_epilogues.push_back(a);
      t.matmul_epilogues.push_back(a);
    }
  t.dtypes = {DType::f32};
  t.layout = "blocked";
  return t;
}

}  // namespace ferry
