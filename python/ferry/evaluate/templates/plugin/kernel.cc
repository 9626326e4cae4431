// @KERNEL@: a ferry kernel plugin for @OP@ (include/ferry/kernel_plugin.h).
// A skeleton: it loads and describes itself, and run() answers "not implemented"
// until you write the kernel. ferry's reference kernel (src/ops/) defines @OP@'s
// semantics; docs/ferry_ops.md lists its inputs and attributes.
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "ferry/kernel_plugin.h"

namespace {

struct State {
  std::string node;  // copy what you need from the node: it is valid during create() only
};

int32_t create(const ferry_kernel_node* node, void** state, char* msg, size_t n) {
  State* s = new (std::nothrow) State();
  if (!s) {
    std::snprintf(msg, n, "out of memory");
    return FERRY_KERNEL_ERROR;
  }
  s->node = node->name;
  *state = s;
  return FERRY_KERNEL_OK;
}

int32_t run(void* state, const ferry_tensor* inputs, int32_t num_inputs, ferry_tensor* outputs, int32_t num_outputs,
            char* msg, size_t n) {
  (void)inputs, (void)num_inputs, (void)outputs, (void)num_outputs;
  std::snprintf(msg, n, "@OP@ is not implemented yet (node '%s')", static_cast<State*>(state)->node.c_str());
  return FERRY_KERNEL_UNSUPPORTED;
}

void destroy(void* state) { delete static_cast<State*>(state); }

const int32_t kDtypes[] = {FERRY_DTYPE_F32, FERRY_DTYPE_UNDEFINED};

const ferry_kernel_v1 kKernel = {
    FERRY_KERNEL_ABI_VERSION, sizeof(ferry_kernel_v1), "@KERNEL@", "@OP@", kDtypes, create, nullptr, run, destroy,
};

}  // namespace

extern "C" FERRY_KERNEL_EXPORT const ferry_kernel_v1* ferry_kernel_entry(uint32_t host_abi_version) {
  return host_abi_version == FERRY_KERNEL_ABI_VERSION ? &kKernel : nullptr;
}
