// The typed attribute structs (ir/op_attrs.h): generated from the same ops.def entries
// as the schema, so their defaults must be the schema's; the node's cache follows
// every change of its attributes.
#include "ir/op_attrs.h"

#include <gtest/gtest.h>

#include "ir/graph.h"

namespace ferry {
namespace {

const AttrSpec& spec(Op op, const char* name) {
  const AttrSpec* s = op_schema(op).find_attr(name);
  EXPECT_NE(s, nullptr) << op_name(op) << "." << name;
  static const AttrSpec kNone{};
  return s ? *s : kNone;
}

TEST(OpAttrs, StructDefaultsAreTheSchemaDefaults) {
  size_t fields = 0, schema_attrs = 0;
#define ATTR(name, kind, def)                                                                   \
  ++fields;                                                                                     \
  EXPECT_TRUE(spec(op, #name).has_default && !spec(op, #name).required) << op_name(op) << "." #name; \
  EXPECT_EQ(attr_to_string(AttrValue(a.name)), attr_to_string(spec(op, #name).default_value)) << op_name(op);
#define REQ(name, kind) \
  ++fields;             \
  EXPECT_TRUE(spec(op, #name).required && !spec(op, #name).has_default) << op_name(op) << "." #name;
#define OPT(name, kind)                                                                               \
  ++fields;                                                                                           \
  EXPECT_FALSE(a.name.has_value());                                                                   \
  EXPECT_TRUE(!spec(op, #name).required && !spec(op, #name).has_default) << op_name(op) << "." #name;
#define FERRY_OP(Name, min_in, max_in, min_out, max_out, sink, export_to, flops, ...) \
  {                                                                                  \
    const Op op = Op::Name;                                                          \
    [[maybe_unused]] Name##Attrs a;                                                  \
    schema_attrs += op_schema(op).attrs.size();                                      \
    __VA_ARGS__                                                                      \
  }
#include "ir/ops.def"
#undef FERRY_OP
#undef OPT
#undef REQ
#undef ATTR
  EXPECT_EQ(fields, schema_attrs);
  EXPECT_GT(fields, 100u);
}

TEST(OpAttrs, ParseReadsWhatIsSetAndKeepsDefaultsForTheRest) {
  AttrMap m;
  m.set("group", int64_t(4));
  m.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  ConvAttrs a = ConvAttrs::parse(m);
  EXPECT_EQ(a.group, 4);
  EXPECT_EQ(a.pads, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(a.auto_pad, "NOTSET");
  EXPECT_FALSE(a.strides.has_value());
}

TEST(OpAttrs, NodeCacheFollowsEveryChange) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({2, 3}));
  Node* n = g.add_node(Op::Softmax, {x}, 1);
  EXPECT_EQ(n->attrs<SoftmaxAttrs>().axis, -1);
  n->attrs().set("axis", int64_t(0));
  EXPECT_EQ(n->attrs<SoftmaxAttrs>().axis, 0);
  AttrMap other;
  other.set("axis", int64_t(1));
  n->attrs() = other;  // a copy carries its stamp: the cache sees new content
  EXPECT_EQ(n->attrs<SoftmaxAttrs>().axis, 1);
  n->attrs().erase("axis");
  EXPECT_EQ(n->attrs<SoftmaxAttrs>().axis, -1);
}

TEST(OpAttrs, OpsWithTheSameAttributesShareAStruct) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape({2, 3}));
  Node* mean = g.add_node(Op::ReduceMean, {x}, 1);
  mean->attrs().set("keepdims", int64_t(0));
  EXPECT_EQ(mean->attrs<ReduceAttrs>().keepdims, 0);  // ReduceAttrs is ReduceSum's struct
  Node* log_softmax = g.add_node(Op::LogSoftmax, {x}, 1);
  EXPECT_EQ(log_softmax->attrs<SoftmaxAttrs>().axis, -1);
  EXPECT_TRUE(same_attr_schema(Op::Softmax, Op::Hardmax));
  EXPECT_FALSE(same_attr_schema(Op::MaxPool, Op::AveragePool));
  EXPECT_DEATH(mean->attrs<ConvAttrs>(), "attributes asked as those of Conv");
}

}  // namespace
}  // namespace ferry
