#include "frontends/torch/pt2_archive.h"

#include <zip.h>

#include <algorithm>
#include <cstring>

namespace ferry::torch_import {
namespace {

zip_t* as_zip(void* z) { return static_cast<zip_t*>(z); }

Status zip_status(zip_error_t* err, const std::string& what) {
  std::string msg = what + ": " + zip_error_strerror(err);
  zip_error_fini(err);
  return invalid_model("not a valid .pt2 (zip) archive: " + msg);
}

bool is_pickle_payload_name(std::string_view base) {
  return base.rfind("custom_obj_", 0) == 0 || base.rfind("opaque_obj_", 0) == 0;
}

}  // namespace

Status check_entry_name(std::string_view name) {
  auto bad = [&](const char* why) {
    return invalid_model("zip entry '" + std::string(name.substr(0, 200)) + "' " + why);
  };
  if (name.empty()) return bad("has an empty name");
  if (name.size() > 4096) return bad("has a name longer than 4096 bytes");
  if (name[0] == '/') return bad("is an absolute path");
  for (char c : name) {
    if (c == '\\') return bad("contains a backslash");
    if (static_cast<unsigned char>(c) < 0x20) return bad("contains a control character");
  }
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(start, end - start) == "..") return bad("contains '..'");
    start = end + 1;
  }
  return Status::Ok();
}

Result<std::unique_ptr<Pt2Archive>> Pt2Archive::open_file(const std::string& path) {
  int code = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (!z) {
    zip_error_t err;
    zip_error_init_with_code(&err, code);
    return zip_status(&err, "cannot open");
  }
  std::unique_ptr<Pt2Archive> a(new Pt2Archive());
  a->zip_ = z;
  FERRY_TRY(a->check_directory());
  return a;
}

Result<std::unique_ptr<Pt2Archive>> Pt2Archive::open_bytes(std::string bytes) {
  std::unique_ptr<Pt2Archive> a(new Pt2Archive());
  a->bytes_ = std::move(bytes);
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* src = zip_source_buffer_create(a->bytes_.data(), a->bytes_.size(), 0, &err);
  if (!src) return zip_status(&err, "cannot read the bytes");
  zip_t* z = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &err);
  if (!z) {
    zip_source_free(src);
    return zip_status(&err, "cannot open");
  }
  zip_error_fini(&err);
  a->zip_ = z;
  FERRY_TRY(a->check_directory());
  return a;
}

Pt2Archive::~Pt2Archive() {
  if (zip_) zip_discard(as_zip(zip_));
}

Status Pt2Archive::check_directory() {
  const zip_int64_t n = zip_get_num_entries(as_zip(zip_), 0);
  if (n < 0) return invalid_model("not a valid .pt2 (zip) archive: no central directory");
  if (n == 0) return invalid_model("not a valid .pt2 archive: the zip archive is empty");
  if (n > kMaxPt2Entries)
    return invalid_model("the zip archive has " + std::to_string(n) + " entries, over the limit of " +
                         std::to_string(kMaxPt2Entries));
  std::string root;
  uint64_t total = 0;
  const uint64_t total_limit = 4 * uint64_t(tensor_size_limit());
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(as_zip(zip_), zip_uint64_t(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) ||
        !(st.valid & ZIP_STAT_SIZE))
      return invalid_model("not a valid .pt2 (zip) archive: entry " + std::to_string(i) + " cannot be read");
    std::string_view name(st.name);
    FERRY_TRY(check_entry_name(name));
    if (name.back() == '/') continue;  // a directory entry
    const size_t slash = name.find('/');
    if (slash == std::string_view::npos || slash == 0)
      return invalid_model("zip entry '" + std::string(name) + "' is not inside the archive's root folder");
    if (root.empty()) root = std::string(name.substr(0, slash + 1));
    if (name.compare(0, root.size(), root) != 0)
      return invalid_model("zip entry '" + std::string(name) + "' is outside the root folder '" + root +
                           "' (a .pt2 archive has exactly one)");
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
      return unsupported("zip entry '" + std::string(name) + "' is encrypted");
    if ((st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method != ZIP_CM_STORE) {
      if (st.comp_method != ZIP_CM_DEFLATE)
        return unsupported("zip entry '" + std::string(name) + "' uses compression method " +
                           std::to_string(st.comp_method) + "; torch.export.save stores entries uncompressed");
      if (!(st.valid & ZIP_STAT_COMP_SIZE) || st.size / std::max<zip_uint64_t>(st.comp_size, 1) > kMaxDeflateRatio)
        return invalid_model("zip entry '" + std::string(name) + "' inflates " + std::to_string(st.size) +
                             " bytes from " + std::to_string(st.comp_size) + " (a zip bomb?)");
    }
    if (st.size > uint64_t(tensor_size_limit()) + kMaxPt2JsonBytes || st.size > total_limit - std::min(total, total_limit))
      return invalid_model("zip entry '" + std::string(name) + "' declares " + std::to_string(st.size) +
                           " bytes: the archive's entries together exceed the size limit of " +
                           std::to_string(total_limit) + " bytes");
    total += st.size;
    std::string stripped(name.substr(root.size()));
    const size_t base = stripped.rfind('/');
    if (stripped.rfind("data/constants/", 0) == 0 && is_pickle_payload_name(stripped.substr(base + 1)))
      return unsupported("the archive holds a pickled object ('" + stripped +
                         "': a torchbind or opaque object), which ferry never unpickles; " + std::string(kPt2SaveRecipe));
    entries_.push_back({std::move(stripped), zip_uint64_t(i), st.size});
  }
  std::sort(entries_.begin(), entries_.end(), [](const Pt2Entry& a, const Pt2Entry& b) { return a.name < b.name; });
  for (size_t i = 1; i < entries_.size(); ++i)
    if (entries_[i].name == entries_[i - 1].name)
      return invalid_model("zip entry '" + entries_[i].name + "' appears twice");
  return Status::Ok();
}

const Pt2Entry* Pt2Archive::find(std::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Pt2Entry& e, std::string_view n) { return e.name < n; });
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

Status Pt2Archive::read_into(const Pt2Entry& e, uint8_t* dst) const {
  zip_file_t* f = zip_fopen_index(as_zip(zip_), e.index, 0);
  if (!f)
    return invalid_model("zip entry '" + e.name + "' cannot be opened: " + zip_strerror(as_zip(zip_)));
  uint64_t got = 0;
  while (got < e.size) {
    const zip_int64_t r = zip_fread(f, dst + got, e.size - got);
    if (r < 0) {
      std::string msg = zip_file_strerror(f);
      zip_fclose(f);
      return invalid_model("zip entry '" + e.name + "' cannot be read: " + msg);
    }
    if (r == 0) break;
    got += uint64_t(r);
  }
  // One byte more than declared is a lie in the directory, as is one byte less.
  uint8_t extra = 0;
  const bool longer = got == e.size && zip_fread(f, &extra, 1) > 0;
  const int close = zip_fclose(f);
  if (got < e.size)
    return invalid_model("zip entry '" + e.name + "' is truncated: " + std::to_string(got) + " of " +
                         std::to_string(e.size) + " bytes");
  if (longer) return invalid_model("zip entry '" + e.name + "' holds more bytes than its declared size");
  if (close != 0) return invalid_model("zip entry '" + e.name + "' is corrupt (checksum mismatch)");
  return Status::Ok();
}

Result<std::string> Pt2Archive::read_text(const Pt2Entry& e, uint64_t max_bytes) const {
  if (e.size > max_bytes)
    return invalid_model("zip entry '" + e.name + "' is " + std::to_string(e.size) + " bytes, over the limit of " +
                         std::to_string(max_bytes));
  std::string s(size_t(e.size), '\0');
  FERRY_TRY(read_into(e, reinterpret_cast<uint8_t*>(s.data())));
  return s;
}

Result<std::shared_ptr<Buffer>> Pt2Archive::read_buffer(const Pt2Entry& e) const {
  if (e.size > tensor_size_limit())
    return invalid_model("zip entry '" + e.name + "' is " + std::to_string(e.size) +
                         " bytes, over the tensor size limit of " + std::to_string(tensor_size_limit()));
  FERRY_ASSIGN_OR_RETURN(auto buf, allocate_buffer(size_t(e.size), false));
  if (e.size) FERRY_TRY(read_into(e, buf->data()));
  return buf;
}

}  // namespace ferry::torch_import
