// conformance/node_test.h — one ONNX backend node test: scope, run, compare.
//
// A case is a directory in the layout of onnx/backend/test/data/node:
//   <case>/model.onnx
//   <case>/test_data_set_<k>/input_<i>.pb, output_<i>.pb   (TensorProto)
//   <case>/data.json                                       (optional {"rtol", "atol"})
// input_<i> feeds the model's i-th graph input, output_<i> is the expected
// value of its i-th graph output.
//
// Each case goes through what a user's model goes through: import (ONNX
// frontend) -> optimize (the default pipeline) -> run (reference interpreter),
// and every output is compared with the suite's own rule (the onnx backend
// test runner's): same count, same dtype, same shape, and
//   |got - expected| <= atol + rtol * |expected|   elementwise,
// rtol = 1e-3, atol = 1e-7 unless data.json says otherwise; rtol is at least
// 2^-6 for bfloat16 outputs (two bf16 ULPs, like the runner); NaN must meet
// NaN and Inf the same Inf. Integer and bool outputs must be equal (stricter
// than numpy's allclose, which would let large integers differ).
//
// Outcomes:
//   passed        every data set matches
//   failed        a mismatch, or an error that is not "unsupported" (the reason says which)
//   unsupported   ferry reports the model unsupported (the importer's reasons)
//   out_of_scope  the case tests something ferry does not aim at (out_of_scope_reason)
#pragma once

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ferry/status.h"

namespace ferry::conformance {

enum class Outcome { passed, failed, unsupported, out_of_scope };

/// "passed", "failed", "unsupported", "out_of_scope".
const char* outcome_name(Outcome o);

struct CaseResult {
  std::string name;        ///< the case directory's name, e.g. "test_add_bcast"
  std::string op;          ///< the op under test: the model's only node ("" for multi-node models)
  Outcome outcome = Outcome::failed;
  std::string reason;      ///< why it did not pass (empty when passed)
  double max_abs_error = 0;  ///< over all compared outputs (finite positions)
  double worst_ratio = 0;    ///< max |got - expected| / (atol + rtol |expected|); <= 1 passes
};

/// Suite tolerances (the onnx backend runner's defaults).
inline constexpr double kDefaultRtol = 1e-3;
inline constexpr double kDefaultAtol = 1e-7;

/// Why a model is out of scope, or "" when it is in scope. Looks at the model
/// only (graph inputs and outputs, every node including subgraphs):
/// sequence / optional / map / string values, training ops and training modes,
/// the ai.onnx.ml domain, random generators. docs/conformance.md lists the
/// rules and why.
std::string out_of_scope_reason(const onnx::ModelProto& model);

/// Runs one case directory (never throws; errors become `failed` or `unsupported`).
CaseResult run_node_test(const std::string& case_dir);

}  // namespace ferry::conformance
