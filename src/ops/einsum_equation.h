// ops/einsum_equation.h — Einsum's equation, parsed (ops/einsum.cc), for the kernel and the passes.
//
// Labels are 0-25 for 'a'-'z' and 26-51 for 'A'-'Z'. In implicit mode (no "->")
// the output is "..." (when any operand has one) and the labels that appear
// exactly once, in ASCII order.
#pragma once

#include <string>
#include <vector>

#include "ferry/status.h"

namespace ferry {

/// One side of the equation: labels in order, and where "..." sits among them.
struct EinsumTerm {
  std::vector<int> labels;
  int ellipsis = -1;  ///< index into labels where "..." goes, -1 if absent
};

struct EinsumEquation {
  std::vector<EinsumTerm> inputs;
  EinsumTerm output;
  bool explicit_output = false;
};

/// Parses `equation` for a node with `num_inputs` operands; an invalid_model
/// status says what is wrong with it.
Result<EinsumEquation> parse_einsum_equation(const std::string& equation, size_t num_inputs);

}  // namespace ferry
