// The plugin's own unit test (ctest; `ferry evaluate` runs it as the "tests" check):
// the kernel through the ABI, as ferry calls it, against attention computed here
// in double precision on small shapes, 3-D and 4-D, plain and causal.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "ferry/kernel_plugin.h"

extern "C" const ferry_kernel_v1* ferry_kernel_entry(uint32_t host_abi_version);

namespace {

int failures = 0;
#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

/// Y[b][s][e] of one head (single-head 3-D layout [B, S, D]).
std::vector<double> reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                              int B, int S, int D, bool causal) {
  std::vector<double> y(size_t(B) * S * D);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < S; ++i) {
      std::vector<double> p(size_t(S), 0.0);
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j < S; ++j) {
        if (causal && j > i) continue;
        double dot = 0;
        for (int e = 0; e < D; ++e) dot += double(q[(size_t(b) * S + i) * D + e]) * k[(size_t(b) * S + j) * D + e];
        p[size_t(j)] = dot / std::sqrt(double(D));
        mx = std::max(mx, p[size_t(j)]);
      }
      for (int j = 0; j < S; ++j) sum += p[size_t(j)] = (causal && j > i) ? 0.0 : std::exp(p[size_t(j)] - mx);
      for (int e = 0; e < D; ++e) {
        double acc = 0;
        for (int j = 0; j < S; ++j) acc += p[size_t(j)] * v[(size_t(b) * S + j) * D + e];
        y[(size_t(b) * S + i) * D + e] = acc / sum;
      }
    }
  return y;
}

void check_case(const ferry_kernel_v1* kernel, int B, int S, int D, bool causal, bool four_d) {
  std::mt19937 rng(42);
  std::normal_distribution<float> normal;
  std::vector<float> q(size_t(B) * S * D), k(q.size()), v(q.size()), y(q.size(), NAN);
  for (auto* x : {&q, &k, &v})
    for (float& f : *x) f = normal(rng);
  ferry_attr attrs[] = {{"is_causal", FERRY_ATTR_INT, causal ? 1 : 0, 0, nullptr, nullptr, nullptr, 0},
                        {"q_num_heads", FERRY_ATTR_INT, 1, 0, nullptr, nullptr, nullptr, 0},
                        {"kv_num_heads", FERRY_ATTR_INT, 1, 0, nullptr, nullptr, nullptr, 0}};
  ferry_kernel_node node = {"attention", "Attention", 3, 1, attrs, four_d ? 1 : 3};
  void* state = nullptr;
  char msg[256] = {};
  CHECK(kernel->create(&node, &state, msg, sizeof msg) == FERRY_KERNEL_OK);
  // 4-D [B, 1, S, D] has the same memory order as single-head 3-D [B, S, D].
  const int64_t d3[] = {B, S, D}, d4[] = {B, 1, S, D};
  const int64_t* dims = four_d ? d4 : d3;
  const int32_t rank = four_d ? 4 : 3;
  ferry_tensor in[] = {{FERRY_DTYPE_F32, rank, dims, q.data()},
                       {FERRY_DTYPE_F32, rank, dims, k.data()},
                       {FERRY_DTYPE_F32, rank, dims, v.data()}};
  ferry_tensor out[] = {{FERRY_DTYPE_F32, rank, dims, y.data()}};
  CHECK(kernel->run(state, in, 3, out, 1, msg, sizeof msg) == FERRY_KERNEL_OK);
  kernel->destroy(state);
  const std::vector<double> want = reference(q, k, v, B, S, D, causal);
  double max_err = 0;
  for (size_t i = 0; i < y.size(); ++i) max_err = std::max(max_err, std::fabs(double(y[i]) - want[i]));
  std::printf("B=%d S=%d D=%d causal=%d %s-D: max |error| %.3g\n", B, S, D, int(causal), four_d ? "4" : "3", max_err);
  CHECK(max_err < 1e-5);
}

}  // namespace

int main() {
  const ferry_kernel_v1* k = ferry_kernel_entry(FERRY_KERNEL_ABI_VERSION);
  CHECK(k != nullptr);
  if (!k) return 1;
  CHECK(k->abi_version == FERRY_KERNEL_ABI_VERSION);
  CHECK(std::strcmp(k->op, "Attention") == 0);
  CHECK(ferry_kernel_entry(FERRY_KERNEL_ABI_VERSION + 1) == nullptr);
  check_case(k, 2, 37, 16, false, false);
  check_case(k, 1, 64, 64, true, false);
  check_case(k, 2, 19, 8, false, true);
  if (failures) std::fprintf(stderr, "kernel_test: %d check(s) failed\n", failures);
  else std::printf("kernel_test: ok\n");
  return failures ? 1 : 0;
}
