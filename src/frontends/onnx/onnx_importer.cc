// Reading ONNX files, and import_onnx (frontends/frontend.h).
#include "frontends/onnx/onnx_importer.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <google/protobuf/arena.h>

#include "frontends/onnx/onnx_metadata.h"
#include "ir/tensor.h"

namespace ferry {
namespace onnx_import {

Status read_model_proto(const std::string& path, onnx::ModelProto* out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return io_error(std::string("cannot open: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return invalid_argument("is a directory, not an ONNX file");
  // Protobuf messages are limited to 2 GiB; larger models keep weights outside.
  if (uint64_t(st.st_size) > uint64_t(INT_MAX))
    return invalid_model("is " + std::to_string(st.st_size) +
                         " bytes, over the 2 GiB protobuf limit; store the weights as external data");
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    // Parsed straight from the page cache: no heap copy of the whole file.
    // (A failed map, e.g. on a file system without mmap, falls back to reading.)
    if (auto mapped = map_file(path, 0, uint64_t(st.st_size)); mapped.ok())
      return parse_model_proto((*mapped)->cdata(), (*mapped)->size(), out);
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return io_error(std::string("cannot open: ") + std::strerror(errno));
  std::string bytes(size_t(st.st_size), '\0');
  size_t got = bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  if (got != bytes.size()) return io_error("read " + std::to_string(got) + " of " + std::to_string(bytes.size()) + " bytes");
  return parse_model_proto(bytes.data(), bytes.size(), out);
}

Status parse_model_proto(const void* data, size_t size, onnx::ModelProto* out) {
  if (size > size_t(INT_MAX)) return invalid_model("is over the 2 GiB protobuf limit");
  if (!out->ParseFromArray(data, int(size))) return invalid_model("not a valid ONNX model (protobuf parse failed)");
  // Arbitrary bytes can parse as a message made of unknown fields; a model has both of these.
  if (out->ir_version() == 0 || !out->has_graph())
    return invalid_model("not a valid ONNX model (no ir_version or no graph)");
  return Status::Ok();
}

Result<onnx::ModelProto> read_model_proto(const std::string& path) {
  onnx::ModelProto model;
  FERRY_TRY(read_model_proto(path, &model));
  return model;
}

Result<onnx::ModelProto> parse_model_proto(const void* data, size_t size) {
  onnx::ModelProto model;
  FERRY_TRY(parse_model_proto(data, size, &model));
  return model;
}

Result<std::unique_ptr<Graph>> import_onnx_file(const std::string& path, ImportReport* report,
                                                const ImportOptions& options) {
  if (report) {
    *report = ImportReport{};
    report->format = "onnx";
  }
  // The arena outlives this call when tensors view its raw_data (see import_model_proto).
  auto arena = std::make_shared<google::protobuf::Arena>();
  auto* model = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(arena.get());
  FERRY_TRY(read_model_proto(path, model));
  return import_model_proto(*model, path, report, options, arena);
}

}  // namespace onnx_import

Result<std::unique_ptr<Graph>> import_onnx(const std::string& path, ImportReport* report,
                                           const ImportOptions& options) {
  auto g = onnx_import::import_onnx_file(path, report, options);
  if (!g.ok()) return g.status().with_context("file '" + path + "'");
  return g;
}

namespace {

/// A protobuf varint at p (advanced), or false past `end`.
bool onnx_meta_varint(const uint8_t*& p, const uint8_t* end, uint64_t* v) {
  *v = 0;
  for (int shift = 0; p < end && shift < 64; shift += 7) {
    const uint8_t b = *p++;
    *v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

}  // namespace

Result<std::map<std::string, std::string>> read_onnx_metadata(const std::string& path) {
  // Walks ModelProto's top-level fields, skipping the graph (field 7) by its length, and
  // parses only the StringStringEntryProto messages of field 14.
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return io_error("cannot open '" + path + "': " + ec.message());
  std::map<std::string, std::string> out;
  if (size == 0) return out;
  FERRY_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> file, map_file(path, 0, size));
  const uint8_t *p = file->cdata(), *end = p + file->size();
  while (p < end) {
    uint64_t key = 0, n = 0;
    if (!onnx_meta_varint(p, end, &key)) return invalid_model("'" + path + "': truncated field key");
    switch (key & 7) {
      case 0:
        if (!onnx_meta_varint(p, end, &n)) return invalid_model("'" + path + "': truncated varint");
        break;
      case 1: p += 8; break;
      case 5: p += 4; break;
      case 2: {
        if (!onnx_meta_varint(p, end, &n) || n > uint64_t(end - p)) return invalid_model("'" + path + "': truncated field");
        if (key >> 3 == 14) {
          onnx::StringStringEntryProto e;
          if (!e.ParseFromArray(p, int(n))) return invalid_model("'" + path + "': bad metadata_props entry");
          out[e.key()] = e.value();
        }
        p += n;
        break;
      }
      default: return invalid_model("'" + path + "': unexpected wire type " + std::to_string(key & 7));
    }
  }
  return out;
}

}  // namespace ferry
