// ops/registry.h — dispatch from Op to its shape inference and kernels.
//
// Reference kernels come from the op table. Backends register faster kernels
// per (op, dtype, isa); select_kernel() picks the best one the CPU supports and
// falls back to the reference kernel.
#pragma once

#include <string>
#include <vector>

#include "ops/op_context.h"

namespace ferry {

InferFn op_infer_fn(Op op);
KernelFn op_reference_kernel(Op op);

/// Instruction sets, in increasing order of preference.
enum class Isa : uint8_t { reference = 0, generic, avx2, avx512, amx };
const char* isa_name(Isa isa);
/// The best ISA this CPU supports.
Isa host_isa();

struct KernelEntry {
  Op op;
  DType dtype;   ///< dtype of the first input the kernel accepts
  Isa isa;
  const char* name;  ///< e.g. "add_f32__avx512"
  KernelFn fn;
  bool in_place = false;  ///< output 0 may alias input 0 (elementwise)
  /// Wins over every other way of running its (op, dtype), whatever the host ISA:
  /// the CPU backend's step table (oneDNN primitives, own layout-agnostic kernels)
  /// and every ISA row of the kernel table. A kernel plugin loaded by `ferry worker`
  /// (src/evaluate/kernel_plugin.h).
  bool overrides = false;
  /// At plan time: whether the kernel computes this node itself for inputs of these dims
  /// (`known`: the inputs' data where constant, else null); null: always. A node it
  /// declines runs on the reference kernel and is reported as such.
  bool (*accepts)(const Node& node, const std::vector<const Tensor*>& known,
                  const std::vector<std::vector<int64_t>>& dims) = nullptr;
};

/// Registers an optimized kernel (called from backend tables at start-up).
void register_kernel(const KernelEntry& entry);
/// Removes every entry named `name` (a kernel plugin's, when it is unloaded);
/// the number removed. Sessions compiled before keep their steps.
size_t unregister_kernel(const std::string& name);
/// The last registered override of (op, dtype); null if none.
const KernelEntry* kernel_override(Op op, DType dtype);
/// kernel_override(op, dtype), else the best registered kernel for (op, dtype)
/// on `isa` or below; null if none.
const KernelEntry* select_kernel(Op op, DType dtype, Isa isa);
const std::vector<KernelEntry>& registered_kernels();

/// Runs infer_<op> for `node` with the given input facts; the error carries node context.
Status infer_node(const Node& node, std::vector<InputInfo> inputs, std::vector<OutputInfo>* outputs);

}  // namespace ferry
