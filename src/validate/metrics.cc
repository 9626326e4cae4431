#include "validate/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace ferry::validate {
namespace {

/// Indices of the k largest values of row `row` (ties: lower index first; NaN
/// ranks below everything), in descending order. k is small (<= 5): a
/// selection loop is simpler than a sort with a NaN-safe comparator.
std::vector<int64_t> top_k(const Tensor& t, int64_t row, int64_t classes, int64_t k) {
  std::vector<int64_t> chosen;
  auto rank_value = [](double v) { return std::isnan(v) ? -std::numeric_limits<double>::infinity() : v; };
  for (int64_t j = 0; j < k; ++j) {
    int64_t best = -1;
    double best_v = 0;
    for (int64_t c = 0; c < classes; ++c) {
      if (std::find(chosen.begin(), chosen.end(), c) != chosen.end()) continue;
      double v = rank_value(t.get_double(row * classes + c));
      if (best < 0 || v > best_v) best = c, best_v = v;
    }
    chosen.push_back(best);
  }
  return chosen;
}

bool classifier_like(const Tensor& t) { return is_floating(t.dtype()) && t.rank() == 2 && t.dim(1) >= 5; }

/// Elements equal bit for bit (same-dtype integers and bool: exactness
/// without the double or int64 round trip that u64 would not survive).
bool same_bytes(const Tensor& a, const Tensor& b, int64_t i) {
  size_t w = dtype_size(a.dtype());
  if (a.dtype() == DType::boolean) return (a.raw()[i] != 0) == (b.raw()[i] != 0);
  return std::memcmp(a.raw() + size_t(i) * w, b.raw() + size_t(i) * w, w) == 0;
}

}  // namespace

std::string dims_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::optional<ClassifierAgreement> classifier_agreement(const Tensor& got, const Tensor& ref) {
  if (!classifier_like(got) || !classifier_like(ref) || got.dims() != ref.dims() || got.dim(0) == 0)
    return std::nullopt;
  const int64_t rows = got.dim(0), classes = got.dim(1);
  int64_t agree1 = 0, agree5 = 0;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> g = top_k(got, r, classes, 5), f = top_k(ref, r, classes, 5);
    agree1 += g[0] == f[0];
    std::sort(g.begin(), g.end());
    std::sort(f.begin(), f.end());
    agree5 += g == f;
  }
  return ClassifierAgreement{rows, double(agree1) / double(rows), double(agree5) / double(rows)};
}

Comparison compare_tensors(const Tensor& got, const Tensor& ref, const Tolerance& tol) {
  Comparison c;
  c.got_dtype = got.dtype();
  c.ref_dtype = ref.dtype();
  c.got_dims = got.dims();
  c.ref_dims = ref.dims();
  c.tol = tol;
  const bool both_float = is_floating(got.dtype()) && is_floating(ref.dtype());
  if (got.dtype() != ref.dtype() && !both_float) {
    c.problem =
        std::string("dtype ") + dtype_name(got.dtype()) + " differs from the reference's " + dtype_name(ref.dtype());
    return c;
  }
  if (got.dims() != ref.dims()) {
    c.problem = "shape " + dims_string(got.dims()) + " differs from the reference's " + dims_string(ref.dims());
    return c;
  }

  TensorMetrics& m = c.metrics;
  m.numel = got.numel();
  const bool exact_bytes = got.dtype() == ref.dtype() && !is_floating(got.dtype());
  double sum_abs = 0, sum_sq = 0, dot = 0, norm_g = 0, norm_r = 0;
  for (int64_t i = 0; i < m.numel; ++i) {
    const double g = got.get_double(i), r = ref.get_double(i);
    const bool g_fin = std::isfinite(g), r_fin = std::isfinite(r);
    m.got_nan += std::isnan(g);
    m.got_inf += std::isinf(g);
    m.ref_nan += std::isnan(r);
    m.ref_inf += std::isinf(r);
    if (!g_fin || !r_fin) {
      const bool same = (std::isnan(g) && std::isnan(r)) || (std::isinf(g) && g == r);
      if (!same) {
        if (m.first_nonfinite_index < 0) m.first_nonfinite_index = i;
        ++m.nonfinite_mismatch;
      }
      continue;
    }
    ++m.compared;
    const double e = std::fabs(g - r);
    sum_abs += e;
    sum_sq += e * e;
    dot += g * r;
    norm_g += g * g;
    norm_r += r * r;
    m.max_abs = std::max(m.max_abs, e);
    m.max_rel = std::max(m.max_rel, e / std::max(std::fabs(r), kRelErrorFloor));
    const double allowed = tol.atol + tol.rtol * std::fabs(r);
    const bool within = exact_bytes ? same_bytes(got, ref, i) : e <= allowed;
    if (!within) ++m.out_of_tolerance;
    // A zero tolerance makes any difference infinitely far off.
    const double ratio =
        !within && allowed == 0 ? std::numeric_limits<double>::infinity() : (e == 0 ? 0.0 : e / allowed);
    if (m.worst_index < 0 || ratio > m.worst_ratio) {
      m.worst_ratio = ratio;
      m.worst_index = i;
      m.worst_got = g;
      m.worst_ref = r;
    }
  }
  if (m.compared > 0) {
    m.mean_abs = sum_abs / double(m.compared);
    m.rmse = std::sqrt(sum_sq / double(m.compared));
  }
  if (norm_g == 0 && norm_r == 0)
    m.cosine = 1;
  else if (norm_g == 0 || norm_r == 0)
    m.cosine = 0;
  else
    m.cosine = std::clamp(dot / (std::sqrt(norm_g) * std::sqrt(norm_r)), -1.0, 1.0);
  m.classifier = classifier_agreement(got, ref);

  if (m.nonfinite_mismatch > 0) {
    c.problem = std::to_string(m.nonfinite_mismatch) + " non-finite mismatch" +
                (m.nonfinite_mismatch == 1 ? "" : "es") + " (NaN/Inf where the reference differs; first at index " +
                std::to_string(m.first_nonfinite_index) + ")";
  } else if (m.out_of_tolerance > 0) {
    c.problem = std::to_string(m.out_of_tolerance) + " of " + std::to_string(m.numel) + " elements out of tolerance";
  }
  c.pass = c.problem.empty();
  return c;
}

}  // namespace ferry::validate
