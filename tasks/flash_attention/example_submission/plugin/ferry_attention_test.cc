// ferry_attention_test: the plugin through its ABI, exactly as ferry calls it,
// against attention computed here in double precision: the task's layout with
// partial blocks, grouped heads, the causal mask, the 4-D layout, scale and
// softcap, float and bool masks, a KV cache (past_key / past_value and the
// present outputs), decode steps; on AVX-512 hosts also capped to AVX2.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ferry/kernel_plugin.h"

extern "C" const ferry_kernel_v1* ferry_kernel_entry(uint32_t host_abi_version);

namespace {

enum class Mask { none, add, keep };

struct Case {
  const char* what;
  int b, hq, hkv, sq, skv, d;
  bool causal = false, four_d = false;
  int past = 0;  // > 0: past_key / past_value inputs and the present outputs
  Mask mask = Mask::none;
  float scale = 0, softcap = 0;  // 0: the attribute is not set
};

// Offset of element (bb, h, s, e) in the 3-D [B, S, H*E] or 4-D [B, H, S, E] layout.
size_t at(bool four_d, int bb, int h, int s, int e, int H, int S, int E) {
  return four_d ? ((size_t(bb) * H + h) * S + s) * E + e : ((size_t(bb) * S + s) * H + h) * E + e;
}

std::vector<float> random(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> x(n);
  for (float& f : x) f = normal(rng);
  return x;
}

double run_case(const ferry_kernel_v1* k, const Case& c) {
  std::mt19937 rng(7);
  const int t = c.past + c.skv;
  std::vector<float> q = random(size_t(c.b) * c.hq * c.sq * c.d, rng),
                     kk = random(size_t(c.b) * c.hkv * c.skv * c.d, rng);
  std::vector<float> v = random(kk.size(), rng), pk = random(size_t(c.b) * c.hkv * c.past * c.d, rng);
  std::vector<float> pv = random(pk.size(), rng), mask_add = random(size_t(c.sq) * t, rng);
  std::vector<unsigned char> mask_keep(mask_add.size());
  for (size_t i = 0; i < mask_keep.size(); ++i) mask_keep[i] = (i % t) % 3 != 1;  // every third key masked
  std::vector<float> y(q.size(), NAN), present_k(size_t(c.b) * c.hkv * t * c.d, NAN), present_v(present_k.size(), NAN);

  std::vector<ferry_attr> attrs = {{"is_causal", FERRY_ATTR_INT, c.causal, 0, nullptr, nullptr, nullptr, 0},
                                   {"q_num_heads", FERRY_ATTR_INT, c.hq, 0, nullptr, nullptr, nullptr, 0},
                                   {"kv_num_heads", FERRY_ATTR_INT, c.hkv, 0, nullptr, nullptr, nullptr, 0},
                                   {"softcap", FERRY_ATTR_FLOAT, 0, c.softcap, nullptr, nullptr, nullptr, 0}};
  if (c.scale != 0) attrs.push_back({"scale", FERRY_ATTR_FLOAT, 0, c.scale, nullptr, nullptr, nullptr, 0});
  const int32_t n_out = c.past ? 3 : 1;
  ferry_kernel_node node = {"attention", "Attention", 6, n_out, attrs.data(), int32_t(attrs.size())};
  void* state = nullptr;
  char msg[256] = {};
  if (k->create(&node, &state, msg, sizeof msg) != FERRY_KERNEL_OK) {
    std::fprintf(stderr, "create failed: %s\n", msg);
    return INFINITY;
  }
  const int64_t qd4[] = {c.b, c.hq, c.sq, c.d}, kd4[] = {c.b, c.hkv, c.skv, c.d};
  const int64_t qd3[] = {c.b, c.sq, int64_t(c.hq) * c.d}, kd3[] = {c.b, c.skv, int64_t(c.hkv) * c.d};
  const int64_t pd[] = {c.b, c.hkv, c.past, c.d}, td[] = {c.b, c.hkv, t, c.d}, md[] = {1, 1, c.sq, t};
  const int32_t rank = c.four_d ? 4 : 3;
  const int64_t* qd = c.four_d ? qd4 : qd3;
  const int64_t* kd = c.four_d ? kd4 : kd3;
  const ferry_tensor none = {FERRY_DTYPE_UNDEFINED, 0, nullptr, nullptr};
  ferry_tensor in[6] = {{FERRY_DTYPE_F32, rank, qd, q.data()},
                        {FERRY_DTYPE_F32, rank, kd, kk.data()},
                        {FERRY_DTYPE_F32, rank, kd, v.data()},
                        none,
                        none,
                        none};
  if (c.mask == Mask::add) in[3] = {FERRY_DTYPE_F32, 4, md, mask_add.data()};
  if (c.mask == Mask::keep) in[3] = {FERRY_DTYPE_BOOL, 4, md, mask_keep.data()};
  if (c.past) in[4] = {FERRY_DTYPE_F32, 4, pd, pk.data()}, in[5] = {FERRY_DTYPE_F32, 4, pd, pv.data()};
  ferry_tensor out[] = {{FERRY_DTYPE_F32, rank, qd, y.data()},
                        {FERRY_DTYPE_F32, 4, td, present_k.data()},
                        {FERRY_DTYPE_F32, 4, td, present_v.data()}};
  const int32_t rc = k->run(state, in, 6, out, n_out, msg, sizeof msg);
  k->destroy(state);
  if (rc != FERRY_KERNEL_OK) {
    std::fprintf(stderr, "run failed: %s\n", msg);
    return INFINITY;
  }
  // Key j of head kh: past rows first, then K / V.
  auto key = [&](int bb, int kh, int j, int e) {
    return j < c.past ? pk[at(true, bb, kh, j, e, c.hkv, c.past, c.d)]
                      : kk[at(c.four_d, bb, kh, j - c.past, e, c.hkv, c.skv, c.d)];
  };
  auto value = [&](int bb, int kh, int j, int e) {
    return j < c.past ? pv[at(true, bb, kh, j, e, c.hkv, c.past, c.d)]
                      : v[at(c.four_d, bb, kh, j - c.past, e, c.hkv, c.skv, c.d)];
  };
  const double scale = c.scale != 0 ? c.scale : 1.0 / std::sqrt(double(c.d));
  double worst = 0;
  for (int bb = 0; bb < c.b; ++bb)
    for (int h = 0; h < c.hq; ++h) {
      const int kh = h / (c.hq / c.hkv);
      for (int i = 0; i < c.sq; ++i) {
        std::vector<double> p(size_t(t), 0.0);
        std::vector<bool> seen(size_t(t), true);
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < t; ++j) {
          if ((c.causal && j > i + c.past) || (c.mask == Mask::keep && !mask_keep[size_t(i) * t + j])) {
            seen[size_t(j)] = false;
            continue;
          }
          double s = 0;
          for (int e = 0; e < c.d; ++e) s += double(q[at(c.four_d, bb, h, i, e, c.hq, c.sq, c.d)]) * key(bb, kh, j, e);
          s *= scale;
          if (c.softcap > 0) s = c.softcap * std::tanh(s / c.softcap);
          if (c.mask == Mask::add) s += mask_add[size_t(i) * t + j];
          p[size_t(j)] = s;
          mx = std::max(mx, s);
        }
        for (int j = 0; j < t; ++j) sum += p[size_t(j)] = seen[size_t(j)] ? std::exp(p[size_t(j)] - mx) : 0.0;
        for (int e = 0; e < c.d; ++e) {
          double acc = 0;
          for (int j = 0; j < t; ++j) acc += p[size_t(j)] * value(bb, kh, j, e);
          worst = std::max(worst, std::fabs(acc / sum - y[at(c.four_d, bb, h, i, e, c.hq, c.sq, c.d)]));
        }
      }
    }
  if (c.past)  // present = concat(past, new), exactly
    for (int bb = 0; bb < c.b; ++bb)
      for (int kh = 0; kh < c.hkv; ++kh)
        for (int j = 0; j < t; ++j)
          for (int e = 0; e < c.d; ++e) {
            const size_t o = at(true, bb, kh, j, e, c.hkv, t, c.d);
            if (present_k[o] != key(bb, kh, j, e) || present_v[o] != value(bb, kh, j, e)) return INFINITY;
          }
  return worst;
}

int run_all(const ferry_kernel_v1* k) {
  const Case cases[] = {
      {"the task's layout, partial blocks", 2, 1, 1, 100, 100, 64},
      {"grouped heads, Sq != Skv", 1, 4, 2, 33, 70, 16},
      {"causal", 2, 2, 2, 50, 50, 8, true},
      {"4-D", 1, 3, 3, 17, 130, 32, false, true},
      {"scale and softcap", 1, 2, 1, 40, 40, 16, false, false, 0, Mask::none, 0.5f, 2.0f},
      {"float mask", 1, 2, 2, 20, 45, 16, false, false, 0, Mask::add},
      {"bool mask, causal", 1, 2, 2, 30, 30, 16, true, false, 0, Mask::keep},
      {"KV cache, causal", 1, 4, 2, 9, 9, 16, true, true, 23},
      {"decode step (present fused)", 2, 4, 2, 1, 1, 32, false, true, 40},
      {"3 decode queries", 1, 2, 2, 3, 3, 16, true, true, 11},
  };
  int failures = 0;
  for (const Case& c : cases) {
    const double err = run_case(k, c);
    const bool ok = err < 1e-5;
    failures += !ok;
    std::printf("%s: %s (b%d hq%d hkv%d sq%d skv%d past%d d%d): max |error| %.3g %s\n", k->name, c.what, c.b, c.hq,
                c.hkv, c.sq, c.skv, c.past, c.d, err, ok ? "ok" : "FAILED");
  }
  return failures;
}

}  // namespace

int main() {
  const ferry_kernel_v1* k = ferry_kernel_entry(FERRY_KERNEL_ABI_VERSION);
  if (!k || k->abi_version != FERRY_KERNEL_ABI_VERSION || std::strcmp(k->op, "Attention") != 0) {
    std::fprintf(stderr, "ferry_attention_test: bad plugin table\n");
    return 1;
  }
  if (std::strstr(k->name, "__none")) {
    std::printf("this host has no AVX2 + FMA: the plugin answers unsupported; nothing to test\n");
    return 0;
  }
  int failures = run_all(k);
  if (std::strstr(k->name, "__avx512")) {  // the AVX2 code too
    setenv("FERRY_CPU_MAX_ISA", "avx2", 1);
    failures += run_all(ferry_kernel_entry(FERRY_KERNEL_ABI_VERSION));
    unsetenv("FERRY_CPU_MAX_ISA");
  }
  return failures ? 1 : 0;
}
