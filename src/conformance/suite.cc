#include "conformance/suite.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

namespace ferry::conformance {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool has_model(const fs::path& d) {
  std::error_code ec;
  return fs::is_regular_file(d / "model.onnx", ec);
}

/// One running case: the child's pid, the read end of its pipe, what it sent so far.
struct Running {
  size_t index = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string text;
  Clock::time_point deadline;
  bool timed_out = false;
};

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += size_t(n);
  }
}

Result<Running> start(const std::string& case_dir, size_t index, double timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) return io_error(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return io_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {  // child: run, report, leave without running the parent's atexit handlers
    ::close(fds[0]);
    std::string msg;
    try {
      msg = case_result_to_json(run_node_test(case_dir));
    } catch (const std::exception& e) {
      CaseResult r;
      r.name = fs::path(case_dir).filename().string();
      r.reason = std::string("exception: ") + e.what();
      msg = case_result_to_json(r);
    }
    write_all(fds[1], msg);
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  Running r;
  r.index = index;
  r.pid = pid;
  r.fd = fds[0];
  r.deadline = Clock::now() + std::chrono::milliseconds(int64_t(timeout_s * 1000));
  return r;
}

/// Reaps a finished child and turns what it sent (or how it died) into a result.
CaseResult finish(Running& run, const std::string& case_dir, double timeout_s) {
  ::close(run.fd);
  int status = 0;
  while (::waitpid(run.pid, &status, 0) < 0 && errno == EINTR) {
  }
  CaseResult r;
  r.name = fs::path(case_dir).filename().string();
  if (run.timed_out) {
    r.reason = "timed out after " + std::to_string(int(timeout_s)) + " s";
    return r;
  }
  if (WIFSIGNALED(status)) {
    r.reason = std::string("crashed: ") + strsignal(WTERMSIG(status));
    return r;
  }
  auto parsed = case_result_from_json(run.text);
  if (!parsed.ok()) {
    r.reason = "child exited with status " + std::to_string(WEXITSTATUS(status)) + " without a result";
    return r;
  }
  return *parsed;
}

}  // namespace

Result<std::vector<std::string>> find_cases(const std::string& dir) {
  fs::path root(dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return io_error("'" + dir + "' is not a directory");
  if (has_model(root)) return std::vector<std::string>{root.string()};
  if (fs::is_directory(root / "node", ec)) root /= "node";
  std::vector<std::string> cases;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory() && has_model(e.path())) cases.push_back(e.path().string());
  if (ec) return io_error("cannot list '" + root.string() + "': " + ec.message());
  std::sort(cases.begin(), cases.end());
  if (cases.empty()) return invalid_argument("no test cases (directories with model.onnx) under '" + dir + "'");
  return cases;
}

Result<std::vector<CaseResult>> run_suite(const std::vector<std::string>& case_dirs, const SuiteOptions& options) {
  std::vector<CaseResult> results(case_dirs.size());
  std::vector<Running> running;
  const size_t jobs = size_t(std::max(1, options.jobs));
  size_t next = 0, done = 0;
  while (done < case_dirs.size()) {
    while (running.size() < jobs && next < case_dirs.size()) {
      FERRY_ASSIGN_OR_RETURN(Running r, start(case_dirs[next], next, options.timeout_s));
      running.push_back(std::move(r));
      ++next;
    }
    std::vector<pollfd> fds;
    for (const Running& r : running) fds.push_back({r.fd, POLLIN, 0});
    auto now = Clock::now();
    auto soonest = std::min_element(running.begin(), running.end(),
                                    [](const Running& a, const Running& b) { return a.deadline < b.deadline; })
                       ->deadline;
    int wait_ms = int(std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(soonest - now).count() + 1));
    int n = ::poll(fds.data(), nfds_t(fds.size()), wait_ms);
    if (n < 0 && errno != EINTR) return io_error(std::string("poll: ") + std::strerror(errno));
    now = Clock::now();
    for (size_t i = running.size(); i-- > 0;) {
      Running& r = running[i];
      bool closed = false;
      if (n > 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        char buf[4096];
        ssize_t got = ::read(r.fd, buf, sizeof buf);
        if (got > 0) r.text.append(buf, size_t(got));
        else if (got == 0 || errno != EINTR) closed = true;
      }
      if (!closed && now >= r.deadline) {
        ::kill(r.pid, SIGKILL);
        r.timed_out = true;
        closed = true;
      }
      if (!closed) continue;
      CaseResult res = finish(r, case_dirs[r.index], options.timeout_s);
      results[r.index] = res;
      ++done;
      if (options.on_case_done) options.on_case_done(res, done, case_dirs.size());
      running.erase(running.begin() + std::ptrdiff_t(i));
    }
  }
  return results;
}

std::string case_result_to_json(const CaseResult& r) {
  nlohmann::ordered_json j;
  j["name"] = r.name;
  j["op"] = r.op;
  j["outcome"] = outcome_name(r.outcome);
  j["reason"] = r.reason;
  j["max_abs_error"] = std::isfinite(r.max_abs_error) ? r.max_abs_error : -1.0;
  j["worst_ratio"] = std::isfinite(r.worst_ratio) ? r.worst_ratio : -1.0;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<CaseResult> case_result_from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return invalid_argument("not a case result");
  CaseResult r;
  r.name = j.value("name", "");
  r.op = j.value("op", "");
  r.reason = j.value("reason", "");
  r.max_abs_error = j.value("max_abs_error", 0.0);
  r.worst_ratio = j.value("worst_ratio", 0.0);
  if (r.max_abs_error < 0) r.max_abs_error = INFINITY;
  if (r.worst_ratio < 0) r.worst_ratio = INFINITY;
  const std::string o = j.value("outcome", "");
  if (o == "passed") r.outcome = Outcome::passed;
  else if (o == "failed") r.outcome = Outcome::failed;
  else if (o == "unsupported") r.outcome = Outcome::unsupported;
  else if (o == "out_of_scope") r.outcome = Outcome::out_of_scope;
  else return invalid_argument("unknown outcome '" + o + "'");
  return r;
}

}  // namespace ferry::conformance
