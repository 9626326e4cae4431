// repair/narrow_f64.h — `ferry convert --narrow-f64`: a float64 graph computed in
// float32, its interface kept, the error measured.
//
// Every f64 constant becomes f32 (rounded once), every f64 graph input is read
// through Cast(to f32) and every f64 graph output written through Cast(to f64), so
// callers feed and get the same dtypes; dtype attributes that say f64 (Cast's
// `to`, EyeLike's `dtype`, Dequantize's `output_dtype`, ConstantOfShape's value)
// say f32; subgraphs (If, Loop, Scan) are narrowed the same way. Shapes are then
// inferred again: what cannot compute in f32 fails with the node named and the
// graph is left as it was. Integer tensors are not touched.
//
// check_narrowing runs the original (f64) and the narrowed graph on the same
// seeded random inputs in the reference interpreter and records the error.
#pragma once

#include "frontends/frontend.h"
#include "ir/graph.h"
#include "runtime/random_inputs.h"

namespace ferry::repair {

struct NarrowF64Counts {
  int64_t constants = 0;  ///< f64 constants rounded to f32
  int64_t inputs = 0;     ///< f64 graph inputs read through a Cast
  int64_t outputs = 0;    ///< f64 graph outputs written through a Cast
  int64_t attributes = 0; ///< dtype attributes changed
  bool changed() const { return constants + inputs + outputs + attributes > 0; }
};

/// Narrows `g` in place (see above). A graph without f64 is returned unchanged.
Result<NarrowF64Counts> narrow_f64(Graph& g);

/// The repair record of a narrowing: `check` "passed" when every output of `narrowed`
/// is within atol + rtol |f64| of `original`'s on seeded random inputs, else "failed";
/// `check_detail` gives the largest absolute and relative errors.
Result<RepairRecord> check_narrowing(const Graph& original, const Graph& narrowed, const NarrowF64Counts& counts,
                                     const RandomInputOptions& inputs, double rtol = 1e-3, double atol = 1e-5);

}  // namespace ferry::repair
