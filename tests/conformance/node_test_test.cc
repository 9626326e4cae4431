// conformance/node_test: the scope rules, one case run end to end, and the baseline check.
#include "conformance/node_test.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "conformance/summary.h"
#include "../frontends/onnx/onnx_test_util.h"

namespace ferry::conformance {
namespace {

using namespace ferry::onnx_test;

onnx::ModelProto relu_model() {
  onnx::ModelProto m = make_model(17);
  add_input(m, "x", onnx::TensorProto::FLOAT, {int64_t(4)});
  add_node(m, "Relu", {"x"}, {"y"});
  add_output(m, "y");
  return m;
}

TEST(ConformanceScope, PlainTensorModelIsInScope) { EXPECT_EQ(out_of_scope_reason(relu_model()), ""); }

TEST(ConformanceScope, SequenceStringAndNarrowTypesAreOutOfScope) {
  onnx::ModelProto seq = relu_model();
  seq.mutable_graph()->mutable_input(0)->mutable_type()->mutable_sequence_type();
  EXPECT_NE(out_of_scope_reason(seq).find("sequence input 'x'"), std::string::npos);
  onnx::ModelProto str = relu_model();
  str.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::STRING);
  EXPECT_NE(out_of_scope_reason(str).find("string input"), std::string::npos);
  onnx::ModelProto f8 = relu_model();
  set_int(f8.mutable_graph()->mutable_node(0), "to", 17);  // FLOAT8E4M3FN
  f8.mutable_graph()->mutable_node(0)->set_op_type("Cast");
  EXPECT_NE(out_of_scope_reason(f8).find("FLOAT8E4M3FN"), std::string::npos);
}

TEST(ConformanceScope, TrainingOpsAndModesAreOutOfScope) {
  onnx::ModelProto adam = relu_model();
  adam.mutable_graph()->mutable_node(0)->set_domain("ai.onnx.preview.training");
  adam.mutable_graph()->mutable_node(0)->set_op_type("Adam");
  EXPECT_NE(out_of_scope_reason(adam).find("training op Adam"), std::string::npos);
  onnx::ModelProto drop = make_model(17);
  add_input(drop, "x", onnx::TensorProto::FLOAT, {int64_t(4)});
  add_node(drop, "Dropout", {"x", "", "t"}, {"y"});
  EXPECT_EQ(out_of_scope_reason(drop), "training-mode Dropout");
  onnx::ModelProto infer = make_model(17);
  add_node(infer, "Dropout", {"x"}, {"y"});
  EXPECT_EQ(out_of_scope_reason(infer), "");
}

TEST(ConformanceScope, OpsInsideSubgraphsAreChecked) {
  onnx::ModelProto m = relu_model();
  onnx::NodeProto* n = m.mutable_graph()->mutable_node(0);
  n->set_op_type("If");
  auto* a = add_attr(n, "then_branch", onnx::AttributeProto::GRAPH);
  a->mutable_g()->add_node()->set_op_type("SequenceEmpty");
  EXPECT_NE(out_of_scope_reason(m).find("SequenceEmpty"), std::string::npos);
}

void write_tensor(const std::string& path, const onnx::TensorProto& t) {
  std::ofstream(path, std::ios::binary) << t.SerializeAsString();
}

TEST(ConformanceRun, PassesAndFailsOnTheExpectedValues) {
  TempDir dir;
  const std::string c = dir.file("test_relu_small");
  std::filesystem::create_directories(c + "/test_data_set_0");
  std::ofstream(c + "/model.onnx", std::ios::binary) << relu_model().SerializeAsString();
  write_tensor(c + "/test_data_set_0/input_0.pb", f32_tensor("x", {4}, {-1, 2, -3, 4}));
  write_tensor(c + "/test_data_set_0/output_0.pb", f32_tensor("y", {4}, {0, 2, 0, 4}));
  CaseResult r = run_node_test(c);
  EXPECT_EQ(r.outcome, Outcome::passed) << r.reason;
  EXPECT_EQ(r.op, "Relu");

  // 4 * (1 + 1e-3) + 1e-7 is the edge of the suite's tolerance.
  write_tensor(c + "/test_data_set_0/output_0.pb", f32_tensor("y", {4}, {0, 2, 0, 4.0039f}));
  EXPECT_EQ(run_node_test(c).outcome, Outcome::passed);
  write_tensor(c + "/test_data_set_0/output_0.pb", f32_tensor("y", {4}, {0, 2, 0, 4.0045f}));
  r = run_node_test(c);
  EXPECT_EQ(r.outcome, Outcome::failed);
  EXPECT_NE(r.reason.find("flat index 3"), std::string::npos) << r.reason;

  write_tensor(c + "/test_data_set_0/output_0.pb", f32_tensor("y", {2, 2}, {0, 2, 0, 4}));
  r = run_node_test(c);
  EXPECT_EQ(r.outcome, Outcome::failed);
  EXPECT_NE(r.reason.find("shape"), std::string::npos) << r.reason;

  write_tensor(c + "/test_data_set_0/output_1.pb", f32_tensor("z", {4}, {0, 2, 0, 4}));
  r = run_node_test(c);
  EXPECT_EQ(r.outcome, Outcome::failed);
  EXPECT_NE(r.reason.find("expects 2"), std::string::npos) << r.reason;
}

TEST(ConformanceRun, UnsupportedOpIsUnsupportedWithTheImportersReason) {
  TempDir dir;
  const std::string c = dir.file("test_frob");
  std::filesystem::create_directories(c + "/test_data_set_0");
  onnx::ModelProto m = relu_model();
  m.mutable_graph()->mutable_node(0)->set_op_type("Frobnicate");
  std::ofstream(c + "/model.onnx", std::ios::binary) << m.SerializeAsString();
  CaseResult r = run_node_test(c);
  EXPECT_EQ(r.outcome, Outcome::unsupported);
  EXPECT_NE(r.reason.find("Frobnicate: no importer"), std::string::npos) << r.reason;
}

TEST(ConformanceBaseline, RegressionsNameTheCaseAndTheRate) {
  std::vector<CaseResult> results(3);
  results[0] = {"test_a", "Abs", Outcome::passed, "", 0, 0};
  results[1] = {"test_b", "Abs", Outcome::failed, "mismatch", 1, 2};
  results[2] = {"test_b_expanded", "", Outcome::unsupported, "no importer", 0, 0};
  Summary s = summarize(results);
  EXPECT_EQ(s.per_op["Abs"].total(), 3);  // the expanded case counts under its base case's op
  Baseline b;
  b.cases = {"test_a"};
  b.pass_rate = 1.0 / 3;
  EXPECT_TRUE(regressions(results, s, b).empty());
  b.cases = {"test_a", "test_b", "test_gone"};
  b.pass_rate = 0.5;
  auto bad = regressions(results, s, b);
  ASSERT_EQ(bad.size(), 3u);
  EXPECT_EQ(bad[0], "test_b: failed: mismatch");
  EXPECT_NE(bad[1].find("test_gone"), std::string::npos);
  EXPECT_NE(bad[2].find("below the baseline"), std::string::npos);
}

}  // namespace
}  // namespace ferry::conformance
