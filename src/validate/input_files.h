// validate/input_files.h — input values from a file: `ferry validate --inputs`.
//
//   FILE.npz   every array names a model input (a name the model lacks is an
//              error, so a typo never silently falls back to random values)
//   DIR        a golden directory (manifest.json), or a directory of NAME.npy
//              files; entries that name model inputs are used, the rest (e.g.
//              a golden directory's outputs) ignored
// Inputs not given are left to the caller (seeded random values).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/tensor.h"

namespace ferry::validate {

/// Reads input tensors for a model with inputs `input_names` (see above).
Result<std::map<std::string, Tensor>> read_input_file(const std::string& path,
                                                      const std::vector<std::string>& input_names);

}  // namespace ferry::validate
