#include "validate/npz.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "validate/npy.h"

#if __has_include(<zlib.h>)
#include <zlib.h>
#define FERRY_HAVE_ZLIB_H 1
#endif

namespace ferry::validate {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;
constexpr size_t kEndSize = 22, kZip64LocatorSize = 20, kCentralSize = 46, kLocalSize = 30;
// Header + data of the largest array we accept (tensor_size_limit() may lower it).
uint64_t max_member_bytes() { return uint64_t(tensor_size_limit()) + kMaxNpyHeaderBytes; }

Status bad_zip(const std::string& msg) { return invalid_argument("not a valid .npz (zip) archive: " + msg); }

/// Little-endian reads at `at`; the caller has checked the bounds.
uint64_t le(std::string_view b, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | uint8_t(b[at + size_t(i)]);
  return v;
}

struct Member {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0, uncompressed = 0, local_offset = 0;
};

/// Where the central directory lies, from the end record (or its zip64 form).
Status find_central_directory(std::string_view b, uint64_t* offset, uint64_t* count) {
  if (b.size() < kEndSize) return bad_zip("the file is too short (" + std::to_string(b.size()) + " bytes)");
  // The end record is the last thing in the file, before a comment of at most 64 KiB.
  size_t end = std::string::npos;
  const size_t lowest = b.size() > kEndSize + 0xFFFF ? b.size() - kEndSize - 0xFFFF : 0;
  for (size_t at = b.size() - kEndSize + 1; at-- > lowest;)
    if (le(b, at, 4) == kEndSig && at + kEndSize + le(b, at + 20, 2) == b.size()) {
      end = at;
      break;
    }
  if (end == std::string::npos) return bad_zip("no end-of-central-directory record");
  if (le(b, end + 4, 2) != 0 || le(b, end + 6, 2) != 0) return bad_zip("multi-disk archives are not supported");
  *count = le(b, end + 10, 2);
  uint64_t size = le(b, end + 12, 4);
  *offset = le(b, end + 16, 4);
  if (*count == 0xFFFF || size == 0xFFFFFFFF || *offset == 0xFFFFFFFF) {
    if (end < kZip64LocatorSize || le(b, end - kZip64LocatorSize, 4) != kZip64LocatorSig)
      return bad_zip("zip64 sizes without a zip64 end-record locator");
    uint64_t z = le(b, end - kZip64LocatorSize + 8, 8);
    if (z > b.size() || b.size() - z < 56 || le(b, size_t(z), 4) != kZip64EndSig)
      return bad_zip("the zip64 end record is missing or truncated");
    *count = le(b, size_t(z) + 32, 8);
    size = le(b, size_t(z) + 40, 8);
    *offset = le(b, size_t(z) + 48, 8);
  }
  if (*offset > b.size() || size > b.size() - *offset) return bad_zip("the central directory lies beyond the file");
  // Each entry takes at least kCentralSize bytes: a huge count is a lie.
  if (*count > size / kCentralSize) return bad_zip("the central directory holds fewer entries than announced");
  return Status::Ok();
}

/// Reads the zip64 extra field: the 64-bit values of the 32-bit fields that are 0xFFFFFFFF, in order.
Status read_zip64_extra(std::string_view extra, Member& m, bool usize64, bool csize64, bool offset64) {
  size_t at = 0;
  while (at + 4 <= extra.size()) {
    uint64_t id = le(extra, at, 2), len = le(extra, at + 2, 2);
    if (at + 4 + len > extra.size()) return bad_zip("member '" + m.name + "': truncated extra field");
    if (id == 0x0001) {
      size_t p = at + 4, stop = at + 4 + size_t(len);
      auto take = [&](uint64_t& field) -> Status {
        if (p + 8 > stop) return bad_zip("member '" + m.name + "': short zip64 extra field");
        field = le(extra, p, 8);
        p += 8;
        return Status::Ok();
      };
      if (usize64) FERRY_TRY(take(m.uncompressed));
      if (csize64) FERRY_TRY(take(m.compressed));
      if (offset64) FERRY_TRY(take(m.local_offset));
      return Status::Ok();
    }
    at += 4 + size_t(len);
  }
  if (usize64 || csize64 || offset64) return bad_zip("member '" + m.name + "': zip64 sizes without a zip64 field");
  return Status::Ok();
}

Result<std::vector<Member>> read_central_directory(std::string_view b) {
  uint64_t offset = 0, count = 0;
  FERRY_TRY(find_central_directory(b, &offset, &count));
  std::vector<Member> members;
  size_t at = size_t(offset);
  for (uint64_t i = 0; i < count; ++i) {
    if (at + kCentralSize > b.size() || le(b, at, 4) != kCentralSig)
      return bad_zip("central directory entry " + std::to_string(i) + " is malformed");
    Member m;
    m.flags = uint16_t(le(b, at + 8, 2));
    m.method = uint16_t(le(b, at + 10, 2));
    m.crc = uint32_t(le(b, at + 16, 4));
    m.compressed = le(b, at + 20, 4);
    m.uncompressed = le(b, at + 24, 4);
    size_t name_len = size_t(le(b, at + 28, 2)), extra_len = size_t(le(b, at + 30, 2));
    size_t comment_len = size_t(le(b, at + 32, 2));
    m.local_offset = le(b, at + 42, 4);
    if (at + kCentralSize + name_len + extra_len + comment_len > b.size())
      return bad_zip("central directory entry " + std::to_string(i) + " runs past the end of the file");
    m.name = std::string(b.substr(at + kCentralSize, name_len));
    FERRY_TRY(read_zip64_extra(b.substr(at + kCentralSize + name_len, extra_len), m, m.uncompressed == 0xFFFFFFFF,
                               m.compressed == 0xFFFFFFFF, m.local_offset == 0xFFFFFFFF));
    members.push_back(std::move(m));
    at += kCentralSize + name_len + extra_len + comment_len;
  }
  return members;
}

// --- zlib, loaded at run time ------------------------------------------------------
// Loading libz.so.1 on demand keeps the build free of a link dependency; the
// library is on every system that has protobuf. Only the header's types are used.
#ifdef FERRY_HAVE_ZLIB_H
struct Zlib {
  decltype(&inflateInit2_) init = nullptr;
  decltype(&inflate) run = nullptr;
  decltype(&inflateEnd) end = nullptr;
};

const Zlib* zlib() {
  static Zlib z;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libz.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    z.init = reinterpret_cast<decltype(z.init)>(dlsym(h, "inflateInit2_"));
    z.run = reinterpret_cast<decltype(z.run)>(dlsym(h, "inflate"));
    z.end = reinterpret_cast<decltype(z.end)>(dlsym(h, "inflateEnd"));
  });
  return z.init && z.run && z.end ? &z : nullptr;
}

Result<std::string> inflate_member(std::string_view in, uint64_t out_size, const std::string& name) {
  const Zlib* z = zlib();
  if (!z) return unsupported(name + ": deflate-compressed member, but the system zlib (libz.so.1) was not found");
  std::string out(size_t(out_size), '\0');
  z_stream s{};
  // Negative window bits: a raw deflate stream, as zip stores it (no zlib header).
  if (z->init(&s, -15, ZLIB_VERSION, int(sizeof(z_stream))) != Z_OK)
    return internal_error(name + ": zlib inflateInit2 failed");
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  auto consumed = [&] { return size_t(reinterpret_cast<const char*>(s.next_in) - in.data()); };
  auto produced = [&] { return size_t(reinterpret_cast<char*>(s.next_out) - out.data()); };
  int rc = Z_OK;
  // avail_in/avail_out are 32-bit: members beyond 4 GiB go in 1 GiB pieces.
  // inflate returns Z_BUF_ERROR rather than looping when it cannot progress.
  do {
    if (s.avail_in == 0) s.avail_in = uInt(std::min<size_t>(in.size() - consumed(), size_t(1) << 30));
    if (s.avail_out == 0) s.avail_out = uInt(std::min<size_t>(out.size() - produced(), size_t(1) << 30));
    rc = z->run(&s, Z_NO_FLUSH);
  } while (rc == Z_OK);
  const size_t got = produced();
  std::string zmsg = s.msg ? std::string(" (") + s.msg + ")" : "";
  z->end(&s);
  if (rc == Z_BUF_ERROR && got == out.size())
    return invalid_argument(name + ": inflates to more than the " + std::to_string(out_size) + " bytes announced");
  if (rc != Z_STREAM_END) return invalid_argument(name + ": corrupt or truncated deflate data" + zmsg);
  if (got != out.size())
    return invalid_argument(name + ": inflates to " + std::to_string(got) + " bytes, the archive announces " +
                            std::to_string(out_size));
  return out;
}
#else
const void* zlib() { return nullptr; }
Result<std::string> inflate_member(std::string_view, uint64_t, const std::string& name) {
  return unsupported(name +
                     ": deflate-compressed member (np.savez_compressed), but ferry was built without "
                     "zlib.h; save the inputs with np.savez instead");
}
#endif

Result<Tensor> decode_member(std::string_view b, const Member& m) {
  const std::string what = "member '" + m.name + "'";
  if (m.flags & 0x1) return unsupported(what + " is encrypted");
  if (m.uncompressed > max_member_bytes())
    return invalid_argument(what + " is " + std::to_string(m.uncompressed) + " bytes, more than ferry accepts");
  if (m.local_offset > b.size() || b.size() - m.local_offset < kLocalSize ||
      le(b, size_t(m.local_offset), 4) != kLocalSig)
    return bad_zip(what + ": local header missing");
  const size_t at = size_t(m.local_offset);
  const uint64_t data_at = at + kLocalSize + le(b, at + 26, 2) + le(b, at + 28, 2);
  if (data_at > b.size() || m.compressed > b.size() - data_at) return bad_zip(what + ": data runs past the end");
  std::string_view data = b.substr(size_t(data_at), size_t(m.compressed));
  std::string inflated;
  if (m.method == 8) {
    // Deflate expands at most 1032:1; a larger claim is a lie, and believing
    // it would allocate gigabytes for a tiny file.
    if (m.uncompressed > m.compressed * 1032 + 1024)
      return bad_zip(what + ": claims " + std::to_string(m.uncompressed) + " bytes from " +
                     std::to_string(m.compressed) + " compressed, more than deflate can expand");
    FERRY_ASSIGN_OR_RETURN(inflated, inflate_member(data, m.uncompressed, what));
    data = inflated;
  } else if (m.method != 0) {
    return unsupported(what + ": compression method " + std::to_string(m.method) +
                       " is not supported (only stored and deflate, as numpy writes)");
  } else if (m.compressed != m.uncompressed) {
    return bad_zip(what + ": stored member with different compressed and uncompressed sizes");
  }
  if (crc32(data) != m.crc) return invalid_argument(what + ": CRC-32 mismatch (the archive is corrupt)");
  auto t = decode_npy(data);
  if (!t.ok()) return t.status().with_context(what);
  return t;
}

}  // namespace

uint32_t crc32(std::string_view bytes) {
  // Reflected polynomial 0xEDB88320, one table lookup per byte.
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (char ch : bytes) c = table[(c ^ uint8_t(ch)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

bool npz_deflate_available() { return zlib() != nullptr; }

Result<std::map<std::string, Tensor>> decode_npz(std::string_view bytes) {
  FERRY_ASSIGN_OR_RETURN(std::vector<Member> members, read_central_directory(bytes));
  std::map<std::string, Tensor> out;
  for (const Member& m : members) {
    constexpr std::string_view kSuffix = ".npy";
    if (m.name.size() <= kSuffix.size() || m.name.compare(m.name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
      continue;  // directories and non-array members
    std::string name = m.name.substr(0, m.name.size() - kSuffix.size());
    if (out.count(name)) return invalid_argument("array '" + name + "' appears twice in the archive");
    FERRY_ASSIGN_OR_RETURN(Tensor t, decode_member(bytes, m));
    out.emplace(std::move(name), std::move(t));
  }
  return out;
}

Result<std::map<std::string, Tensor>> read_npz(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return io_error(std::string("cannot open: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return io_error("not a regular file");
  FERRY_ASSIGN_OR_RETURN(auto buffer, map_file(path, 0, uint64_t(st.st_size)));
  return decode_npz(std::string_view(reinterpret_cast<const char*>(buffer->cdata()), buffer->size()));
}

}  // namespace ferry::validate
