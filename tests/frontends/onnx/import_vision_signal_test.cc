// Importers of import_vision.cc and import_signal.cc: GridSample-16's mode
// names, DFT-17's axis attribute. (Numerics: tests/ops/*_test.cc and
// tests/ops/test_vision_signal_ops.py.)
#include <gtest/gtest.h>

#include "frontends/onnx/import_table.h"
#include "onnx_test_util.h"

namespace ferry {
namespace {

using namespace onnx_test;
using TP = onnx::TensorProto;

onnx::ModelProto grid_sample_model(int64_t opset, const char* mode) {
  onnx::ModelProto m = make_model(opset);
  add_input(m, "x", TP::FLOAT, {int64_t(1), int64_t(1), int64_t(4), int64_t(4)});
  add_input(m, "grid", TP::FLOAT, {int64_t(1), int64_t(2), int64_t(3), int64_t(2)});
  onnx::NodeProto* n = add_node(m, "GridSample", {"x", "grid"}, {"y"}, "gs");
  if (mode) set_string(n, "mode", mode);
  add_output(m, "y");
  return m;
}

TEST(OnnxImportVision, GridSampleModeNamesOfOpset16) {
  for (auto [mode, want] : {std::pair<const char*, const char*>{"bilinear", "linear"}, {"bicubic", "cubic"},
                            {"nearest", "nearest"}, {nullptr, "linear"}}) {
    auto g = import_model(grid_sample_model(16, mode));
    ASSERT_TRUE(g.ok()) << g.status().to_string();
    Node* n = producer_of(**g, "y");
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->op(), Op::GridSample);
    EXPECT_EQ(n->attr_string("mode"), want) << (mode ? mode : "(default)");
    EXPECT_EQ((*g)->outputs()[0]->type_string(), "f32[1,1,2,3]");
  }
  auto bad = import_model(grid_sample_model(16, "linear"));  // the opset-20 spelling
  ASSERT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.status().message(), "mode 'linear' is not one of bilinear, nearest, bicubic");
  auto now = import_model(grid_sample_model(22, "cubic"));
  ASSERT_TRUE(now.ok()) << now.status().to_string();
  EXPECT_EQ(producer_of(**now, "y")->attr_string("mode"), "cubic");
}

onnx::ModelProto dft17_model(std::optional<int64_t> axis) {
  onnx::ModelProto m = make_model(17);
  add_input(m, "x", TP::FLOAT, {int64_t(2), int64_t(8), int64_t(6), int64_t(1)});
  onnx::NodeProto* n = add_node(m, "DFT", {"x"}, {"y"}, "dft");
  if (axis) set_int(n, "axis", *axis);
  set_int(n, "onesided", 1);
  add_output(m, "y");
  return m;
}

TEST(OnnxImportSignal, Dft17AxisAttributeBecomesAnInput) {
  // DFT-17's default axis is 1 (DFT-20's is -2): the one-sided transform shortens axis 1.
  auto g = import_model(dft17_model(std::nullopt));
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  Node* n = producer_of(**g, "y");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->op(), Op::DFT);
  ASSERT_TRUE(n->input(2) && n->input(2)->is_constant());
  EXPECT_EQ(n->input(2)->constant()->get_int(0), 1);
  EXPECT_EQ((*g)->outputs()[0]->type_string(), "f32[2,5,6,2]");
  g = import_model(dft17_model(2));
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ((*g)->outputs()[0]->type_string(), "f32[2,8,4,2]");
}

TEST(OnnxImportSignal, Dft20HasNoAxisAttribute) {
  onnx::ModelProto m = dft17_model(1);
  m.mutable_opset_import(0)->set_version(20);
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "attribute 'axis' is not defined for DFT at opset 20");
}

}  // namespace
}  // namespace ferry
