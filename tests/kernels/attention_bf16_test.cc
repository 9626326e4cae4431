// attention_bf16__avx512bf16 (native/attention_bf16.cc) against ref_Attention (computed in
// double): bf16 products, fp32 accumulation and softmax, so within 1e-2 (relative to
// max(1, |y|)) over head dims 32..256, ragged query / key counts, masks, causal, past keys,
// MHA / GQA / MQA. On a CPU without AVX512_BF16 the kernel must be the fp32 one (1e-5).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <limits>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/native/attention_kernel.h"
#include "precision/round_storage.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

struct Bf16AttnCase {
  int64_t b = 1, hq = 4, hkv = 4, sq = 70, skv = 70, past = 0, d = 64;
  bool causal = false, three_d = false;
  int mask = 0;  ///< 0 none, 1 bool key padding [B,1,1,T], 2 float bias [B,Hq,Sq,T]
  std::string label() const {
    return "b" + std::to_string(b) + " hq" + std::to_string(hq) + " hkv" + std::to_string(hkv) + " sq" +
           std::to_string(sq) + " skv" + std::to_string(skv) + " past" + std::to_string(past) + " d" + std::to_string(d) +
           (causal ? " causal" : "") + (three_d ? " 3d" : "") + " mask" + std::to_string(mask);
  }
};

/// Runs the bf16 kernel on case c against the reference; `bf16`: whether it computes in bf16 here.
void bf16_attn_check(const Bf16AttnCase& c, bool bf16) {
  auto t = [&](int64_t h, int64_t s, uint32_t seed) {
    return c.three_d ? randn({c.b, s, h * c.d}, seed) : randn({c.b, h, s, c.d}, seed);
  };
  const int64_t total = c.past + c.skv;
  std::vector<Tensor> in = {t(c.hq, c.sq, 1), t(c.hkv, c.skv, 2), t(c.hkv, c.skv, 3), Tensor()};
  if (c.mask == 1) {
    in[3] = Tensor::empty(DType::boolean, {c.b, 1, 1, total});
    for (int64_t bb = 0; bb < c.b; ++bb)
      for (int64_t j = 0; j < total; ++j) in[3].data<bool>()[bb * total + j] = j < std::max<int64_t>(1, total - 7 * bb);
  } else if (c.mask == 2) {
    in[3] = randn({c.b, c.hq, c.sq, total}, 9);
  }
  if (c.past > 0) in.push_back(randn({c.b, c.hkv, c.past, c.d}, 4)), in.push_back(randn({c.b, c.hkv, c.past, c.d}, 5));
  AttrMap a;
  if (c.three_d) a.set("q_num_heads", c.hq), a.set("kv_num_heads", c.hkv);
  if (c.causal) a.set("is_causal", int64_t(1));
  Graph g;
  Node* n = detail::build_one_node(g, Op::Attention, in, a, 1, {});
  ASSERT_TRUE(infer_shapes(g).ok()) << c.label();
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].defined()) feeds[detail::input_name(i)] = in[i];
  auto want = interpret(g, feeds);
  ASSERT_TRUE(want.ok()) << c.label() << ": " << want.status().to_string();
  std::vector<Tensor> outs = {Tensor::empty(DType::f32, (*want)[0].dims())};
  for (int64_t i = 0; i < outs[0].numel(); ++i) outs[0].data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  std::vector<const Tensor*> ins;
  for (const Tensor& x : in) ins.push_back(x.defined() ? &x : nullptr);
  KernelContext ctx(*n, ins, &outs);
  ASSERT_TRUE(attention_bf16__avx512bf16(ctx).ok()) << c.label();
  // bf16 has 8 significant bits (2^-9 relative rounding per operand): 1e-2 is the bound; the
  // fp32 fallback must match as the f32 kernel does.
  const double tol = bf16 ? 1e-2 : 1e-5;
  EXPECT_TRUE(close(outs[0], (*want)[0], tol)) << c.label();
  if (bf16 && c.sq > 4) {  // and the products really are bf16: not within fp32's error
    EXPECT_FALSE(close(outs[0], (*want)[0], 1e-5)) << c.label() << ": matches to 1e-5, not a bf16 computation";
  }
}

bool bf16_attn_host() { return host_isa() >= Isa::avx512 && attn::bf16_attention_available(); }

TEST(AttentionBf16, HeadDimsAndRaggedTails) {
  if (host_isa() < Isa::avx512) GTEST_SKIP() << "no AVX-512: the bf16 kernel is not built for this host";
  const bool bf16 = bf16_attn_host();
  for (int64_t d : {32, 64, 80, 128, 256})
    for (auto [sq, skv] : std::vector<std::pair<int64_t, int64_t>>{{5, 3}, {63, 65}, {130, 129}}) {
      Bf16AttnCase c;
      c.d = d, c.sq = sq, c.skv = skv, c.hq = 2, c.hkv = 2;
      bf16_attn_check(c, bf16);
    }
}

TEST(AttentionBf16, MasksGroupsAndPast) {
  if (host_isa() < Isa::avx512) GTEST_SKIP() << "no AVX-512: the bf16 kernel is not built for this host";
  const bool bf16 = bf16_attn_host();
  for (auto [hq, hkv] : std::vector<std::pair<int64_t, int64_t>>{{4, 4}, {4, 2}, {4, 1}})
    for (int mask : {0, 1, 2})
      for (bool causal : {false, true}) {
        Bf16AttnCase c;
        c.b = 2, c.hq = hq, c.hkv = hkv, c.sq = 77, c.skv = 150, c.d = 33 + 30 * mask, c.mask = mask;
        c.causal = causal, c.past = causal ? 17 : 0, c.three_d = mask == 1;
        bf16_attn_check(c, bf16);
      }
}

TEST(AttentionBf16, DecodeStepsStayFp32) {
  if (host_isa() < Isa::avx512) GTEST_SKIP() << "no AVX-512: the bf16 kernel is not built for this host";
  Bf16AttnCase c;
  c.sq = 1, c.skv = 1, c.past = 300, c.hq = 4, c.hkv = 2, c.causal = true;
  bf16_attn_check(c, false);  // the fp32 row kernel: 1e-5
}

/// max |a - b| / max(1, |b|).
double bf16_attn_gap(const Tensor& a, const Tensor& b) {
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    m = std::max(m, std::fabs(a.get_double(i) - b.get_double(i)) / std::max(1.0, std::fabs(b.get_double(i))));
  return m;
}

// What the accuracy guard measures for a bf16-accelerated Attention (precision/emulate_precision.cc:
// Q, K, V rounded to bf16, then fp32 attention) against what the kernel runs (it also rounds
// scale * Q once, unrounded Q, and the softmax numerators P): the gap is P's rounding, 2^-9 relative
// per term of a convex combination of V rows (<= 2^-9 max|V|), and scale * Q's rounding (S shifts by
// <= 2^-9 |S|); bounded at 2^-8 max|V| of max(1, |y|). Measured 1.9e-3 .. 6.3e-3, about as large
// as the guard form's own distance to fp32: the guard sees the input rounding, not P's.
TEST(AttentionBf16, GuardsEmulatedFormIsWithinABoundOfTheKernel) {
  if (!bf16_attn_host()) GTEST_SKIP() << "no AVX512_BF16: the kernel computes in fp32 here";
  for (auto [d, sq, causal] : std::vector<std::tuple<int64_t, int64_t, bool>>{{64, 130, false}, {33, 77, true}, {128, 200, false}}) {
    const std::vector<Tensor> in = {randn({1, 4, sq, d}, 11), randn({1, 4, sq, d}, 12), randn({1, 4, sq, d}, 13)};
    AttrMap a;
    if (causal) a.set("is_causal", int64_t(1));
    Graph g;
    Node* n = detail::build_one_node(g, Op::Attention, in, a, 1, {});
    ASSERT_TRUE(infer_shapes(g).ok());
    std::map<std::string, Tensor> fp32, rounded;
    for (size_t i = 0; i < in.size(); ++i) {
      fp32[detail::input_name(i)] = in[i];
      auto r = rounded_copy(in[i], DType::bf16);
      ASSERT_TRUE(r.ok());
      rounded[detail::input_name(i)] = *r;
    }
    auto want = interpret(g, fp32), guard = interpret(g, rounded);
    ASSERT_TRUE(want.ok() && guard.ok());
    std::vector<Tensor> outs = {Tensor::empty(DType::f32, (*want)[0].dims())};
    std::vector<const Tensor*> ins = {&in[0], &in[1], &in[2]};
    KernelContext ctx(*n, ins, &outs);
    ASSERT_TRUE(attention_bf16__avx512bf16(ctx).ok());
    const double to_guard = bf16_attn_gap(outs[0], (*guard)[0]), to_fp32 = bf16_attn_gap(outs[0], (*want)[0]);
    double vmax = 0;
    for (int64_t i = 0; i < in[2].numel(); ++i) vmax = std::max(vmax, std::fabs(in[2].get_double(i)));
    EXPECT_LE(to_guard, std::ldexp(1.0, -8) * vmax) << "d " << d << " sq " << sq;
    EXPECT_LT(to_guard, to_fp32) << "d " << d << " sq " << sq;
    std::printf("d %ld sq %ld: kernel vs guard form %.2e, vs fp32 %.2e\n", long(d), long(sq), to_guard, to_fp32);
  }
}

}  // namespace
}  // namespace ferry::testing
