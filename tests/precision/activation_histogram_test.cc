// The entropy and mse observers' histogram (precision/activation_histogram.h): collection
// across samples whose ranges grow, and the ranges chosen, checked against brute force on
// the raw values (mse) and against what the KL criterion must do on known distributions.
#include "precision/activation_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace ferry {
namespace {

/// The squared error of quantizing x to 256 levels over [lo, hi] (u8, zero point as calibrate_int8).
double quant_mse(const std::vector<float>& x, double lo, double hi) {
  const double scale = (hi - lo) / 255, zp = std::clamp(std::nearbyint(-lo / scale), 0.0, 255.0);
  double err = 0;
  for (float v : x) {
    const double q = std::clamp(std::nearbyint(v / scale) + zp, 0.0, 255.0);
    err += ((q - zp) * scale - v) * ((q - zp) * scale - v);
  }
  return err / double(x.size());
}

std::vector<float> laplace(size_t n, double b, unsigned seed) {
  std::mt19937 rng(seed);
  std::exponential_distribution<double> e(1.0 / b);
  std::bernoulli_distribution sign(0.5);
  std::vector<float> x(n);
  for (float& v : x) v = float(sign(rng) ? e(rng) : -e(rng));
  return x;
}

TEST(ActivationHistogram, KeepsEveryValueWhileItsRangeGrows) {
  ActivationHistogram h;
  std::vector<float> small(1000), big(1000);
  for (size_t i = 0; i < small.size(); ++i) small[i] = float(i) / 1000.0f;          // [0, 1)
  for (size_t i = 0; i < big.size(); ++i) big[i] = -500.0f + float(i) * 0.6f;       // [-500, 100)
  const float odd[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 0.0f};
  h.add(odd, 3);  // NaN and Inf skipped, the zero counted before any width exists
  h.add(small.data(), int64_t(small.size()));
  h.add(big.data(), int64_t(big.size()));
  EXPECT_EQ(h.count(), 2001);
  EXPECT_EQ(h.lo(), -500.0f);
  EXPECT_FLOAT_EQ(h.hi(), big.back());
  const std::vector<double> r = h.over_range();
  ASSERT_EQ(r.size(), size_t(ActivationHistogram::kBins));
  EXPECT_NEAR(std::accumulate(r.begin(), r.end(), 0.0), 2001, 1e-9);  // shared in proportion: fractions
  // [0, 1) is 1/600 of the range: the first sample's 1000 values and the zero land in the
  // bins just above 0, with the big sample's values there (0 .. 1: two of them)
  const double w = (double(h.hi()) - h.lo()) / ActivationHistogram::kBins;
  const size_t zero = size_t(-h.lo() / w);
  EXPECT_NEAR(r[zero] + r[zero + 1] + r[zero + 2] + r[zero + 3], 1003, 3);
}

TEST(ActivationHistogram, MseRangeIsTheBestClipOnTheRawValues) {
  for (unsigned seed : {1u, 2u}) {
    std::vector<float> x = laplace(200000, 1.0, seed);
    ActivationHistogram h;
    h.add(x.data(), int64_t(x.size()));
    const auto [lo, hi] = h.mse_range();
    // Laplace(b = 1) at 8 bits: the MSE-optimal symmetric clip is +-9.89 b (Banner et al., ACIQ,
    // 2019); this family keeps the sample's own lo : hi ratio, so compare the half-width
    EXPECT_NEAR((hi - lo) / 2, 9.89, 1.0);
    EXPECT_LT(hi - lo, (h.hi() - h.lo()) * 0.92);
    // brute force on the raw values over the same family of ranges (both ends shrunk alike)
    double best = std::numeric_limits<double>::infinity();
    for (int k = ActivationHistogram::kBins; k >= 256; k -= 4) {
      const double t = double(k) / ActivationHistogram::kBins;
      best = std::min(best, quant_mse(x, h.lo() * t, h.hi() * t));
    }
    const double chosen = quant_mse(x, lo, hi), minmax = quant_mse(x, h.lo(), h.hi());
    EXPECT_LE(chosen, best * 1.03) << "mse's range within 3% of the brute-force optimum";
    EXPECT_LT(chosen, minmax * 0.9) << "and better than min-max's on Laplace data";
  }
}

TEST(ActivationHistogram, EntropyClipsOutliersButNotAUniformRange) {
  std::mt19937 rng(3);
  std::normal_distribution<float> n(0, 1);
  std::vector<float> g(100000);
  for (float& v : g) v = n(rng);
  g[10] = 40.0f, g[11] = -35.0f;  // two outliers stretch min-max tenfold
  ActivationHistogram gh;
  gh.add(g.data(), int64_t(g.size()));
  const auto [glo, ghi] = gh.entropy_range();
  EXPECT_GT(ghi, 2.5f);
  EXPECT_LT(ghi, 10.0f) << "the outliers are clipped";
  EXPECT_LT(glo, -2.5f);
  std::vector<float> u(100000);
  std::uniform_real_distribution<float> ud(0.0f, 6.0f);
  for (float& v : u) v = ud(rng);
  ActivationHistogram uh;
  uh.add(u.data(), int64_t(u.size()));
  const auto [ulo, uhi] = uh.entropy_range();
  EXPECT_EQ(ulo, 0.0f) << "one-signed data stays one-signed";
  EXPECT_GT(uhi, 0.95f * uh.hi()) << "a uniform range loses by clipping";
}

TEST(ActivationHistogram, ARelusZerosDoNotDecideTheRange) {
  // Half the values of a Relu's output are exactly 0. In KL that spike dominates every
  // candidate whose level holding 0 merges several bins, and the narrowest candidates won (a
  // MobileNetV3 layer's input clipped to 1/4 of its range: the model's cosine 0.99 -> 0.30);
  // the zero bin takes its neighbours' count first, as TensorRT's calibrator does. mse
  // charges the zeros no rounding error (they quantize exactly).
  std::mt19937 rng(5);
  std::normal_distribution<float> n(0, 1);
  std::vector<float> x(200000);
  for (float& v : x) v = std::max(0.0f, n(rng));
  ActivationHistogram h;
  h.add(x.data(), int64_t(x.size()));
  const auto [elo, ehi] = h.entropy_range();
  const auto [mlo, mhi] = h.mse_range();
  EXPECT_EQ(elo, 0.0f);
  EXPECT_EQ(mlo, 0.0f);
  EXPECT_GT(ehi, 0.6f * h.hi()) << "max " << h.hi();
  EXPECT_GT(mhi, 0.6f * h.hi()) << "max " << h.hi();
}

TEST(ActivationHistogram, OneSignedAndEmptyInputs) {
  std::vector<float> neg = laplace(50000, 2.0, 4);
  for (float& v : neg) v = -std::abs(v);
  ActivationHistogram h;
  h.add(neg.data(), int64_t(neg.size()));
  for (auto [lo, hi] : {h.entropy_range(), h.mse_range()}) {
    EXPECT_EQ(hi, 0.0f);
    EXPECT_LT(lo, 0.0f);
    EXPECT_GE(lo, h.lo());
  }
  ActivationHistogram zeros;
  const float z[] = {0.0f, 0.0f, -0.0f};
  zeros.add(z, 3);
  EXPECT_EQ(zeros.count(), 3);
  EXPECT_EQ(zeros.mse_range(), std::make_pair(0.0f, 0.0f));
  EXPECT_EQ(ActivationHistogram().entropy_range(), std::make_pair(0.0f, 0.0f));
}

}  // namespace
}  // namespace ferry
