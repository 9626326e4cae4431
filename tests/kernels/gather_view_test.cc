// A Gather of one constant index along axis 0 is a view of a slice of its input
// (cpu_schedule.cc, try_gather_view): the packed Q/K/V split of Swin / ViT takes no step, and
// the values still equal the reference interpreter's, also where a view is a graph output, is
// read by an elementwise step that could write in place, or is not 64-byte aligned (a copy).
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

Value* gather(Graph& g, Value* x, int64_t index, const std::string& name) {
  AttrMap a;
  a.set("axis", int64_t(0));
  return g.add_node(Op::Gather, {x, g.add_constant(name + "/i", Tensor::scalar<int64_t>(index))}, 1, a, name)->output(0);
}

bool has_step(const SessionRun& r, const std::string& node) {
  for (const StepInfo& st : r.plan.steps)
    if (st.nodes == node) return true;
  return false;
}

TEST(GatherView, PackedProjectionSplitMovesNoData) {
  Tensor x = randn({3, 2, 4, 16}, 51), z = randn({3, 2, 4, 16}, 52);
  auto build = [&](Graph& g) {
    Value* in = g.add_input("x", DType::f32, x.shape());
    Value* qkv = g.add_node(Op::Relu, {in}, 1, {}, "relu")->output(0);
    Value* q = gather(g, qkv, 0, "q"), *k = gather(g, qkv, 1, "k"), *v = gather(g, qkv, -1, "v");
    AttrMap t;
    t.set("perm", ints({0, 2, 1}));
    Value* kt = g.add_node(Op::Transpose, {k}, 1, t, "kt")->output(0);
    Value* s = g.add_node(Op::MatMul, {q, kt}, 1, {}, "scores")->output(0);
    Value* o = g.add_node(Op::MatMul, {s, v}, 1, {}, "out")->output(0);
    // An elementwise reader whose output has the owner's size: it must not write over the owner.
    Value* wide = g.add_node(Op::Add, {k, g.add_input("z", DType::f32, z.shape())}, 1, {}, "wide")->output(0);
    g.set_outputs({o, v, wide, qkv});
  };
  SessionRun r;
  ASSERT_TRUE(run_session(build, {{"x", x}, {"z", z}}, false, &r));
  EXPECT_TRUE(outputs_close(r, 1e-5)) << r.plan_text;
  for (const char* n : {"q", "k", "v"}) EXPECT_FALSE(has_step(r, n)) << n << "\n" << r.plan_text;
}

TEST(GatherView, UnalignedSlicesStillCopy) {
  // [3, 5] f32: the slices start at 20-byte steps: a copy step, right values.
  Tensor x = randn({3, 5}, 61);
  auto build = [&](Graph& g) {
    Value* in = g.add_input("x", DType::f32, x.shape());
    Value* r = g.add_node(Op::Relu, {in}, 1, {}, "relu")->output(0);
    g.set_outputs({g.add_node(Op::Neg, {gather(g, r, 1, "row")}, 1, {}, "neg")->output(0)});
  };
  SessionRun r;
  ASSERT_TRUE(run_session(build, {{"x", x}}, false, &r));
  EXPECT_TRUE(outputs_close(r, 1e-6)) << r.plan_text;
  EXPECT_TRUE(has_step(r, "row")) << r.plan_text;
}

}  // namespace
}  // namespace ferry::testing
