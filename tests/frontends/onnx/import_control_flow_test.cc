// frontends/onnx/import_control_flow.cc: If / Loop subgraphs, outer-scope reads, errors.
#include <gtest/gtest.h>

#include "ir/subgraph.h"
#include "onnx_test_util.h"

namespace ferry {
namespace {

using namespace onnx_test;
using TP = onnx::TensorProto;

/// A branch computing `op`(inputs) -> out, reading whatever names it is given.
onnx::GraphProto branch(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                        const std::string& out) {
  onnx::GraphProto g;
  g.set_name(name);
  auto* n = g.add_node();
  n->set_op_type(op);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(out);
  g.add_output()->set_name(out);
  return g;
}

void set_graph(onnx::NodeProto* n, const std::string& attr, const onnx::GraphProto& g) {
  *add_attr(n, attr, onnx::AttributeProto::GRAPH)->mutable_g() = g;
}

// y = If(c) { then: x * w } else { -x }; w an initializer, x a graph input; the If is
// listed before the node producing its condition (the importer orders by what it reads).
onnx::ModelProto if_model() {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  add_initializer(m, f32_tensor("w", {2}, {2, 3}));
  add_initializer(m, f32_tensor("zero", {}, {0}));
  auto* n = add_node(m, "If", {"c"}, {"y"}, "if");
  set_graph(n, "then_branch", branch("then", "Mul", {"x2", "w"}, "t"));
  set_graph(n, "else_branch", branch("else", "Neg", {"x"}, "e"));
  add_node(m, "Identity", {"x"}, {"x2"}, "copy");
  add_node(m, "ReduceSum", {"x"}, {"s"}, "sum");
  add_node(m, "Greater", {"s", "zero"}, {"c0"}, "gt");
  add_node(m, "Squeeze", {"c0"}, {"c"}, "sq");
  add_output(m, "y");
  return m;
}

TEST(ImportControlFlow, IfBranchesReadOuterValuesAsCaptures) {
  auto g = import_model(if_model());
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  Node* n = producer_of(**g, "y");
  ASSERT_EQ(n->op(), Op::If);
  const Graph& then_b = n->attr_graph("then_branch");
  const Graph& else_b = n->attr_graph("else_branch");
  // then reads x2 (a capture) and w (an initializer: a constant of its own, sharing the buffer)
  ASSERT_EQ(then_b.captures().size(), 1u);
  EXPECT_EQ(then_b.captures()[0]->name(), "x2");
  ASSERT_NE(then_b.find_value("w"), nullptr);
  EXPECT_TRUE(then_b.find_value("w")->is_constant());
  ASSERT_EQ(else_b.captures().size(), 1u);
  // inputs: the condition, else's captures, then's (attribute-name order)
  ASSERT_EQ(n->num_inputs(), 3u);
  EXPECT_EQ(n->input(1)->name(), "x");
  EXPECT_EQ(n->input(2)->name(), "x2");
  EXPECT_EQ((*g)->find_value("y")->type_string(), "f32[2]");
}

TEST(ImportControlFlow, UndefinedOuterReadIsAnError) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "c", TP::BOOL, {});
  auto* n = add_node(m, "If", {"c"}, {"y"}, "if");
  set_graph(n, "then_branch", branch("then", "Neg", {"nowhere"}, "t"));
  set_graph(n, "else_branch", branch("else", "Neg", {"nowhere"}, "e"));
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "node 'if' (If): a subgraph reads 'nowhere', which is not produced by any "
                                        "node, initializer or graph input");
}

TEST(ImportControlFlow, UnsupportedOpInABranchIsListed) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "c", TP::BOOL, {});
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  auto* n = add_node(m, "If", {"c"}, {"y"}, "if");
  set_graph(n, "then_branch", branch("then", "NoSuchOp", {"x"}, "t"));
  set_graph(n, "else_branch", branch("else", "Neg", {"x"}, "e"));
  add_output(m, "y");
  ImportReport report;
  auto g = import_model(m, &report);
  ASSERT_FALSE(g.ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_EQ(report.unsupported[0].op_type, "NoSuchOp");
}

TEST(ImportControlFlow, LoopBodyInputsTakeTheNodesFacts) {
  // The body's inputs are left untyped in the file: i64[] iteration, bool[] cond, the carried type.
  onnx::ModelProto m = make_model(13);
  add_input(m, "m", TP::INT64, {});
  add_input(m, "a0", TP::FLOAT, {int64_t(3)});
  onnx::GraphProto body;
  body.set_name("body");
  for (const char* in : {"i", "cin", "a"}) body.add_input()->set_name(in);
  auto* add = body.add_node();
  add->set_op_type("Add");
  add->add_input("a");
  add->add_input("a0");
  add->add_output("a2");
  auto* id = body.add_node();
  id->set_op_type("Identity");
  id->add_input("cin");
  id->add_output("cout");
  body.add_output()->set_name("cout");
  body.add_output()->set_name("a2");
  auto* n = add_node(m, "Loop", {"m", "", "a0"}, {"aout"}, "loop");
  set_graph(n, "body", body);
  add_output(m, "aout");
  auto g = import_model(m);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  Node* loop = producer_of(**g, "aout");
  ASSERT_EQ(loop->op(), Op::Loop);
  EXPECT_EQ(loop->num_inputs(), 4u);  // m, (no cond), a0, then the capture a0
  EXPECT_EQ(loop->input(1), nullptr);
  EXPECT_EQ(loop->attr_graph("body").inputs()[0]->type_string(), "i64[]");
  EXPECT_EQ((*g)->find_value("aout")->type_string(), "f32[3]");
}

}  // namespace
}  // namespace ferry
