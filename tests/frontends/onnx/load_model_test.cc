#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "ir/text_format.h"
#include "onnx_test_util.h"

namespace ferry {
namespace {

using namespace onnx_test;

TEST(LoadModel, OnnxByContent) {
  TempDir dir;
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", onnx::TensorProto::FLOAT, {int64_t(2)});
  add_node(m, "Relu", {"x"}, {"y"}, "r");
  add_output(m, "y");
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  dir.write("no_extension", bytes);
  ImportReport report;
  auto g = load_model(dir.file("no_extension"), &report);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ((*g)->info().format, "onnx");
  EXPECT_EQ(report.format, "onnx");
  EXPECT_EQ(report.num_source_nodes, 1);
}

TEST(LoadModel, TextIr) {
  TempDir dir;
  dir.write("m.txt", "// a comment\ngraph main (%x: f32[2]) -> (%y) {\n  %y = Relu(%x) : f32[2] @r\n}\n");
  auto g = load_model(dir.file("m.txt"));
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ((*g)->num_nodes(), 1u);
  EXPECT_EQ((*g)->info().source_path, dir.file("m.txt"));

  dir.write("bad.txt", "graph main (%x: f32[2]) -> (%y) {\n  %y = NoSuchOp(%x)\n}\n");
  auto bad = load_model(dir.file("bad.txt"));
  ASSERT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.status().message(), "model '" + dir.file("bad.txt") + "': ");
}

TEST(LoadModel, DirectoriesAndPbFilesGoToTheTensorFlowFrontend) {
  TempDir dir;
  auto d = load_model(dir.path());
  ASSERT_FALSE(d.ok());
  EXPECT_CONTAINS(d.status().message(), "model '" + dir.path() + "': ");
  EXPECT_CONTAINS(d.status().message(), "directory has no saved_model.pb (not a TensorFlow SavedModel)");
  dir.write("frozen.pb", "whatever");
  auto pb = load_model(dir.file("frozen.pb"));
  EXPECT_CONTAINS(pb.status().message(),
                  "model '" + dir.file("frozen.pb") + "': not a TensorFlow GraphDef (protobuf parse failed)");
  dir.write("m.pt2", "whatever");
  EXPECT_CONTAINS(load_model(dir.file("m.pt2")).status().message(), "not a valid .pt2 (zip) archive");
  dir.write("m.pth", "\x80\x02.");  // a torch.save pickle: refused unopened
  EXPECT_CONTAINS(load_model(dir.file("m.pth")).status().message(), "never unpickles");
}

TEST(LoadModel, ErrorsNameTheFile) {
  TempDir dir;
  dir.write("garbage.onnx", "\x08\x07\xff\xff\xff");
  auto g = load_model(dir.file("garbage.onnx"));
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "model '" + dir.file("garbage.onnx") + "': not a valid ONNX model");
  auto missing = load_model(dir.file("missing.onnx"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_CONTAINS(missing.status().message(), "model '" + dir.file("missing.onnx") + "': cannot open");
}

}  // namespace
}  // namespace ferry
