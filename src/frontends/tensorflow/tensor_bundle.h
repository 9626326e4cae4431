// frontends/tensorflow/tensor_bundle.h — reading a TensorFlow checkpoint
// (tensor bundle): <prefix>.index, an SSTable of BundleEntryProto (the
// BundleHeaderProto under the empty key), and <prefix>.data-NNNNN-of-MMMMM
// shards holding the raw little-endian tensor bytes.
//
// Shard file names are built from the header's shard count, never taken from
// the files; every file must resolve (symlinks followed) inside the model
// directory, and every entry's offset and size must lie inside its shard.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "frontends/tensorflow/proto/tf_tensor_bundle.pb.h"
#include "ir/tensor.h"

namespace ferry::tf_import {

class TensorBundle {
 public:
  /// Reads `<prefix>.index`; `root` is the directory no file may lie outside of.
  static Result<TensorBundle> open(const std::string& root, const std::string& prefix);

  bool contains(const std::string& key) const { return entries_.count(key) != 0; }
  std::vector<std::string> keys() const;
  int num_shards() const { return num_shards_; }
  /// A numeric tensor, checked against its CRC-32C.
  Result<Tensor> read(const std::string& key) const;
  /// The elements of a DT_STRING tensor.
  Result<std::vector<std::string>> read_strings(const std::string& key) const;

 private:
  Result<std::string> read_bytes(const std::string& key, const tfproto::BundleEntryProto& e) const;
  std::string root_, prefix_;
  int num_shards_ = 0;
  std::map<std::string, tfproto::BundleEntryProto> entries_;
};

/// Reads a whole file that must resolve inside `root`; `what` names it in errors.
Result<std::string> read_file_inside(const std::string& root, const std::string& path, uint64_t max_bytes);

}  // namespace ferry::tf_import
