#include "frontends/onnx/external_data.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace ferry::onnx_import {
namespace {

/// Strict unsigned decimal: digits only, no sign, no overflow.
std::optional<uint64_t> parse_u64(const std::string& s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t d = uint64_t(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

Result<std::string> real_path(const std::string& p) {
  char* r = ::realpath(p.c_str(), nullptr);
  if (!r) return io_error(std::strerror(errno));
  std::string out(r);
  std::free(r);
  return out;
}

}  // namespace

Result<ExternalDataRef> parse_external_data(const onnx::TensorProto& proto) {
  ExternalDataRef ref;
  bool has_location = false;
  for (const auto& kv : proto.external_data()) {
    const std::string& key = kv.key();
    if (key == "location") {
      ref.location = kv.value();
      has_location = true;
    } else if (key == "offset" || key == "length") {
      auto v = parse_u64(kv.value());
      if (!v)
        return invalid_model("external data " + key + " '" + kv.value() +
                             "' is not a non-negative 64-bit integer");
      if (key == "offset") ref.offset = *v;
      else ref.length = *v;
    }
    // "checksum" (SHA-1 of the data) and unknown keys are informational.
  }
  if (!has_location || ref.location.empty()) return invalid_model("external data has no 'location'");
  return ref;
}

Result<std::string> resolve_external_path(const std::string& root_dir, const std::string& location) {
  const std::string quoted = "'" + location + "'";
  if (location.empty()) return invalid_model("external data location is empty");
  if (location.find('\0') != std::string::npos)
    return invalid_model("external data location contains a NUL character");
  if (location.front() == '/')
    return invalid_model("external data location " + quoted +
                         " is an absolute path; it must be relative to the model directory");
  // Reject '..' anywhere, even where it would stay inside the root: a location
  // that needs it is malformed, and checking components is simpler to trust.
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find('/', start);
    if (end == std::string::npos) end = location.size();
    if (location.compare(start, end - start, "..") == 0 && end - start == 2)
      return invalid_model("external data location " + quoted + " contains a '..' component");
    start = end + 1;
  }
  auto root = real_path(root_dir.empty() ? "." : root_dir);
  if (!root.ok())
    return io_error("external data directory '" + root_dir + "' is not accessible: " + root.status().message());
  auto resolved = real_path(*root + "/" + location);
  if (!resolved.ok())
    return io_error("external data file " + quoted + " cannot be opened in '" + *root +
                    "': " + resolved.status().message());
  // After resolving symlinks the file must still lie under the root (the root
  // itself fails the regular-file check below).
  std::string prefix = *root == "/" ? "/" : *root + "/";
  if (*resolved != *root && resolved->compare(0, prefix.size(), prefix) != 0)
    return invalid_model("external data location " + quoted + " resolves to '" + *resolved +
                         "', outside the model directory '" + *root + "'");
  struct stat st {};
  if (::stat(resolved->c_str(), &st) != 0)
    return io_error("external data file " + quoted + " cannot be read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return invalid_model("external data location " + quoted + " is not a regular file");
  // A hard link is indistinguishable from the original, which may live anywhere.
  if (st.st_nlink > 1)
    return invalid_model("external data file " + quoted + " has " + std::to_string(st.st_nlink) +
                         " hard links; hard-linked data files are rejected because they may alias "
                         "files outside the model directory");
  return *resolved;
}

Result<std::shared_ptr<Buffer>> map_external_data(const onnx::TensorProto& proto, const std::string& root_dir,
                                                  uint64_t expected_bytes) {
  FERRY_ASSIGN_OR_RETURN(ExternalDataRef ref, parse_external_data(proto));
  FERRY_ASSIGN_OR_RETURN(std::string path, resolve_external_path(root_dir, ref.location));
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return io_error("external data file '" + ref.location + "' cannot be read: " + std::strerror(errno));
  const uint64_t file_size = uint64_t(st.st_size);
  const std::string where = "external data file '" + ref.location + "' (" + std::to_string(file_size) + " bytes)";
  if (ref.offset > file_size)
    return invalid_model("external data offset " + std::to_string(ref.offset) + " lies beyond the end of " + where);
  uint64_t length = ref.length.value_or(file_size - ref.offset);
  if (length > UINT64_MAX - ref.offset)
    return invalid_model("external data offset " + std::to_string(ref.offset) + " + length " +
                         std::to_string(length) + " overflows 64 bits");
  if (ref.offset + length > file_size)
    return invalid_model("external data range [" + std::to_string(ref.offset) + ", " +
                         std::to_string(ref.offset + length) + ") lies beyond the end of " + where);
  if (length != expected_bytes)
    return invalid_model("external data has " + std::to_string(length) + " bytes, expected " +
                         std::to_string(expected_bytes) + " from the tensor's dims and data type");
  return map_file(path, ref.offset, length);
}

}  // namespace ferry::onnx_import
