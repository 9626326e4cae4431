// Op libraries (repair/op_library.h): parsing the file, `$attr` substitution, the
// importer inlining an entry in place of a custom-op node and recording it, and
// every refusal naming its reason. (The Python registration and the numerical
// check against a reference function: tests/repair/test_op_library.py.)
#include <cmath>

#include <gtest/gtest.h>

#include "../frontends/onnx/onnx_test_util.h"
#include "repair/op_library.h"
#include "runtime/interpreter.h"

namespace ferry {
namespace {

using namespace onnx_test;

constexpr const char* kLibrary = R"(// scaled tanh and a two-output split
op com.example.ScaledTanh {alpha: float = 1.0, axes: ints = [0]}
graph scaled_tanh (%x: f32[*]) -> (%y) {
  %a = const f32[] [$alpha]
  %t = Tanh(%x)
  %y = Mul(%t, %a)
}

op com.example.Halves {axis: int}
graph halves (%x: ?) -> (%lo, %hi) {
  %lo, %hi = Split(%x) {axis=$axis, num_outputs=2}
}
)";

onnx::ModelProto custom_model(const std::string& op, std::vector<std::string> outs = {"y"}) {
  onnx::ModelProto m = make_model(18);
  auto* ms = m.add_opset_import();
  ms->set_domain("com.example");
  ms->set_version(1);
  add_input(m, "x", onnx::TensorProto::FLOAT, {2, 4});
  add_node(m, op, {"x"}, outs, op + "_0")->set_domain("com.example");
  for (const std::string& o : outs) add_output(m, o);
  return m;
}

Result<std::unique_ptr<Graph>> import_with(const onnx::ModelProto& m, const std::string& library, ImportReport* report) {
  TempDir dir;
  std::string bytes;
  m.SerializeToString(&bytes);
  dir.write("m.onnx", bytes);
  auto lib = std::make_shared<repair::OpLibrary>();
  FERRY_TRY(lib->add_text(library, "ops.fir"));
  ImportOptions o;
  o.op_library = lib;
  return import_onnx(dir.file("m.onnx"), report, o);
}

std::vector<float> run(const Graph& g, const std::vector<float>& x, size_t output = 0) {
  auto out = interpret(g, {{"x", Tensor::from_vector<float>(x, {2, 4})}});
  EXPECT_TRUE(out.ok()) << out.status().message();
  if (!out.ok()) return {};
  const Tensor& t = (*out)[output];
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

const std::vector<float> kX = {-2, -1, -0.5f, 0, 0.25f, 0.5f, 1, 3};

TEST(OpLibrary, ParsesEntriesWithTheirAttributes) {
  repair::OpLibrary lib;
  ASSERT_TRUE(lib.add_text(kLibrary, "ops.fir").ok());
  ASSERT_EQ(lib.entries().size(), 2u);
  const repair::OpLibraryEntry* e = lib.find("com.example", "ScaledTanh");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->origin, "ops.fir:2");
  ASSERT_EQ(e->attrs.size(), 2u);
  EXPECT_EQ(e->attrs[0].name, "alpha");
  EXPECT_EQ(e->attrs[0].kind, AttrKind::kFloat);
  EXPECT_EQ(*e->attrs[0].default_text, "1.0");
  EXPECT_EQ(e->attrs[1].kind, AttrKind::kInts);
  const repair::OpLibraryEntry* h = lib.find("com.example", "Halves");
  ASSERT_NE(h, nullptr);
  EXPECT_FALSE(h->attrs[0].default_text.has_value());
  EXPECT_EQ(lib.find("com.example", "Other"), nullptr);
}

TEST(OpLibrary, FileErrorsNameTheLine) {
  repair::OpLibrary lib;
  Status st = lib.add_text("op com.example.A {k: complex}\ngraph g (%x: ?) -> (%x) {\n}\n", "bad.fir");
  EXPECT_CONTAINS(st.message(), "bad.fir:1");
  EXPECT_CONTAINS(st.message(), "kind 'complex'");
  st = repair::OpLibrary().add_text("graph g (%x: ?) -> (%x) {\n}\n", "bad.fir");
  EXPECT_CONTAINS(st.message(), "bad.fir:1: expected an `op DOMAIN.TYPE");
  st = repair::OpLibrary().add_text("op com.example.A\ngraph g (%x: ?) -> (%y) {\n  %y = Relu(%x\n}\n", "bad.fir");
  EXPECT_CONTAINS(st.message(), "bad.fir: op com.example.A: line 4");
  st = repair::OpLibrary().add_text("op com.example.A\ngraph g (%x: ?) -> (%y) {\n  %y = Elu(%x) {alpha=$beta}\n}\n",
                                    "bad.fir");
  EXPECT_CONTAINS(st.message(), "bad.fir:3: $beta is not an attribute declared by op com.example.A");
  st = repair::OpLibrary().add_text("op com.example.A {a: float = x}\ngraph g (%x: ?) -> (%x) {\n}\n", "bad.fir");
  EXPECT_CONTAINS(st.message(), "default of attribute 'a'");
  st = repair::OpLibrary().add_text(std::string(kLibrary) + "\n" + kLibrary, "twice.fir");
  EXPECT_CONTAINS(st.message(), "is defined twice");
  st = repair::OpLibrary().add_file("/nonexistent/ops.fir");
  EXPECT_CONTAINS(st.message(), "cannot be read");
}

TEST(OpLibraryImport, InlinesTheGraphWithTheNodesAttributes) {
  onnx::ModelProto m = custom_model("ScaledTanh");
  set_float(m.mutable_graph()->mutable_node(0), "alpha", 2.5f);
  ImportReport report;
  auto g = import_with(m, kLibrary, &report);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const std::vector<float> y = run(**g, kX);
  ASSERT_EQ(y.size(), kX.size());
  for (size_t i = 0; i < kX.size(); ++i) EXPECT_NEAR(y[i], 2.5 * std::tanh(kX[i]), 1e-6) << i;
  ASSERT_EQ(report.repairs.size(), 1u);
  EXPECT_EQ(report.repairs[0].node_name, "ScaledTanh_0");
  EXPECT_EQ(report.repairs[0].rule, "op library ops.fir:2");
  EXPECT_EQ(report.repairs[0].became, (std::vector<std::string>{"Tanh", "Mul"}));
}

TEST(OpLibraryImport, DefaultsApplyAndSeveralOutputsBind) {
  ImportReport report;
  auto g = import_with(custom_model("ScaledTanh"), kLibrary, &report);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const std::vector<float> y = run(**g, kX);
  for (size_t i = 0; i < kX.size(); ++i) EXPECT_NEAR(y[i], std::tanh(kX[i]), 1e-6) << i;

  onnx::ModelProto m = custom_model("Halves", {"lo", "hi"});
  set_int(m.mutable_graph()->mutable_node(0), "axis", 1);
  auto h = import_with(m, kLibrary, &report);
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(run(**h, kX, 0), (std::vector<float>{-2, -1, 0.25f, 0.5f}));
  EXPECT_EQ(run(**h, kX, 1), (std::vector<float>{-0.5f, 0, 1, 3}));
}

TEST(OpLibraryImport, RefusalsSayWhy) {
  ImportReport report;
  onnx::ModelProto m = custom_model("ScaledTanh");
  set_float(m.mutable_graph()->mutable_node(0), "beta", 1.f);
  EXPECT_FALSE(import_with(m, kLibrary, &report).ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair, "op library entry com.example.ScaledTanh (ops.fir:2)");
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair, "attribute 'beta' is not declared");

  EXPECT_FALSE(import_with(custom_model("Halves", {"lo", "hi"}), kLibrary, &report).ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair, "attribute 'axis' is required");

  const std::string i64_input = "op com.example.ScaledTanh\ngraph g (%x: i64[*]) -> (%y) {\n  %y = Neg(%x)\n}\n";
  EXPECT_FALSE(import_with(custom_model("ScaledTanh"), i64_input, &report).ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair, "input 0 is f32, the op library graph takes i64");

  const std::string two_inputs = "op com.example.ScaledTanh\ngraph g (%x: ?, %z: ?) -> (%y) {\n  %y = Add(%x, %z)\n}\n";
  EXPECT_FALSE(import_with(custom_model("ScaledTanh"), two_inputs, &report).ok());
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair, "the node has 1 input(s), the op library graph takes 2");
}

TEST(OpLibraryImport, AGraphThatDoesNotVerifyIsALibraryError) {
  const std::string bad = "op com.example.ScaledTanh\ngraph g (%x: ?) -> (%y) {\n  %y = Add(%x)\n}\n";
  ImportReport report;
  auto g = import_with(custom_model("ScaledTanh"), bad, &report);
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "ops.fir:1: op com.example.ScaledTanh");
}

TEST(OpLibraryImport, AnOpFerryImportsCannotBeRedefined) {
  onnx::ModelProto m = make_model(18);
  add_input(m, "x", onnx::TensorProto::FLOAT, {2, 4});
  add_node(m, "Relu", {"x"}, {"y"}, "relu");
  add_output(m, "y");
  auto g = import_with(m, "op .Relu\ngraph g (%x: ?) -> (%y) {\n  %y = Neg(%x)\n}\n", nullptr);
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "ferry imports this op itself");
}

}  // namespace
}  // namespace ferry
