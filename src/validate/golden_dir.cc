#include "validate/golden_dir.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "validate/npy.h"

namespace ferry::validate {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kFormat = "ferry-golden";
constexpr int kVersion = 1;
constexpr uintmax_t kMaxManifestBytes = uintmax_t(256) << 20;

/// A relative path that stays inside its directory: not absolute, no "..".
bool stays_inside(const std::string& file) {
  if (file.empty()) return false;
  fs::path p(file);
  if (p.is_absolute() || p.has_root_name() || p.has_root_directory()) return false;
  for (const fs::path& part : p)
    if (part == "..") return false;
  return true;
}

Status read_string_list(const Json& j, const char* key, std::vector<std::string>* out) {
  if (!j.contains(key)) return Status::Ok();
  const Json& v = j.at(key);
  if (!v.is_array()) return invalid_argument(std::string("'") + key + "' must be a list of names");
  for (const Json& e : v) {
    if (!e.is_string()) return invalid_argument(std::string("'") + key + "' must be a list of names");
    out->push_back(e.get<std::string>());
  }
  return Status::Ok();
}

Tensor widen_bf16(const Tensor& t) {
  if (t.dtype() != DType::bf16) return t;
  Tensor f = Tensor::empty(DType::f32, t.dims());
  for (int64_t i = 0; i < t.numel(); ++i) f.data<float>()[i] = bf16_to_f32(t.data<uint16_t>()[i]);
  return f;
}

}  // namespace

std::string golden_file_stem(const std::string& name) {
  std::string s;
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    s += ok ? c : '_';
  }
  if (s.size() > 200) s.resize(200);  // stay under NAME_MAX with a suffix
  if (s.empty() || s == "." || s == "..") s = "_";
  return s;
}

std::vector<std::string> GoldenSet::names() const {
  std::set<std::string> all;
  for (const auto& [n, f] : files_) all.insert(n);
  for (const auto& [n, t] : tensors_) all.insert(n);
  return {all.begin(), all.end()};
}

Result<Tensor> GoldenSet::get(const std::string& name) const {
  if (auto it = tensors_.find(name); it != tensors_.end()) return it->second;
  auto f = files_.find(name);
  if (f == files_.end()) return invalid_argument("the reference has no tensor '" + name + "'");
  std::string path = (fs::path(dir_) / f->second).string();
  auto t = read_npy(path);
  if (!t.ok()) return t.status().with_context(path + " (tensor '" + name + "')");
  // Not cached: per-layer comparison reads each tensor once, and caching
  // would keep a whole model's activations in memory.
  return t;
}

void GoldenSet::put(const std::string& name, Tensor t, std::vector<std::string>* list) {
  files_.erase(name);
  bool fresh = tensors_.insert_or_assign(name, std::move(t)).second;
  if (list && fresh) list->push_back(name);
}

Result<GoldenSet> open_golden_dir(const std::string& dir) {
  std::error_code ec;
  // Messages leave the directory out: the caller's context names it.
  if (!fs::is_directory(dir, ec)) return io_error("not a directory");
  fs::path manifest = fs::path(dir) / "manifest.json";
  if (!fs::is_regular_file(manifest, ec))
    return io_error("no manifest.json in the directory (a golden directory maps tensor names to .npy files in it)");
  if (fs::file_size(manifest, ec) > kMaxManifestBytes) return invalid_argument("manifest.json is too large");
  std::ifstream in(manifest, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  Json j = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_argument("manifest.json: not valid JSON");
  if (!j.is_object()) return invalid_argument("manifest.json: expected a JSON object");

  GoldenSet set;
  set.dir_ = dir;
  const bool full = j.contains("tensors");
  if (full) {
    if (j.contains("format") && j["format"] != kFormat)
      return invalid_argument(std::string("manifest.json: format is not '") + kFormat + "'");
    if (j.contains("version") && (!j["version"].is_number_integer() || j["version"].get<int64_t>() > kVersion))
      return invalid_argument("manifest.json: version " + j["version"].dump() + " is newer than this ferry reads (" +
                              std::to_string(kVersion) + ")");
    if (j.contains("producer") && j["producer"].is_string()) set.producer = j["producer"].get<std::string>();
    if (j.contains("model") && j["model"].is_string()) set.model = j["model"].get<std::string>();
    FERRY_TRY(read_string_list(j, "inputs", &set.inputs).with_context("manifest.json"));
    FERRY_TRY(read_string_list(j, "outputs", &set.outputs).with_context("manifest.json"));
    FERRY_TRY(read_string_list(j, "intermediates", &set.intermediates).with_context("manifest.json"));
    if (j.contains("nodes")) {
      if (!j["nodes"].is_object()) return invalid_argument("manifest.json: 'nodes' must be an object");
      for (const auto& [node, outs] : j["nodes"].items()) {
        std::vector<std::string>& names = set.nodes[node];
        bool ok = outs.is_array();
        for (const Json& o : outs) ok = ok && o.is_string();
        if (!ok) return invalid_argument("manifest.json: nodes: '" + node + "' must map to a list of tensor names");
        for (const Json& o : outs) names.push_back(o.get<std::string>());
      }
    }
    if (j.contains("skipped") && j["skipped"].is_array())
      for (const Json& s : j["skipped"])
        if (s.is_object() && s.contains("name") && s["name"].is_string())
          set.skipped.emplace_back(s["name"].get<std::string>(), s.contains("reason") && s["reason"].is_string()
                                                                     ? s["reason"].get<std::string>()
                                                                     : "");
  }
  const Json& tensors = full ? j["tensors"] : j;
  if (!tensors.is_object()) return invalid_argument("manifest.json: 'tensors' must be an object");
  for (const auto& [name, file] : tensors.items()) {
    if (!file.is_string()) return invalid_argument("manifest.json: the entry for '" + name + "' must be a file name");
    std::string f = file.get<std::string>();
    if (!stays_inside(f))
      return invalid_argument("manifest.json: the file '" + f + "' for '" + name + "' lies outside the directory");
    if (!fs::is_regular_file(fs::path(dir) / f, ec))
      return io_error("manifest.json: the file '" + f + "' for '" + name + "' does not exist");
    set.files_[name] = f;
  }
  return set;
}

Status write_golden_dir(const std::string& dir, const GoldenSet& set) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return io_error("cannot create '" + dir + "': " + ec.message());
  Json files = Json::object();
  std::set<std::string> used;  // lower-cased, so names stay distinct on case-insensitive file systems
  for (const std::string& name : set.names()) {
    FERRY_ASSIGN_OR_RETURN(Tensor t, set.get(name));
    std::string stem = golden_file_stem(name), file = stem + ".npy";
    auto lower = [](std::string s) {
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
      return s;
    };
    for (int k = 1; used.count(lower(file)); ++k) file = stem + "_" + std::to_string(k) + ".npy";
    used.insert(lower(file));
    fs::path path = fs::path(dir) / file;
    if (fs::is_symlink(fs::symlink_status(path, ec)))
      return io_error(path.string() + ": refusing to write through a symbolic link");
    FERRY_TRY(write_npy(path.string(), widen_bf16(t)).with_context(path.string()));
    files[name] = file;
  }
  Json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["producer"] = set.producer;
  j["model"] = set.model;
  j["inputs"] = set.inputs;
  j["outputs"] = set.outputs;
  j["intermediates"] = set.intermediates;
  j["tensors"] = files;
  j["nodes"] = Json::object();
  for (const auto& [node, outs] : set.nodes) j["nodes"][node] = outs;
  j["skipped"] = Json::array();
  for (const auto& [name, reason] : set.skipped) j["skipped"].push_back({{"name", name}, {"reason", reason}});
  fs::path manifest = fs::path(dir) / "manifest.json";
  std::ofstream out(manifest, std::ios::binary | std::ios::trunc);
  out << j.dump(1, ' ', false, Json::error_handler_t::replace) << "\n";
  if (!out) return io_error("cannot write " + manifest.string());
  return Status::Ok();
}

}  // namespace ferry::validate
