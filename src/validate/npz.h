// validate/npz.h — reading NumPy .npz archives (np.savez, np.savez_compressed).
//
// An .npz is a zip archive with one NAME.npy member per array. ferry reads
// the central directory (zip64 included, which numpy writes), then each
// member's local header, and decodes it with validate/npy.h. Members are:
//   stored (method 0)    np.savez
//   deflated (method 8)  np.savez_compressed; inflated with the system zlib
//                        (libz.so.1, loaded at run time), else a clear error
// Every member's CRC-32 is checked. Members not ending in ".npy" are ignored,
// as numpy's own reader would not turn them into arrays either. Encrypted
// members, other compression methods, multi-disk archives and sizes beyond
// kMaxTensorBytes are errors, never crashes.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "ferry/status.h"
#include "ir/tensor.h"

namespace ferry::validate {

/// Decodes an .npz held in memory: array name (member name without ".npy") -> tensor.
Result<std::map<std::string, Tensor>> decode_npz(std::string_view bytes);
/// Reads an .npz file; errors name the problem (the caller adds the path).
Result<std::map<std::string, Tensor>> read_npz(const std::string& path);

/// CRC-32 (ISO-HDLC, the zip and PNG one) of `bytes`.
uint32_t crc32(std::string_view bytes);
/// Whether deflated members can be read (the system zlib was found).
bool npz_deflate_available();

}  // namespace ferry::validate
