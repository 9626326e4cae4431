// The plugin's own unit test (run by `ctest`, and by `ferry evaluate` as the
// "tests" quality check). It calls the ABI exactly as ferry does.
#include <cstdio>
#include <cstring>

#include "ferry/kernel_plugin.h"

extern "C" const ferry_kernel_v1* ferry_kernel_entry(uint32_t host_abi_version);

#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                      \
    }                                                                \
  } while (0)

int main() {
  const ferry_kernel_v1* k = ferry_kernel_entry(FERRY_KERNEL_ABI_VERSION);
  CHECK(k != nullptr);
  CHECK(k->abi_version == FERRY_KERNEL_ABI_VERSION);
  CHECK(k->struct_size == sizeof(ferry_kernel_v1));
  CHECK(std::strcmp(k->op, "@OP@") == 0);
  CHECK(k->dtypes[0] != FERRY_DTYPE_UNDEFINED);
  CHECK(k->create && k->run && k->destroy);
  CHECK(ferry_kernel_entry(FERRY_KERNEL_ABI_VERSION + 1) == nullptr);

  ferry_kernel_node node = {"test_node", "@OP@", 1, 1, nullptr, 0};
  void* state = nullptr;
  char msg[256] = {};
  CHECK(k->create(&node, &state, msg, sizeof msg) == FERRY_KERNEL_OK);
  // TODO: run the kernel on a small input and compare with a reference computed here.
  k->destroy(state);
  std::printf("kernel_test: ok\n");
  return 0;
}
