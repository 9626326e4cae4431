// tests/kernels/kernel_test_util.h — compare a fast kernel (or a compiled
// session) with the reference interpreter on one op.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../ops/linalg_test_util.h"

namespace ferry::testing {

/// N(0,1)-ish f32 tensor from a seeded generator.
inline Tensor randn(std::vector<int64_t> dims, uint32_t seed) {
  Tensor t = Tensor::empty(DType::f32, std::move(dims));
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

/// |got - want| <= rtol * max(1, |want|) elementwise; NaN matches NaN.
inline ::testing::AssertionResult close(const Tensor& got, const Tensor& want, double rtol) {
  if (got.dims() != want.dims() || got.dtype() != want.dtype())
    return ::testing::AssertionFailure() << "got " << got.type_string() << ", want " << want.type_string();
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.get_double(i), w = want.get_double(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (!(std::fabs(g - w) <= rtol * std::max(1.0, std::fabs(w))))
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ferry::testing
