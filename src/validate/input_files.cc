#include "validate/input_files.h"

#include <algorithm>
#include <filesystem>

#include "validate/npy.h"
#include "validate/golden_dir.h"
#include "validate/npz.h"

namespace ferry::validate {
namespace {

namespace fs = std::filesystem;

std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return s.empty() ? "none" : s;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

Result<std::map<std::string, Tensor>> read_input_file(const std::string& path,
                                                      const std::vector<std::string>& input_names) {
  std::error_code ec;
  std::map<std::string, Tensor> out;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(fs::path(path) / "manifest.json", ec)) {
      FERRY_ASSIGN_OR_RETURN(GoldenSet set, open_golden_dir(path));
      for (const std::string& n : input_names)
        if (set.has(n)) {
          FERRY_ASSIGN_OR_RETURN(Tensor t, set.get(n));
          out.emplace(n, std::move(t));
        }
    } else {
      // NAME.npy -> input NAME. Names with characters a file name cannot hold need a manifest.
      for (const std::string& n : input_names) {
        fs::path f = fs::path(path) / (n + ".npy");
        if (n.find('/') != std::string::npos || !fs::is_regular_file(f, ec)) continue;
        auto t = read_npy(f.string());
        if (!t.ok()) return t.status().with_context(f.string());
        out.emplace(n, std::move(t).value());
      }
    }
    if (out.empty())
      return invalid_argument("the directory holds no value for any model input (inputs: " + quoted_list(input_names) +
                              "; expected NAME.npy files or a manifest.json)");
    return out;
  }
  FERRY_ASSIGN_OR_RETURN(out, read_npz(path));
  for (const auto& [name, t] : out)
    if (!contains(input_names, name))
      return invalid_argument("array '" + name + "' names no model input (inputs: " + quoted_list(input_names) + ")");
  return out;
}

}  // namespace ferry::validate
