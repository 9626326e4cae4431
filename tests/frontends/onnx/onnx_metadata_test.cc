// read_onnx_metadata (frontends/onnx/onnx_metadata.h): the metadata_props the exporter
// writes (OnnxExportOptions::metadata) come back without parsing the graph; a file that is
// not protobuf is an error naming it.
#include "frontends/onnx/onnx_metadata.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "export/onnx_exporter.h"
#include "ir/text_format.h"
#include "ops/shape_inference.h"

namespace ferry {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("ferry_meta_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(OnnxMetadata, ExportedMetadataReadsBack) {
  auto g = parse_graph(R"(graph g (%x: f32[2]) -> (%y) {
    %w = const f32[2] [1, 2]
    %y = Mul(%x, %w) @mul
  })");
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(infer_shapes(**g).ok());
  OnnxExportOptions o;
  o.metadata = {{"ferry.precision", R"({"mode": "fp16", "nodes": {}})"}, {"other", "x"}};
  const std::string path = temp_path("ok.onnx");
  ASSERT_TRUE(write_onnx_file(**g, path, o).ok());
  auto meta = read_onnx_metadata(path);
  ASSERT_TRUE(meta.ok()) << meta.status().to_string();
  EXPECT_EQ(*meta, o.metadata);
  std::filesystem::remove(path);
}

TEST(OnnxMetadata, BadFilesAreErrors) {
  EXPECT_FALSE(read_onnx_metadata(temp_path("missing.onnx")).ok());
  const std::string path = temp_path("bad.onnx");
  std::ofstream(path, std::ios::binary) << std::string("\x0a\xff\xff\xff", 4);  // field 1, length past the end
  auto meta = read_onnx_metadata(path);
  ASSERT_FALSE(meta.ok());
  EXPECT_NE(meta.status().message().find(path), std::string::npos) << meta.status().message();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace ferry
