// The Attention rows of backends/cpu/kernels.def (attention_f32__avx2 /
// __avx512, native/attention_f32.cc) against ref_Attention (computed in double)
// over shapes, head groupings, masks, past K/V, scale and softcap.
//
// The default run is a small sweep (well under a second). The full sweep
// (head dims 32..256, longer sequences, every mask on every shape) runs with
//   FERRY_BIG_SWEEPS=1 build/ferry_tests --gtest_filter='AttentionF32*'
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "backends/cpu/cpu_kernels.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

enum class Mask { none, bool_padding, bool_full, float_bias, float_row, bool_all_false_row, float_wide };

struct AttnCase {
  int64_t b = 1, hq = 1, hkv = 1, sq = 1, skv = 1, past = 0, d = 8, dv = 8;
  bool three_d = false, causal = false, present = false;
  Mask mask = Mask::none;
  double scale = 0, softcap = 0;  ///< 0: attribute absent
  std::string label() const {
    return "b" + std::to_string(b) + " hq" + std::to_string(hq) + " hkv" + std::to_string(hkv) + " sq" +
           std::to_string(sq) + " skv" + std::to_string(skv) + " past" + std::to_string(past) + " d" +
           std::to_string(d) + " dv" + std::to_string(dv) + (three_d ? " 3d" : " 4d") + (causal ? " causal" : "") +
           " mask" + std::to_string(int(mask)) + (softcap > 0 ? " softcap" : "") + (scale > 0 ? " scale" : "");
  }
};

/// [B, H, S, E] in the case's layout.
Tensor qkv(const AttnCase& c, int64_t h, int64_t s, int64_t e, uint32_t seed) {
  return c.three_d ? randn({c.b, s, h * e}, seed) : randn({c.b, h, s, e}, seed);
}

Tensor make_mask(const AttnCase& c) {
  const int64_t t = c.past + c.skv;
  switch (c.mask) {
    case Mask::none: return Tensor();
    case Mask::bool_padding: {  // [B, 1, 1, T]: batch b keeps its first T - b keys (at least one)
      Tensor m = Tensor::empty(DType::boolean, {c.b, 1, 1, t});
      for (int64_t bb = 0; bb < c.b; ++bb)
        for (int64_t j = 0; j < t; ++j) m.data<bool>()[bb * t + j] = j < std::max<int64_t>(1, t - bb);
      return m;
    }
    case Mask::bool_full:
    case Mask::bool_all_false_row: {  // [Sq, T] pseudo-random, row 0 all false in the second kind
      Tensor m = Tensor::empty(DType::boolean, {c.sq, t});
      for (int64_t i = 0; i < c.sq * t; ++i) m.data<bool>()[i] = (i * 7919 % 5) != 0;
      if (c.mask == Mask::bool_all_false_row)
        for (int64_t j = 0; j < t; ++j) m.data<bool>()[j] = false;
      return m;
    }
    case Mask::float_bias: return randn({c.b, c.hq, c.sq, t}, 99);
    case Mask::float_wide: {  // [Sq, T]: biases -inf, -300 .. +30, past the kernel's 2^-127 flush to 0
      // (not larger: fp32 scores near 200 round by 1e-5 relative on their own, in any kernel)
      Tensor m = randn({c.sq, t}, 97);
      const float scale[] = {8.f, -150.f, -300.f, 1.f, -std::numeric_limits<float>::infinity()};
      for (int64_t i = 0; i < c.sq * t; ++i) m.data<float>()[i] = std::fabs(m.data<float>()[i]) * scale[i * 31 % 5];
      return m;
    }
    case Mask::float_row: {  // [1, Hq, 1, T - 1]: broadcast rows, one key short (the last key is masked)
      Tensor m = randn({1, c.hq, 1, std::max<int64_t>(1, t - 1)}, 98);
      m.data<float>()[0] = -std::numeric_limits<float>::infinity();
      return m;
    }
  }
  return Tensor();
}

AttrMap attrs_of(const AttnCase& c) {
  AttrMap a;
  if (c.three_d) a.set("q_num_heads", c.hq), a.set("kv_num_heads", c.hkv);
  if (c.causal) a.set("is_causal", int64_t(1));
  if (c.scale > 0) a.set("scale", c.scale);
  if (c.softcap > 0) a.set("softcap", c.softcap);
  return a;
}

/// Runs every Attention row this CPU can run on case `c`; the reference is the interpreter's ref_Attention.
void check(const AttnCase& c) {
  std::vector<Tensor> in = {qkv(c, c.hq, c.sq, c.d, 1), qkv(c, c.hkv, c.skv, c.d, 2), qkv(c, c.hkv, c.skv, c.dv, 3),
                            make_mask(c)};
  if (c.past > 0 || c.present) {
    in.push_back(randn({c.b, c.hkv, c.past, c.d}, 4));
    in.push_back(randn({c.b, c.hkv, c.past, c.dv}, 5));
  }
  Graph g;
  const size_t nout = c.present ? 3 : 1;
  Node* n = detail::build_one_node(g, Op::Attention, in, attrs_of(c), nout, {});
  ASSERT_TRUE(infer_shapes(g).ok()) << c.label();
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].defined()) feeds[detail::input_name(i)] = in[i];
  auto want = interpret(g, feeds);
  ASSERT_TRUE(want.ok()) << c.label() << ": " << want.status().to_string();
  int rows = 0;
  for (const KernelEntry& k : registered_kernels()) {
    if (k.op != Op::Attention || k.isa > host_isa()) continue;
    ++rows;
    std::vector<Tensor> outs;
    for (size_t o = 0; o < nout; ++o) {  // the kernel must write every element: start from NaNs
      outs.push_back(Tensor::empty(DType::f32, (*want)[o].dims()));
      for (int64_t i = 0; i < outs[o].numel(); ++i) outs[o].data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
    }
    std::vector<const Tensor*> ins;
    for (const Tensor& t : in) ins.push_back(t.defined() ? &t : nullptr);
    KernelContext ctx(*n, ins, &outs);
    Status st = k.fn(ctx);
    ASSERT_TRUE(st.ok()) << k.name << " " << c.label() << ": " << st.to_string();
    for (size_t o = 0; o < nout; ++o) EXPECT_TRUE(close(outs[o], (*want)[o], 1e-5)) << k.name << " " << c.label();
  }
  if (host_isa() >= Isa::avx2) {
    EXPECT_GT(rows, 0);
  }
}

std::vector<AttnCase> small_sweep() {
  std::vector<AttnCase> cs;
  // Ragged query / key counts around the kernels' sizes: <= 4 queries take the row kernel (256 keys a
  // block), <= 8 / 16 the narrow tile, <= 64 the medium one (2-vector tiles), more the wide one (L = 48 / 64
  // queries, N = 64 keys, R = 4 / 6 rows, AVX2 / AVX-512) with the remainder past its last full block on
  // the narrow tile (up to 8 / 16 queries: 65, 100 and 197 on AVX2, 65 and 197 on AVX-512), the medium
  // one (up to 16 / 32: 108 on AVX2, 84 on AVX-512) or a short wide block (the rest). d = 64: the
  // queries' and outputs' transposes in whole W x W blocks; 8, 33: with the head dims past them.
  for (auto [sq, skv] : std::vector<std::pair<int64_t, int64_t>>{{1, 1},
                                                                 {1, 70},
                                                                 {2, 300},
                                                                 {5, 3},
                                                                 {7, 65},
                                                                 {17, 20},
                                                                 {49, 65},
                                                                 {64, 64},
                                                                 {65, 3},
                                                                 {84, 40},
                                                                 {100, 130},
                                                                 {108, 40},
                                                                 {197, 197}}) {
    for (int64_t d : {8, 33, 64}) {
      AttnCase c;
      c.b = 2, c.hq = 2, c.hkv = 1, c.sq = sq, c.skv = skv, c.d = d, c.dv = d == 33 ? 17 : d;
      cs.push_back(c);
    }
  }
  AttnCase base;
  base.b = 2, base.hq = 4, base.hkv = 2, base.sq = 37, base.skv = 70, base.d = 16, base.dv = 16;
  for (Mask m : {Mask::bool_padding, Mask::bool_full, Mask::float_bias, Mask::float_row, Mask::bool_all_false_row,
                 Mask::float_wide}) {
    AttnCase c = base;
    c.mask = m;
    cs.push_back(c);
    c.causal = true;
    cs.push_back(c);
    c.sq = 2, c.past = 7;  // the row kernel with the same mask (and past keys)
    cs.push_back(c);
  }
  for (bool three_d : {false, true}) {
    AttnCase c = base;
    c.three_d = three_d, c.causal = true, c.past = 20, c.present = true, c.sq = 9, c.skv = 9;
    cs.push_back(c);
    c.sq = 1, c.skv = 1, c.hq = 4, c.hkv = 1;  // decode step, MQA
    cs.push_back(c);
    c = base;
    c.three_d = three_d, c.hkv = 4, c.scale = 0.3, c.softcap = 2.0;  // MHA, 3-D, scale, softcap
    cs.push_back(c);
  }
  for (Mask m : {Mask::none, Mask::bool_padding, Mask::float_bias}) {
    // Decode steps with a cache longer than a row block (256 keys), GQA: present_key/value are
    // written as the cache streams through (fused), or apart when the mask may hide keys.
    AttnCase c = base;
    c.sq = 1, c.skv = 1, c.hq = 4, c.hkv = 2, c.past = 300, c.present = true, c.mask = m;
    cs.push_back(c);
  }
  AttnCase c = base;
  c.causal = true, c.sq = 80, c.skv = 30;  // more queries than keys: late rows see every key
  cs.push_back(c);
  c.present = true, c.past = 0;  // present outputs without past
  cs.push_back(c);
  return cs;
}

std::vector<AttnCase> big_sweep() {
  std::vector<AttnCase> cs;
  for (int64_t d : {32, 63, 64, 96, 128, 256})
    for (auto [hq, hkv] : std::vector<std::pair<int64_t, int64_t>>{{4, 4}, {4, 2}, {4, 1}})
      for (Mask m : {Mask::none, Mask::bool_padding, Mask::float_bias, Mask::bool_all_false_row, Mask::float_wide})
        for (bool causal : {false, true})
          for (int64_t sq : {3, 7, 150}) {  // the row kernel, the narrow (one lane vector) and the wide tiles
            const bool three_d = sq == 3;
            AttnCase c;
            c.b = 2, c.hq = hq, c.hkv = hkv, c.sq = sq, c.skv = 200, c.d = d, c.dv = d, c.mask = m;
            c.causal = causal, c.three_d = three_d, c.past = causal ? 17 : 0;
            cs.push_back(c);
          }
  return cs;
}

TEST(AttentionF32, KernelTableHasTheRow) {
  register_cpu_kernels();
  const KernelEntry* k = select_kernel(Op::Attention, DType::f32, host_isa());
  if (host_isa() < Isa::avx2) GTEST_SKIP() << "no AVX2: Attention runs on its reference kernel";
  ASSERT_NE(k, nullptr);
  EXPECT_NE(std::strstr(k->name, "attention_f32__"), nullptr);
}

TEST(AttentionF32, SmallSweepMatchesReference) {
  register_cpu_kernels();
  for (const AttnCase& c : small_sweep()) check(c);
}

TEST(AttentionF32, BigSweepMatchesReference) {
  if (!std::getenv("FERRY_BIG_SWEEPS")) GTEST_SKIP() << "set FERRY_BIG_SWEEPS=1";
  register_cpu_kernels();
  for (const AttnCase& c : big_sweep()) check(c);
}

TEST(AttentionF32, SameBitsForAnyThreadCount) {
  register_cpu_kernels();
  const KernelEntry* k = select_kernel(Op::Attention, DType::f32, host_isa());
  if (!k) GTEST_SKIP();
  Tensor q = randn({1, 3, 200, 64}, 1), kk = randn({1, 3, 300, 64}, 2), v = randn({1, 3, 300, 64}, 3);
  Graph g;
  Node* n = detail::build_one_node(g, Op::Attention, {q, kk, v}, attrs({{"is_causal", int64_t(1)}}), 1, {});
  std::vector<Tensor> y[2];
  for (int t : {1, 2}) {
    omp_set_num_threads(t);
    y[t - 1] = {Tensor::empty(DType::f32, {1, 3, 200, 64})};
    KernelContext ctx(*n, {&q, &kk, &v}, &y[t - 1]);
    ASSERT_TRUE(k->fn(ctx).ok());
  }
  EXPECT_EQ(std::memcmp(y[0][0].raw(), y[1][0].raw(), y[0][0].nbytes()), 0);
}

// A NaN score is a NaN softmax row, as in ONNX Runtime: a NaN in query row 5 makes output row 5
// NaN and no other; a NaN in one key makes every row NaN (every query sees that key). The
// AVX-512 softmax's 2^x (vreduceps / vscalefps) must let NaN through where it flushes -inf to 0.
TEST(AttentionF32, NanScoresPropagateLikeTheReference) {
  register_cpu_kernels();
  for (Isa isa : {Isa::avx2, Isa::avx512}) {
    if (host_isa() < isa) continue;
    const KernelEntry* k = select_kernel(Op::Attention, DType::f32, isa);
    if (!k) continue;
    for (bool in_key : {false, true}) {
      Tensor q = randn({1, 2, 100, 32}, 1), kk = randn({1, 2, 130, 32}, 2), v = randn({1, 2, 130, 32}, 3);
      (in_key ? kk : q).data<float>()[5 * 32 + 7] = std::numeric_limits<float>::quiet_NaN();  // head 0, row 5
      Graph g;
      Node* n = detail::build_one_node(g, Op::Attention, {q, kk, v}, {}, 1, {});
      std::vector<Tensor> y = {Tensor::empty(DType::f32, {1, 2, 100, 32})};
      KernelContext ctx(*n, {&q, &kk, &v}, &y);
      ASSERT_TRUE(k->fn(ctx).ok());
      const float* out = y[0].data<float>();
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 100; ++i) {
          const bool want_nan = h == 0 && (in_key || i == 5);
          for (int64_t e = 0; e < 32; ++e)
            ASSERT_EQ(std::isnan(out[(h * 100 + i) * 32 + e]), want_nan)
                << isa_name(isa) << (in_key ? " NaN key" : " NaN query") << " head " << h << " row " << i;
        }
    }
  }
}

TEST(AttentionF32, BadShapesAreAnErrorNotACrash) {
  register_cpu_kernels();
  const KernelEntry* k = select_kernel(Op::Attention, DType::f32, host_isa());
  if (!k) GTEST_SKIP();
  Tensor q = randn({1, 2, 4, 8}, 1), kk = randn({1, 2, 5, 8}, 2), v = randn({1, 2, 6, 8}, 3);  // V has 6 keys, K 5
  Graph g;
  Node* n = detail::build_one_node(g, Op::Attention, {q, kk, v}, {}, 1, {});
  std::vector<Tensor> y = {Tensor::empty(DType::f32, {1, 2, 4, 8})};
  KernelContext ctx(*n, {&q, &kk, &v}, &y);
  Status st = k->fn(ctx);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.to_string().find("shapes do not agree"), std::string::npos) << st.to_string();
}

}  // namespace
}  // namespace ferry::testing
