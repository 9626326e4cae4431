#include "frontends/tensorflow/tf_importer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "runtime/interpreter.h"
#include "tf_test_util.h"

namespace ferry {
namespace {

using namespace tf_test;

Result<std::unique_ptr<Graph>> import(const GraphDef& g, ImportReport* report = nullptr) {
  ImportReport local;
  std::vector<tf_import::TfInput> ins;
  std::vector<tf_import::TfOutput> outs;
  tf_import::frozen_graph_signature(g, &ins, &outs);
  return tf_import::import_graph_def(g, ins, outs, tf_import::TfVariables{}, report ? *report : local);
}

std::vector<float> run1(const Graph& g, const std::string& input, const Tensor& x) {
  auto out = interpret(g, {{input, x}});
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (!out.ok()) return {};
  const Tensor& y = (*out)[0];
  return std::vector<float>(y.data<float>(), y.data<float>() + y.numel());
}

Tensor iota(const std::vector<int64_t>& dims, float scale = 1.0f, float offset = 0.0f) {
  Tensor t = Tensor::empty(DType::f32, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = offset + scale * float(i);
  return t;
}

TEST(TfImporter, Conv2DNhwcSameMatchesDirectConvolution) {
  // x [1,4,5,2] NHWC, filter [3,3,2,3] HWIO, stride 2, SAME; checked against a direct NHWC loop.
  GraphDef g;
  placeholder(g, "x", {1, 4, 5, 2});
  std::vector<float> w(3 * 3 * 2 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 7) - 3) * 0.25f;
  const_f32(g, "w", {3, 3, 2, 3}, w);
  NodeDef* c = add_node(g, "Conv2D", "conv", {"x", "w"});
  set_ints(c, "strides", {1, 2, 2, 1});
  set_string(c, "padding", "SAME");
  set_type(c, "T", DT_FLOAT);
  auto imported = import(g);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  EXPECT_EQ((*imported)->outputs()[0]->type_string(), "f32[1,2,3,3]");
  Tensor x = iota({1, 4, 5, 2}, 0.1f, -1.0f);
  std::vector<float> y = run1(**imported, "x", x);
  // SAME: out = ceil(in / stride); pad_total = (out-1)*s + k - in, pad_begin = total / 2.
  const int H = 4, W = 5, C = 2, O = 3, OH = 2, OW = 3, pt = ((OH - 1) * 2 + 3 - H) / 2, pl = ((OW - 1) * 2 + 3 - W) / 2;
  ASSERT_EQ(y.size(), size_t(OH * OW * O));
  for (int oh = 0; oh < OH; ++oh)
    for (int ow = 0; ow < OW; ++ow)
      for (int o = 0; o < O; ++o) {
        double acc = 0;
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw)
            for (int ci = 0; ci < C; ++ci) {
              int ih = oh * 2 - pt + kh, iw = ow * 2 - pl + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              acc += double(x.data<float>()[(ih * W + iw) * C + ci]) * w[size_t(((kh * 3 + kw) * C + ci) * O + o)];
            }
        EXPECT_NEAR(y[size_t((oh * OW + ow) * O + o)], acc, 1e-4) << oh << "," << ow << "," << o;
      }
  Node* conv = (*imported)->find_node("conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->op(), Op::Conv);
  EXPECT_EQ(conv->provenance(), std::vector<std::string>{"conv"});
}

TEST(TfImporter, DepthwiseConvChannelOrder) {
  // Depthwise multiplier 2 with a 1x1 filter: out[c*2+m] = x[c] * f[c,m].
  GraphDef g;
  placeholder(g, "x", {1, 1, 2, 3});
  const_f32(g, "f", {1, 1, 3, 2}, {1, 10, 2, 20, 3, 30});
  NodeDef* d = add_node(g, "DepthwiseConv2dNative", "dw", {"x", "f"});
  set_ints(d, "strides", {1, 1, 1, 1});
  set_string(d, "padding", "VALID");
  auto imported = import(g);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  std::vector<float> y = run1(**imported, "x", iota({1, 1, 2, 3}, 1.0f, 1.0f));  // x = 1..6
  EXPECT_EQ(y, (std::vector<float>{1, 10, 4, 40, 9, 90, 4, 40, 10, 100, 18, 180}));
}

/// Keras' dilated Conv2D (rate 2, SAME) on x [1,7,7,2]: SpaceToBatchND -> Conv2D VALID -> BatchToSpaceND.
/// With `identity`, an Identity between SpaceToBatchND and the conv keeps them apart (imported op by op).
GraphDef space_to_batch_conv(bool identity) {
  GraphDef g;
  placeholder(g, "x", {1, 7, 7, 2});
  std::vector<float> w(3 * 3 * 2 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 5) - 2) * 0.5f;
  const_f32(g, "w", {3, 3, 2, 3}, w);
  const_i32(g, "block", {2}, {2, 2});
  const_i32(g, "pads", {2, 2}, {2, 3, 2, 3});
  const_i32(g, "crops", {2, 2}, {0, 1, 0, 1});
  add_node(g, "SpaceToBatchND", "s2b", {"x", "block", "pads"});
  if (identity) add_node(g, "Identity", "id", {"s2b"});
  NodeDef* c = add_node(g, "Conv2D", "conv", {identity ? "id" : "s2b", "w"});
  set_ints(c, "strides", {1, 1, 1, 1});
  set_string(c, "padding", "VALID");
  add_node(g, "BatchToSpaceND", "b2s", {"conv", "block", "crops"});
  return g;
}

TEST(TfImporter, SpaceToBatchConvBatchToSpaceIsOneDilatedConv) {
  auto folded = import(space_to_batch_conv(false));
  ASSERT_TRUE(folded.ok()) << folded.status().to_string();
  Node* conv = (*folded)->find_node("b2s");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->op(), Op::Conv);
  EXPECT_EQ(conv->attr_ints("dilations"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(conv->attr_ints("pads"), (std::vector<int64_t>{2, 2, 2, 2}));  // pads - crops
  for (const Node* n : (*folded)->nodes())
    EXPECT_TRUE(n->op() != Op::Reshape && n->op() != Op::Pad && n->op() != Op::Slice) << n->name();
  EXPECT_EQ((*folded)->outputs()[0]->type_string(), "f32[1,7,7,3]");
  // The same as the op-by-op import (an Identity keeps the pattern apart) and a direct loop.
  auto apart = import(space_to_batch_conv(true));
  ASSERT_TRUE(apart.ok()) << apart.status().to_string();
  EXPECT_NE((*apart)->find_node("conv"), nullptr);
  Tensor x = iota({1, 7, 7, 2}, 0.05f, -1.0f);
  std::vector<float> y = run1(**folded, "x", x), ref = run1(**apart, "x", x);
  ASSERT_EQ(y.size(), ref.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ref[i], 1e-4) << i;
  std::vector<float> w(3 * 3 * 2 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 5) - 2) * 0.5f;
  for (int oh = 0; oh < 7; ++oh)
    for (int ow = 0; ow < 7; ++ow)
      for (int o = 0; o < 3; ++o) {
        double acc = 0;
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw)
            for (int ci = 0; ci < 2; ++ci) {
              int ih = oh - 2 + 2 * kh, iw = ow - 2 + 2 * kw;
              if (ih < 0 || ih >= 7 || iw < 0 || iw >= 7) continue;
              acc += double(x.data<float>()[(ih * 7 + iw) * 2 + ci]) * w[size_t(((kh * 3 + kw) * 2 + ci) * 3 + o)];
            }
        EXPECT_NEAR(y[size_t((oh * 7 + ow) * 3 + o)], acc, 1e-4) << oh << "," << ow << "," << o;
      }
}

TEST(TfImporter, StridedSliceMasks) {
  // x[2,3,4]: y = x[1, tf.newaxis, ..., ::-2]: shrink, new axis, ellipsis, masked begin/end with a negative stride.
  GraphDef g;
  placeholder(g, "x", {2, 3, 4});
  const_i32(g, "b", {4}, {1, 0, 0, 0});
  const_i32(g, "e", {4}, {2, 0, 0, 0});
  const_i32(g, "s", {4}, {1, 1, 1, -2});
  NodeDef* ss = add_node(g, "StridedSlice", "ss", {"x", "b", "e", "s"});
  set_int(ss, "shrink_axis_mask", 1);
  set_int(ss, "new_axis_mask", 2);
  set_int(ss, "ellipsis_mask", 4);
  set_int(ss, "begin_mask", 8);
  set_int(ss, "end_mask", 8);
  auto imported = import(g);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  EXPECT_EQ((*imported)->outputs()[0]->type_string(), "f32[1,3,2]");
  EXPECT_EQ(run1(**imported, "x", iota({2, 3, 4})), (std::vector<float>{15, 13, 19, 17, 23, 21}));

  // Without the ellipsis the masked entry applies to dim 1: x[1, tf.newaxis, ::-2] is rows 2 and 0 of x[1].
  GraphDef h;
  placeholder(h, "x", {2, 3, 4});
  const_i32(h, "b", {3}, {1, 0, 0});
  const_i32(h, "e", {3}, {2, 0, 0});
  const_i32(h, "s", {3}, {1, 1, -2});
  ss = add_node(h, "StridedSlice", "ss", {"x", "b", "e", "s"});
  set_int(ss, "shrink_axis_mask", 1);
  set_int(ss, "new_axis_mask", 2);
  set_int(ss, "begin_mask", 4);
  set_int(ss, "end_mask", 4);
  imported = import(h);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  EXPECT_EQ((*imported)->outputs()[0]->type_string(), "f32[1,2,4]");
  EXPECT_EQ(run1(**imported, "x", iota({2, 3, 4})), (std::vector<float>{20, 21, 22, 23, 12, 13, 14, 15}));
}

TEST(TfImporter, PackUnpackSplitV) {
  GraphDef g;
  placeholder(g, "x", {2, 5});
  const_i32(g, "sizes", {2}, {-1, 2});
  const_i32(g, "axis", {}, {1});
  add_node(g, "SplitV", "sv", {"x", "sizes", "axis"});
  NodeDef* un = add_node(g, "Unpack", "un", {"sv:1"});
  set_int(un, "num", 2);
  NodeDef* pk = add_node(g, "Pack", "pk", {"un:1", "un"});
  set_int(pk, "axis", -1);
  auto imported = import(g);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  // sv is read (through sv:1), so the frozen signature's only output is pk.
  ASSERT_EQ((*imported)->outputs().size(), 1u);
  EXPECT_EQ((*imported)->outputs()[0]->type_string(), "f32[2,2]");
  std::vector<float> y = run1(**imported, "x", iota({2, 5}));
  // sv:1 = x[:, 3:5] = [[3,4],[8,9]]; un = rows [3,4] and [8,9]; pack(un:1, un, axis=-1) = [[8,3],[9,4]]
  EXPECT_EQ(y, (std::vector<float>{8, 3, 9, 4}));
}

TEST(TfImporter, FusedBatchNormMatMulMean) {
  GraphDef g;
  placeholder(g, "x", {1, 2, 2, 2});
  const_f32(g, "scale", {2}, {2, 3});
  const_f32(g, "offset", {2}, {1, -1});
  const_f32(g, "mean", {2}, {0.5f, 1});
  const_f32(g, "var", {2}, {4, 9});
  NodeDef* bn = add_node(g, "FusedBatchNormV3", "bn", {"x", "scale", "offset", "mean", "var"});
  set_bool(bn, "is_training", false);
  set_float(bn, "epsilon", 0.0f);
  const_i32(g, "axes", {2}, {1, 2});
  NodeDef* mean = add_node(g, "Mean", "gap", {"bn", "axes"});
  set_bool(mean, "keep_dims", false);
  const_f32(g, "w", {3, 2}, {1, 0, 0, 1, 1, 1});  // used transposed: [2,3]
  NodeDef* mm = add_node(g, "MatMul", "mm", {"gap", "w"});
  set_bool(mm, "transpose_b", true);
  auto imported = import(g);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  std::vector<float> y = run1(**imported, "x", iota({1, 2, 2, 2}));  // channel 0: 0,2,4,6; channel 1: 1,3,5,7
  // bn: c0 = (x - .5) * 2/2 + 1 -> mean 3.5 ; c1 = (x - 1) * 3/3 - 1 -> mean 2
  ASSERT_EQ(y.size(), 3u);
  EXPECT_NEAR(y[0], 3.5, 1e-5);
  EXPECT_NEAR(y[1], 2.0, 1e-5);
  EXPECT_NEAR(y[2], 5.5, 1e-5);
}

TEST(TfImporter, ArgMaxAndArgMinDropTheAxisAndCastToOutputType) {
  GraphDef g;
  placeholder(g, "x", {2, 3});
  const_i32(g, "axis", {}, {1});
  add_node(g, "ArgMax", "amax", {"x", "axis"});
  NodeDef* amin = add_node(g, "ArgMin", "amin", {"x", "axis"});
  set_type(amin, "output_type", DT_INT32);
  auto imported = import(g);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  auto out = interpret(**imported, {{"x", Tensor::from_vector<float>({3, 9, 1, -2, -5, 0}, {2, 3})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->size(), 2u);
  const Tensor &amax_y = (*out)[0].dtype() == DType::i64 ? (*out)[0] : (*out)[1];
  const Tensor &amin_y = (*out)[0].dtype() == DType::i64 ? (*out)[1] : (*out)[0];
  EXPECT_EQ(amax_y.to_int_vector(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(amin_y.dtype(), DType::i32);
  EXPECT_EQ(amin_y.to_int_vector(), (std::vector<int64_t>{2, 1}));
}

TEST(TfImporter, MatrixDeterminantIsDet) {
  GraphDef g;
  placeholder(g, "x", {2, 2, 2});
  add_node(g, "MatrixDeterminant", "det", {"x"});
  auto imported = import(g);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  EXPECT_EQ((*imported)->outputs()[0]->type_string(), "f32[2]");
  EXPECT_EQ(run1(**imported, "x", iota({2, 2, 2})), (std::vector<float>{0 * 3 - 1 * 2, 4 * 7 - 5 * 6}));
}

TEST(TfImporter, FunctionCallsAreInlined) {
  GraphDef g;
  placeholder(g, "x", {3});
  FunctionDef* f = g.mutable_library()->add_function();
  f->mutable_signature()->set_name("scale_add");
  f->mutable_signature()->add_input_arg()->set_name("a");
  f->mutable_signature()->add_output_arg()->set_name("out");
  NodeDef* c = f->add_node_def();
  c->set_name("two");
  c->set_op("Const");
  set_type(c, "dtype", DT_FLOAT);
  TensorProto* t = (*c->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(DT_FLOAT);
  t->add_float_val(2.0f);
  NodeDef* m = f->add_node_def();
  m->set_name("mul");
  m->set_op("Mul");
  m->add_input("a");
  m->add_input("two:output:0");
  (*f->mutable_ret())["out"] = "mul:z:0";
  NodeDef* call = add_node(g, "StatefulPartitionedCall", "call", {"x"});
  (*call->mutable_attr())["f"].mutable_func()->set_name("scale_add");
  add_node(g, "Identity", "y", {"call"});
  auto imported = import(g);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  EXPECT_EQ(run1(**imported, "x", iota({3})), (std::vector<float>{0, 2, 4}));
  EXPECT_EQ((*imported)->outputs()[0]->name(), "y");
}

TEST(TfImporter, RecursiveFunctionIsAnError) {
  GraphDef g;
  placeholder(g, "x", {3});
  FunctionDef* f = g.mutable_library()->add_function();
  f->mutable_signature()->set_name("loop");
  f->mutable_signature()->add_input_arg()->set_name("a");
  f->mutable_signature()->add_output_arg()->set_name("out");
  NodeDef* inner = f->add_node_def();
  inner->set_name("again");
  inner->set_op("PartitionedCall");
  inner->add_input("a");
  (*inner->mutable_attr())["f"].mutable_func()->set_name("loop");
  (*f->mutable_ret())["out"] = "again:output:0";
  NodeDef* call = add_node(g, "PartitionedCall", "call", {"x"});
  (*call->mutable_attr())["f"].mutable_func()->set_name("loop");
  auto imported = import(g);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("function 'loop' calls itself (loop -> loop)"), std::string::npos)
      << imported.status().to_string();
}

TEST(TfImporter, EveryUnknownOpIsReportedWithRepair) {
  GraphDef g;
  placeholder(g, "x", {2});
  add_node(g, "MyCustomOp", "custom1", {"x"});
  add_node(g, "Relu", "relu", {"custom1"});
  add_node(g, "StatelessWhile", "loop", {"relu"});
  ImportReport report;
  auto imported = import(g, &report);
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), StatusCode::kUnsupported);
  ASSERT_EQ(report.unsupported.size(), 2u);
  EXPECT_EQ(report.unsupported[0].op_type, "MyCustomOp");
  EXPECT_EQ(report.unsupported[0].reason, "no importer for this op");
  EXPECT_EQ(report.unsupported[1].node_name, "loop");
  EXPECT_NE(report.unsupported[1].proposed_repair.find("control flow"), std::string::npos);
  EXPECT_EQ(report.source_op_histogram.at("Relu"), 1);
  EXPECT_NE(imported.status().message().find("2 unsupported ops"), std::string::npos);
}

TEST(TfImporter, WrongDtypeAttributes) {
  GraphDef g;
  placeholder(g, "x", {2});
  NodeDef* c = const_f32(g, "c", {2}, {1, 2});
  set_type(c, "dtype", DT_INT32);  // contradicts the DT_FLOAT value
  add_node(g, "Add", "add", {"x", "c"});
  auto imported = import(g);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("node 'c' (Const): attribute dtype = DT_INT32 contradicts its value's dtype DT_FLOAT"),
            std::string::npos)
      << imported.status().to_string();

  GraphDef h;
  placeholder(h, "x", {2});
  NodeDef* r = add_node(h, "Relu", "relu", {"x"});
  set_type(r, "T", DT_INT64);
  imported = import(h);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("attribute T = DT_INT64 but input 0 is f32[2]"), std::string::npos)
      << imported.status().to_string();

  GraphDef k;
  placeholder(k, "x", {2}, DataType(999));
  add_node(k, "Relu", "relu", {"x"});
  imported = import(k);
  ASSERT_FALSE(imported.ok());
  // Not a DataType at all: a broken model (kInvalidModel), not an unsupported dtype.
  EXPECT_EQ(imported.status().code(), StatusCode::kInvalidModel) << imported.status().to_string();
  EXPECT_NE(imported.status().message().find("placeholder 'x': dtype 999 is not a TensorFlow DataType"),
            std::string::npos)
      << imported.status().to_string();
}

TEST(TfImporter, ShapeContradictions) {
  GraphDef g;
  placeholder(g, "x", {1, 4, 4, 3});
  const_f32(g, "w", {1, 1, 2, 4}, std::vector<float>(8, 1.0f));  // 2 input channels for a 3-channel input
  NodeDef* c = add_node(g, "Conv2D", "conv", {"x", "w"});
  set_ints(c, "strides", {1, 1, 1, 1});
  set_string(c, "padding", "VALID");
  auto imported = import(g);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("node 'conv' (Conv2D): input has 3 channels, but the filter f32[1,1,2,4] expects a multiple of 2"),
            std::string::npos)
      << imported.status().to_string();

  GraphDef h;
  placeholder(h, "x", {2, 3});
  const_i32(h, "shape", {2}, {4, 2});  // 6 elements into 8
  add_node(h, "Reshape", "r", {"x", "shape"});
  imported = import(h);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("'r'"), std::string::npos) << imported.status().to_string();
}

TEST(TfImporter, BrokenGraphStructure) {
  GraphDef g;
  placeholder(g, "x", {2});
  add_node(g, "Relu", "a", {"b"});
  add_node(g, "Relu", "b", {"a"});
  add_node(g, "Relu", "out", {"a", "^x"});
  auto imported = import(g);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("has a cycle"), std::string::npos) << imported.status().to_string();

  GraphDef h;
  placeholder(h, "x", {2});
  add_node(h, "Relu", "r", {"missing:0"});
  imported = import(h);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("input 'missing:0' is not produced by any node"), std::string::npos)
      << imported.status().to_string();

  GraphDef k;
  placeholder(k, "x", {2});
  add_node(k, "Relu", "r", {"x:3"});
  imported = import(k);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("names output 3 of node 'x'"), std::string::npos)
      << imported.status().to_string();
}

TEST(TfImporter, ControlOnlyAndTrainingNodesAreDropped) {
  GraphDef g;
  placeholder(g, "x", {2});
  add_node(g, "Relu", "y", {"x", "^noop"});
  add_node(g, "NoOp", "noop");
  add_node(g, "AssignVariableOp", "train_step", {"x"});  // not on the path to the output, and output-less
  auto imported = import(g);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  EXPECT_EQ((*imported)->num_nodes(), 1u);
}

}  // namespace
}  // namespace ferry
