// The kernel table's data-movement, selection and cast rows (Where, Expand, Equal / Less /
// Greater..., Cast, Pad, Split, Gather of non-f32 data, copies for Reshape-like nodes,
// Clip, Log, ReduceMax / ReduceMin, Resize linear) through the CPU session against the reference interpreter, over shapes,
// dtypes and attributes: each node on its own kernel (never the reference), and the
// cases the kernels leave to the reference kernel reported as reference steps.
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace ferry::testing {
namespace {

/// A tensor of `dims` and dtype `t` with values in [-k, k] (bool: 0 / 1), some f32 halves.
Tensor rand_of(DType t, std::vector<int64_t> dims, uint32_t seed, int k = 5) {
  Tensor x = Tensor::empty(t, std::move(dims));
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int v = int(rng() % uint32_t(2 * k + 1)) - k;
    if (t == DType::boolean) x.set_double(i, double(v > 0));
    else if (is_floating(t)) x.set_double(i, v * 0.5 + (rng() % 4) * 0.125);
    else x.set_double(i, double(is_signed(t) ? v : std::abs(v)));
  }
  return x;
}


struct NodeCase {
  std::string label;
  std::vector<Tensor> inputs;     // graph inputs x0, x1, ... (computed)
  std::vector<Tensor> constants;  // then constant inputs c0, c1, ... (nullopt: an omitted input)
  std::vector<bool> omitted;      // per constant: omitted optional input
  Op op;
  AttrMap attrs;
  size_t outputs = 1;
  std::string kernel;  // expected kernel prefix; "" : the reference kernel
};

void check_node(const NodeCase& c) {
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < c.inputs.size(); ++i) feeds["x" + std::to_string(i)] = c.inputs[i];
  auto build = [&](Graph& g) {
    std::vector<Value*> in;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      in.push_back(g.add_input("x" + std::to_string(i), c.inputs[i].dtype(), c.inputs[i].shape()));
    for (size_t i = 0; i < c.constants.size(); ++i)
      in.push_back(i < c.omitted.size() && c.omitted[i] ? nullptr : g.add_constant("c" + std::to_string(i), c.constants[i]));
    Node* n = g.add_node(c.op, in, c.outputs, c.attrs, "node");
    g.set_outputs(n->outputs());
  };
  SessionRun r;
  ASSERT_TRUE(run_session(build, feeds, false, &r)) << c.label;
  bool found = false;
  for (const StepInfo& st : r.plan.steps) {
    if (st.nodes != "node") continue;
    found = true;
    if (c.kernel.empty()) {
      EXPECT_TRUE(st.reference) << c.label << ": " << st.kernel;
    } else {
      EXPECT_FALSE(st.reference) << c.label << ": " << st.kernel;
      EXPECT_EQ(st.kernel.rfind(c.kernel, 0), 0u) << c.label << ": " << st.kernel;
    }
  }
  EXPECT_TRUE(found) << c.label << r.plan_text;
  EXPECT_TRUE(outputs_close(r, 1e-6)) << c.label;
}

TEST(DataMovementKernels, WhereExpandCompare) {
  std::vector<NodeCase> cases;
  uint32_t s = 2000;
  for (DType t : {DType::f32, DType::i64, DType::i32, DType::u8}) {
    const std::string tn = dtype_name(t);
    cases.push_back({"where same " + tn, {rand_of(DType::boolean, {3, 70}, s++), rand_of(t, {3, 70}, s++), rand_of(t, {3, 70}, s++)},
                     {}, {}, Op::Where, {}, 1, "where__generic"});
    cases.push_back({"where broadcast " + tn, {rand_of(DType::boolean, {1, 5, 1}, s++), rand_of(t, {4, 1, 6}, s++), rand_of(t, {}, s++)},
                     {}, {}, Op::Where, {}, 1, "where__generic"});
    cases.push_back({"expand " + tn, {rand_of(t, {3, 1, 7}, s++)}, {i64s({2, 1, 5, 7})}, {}, Op::Expand, {}, 1, "expand__generic"});
    cases.push_back({"expand last " + tn, {rand_of(t, {4, 1}, s++)}, {i64s({4, 300})}, {}, Op::Expand, {}, 1, "expand__generic"});
    for (Op op : {Op::Equal, Op::Less, Op::LessOrEqual, Op::Greater, Op::GreaterOrEqual})
      cases.push_back({std::string(op_name(op)) + " " + tn, {rand_of(t, {2, 3, 40}, s++), rand_of(t, {3, 1}, s++)}, {}, {}, op, {}, 1,
                       "compare__generic"});
  }
  cases.push_back({"equal bool", {rand_of(DType::boolean, {9}, s++), rand_of(DType::boolean, {9}, s++)}, {}, {}, Op::Equal, {}, 1,
                   "compare__generic"});
  cases.push_back({"where big", {rand_of(DType::boolean, {312, 128}, s++), rand_of(DType::f32, {312, 128}, s++),
                                 rand_of(DType::f32, {1}, s++)}, {}, {}, Op::Where, {}, 1, "where__generic"});
  cases.push_back({"expand big", {rand_of(DType::f32, {64, 1, 1}, s++)}, {i64s({64, 32, 32})}, {}, Op::Expand, {}, 1,
                   "expand__generic"});
  Tensor nan = rand_of(DType::f32, {16}, s++);
  nan.set_double(3, std::nan(""));
  cases.push_back({"less with NaN", {nan, rand_of(DType::f32, {16}, s++)}, {}, {}, Op::Less, {}, 1, "compare__generic"});
  for (const NodeCase& c : cases) check_node(c);
}

TEST(DataMovementKernels, CastPadSplitGather) {
  std::vector<NodeCase> cases;
  uint32_t s = 2100;
  const std::vector<std::pair<DType, DType>> casts = {
      {DType::f32, DType::i64}, {DType::i64, DType::f32}, {DType::f32, DType::boolean}, {DType::boolean, DType::f32},
      {DType::i64, DType::i32}, {DType::i32, DType::i64}, {DType::f32, DType::f64}, {DType::f64, DType::f32},
      {DType::f32, DType::u8},  {DType::i64, DType::boolean}};
  for (auto [from, to] : casts)
    cases.push_back({std::string("cast ") + dtype_name(from) + " -> " + dtype_name(to), {rand_of(from, {5, 33}, s++, 300)}, {}, {},
                     Op::Cast, attrs({{"to", std::string(dtype_name(to))}}), 1, "cast__generic"});
  Tensor big = rand_of(DType::f32, {8}, s++);
  big.set_double(0, 1e30), big.set_double(1, -1e30), big.set_double(2, std::nan("")), big.set_double(3, -2.75);
  cases.push_back({"cast saturating", {big}, {}, {}, Op::Cast, attrs({{"to", std::string("i32")}}), 1, "cast__generic"});
  cases.push_back({"cast f32 -> f16 (reference)", {rand_of(DType::f32, {7}, s++)}, {}, {}, Op::Cast,
                   attrs({{"to", std::string("f16")}}), 1, ""});
  struct P {
    std::vector<int64_t> dims, pads, axes;
    const char* mode;
    DType t;
  };
  for (const P& p : std::vector<P>{{{1, 3, 8, 9}, {0, 0, 1, 2, 0, 0, 3, 1}, {}, "constant", DType::f32},
                                   {{2, 5, 7}, {0, 2, 3, 0, 1, 2}, {}, "reflect", DType::f32},
                                   {{2, 5, 7}, {1, 0, 2, 0, 3, 4}, {}, "edge", DType::f32},
                                   {{3, 6}, {2, 5, 1, 7}, {}, "wrap", DType::f32},
                                   {{2, 4, 9}, {-1, 2, -3, 1}, {1, 2}, "constant", DType::f32},
                                   {{1, 172, 264}, {0, 1, 19, 0, 1, 19}, {}, "constant", DType::f32},
                                   {{4, 6}, {1, 2, 0, 1}, {}, "constant", DType::i64},
                                   {{4, 1}, {0, 3, 0, 2}, {}, "reflect", DType::i32},
                                   {{5, 5}, {-2, 1, 0, -1}, {}, "edge", DType::u8},
                                   // unpadded trailing axes: rows along the last padded axis
                                   {{1, 17, 20, 1}, {0, 0, 3, 0, 0, 0, 5, 0}, {}, "constant", DType::f32},
                                   {{2, 5, 3, 4}, {1, 2, 0, 0, 0, 3, 0, 0}, {}, "reflect", DType::f32},
                                   {{2, 6, 3, 2}, {0, -2, 0, 0, 1, 3, 0, 0}, {}, "edge", DType::f32},
                                   {{3, 4, 5}, {0, 2, 0, 0, 5, 0}, {}, "wrap", DType::i32},
                                   {{2, 9, 4}, {2, -3}, {1}, "constant", DType::f32},
                                   {{3, 4}, {0, 0, 0, 0}, {}, "constant", DType::f32}}) {
    NodeCase c{std::string("pad ") + p.mode + " " + dtype_name(p.t), {rand_of(p.t, p.dims, s++)}, {i64s(p.pads)}, {}, Op::Pad,
               attrs({{"mode", std::string(p.mode)}}), 1, "pad__generic"};
    if (std::string(p.mode) == "constant") {
      Tensor v = Tensor::empty(p.t, {});
      v.set_double(0, 2);
      c.constants.push_back(v);
    }
    if (!p.axes.empty()) {
      if (c.constants.size() == 1) c.constants.push_back(Tensor::empty(p.t, {})), c.omitted = {false, true};
      c.constants.push_back(i64s(p.axes));
    }
    cases.push_back(c);
  }
  struct S {
    std::vector<int64_t> dims, split;
    int64_t axis;
    size_t outputs;
    DType t;
  };
  for (const S& sp : std::vector<S>{{{2, 6, 5}, {1, 2, 3}, 1, 3, DType::f32},
                                    {{4, 10}, {}, -1, 2, DType::f32},
                                    {{312, 1, 258}, {129, 129}, 2, 2, DType::f32},
                                    {{6, 4}, {0, 6}, 0, 2, DType::i64},
                                    {{3, 9}, {}, 1, 3, DType::boolean}}) {
    NodeCase c{"split axis " + std::to_string(sp.axis) + " " + dtype_name(sp.t), {rand_of(sp.t, sp.dims, s++)}, {}, {}, Op::Split,
               attrs({{"axis", sp.axis}}), sp.outputs, "split__generic"};
    if (!sp.split.empty()) c.constants.push_back(i64s(sp.split));
    else c.attrs.set("num_outputs", int64_t(sp.outputs));
    cases.push_back(c);
  }
  for (DType t : {DType::i64, DType::i32, DType::boolean, DType::f64})
    cases.push_back({std::string("gather ") + dtype_name(t), {rand_of(t, {5, 7}, s++)}, {i64s({4, -1, 0, 0})}, {}, Op::Gather,
                     attrs({{"axis", int64_t(1)}}), 1, "gather__generic"});
  // Reshape-like nodes on a graph input (no arena value to view): one copy.
  cases.push_back({"unsqueeze of an input", {rand_of(DType::i64, {3, 4}, s++)}, {i64s({0})}, {}, Op::Unsqueeze, {}, 1,
                   "copy__generic"});
  cases.push_back({"reshape of an input", {rand_of(DType::f32, {3, 4, 5}, s++)}, {i64s({12, 5})}, {}, Op::Reshape, {}, 1,
                   "copy__generic"});
  cases.push_back({"flatten of an input", {rand_of(DType::boolean, {2, 3, 4}, s++)}, {}, {}, Op::Flatten, {}, 1,
                   "copy__generic"});
  for (const NodeCase& c : cases) check_node(c);
}

TEST(DataMovementKernels, ClipLog) {
  uint32_t s = 2300;
  Tensor x = rand_of(DType::f32, {3, 257, 8}, s++);
  x.set_double(5, std::nan(""));
  std::vector<NodeCase> cases = {
      {"clip both", {x}, {Tensor::scalar(-1.5f), Tensor::scalar(2.f)}, {}, Op::Clip, {}, 1, "clip_f32__generic"},
      {"clip min only", {x}, {Tensor::scalar(1e-10f)}, {}, Op::Clip, {}, 1, "clip_f32__generic"},
      {"clip max only", {x}, {Tensor::scalar(0.f), Tensor::scalar(0.25f)}, {true, false}, Op::Clip, {}, 1,
       "clip_f32__generic"},
      {"clip computed bounds", {x, Tensor::scalar(-1.f), Tensor::scalar(1.f)}, {}, {}, Op::Clip, {}, 1,
       "clip_f32__generic"},
  };
  Tensor pos = rand_of(DType::f32, {1, 172, 309}, s++);
  for (int64_t i = 0; i < pos.numel(); ++i) pos.data<float>()[i] = 1e-6f + std::fabs(pos.data<float>()[i]) * 3.f;
  // The AVX2 / AVX-512 rows where the host has them (simd::log), else the generic one.
  const char* log_kernel = host_isa() >= Isa::avx2 ? "log_f32__avx" : "log_f32__generic";
  cases.push_back({"log", {pos}, {}, {}, Op::Log, {}, 1, log_kernel});
  Tensor wide = Tensor::empty(DType::f32, {4099});  // 2^-149 .. 2^127 by ratio ~1.06, a ragged tail
  for (int64_t i = 0; i < wide.numel(); ++i) wide.data<float>()[i] = std::ldexp(1.f + float(i % 7) / 7.f, int(i % 277) - 149);
  cases.push_back({"log over the whole exponent range", {wide}, {}, {}, Op::Log, {}, 1, log_kernel});
  for (const NodeCase& c : cases) check_node(c);
}

TEST(DataMovementKernels, LogSpecialValues) {
  // ln 0 = -inf, ln inf = inf, ln(x < 0) and ln NaN = NaN, ln 1 = 0 exactly, ln of subnormals.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const std::vector<float> v = {0.f, -0.f, inf, -inf, -1.f, nan, 1.f, 1e-45f, 1e-40f, 1.17549435e-38f, 3.4e38f,
                                0.70710677f, 0.70710683f, 2.f, 0.5f, 1.0000001f, 0.99999994f};
  Tensor x = Tensor::from_vector<float>(v, {int64_t(v.size())});
  auto build = [&](Graph& g) {
    Node* n = g.add_node(Op::Log, {g.add_input("x0", DType::f32, x.shape())}, 1, {}, "node");
    g.set_outputs(n->outputs());
  };
  SessionRun r;
  ASSERT_TRUE(run_session(build, {{"x0", x}}, false, &r));
  for (size_t i = 0; i < v.size(); ++i) {
    const double got = r.got[0].get_double(int64_t(i)), want = std::log(double(v[i]));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "ln " << v[i] << " = " << got;
    } else if (std::isinf(want)) {
      EXPECT_EQ(got, want) << "ln " << v[i];
    } else {
      EXPECT_NEAR(got, want, 2e-7 * std::max(1.0, std::fabs(want))) << "ln " << v[i];
    }
  }
  EXPECT_EQ(r.got[0].get_double(6), 0.0);
}

TEST(DataMovementKernels, ReduceExtremesAndResizeLinear) {
  std::vector<NodeCase> cases;
  uint32_t s = 2200;
  struct R {
    std::vector<int64_t> dims, axes;
    int64_t keep;
  };
  for (Op op : {Op::ReduceMax, Op::ReduceMin})
    for (const R& r : std::vector<R>{{{2, 64, 7, 7}, {2, 3}, 1}, {{3, 50, 300}, {1}, 0}, {{4, 1, 5, 1, 6}, {1, 2, 3}, 1},
                                     {{2, 3, 4, 5}, {}, 0}, {{1, 172, 309}, {-1}, 1}}) {
      Tensor x = rand_of(DType::f32, r.dims, s++);
      if (x.numel() > 20) x.set_double(17, std::nan(""));
      NodeCase c{std::string(op_name(op)) + " " + std::to_string(r.dims.size()) + "-d", {x}, {}, {}, op,
                 attrs({{"keepdims", r.keep}}), 1, op == Op::ReduceMax ? "reduce_max_f32__generic" : "reduce_min_f32__generic"};
      if (!r.axes.empty()) c.constants.push_back(i64s(r.axes));
      cases.push_back(c);
    }
  cases.push_back({"ReduceMax over C,W (reference)", {rand_of(DType::f32, {2, 3, 4, 5}, s++)}, {i64s({1, 3})}, {},
                   Op::ReduceMax, attrs({{"keepdims", int64_t(1)}}), 1, ""});
  struct Z {
    std::vector<int64_t> dims;
    std::vector<float> scales;
    std::vector<int64_t> sizes;
    const char* coord;
    const char* mode;
    bool fast;
  };
  for (const Z& z : std::vector<Z>{{{1, 3, 5, 6}, {1, 1, 2, 2}, {}, "half_pixel", "linear", true},
                                   {{2, 4, 7, 5}, {}, {2, 4, 12, 13}, "align_corners", "linear", true},
                                   {{1, 2, 6, 6}, {1, 1, 0.5f, 1.5f}, {}, "asymmetric", "linear", true},
                                   {{1, 2, 4, 5}, {}, {1, 2, 1, 9}, "pytorch_half_pixel", "linear", true},
                                   {{1, 96, 46, 62}, {1, 1, 2, 2}, {}, "half_pixel", "linear", true},
                                   {{3, 9, 8}, {1, 3.f, 0.75f}, {}, "align_corners", "linear", true},
                                   {{1, 2, 5, 5}, {1, 1, 2, 2}, {}, "half_pixel", "cubic", false},
                                   {{1, 2, 5, 5}, {1, 1, 2, 2}, {}, "half_pixel_symmetric", "linear", false},
                                   {{1, 2, 5, 5}, {1, 2, 2, 2}, {}, "half_pixel", "linear", false}}) {
    NodeCase c{std::string("resize ") + z.mode + " " + z.coord, {rand_of(DType::f32, z.dims, s++)},
               {Tensor::empty(DType::f32, {0})}, {}, Op::Resize,
               attrs({{"mode", std::string(z.mode)}, {"coordinate_transformation_mode", std::string(z.coord)}}), 1,
               z.fast ? "resize_f32__generic" : ""};
    if (!z.scales.empty()) {
      c.constants.push_back(Tensor::from_vector<float>(z.scales, {int64_t(z.scales.size())}));
    } else {
      c.constants.push_back(Tensor::empty(DType::f32, {0}));
      c.constants.push_back(i64s(z.sizes));
    }
    cases.push_back(c);
  }
  for (const NodeCase& c : cases) check_node(c);
}

}  // namespace
}  // namespace ferry::testing
