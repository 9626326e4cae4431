#include "cli_common.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace ferry::cli {

const char* exit_code_footer() {
  return "Exit codes:\n"
         "  0  success\n"
         "  1  usage error (unknown command or option, malformed option value)\n"
         "  2  model or input error (cannot load, unsupported ops, bad input file, run failure)\n"
         "  3  `ferry validate`: the results do not match the reference;\n"
         "     `ferry conformance --baseline`: a regression against the baseline";
}

int model_error(const std::string& file, const Status& status) {
  std::string msg = status.message();
  std::string context = "model '" + file + "': ";
  if (!file.empty() && msg.rfind(context, 0) == 0) msg = msg.substr(context.size());
  std::cerr << "ferry: error: " << (file.empty() ? "" : file + ": ") << msg << std::endl;
  return kExitModelError;
}

int usage_error(const std::string& command, const std::string& message) {
  std::cerr << "ferry: error: " << message << "\nRun 'ferry " << command << (command.empty() ? "" : " ")
            << "--help' for usage." << std::endl;
  return kExitUsage;
}

Result<std::vector<int64_t>> parse_dims(const std::string& text) {
  std::vector<int64_t> dims;
  if (text.empty() || text == "scalar") return dims;
  char sep = text.find(',') != std::string::npos ? ',' : 'x';
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    int64_t v = -1;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || v < 0 || v > kMaxDim)
      return invalid_argument("'" + text + "' is not a shape: expected non-negative sizes like 1x3x224x224, got '" +
                              part + "'");
    dims.push_back(v);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return dims;
}

Result<std::pair<std::string, std::string>> split_assignment(const std::string& text,
                                                             const std::vector<std::string>& known_names) {
  for (size_t eq = text.find('='); eq != std::string::npos; eq = text.find('=', eq + 1))
    for (const std::string& n : known_names)
      if (text.compare(0, eq, n) == 0 && n.size() == eq) return std::make_pair(n, text.substr(eq + 1));
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return invalid_argument("'" + text + "' is not of the form NAME=VALUE");
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

std::string group_thousands(int64_t v) {
  std::string digits = std::to_string(v < 0 ? uint64_t(-(v + 1)) + 1 : uint64_t(v));  // INT64_MIN-safe
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string human_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string human_count(double v) {
  const char* units[] = {"", " K", " M", " G", " T", " P", " E"};
  int u = 0;
  while (std::abs(v) >= 1000 && u < 6) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.3g%s", v, units[u]);
  return buf;
}

std::string dump_json(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace); }

Json shape_json(const Shape& shape) {
  if (!shape.rank_known()) return nullptr;
  Json dims = Json::array();
  for (const Dim& d : shape.dims()) {
    if (d.is_static()) dims.push_back(d.value());
    else dims.push_back(d.to_string());
  }
  return dims;
}

std::string domain_name(const std::string& domain) { return domain.empty() ? "ai.onnx" : domain; }

}  // namespace ferry::cli
