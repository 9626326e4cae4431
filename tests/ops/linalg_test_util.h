// tests/ops/linalg_test_util.h — test data shared by the conv, pool, gemm,
// matmul and einsum tests and by gen_linalg_refs.py (which pastes ONNX Runtime
// outputs computed on the same inputs).
#pragma once

#include <initializer_list>
#include <utility>
#include <vector>

#include "op_test_util.h"

namespace ferry::testing {

/// Multiples of 1/8 in [-1, 1]: exact in every float dtype.
inline std::vector<double> pattern(int64_t n, int seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = double((i * 37 + seed * 11) % 17 - 8) / 8.0;
  return v;
}
/// A tensor of `dims` filled with pattern(numel, seed).
inline Tensor pat(std::vector<int64_t> dims, int seed, DType t = DType::f32) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return make_tensor(t, dims, pattern(n, seed));
}
inline AttrValue ints(std::vector<int64_t> v) { return v; }
// attrs({{"name", value}, ...}) is in op_test_util.h.

}  // namespace ferry::testing
