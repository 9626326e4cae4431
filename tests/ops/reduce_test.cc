// Tests for ops/reduce.cc. Arrays marked "onnxruntime" were computed once with
// onnxruntime 1.32 (opset 18); the rest are worked by hand.
#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

AttrMap reduce_attrs(int64_t keepdims, int64_t noop = 0) {
  AttrMap m;
  m.set("keepdims", keepdims);
  m.set("noop_with_empty_axes", noop);
  return m;
}


struct OrtCase {
  Op op;
  std::vector<double> axis1_keep;     // axes [1], keepdims 1 -> [2,1,4]
  std::vector<double> axes0m1_drop;   // axes [0,-1], keepdims 0 -> [3]
  double all;                         // no axes, keepdims 0 -> []
};

// onnxruntime
const OrtCase kOrtCases[] = {
    {Op::ReduceMean,
     {-1.3112812042236328, 0.9166945815086365, 2.5342118740081787, 1.3181042671203613, 3.3991076946258545,
      1.4895672798156738, -0.11168833822011948, 1.087683916091919},
     {0.7389862537384033, 1.1736960411071777, 1.5832176208496094},
     1.165299892425537},
    {Op::ReduceSum,
     {-3.9338436126708984, 2.7500836849212646, 7.602635383605957, 3.954312801361084, 10.197322845458984,
      4.4687018394470215, -0.33506500720977783, 3.263051748275757},
     {5.911890029907227, 9.389568328857422, 12.665740966796875},
     27.96719741821289},
    {Op::ReduceMax,
     {0.0, 2.9906744956970215, 3.595629930496216, 4.06031608581543, 4.386385917663574, 4.58198356628418,
      1.2401801347732544, 3.316619634628296},
     {3.316619634628296, 4.386385917663574, 4.58198356628418},
     4.58198356628418},
    {Op::ReduceMin,
     {-2.250364065170288, -1.3859508037567139, 1.7465040683746338, -1.763298511505127, 1.5232609510421753,
      -1.4873720407485962, -1.160746693611145, -0.6954851150512695},
     {-1.763298511505127, -2.250364065170288, -1.6834794282913208},
     -2.250364065170288},
    {Op::ReduceProd,
     {0.0, -4.747434139251709, 14.195455551147461, -11.865486145019531, 28.648576736450195, -9.364582061767578,
      0.5966850519180298, -1.4806843996047974},
     {-0.0, 68.97761535644531, -362.88433837890625},
     0.0},
    {Op::ReduceL1,
     {3.9338436126708984, 5.521985054016113, 7.602635383605957, 7.480909824371338, 10.197322845458984,
      7.443445682525635, 2.815425395965576, 4.654022216796875},
     {13.242228507995605, 16.211788177490234, 20.195571899414062},
     49.64958953857422},
    {Op::ReduceL2,
     {2.8103809356689453, 3.4895334243774414, 4.592243194580078, 4.726734161376953, 6.320195198059082,
      5.009488105773926, 1.7484817504882812, 3.4490177631378174},
     {5.5504961013793945, 6.703660011291504, 8.231128692626953},
     11.979087829589844},
    {Op::ReduceSumSquare,
     {7.89824104309082, 12.17684268951416, 21.08869743347168, 22.34201431274414, 39.94486618041992,
      25.094972610473633, 3.0571885108947754, 11.895723342895508},
     {30.80800437927246, 44.93906021118164, 67.75147247314453},
     143.49855041503906},
    {Op::ReduceLogSumExp,
     {0.2554848790168762, 3.1481425762176514, 3.9466381072998047, 4.149609088897705, 5.060908317565918,
      4.623849391937256, 1.4884356260299683, 3.400062084197998},
     {4.09177303314209, 4.878603935241699, 5.490904808044434},
     6.072513103485107},
};

TEST(ReduceFloat, MatchesOnnxRuntime) {
  for (const OrtCase& c : kOrtCases) {
    SCOPED_TRACE(op_name(c.op));
    Tensor x = f32({2, 3, 4}, kX234);
    auto a = run_op(c.op, {x, i64({1}, {1})}, reduce_attrs(1));
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    expect_type((*a)[0], DType::f32, {2, 1, 4});
    expect_near((*a)[0], c.axis1_keep, 1e-5);

    // Constant axes: the graph inference knows the output shape too.
    auto b = run_op_with_constants(c.op, {x, i64({2}, {0, -1})}, {false, true}, reduce_attrs(0));
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    expect_type((*b)[0], DType::f32, {3});
    expect_near((*b)[0], c.axes0m1_drop, 1e-5);

    auto all = run_op(c.op, {x}, reduce_attrs(0));
    ASSERT_TRUE(all.ok()) << all.status().to_string();
    expect_type((*all)[0], DType::f32, {});
    expect_near((*all)[0], {c.all}, 1e-5);

    auto all_keep = run_op(c.op, {x, i64({0}, {})}, reduce_attrs(1));
    ASSERT_TRUE(all_keep.ok()) << all_keep.status().to_string();
    expect_type((*all_keep)[0], DType::f32, {1, 1, 1});
    expect_near((*all_keep)[0], {c.all}, 1e-5);
  }
}

TEST(ReduceFloat, NoopWithEmptyAxesKeepsElementStep) {
  // Reducing over no axes: Sum/Mean/Max/Min/Prod/LogSumExp are the identity,
  // SumSquare squares, L1 and L2 take |x|.
  Tensor x = f32({1, 3}, {-2, 0.5, 3});
  struct Want {
    Op op;
    std::vector<double> y;
  } wants[] = {{Op::ReduceSum, {-2, 0.5, 3}},       {Op::ReduceMean, {-2, 0.5, 3}},
               {Op::ReduceMax, {-2, 0.5, 3}},       {Op::ReduceMin, {-2, 0.5, 3}},
               {Op::ReduceProd, {-2, 0.5, 3}},      {Op::ReduceLogSumExp, {-2, 0.5, 3}},
               {Op::ReduceSumSquare, {4, 0.25, 9}}, {Op::ReduceL1, {2, 0.5, 3}},
               {Op::ReduceL2, {2, 0.5, 3}}};
  for (const Want& w : wants) {
    SCOPED_TRACE(op_name(w.op));
    auto out = run_op(w.op, {x}, reduce_attrs(1, 1));
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_type((*out)[0], DType::f32, {1, 3});
    expect_near((*out)[0], w.y, 1e-6);
    // An empty axes tensor means the same as no axes.
    auto empty = run_op(w.op, {x, i64({0}, {})}, reduce_attrs(0, 1));
    ASSERT_TRUE(empty.ok()) << empty.status().to_string();
    expect_near((*empty)[0], w.y, 1e-6);
  }
}

TEST(ReduceFloat, EmptySetGivesIdentity) {
  Tensor x = f32({2, 0, 3}, {});
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  struct Want {
    Op op;
    double v;
  } wants[] = {{Op::ReduceSum, 0},  {Op::ReduceProd, 1},       {Op::ReduceMax, -inf},       {Op::ReduceMin, inf},
               {Op::ReduceL1, 0},   {Op::ReduceL2, 0},         {Op::ReduceSumSquare, 0},    {Op::ReduceLogSumExp, -inf},
               {Op::ReduceMean, nan}};  // spec: undefined; onnxruntime gives 0, numpy NaN
  for (const Want& w : wants) {
    SCOPED_TRACE(op_name(w.op));
    auto out = run_op(w.op, {x, i64({1}, {1})}, reduce_attrs(0));
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_type((*out)[0], DType::f32, {2, 3});
    expect_near((*out)[0], std::vector<double>(6, w.v));
  }
}

TEST(ReduceFloat, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  // LogSumExp: +inf wins, all -inf is -inf (not NaN), large values do not overflow.
  auto lse = run_op(Op::ReduceLogSumExp, {f32({3, 2}, {inf, 1, -inf, -inf, 1000, 1000}), i64({1}, {1})},
                    reduce_attrs(0));
  ASSERT_TRUE(lse.ok()) << lse.status().to_string();
  expect_near((*lse)[0], {inf, -inf, 1000 + std::log(2.0)}, 1e-6);
  // Max and Min propagate NaN.
  auto mx = run_op(Op::ReduceMax, {f32({2, 2}, {1, std::nan(""), 3, 2})}, reduce_attrs(0));
  ASSERT_TRUE(mx.ok());
  auto mx_rows = run_op(Op::ReduceMin, {f32({2, 2}, {1, std::nan(""), 3, 2}), i64({1}, {-1})}, reduce_attrs(0));
  ASSERT_TRUE(mx_rows.ok());
  expect_near((*mx)[0], {std::nan("")});
  expect_near((*mx_rows)[0], {std::nan(""), 2});
}

TEST(ReduceFloat, Float16AndDouble) {
  auto h = run_op(Op::ReduceMean, {make_tensor(DType::f16, {2, 2}, {1, 2, 3, 5}), i64({1}, {0})}, reduce_attrs(0));
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  expect_type((*h)[0], DType::f16, {2});
  expect_near((*h)[0], {2, 3.5});
  auto d = run_op(Op::ReduceSum, {f64({3}, {1e16, 1, -1e16})}, reduce_attrs(1));
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  expect_type((*d)[0], DType::f64, {1});
}

TEST(ReduceInt, MatchesOnnxRuntime) {
  Tensor x = i32({2, 3}, {3, -7, 2, 100000, 5, -6});
  // onnxruntime; Mean truncates toward zero, L2 truncates sqrt.
  struct Want {
    Op op;
    std::vector<double> y;
  } wants[] = {{Op::ReduceMean, {0, 33333}}, {Op::ReduceSum, {-2, 99999}},       {Op::ReduceMax, {3, 100000}},
               {Op::ReduceMin, {-7, -6}},    {Op::ReduceProd, {-42, -3000000}},  {Op::ReduceL1, {12, 100011}},
               {Op::ReduceL2, {7, 100000}},  {Op::ReduceSumSquare, {62, 1}}};
  for (const Want& w : wants) {
    SCOPED_TRACE(op_name(w.op));
    Tensor in = w.op == Op::ReduceSumSquare ? i32({2, 3}, {3, -7, 2, 1, 0, 0}) : x;
    auto out = run_op(w.op, {in, i64({1}, {1})}, reduce_attrs(0));
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_type((*out)[0], DType::i32, {2});
    expect_near((*out)[0], w.y, 0);
  }
}

TEST(ReduceInt, ExactInt64AndUnsignedLimits) {
  // Beyond 2^53 a double accumulator would round; integers stay exact.
  const int64_t big = (int64_t(1) << 62) + 1;
  Tensor x = Tensor::from_vector<int64_t>({big, 1, -2}, {3});
  auto sum = run_op(Op::ReduceSum, {x}, reduce_attrs(0));
  ASSERT_TRUE(sum.ok()) << sum.status().to_string();
  EXPECT_EQ(*(*sum)[0].data<int64_t>(), big - 1);
  auto mx = run_op(Op::ReduceMax, {x}, reduce_attrs(0));
  ASSERT_TRUE(mx.ok());
  EXPECT_EQ(*(*mx)[0].data<int64_t>(), big);
  // Empty integer Max/Min give the dtype's lowest / largest value.
  Tensor empty = Tensor::from_vector<uint32_t>({}, {0});
  auto emax = run_op(Op::ReduceMax, {empty}, reduce_attrs(0));
  auto emin = run_op(Op::ReduceMin, {empty}, reduce_attrs(0));
  ASSERT_TRUE(emax.ok() && emin.ok());
  EXPECT_EQ(*(*emax)[0].data<uint32_t>(), 0u);
  EXPECT_EQ(*(*emin)[0].data<uint32_t>(), std::numeric_limits<uint32_t>::max());
}

TEST(ReduceBool, MaxIsAnyMinIsAll) {
  Tensor x = boolean({2, 3}, {0, 1, 0, 1, 1, 1});
  auto mx = run_op(Op::ReduceMax, {x, i64({1}, {1})}, reduce_attrs(0));
  auto mn = run_op(Op::ReduceMin, {x, i64({1}, {1})}, reduce_attrs(0));
  ASSERT_TRUE(mx.ok() && mn.ok());
  expect_type((*mx)[0], DType::boolean, {2});
  expect_near((*mx)[0], {1, 1}, 0);
  expect_near((*mn)[0], {0, 1}, 0);
  expect_error(run_op(Op::ReduceSum, {x}), "ReduceSum does not accept bool input");
}

TEST(ReduceShape, ConstantAxesWithSymbols) {
  Tensor axes = Tensor::from_vector<int64_t>({-1, 1}, {2});
  auto keep = infer_op(Op::ReduceMean, {{DType::f32, shape_of({"N", "S", 768})}, {DType::i64, shape_of({2}), &axes}});
  ASSERT_TRUE(keep.ok()) << keep.status().to_string();
  EXPECT_EQ((*keep)[0].shape, shape_of({"N", 1, 1}));
  auto drop = infer_op(Op::ReduceMean, {{DType::f32, shape_of({"N", "S", 768})}, {DType::i64, shape_of({2}), &axes}},
                       reduce_attrs(0));
  ASSERT_TRUE(drop.ok()) << drop.status().to_string();
  EXPECT_EQ((*drop)[0].shape, shape_of({"N"}));
  // No axes: everything; keepdims 0 gives a scalar even for an unknown rank.
  auto all = infer_op(Op::ReduceSum, {{DType::f32, Shape::unknown_rank()}}, reduce_attrs(0));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[0].shape, shape_of({}));
  auto noop = infer_op(Op::ReduceSum, {{DType::f32, shape_of({"N", 3})}}, reduce_attrs(0, 1));
  ASSERT_TRUE(noop.ok());
  EXPECT_EQ((*noop)[0].shape, shape_of({"N", 3}));
}

TEST(ReduceShape, UnknownAxes) {
  // Axes from a non-constant input: keepdims keeps the rank; a static 1 stays 1.
  auto keep = infer_op(Op::ReduceMax, {{DType::f32, shape_of({"N", 1, 5})}, {DType::i64, shape_of({"K"})}});
  ASSERT_TRUE(keep.ok()) << keep.status().to_string();
  EXPECT_EQ((*keep)[0].shape, shape_of({"?", 1, "?"}));
  auto drop = infer_op(Op::ReduceMax, {{DType::f32, shape_of({"N", 1, 5})}, {DType::i64, shape_of({"K"})}},
                       reduce_attrs(0));
  ASSERT_TRUE(drop.ok());
  EXPECT_FALSE((*drop)[0].shape.rank_known());
  // A known number of axes gives the rank.
  auto two = infer_op(Op::ReduceMax, {{DType::f32, shape_of({"N", 1, 5})}, {DType::i64, shape_of({2})}},
                      reduce_attrs(0));
  ASSERT_TRUE(two.ok());
  EXPECT_EQ((*two)[0].shape, shape_of({"?"}));
}

TEST(ReduceShape, Errors) {
  Tensor bad = Tensor::from_vector<int64_t>({3}, {1});
  expect_error(infer_op(Op::ReduceSum, {{DType::f32, shape_of({2, 3, 4})}, {DType::i64, shape_of({1}), &bad}}),
               "axis 3 is out of range for rank 3");
  Tensor dup = Tensor::from_vector<int64_t>({1, -2}, {2});
  expect_error(infer_op(Op::ReduceSum, {{DType::f32, shape_of({2, 3, 4})}, {DType::i64, shape_of({2}), &dup}}),
               "appears twice");
  expect_error(infer_op(Op::ReduceSum, {{DType::f32, shape_of({2, 3})}, {DType::i32, shape_of({1})}}),
               "axes must be i64, got i32");
  expect_error(infer_op(Op::ReduceLogSumExp, {{DType::i64, shape_of({2, 3})}}),
               "ReduceLogSumExp does not accept i64 input");
  expect_error(run_op(Op::ReduceMean, {f32({2}, {1, 2}), i64({1}, {-2})}), "'test' (ReduceMean): axis -2 is out of range");
  expect_error(infer_op(Op::ReduceMean, {{DType::f32, shape_of({2})}, {DType::i64, shape_of({3})}}, reduce_attrs(0)),
               "3 axes given for an input of rank 1");
}

TEST(ReduceShape, HugeEmptyInputIsBounded) {
  const int64_t huge = int64_t(1) << 40;
  // Reducing the huge axis away: an empty output, computed at once.
  auto out = run_op(Op::ReduceSum, {f32({0, huge}, {}), i64({1}, {1})}, reduce_attrs(0));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {0});
  // Keeping it: a 4 TiB output is refused, not attempted.
  expect_error(run_op(Op::ReduceSum, {f32({huge, 0}, {}), i64({1}, {1})}, reduce_attrs(0)), "exceeds the size limit");
}

}  // namespace
}  // namespace ferry
