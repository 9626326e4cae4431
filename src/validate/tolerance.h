// validate/tolerance.h — how close is close enough, per dtype.
//
// An element passes when |got − ref| <= atol + rtol·|ref| (numpy.allclose's
// rule, asymmetric: the reference sets the scale). Defaults, chosen so an
// exact implementation with a different summation order passes and a real bug
// does not (documented in docs/validate.md):
//
//   dtype        atol     rtol     why
//   f64          1e-9     1e-7     ~2^-53 eps, long reductions
//   f32          1e-3     1e-3     ~2^-24 eps, but deep nets drift: measured against
//                                  ONNX Runtime, every small end-to-end model (tests/models)
//                                  stays below 0.5 of this, intermediates included
//   f16          1e-2     1e-2     2^-11 eps
//   bf16         5e-2     5e-2     2^-8 eps
//   integers     0        0        exact
//   bool         0        0        exact
//
// --atol / --rtol override every floating dtype; `--tol DTYPE=ATOL,RTOL`
// overrides one dtype (applied after, so it wins).
#pragma once

#include <map>
#include <string>

#include "ferry/status.h"
#include "ir/dtype.h"

namespace ferry::validate {

/// Absolute and relative tolerance for one dtype.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

/// Tolerances for every dtype: the defaults above, plus overrides.
class ToleranceTable {
 public:
  /// The documented defaults.
  ToleranceTable();
  /// The tolerance for a dtype (undefined -> exact).
  Tolerance get(DType dtype) const;
  void set(DType dtype, Tolerance tol) { table_[dtype] = tol; }
  /// Sets atol for every floating dtype (--atol).
  void set_float_atol(double atol);
  /// Sets rtol for every floating dtype (--rtol).
  void set_float_rtol(double rtol);
  /// Parses and applies "f16=1e-2,1e-3" (atol, then rtol). Errors name the text.
  Status apply_override(const std::string& text);

 private:
  std::map<DType, Tolerance> table_;
};

/// The tolerance to compare a `got` tensor against a `ref` tensor with: the
/// looser of the two dtypes' (so an f32 result may be held to a bf16 golden).
Tolerance tolerance_for(const ToleranceTable& table, DType got, DType ref);

}  // namespace ferry::validate
