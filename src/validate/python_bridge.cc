#include "validate/python_bridge.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace ferry::validate {
namespace {

namespace fs = std::filesystem;

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

/// First `name` on PATH that is executable; "" if none.
std::string search_path(const std::string& name) {
  std::stringstream path(env_or_empty("PATH"));
  std::string dir;
  while (std::getline(path, dir, ':'))
    if (!dir.empty() && is_executable(fs::path(dir) / name)) return (fs::path(dir) / name).string();
  return "";
}

/// The last `max_lines` lines of a file, at most ~4 KiB, for an error message.
std::string log_tail(const std::string& path, size_t max_lines = 15) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > 4096) text = "..." + text.substr(text.size() - 4096);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  size_t pos = text.size(), lines = 0;
  while (pos > 0 && lines < max_lines)
    if (text[--pos] == '\n') ++lines;
  return lines == max_lines ? text.substr(pos + 1) : text;
}

}  // namespace

std::string executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

std::string find_repo_python_dir(const std::string& start) {
  if (start.empty()) return "";
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(start, ec);
  if (ec) dir = start;
  for (int up = 0; up <= 6 && !dir.empty(); ++up) {
    if (fs::is_regular_file(dir / "python" / "ferry" / "reference.py", ec)) return (dir / "python").string();
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return "";
}

Result<PythonBridge> find_python_bridge() {
  PythonBridge b;
  b.python_dir = env_or_empty("FERRY_PYTHON_DIR");
  if (b.python_dir.empty()) b.python_dir = find_repo_python_dir(executable_dir());
  const std::string repo = b.python_dir.empty() ? "" : fs::path(b.python_dir).parent_path().string();

  if (std::string p = env_or_empty("FERRY_PYTHON"); !p.empty()) {
    // A bare name ("python3.11") is looked up on PATH, like a shell would.
    std::string resolved = p.find('/') == std::string::npos ? search_path(p) : p;
    if (resolved.empty() || !is_executable(resolved))
      return invalid_argument("FERRY_PYTHON='" + p + "' is not an executable Python interpreter");
    b.python = resolved;
    b.found_via = "FERRY_PYTHON";
    return b;
  }
  std::vector<std::string> tried = {"FERRY_PYTHON (unset)"};
  if (!repo.empty()) {
    fs::path venv = fs::path(repo) / ".venv" / "bin" / "python";
    if (is_executable(venv)) {
      b.python = venv.string();
      b.found_via = "the repository's .venv";
      return b;
    }
    tried.push_back(venv.string());
  }
  if (std::string p = search_path("python3"); !p.empty()) {
    b.python = p;
    b.found_via = "python3 on PATH";
    return b;
  }
  tried.push_back("python3 on PATH");
  std::string list;
  for (const std::string& t : tried) list += (list.empty() ? "" : ", ") + t;
  return unsupported("no Python interpreter found for the reference bridge (tried " + list +
                     "); set FERRY_PYTHON=/path/to/python, an interpreter with numpy, onnx and onnxruntime");
}

Result<int> spawn_python_module(const PythonBridge& bridge, const std::string& module,
                                const std::vector<std::string>& args, const std::string& log_path) {
  std::vector<std::string> argv_s = {bridge.python, "-m", module};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);

  // The environment, with the package directory in front of PYTHONPATH and no
  // .pyc files written into the source tree.
  std::vector<std::string> env_s;
  std::string old_path;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    if (kv.rfind("PYTHONPATH=", 0) == 0)
      old_path = kv.substr(11);
    else if (kv.rfind("PYTHONDONTWRITEBYTECODE=", 0) != 0)
      env_s.push_back(kv);
  }
  std::string path = bridge.python_dir;
  if (!old_path.empty()) path += (path.empty() ? "" : ":") + old_path;
  if (!path.empty()) env_s.push_back("PYTHONPATH=" + path);
  env_s.push_back("PYTHONDONTWRITEBYTECODE=1");
  std::vector<char*> envp;
  for (std::string& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!log_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  pid_t pid = 0;
  int rc = posix_spawn(&pid, bridge.python.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return unsupported("cannot start the Python interpreter '" + bridge.python + "' (from " + bridge.found_via +
                       "): " + std::strerror(rc) + "; set FERRY_PYTHON to a working interpreter");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return internal_error(std::string("waitpid failed: ") + std::strerror(errno));
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

Status run_python_bridge(const PythonBridge& bridge, const std::vector<std::string>& args,
                         const std::string& log_path) {
  FERRY_ASSIGN_OR_RETURN(int code, spawn_python_module(bridge, "ferry.reference", args, log_path));
  const std::string who = bridge.python + " -m ferry.reference (interpreter from " + bridge.found_via + ")";
  if (code > 128)
    return internal_error(who + " was killed by signal " + std::to_string(code - 128) + ":\n" + log_tail(log_path));
  if (code == 0) return Status::Ok();
  std::string tail = log_tail(log_path);
  if (tail.find("No module named ferry") != std::string::npos ||
      tail.find("No module named 'ferry'") != std::string::npos)
    return unsupported(who +
                       " cannot import the ferry package; set FERRY_PYTHON_DIR to the repository's python/ "
                       "directory (searched above the ferry executable" +
                       (bridge.python_dir.empty() ? std::string(", not found") : ": " + bridge.python_dir) + ")");
  // reference.py: 3 = a package is missing, 4 = the model or inputs failed; its message is the last line.
  StatusCode sc = code == 3 ? StatusCode::kUnsupported : StatusCode::kInvalidModel;
  return Status(sc, who + " failed (exit status " + std::to_string(code) + "):\n" + tail);
}

}  // namespace ferry::validate
