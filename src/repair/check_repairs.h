// repair/check_repairs.h — `ferry convert --repair --check-repairs`: each repair's
// numerical check on the model's own shapes.
//
// The repaired model runs once in the reference interpreter on seeded random
// inputs (runtime/random_inputs.h), which gives every repaired node its real
// input tensors. Each repaired node is then cut out as a one-node ONNX model
// (the original contrib node, its initializers, those tensors as inputs) and run
// twice: by ONNX Runtime, which implements the contrib op itself, and by ferry
// (import with repairs, reference interpreter). The outputs must agree within
// |ferry - ort| <= atol + rtol |ort|. A node an op library entry replaced is checked
// the same way against the entry's Python reference function instead of ONNX Runtime
// (python -m ferry.reference oplib). Without ONNX Runtime (no Python bridge, the
// package missing) the check is "not run", with the reason: never "passed".
#pragma once

#include <string>
#include <vector>

#include "frontends/frontend.h"
#include "repair/op_library.h"
#include "runtime/random_inputs.h"

namespace ferry::repair {

struct RepairCheckOptions {
  RandomInputOptions inputs;  ///< seed and --shape overrides for the model's inputs
  double rtol = 1e-4;
  double atol = 1e-5;
  /// The op library the model was loaded with: its entries' repairs are checked against
  /// the reference function a Python op library registered (none: "not run", said why).
  std::shared_ptr<const OpLibrary> op_library;
};

/// Fills check / check_detail of every record in `repairs` (the import report of
/// `repaired`, loaded from `model_path` with repairs on). Fails only when the
/// model itself cannot run; a failed or impossible check is recorded, not returned.
Status check_repairs(const std::string& model_path, const Graph& repaired, std::vector<RepairRecord>* repairs,
                     const RepairCheckOptions& options);

}  // namespace ferry::repair
