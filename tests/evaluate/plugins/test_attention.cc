// Kernel plugins for tests/evaluate: single-head attention (3-D [B, S, D]) that is
// correct, or misbehaves in one way chosen at compile time with -DMODE=<name>:
//   ok            correct
//   slow          correct, and sleeps 250 ms per call
//   wrong_values  correct + 0.5 everywhere
//   wrong_shape   infer() reports the last dim halved
//   nan           writes NaN into the first element
//   crash         dereferences null in run()
//   hang          never returns from run()
//   bad_status    returns FERRY_KERNEL_ERROR with a message
//   abi2          claims ABI version 2
//   wrong_op      claims to implement Conv
// Built by tests/evaluate/conftest.py with the system C++ compiler.
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "ferry/kernel_plugin.h"

#define MODE_IS(name) (std::strcmp(FERRY_TEST_MODE, #name) == 0)
#define STR2(x) #x
#define STR(x) STR2(x)
#ifndef MODE
#define MODE ok
#endif
#define FERRY_TEST_MODE STR(MODE)

namespace {

int32_t create(const ferry_kernel_node*, void** state, char*, size_t) {
  *state = nullptr;
  return FERRY_KERNEL_OK;
}

int32_t infer(void*, const ferry_tensor* in, int32_t, ferry_tensor_shape* out, int32_t num_outputs, char*, size_t) {
  for (int32_t o = 0; o < num_outputs; ++o) {
    out[o].dtype = FERRY_DTYPE_F32;
    out[o].rank = in[0].rank;
    for (int32_t i = 0; i < in[0].rank; ++i) out[o].dims[i] = in[0].dims[i];
    if (MODE_IS(wrong_shape)) out[o].dims[in[0].rank - 1] /= 2;
  }
  return FERRY_KERNEL_OK;
}

int32_t run(void*, const ferry_tensor* in, int32_t, ferry_tensor* out, int32_t, char* msg, size_t n) {
  if (MODE_IS(bad_status)) {
    std::snprintf(msg, n, "deliberate failure from the bad_status test plugin");
    return FERRY_KERNEL_ERROR;
  }
  if (MODE_IS(crash)) {
    volatile int* p = nullptr;
    *p = 1;
  }
  if (MODE_IS(hang))
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  if (MODE_IS(slow)) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  if (in[0].rank != 3) {
    std::snprintf(msg, n, "test plugin: 3-D single-head attention only");
    return FERRY_KERNEL_UNSUPPORTED;
  }
  const int64_t B = in[0].dims[0], S = in[0].dims[1], D = in[0].dims[2], T = in[1].dims[1];
  const float *q = static_cast<const float*>(in[0].data), *k = static_cast<const float*>(in[1].data),
              *v = static_cast<const float*>(in[2].data);
  float* y = static_cast<float*>(out[0].data);
  std::vector<double> p(static_cast<size_t>(T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < S; ++i) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < T; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < D; ++e) dot += double(q[(b * S + i) * D + e]) * k[(b * T + j) * D + e];
        p[size_t(j)] = dot / std::sqrt(double(D));
        mx = std::max(mx, p[size_t(j)]);
      }
      for (double& x : p) sum += (x = std::exp(x - mx));
      for (int64_t e = 0; e < D; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < T; ++j) acc += p[size_t(j)] * v[(b * T + j) * D + e];
        y[(b * S + i) * D + e] = float(acc / sum) + (MODE_IS(wrong_values) ? 0.5f : 0.0f);
      }
    }
  if (MODE_IS(nan)) y[0] = NAN;
  return FERRY_KERNEL_OK;
}

void destroy(void*) {}

const int32_t kDtypes[] = {FERRY_DTYPE_F32, FERRY_DTYPE_UNDEFINED};
const ferry_kernel_v1 kKernel = {
    MODE_IS(abi2) ? 2u : FERRY_KERNEL_ABI_VERSION,
    sizeof(ferry_kernel_v1),
    "test_attention_" FERRY_TEST_MODE,
    MODE_IS(wrong_op) ? "Conv" : "Attention",
    kDtypes,
    create,
    infer,
    run,
    destroy,
};

}  // namespace

extern "C" FERRY_KERNEL_EXPORT const ferry_kernel_v1* ferry_kernel_entry(uint32_t) { return &kKernel; }
