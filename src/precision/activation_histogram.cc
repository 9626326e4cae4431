// precision/activation_histogram.cc — see activation_histogram.h.
#include "precision/activation_histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace ferry {
namespace {

constexpr int kLevels = 256;       // u8
constexpr int kCandidateStep = 4;  // candidates k = kBins, kBins - 4, ..., 256

int64_t floor_half(int64_t i) { return i >= 0 ? i / 2 : -((-i + 1) / 2); }

/// KL(P || Q) of the candidate that keeps bins [start, end) of h (activation_histogram.h).
double kl_score(const std::vector<double>& h, int start, int end) {
  const int k = end - start;
  std::vector<double> p(h.begin() + start, h.begin() + end);
  p.front() += std::accumulate(h.begin(), h.begin() + start, 0.0);
  p.back() += std::accumulate(h.begin() + end, h.end(), 0.0);
  std::vector<double> q(size_t(k), 0.0);
  const int merged = k / kLevels;
  for (int g = 0; g < kLevels; ++g) {
    const int b = g * merged, e = g == kLevels - 1 ? k : b + merged;
    double sum = 0, nonzero = 0;
    for (int i = b; i < e; ++i) sum += h[size_t(start + i)], nonzero += p[size_t(i)] != 0;
    for (int i = b; i < e; ++i)
      if (p[size_t(i)] != 0) q[size_t(i)] = sum / nonzero;
  }
  const double ptot = std::accumulate(p.begin(), p.end(), 0.0), qtot = std::accumulate(q.begin(), q.end(), 0.0);
  if (ptot == 0 || qtot == 0) return std::numeric_limits<double>::infinity();
  double kl = 0;
  for (int i = 0; i < k; ++i) {
    if (p[size_t(i)] == 0) continue;
    const double pi = p[size_t(i)] / ptot, qi = std::max(q[size_t(i)], 1e-4) / qtot;  // 1e-4: a smoothed empty bin
    kl += pi * std::log(pi / qi);
  }
  return kl;
}

/// The expected squared error of quantizing h to 256 levels over bins [start, end); the
/// exact zeros of bin `zero` cost nothing (the zero point is exact).
double mse_score(const std::vector<double>& h, int start, int end, double lo, double width, int zero, double zeros) {
  const double step = (end - start) * width / (kLevels - 1);
  const double left = lo + start * width, right = lo + end * width;
  double err = 0;
  for (int j = 0; j < int(h.size()); ++j) {
    if (h[size_t(j)] == 0) continue;
    const double c = lo + (j + 0.5) * width;
    const double d = j < start ? left - c : j >= end ? c - right : 0.0;
    const double n = j == zero ? h[size_t(j)] - zeros : h[size_t(j)];
    err += n * (j < start || j >= end ? d * d : step * step / 12);
  }
  return err;
}

}  // namespace

void ActivationHistogram::add(const float* p, int64_t n) {
  float lo = 0, hi = 0;
  double finite = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(p[i])) lo = std::min(lo, p[i]), hi = std::max(hi, p[i]), ++finite, exact_zeros_ += p[i] == 0;
  lo_ = std::min(lo_, lo), hi_ = std::max(hi_, hi);
  if (width_ == 0) {
    if (hi == lo) {  // only zeros so far: no width to bin them with
      zeros_ += finite;
      return;
    }
    width_ = (double(hi) - double(lo)) / kBins;
  }
  make_room(int64_t(std::floor(lo / width_)), int64_t(std::floor(hi / width_)));
  if (zeros_ > 0) counts_[size_t(-first_)] += zeros_, zeros_ = 0;
  const int64_t last = int64_t(counts_.size()) - 1;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(p[i]))
      counts_[size_t(std::clamp(int64_t(std::floor(p[i] / width_)) - first_, int64_t(0), last))] += 1;
}

void ActivationHistogram::make_room(int64_t first_bin, int64_t last_bin) {
  if (counts_.empty()) first_ = std::min<int64_t>(first_bin, 0), counts_.assign(1, 0.0);
  first_bin = std::min({first_bin, first_, int64_t(0)});
  last_bin = std::max({last_bin, first_ + int64_t(counts_.size()) - 1, int64_t(0)});
  while (last_bin - first_bin + 1 > 8 * int64_t(kBins)) {  // twice the width: merge neighbour pairs
    const int64_t first = floor_half(first_);
    std::vector<double> merged(size_t(floor_half(first_ + int64_t(counts_.size()) - 1) - first + 1), 0.0);
    for (size_t i = 0; i < counts_.size(); ++i) merged[size_t(floor_half(first_ + int64_t(i)) - first)] += counts_[i];
    counts_ = std::move(merged), first_ = first, width_ *= 2;
    first_bin = floor_half(first_bin), last_bin = floor_half(last_bin);
  }
  if (first_bin < first_) counts_.insert(counts_.begin(), size_t(first_ - first_bin), 0.0), first_ = first_bin;
  const int64_t last = first_ + int64_t(counts_.size()) - 1;
  if (last_bin > last) counts_.resize(counts_.size() + size_t(last_bin - last), 0.0);
}

double ActivationHistogram::count() const { return std::accumulate(counts_.begin(), counts_.end(), zeros_); }

std::vector<double> ActivationHistogram::over_range() const {
  std::vector<double> out(size_t(kBins), 0.0);
  if (hi_ == lo_) return out;
  const double w = (double(hi_) - double(lo_)) / kBins;
  auto bin = [&](int64_t j) { return size_t(std::clamp(j, int64_t(0), int64_t(kBins - 1))); };
  // a collected bin (never wider than an output bin) shares its count with the one or two
  // output bins it overlaps, in proportion: no empty bins from the two grids' beat
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    const double a = double(first_ + int64_t(i)) * width_ - lo_;
    const int64_t j = int64_t(std::floor(a / w));
    const double in_j = std::clamp((double(j + 1) * w - a) / width_, 0.0, 1.0);
    out[bin(j)] += counts_[i] * in_j;
    out[bin(j + 1)] += counts_[i] * (1 - in_j);
  }
  return out;  // zeros_ is non-zero only while every value was 0 (hi == lo, returned above)
}

namespace {

/// The candidate with the lowest score (activation_histogram.h); widest first, so ties keep it.
/// `score(h, start, end, lo, width, zero_bin)`.
template <typename Score>
std::pair<float, float> choose(const ActivationHistogram& a, Score score) {
  if (a.hi() == a.lo()) return {a.lo(), a.hi()};
  const std::vector<double> h = a.over_range();
  const int m = ActivationHistogram::kBins;
  const double w = (double(a.hi()) - double(a.lo())) / m, zero = -double(a.lo()) / w;
  const int zero_bin = int(std::clamp<double>(std::floor(zero), 0, m - 1));
  double best = std::numeric_limits<double>::infinity();
  int best_start = 0, best_end = m;
  for (int k = m; k >= kLevels; k -= kCandidateStep) {
    const int start = int(std::clamp<long long>(std::llround(zero * (1.0 - double(k) / m)), 0, m - k));
    const double s = score(h, start, start + k, double(a.lo()), w, zero_bin);
    if (s < best) best = s, best_start = start, best_end = start + k;
  }
  return {std::min(0.0f, float(a.lo() + best_start * w)), std::max(0.0f, float(a.lo() + best_end * w))};
}

}  // namespace

std::pair<float, float> ActivationHistogram::entropy_range() const {
  return choose(*this, [](std::vector<double> h, int s, int e, double, double, int zero) {
    // The bin holding 0 takes its neighbours' count (TensorRT's `bins[0] = bins[1]`): a Relu's
    // zeros, half of its values, would otherwise decide the KL and pick a far too narrow range.
    const int n = int(h.size());
    h[size_t(zero)] = zero == 0 ? h[1] : zero == n - 1 ? h[size_t(n - 2)] : (h[size_t(zero - 1)] + h[size_t(zero + 1)]) / 2;
    return kl_score(h, s, e);
  });
}

std::pair<float, float> ActivationHistogram::mse_range() const {
  return choose(*this, [this](const std::vector<double>& h, int s, int e, double lo, double w, int zero) {
    return mse_score(h, s, e, lo, w, zero, exact_zeros_);
  });
}

}  // namespace ferry
