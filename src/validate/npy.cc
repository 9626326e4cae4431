#include "validate/npy.h"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include <sys/stat.h>

namespace ferry {
namespace {

static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct DescrEntry {
  char kind;  // 'f', 'i', 'u', 'b'
  int size;
  DType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {'f', 2, DType::f16}, {'f', 4, DType::f32}, {'f', 8, DType::f64}, {'i', 1, DType::i8},
    {'i', 2, DType::i16}, {'i', 4, DType::i32}, {'i', 8, DType::i64}, {'u', 1, DType::u8},
    {'u', 2, DType::u16}, {'u', 4, DType::u32}, {'u', 8, DType::u64}, {'b', 1, DType::boolean},
};

Status bad_header(const std::string& why) { return invalid_argument("malformed .npy header: " + why); }

Result<DType> dtype_from_descr(const std::string& d) {
  if (d.size() < 3) return invalid_argument("unsupported .npy dtype '" + d + "'");
  char order = d[0], kind = d[1];
  std::string size_text = d.substr(2);
  if (size_text.empty() || size_text.size() > 2 || size_text.find_first_not_of("0123456789") != std::string::npos)
    return invalid_argument("unsupported .npy dtype '" + d + "'");
  int size = std::stoi(size_text);
  if (order == '>' && size > 1)
    return invalid_argument(".npy dtype '" + d + "' is big-endian; only little-endian data is supported");
  if (kind == 'V' && size == 2)
    return invalid_argument(".npy dtype '" + d +
                            "' (raw 2-byte void, e.g. ml_dtypes bfloat16) is not supported; save as float32");
  for (const DescrEntry& e : kDescrs) {
    if (e.kind != kind || e.size != size) continue;
    // '|' means "not applicable" and numpy writes it for 1-byte types; '<'
    // and '=' on a little-endian host mean the same for those, '>' too.
    bool ok = order == '<' || order == '=' || (size == 1 && (order == '|' || order == '>'));
    if (ok) return e.dtype;
  }
  return invalid_argument("unsupported .npy dtype '" + d +
                          "' (supported: <f2 <f4 <f8 <i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8 |b1)");
}

/// A strict reader of the Python literal numpy writes as the header.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  Result<NpyHeader> parse() {
    skip_ws();
    if (!eat('{')) return bad_header("expected '{' at the start of the header dict");
    std::optional<std::string> descr;
    std::optional<bool> fortran;
    std::optional<std::vector<int64_t>> shape;
    while (true) {
      skip_ws();
      if (eat('}')) break;
      FERRY_ASSIGN_OR_RETURN(std::string key, parse_string());
      skip_ws();
      if (!eat(':')) return bad_header("expected ':' after key '" + key + "'");
      skip_ws();
      if (key == "descr") {
        if (descr) return bad_header("duplicate key 'descr'");
        if (peek() == '[') return invalid_argument(".npy file holds a structured array; only plain arrays are supported");
        FERRY_ASSIGN_OR_RETURN(descr, parse_string());
      } else if (key == "fortran_order") {
        if (fortran) return bad_header("duplicate key 'fortran_order'");
        FERRY_ASSIGN_OR_RETURN(fortran, parse_bool());
      } else if (key == "shape") {
        if (shape) return bad_header("duplicate key 'shape'");
        FERRY_ASSIGN_OR_RETURN(shape, parse_tuple());
      } else {
        return bad_header("unexpected key '" + key + "'");
      }
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat('}')) break;
      return bad_header("expected ',' or '}' at offset " + std::to_string(pos_));
    }
    skip_ws();
    if (pos_ != s_.size()) return bad_header("unexpected text after the header dict");
    if (!descr) return bad_header("missing key 'descr'");
    if (!fortran) return bad_header("missing key 'fortran_order'");
    if (!shape) return bad_header("missing key 'shape'");
    if (*fortran)
      return invalid_argument(".npy file is in Fortran order; only C order is supported "
                              "(save np.ascontiguousarray(a) instead)");
    NpyHeader h;
    FERRY_ASSIGN_OR_RETURN(h.dtype, dtype_from_descr(*descr));
    h.dims = std::move(*shape);
    return h;
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (pos_ >= s_.size() || s_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  Result<std::string> parse_string() {
    char q = peek();
    if (q != '\'' && q != '"') return bad_header("expected a quoted string at offset " + std::to_string(pos_));
    ++pos_;
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') return bad_header("escape sequences are not supported in header strings");
      out += s_[pos_++];
      if (out.size() > 64) return bad_header("string too long");
    }
    if (!eat(q)) return bad_header("unterminated string");
    return out;
  }

  Result<bool> parse_bool() {
    if (s_.substr(pos_, 4) == "True") { pos_ += 4; return true; }
    if (s_.substr(pos_, 5) == "False") { pos_ += 5; return false; }
    return bad_header("expected True or False at offset " + std::to_string(pos_));
  }

  Result<std::vector<int64_t>> parse_tuple() {
    if (!eat('(')) return bad_header("expected '(' for the shape");
    std::vector<int64_t> dims;
    skip_ws();
    if (eat(')')) return dims;
    while (true) {
      skip_ws();
      if (peek() < '0' || peek() > '9') return bad_header("expected a non-negative integer in the shape");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        v = v * 10 + (s_[pos_++] - '0');
        if (v > kMaxDim) return invalid_argument(".npy shape has a dimension larger than " + std::to_string(kMaxDim));
      }
      if (peek() == 'L') ++pos_;  // Python 2 long literal
      dims.push_back(v);
      if (dims.size() > 64) return bad_header("shape has more than 64 dimensions");
      skip_ws();
      if (eat(')')) break;
      if (!eat(',')) return bad_header("expected ',' or ')' in the shape");
      skip_ws();
      if (eat(')')) break;  // "(3,)" and "(2, 3,)"
    }
    return dims;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

uint32_t read_le(const char* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | uint8_t(p[i]);
  return v;
}

/// Size of the preamble + header that `bytes` (at least 12 bytes, or all of a short file) announces.
Result<size_t> header_end(std::string_view bytes, int* major_out) {
  if (bytes.size() < kMagicLen + 2 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    return invalid_argument("not an .npy file (missing the \\x93NUMPY magic)");
  int major = uint8_t(bytes[6]), minor = uint8_t(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return invalid_argument("unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor) +
                            " (supported: 1.0, 2.0, 3.0)");
  size_t len_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_bytes) return bad_header("file ends inside the header length");
  size_t header_len = read_le(bytes.data() + 8, int(len_bytes));
  if (header_len > kMaxNpyHeaderBytes)
    return bad_header("header length " + std::to_string(header_len) + " exceeds the limit of " +
                      std::to_string(kMaxNpyHeaderBytes) + " bytes");
  *major_out = major;
  return 8 + len_bytes + header_len;
}

std::string format_header_dict(const Tensor& t, const std::string& descr) {
  std::string shape = "(";
  for (size_t i = 0; i < t.dims().size(); ++i) shape += std::to_string(t.dims()[i]) + (i + 1 < t.dims().size() ? ", " : "");
  if (t.dims().size() == 1) shape += ",";
  shape += ")";
  return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
}

}  // namespace

std::string npy_descr(DType dtype) {
  for (const DescrEntry& e : kDescrs)
    if (e.dtype == dtype) return std::string(e.size == 1 ? "|" : "<") + e.kind + std::to_string(e.size);
  return "";
}

Result<NpyHeader> parse_npy_header(std::string_view bytes) {
  int major = 0;
  FERRY_ASSIGN_OR_RETURN(size_t end, header_end(bytes, &major));
  if (bytes.size() < end) return bad_header("file ends inside the header");
  size_t start = major == 1 ? 10 : 12;
  std::string_view text = bytes.substr(start, end - start);
  // Versions 1.0 and 2.0 promise latin-1 text; a NUL or other control byte
  // means garbage. 3.0 allows UTF-8, whose bytes are all >= 0x80.
  for (char c : text)
    if ((uint8_t(c) < 0x20 && c != '\n' && c != '\r' && c != '\t') || uint8_t(c) == 0x7f)
      return bad_header("header holds a control byte");
  FERRY_ASSIGN_OR_RETURN(NpyHeader h, HeaderParser(text).parse());
  h.data_offset = end;
  auto n = checked_numel(h.dims);
  if (!n || size_t(*n) > tensor_size_limit() / dtype_size(h.dtype))
    return invalid_argument(".npy shape (" + dims_to_string(h.dims, ',') + ") is too large");
  return h;
}

Result<Tensor> decode_npy(std::string_view bytes) {
  FERRY_ASSIGN_OR_RETURN(NpyHeader h, parse_npy_header(bytes));
  size_t need = size_t(*checked_numel(h.dims)) * dtype_size(h.dtype);
  size_t have = bytes.size() - h.data_offset;
  if (have != need)
    return invalid_argument(".npy data is " + std::to_string(have) + " bytes, but its header (" +
                            npy_descr(h.dtype) + ", shape (" + dims_to_string(h.dims, ',') + ")) needs " +
                            std::to_string(need));
  FERRY_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(h.dtype, h.dims));
  if (need) std::memcpy(t.raw(), bytes.data() + h.data_offset, need);
  if (h.dtype == DType::boolean)  // a bool byte other than 0/1 is undefined behaviour in C++
    for (int64_t i = 0; i < t.numel(); ++i) t.raw()[i] = t.raw()[i] != 0;
  return t;
}

Result<Tensor> read_npy(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return io_error(std::string("cannot open: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return io_error("not a regular file");
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return io_error(std::string("cannot open: ") + std::strerror(errno));
  if (std::fseek(f.get(), 0, SEEK_END) != 0) return io_error("cannot seek (not a regular file?)");
  long size = std::ftell(f.get());
  if (size < 0) return io_error("cannot determine the file size");
  std::rewind(f.get());
  // Read the preamble, then exactly the header it announces, then the data
  // straight into the tensor — after checking the file is big enough.
  std::string head(std::min<size_t>(size_t(size), 12), '\0');
  if (std::fread(head.data(), 1, head.size(), f.get()) != head.size()) return io_error("read failed");
  int major = 0;
  FERRY_ASSIGN_OR_RETURN(size_t end, header_end(head, &major));
  if (end > size_t(size)) return bad_header("file ends inside the header");
  head.resize(end);
  if (end > 12 && std::fread(head.data() + 12, 1, end - 12, f.get()) != end - 12) return io_error("read failed");
  FERRY_ASSIGN_OR_RETURN(NpyHeader h, parse_npy_header(head));
  size_t need = size_t(*checked_numel(h.dims)) * dtype_size(h.dtype);
  size_t have = size_t(size) - end;
  if (have != need)
    return invalid_argument(".npy data is " + std::to_string(have) + " bytes, but its header (" +
                            npy_descr(h.dtype) + ", shape (" + dims_to_string(h.dims, ',') + ")) needs " +
                            std::to_string(need));
  FERRY_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(h.dtype, h.dims));
  if (need && std::fread(t.raw(), 1, need, f.get()) != need) return io_error("read failed");
  if (h.dtype == DType::boolean)
    for (int64_t i = 0; i < t.numel(); ++i) t.raw()[i] = t.raw()[i] != 0;
  return t;
}

Result<std::string> encode_npy(const Tensor& t) {
  if (t.dtype() == DType::bf16)
    return invalid_argument("numpy has no bfloat16 dtype; convert the bf16 tensor to f32 before writing .npy");
  std::string descr = npy_descr(t.dtype());
  if (descr.empty()) return invalid_argument(std::string("cannot write dtype ") + dtype_name(t.dtype()) + " to .npy");
  std::string dict = format_header_dict(t, descr);
  // Pad with spaces so preamble + header + '\n' is a multiple of 64 bytes (numpy's alignment).
  bool v2 = dict.size() + 1 + 10 > 65535;
  size_t preamble = v2 ? 12 : 10;
  size_t total = preamble + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  out += char(v2 ? 2 : 1);
  out += char(0);
  uint32_t len = uint32_t(dict.size());
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += char((len >> (8 * i)) & 0xff);
  out += dict;
  size_t data_at = out.size();
  out.resize(data_at + t.nbytes());
  if (t.nbytes()) std::memcpy(out.data() + data_at, t.raw(), t.nbytes());
  return out;
}

Status write_npy(const std::string& path, const Tensor& t) {
  FERRY_ASSIGN_OR_RETURN(std::string bytes, encode_npy(t));
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return io_error(std::string("cannot open for writing: ") + std::strerror(errno));
  if (std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size())
    return io_error(std::string("write failed: ") + std::strerror(errno));
  FILE* raw = f.release();
  if (std::fclose(raw) != 0) return io_error(std::string("write failed: ") + std::strerror(errno));
  return Status::Ok();
}

}  // namespace ferry
