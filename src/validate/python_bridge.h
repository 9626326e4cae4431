// validate/python_bridge.h — running `python -m ferry.reference` from C++.
//
// Framework references (onnxruntime today; TensorFlow and PyTorch later) run
// in Python and write a golden directory. ferry finds them like this:
//
//   interpreter   $FERRY_PYTHON if set; else <repo>/.venv/bin/python when it
//                 exists; else the first python3 on PATH
//   package dir   $FERRY_PYTHON_DIR if set; else <repo>/python, where <repo>
//                 is the nearest directory above the ferry executable holding
//                 python/ferry/reference.py (a build tree inside the repo);
//                 it is prepended to PYTHONPATH. Without one, `ferry` must be
//                 importable by the interpreter itself (an installed package).
//
// The bridge is started directly (no shell), its stdout and stderr go to a log
// file, and a failure comes back as an error holding the end of that log
// (e.g. "the Python package 'onnxruntime' is not importable in ...").
#pragma once

#include <string>
#include <vector>

#include "ferry/status.h"

namespace ferry::validate {

/// How to start the Python side.
struct PythonBridge {
  std::string python;      ///< interpreter path
  std::string python_dir;  ///< prepended to PYTHONPATH ("" = none)
  std::string found_via;   ///< how the interpreter was chosen, for messages
};

/// Locates the interpreter and the package directory as described above.
/// Fails, saying what was tried, when no interpreter exists.
Result<PythonBridge> find_python_bridge();

/// Runs `<python> -m <module> <args...>` with the bridge's environment and
/// waits. stdout and stderr go to `log_path` (stdin from /dev/null), or stay
/// the caller's when `log_path` is "". Returns the exit status, 128 + the
/// signal number when the interpreter was killed; fails only when it cannot start.
Result<int> spawn_python_module(const PythonBridge& bridge, const std::string& module,
                                const std::vector<std::string>& args, const std::string& log_path);

/// Runs `<python> -m ferry.reference <args...>` and waits. stdout and stderr
/// go to `log_path`. Errors carry the exit status and the log's last lines.
Status run_python_bridge(const PythonBridge& bridge, const std::vector<std::string>& args, const std::string& log_path);

/// The ferry executable's directory (from /proc/self/exe); "" if unknown.
std::string executable_dir();

/// The repository's python/ directory above `start` (at most 6 levels up); "" if none.
std::string find_repo_python_dir(const std::string& start);

}  // namespace ferry::validate
