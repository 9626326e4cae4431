// The tiled transpose (native/strided_copy.cc) against an index-by-index copy: 2-D to 5-D,
// ragged tiles (dims not multiples of 16), the contiguous dims anywhere, a short destination-
// contiguous dim beside a long one (longer tiles), cases it declines (no transpose, short dims); and the Transpose step and a conv's layout change end to end
// against the reference interpreter.
#include <gtest/gtest.h>

#include <numeric>

#include "backends/cpu/native/strided_copy.h"
#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

/// y[idx] (contiguous over `dims`) = x[sum idx_d * strides[d]], index by index.
std::vector<float> naive_copy(const std::vector<float>& x, const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& strides) {
  const int64_t n = std::accumulate(dims.begin(), dims.end(), int64_t(1), std::multiplies<>());
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0;
    for (size_t d = dims.size(); d-- > 0;) {
      off += (rem % dims[d]) * strides[d];
      rem /= dims[d];
    }
    y[size_t(i)] = x[size_t(off)];
  }
  return y;
}

/// dims and source strides of x (contiguous `xdims`) read in the order `perm`.
void permuted(const std::vector<int64_t>& xdims, const std::vector<int64_t>& perm, std::vector<int64_t>* dims,
              std::vector<int64_t>* strides) {
  std::vector<int64_t> xs(xdims.size(), 1);
  for (size_t d = xdims.size() - 1; d > 0; --d) xs[d - 1] = xs[d] * xdims[d];
  dims->clear();
  strides->clear();
  for (int64_t p : perm) {
    dims->push_back(xdims[size_t(p)]);
    strides->push_back(xs[size_t(p)]);
  }
}

TEST(TransposeTiled, MatchesIndexCopy) {
  struct Case {
    std::vector<int64_t> dims, perm;
  };
  const std::vector<Case> cases = {
      {{37, 53}, {1, 0}},           {{1, 96, 18, 25}, {0, 2, 3, 1}}, {{2, 19, 9, 33}, {0, 3, 1, 2}},
      {{3, 8, 40, 9}, {2, 0, 3, 1}}, {{2, 3, 17, 4, 21}, {0, 1, 4, 3, 2}}, {{16, 16}, {1, 0}}, {{56, 8}, {1, 0}},
      // a short destination-contiguous dim beside a long source one (NCHW -> NHWC of an image):
      // tiles of 2..7 x up to 128, ragged at both ends
      {{1, 3, 5, 70}, {0, 2, 3, 1}}, {{2, 3, 224}, {0, 2, 1}}, {{7, 300}, {1, 0}}, {{2, 1000}, {1, 0}},
  };
  uint32_t seed = 40;
  for (const Case& c : cases) {
    const Tensor x = randn(c.dims, seed++);
    const std::vector<float> xv(x.data<float>(), x.data<float>() + x.numel());
    std::vector<int64_t> dims, strides;
    permuted(c.dims, c.perm, &dims, &strides);
    std::vector<float> y(xv.size(), -1.f);
    ASSERT_TRUE(transpose_tiled_f32(xv.data(), y.data(), dims, strides)) << x.type_string();
    EXPECT_EQ(y, naive_copy(xv, dims, strides)) << x.type_string();
  }
}

TEST(TransposeTiled, DeclinesWhatIsNoTranspose) {
  std::vector<float> x(64 * 7), y(x.size());
  EXPECT_FALSE(transpose_tiled_f32(x.data(), y.data(), {64, 7}, {7, 1}));   // a plain copy
  EXPECT_FALSE(transpose_tiled_f32(x.data(), y.data(), {32, 7}, {1, 32}));  // both short: q below 8, p below 64
  EXPECT_FALSE(transpose_tiled_f32(x.data(), y.data(), {7, 64}, {1, 7}));   // p (contiguous in x) below 8
  EXPECT_TRUE(transpose_tiled_f32(x.data(), y.data(), {64, 7}, {1, 64}));   // q below 8, p long: tiles of 7 x 37
  EXPECT_FALSE(transpose_tiled_f32(x.data(), y.data(), {}, {}));

}

TEST(TransposeTiled, TransposeStepAndLayoutChangesMatchReference) {
  const Tensor x = randn({1, 24, 20, 19}, 90);
  const Tensor w = randn({24, 24, 1, 1}, 91);
  auto build = [&](Graph& g) {
    Value* v = g.add_input("x", DType::f32, x.shape());
    Value* c = g.add_node(Op::Conv, {v, g.add_constant("w", w)}, 1, {}, "conv")->output(0);
    AttrMap a;
    a.set("perm", std::vector<int64_t>{0, 3, 1, 2});
    Value* t = g.add_node(Op::Transpose, {c}, 1, a, "transpose")->output(0);
    Value* t2 = g.add_node(Op::Transpose, {v}, 1, a, "transpose_input")->output(0);
    g.set_outputs({t, t2});
  };
  for (bool blocked : {true, false}) {
    SessionRun r;
    ASSERT_TRUE(run_session(build, {{"x", x}}, blocked, &r));
    EXPECT_TRUE(outputs_close(r, 1e-5)) << (blocked ? "blocked" : "plain") << r.plan_text;
  }
}

}  // namespace
}  // namespace ferry::testing
