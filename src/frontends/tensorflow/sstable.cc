#include "frontends/tensorflow/sstable.h"

#include <array>

namespace ferry::tf_import {
namespace {

constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;
constexpr size_t kTrailerSize = 5;

const std::array<uint32_t, 256>& crc_table() {
  static const std::array<uint32_t, 256> t = [] {
    std::array<uint32_t, 256> r{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;  // reflected Castagnoli
      r[i] = c;
    }
    return r;
  }();
  return t;
}

/// A cursor over bytes that fails instead of reading past the end.
struct Reader {
  std::string_view s;
  size_t at = 0;
  bool varint(uint64_t* v, int max_bytes) {
    uint64_t r = 0;
    for (int i = 0; i < max_bytes; ++i) {
      if (at >= s.size()) return false;
      uint8_t b = uint8_t(s[at++]);
      r |= uint64_t(b & 0x7f) << (7 * i);
      if (!(b & 0x80)) {
        *v = r;
        return true;
      }
    }
    return false;
  }
};

uint32_t le32(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | uint8_t(s[at + size_t(i)]);
  return v;
}

struct BlockHandle {
  uint64_t offset = 0, size = 0;
};

Result<BlockHandle> read_handle(Reader& r, const char* what) {
  BlockHandle h;
  if (!r.varint(&h.offset, 10) || !r.varint(&h.size, 10))
    return invalid_model(std::string("bad ") + what + " block handle");
  return h;
}

/// The contents of the block at `h`, after checking its trailer.
Result<std::string_view> block_at(std::string_view file, BlockHandle h, const char* what) {
  const std::string w = std::string(what) + " block at offset " + std::to_string(h.offset);
  if (h.offset > file.size() || h.size > file.size() - h.offset || kTrailerSize > file.size() - h.offset - h.size)
    return invalid_model(w + " (" + std::to_string(h.size) + " bytes) runs past the end of the file (" +
                         std::to_string(file.size()) + " bytes): the index is truncated or corrupt");
  std::string_view block = file.substr(size_t(h.offset), size_t(h.size));
  uint8_t type = uint8_t(file[size_t(h.offset + h.size)]);
  uint32_t stored = le32(file, size_t(h.offset + h.size + 1));
  uint32_t actual = mask_crc32c(crc32c(std::string_view(&file[size_t(h.offset + h.size)], 1), crc32c(block)));
  if (stored != actual) return invalid_model(w + ": checksum mismatch (the index is corrupt)");
  if (type != 0)
    return unsupported(w + " is compressed (type " + std::to_string(type) +
                       "); only uncompressed checkpoint indexes are supported");
  return block;
}

/// Appends every entry of a block to `out`.
Status parse_block(std::string_view block, const char* what, std::map<std::string, std::string>* out) {
  const std::string w = std::string(what) + " block";
  if (block.size() < 4) return invalid_model(w + " is shorter than its restart count");
  uint64_t num_restarts = le32(block, block.size() - 4);
  if (num_restarts == 0 || num_restarts > (block.size() - 4) / 4)
    return invalid_model(w + ": restart count " + std::to_string(num_restarts) + " does not fit the block");
  const size_t data_end = block.size() - 4 - size_t(num_restarts) * 4;
  for (uint64_t i = 0; i < num_restarts; ++i)
    if (le32(block, data_end + size_t(i) * 4) > data_end) return invalid_model(w + ": restart point past the entries");
  Reader r{block.substr(0, data_end)};
  std::string key;
  while (r.at < data_end) {
    uint64_t shared = 0, non_shared = 0, value_len = 0;
    if (!r.varint(&shared, 5) || !r.varint(&non_shared, 5) || !r.varint(&value_len, 5))
      return invalid_model(w + ": truncated entry header at offset " + std::to_string(r.at));
    if (shared > key.size())
      return invalid_model(w + ": entry shares " + std::to_string(shared) + " bytes with a " +
                           std::to_string(key.size()) + "-byte key");
    if (non_shared > data_end - r.at || value_len > data_end - r.at - non_shared)
      return invalid_model(w + ": entry at offset " + std::to_string(r.at) + " runs past the block");
    key.resize(size_t(shared));
    key.append(block.substr(r.at, size_t(non_shared)));
    r.at += size_t(non_shared);
    if (!out->empty() && key <= out->rbegin()->first)
      return invalid_model(w + ": keys are not sorted ('" + key + "')");
    (*out)[key] = std::string(block.substr(r.at, size_t(value_len)));
    r.at += size_t(value_len);
  }
  return Status::Ok();
}

}  // namespace

uint32_t crc32c(std::string_view bytes, uint32_t crc) {
  const auto& t = crc_table();
  crc = ~crc;
  for (char c : bytes) crc = t[(crc ^ uint8_t(c)) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t mask_crc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

Result<std::map<std::string, std::string>> parse_sstable(std::string_view file) {
  if (file.size() < kFooterSize)
    return invalid_model("is " + std::to_string(file.size()) + " bytes, shorter than a table footer (48)");
  std::string_view footer = file.substr(file.size() - kFooterSize);
  uint64_t magic = uint64_t(le32(footer, 40)) | (uint64_t(le32(footer, 44)) << 32);
  if (magic != kTableMagic) return invalid_model("is not a checkpoint index (bad table magic): truncated or corrupt");
  Reader fr{footer.substr(0, 40)};
  FERRY_ASSIGN_OR_RETURN(BlockHandle meta, read_handle(fr, "metaindex"));
  (void)meta;  // the metaindex holds nothing ferry needs (filter blocks)
  FERRY_ASSIGN_OR_RETURN(BlockHandle index_handle, read_handle(fr, "index"));
  FERRY_ASSIGN_OR_RETURN(std::string_view index, block_at(file, index_handle, "index"));
  std::map<std::string, std::string> index_entries;
  FERRY_TRY(parse_block(index, "index", &index_entries));
  std::map<std::string, std::string> out;
  for (const auto& [last_key, handle_bytes] : index_entries) {
    Reader hr{handle_bytes};
    FERRY_ASSIGN_OR_RETURN(BlockHandle h, read_handle(hr, "data"));
    FERRY_ASSIGN_OR_RETURN(std::string_view block, block_at(file, h, "data"));
    FERRY_TRY(parse_block(block, "data", &out));
  }
  return out;
}

}  // namespace ferry::tf_import
