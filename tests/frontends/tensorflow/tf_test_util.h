// Helpers for the TensorFlow frontend tests: hand-built GraphDefs and a
// minimal writer of TensorFlow's table (SSTable) and tensor-bundle formats.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "frontends/tensorflow/proto/tf_graph.pb.h"
#include "frontends/tensorflow/proto/tf_tensor_bundle.pb.h"
#include "frontends/tensorflow/sstable.h"

namespace ferry::tf_test {

using namespace ferry::tfproto;

inline TensorShapeProto shape_proto(const std::vector<int64_t>& dims) {
  TensorShapeProto s;
  for (int64_t d : dims) s.add_dim()->set_size(d);
  return s;
}

inline NodeDef* add_node(GraphDef& g, const std::string& op, const std::string& name,
                         const std::vector<std::string>& inputs = {}) {
  NodeDef* n = g.add_node();
  n->set_op(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  return n;
}

inline void set_type(NodeDef* n, const std::string& attr, DataType t) { (*n->mutable_attr())[attr].set_type(t); }
inline void set_int(NodeDef* n, const std::string& attr, int64_t v) { (*n->mutable_attr())[attr].set_i(v); }
inline void set_bool(NodeDef* n, const std::string& attr, bool v) { (*n->mutable_attr())[attr].set_b(v); }
inline void set_float(NodeDef* n, const std::string& attr, float v) { (*n->mutable_attr())[attr].set_f(v); }
inline void set_string(NodeDef* n, const std::string& attr, const std::string& v) { (*n->mutable_attr())[attr].set_s(v); }
inline void set_ints(NodeDef* n, const std::string& attr, const std::vector<int64_t>& v) {
  auto* l = (*n->mutable_attr())[attr].mutable_list();
  for (int64_t x : v) l->add_i(x);
}

inline NodeDef* placeholder(GraphDef& g, const std::string& name, const std::vector<int64_t>& dims,
                            DataType t = DT_FLOAT) {
  NodeDef* n = add_node(g, "Placeholder", name);
  set_type(n, "dtype", t);
  *(*n->mutable_attr())["shape"].mutable_shape() = shape_proto(dims);
  return n;
}

inline NodeDef* const_f32(GraphDef& g, const std::string& name, const std::vector<int64_t>& dims,
                          const std::vector<float>& v) {
  NodeDef* n = add_node(g, "Const", name);
  set_type(n, "dtype", DT_FLOAT);
  TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(DT_FLOAT);
  *t->mutable_tensor_shape() = shape_proto(dims);
  t->set_tensor_content(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  return n;
}

inline NodeDef* const_i32(GraphDef& g, const std::string& name, const std::vector<int64_t>& dims,
                          const std::vector<int32_t>& v) {
  NodeDef* n = add_node(g, "Const", name);
  set_type(n, "dtype", DT_INT32);
  TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(DT_INT32);
  *t->mutable_tensor_shape() = shape_proto(dims);
  for (int32_t x : v) t->add_int_val(x);
  return n;
}

// --- table writer (LevelDB format, uncompressed) -------------------------------

inline void put_varint(std::string& s, uint64_t v) {
  while (v >= 0x80) {
    s.push_back(char(v | 0x80));
    v >>= 7;
  }
  s.push_back(char(v));
}
inline void put_fixed32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(char((v >> (8 * i)) & 0xff));
}

/// One block of entries with a restart point every `restart_every` entries.
inline std::string make_block(const std::vector<std::pair<std::string, std::string>>& entries, int restart_every = 2) {
  std::string b, prev;
  std::vector<uint32_t> restarts;
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [k, v] = entries[i];
    size_t shared = 0;
    if (i % size_t(restart_every) == 0) {
      restarts.push_back(uint32_t(b.size()));
    } else {
      while (shared < prev.size() && shared < k.size() && prev[shared] == k[shared]) ++shared;
    }
    put_varint(b, shared);
    put_varint(b, k.size() - shared);
    put_varint(b, v.size());
    b += k.substr(shared);
    b += v;
    prev = k;
  }
  if (restarts.empty()) restarts.push_back(0);
  for (uint32_t r : restarts) put_fixed32(b, r);
  put_fixed32(b, uint32_t(restarts.size()));
  return b;
}

/// Appends `block` + trailer to `file`; returns its handle bytes.
inline std::string append_block(std::string& file, const std::string& block) {
  std::string handle;
  put_varint(handle, file.size());
  put_varint(handle, block.size());
  file += block;
  std::string type(1, '\0');
  file += type;
  put_fixed32(file, tf_import::mask_crc32c(tf_import::crc32c(type, tf_import::crc32c(block))));
  return handle;
}

/// A table whose data is split into blocks of `per_block` sorted entries.
inline std::string make_table(const std::map<std::string, std::string>& kv, size_t per_block = 2) {
  std::string file;
  std::vector<std::pair<std::string, std::string>> all(kv.begin(), kv.end()), index;
  for (size_t i = 0; i < all.size(); i += per_block) {
    std::vector<std::pair<std::string, std::string>> chunk(all.begin() + long(i),
                                                           all.begin() + long(std::min(all.size(), i + per_block)));
    index.push_back({chunk.back().first, append_block(file, make_block(chunk))});
  }
  std::string meta_handle = append_block(file, make_block({}));
  std::string index_handle = append_block(file, make_block(index, 1));
  std::string footer = meta_handle + index_handle;
  footer.resize(40, '\0');
  put_fixed32(footer, 0x8b80fb57u);
  put_fixed32(footer, 0xdb477524u);
  return file + footer;
}

/// Writes DIR/variables/variables.{index,data-00000-of-00001} holding `tensors` (f32).
inline void write_bundle(const std::filesystem::path& dir, const std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>>& tensors) {
  std::filesystem::create_directories(dir / "variables");
  std::map<std::string, std::string> kv;
  BundleHeaderProto header;
  header.set_num_shards(1);
  kv[""] = header.SerializeAsString();
  std::string data;
  for (const auto& [key, t] : tensors) {
    std::string bytes(reinterpret_cast<const char*>(t.second.data()), t.second.size() * 4);
    BundleEntryProto e;
    e.set_dtype(DT_FLOAT);
    *e.mutable_shape() = shape_proto(t.first);
    e.set_offset(int64_t(data.size()));
    e.set_size(int64_t(bytes.size()));
    e.set_crc32c(tf_import::mask_crc32c(tf_import::crc32c(bytes)));
    data += bytes;
    kv[key] = e.SerializeAsString();
  }
  std::ofstream(dir / "variables" / "variables.index", std::ios::binary) << make_table(kv);
  std::ofstream(dir / "variables" / "variables.data-00000-of-00001", std::ios::binary) << data;
}

}  // namespace ferry::tf_test
