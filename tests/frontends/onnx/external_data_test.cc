#include "frontends/onnx/external_data.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "onnx_test_util.h"

namespace ferry {
namespace {

using namespace onnx_test;
using TP = onnx::TensorProto;

const float kWeights[5] = {9.0f, 1.0f, 2.0f, 3.0f, 4.0f};  // the tensor is elements 1..4

TP external(const std::string& location, const std::string& offset = "4", const std::string& length = "16") {
  TP t;
  t.set_name("w");
  t.set_data_type(TP::FLOAT);
  t.add_dims(4);
  t.set_data_location(TP::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  if (!offset.empty()) kv("offset", offset);
  if (!length.empty()) kv("length", length);
  return t;
}

onnx::ModelProto model_with(const TP& w) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(4)});
  add_initializer(m, w);
  add_node(m, "Add", {"x", "w"}, {"y"}, "add");
  add_output(m, "y");
  return m;
}

/// A model directory with weights.bin inside and secret.bin next to it (outside).
struct Fixture {
  TempDir root;
  std::string dir = root.file("model");
  Fixture() {
    std::filesystem::create_directory(dir);
    std::string bytes(reinterpret_cast<const char*>(kWeights), sizeof kWeights);
    root.write("model/weights.bin", bytes);
    root.write("secret.bin", bytes);
  }
  Result<std::unique_ptr<Graph>> import(const TP& w, ImportOptions options = {}) const {
    std::string bytes;
    FERRY_CHECK(model_with(w).SerializeToString(&bytes), "serialize");
    root.write("model/model.onnx", bytes);
    return import_onnx(dir + "/model.onnx", nullptr, options);
  }
};

TEST(OnnxExternalData, ValidDataIsMemoryMapped) {
  Fixture f;
  auto g = f.import(external("weights.bin"));
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  const Tensor* w = (*g)->find_value("w")->constant();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->to_double_vector(), (std::vector<double>{1, 2, 3, 4}));
  // Mapped at file offset 4: the data sits 4 bytes into a page. A copy would
  // be in a 64-byte aligned heap buffer.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w->raw()) % 64, 4u);

  // No length: the rest of the file.
  auto g2 = f.import(external("weights.bin", "4", ""));
  ASSERT_TRUE(g2.ok()) << g2.status().to_string();
  // A symlink that stays inside the model directory is fine.
  ASSERT_EQ(::symlink("weights.bin", (f.dir + "/alias.bin").c_str()), 0);
  auto g3 = f.import(external("alias.bin"));
  ASSERT_TRUE(g3.ok()) << g3.status().to_string();
}

TEST(OnnxExternalData, DataDirectoryOption) {
  Fixture f;
  ImportOptions options;
  options.external_data_dir = f.root.path();
  auto g = f.import(external("secret.bin"), options);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ((*g)->find_value("w")->constant()->get_double(0), 1.0);
}

TEST(OnnxExternalData, RejectsAbsolutePath) {
  Fixture f;
  auto g = f.import(external(f.root.file("secret.bin")));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidModel);
  EXPECT_CONTAINS(g.status().message(), "initializer 'w': external data location '" + f.root.file("secret.bin") +
                                            "' is an absolute path");
}

TEST(OnnxExternalData, RejectsDotDot) {
  Fixture f;
  auto g = f.import(external("../secret.bin"));
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "initializer 'w': external data location '../secret.bin' contains a '..' component");
  auto g2 = f.import(external("sub/../weights.bin"));
  ASSERT_FALSE(g2.ok());
  EXPECT_CONTAINS(g2.status().message(), "contains a '..' component");
}

TEST(OnnxExternalData, RejectsSymlinkOutside) {
  Fixture f;
  ASSERT_EQ(::symlink(f.root.file("secret.bin").c_str(), (f.dir + "/link.bin").c_str()), 0);
  auto g = f.import(external("link.bin"));
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "initializer 'w': external data location 'link.bin' resolves to '");
  EXPECT_CONTAINS(g.status().message(), "outside the model directory");
}

TEST(OnnxExternalData, RejectsHardLink) {
  Fixture f;
  ASSERT_EQ(::link(f.root.file("secret.bin").c_str(), (f.dir + "/hard.bin").c_str()), 0);
  auto g = f.import(external("hard.bin"));
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "initializer 'w': external data file 'hard.bin' has 2 hard links");
}

TEST(OnnxExternalData, RejectsOffsetBeyondFile) {
  Fixture f;
  auto g = f.import(external("weights.bin", "1000", ""));
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(),
                  "initializer 'w': external data offset 1000 lies beyond the end of external data file "
                  "'weights.bin' (20 bytes)");
  auto g2 = f.import(external("weights.bin", "8", "16"));
  ASSERT_FALSE(g2.ok());
  EXPECT_CONTAINS(g2.status().message(), "external data range [8, 24) lies beyond the end");
}

TEST(OnnxExternalData, RejectsOffsetPlusLengthOverflow) {
  Fixture f;
  auto g = f.import(external("weights.bin", "1", "18446744073709551615"));
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(),
                  "initializer 'w': external data offset 1 + length 18446744073709551615 overflows 64 bits");
  auto g2 = f.import(external("weights.bin", "18446744073709551616", ""));  // 2^64: not a uint64
  ASSERT_FALSE(g2.ok());
  EXPECT_CONTAINS(g2.status().message(), "external data offset '18446744073709551616' is not a non-negative 64-bit integer");
  auto g3 = f.import(external("weights.bin", "-4", ""));
  ASSERT_FALSE(g3.ok());
  EXPECT_CONTAINS(g3.status().message(), "external data offset '-4' is not a non-negative 64-bit integer");
}

TEST(OnnxExternalData, RejectsWrongLengthAndMissingFile) {
  Fixture f;
  auto g = f.import(external("weights.bin", "0", "8"));
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "initializer 'w': external data has 8 bytes, expected 16");
  auto g2 = f.import(external("nothere.bin"));
  ASSERT_FALSE(g2.ok());
  EXPECT_EQ(g2.status().code(), StatusCode::kIoError);
  EXPECT_CONTAINS(g2.status().message(), "external data file 'nothere.bin' cannot be opened");
  auto g3 = f.import(external(""));
  ASSERT_FALSE(g3.ok());
  EXPECT_CONTAINS(g3.status().message(), "external data has no 'location'");
  auto g4 = f.import(external("."));
  ASSERT_FALSE(g4.ok());
  EXPECT_CONTAINS(g4.status().message(), "is not a regular file");
}

TEST(OnnxExternalData, MisalignedOffsetIsCopied) {
  Fixture f;
  f.root.write("model/odd.bin", std::string("\x01", 1) + std::string(reinterpret_cast<const char*>(kWeights + 1), 16));
  auto g = f.import(external("odd.bin", "1", "16"));
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  const Tensor* w = (*g)->find_value("w")->constant();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w->raw()) % alignof(float), 0u);
  EXPECT_EQ(w->to_double_vector(), (std::vector<double>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace ferry
