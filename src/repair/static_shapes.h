// repair/static_shapes.h — `ferry convert --shape NAME=DIMS --static-shapes`: the
// dims the user gives are written into the model. A symbol bound by one input
// (N = 1) is bound wherever it appears among the graph inputs; shapes are then
// inferred again, so later passes see static shapes (reshapes with static
// targets, attention and layout fusions that need them).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry::repair {

/// Binds `dims` (input name -> dims) into `g`'s inputs and re-infers shapes. Errors
/// name the input: not an input, rank or static dim different, a symbol given two values.
/// Returns the symbols bound, "N=1" each.
Result<std::vector<std::string>> bind_input_shapes(Graph& g, const std::map<std::string, std::vector<int64_t>>& dims);

}  // namespace ferry::repair
