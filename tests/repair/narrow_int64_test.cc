// repair/narrow_int64.h: int64 index math proven within int32 computed in int32, with a Cast
// after a value only int64 producers make and before an input that takes int64 only; what is
// not proven (a graph input, an unbounded dim) or would only add Casts stays int64; the
// interface keeps its dtypes and the outputs stay identical.
#include <gtest/gtest.h>

#include <algorithm>

#include "../frontends/onnx/onnx_test_util.h"
#include "../passes/pass_test_util.h"
#include "ir/graph_clone.h"
#include "repair/narrow_int64.h"

namespace ferry {
namespace {

using testing::count_ops;
using testing::parse_ir;

/// `g` narrowed, checked against its original on seeded inputs.
RepairRecord narrow_int64_and_check(std::unique_ptr<Graph>& g, repair::NarrowInt64Counts* counts) {
  auto original = clone_graph(*g);
  EXPECT_TRUE(original.ok());
  auto c = repair::narrow_int64(*g);
  EXPECT_TRUE(c.ok()) << c.status().message();
  *counts = c.ok() ? *c : repair::NarrowInt64Counts{};
  auto rec = repair::check_int64_narrowing(**original, *g, *counts, {});
  EXPECT_TRUE(rec.ok()) << rec.status().message();
  return rec.ok() ? *rec : RepairRecord{};
}

DType dtype_of_value(const Graph& g, const std::string& name) {
  const Value* v = g.find_value(name);
  EXPECT_NE(v, nullptr) << name;
  return v ? v->dtype() : DType::undefined;
}

/// The Cast nodes of `g`, as "input->output:to".
std::vector<std::string> int_casts(const Graph& g) {
  std::vector<std::string> out;
  for (const Node* n : g.nodes())
    if (n->op() == Op::Cast)
      out.push_back(n->input(0)->name() + "->" + n->output(0)->name() + ":" + n->attr_string("to"));
  std::sort(out.begin(), out.end());
  return out;
}

// A head split's target from Shape -> Gather -> Div / Mul -> Concat: int32 from one Cast after
// the Shape to one Cast in front of Reshape's shape; a graph input and an unbounded dim stay int64.
constexpr const char* kHeadSplit = R"(graph g (%x: f32[2,6,8], %z: f32[N,4], %k: i64[1]) -> (%y, %hd, %nk) {
  %zero = const i64[1] [0]
  %one = const i64[1] [1]
  %two = const i64[] [2]
  %heads = const i64[1] [2]
  %s = Shape(%x)
  %b = Gather(%s, %zero) {axis=0}
  %t = Gather(%s, %one) {axis=0}
  %h = Gather(%s, %two) {axis=0}
  %hd = Div(%h, %heads)
  %bt = Mul(%b, %t)
  %tgt = Concat(%bt, %heads, %hd) {axis=0}
  %y = Reshape(%x, %tgt)
  %sz = Shape(%z)
  %n = Gather(%sz, %zero) {axis=0}
  %nk = Add(%n, %k)
})";

TEST(NarrowInt64, HeadSplitTargetIsComputedInInt32) {
  auto g = parse_ir(kHeadSplit);
  repair::NarrowInt64Counts counts;
  const RepairRecord rec = narrow_int64_and_check(g, &counts);
  for (const char* v : {"b", "t", "h", "bt", "tgt", "heads"}) EXPECT_EQ(dtype_of_value(*g, v), DType::i32) << v;
  EXPECT_EQ(dtype_of_value(*g, "s"), DType::i64);  // Shape makes int64 only
  EXPECT_EQ(dtype_of_value(*g, "hd/int32"), DType::i32);
  for (const char* v : {"sz", "n", "nk", "k"}) EXPECT_EQ(dtype_of_value(*g, v), DType::i64) << v;
  EXPECT_EQ(int_casts(*g), (std::vector<std::string>{"hd/int32->hd:i64", "s->s/int32:i32", "tgt->tgt/int64:i64"}));
  const Node* reshape = g->find_value("y")->producer();
  EXPECT_EQ(reshape->input(1)->name(), "tgt/int64");
  EXPECT_EQ(reshape->input(1)->dtype(), DType::i64);
  EXPECT_EQ(counts.values, 6);  // b t h hd bt tgt
  EXPECT_EQ(counts.constants, 4);  // heads, and zero, one, two: Gather indices take int32
  EXPECT_EQ(counts.casts_added, 3);
  // The interface: dtypes and names.
  EXPECT_EQ(g->inputs()[2]->dtype(), DType::i64);
  std::vector<std::string> outs;
  for (const Value* o : g->outputs()) outs.push_back(o->name() + ":" + dtype_name(o->dtype()));
  EXPECT_EQ(outs, (std::vector<std::string>{"y:f32", "hd:i64", "nk:i64"}));
  EXPECT_EQ(rec.rule, "narrow_int64");
  EXPECT_EQ(rec.check, "passed") << rec.check_detail;
  EXPECT_CONTAINS(rec.check_detail, "all 3 outputs identical");
}

TEST(NarrowInt64, ABoundedSymbolicDimIsNarrowedAnUnboundedOneIsNot) {
  const char* text = R"(graph g (%x: f32[N,4,8]) -> (%y) {
  %zero = const i64[1] [0]
  %four = const i64[1] [4]
  %eight = const i64[1] [8]
  %s = Shape(%x)
  %n = Gather(%s, %zero) {axis=0}
  %n4 = Mul(%n, %four)
  %tgt = Concat(%n4, %eight) {axis=0}
  %y = Reshape(%x, %tgt)
})";
  auto unbounded = parse_ir(text);
  auto counts = repair::narrow_int64(*unbounded);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->values, 0);
  EXPECT_EQ(dtype_of_value(*unbounded, "tgt"), DType::i64);
  EXPECT_EQ(count_ops(*unbounded, Op::Cast), 0);

  auto bounded = parse_ir(text);
  bounded->info().dim_ranges["N"] = {1, 64};
  repair::NarrowInt64Counts c;
  const RepairRecord rec = narrow_int64_and_check(bounded, &c);
  EXPECT_EQ(dtype_of_value(*bounded, "tgt"), DType::i32);
  EXPECT_EQ(dtype_of_value(*bounded, "n4"), DType::i32);
  EXPECT_EQ(count_ops(*bounded, Op::Cast), 2);
  EXPECT_EQ(rec.check, "passed") << rec.check_detail;
}

TEST(NarrowInt64, PositionIdsFromRangeAndConstantsReadInt32) {
  auto g = parse_ir(R"(graph g (%x: f32[N,8], %table: f32[16,4]) -> (%e, %p) {
  %one = const i64[] [1]
  %zero = const i64[] [0]
  %ids = const i64[1,8] [0, 1, 2, 3, 4, 5, 6, 7]
  %s = Shape(%x)
  %seq = Gather(%s, %one) {axis=0}
  %pos = Range(%zero, %seq, %one)
  %e = Gather(%table, %pos) {axis=0}
  %p = Gather(%table, %ids) {axis=0}
})");
  repair::NarrowInt64Counts counts;
  const RepairRecord rec = narrow_int64_and_check(g, &counts);
  EXPECT_EQ(dtype_of_value(*g, "pos"), DType::i32);
  EXPECT_EQ(dtype_of_value(*g, "seq"), DType::i64);  // a root: read through seq/int32
  EXPECT_EQ(int_casts(*g), (std::vector<std::string>{"seq->seq/int32:i32"}));
  EXPECT_EQ(g->find_value("p")->producer()->input(1)->name(), "ids");  // the int32 copy took its name
  EXPECT_EQ(dtype_of_value(*g, "ids"), DType::i32);
  EXPECT_EQ(rec.check, "passed") << rec.check_detail;
}

TEST(NarrowInt64, AChainThatWouldOnlyAddCastsStaysInt64) {
  // Gather(Shape) -> Reshape: one int32 node would cost a Cast on each side.
  auto g = parse_ir(R"(graph g (%x: f32[2,6,8]) -> (%y) {
  %idx = const i64[2] [2, 1]
  %s = Shape(%x)
  %t = Gather(%s, %idx) {axis=0}
  %y = Reshape(%x, %t)
})");
  auto counts = repair::narrow_int64(*g);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->values, 0);
  EXPECT_EQ(counts->constants, 1);  // the Gather indices: int32 costs nothing there
  EXPECT_GE(counts->proven, 3);
  EXPECT_EQ(count_ops(*g, Op::Cast), 0);
  EXPECT_EQ(dtype_of_value(*g, "t"), DType::i64);
}

TEST(NarrowInt64, ValuesASubgraphReadsStayInt64) {
  auto g = parse_ir(R"(graph g (%c: bool[], %x: f32[2,6]) -> (%y) {
  %zero = const i64[] [0]
  %s = Shape(%x)
  %d = Gather(%s, %zero) {axis=0}
  %d2 = Add(%d, %d)
  %y = If(%c, %d2) {else_branch=graph e () captures (%d2: i64[]) -> (%n) {
    %n = Neg(%d2)
  }, then_branch=graph t () -> (%t) {
    %t = const i64[] [3]
  }} : i64[] @if
})");
  auto counts = repair::narrow_int64(*g);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(dtype_of_value(*g, "d2"), DType::i64);
  EXPECT_EQ(g->outputs()[0]->dtype(), DType::i64);
}

TEST(NarrowInt64, ACastToInt64OfAnInt32ValueIsRemoved) {
  auto g = parse_ir(R"(graph g (%i: i32[3], %table: f32[10,4]) -> (%e) {
  %c = Cast(%i) {to="i64"}
  %e = Gather(%table, %c) {axis=0}
})");
  repair::NarrowInt64Counts counts;
  const RepairRecord rec = narrow_int64_and_check(g, &counts);
  EXPECT_EQ(counts.casts_removed, 1);
  EXPECT_EQ(count_ops(*g, Op::Cast), 0);
  EXPECT_EQ(g->outputs()[0]->producer()->input(1)->name(), "i");
  EXPECT_EQ(rec.check, "passed") << rec.check_detail;
}

TEST(NarrowInt64, TheCheckNamesTheFirstDifferentOutputElement) {
  auto original = parse_ir(R"(graph g (%x: i64[4]) -> (%y) {
  %k = const i64[] [1]
  %y = Add(%x, %k)
})");
  auto changed = parse_ir(R"(graph g (%x: i64[4]) -> (%y) {
  %k = const i64[] [2]
  %y = Add(%x, %k)
})");
  auto rec = repair::check_int64_narrowing(*original, *changed, {}, {});
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  EXPECT_EQ(rec->check, "failed");
  EXPECT_CONTAINS(rec->check_detail, "output 'y' element 0 is");
}

TEST(NarrowInt64, AGraphWithoutInt64IsUnchanged) {
  auto g = parse_ir(R"(graph g (%x: f32[2]) -> (%y) {
  %y = Relu(%x)
})");
  auto counts = repair::narrow_int64(*g);
  ASSERT_TRUE(counts.ok());
  EXPECT_FALSE(counts->changed());
  EXPECT_EQ(counts->proven, 0);
  EXPECT_EQ(g->num_nodes(), 1u);
}

}  // namespace
}  // namespace ferry
