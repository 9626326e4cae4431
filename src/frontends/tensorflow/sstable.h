// frontends/tensorflow/sstable.h — reading a TensorFlow checkpoint index
// (variables.index): an immutable sorted table in the LevelDB table format.
//
// Layout, end to start:
//   footer (48 bytes)  metaindex handle, index handle (varint64 offset + size
//                      each), zero padding to 40 bytes, 8-byte magic
//                      0xdb4775248b80fb57 (little endian)
//   index block        key >= last key of a data block -> that block's handle
//   data blocks        entries, restart array, restart count
// Every block is followed by a 5-byte trailer: compression type (0 = none)
// and the masked CRC-32C of the block and the type byte. An entry is
//   varint32 shared, varint32 non_shared, varint32 value_length,
//   key[shared..] (the first `shared` bytes repeat the previous key), value.
// Every offset, length and count is checked against the bytes at hand.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "ferry/status.h"

namespace ferry::tf_import {

/// CRC-32C (Castagnoli) of `bytes`, continuing from `crc`.
uint32_t crc32c(std::string_view bytes, uint32_t crc = 0);
/// TensorFlow's stored form of a CRC: rotated and offset so CRCs of CRCs stay useful.
uint32_t mask_crc32c(uint32_t crc);

/// All key -> value entries of a table held in `bytes`; errors name no file.
Result<std::map<std::string, std::string>> parse_sstable(std::string_view bytes);

}  // namespace ferry::tf_import
