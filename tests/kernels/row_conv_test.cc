// ferry's row convolution (native/row_conv.h, cpu_row_conv_step.cc): the kernel of every ISA
// the host has against a double-precision loop over a sweep of shapes (plain rows summed over
// input channels, channels-last rows, pads, strides, tails of the dot length, Relu), and the
// CPU session's choice: the shapes it takes (basic-pitch's CQT and oc=1 heads) run on it and
// match the reference interpreter; near misses (more output channels, groups, dilations, a
// residual, a short dot) stay on oneDNN.
#include <gtest/gtest.h>

#include "backends/cpu/native/row_conv.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

/// y of `p` from x (laid out by p's strides) and w [OC][G][KH][K], in double.
std::vector<float> row_conv_expected(const RowConvProblem& p, const std::vector<float>& x, const std::vector<float>& w,
                                     const std::vector<float>& b) {
  std::vector<float> y(size_t(p.N * p.OC * p.OH * p.OW));
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t o = 0; o < p.OC; ++o)
      for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          double v = b.empty() ? 0.0 : b[size_t(o)];
          for (int64_t g = 0; g < p.G; ++g)
            for (int64_t kh = 0; kh < p.KH; ++kh) {
              const int64_t ih = oh * p.sh + kh - p.ph;
              if (ih < 0 || ih >= p.H) continue;
              for (int64_t k = 0; k < p.K; ++k) {
                const int64_t at = ow * p.s - p.p + k;
                if (at < 0 || at >= p.L) continue;
                v += double(w[size_t(((o * p.G + g) * p.KH + kh) * p.K + k)]) *
                     double(x[size_t(n * p.x_n + g * p.x_g + ih * p.x_h + at)]);
              }
            }
          if (p.relu) v = std::max(v, 0.0);
          y[size_t(((n * p.OC + o) * p.OH + oh) * p.OW + ow)] = float(v);
        }
  return y;
}

struct RowCase {
  int64_t N, G, H, L, KH, K, sh, ph, s, p, OC;
  bool relu, bias;
};

TEST(RowConv, KernelMatchesLoopPerIsa) {
  // L, K, s, p in floats of a row: channels-last cases fold C into them (K = KW*C, s = sw*C).
  const std::vector<RowCase> cases = {
      {1, 1, 1, 300, 1, 256, 1, 0, 2, 0, 1, false, true},     // CQT low-pass: oc 1, stride 2
      {1, 1, 1, 1000, 1, 256, 1, 0, 128, 0, 36, false, true}, // CQT frames: oc 36
      {1, 1, 1, 333, 1, 256, 1, 0, 1, 0, 5, false, false},    // stride 1, no bias
      {2, 1, 9, 8 * 20, 5, 5 * 8, 1, 2, 8, 2 * 8, 1, false, true},   // 8 ch, 5x5, pad 2 (contours)
      {1, 1, 7, 32 * 11, 7, 3 * 32, 1, 3, 32, 32, 1, true, true},    // 32 ch, 7x3, pad (3, 1)
      {1, 1, 6, 33 * 9, 3, 3 * 33, 1, 1, 33, 33, 1, false, true},    // 33 ch: dot tail 3
      {1, 1, 5, 8 * 30, 3, 39 * 8, 1, 1, 8, 19 * 8, 8, true, true},  // 3x39 pad 19, 8 -> 8
      {1, 1, 8, 4 * 17, 3, 3 * 4, 2, 1, 2 * 4, 4, 7, false, true},   // stride 2, K 12 (< one vector)
      {1, 3, 4, 50, 2, 21, 1, 0, 3, 5, 6, true, true},        // plain rows summed over 3 channels
      {1, 1, 3, 10, 1, 40, 1, 0, 1, 15, 2, false, true},      // window wider than the row
  };
  uint32_t seed = 7100;
  int checked = 0;
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (isa > host_isa()) continue;
    for (const RowCase& c : cases) {
      RowConvProblem p;
      p.N = c.N, p.G = c.G, p.H = c.H, p.L = c.L, p.KH = c.KH, p.K = c.K, p.sh = c.sh, p.ph = c.ph, p.s = c.s,
      p.p = c.p, p.OC = c.OC, p.relu = c.relu;
      p.x_h = c.L, p.x_g = c.H * c.L, p.x_n = c.G * c.H * c.L;
      p.OH = (c.H + 2 * c.ph - c.KH) / c.sh + 1;
      p.OW = (c.L + 2 * c.p - c.K) / c.s + 1;
      ASSERT_GT(p.OH, 0);
      ASSERT_GT(p.OW, 0);
      Tensor xt = randn({c.N * c.G * c.H * c.L}, seed++), wt = randn({c.OC * c.G * c.KH * c.K}, seed++),
             bt = randn({c.OC}, seed++);
      std::vector<float> x(xt.data<float>(), xt.data<float>() + xt.numel()),
          w(wt.data<float>(), wt.data<float>() + wt.numel()), b;
      if (c.bias) b.assign(bt.data<float>(), bt.data<float>() + c.OC);
      const std::vector<float> want = row_conv_expected(p, x, w, b);
      std::vector<float> got(want.size(), -1e30f);
      row_conv_f32(p, x.data(), row_conv_pack(p, w.data()).data(), b.empty() ? nullptr : b.data(), got.data(), isa);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-4 * std::max(1.f, std::fabs(want[i])))
            << row_conv_name(isa) << " case K=" << c.K << " OC=" << c.OC << " L=" << c.L << " at " << i;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(RowConv, InfPastTheWindowDoesNotLeak) {
  // The dot's tail (250 = 15*16 + 10) reads whole vectors and masks the lanes past the window:
  // an Inf there must not reach the outputs whose window ends before it.
  RowConvProblem p;
  p.L = 301, p.x_h = 301, p.x_g = 301, p.x_n = 301, p.K = 250, p.s = 2, p.OW = 26;
  Tensor xt = randn({301}, 7200), wt = randn({250}, 7201);
  std::vector<float> x(xt.data<float>(), xt.data<float>() + 301), w(wt.data<float>(), wt.data<float>() + 250);
  x[296] = INFINITY;
  int checked = 0;
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (isa > host_isa()) continue;
    std::vector<float> y(26, 0.f);
    row_conv_f32(p, x.data(), row_conv_pack(p, w.data()).data(), nullptr, y.data(), isa);
    for (int64_t j = 0; j < 26; ++j) {
      const bool covers = 2 * j <= 296 && 296 < 2 * j + 250;
      EXPECT_EQ(std::isfinite(y[size_t(j)]), !covers) << row_conv_name(isa) << " column " << j;
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

struct SessionConvCase {
  std::vector<int64_t> x, w;
  std::vector<int64_t> strides, pads, dilations;
  int64_t group;
  Op act;  // Op::Identity: none
  bool residual;
  bool row_conv;  // expected on the row convolution
};

TEST(RowConv, SessionTakesItsShapesAndMatches) {
  if (host_isa() < Isa::avx2) GTEST_SKIP() << "the row convolution needs AVX2";
  const std::vector<SessionConvCase> cases = {
      // taken
      {{1, 1, 1, 2000}, {36, 1, 1, 256}, {1, 128}, {0, 0, 0, 0}, {1, 1}, 1, Op::Identity, false, true},
      {{1, 1, 1, 1200}, {1, 1, 1, 256}, {1, 2}, {0, 0, 0, 0}, {1, 1}, 1, Op::Identity, false, true},
      {{1, 8, 20, 30}, {1, 8, 5, 5}, {1, 1}, {2, 2, 2, 2}, {1, 1}, 1, Op::Sigmoid, false, true},
      {{1, 33, 12, 16}, {1, 33, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Op::Sigmoid, false, true},
      {{1, 8, 6, 50}, {4, 8, 3, 39}, {1, 1}, {1, 19, 1, 19}, {1, 1}, 1, Op::Relu, false, true},
      {{2, 4, 9, 9}, {3, 4, 3, 4}, {2, 1}, {1, 0, 1, 2}, {1, 1}, 1, Op::Identity, false, true},
      // near misses: oneDNN
      {{1, 8, 10, 10}, {5, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Op::Relu, false, false},     // 5 channels
      {{1, 8, 10, 10}, {4, 4, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2, Op::Identity, false, false}, // groups
      {{1, 8, 10, 10}, {4, 8, 3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 1, Op::Identity, false, false}, // dilation
      {{1, 8, 10, 10}, {4, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Op::Identity, true, false},  // residual
      {{1, 3, 10, 10}, {4, 3, 1, 5}, {1, 1}, {0, 2, 0, 2}, {1, 1}, 1, Op::Identity, false, false}, // dot 15
      {{1, 1, 1, 400}, {36, 1, 1, 63}, {1, 4}, {0, 0, 0, 0}, {1, 1}, 1, Op::Identity, false, false}, // kw 63
      {{1, 8, 10, 10}, {2, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, Op::HardSwish, false, false}, // activation
  };
  uint32_t seed = 7300;
  for (const SessionConvCase& c : cases) {
    Tensor x = randn(c.x, seed++), w = randn(c.w, seed++), b = randn({c.w[0]}, seed++);
    std::map<std::string, Tensor> feeds{{"x", x}};
    auto conv_attrs = [&] {
      return attrs({{"group", c.group}, {"strides", ints(c.strides)}, {"pads", ints(c.pads)},
                    {"dilations", ints(c.dilations)}});
    };
    if (c.residual) {
      Graph probe;
      Value* xv = probe.add_input("x", DType::f32, x.shape());
      Node* conv = probe.add_node(Op::Conv, {xv, probe.add_constant("w", w)}, 1, conv_attrs());
      probe.set_outputs({conv->output(0)});
      ASSERT_TRUE(infer_shapes(probe).ok());
      feeds["r"] = randn(conv->output(0)->shape().static_dims(), seed++);
    }
    auto build = [&](Graph& g) {
      Value* xv = g.add_input("x", DType::f32, x.shape());
      Value* y = g.add_node(Op::Conv, {xv, g.add_constant("w", w), g.add_constant("b", b)}, 1, conv_attrs(), "conv")
                     ->output(0);
      if (c.residual)
        y = g.add_node(Op::Add, {y, g.add_input("r", DType::f32, Shape::from_dims(feeds.at("r").dims()))}, 1, {}, "add")
                ->output(0);
      if (c.act != Op::Identity) y = g.add_node(c.act, {y}, 1, {}, "act")->output(0);
      g.set_outputs({y});
    };
    for (bool blocked : {true, false}) {
      SessionRun r;
      ASSERT_TRUE(run_session(build, feeds, blocked, &r)) << "x " << c.x[1] << "x" << c.x[3] << " w " << c.w[0];
      int row = 0, convs = 0;
      for (const StepInfo& st : r.plan.steps) {
        if (st.op != "Conv" && st.op != "FusedConv") continue;
        ++convs;
        row += st.kernel.find("row_conv") != std::string::npos;
      }
      EXPECT_EQ(convs, 1) << r.plan_text;
      EXPECT_EQ(row, c.row_conv ? 1 : 0) << "w " << c.w[0] << "x" << c.w[1] << "x" << c.w[2] << "x" << c.w[3]
                                          << r.plan_text;
      EXPECT_TRUE(outputs_close(r, 1e-4)) << "w " << c.w[0] << "x" << c.w[1] << "x" << c.w[2] << "x" << c.w[3];
    }
  }
}

}  // namespace
}  // namespace ferry::testing
