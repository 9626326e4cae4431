// The repair table and its hook in the ONNX importer: without repairs a covered
// node is unsupported with "repair available"; with them it is rewritten and
// recorded; a refused form says why; an op without a rule says so.
// (Every rule's numerics against ONNX Runtime: tests/repair/test_contrib_rules.py.)
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "../frontends/onnx/onnx_test_util.h"
#include "repair/repair_rule.h"
#include "runtime/interpreter.h"

namespace ferry {
namespace {

using namespace onnx_test;

onnx::ModelProto contrib_model(const std::string& op, const std::vector<std::string>& inputs) {
  onnx::ModelProto m = make_model(14);
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  add_input(m, "x", onnx::TensorProto::FLOAT, {1, 4});
  add_node(m, op, inputs, {"y"}, op + "_0")->set_domain("com.microsoft");
  add_output(m, "y");
  return m;
}

Result<std::unique_ptr<Graph>> import_with(const onnx::ModelProto& m, bool repair, ImportReport* report) {
  TempDir dir;
  std::string bytes;
  m.SerializeToString(&bytes);
  dir.write("m.onnx", bytes);
  ImportOptions o;
  o.repair = repair;
  return import_onnx(dir.file("m.onnx"), report, o);
}

TEST(RepairTable, RulesAreUniqueAndFound) {
  std::set<std::string> names;
  for (const repair::RepairRule& r : repair::repair_rules()) {
    EXPECT_TRUE(names.insert(repair::rule_name(r)).second) << repair::rule_name(r);
    EXPECT_EQ(repair::find_repair(r.domain, r.op_type), &r);
  }
  EXPECT_NE(repair::find_repair("com.microsoft", "Attention"), nullptr);
  EXPECT_NE(repair::find_repair("com.microsoft", "GroupQueryAttention"), nullptr);
  EXPECT_EQ(repair::find_repair("com.microsoft", "QAttention"), nullptr);
  EXPECT_EQ(repair::find_repair("", "Attention"), nullptr);
}

TEST(RepairImport, WithoutRepairTheRuleIsOffered) {
  onnx::ModelProto m = contrib_model("BiasGelu", {"x", "b"});
  add_initializer(m, f32_tensor("b", {4}, {0.5f, 0.5f, 0.5f, 0.5f}));
  ImportReport report;
  auto g = import_with(m, false, &report);
  ASSERT_FALSE(g.ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair, "repair available: com.microsoft.BiasGelu");
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair, "(use --repair)");
  EXPECT_TRUE(report.repairs.empty());
}

TEST(RepairImport, RepairIsAppliedAndRecorded) {
  onnx::ModelProto m = contrib_model("BiasGelu", {"x", "b"});
  add_initializer(m, f32_tensor("b", {4}, {0.5f, 0.5f, 0.5f, 0.5f}));
  ImportReport report;
  auto g = import_with(m, true, &report);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  ASSERT_EQ(report.repairs.size(), 1u);
  EXPECT_EQ(report.repairs[0].node_name, "BiasGelu_0");
  EXPECT_EQ(report.repairs[0].rule, "com.microsoft.BiasGelu");
  EXPECT_EQ(report.repairs[0].became, (std::vector<std::string>{"Add", "Gelu"}));
  const std::vector<float> x = {-2.0f, -0.5f, 0.0f, 1.5f};
  auto out = interpret(**g, {{"x", Tensor::from_vector<float>(x, {1, 4})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i] + 0.5;
    EXPECT_NEAR((*out)[0].get_double(int64_t(i)), 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-6);
  }
}

// A rank-0 X for a norm whose scale is [C]: the unbatched-X adapter (repair/shape_adapters.cc) must
// not read X's axis 1 (it did: a fuzzer-found out-of-bounds read, fuzz/regressions/onnx_load_fuzz/
// norm-rank0-x-unbatched-adapter); the import fails with the node named, with and without repairs.
TEST(RepairImport, ScalarNormInputIsAnErrorNotAnOutOfBoundsRead) {
  for (const char* op : {"BatchNormalization", "InstanceNormalization"}) {
    onnx::ModelProto m = make_model(15);
    add_input(m, "x", onnx::TensorProto::FLOAT, {});
    for (const char* w : {"s", "b", "mu", "var"}) add_initializer(m, f32_tensor(w, {4}, {1, 1, 1, 1}));
    std::vector<std::string> ins = {"x", "s", "b"};
    if (std::string(op) == "BatchNormalization") ins.insert(ins.end(), {"mu", "var"});
    add_node(m, op, ins, {"y"}, "norm_0");
    add_output(m, "y");
    for (bool repair : {false, true}) {
      ImportReport report;
      auto g = import_with(m, repair, &report);
      ASSERT_FALSE(g.ok() && report.unsupported.empty()) << op;
      const std::string why = g.ok() ? report.unsupported[0].reason : g.status().message();
      EXPECT_CONTAINS(why + (report.unsupported.empty() ? "" : report.unsupported[0].node_name), "norm_0");
    }
  }
}

TEST(RepairImport, RefusedFormSaysWhy) {
  onnx::ModelProto m = contrib_model("FusedMatMul", {"x", "w"});
  add_initializer(m, f32_tensor("w", {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  set_int(m.mutable_graph()->mutable_node(0), "transBatchA", 1);
  ImportReport report;
  ASSERT_FALSE(import_with(m, true, &report).ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair,
                  "no repair applies: rule com.microsoft.FusedMatMul transBatchA = 1 is not handled");
}

TEST(RepairImport, RefusedRotaryAndNBitsFormsSayWhy) {
  onnx::ModelProto m = contrib_model("RotaryEmbedding", {"x", "pos", "cos", "sin"});
  add_input(m, "pos", onnx::TensorProto::INT64, {1, 1});
  add_initializer(m, f32_tensor("cos", {4, 2}, std::vector<float>(8, 1.f)));
  add_initializer(m, f32_tensor("sin", {4, 2}, std::vector<float>(8, 0.f)));
  set_int(m.mutable_graph()->mutable_node(0), "is_packed_batching", 1);
  ImportReport report;
  ASSERT_FALSE(import_with(m, true, &report).ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair, "is_packed_batching = 1 (packed sequences) is not handled");

  onnx::ModelProto q = contrib_model("MatMulNBits", {"x", "b", "s", "", "g"});
  add_input(q, "b", onnx::TensorProto::UINT8, {2, 1, 8});
  add_input(q, "s", onnx::TensorProto::FLOAT, {2});
  add_input(q, "g", onnx::TensorProto::INT32, {4});
  auto* node = q.mutable_graph()->mutable_node(0);
  set_int(node, "K", 4);
  set_int(node, "N", 2);
  set_int(node, "block_size", 16);
  ASSERT_FALSE(import_with(q, true, &report).ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair, "B is not a constant (initializer)");
}

TEST(RepairImport, OpWithoutRuleSaysSo) {
  onnx::ModelProto m = contrib_model("QAttention", {"x"});
  ImportReport report;
  ASSERT_FALSE(import_with(m, true, &report).ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair, "no repair rule");
}

TEST(RepairImport, DefaultDomainLayerNormBeforeOpset17) {
  onnx::ModelProto m = make_model(14);
  add_input(m, "x", onnx::TensorProto::FLOAT, {2, 4});
  add_initializer(m, f32_tensor("g", {4}, {1, 1, 1, 1}));
  add_node(m, "LayerNormalization", {"x", "g"}, {"y"}, "ln");
  add_output(m, "y");
  ImportReport off, on;
  ASSERT_FALSE(import_with(m, false, &off).ok());
  ASSERT_EQ(off.unsupported.size(), 1u);
  EXPECT_CONTAINS(off.unsupported[0].reason, "does not exist at opset 14");
  EXPECT_CONTAINS(off.unsupported[0].proposed_repair, "repair available: LayerNormalization");
  auto g = import_with(m, true, &on);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(on.repairs.at(0).became, (std::vector<std::string>{"LayerNormalization"}));
}

}  // namespace
}  // namespace ferry
