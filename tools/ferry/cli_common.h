// tools/ferry/cli_common.h — what every `ferry` subcommand shares: exit codes,
// the one-line error format, option-value parsing and number formatting.
//
// A subcommand is one file, cmd_<name>.cc, defining
//   cli::Action add_<name>_command(CLI::App& app);
// which adds its CLI::App subcommand and options and returns the function to
// run once parsing succeeded; main.cc lists it in FERRY_COMMANDS.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ferry/status.h"
#include "ir/shape.h"

namespace ferry::cli {

#ifdef FERRY_VERSION
inline constexpr const char* kVersion = FERRY_VERSION;
#else
inline constexpr const char* kVersion = "0.1.0";  // keep in step with project(VERSION) in CMakeLists.txt
#endif

/// Process exit codes (documented in --help and docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,       ///< bad command line
  kExitModelError = 2,  ///< the model or an input could not be loaded or run
  kExitValidate = 3,    ///< reserved: `ferry validate` found a mismatch
};

/// The exit-code table printed at the end of every --help.
const char* exit_code_footer();

/// What a subcommand does once its options are parsed; returns the exit code.
using Action = std::function<int()>;

/// Prints `ferry: error: <file>: <message>` (or without the file when empty)
/// to stderr and returns kExitModelError. A leading "model '<file>': " context
/// is dropped from the message, since the line already names the file.
int model_error(const std::string& file, const Status& status);
/// Prints `ferry: error: <message>` and a pointer to --help; returns kExitUsage.
int usage_error(const std::string& command, const std::string& message);

/// "1x3x224x224" or "1,3,224,224" -> dims; "" or "scalar" -> rank 0.
Result<std::vector<int64_t>> parse_dims(const std::string& text);
/// "NAME=VALUE" -> (NAME, VALUE), split at the first '=' whose left side is
/// one of `known_names`, else at the first '='. Empty NAME is an error.
Result<std::pair<std::string, std::string>> split_assignment(const std::string& text,
                                                             const std::vector<std::string>& known_names = {});

/// 25557032 -> "25,557,032".
std::string group_thousands(int64_t v);
/// 102236160 -> "97.5 MiB".
std::string human_bytes(int64_t bytes);
/// 8210000000 -> "8.21 G".
std::string human_count(double v);

/// JSON with keys in insertion order, so output reads top-down like the text form.
using Json = nlohmann::ordered_json;
/// Serializes for stdout; invalid UTF-8 in names from a malformed model is replaced, never thrown.
std::string dump_json(const Json& j);

/// Shape as JSON: [ "N", 3, 224, 224 ], "?" for unknown dims, null for unknown rank.
Json shape_json(const Shape& shape);
/// ONNX domain name for display: "" -> "ai.onnx".
std::string domain_name(const std::string& domain);

}  // namespace ferry::cli
