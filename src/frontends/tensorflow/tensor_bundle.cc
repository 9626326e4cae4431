#include "frontends/tensorflow/tensor_bundle.h"

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "frontends/tensorflow/sstable.h"
#include "frontends/tensorflow/tf_tensor.h"

namespace ferry::tf_import {
namespace {

namespace fs = std::filesystem;

/// `path` with symlinks resolved, if it lies inside `root` (also resolved).
Result<std::string> resolve_inside(const std::string& root, const std::string& path) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(root, ec);
  if (ec) return io_error("cannot resolve '" + root + "': " + ec.message());
  fs::path p = fs::weakly_canonical(path, ec);
  if (ec) return io_error("cannot resolve '" + path + "': " + ec.message());
  auto rel = p.lexically_relative(r);
  if (rel.empty() || *rel.begin() == "..")
    return invalid_model("'" + path + "' resolves to '" + p.string() + "', outside the model directory '" +
                         r.string() + "'");
  return p.string();
}

std::string shard_path(const std::string& prefix, int shard, int num_shards) {
  char buf[64];
  std::snprintf(buf, sizeof buf, ".data-%05d-of-%05d", shard, num_shards);
  return prefix + buf;
}

}  // namespace

Result<std::string> read_file_inside(const std::string& root, const std::string& path, uint64_t max_bytes) {
  FERRY_ASSIGN_OR_RETURN(std::string real, resolve_inside(root, path));
  std::error_code ec;
  if (!fs::is_regular_file(real, ec)) return io_error("'" + path + "' does not exist or is not a file");
  uint64_t size = fs::file_size(real, ec);
  if (ec) return io_error("cannot stat '" + path + "': " + ec.message());
  if (size > max_bytes)
    return invalid_model("'" + path + "' is " + std::to_string(size) + " bytes, over the limit of " +
                         std::to_string(max_bytes));
  std::FILE* f = std::fopen(real.c_str(), "rb");
  if (!f) return io_error("cannot open '" + path + "': " + std::strerror(errno));
  std::string bytes(size_t(size), '\0');
  size_t got = bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  if (got != bytes.size()) return io_error("'" + path + "': read " + std::to_string(got) + " of " + std::to_string(size) + " bytes");
  return bytes;
}

Result<TensorBundle> TensorBundle::open(const std::string& root, const std::string& prefix) {
  const std::string index_path = prefix + ".index";
  FERRY_ASSIGN_OR_RETURN(std::string bytes, read_file_inside(root, index_path, uint64_t(1) << 31));
  auto table = parse_sstable(bytes);
  if (!table.ok()) return table.status().with_context("checkpoint index '" + index_path + "'");
  TensorBundle b;
  b.root_ = root;
  b.prefix_ = prefix;
  auto header_it = table->find("");
  if (header_it == table->end())
    return invalid_model("checkpoint index '" + index_path + "' has no header entry (empty key)");
  tfproto::BundleHeaderProto header;
  if (!header.ParseFromString(header_it->second))
    return invalid_model("checkpoint index '" + index_path + "': the header does not parse");
  if (header.endianness() != tfproto::BundleHeaderProto::LITTLE)
    return unsupported("checkpoint index '" + index_path + "' is big-endian");
  if (header.num_shards() <= 0 || header.num_shards() > 100000)
    return invalid_model("checkpoint index '" + index_path + "': num_shards = " + std::to_string(header.num_shards()));
  b.num_shards_ = header.num_shards();
  for (const auto& [key, value] : *table) {
    if (key.empty()) continue;
    tfproto::BundleEntryProto e;
    if (!e.ParseFromString(value))
      return invalid_model("checkpoint index '" + index_path + "': entry '" + key + "' does not parse");
    if (e.shard_id() < 0 || e.shard_id() >= b.num_shards_)
      return invalid_model("checkpoint entry '" + key + "': shard " + std::to_string(e.shard_id()) + " of " +
                           std::to_string(b.num_shards_));
    if (e.offset() < 0 || e.size() < 0)
      return invalid_model("checkpoint entry '" + key + "': negative offset or size");
    b.entries_.emplace(key, std::move(e));
  }
  return b;
}

std::vector<std::string> TensorBundle::keys() const {
  std::vector<std::string> k;
  for (const auto& [key, e] : entries_) k.push_back(key);
  return k;
}

Result<std::string> TensorBundle::read_bytes(const std::string& key, const tfproto::BundleEntryProto& e) const {
  const std::string path = shard_path(prefix_, e.shard_id(), num_shards_);
  FERRY_ASSIGN_OR_RETURN(std::string real, resolve_inside(root_, path));
  std::error_code ec;
  uint64_t size = fs::file_size(real, ec);
  if (ec) return io_error("checkpoint shard '" + path + "' (for '" + key + "'): " + ec.message());
  if (uint64_t(e.offset()) > size || uint64_t(e.size()) > size - uint64_t(e.offset()))
    return invalid_model("checkpoint entry '" + key + "': bytes [" + std::to_string(e.offset()) + ", " +
                         std::to_string(uint64_t(e.offset()) + uint64_t(e.size())) + ") lie past the end of '" + path + "' (" +
                         std::to_string(size) + " bytes): the checkpoint is truncated");
  std::FILE* f = std::fopen(real.c_str(), "rb");
  if (!f) return io_error("cannot open checkpoint shard '" + path + "': " + std::strerror(errno));
  std::string bytes(size_t(e.size()), '\0');
  bool ok = std::fseek(f, long(e.offset()), SEEK_SET) == 0 &&
            (bytes.empty() || std::fread(bytes.data(), 1, bytes.size(), f) == bytes.size());
  std::fclose(f);
  if (!ok) return io_error("checkpoint shard '" + path + "': cannot read the bytes of '" + key + "'");
  return bytes;
}

Result<Tensor> TensorBundle::read(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return invalid_model("the checkpoint has no tensor '" + key + "'");
  const tfproto::BundleEntryProto& e = it->second;
  const std::string what = "checkpoint tensor '" + key + "'";
  if (e.slices_size() > 0) return unsupported(what + " is partitioned (sliced); save it unpartitioned");
  auto dt = dtype_from_tf(e.dtype());
  if (!dt.ok()) return dt.status().with_context(what);
  auto dims = static_dims_from_tf(e.shape());
  if (!dims.ok()) return dims.status().with_context(what);
  auto zeros = Tensor::zeros(*dt, *dims);
  if (!zeros.ok()) return zeros.status().with_context(what);
  Tensor t = std::move(zeros).value();
  if (uint64_t(e.size()) != t.nbytes())
    return invalid_model(what + " is " + t.type_string() + " (" + std::to_string(t.nbytes()) +
                         " bytes) but its entry says " + std::to_string(e.size()) + " bytes");
  FERRY_ASSIGN_OR_RETURN(std::string bytes, read_bytes(key, e));
  if (mask_crc32c(crc32c(bytes)) != e.crc32c())
    return invalid_model(what + ": checksum mismatch (the checkpoint data is corrupt)");
  if (!bytes.empty()) std::memcpy(t.raw(), bytes.data(), bytes.size());
  if (*dt == DType::boolean)
    for (int64_t i = 0; i < t.numel(); ++i) t.raw()[i] = t.raw()[i] != 0;
  return t;
}

Result<std::vector<std::string>> TensorBundle::read_strings(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return invalid_model("the checkpoint has no tensor '" + key + "'");
  const tfproto::BundleEntryProto& e = it->second;
  const std::string what = "checkpoint tensor '" + key + "'";
  if (e.dtype() != tfproto::DT_STRING) return invalid_model(what + " is " + tf_dtype_name(e.dtype()) + ", not a string");
  FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> dims, static_dims_from_tf(e.shape()));
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d != 0 && n > (int64_t(1) << 24) / d) return invalid_model(what + " has too many elements");
    n *= d;
  }
  FERRY_ASSIGN_OR_RETURN(std::string bytes, read_bytes(key, e));
  // Layout: varint64 length of each element, a 4-byte checksum of the lengths, then the bytes.
  size_t at = 0;
  std::vector<uint64_t> lens;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t v = 0;
    int shift = 0;
    for (;;) {
      if (at >= bytes.size() || shift > 63) return invalid_model(what + ": truncated string lengths");
      uint8_t b = uint8_t(bytes[at++]);
      v |= uint64_t(b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80)) break;
    }
    lens.push_back(v);
  }
  if (n > 0) at += 4;
  std::vector<std::string> out;
  for (uint64_t len : lens) {
    if (at > bytes.size() || len > bytes.size() - at) return invalid_model(what + ": string runs past its bytes");
    out.push_back(bytes.substr(at, size_t(len)));
    at += size_t(len);
  }
  return out;
}

}  // namespace ferry::tf_import
