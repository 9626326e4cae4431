#include "frontends/torch/torch_importer.h"

#include <gtest/gtest.h>

#include "frontends/torch/import_table.h"
#include "pt2_test_util.h"
#include "runtime/interpreter.h"

namespace ferry {
namespace {

using namespace torch_test;

Result<std::unique_ptr<Graph>> import(const std::map<std::string, std::string>& ents, ImportReport* report = nullptr) {
  return torch_import::import_torch_bytes(write_zip(ents), report);
}

std::string error_of(const std::map<std::string, std::string>& ents) {
  auto g = import(ents);
  EXPECT_FALSE(g.ok());
  return g.ok() ? "" : g.status().message();
}

TEST(TorchImporter, ImportsAndRunsRelu) {
  auto g = import(entries());
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ((*g)->info().format, "torch");
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_EQ((*g)->inputs()[0]->type_string(), "f32[1,4]");
  EXPECT_EQ((*g)->outputs()[0]->name(), "output");
  Tensor x = Tensor::from_vector<float>({1.0f, 0.5f, -3.0f, 4.0f}, {1, 4});
  auto out = interpret(**g, {{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const float* y = (*out)[0].data<float>();
  EXPECT_FLOAT_EQ(y[0], 1.5f);   // relu(1 + 0.5)
  EXPECT_FLOAT_EQ(y[1], 0.0f);   // relu(0.5 - 1)
  EXPECT_FLOAT_EQ(y[2], 0.0f);   // relu(-3 + 2)
  EXPECT_FLOAT_EQ(y[3], 4.0f);
}

TEST(TorchImporter, SymbolicBatchBecomesASymbolWithItsRange) {
  Json p = program();
  p["graph_module"]["graph"]["tensor_values"]["x"]["sizes"][0] = {{"as_expr", {{"expr_str", "Symbol('s77', positive=True, integer=True)"}}}};
  p["graph_module"]["graph"]["tensor_values"]["p_w"] = meta({4});
  p["range_constraints"] = {{"s77", {{"min_val", 2}, {"max_val", 64}}}};
  Json w = weights_config(false, meta({4}));
  ImportReport report;
  auto g = import(entries(p, w), &report);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ((*g)->inputs()[0]->shape().to_string(), "[s77,4]");
  EXPECT_EQ((*g)->outputs()[0]->shape().to_string(), "[s77,4]");
  ASSERT_EQ(report.dim_ranges.count("s77"), 1u);
  EXPECT_EQ(report.dim_ranges["s77"], std::make_pair(int64_t(2), int64_t(64)));
}

TEST(TorchImporter, StridedAndOffsetPayloadsAreGathered) {
  // w = storage[1:] viewed as [1, 4] with stride 2 over a 9-float storage (a tied / sliced weight).
  Json m = meta({1, 4});
  m["strides"] = Json::array({{{"as_int", 8}}, {{"as_int", 2}}});
  m["storage_offset"] = {{"as_int", 1}};
  auto g = import(entries(program(), weights_config(false, m), {0, 1, 0, 2, 0, 3, 0, 4, 0}));
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  auto out = interpret(**g, {{"x", Tensor::from_vector<float>({0, 0, 0, 0}, {1, 4})}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{1, 2, 3, 4}));
  m["storage_offset"] = {{"as_int", 3}};  // now the last element (3 + 3 * 2) is past the storage
  EXPECT_NE(error_of(entries(program(), weights_config(false, m), {0, 1, 0, 2, 0, 3, 0, 4, 0})).find("storage"),
            std::string::npos);
}

TEST(TorchImporter, PickledPayloadIsRefusedWithTheRecipe) {
  const std::string e = error_of(entries(program(), weights_config(true)));
  EXPECT_NE(e.find("never unpickles"), std::string::npos) << e;
  EXPECT_NE(e.find("torch.export.save"), std::string::npos) << e;
}

TEST(TorchImporter, CustomAndOpaqueObjectsAreRefused) {
  for (const char* obj : {"custom_obj_0", "opaque_obj_3"}) {
    auto ents = entries();
    ents[std::string("model/data/constants/") + obj] = "\x80\x02.";
    const std::string e = error_of(ents);
    EXPECT_NE(e.find(obj), std::string::npos) << e;
    EXPECT_NE(e.find("never unpickles"), std::string::npos) << e;
  }
}

TEST(TorchImporter, OldPickledLayoutsAreRefused) {
  auto old = error_of({{"model/serialized_exported_program.json", "{}"}, {"model/serialized_state_dict.pt", "x"}});
  EXPECT_NE(old.find("torch <= 2.4"), std::string::npos) << old;
  auto ents = entries();
  ents.erase("model/data/weights/weight_0");
  ents["model/data/weights/model.pt"] = "\x80\x02.";
  auto mid = error_of(ents);
  EXPECT_NE(mid.find("2.5-2.7"), std::string::npos) << mid;
}

TEST(TorchImporter, BadEntryNamesAreRefused) {
  for (const char* name : {"model/../evil", "/abs/path", "model/a\\b", "other/x"}) {
    auto ents = entries();
    ents[name] = "x";
    const std::string e = error_of(ents);
    EXPECT_NE(e.find("zip entry"), std::string::npos) << name << ": " << e;
  }
}

TEST(TorchImporter, MalformedJsonIsAnErrorNamingTheEntry) {
  auto ents = entries();
  ents["model/models/model.json"] = program().dump().substr(0, 100);
  const std::string e = error_of(ents);
  EXPECT_NE(e.find("models/model.json"), std::string::npos) << e;
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
  Json p = program();
  p["graph_module"]["graph"]["nodes"] = "not a list";
  EXPECT_NE(error_of(entries(p)).find("nodes"), std::string::npos);
  p = program();
  p["graph_module"]["signature"]["input_specs"][1]["user_input"]["arg"] = 3;
  EXPECT_FALSE(import(entries(p)).ok());
  ents["model/models/model.json"] = std::string(10000, '[');
  EXPECT_NE(error_of(ents).find("deeper"), std::string::npos);
}

TEST(TorchImporter, EveryUnsupportedOpIsReported) {
  Json p = program();
  p["graph_module"]["graph"]["nodes"][0]["target"] = "torch.ops.aten.frobnicate.default";
  p["graph_module"]["graph"]["nodes"][1]["target"] = "torch.ops.aten.relu.weird_overload";
  ImportReport report;
  auto g = import(entries(p), &report);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  ASSERT_EQ(report.unsupported.size(), 2u);
  EXPECT_EQ(report.unsupported[0].op_type, "aten.frobnicate.default");
  EXPECT_EQ(report.unsupported[1].node_name, "relu");
  EXPECT_FALSE(report.unsupported[0].proposed_repair.empty());
}

TEST(TorchImporter, InPlaceOpIsFunctionalOnlyWhenItsInputIsNotReadLater) {
  Json p = program();
  auto& nodes = p["graph_module"]["graph"]["nodes"];
  nodes[1]["target"] = "torch.ops.aten.relu_.default";  // relu_(add): add is not read afterwards
  auto g = import(entries(p));
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  // Now the output reads add, the tensor relu_ modified: refused.
  p["graph_module"]["signature"]["output_specs"][0]["user_output"]["arg"] = targ("add");
  ImportReport report;
  auto bad = import(entries(p), &report);
  ASSERT_FALSE(bad.ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_NE(report.unsupported[0].reason.find("read afterwards"), std::string::npos) << report.unsupported[0].reason;
  // In place on a graph input: refused too.
  p = program();
  p["graph_module"]["graph"]["nodes"][0]["target"] = "torch.ops.aten.add_.Tensor";
  ImportReport r2;
  EXPECT_FALSE(import(entries(p), &r2).ok());
  ASSERT_EQ(r2.unsupported.size(), 1u);
  EXPECT_NE(r2.unsupported[0].reason.find("graph input"), std::string::npos) << r2.unsupported[0].reason;
}

TEST(TorchImporter, DirectRowMapsTheTensorArgumentsInOrder) {
  // mm(x, w) as a DIRECT row: self, mat2 -> MatMul's A, B whatever the schema calls them.
  Json p = program();
  auto& g = p["graph_module"]["graph"];
  g["nodes"] = Json::array({node("aten.mm.default", "mm", {{"self", targ("x")}, {"mat2", targ("p_w")}})});
  g["outputs"] = Json::array({targ("mm")});
  g["tensor_values"] = {{"x", meta({1, 4})}, {"p_w", meta({4, 1})}, {"mm", meta({1, 1})}};
  p["graph_module"]["signature"]["output_specs"][0]["user_output"]["arg"] = targ("mm");
  auto m = import(entries(p, weights_config(false, meta({4, 1}))));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const Node* mm = (*m)->outputs()[0]->producer();
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->op(), Op::MatMul);
  EXPECT_EQ(mm->input(0)->name(), "x");
  auto out = interpret(**m, {{"x", Tensor::from_vector<float>({1, 2, 3, 4}, {1, 4})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[0], 0.5f - 2.f + 6.f);  // w = [0.5, -1, 2, 0]

  // An argument that is not a tensor has no place in a 1:1 import: refused, named.
  g["nodes"][0]["inputs"].push_back({{"name", "alpha"}, {"arg", {{"as_float", 2.0}}}});
  ImportReport report;
  EXPECT_FALSE(import(entries(p, weights_config(false, meta({4, 1}))), &report).ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_NE(report.unsupported[0].reason.find("argument 'alpha' (as_float) is not imported"), std::string::npos)
      << report.unsupported[0].reason;
}

TEST(TorchImporter, DirectRowIgnoresAMemoryFormat) {
  // clone(x, memory_format=channels_last): ferry's tensors are dense, so only x counts.
  Json p = program();
  auto& g = p["graph_module"]["graph"];
  g["nodes"][1] = node("aten.clone.default", "relu", {{"self", targ("add")}, {"memory_format", {{"as_memory_format", 3}}}});
  auto m = import(entries(p));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const Node* clone = (*m)->outputs()[0]->producer();
  ASSERT_NE(clone, nullptr);
  EXPECT_EQ(clone->op(), Op::Identity);
  EXPECT_EQ(clone->num_inputs(), 1u);
}

TEST(TorchImporter, TruncatedAndGarbageArchives) {
  const std::string zip = write_zip(entries());
  for (size_t n : {size_t(0), size_t(10), zip.size() / 2, zip.size() - 1}) {
    auto g = torch_import::import_torch_bytes(zip.substr(0, n), nullptr);
    EXPECT_FALSE(g.ok()) << n;
  }
  EXPECT_FALSE(torch_import::import_torch_bytes(std::string(4096, 'x'), nullptr).ok());
}

TEST(TorchImportTable, RowsAreSortedUniqueAndNamed) {
  auto rows = torch_import::import_rows();
  ASSERT_GT(rows.size(), 50u);
  for (size_t i = 1; i < rows.size(); ++i)
    EXPECT_LT(std::string(rows[i - 1].target), std::string(rows[i].target)) << rows[i].target;
  for (const auto& r : rows) {
    EXPECT_EQ(torch_import::find_import(r.target), &r) << r.target;
    EXPECT_TRUE(r.fn || r.direct || r.skip) << r.target;
    EXPECT_NE(std::string(r.ferry), "") << r.target;
  }
  EXPECT_EQ(torch_import::find_import("aten.relu_.default"), nullptr);  // in-place: through the functional row
}

TEST(Pt2Archive, EntryNameChecks) {
  EXPECT_TRUE(torch_import::check_entry_name("model/data/weights/weight_0").ok());
  for (const char* bad : {"", "/x", "a/../b", "..", "a\\b", "a/\x01"})
    EXPECT_FALSE(torch_import::check_entry_name(bad).ok()) << bad;
}

}  // namespace
}  // namespace ferry
