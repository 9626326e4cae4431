// tools/ferry/input_files.h — `--input NAME=FILE.npy` for the commands that run a model
// (`ferry run`, `ferry bench`): the syntax check before the model loads, then reading
// and checking each file against the model's inputs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "ir/graph.h"

namespace ferry::cli {

/// Checks that every text is NAME=FILE (a usage error otherwise, for `command`).
/// Returns an exit code, or -1 to go on.
int check_input_syntax(const char* command, const std::vector<std::string>& texts);

/// Reads every NAME=FILE.npy and checks it against g's input NAME (dtype, rank, static
/// dims); errors name the file. `files` (optional) gets NAME -> FILE. Returns an exit
/// code, or -1 to go on.
int read_input_files(const char* command, const std::vector<std::string>& texts, const Graph& g,
                     std::map<std::string, Tensor>* given, std::map<std::string, std::string>* files = nullptr);

}  // namespace ferry::cli
