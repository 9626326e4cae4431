// attention_test: the plugin through its ABI against attention computed here in
// double precision, over shapes that exercise partial blocks (S not a multiple of
// the block sizes), several and grouped heads, both layouts and the causal mask.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "ferry/kernel_plugin.h"

extern "C" const ferry_kernel_v1* ferry_kernel_entry(uint32_t host_abi_version);

namespace {

struct Case {
  int b, hq, hkv, sq, skv, d;
  bool causal, four_d;
};

// Offset of element (bb, h, s, e) in the 3-D [B, S, H*E] or 4-D [B, H, S, E] layout.
size_t at(bool four_d, int bb, int h, int s, int e, int H, int S, int E) {
  return four_d ? ((size_t(bb) * H + h) * S + s) * E + e : ((size_t(bb) * S + s) * H + h) * E + e;
}

double run_case(const ferry_kernel_v1* k, const Case& c) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> q(size_t(c.b) * c.hq * c.sq * c.d), kk(size_t(c.b) * c.hkv * c.skv * c.d), v(kk.size());
  std::vector<float> y(q.size(), NAN);
  for (auto* x : {&q, &kk, &v})
    for (float& f : *x) f = normal(rng);
  ferry_attr attrs[] = {{"is_causal", FERRY_ATTR_INT, c.causal, 0, nullptr, nullptr, nullptr, 0},
                        {"q_num_heads", FERRY_ATTR_INT, c.hq, 0, nullptr, nullptr, nullptr, 0},
                        {"kv_num_heads", FERRY_ATTR_INT, c.hkv, 0, nullptr, nullptr, nullptr, 0}};
  ferry_kernel_node node = {"attention", "Attention", 3, 1, attrs, c.four_d ? 1 : 3};
  void* state = nullptr;
  char msg[256] = {};
  if (k->create(&node, &state, msg, sizeof msg) != FERRY_KERNEL_OK) return INFINITY;
  int64_t qd4[] = {c.b, c.hq, c.sq, c.d}, kd4[] = {c.b, c.hkv, c.skv, c.d};
  int64_t qd3[] = {c.b, c.sq, int64_t(c.hq) * c.d}, kd3[] = {c.b, c.skv, int64_t(c.hkv) * c.d};
  const int32_t rank = c.four_d ? 4 : 3;
  const int64_t* qd = c.four_d ? qd4 : qd3;
  const int64_t* kd = c.four_d ? kd4 : kd3;
  ferry_tensor in[] = {{FERRY_DTYPE_F32, rank, qd, q.data()},
                       {FERRY_DTYPE_F32, rank, kd, kk.data()},
                       {FERRY_DTYPE_F32, rank, kd, v.data()}};
  ferry_tensor out[] = {{FERRY_DTYPE_F32, rank, qd, y.data()}};
  const int32_t rc = k->run(state, in, 3, out, 1, msg, sizeof msg);
  k->destroy(state);
  if (rc != FERRY_KERNEL_OK) {
    std::fprintf(stderr, "run failed: %s\n", msg);
    return INFINITY;
  }
  double worst = 0;
  for (int bb = 0; bb < c.b; ++bb)
    for (int h = 0; h < c.hq; ++h) {
      const int kh = h / (c.hq / c.hkv);
      for (int i = 0; i < c.sq; ++i) {
        std::vector<double> p(size_t(c.skv), 0.0);
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < c.skv; ++j) {
          if (c.causal && j > i) continue;
          double dot = 0;
          for (int e = 0; e < c.d; ++e)
            dot += double(q[at(c.four_d, bb, h, i, e, c.hq, c.sq, c.d)]) * kk[at(c.four_d, bb, kh, j, e, c.hkv, c.skv, c.d)];
          p[size_t(j)] = dot / std::sqrt(double(c.d));
          mx = std::max(mx, p[size_t(j)]);
        }
        for (int j = 0; j < c.skv; ++j) sum += p[size_t(j)] = (c.causal && j > i) ? 0.0 : std::exp(p[size_t(j)] - mx);
        for (int e = 0; e < c.d; ++e) {
          double acc = 0;
          for (int j = 0; j < c.skv; ++j) acc += p[size_t(j)] * v[at(c.four_d, bb, kh, j, e, c.hkv, c.skv, c.d)];
          worst = std::max(worst, std::fabs(acc / sum - y[at(c.four_d, bb, h, i, e, c.hq, c.sq, c.d)]));
        }
      }
    }
  return worst;
}

}  // namespace

int main() {
  const ferry_kernel_v1* k = ferry_kernel_entry(FERRY_KERNEL_ABI_VERSION);
  if (!k || k->abi_version != FERRY_KERNEL_ABI_VERSION || std::strcmp(k->op, "Attention") != 0) {
    std::fprintf(stderr, "attention_test: bad plugin table\n");
    return 1;
  }
  const Case cases[] = {
      {2, 1, 1, 100, 100, 64, false, false},  // the task's layout, partial blocks
      {1, 4, 2, 33, 70, 16, false, false},    // grouped heads, Sq != Skv
      {2, 2, 2, 50, 50, 8, true, false},      // causal
      {1, 3, 3, 17, 130, 32, false, true},    // 4-D
  };
  int failures = 0;
  for (const Case& c : cases) {
    const double err = run_case(k, c);
    const bool ok = err < 1e-5;
    failures += !ok;
    std::printf("b%d hq%d hkv%d sq%d skv%d d%d causal=%d %dD: max |error| %.3g %s\n", c.b, c.hq, c.hkv, c.sq, c.skv, c.d,
                int(c.causal), c.four_d ? 4 : 3, err, ok ? "ok" : "FAILED");
  }
  return failures ? 1 : 0;
}
