// validate/metrics.h — how far a tensor is from its reference.
//
// For got g and reference r over the n positions where both are finite
// (e_i = |g_i − r_i|):
//   max_abs   = max e_i
//   mean_abs  = Σ e_i / n
//   max_rel   = max e_i / max(|r_i|, 1e-6)   (the floor keeps exact zeros in r from
//                                             making it infinite)
//   rmse      = sqrt(Σ e_i² / n)
//   cosine    = Σ g_i·r_i / (‖g‖·‖r‖); 1 when both are all zero, 0 when only one is
//   worst     = max e_i / (atol + rtol·|r_i|): the element that most exceeds (> 1)
//               or comes nearest to (<= 1) its tolerance; with atol = rtol = 0 it
//               is 0 for equal elements and +inf otherwise
// Non-finite values: NaN matches NaN and ±Inf matches the same Inf; any other
// pairing (NaN or Inf where the reference is finite, or the reverse) is a
// non-finite mismatch, which fails whatever the tolerance.
// A tensor passes when shapes agree, dtypes are compatible (equal, or both
// floating), no non-finite mismatch, and every element is within tolerance.
//
// Classifier-like outputs (floating, rank 2, [batch, classes >= 5]) also get
// top-1 agreement (fraction of rows whose argmax is the same) and top-5
// agreement (fraction of rows whose five largest classes are the same set).
// Ties go to the lower class index, on both sides.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "validate/tolerance.h"

namespace ferry::validate {

/// Denominator floor of the relative error.
inline constexpr double kRelErrorFloor = 1e-6;

/// Top-k agreement over the rows of a [batch, classes] output.
struct ClassifierAgreement {
  int64_t rows = 0;
  double top1 = 0;  ///< fraction of rows whose argmax agrees
  double top5 = 0;  ///< fraction of rows whose top-5 sets agree
};

struct TensorMetrics {
  int64_t numel = 0;
  int64_t compared = 0;  ///< positions where both values are finite
  double max_abs = 0;
  double mean_abs = 0;
  double max_rel = 0;
  double rmse = 0;
  double cosine = 1;
  double worst_ratio = 0;    ///< max e_i / (atol + rtol·|r_i|) (see above)
  int64_t worst_index = -1;  ///< flat index of worst_ratio (-1: none)
  double worst_got = 0, worst_ref = 0;
  int64_t out_of_tolerance = 0;  ///< finite positions with e_i > atol + rtol·|r_i|
  int64_t nonfinite_mismatch = 0;
  int64_t first_nonfinite_index = -1;
  int64_t got_nan = 0, got_inf = 0, ref_nan = 0, ref_inf = 0;
  std::optional<ClassifierAgreement> classifier;
};

/// The outcome of comparing one tensor with its reference.
struct Comparison {
  bool pass = false;
  /// Why it failed, in words ("3 of 1000 elements out of tolerance", "shape ...").
  std::string problem;
  DType got_dtype = DType::undefined, ref_dtype = DType::undefined;
  std::vector<int64_t> got_dims, ref_dims;
  Tolerance tol;
  TensorMetrics metrics;  ///< zero when shapes or dtypes are incompatible
};

/// Compares `got` with `ref` under `tol` (see the file comment for the formulas).
Comparison compare_tensors(const Tensor& got, const Tensor& ref, const Tolerance& tol);

/// Top-1 / top-5 agreement when both are classifier-like (see above); nullopt otherwise.
std::optional<ClassifierAgreement> classifier_agreement(const Tensor& got, const Tensor& ref);

/// "[1,1000]"
std::string dims_string(const std::vector<int64_t>& dims);

}  // namespace ferry::validate
