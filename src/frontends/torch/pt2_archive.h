// frontends/torch/pt2_archive.h — the zip archive torch.export.save writes (.pt2), read with libzip.
//
// Layout (torch 2.8+, archive_format "pt2"); every entry sits under one root folder
// (the archive's name), which the reader strips:
//
//   archive_format                          "pt2"
//   models/<model>.json                     the serialized ExportedProgram (JSON)
//   data/weights/<model>_weights_config.json  fqn -> {path_name, use_pickle, tensor_meta}
//   data/weights/weight_N                   raw storage bytes of a parameter / persistent buffer
//   data/constants/<model>_constants_config.json, data/constants/tensor_N   constants, same form
//   data/sample_inputs/<model>.pt           a torch.save pickle: never opened
//
// Opening checks the whole directory before anything is read: entry count, names
// (no "..", no absolute or backslashed paths, one root folder), declared sizes and
// their total against tensor_size_limit(), the compression ratio (zip bombs), and
// refuses what can only be read by unpickling: custom_obj_* / opaque_obj_* entries and
// the pre-2.8 layouts whose weights are a pickled state dict. Reads check the bytes
// libzip delivers against the declared size (and libzip checks the CRC).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/status.h"
#include "ir/tensor.h"

namespace ferry::torch_import {

/// Most entries an archive may hold.
inline constexpr int64_t kMaxPt2Entries = 1 << 20;
/// Largest uncompressed / compressed ratio of a deflated entry.
inline constexpr uint64_t kMaxDeflateRatio = 200;
/// Largest JSON document (model.json, the payload configs) read.
inline constexpr uint64_t kMaxPt2JsonBytes = uint64_t(1) << 30;

/// How to save a program ferry can read (part of every refusal).
inline constexpr std::string_view kPt2SaveRecipe =
    "re-save it pickle-free with torch >= 2.8: ep = torch.export.export(model.eval(), args); "
    "torch.export.save(ep, 'model.pt2') with plain tensors as weights (no tensor subclasses, no "
    "torchbind or opaque objects); see docs/torch_frontend.md";

struct Pt2Entry {
  std::string name;        ///< without the root folder
  uint64_t index = 0;      ///< libzip index
  uint64_t size = 0;       ///< declared uncompressed size
};

class Pt2Archive {
 public:
  /// Opens a file and checks its directory.
  static Result<std::unique_ptr<Pt2Archive>> open_file(const std::string& path);
  /// The same over bytes held in memory (kept alive by the archive).
  static Result<std::unique_ptr<Pt2Archive>> open_bytes(std::string bytes);
  ~Pt2Archive();
  Pt2Archive(const Pt2Archive&) = delete;
  Pt2Archive& operator=(const Pt2Archive&) = delete;

  const std::vector<Pt2Entry>& entries() const { return entries_; }
  /// The entry called `name` (root folder stripped); null when absent.
  const Pt2Entry* find(std::string_view name) const;
  /// Reads an entry whole into memory; at most `max_bytes`.
  Result<std::string> read_text(const Pt2Entry& e, uint64_t max_bytes) const;
  /// Reads an entry into a fresh buffer (weights).
  Result<std::shared_ptr<Buffer>> read_buffer(const Pt2Entry& e) const;

 private:
  Pt2Archive() = default;
  Status check_directory();
  Status read_into(const Pt2Entry& e, uint8_t* dst) const;

  void* zip_ = nullptr;  ///< zip_t*
  std::string bytes_;    ///< open_bytes' data (libzip reads it in place)
  std::vector<Pt2Entry> entries_;
};

/// The checks on one entry name (exposed for the tests): empty, absolute, "..",
/// backslash, NUL or control characters are invalid_model errors.
Status check_entry_name(std::string_view name);

}  // namespace ferry::torch_import
