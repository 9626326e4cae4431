// validate/npy.h — reading and writing NumPy .npy files.
//
// Format (numpy.lib.format): the magic "\x93NUMPY", a major/minor version
// (1.0: 2-byte header length; 2.0 and 3.0: 4-byte length; 3.0 allows UTF-8),
// then a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces to a 64-byte boundary and ended by '\n', then the raw
// little-endian data in C order.
//
// Supported dtypes: <f2 <f4 <f8, <i1..<i8, <u1..<u8, |b1 ('|' or '<' for the
// one-byte types). Big-endian, Fortran-ordered, structured and object arrays
// are rejected with a clear error. NumPy has no bfloat16, so writing a bf16
// tensor is an error: convert it to f32 first (bf16 -> f32 is exact).
// The parser is strict and bounded: a malformed or truncated file is an error,
// never a crash, and nothing is allocated before the file is known to hold
// the data its header promises.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/status.h"
#include "ir/tensor.h"

namespace ferry {

/// What an .npy header declares.
struct NpyHeader {
  DType dtype = DType::undefined;
  std::vector<int64_t> dims;
  size_t data_offset = 0;  ///< bytes from the start of the file to the data
};

/// Largest header ferry accepts (bytes); real headers are < 1 KiB.
inline constexpr size_t kMaxNpyHeaderBytes = size_t(1) << 20;

/// The numpy descr for a dtype ("<f4", "|b1"); empty for bf16 and undefined.
std::string npy_descr(DType dtype);

/// Parses the preamble and header dict at the start of `bytes`. `bytes` may
/// hold more than the header (the data); it must hold at least the header.
Result<NpyHeader> parse_npy_header(std::string_view bytes);

/// Decodes a whole .npy file held in memory (header + data, nothing after).
Result<Tensor> decode_npy(std::string_view bytes);
/// Reads an .npy file; errors name the problem (the caller adds the path).
Result<Tensor> read_npy(const std::string& path);

/// Encodes a tensor as .npy bytes (version 1.0, or 2.0 for huge headers).
Result<std::string> encode_npy(const Tensor& t);
/// Writes a tensor to an .npy file (replacing it).
Status write_npy(const std::string& path, const Tensor& t);

}  // namespace ferry
