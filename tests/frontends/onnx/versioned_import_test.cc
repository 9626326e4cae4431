// Attributes that became inputs over the opsets: old and new forms must import
// to the same IR.
#include <gtest/gtest.h>

#include <cmath>

#include "frontends/onnx/import_table.h"
#include "onnx_test_util.h"
#include "runtime/interpreter.h"

namespace ferry {
namespace {

using namespace onnx_test;
using TP = onnx::TensorProto;

/// A model with input x (f32, dims) and output y, built by `body` at `opset`.
template <class Body>
onnx::ModelProto unary_model(int64_t opset, const std::vector<DimSpec>& dims, Body body) {
  onnx::ModelProto m = make_model(opset);
  add_input(m, "x", TP::FLOAT, dims);
  body(m);
  add_output(m, "y");
  return m;
}

std::unique_ptr<Graph> import_ok(const onnx::ModelProto& m) {
  auto g = import_model(m);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  return g.ok() ? std::move(g).value() : std::make_unique<Graph>();
}

std::vector<int64_t> const_ints(const Node* n, size_t input) {
  if (!n || !n->input(input) || !n->input(input)->is_constant()) return {-999};
  return n->input(input)->constant()->to_int_vector();
}

std::vector<double> run1(const Graph& g, const Tensor& x) {
  auto out = interpret(g, {{"x", x}});
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? (*out)[0].to_double_vector() : std::vector<double>{};
}

TEST(OnnxVersioned, SqueezeAxesAttributeVsInput) {
  auto old = import_ok(unary_model(11, {int64_t(2), int64_t(1), int64_t(3)}, [](onnx::ModelProto& m) {
    set_ints(add_node(m, "Squeeze", {"x"}, {"y"}, "sq"), "axes", {1});
  }));
  auto now = import_ok(unary_model(13, {int64_t(2), int64_t(1), int64_t(3)}, [](onnx::ModelProto& m) {
    add_initializer(m, i64_tensor("axes", {1}, {1}));
    add_node(m, "Squeeze", {"x", "axes"}, {"y"}, "sq");
  }));
  for (Graph* g : {old.get(), now.get()}) {
    Node* sq = producer_of(*g, "y");
    ASSERT_NE(sq, nullptr);
    EXPECT_EQ(sq->op(), Op::Squeeze);
    EXPECT_EQ(const_ints(sq, 1), std::vector<int64_t>{1});
    EXPECT_EQ(g->outputs()[0]->type_string(), "f32[2,3]");
  }
  // Squeeze-13 has no axes attribute.
  auto bad = import_model(unary_model(13, {int64_t(2), int64_t(1)}, [](onnx::ModelProto& m) {
    set_ints(add_node(m, "Squeeze", {"x"}, {"y"}, "sq"), "axes", {1});
  }));
  ASSERT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.status().message(), "node 'sq' (Squeeze): attribute 'axes' is not defined for Squeeze at opset 13");
}

TEST(OnnxVersioned, UnsqueezeAxesAttribute) {
  auto g = import_ok(unary_model(11, {int64_t(2), int64_t(3)}, [](onnx::ModelProto& m) {
    set_ints(add_node(m, "Unsqueeze", {"x"}, {"y"}, "u"), "axes", {0, 3});
  }));
  EXPECT_EQ(const_ints(producer_of(*g, "y"), 1), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(g->outputs()[0]->type_string(), "f32[1,2,3,1]");
}

TEST(OnnxVersioned, SplitAttributeVsInput) {
  auto build = [](int64_t opset, bool with_sizes) {
    onnx::ModelProto m = make_model(opset);
    add_input(m, "x", TP::FLOAT, {int64_t(2), int64_t(6)});
    std::vector<std::string> ins = {"x"};
    if (with_sizes && opset >= 13) {
      add_initializer(m, i64_tensor("sizes", {2}, {2, 4}));
      ins.push_back("sizes");
    }
    auto* n = add_node(m, "Split", ins, {"a", "b"}, "split");
    set_int(n, "axis", 1);
    if (with_sizes && opset < 13) set_ints(n, "split", {2, 4});
    add_output(m, "a");
    add_output(m, "b");
    return m;
  };
  for (int64_t opset : {11, 13}) {
    auto g = import_ok(build(opset, true));
    Node* s = producer_of(*g, "a");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s, producer_of(*g, "b"));
    EXPECT_EQ(const_ints(s, 1), (std::vector<int64_t>{2, 4})) << "opset " << opset;
    EXPECT_FALSE(s->has_attr("num_outputs"));
    EXPECT_EQ(g->find_value("b")->type_string(), "f32[2,4]");
    // No sizes: an even split into as many parts as outputs.
    auto even = import_ok(build(opset, false));
    Node* e = producer_of(*even, "a");
    EXPECT_EQ(e->attr_int("num_outputs"), 2);
    EXPECT_EQ(even->find_value("b")->type_string(), "f32[2,3]");
  }
}

TEST(OnnxVersioned, ClipAttributesVsInputs) {
  auto old = import_ok(unary_model(7, {int64_t(4)}, [](onnx::ModelProto& m) {
    auto* c = add_node(m, "Clip", {"x"}, {"y"}, "clip");
    set_float(c, "min", 0.0f);
    set_float(c, "max", 6.0f);
  }));
  auto now = import_ok(unary_model(11, {int64_t(4)}, [](onnx::ModelProto& m) {
    add_initializer(m, f32_tensor("lo", {}, {0.0f}));
    add_initializer(m, f32_tensor("hi", {}, {6.0f}));
    add_node(m, "Clip", {"x", "lo", "hi"}, {"y"}, "clip");
  }));
  Tensor x = Tensor::from_vector(std::vector<float>{-1, 3, 7, 6.5});
  for (Graph* g : {old.get(), now.get()}) {
    Node* c = producer_of(*g, "y");
    ASSERT_EQ(c->num_inputs(), 3u);
    EXPECT_EQ(c->input(1)->constant()->type_string(), "f32[]");
    EXPECT_EQ(c->input(2)->constant()->get_double(0), 6.0);
    EXPECT_EQ(run1(*g, x), (std::vector<double>{0, 3, 6, 6}));
  }
  // Only max, on an intermediate value: typed while importing, so the bound is an f32 constant.
  auto late = import_ok(unary_model(7, {int64_t(4)}, [](onnx::ModelProto& m) {
    add_node(m, "Neg", {"x"}, {"n"}, "neg");
    set_float(add_node(m, "Clip", {"n"}, {"y"}, "clip"), "max", 0.5f);
  }));
  Node* c = producer_of(*late, "y");
  EXPECT_FALSE(c->has_input(1));
  ASSERT_TRUE(c->input(2)->is_constant());
  EXPECT_EQ(c->input(2)->constant()->type_string(), "f32[]");
  EXPECT_EQ(run1(*late, x), (std::vector<double>{0.5, -3, -7, -6.5}));
}

TEST(OnnxVersioned, ClipBoundOfUntypedValueIsCastLike) {
  // When x's dtype is unknown during import, the bound becomes CastLike(f32 constant, x).
  Graph g;
  onnx_import::ImportState st(g);
  st.names["x"].value = g.add_input("x", DType::undefined, Shape());
  onnx::ModelProto m = make_model(7);
  onnx::NodeProto* p = add_node(m, "Clip", {"x"}, {"y"}, "clip");
  set_float(p, "min", -1.0f);
  onnx_import::OnnxNode n(st, *p, "clip", "clip", 7);
  ASSERT_TRUE(onnx_import::import_Clip(n).ok());
  ASSERT_TRUE(n.attr_status().ok());
  Node* clip = st.value("y")->producer();
  ASSERT_NE(clip, nullptr);
  Node* cast = clip->input(1)->producer();
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(cast->op(), Op::CastLike);
  EXPECT_EQ(cast->name(), "clip/CastLike");
  EXPECT_EQ(cast->provenance(), std::vector<std::string>{"clip"});
  EXPECT_EQ(cast->input(0)->constant()->get_double(0), -1.0);
  EXPECT_EQ(cast->input(1), st.value("x"));
}

TEST(OnnxVersioned, PadAttributesVsInputs) {
  auto old = import_ok(unary_model(10, {int64_t(1), int64_t(2)}, [](onnx::ModelProto& m) {
    auto* p = add_node(m, "Pad", {"x"}, {"y"}, "pad");
    set_ints(p, "pads", {0, 1, 0, 2});
    set_float(p, "value", 1.5f);
  }));
  auto now = import_ok(unary_model(11, {int64_t(1), int64_t(2)}, [](onnx::ModelProto& m) {
    add_initializer(m, i64_tensor("pads", {4}, {0, 1, 0, 2}));
    add_initializer(m, f32_tensor("v", {}, {1.5f}));
    add_node(m, "Pad", {"x", "pads", "v"}, {"y"}, "pad");
  }));
  for (Graph* g : {old.get(), now.get()}) {
    Node* p = producer_of(*g, "y");
    EXPECT_EQ(const_ints(p, 1), (std::vector<int64_t>{0, 1, 0, 2}));
    EXPECT_EQ(g->outputs()[0]->type_string(), "f32[1,5]");
    EXPECT_EQ(run1(*g, Tensor::from_vector<float>({7, 8}, {1, 2})), (std::vector<double>{1.5, 7, 8, 1.5, 1.5}));
  }
}

TEST(OnnxVersioned, ReduceMeanAxesAttributeVsInput) {
  auto old = import_ok(unary_model(13, {int64_t(2), int64_t(3), int64_t(4)}, [](onnx::ModelProto& m) {
    auto* r = add_node(m, "ReduceMean", {"x"}, {"y"}, "mean");
    set_ints(r, "axes", {1});
    set_int(r, "keepdims", 0);
  }));
  auto now = import_ok(unary_model(18, {int64_t(2), int64_t(3), int64_t(4)}, [](onnx::ModelProto& m) {
    add_initializer(m, i64_tensor("axes", {1}, {1}));
    set_int(add_node(m, "ReduceMean", {"x", "axes"}, {"y"}, "mean"), "keepdims", 0);
  }));
  for (Graph* g : {old.get(), now.get()}) {
    Node* r = producer_of(*g, "y");
    EXPECT_EQ(r->op(), Op::ReduceMean);
    EXPECT_EQ(const_ints(r, 1), std::vector<int64_t>{1});
    EXPECT_EQ(r->attr_int("keepdims"), 0);
    EXPECT_EQ(g->outputs()[0]->type_string(), "f32[2,4]");
  }
  // ReduceSum moved earlier, at opset 13.
  auto sum12 = import_ok(unary_model(12, {int64_t(2), int64_t(3)}, [](onnx::ModelProto& m) {
    set_ints(add_node(m, "ReduceSum", {"x"}, {"y"}, "s"), "axes", {0});
  }));
  EXPECT_EQ(const_ints(producer_of(*sum12, "y"), 1), std::vector<int64_t>{0});
  EXPECT_EQ(sum12->outputs()[0]->type_string(), "f32[1,3]");
  auto sum13 = import_model(unary_model(13, {int64_t(2), int64_t(3)}, [](onnx::ModelProto& m) {
    set_ints(add_node(m, "ReduceSum", {"x"}, {"y"}, "s"), "axes", {0});
  }));
  ASSERT_FALSE(sum13.ok());
  EXPECT_CONTAINS(sum13.status().message(), "attribute 'axes' is not defined for ReduceSum at opset 13");
}

TEST(OnnxVersioned, SoftmaxBeforeOpset13CoercesTo2D) {
  auto old = import_ok(unary_model(11, {int64_t(2), int64_t(2), int64_t(2)}, [](onnx::ModelProto& m) {
    add_node(m, "Softmax", {"x"}, {"y"}, "sm");  // default axis 1: rows of 4
  }));
  Node* out = producer_of(*old, "y");
  EXPECT_EQ(out->op(), Op::Reshape);
  EXPECT_EQ(out->provenance(), std::vector<std::string>{"sm"});
  Node* sm = old->find_node("sm");
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(sm->op(), Op::Softmax);
  EXPECT_EQ(sm->attr_int("axis"), -1);
  EXPECT_EQ(old->outputs()[0]->type_string(), "f32[2,2,2]");
  // Softmax over each group of 4: exp(k) / (1 + e + e^2 + e^3).
  std::vector<double> y = run1(*old, Tensor::from_vector<float>({0, 1, 2, 3, 0, 1, 2, 3}, {2, 2, 2}));
  double denom = 1 + std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  ASSERT_EQ(y.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(y[size_t(i)], std::exp(double(i % 4)) / denom, 1e-6) << i;

  // With a symbolic dim the original shape is taken at run time.
  auto symbolic = import_ok(unary_model(11, {std::string("N"), int64_t(2), int64_t(2)}, [](onnx::ModelProto& m) {
    add_node(m, "Softmax", {"x"}, {"y"}, "sm");
  }));
  Node* reshape = producer_of(*symbolic, "y");
  ASSERT_NE(reshape->input(1)->producer(), nullptr);
  EXPECT_EQ(reshape->input(1)->producer()->op(), Op::Shape);
  EXPECT_EQ(symbolic->outputs()[0]->shape().rank(), 3);

  // axis = -1 is the same at every opset: one node.
  auto last = import_ok(unary_model(11, {int64_t(2), int64_t(3)}, [](onnx::ModelProto& m) {
    set_int(add_node(m, "LogSoftmax", {"x"}, {"y"}, "lsm"), "axis", -1);
  }));
  EXPECT_EQ(last->num_nodes(), 1u);
  EXPECT_EQ(producer_of(*last, "y")->op(), Op::LogSoftmax);
}

TEST(OnnxVersioned, SliceAttributesBeforeOpset10) {
  auto g = import_ok(unary_model(9, {int64_t(4), int64_t(5)}, [](onnx::ModelProto& m) {
    auto* s = add_node(m, "Slice", {"x"}, {"y"}, "slice");
    set_ints(s, "starts", {1});
    set_ints(s, "ends", {1000});
    set_ints(s, "axes", {1});
  }));
  Node* s = producer_of(*g, "y");
  EXPECT_EQ(const_ints(s, 1), std::vector<int64_t>{1});
  EXPECT_EQ(const_ints(s, 2), std::vector<int64_t>{1000});
  EXPECT_EQ(const_ints(s, 3), std::vector<int64_t>{1});
  EXPECT_EQ(g->outputs()[0]->type_string(), "f32[4,4]");
}

TEST(OnnxVersioned, TopKAttributeBeforeOpset10) {
  onnx::ModelProto m = make_model(9);
  add_input(m, "x", TP::FLOAT, {int64_t(5)});
  set_int(add_node(m, "TopK", {"x"}, {"v", "i"}, "topk"), "k", 2);
  add_output(m, "v");
  add_output(m, "i");
  auto g = import_ok(m);
  Node* t = producer_of(*g, "v");
  EXPECT_EQ(const_ints(t, 1), std::vector<int64_t>{2});
  EXPECT_EQ(g->find_value("i")->type_string(), "i64[2]");
}

TEST(OnnxVersioned, UpsampleBecomesAsymmetricFloorResize) {
  auto old = import_ok(unary_model(7, {int64_t(1), int64_t(1), int64_t(2), int64_t(2)}, [](onnx::ModelProto& m) {
    set_floats(add_node(m, "Upsample", {"x"}, {"y"}, "up"), "scales", {1, 1, 2, 2});
  }));
  auto v9 = import_ok(unary_model(9, {int64_t(1), int64_t(1), int64_t(2), int64_t(2)}, [](onnx::ModelProto& m) {
    add_initializer(m, f32_tensor("scales", {4}, {1, 1, 2, 2}));
    add_node(m, "Upsample", {"x", "scales"}, {"y"}, "up");
  }));
  for (Graph* g : {old.get(), v9.get()}) {
    Node* r = producer_of(*g, "y");
    ASSERT_EQ(r->op(), Op::Resize);
    EXPECT_FALSE(r->has_input(1));  // no roi
    EXPECT_EQ(r->attr_string("coordinate_transformation_mode"), "asymmetric");
    EXPECT_EQ(r->attr_string("nearest_mode"), "floor");
    EXPECT_EQ(r->attr_string("mode"), "nearest");
    EXPECT_EQ(g->outputs()[0]->type_string(), "f32[1,1,4,4]");
    EXPECT_EQ(run1(*g, Tensor::from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2})),
              (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  }
}

TEST(OnnxVersioned, Resize10RoundsLikeOnnxRuntime) {
  auto resize10 = [](std::vector<float> scales) {
    return unary_model(10, {int64_t(1), int64_t(1), int64_t(4), int64_t(4)}, [&](onnx::ModelProto& m) {
      add_initializer(m, f32_tensor("scales", {4}, scales));
      add_node(m, "Resize", {"x", "scales"}, {"y"}, "resize");
    });
  };
  auto down = import_ok(resize10({1, 1, 0.5f, 0.5f}));
  Node* r = producer_of(*down, "y");
  EXPECT_EQ(r->attr_string("coordinate_transformation_mode"), "asymmetric");
  EXPECT_EQ(r->attr_string("nearest_mode"), "ceil");
  EXPECT_EQ(down->outputs()[0]->type_string(), "f32[1,1,2,2]");
  ImportReport report;
  auto mixed = import_model(resize10({1, 1, 0.5f, 2}), &report);
  ASSERT_FALSE(mixed.ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].reason, "upsamples some axes and downsamples others");
}

TEST(OnnxVersioned, ResizeOpset11EmptyRoiAndScalesAreDropped) {
  onnx::ModelProto m = make_model(11);
  add_input(m, "x", TP::FLOAT, {int64_t(1), int64_t(1), int64_t(2), int64_t(2)});
  add_initializer(m, f32_tensor("roi", {0}, {}));
  add_initializer(m, f32_tensor("scales", {0}, {}));
  add_initializer(m, i64_tensor("sizes", {4}, {1, 1, 3, 3}));
  auto* r = add_node(m, "Resize", {"x", "roi", "scales", "sizes"}, {"y"}, "resize");
  set_string(r, "mode", "linear");
  set_string(r, "coordinate_transformation_mode", "align_corners");
  add_output(m, "y");
  auto g = import_ok(m);
  Node* n = producer_of(*g, "y");
  EXPECT_FALSE(n->has_input(1));
  EXPECT_FALSE(n->has_input(2));
  EXPECT_EQ(const_ints(n, 3), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(n->attr_string("coordinate_transformation_mode"), "align_corners");
  EXPECT_EQ(g->outputs()[0]->type_string(), "f32[1,1,3,3]");
}

TEST(OnnxVersioned, BatchNormalizationOldAndTrainingForms) {
  auto bn_model = [](int64_t opset, auto extra) {
    onnx::ModelProto m = make_model(opset);
    add_input(m, "x", TP::FLOAT, {int64_t(1), int64_t(2), int64_t(2), int64_t(2)});
    for (const char* p : {"s", "b", "mean", "var"}) add_initializer(m, f32_tensor(p, {2}, {1, 1}));
    auto* n = add_node(m, "BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"}, "bn");
    extra(n);
    add_output(m, "y");
    return m;
  };
  auto v7 = import_ok(bn_model(7, [](onnx::NodeProto* n) {
    set_int(n, "spatial", 1);
    set_int(n, "is_test", 1);
    set_ints(n, "consumed_inputs", {0, 0, 0, 1, 1});
    set_float(n, "epsilon", 1e-3f);
  }));
  Node* bn = producer_of(*v7, "y");
  EXPECT_EQ(bn->op(), Op::BatchNormalization);
  EXPECT_NEAR(bn->attr_float("epsilon"), 1e-3, 1e-9);
  EXPECT_EQ(v7->outputs()[0]->type_string(), "f32[1,2,2,2]");

  auto spatial9 = import_model(bn_model(9, [](onnx::NodeProto* n) { set_int(n, "spatial", 1); }));
  ASSERT_FALSE(spatial9.ok());
  EXPECT_CONTAINS(spatial9.status().message(), "attribute 'spatial' is not defined for BatchNormalization at opset 9");

  ImportReport report;
  auto train = import_model(bn_model(15, [](onnx::NodeProto* n) { set_int(n, "training_mode", 1); }), &report);
  ASSERT_FALSE(train.ok());
  ASSERT_EQ(report.unsupported.size(), 1u);
  EXPECT_CONTAINS(report.unsupported[0].reason, "training_mode=1");
  EXPECT_CONTAINS(report.unsupported[0].proposed_repair, "inference mode");
}

TEST(OnnxVersioned, GroupNormalizationOpset18PerGroupParameters) {
  onnx::ModelProto m = make_model(18);
  add_input(m, "x", TP::FLOAT, {int64_t(1), int64_t(4), int64_t(2)});
  add_initializer(m, f32_tensor("scale", {2}, {1, 2}));
  add_initializer(m, f32_tensor("bias", {2}, {0, 10}));
  set_int(add_node(m, "GroupNormalization", {"x", "scale", "bias"}, {"y"}, "gn"), "num_groups", 2);
  add_output(m, "y");
  auto g = import_ok(m);
  EXPECT_EQ(g->find_node("gn")->op(), Op::InstanceNormalization);
  EXPECT_EQ(g->outputs()[0]->shape().rank(), 3);
  // Group 0 = channels 0-1 = {0,0,2,2}: normalized {-1,-1,1,1} (eps 1e-5), times 1 plus 0.
  // Group 1 = channels 2-3 = {1,1,1,5}: mean 2, std sqrt(3): {-1,-1,-1,3}/sqrt(3), times 2 plus 10.
  std::vector<double> y = run1(*g, Tensor::from_vector<float>({0, 0, 2, 2, 1, 1, 1, 5}, {1, 4, 2}));
  ASSERT_EQ(y.size(), 8u);
  const double r3 = std::sqrt(3.0);
  std::vector<double> expect = {-1, -1, 1, 1, 10 - 2 / r3, 10 - 2 / r3, 10 - 2 / r3, 10 + 6 / r3};
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(y[i], expect[i], 1e-4) << i;
}

TEST(OnnxVersioned, ReshapeAllowzeroOnlyFromOpset14) {
  auto m = [](int64_t opset) {
    return unary_model(opset, {int64_t(2), int64_t(3)}, [](onnx::ModelProto& m) {
      add_initializer(m, i64_tensor("shape", {1}, {6}));
      set_int(add_node(m, "Reshape", {"x", "shape"}, {"y"}, "r"), "allowzero", 0);
    });
  };
  EXPECT_TRUE(import_model(m(14)).ok());
  auto g = import_model(m(13));
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "attribute 'allowzero' is not defined for Reshape at opset 13 (it appears in opset 14)");
}

}  // namespace
}  // namespace ferry
