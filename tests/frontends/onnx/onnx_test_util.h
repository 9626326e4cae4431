// Builders for small ONNX models in tests, written to a temporary directory.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "frontends/frontend.h"

namespace ferry::onnx_test {

/// A fresh directory under the system temp dir, removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ferry_onnx_XXXXXX").string();
    FERRY_CHECK(::mkdtemp(tmpl.data()) != nullptr, "mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(file(name), std::ios::binary) << bytes;
  }

 private:
  std::string path_;
};

using DimSpec = std::variant<int64_t, std::string>;

inline onnx::ModelProto make_model(int64_t opset = 17, int64_t ir_version = 8) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  m.set_producer_name("ferry-test");
  m.set_producer_version("1.0");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("test_graph");
  return m;
}

inline onnx::ValueInfoProto* add_input(onnx::ModelProto& m, const std::string& name, int elem_type,
                                       const std::vector<DimSpec>& dims) {
  auto* vi = m.mutable_graph()->add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (const DimSpec& d : dims) {
    auto* dim = shape->add_dim();
    if (std::holds_alternative<int64_t>(d)) dim->set_dim_value(std::get<int64_t>(d));
    else if (!std::get<std::string>(d).empty()) dim->set_dim_param(std::get<std::string>(d));
  }
  return vi;
}

inline void add_output(onnx::ModelProto& m, const std::string& name) { m.mutable_graph()->add_output()->set_name(name); }

inline onnx::NodeProto* add_node(onnx::ModelProto& m, const std::string& op, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs, const std::string& name = "") {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

inline onnx::AttributeProto* add_attr(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto::AttributeType t) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}
inline void set_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  add_attr(n, name, onnx::AttributeProto::INT)->set_i(v);
}
inline void set_float(onnx::NodeProto* n, const std::string& name, float v) {
  add_attr(n, name, onnx::AttributeProto::FLOAT)->set_f(v);
}
inline void set_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  add_attr(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
inline void set_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = add_attr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void set_floats(onnx::NodeProto* n, const std::string& name, const std::vector<float>& v) {
  auto* a = add_attr(n, name, onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}

inline onnx::TensorProto f32_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                    const std::vector<float>& values, bool raw = false) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  if (raw) t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  else for (float v : values) t.add_float_data(v);
  return t;
}

inline onnx::TensorProto i64_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

inline void add_initializer(onnx::ModelProto& m, const onnx::TensorProto& t) {
  *m.mutable_graph()->add_initializer() = t;
}

inline void set_tensor(onnx::NodeProto* n, const std::string& name, const onnx::TensorProto& t) {
  *add_attr(n, name, onnx::AttributeProto::TENSOR)->mutable_t() = t;
}

/// Writes `m` into `dir` and imports it.
inline Result<std::unique_ptr<Graph>> import_in(const TempDir& dir, const onnx::ModelProto& m,
                                                ImportReport* report = nullptr, const std::string& name = "model.onnx") {
  std::string bytes;
  FERRY_CHECK(m.SerializeToString(&bytes), "serialize failed");
  dir.write(name, bytes);
  ImportReport local;
  return import_onnx(dir.file(name), report ? report : &local, {});
}

/// Imports `m` through a fresh temporary directory.
inline Result<std::unique_ptr<Graph>> import_model(const onnx::ModelProto& m, ImportReport* report = nullptr) {
  TempDir dir;
  return import_in(dir, m, report);
}

/// The IR node whose main output carries the ONNX value name `value`.
inline Node* producer_of(const Graph& g, const std::string& value) {
  Value* v = g.find_value(value);
  return v ? v->producer() : nullptr;
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "message: " << (haystack)

}  // namespace ferry::onnx_test
