// MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool: hand-checked cases,
// onnxruntime references (tests/ops/gen_linalg_refs.py), ceil_mode edge rules,
// dtypes, symbolic inference and validation errors.
#include <cmath>

#include "linalg_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;


Tensor x1to6() { return f32({1, 1, 6}, {1, 2, 3, 4, 5, 6}); }

// --- MaxPool -------------------------------------------------------------------------

TEST(PoolMax, HandChecked2dWithIndices) {
  // 4x4 ramp, 2x2 windows, stride 2: the bottom-right of each block wins.
  std::vector<double> v(16);
  for (int i = 0; i < 16; ++i) v[size_t(i)] = i;
  auto out = run_op(Op::MaxPool, {f32({1, 1, 4, 4}, v)}, attrs({{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}}),
                    2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 2, 2});
  expect_type((*out)[1], DType::i64, {1, 1, 2, 2});
  expect_near((*out)[0], {5, 7, 13, 15});
  expect_near((*out)[1], {5, 7, 13, 15});
}

TEST(PoolMax, PaddingNeverWins) {
  // All inputs negative: zero padding must not appear in the output.
  auto out = run_op(Op::MaxPool, {f32({1, 1, 3}, {-3, -2, -1})}, attrs({{"kernel_shape", ints({3})}, {"pads", ints({1, 1})}}),
                    2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {-2, -1, -1});
  expect_near((*out)[1], {1, 2, 2});
}

TEST(PoolMax, TiesPickTheFirstIndex) {
  auto out = run_op(Op::MaxPool, {f32({1, 1, 4}, {7, 7, 7, 7})}, attrs({{"kernel_shape", ints({2})}}), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[1], {0, 1, 2});
}

TEST(PoolMax, IndicesCountBatchAndChannels) {
  // Indices flatten N x C x spatial: channel 1 of batch 1 starts at (1*2 + 1) * 3 = 9.
  std::vector<double> v(12);
  for (int i = 0; i < 12; ++i) v[size_t(i)] = (i % 3 == 1) ? 10 : 0;
  auto out = run_op(Op::MaxPool, {f32({2, 2, 3}, v)}, attrs({{"kernel_shape", ints({3})}}), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[1], {1, 4, 7, 10});
}

TEST(PoolMax, MatchesOnnxRuntimeK3S2P1) {
  auto out = run_op(Op::MaxPool, {pat({1, 2, 5, 5}, 0)},
                    attrs({{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 2, 3, 3});
  expect_near((*out)[0], {0.875, 0.125, 0.5, 1, 1, 0.25, 0.75, 0.875, -0.25, 0.25, 1, 1, 0, 0.75, 0.875, 1, 0.25, 0.625});
  expect_near((*out)[1], {5, 3, 4, 11, 11, 9, 16, 22, 19, 26, 28, 28, 31, 33, 39, 45, 43, 44});
}

TEST(PoolMax, MatchesOnnxRuntimeCeilModeColumnMajorIndices) {
  auto out = run_op(Op::MaxPool, {pat({1, 1, 5, 5}, 0)},
                    attrs({{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}, {"ceil_mode", int64_t(1)},
                           {"storage_order", int64_t(1)}}),
                    2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 3, 3});
  expect_near((*out)[0], {0.875, 0.125, 0.5, 1, -0.375, 0, 0.5, 0.875, -0.5});
  expect_near((*out)[1], {1, 15, 20, 7, 17, 22, 9, 14, 24});
}

TEST(PoolMax, MatchesOnnxRuntimeDilation) {
  auto out = run_op(Op::MaxPool, {pat({1, 1, 5, 5}, 0)}, attrs({{"kernel_shape", ints({2, 2})}, {"dilations", ints({2, 2})}}),
                    2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {0.625, 1, 0.5, 0.875, 0.75, 0.25, 0.875, 1, 0.875});
  expect_near((*out)[1], {10, 11, 4, 5, 16, 9, 22, 11, 22});
}

TEST(PoolMax, MatchesOnnxRuntime1dSameUpper) {
  auto out = run_op(Op::MaxPool, {pat({1, 2, 5}, 0)},
                    attrs({{"kernel_shape", ints({2})}, {"strides", ints({2})}, {"auto_pad", std::string("SAME_UPPER")}}), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 2, 3});
  expect_near((*out)[0], {-0.625, 0.125, 0.5, 0.875, -0.125, 0.25});
  expect_near((*out)[1], {1, 3, 4, 5, 8, 9});
}

TEST(PoolMax, MatchesOnnxRuntime3d) {
  auto out = run_op(Op::MaxPool, {pat({1, 1, 3, 3, 4}, 0)},
                    attrs({{"kernel_shape", ints({2, 2, 2})}, {"strides", ints({1, 1, 2})}}), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 2, 2, 2});
  expect_near((*out)[0], {0.875, 0.375, 0.875, 1, 1, 0.625, 1, 0.875});
  expect_near((*out)[1], {5, 15, 5, 11, 28, 27, 28, 22});
}

TEST(PoolMax, SingleOutputAndDtypes) {
  for (DType t : {DType::f64, DType::f16, DType::bf16, DType::i8, DType::u8}) {
    auto out = run_op(Op::MaxPool, {make_tensor(t, {1, 1, 5}, {3, 9, 2, 7, 8})},
                      attrs({{"kernel_shape", ints({2})}, {"strides", ints({2})}, {"ceil_mode", int64_t(1)}}));
    ASSERT_TRUE(out.ok()) << dtype_name(t) << ": " << out.status().to_string();
    expect_type((*out)[0], t, {1, 1, 3});
    expect_near((*out)[0], {9, 7, 8});
  }
  auto neg = run_op(Op::MaxPool, {make_tensor(DType::i8, {1, 1, 2}, {-128, -5})},
                    attrs({{"kernel_shape", ints({1})}, {"pads", ints({0, 0})}}));
  ASSERT_TRUE(neg.ok()) << neg.status().to_string();
  expect_near((*neg)[0], {-128, -5});
}

// --- AveragePool ---------------------------------------------------------------------

TEST(PoolAverage, HandCheckedCeilModeDropsWindowStartingInPadding) {
  // in 5, k 2, s 2, pads 1+1, ceil: ceil(5/2)+1 = 4 windows, but the 4th would start at
  // index 5 (the right padding), so 3 remain: [-1,0] [1,2] [3,4].
  auto out = run_op(Op::AveragePool, {f32({1, 1, 5}, {1, 2, 3, 4, 5})},
                    attrs({{"kernel_shape", ints({2})}, {"strides", ints({2})}, {"pads", ints({1, 1})},
                           {"ceil_mode", int64_t(1)}, {"count_include_pad", int64_t(1)}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_type((*out)[0], DType::f32, {1, 1, 3});
  expect_near((*out)[0], {0.5, 2.5, 4.5});
}

TEST(PoolAverage, HandCheckedDivisorCountsPaddingButNotBeyond) {
  // in 6, k 3, s 2, pads 1+1, ceil: windows start at -1, 1, 3, 5. The last covers
  // [5, 6, 7]: 6 is right padding (counted with count_include_pad), 7 is beyond it (never).
  for (int64_t cip : {0, 1}) {
    auto out = run_op(Op::AveragePool, {x1to6()},
                      attrs({{"kernel_shape", ints({3})}, {"strides", ints({2})}, {"pads", ints({1, 1})},
                             {"ceil_mode", int64_t(1)}, {"count_include_pad", cip}}));
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    if (cip == 0) expect_near((*out)[0], {1.5, 3, 5, 6});
    else expect_near((*out)[0], {1, 3, 5, 3});
  }
}

TEST(PoolAverage, MatchesOnnxRuntimePadsExcludeAndInclude) {
  AttrMap a = attrs({{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}});
  auto ex = run_op(Op::AveragePool, {pat({1, 1, 5, 5}, 0)}, a);
  ASSERT_TRUE(ex.ok()) << ex.status().to_string();
  expect_near((*ex)[0], {-0.40625, -0.375, 0.1875, 0.458333343, -0.277777791, -0.1875, 0.4375, -0.0625, -0.5625}, 1e-6);
  a.set("count_include_pad", int64_t(1));
  auto in = run_op(Op::AveragePool, {pat({1, 1, 5, 5}, 0)}, a);
  ASSERT_TRUE(in.ok()) << in.status().to_string();
  expect_near((*in)[0], {-0.180555552, -0.25, 0.0833333358, 0.305555552, -0.277777791, -0.125, 0.194444448,
                         -0.0416666679, -0.25},
              1e-6);
}

TEST(PoolAverage, MatchesOnnxRuntimeCeilMode) {
  AttrMap a = attrs({{"kernel_shape", ints({3, 2})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})},
                     {"ceil_mode", int64_t(1)}});
  auto ex = run_op(Op::AveragePool, {pat({1, 1, 6, 5}, 0)}, a);
  ASSERT_TRUE(ex.ok()) << ex.status().to_string();
  expect_type((*ex)[0], DType::f32, {1, 1, 4, 3});
  expect_near((*ex)[0], {-0.0625, -0.5625, 0.1875, 0.625, -0.229166672, -0.1875, 0.125, 0.333333343, -0.333333343,
                         -0.125, 0.4375, 0.125},
              1e-6);
  a.set("count_include_pad", int64_t(1));
  auto in = run_op(Op::AveragePool, {pat({1, 1, 6, 5}, 0)}, a);
  ASSERT_TRUE(in.ok()) << in.status().to_string();
  expect_near((*in)[0], {-0.020833334, -0.375, 0.125, 0.3125, -0.229166672, -0.1875, 0.0625, 0.333333343,
                         -0.333333343, -0.03125, 0.21875, 0.0625},
              1e-6);
}

TEST(PoolAverage, MatchesOnnxRuntimeSameLowerAndDilation) {
  auto same = run_op(Op::AveragePool, {pat({1, 1, 6}, 0)},
                     attrs({{"kernel_shape", ints({4})}, {"strides", ints({2})}, {"auto_pad", std::string("SAME_LOWER")}}));
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  expect_near((*same)[0], {-0.625, -0.0625, 0.5});
  auto dil = run_op(Op::AveragePool, {pat({1, 1, 5, 5}, 0)},
                    attrs({{"kernel_shape", ints({2, 2})}, {"dilations", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})},
                           {"count_include_pad", int64_t(1)}}));
  ASSERT_TRUE(dil.ok()) << dil.status().to_string();
  expect_type((*dil)[0], DType::f32, {1, 1, 5, 5});
  expect_near((*dil)[0], {-0.21875, 0.09375, -0.25, -0.0625, -0.03125, 0.09375, -0.34375, 0.03125, -0.125, -0.0625,
                          -0.03125, -0.0625, -0.21875, -0.375, -0.1875, 0.375, 0.21875, 0.0625, -0.09375, -0.3125,
                          0.1875, -0.15625, 0.03125, -0.3125, -0.15625});
}

TEST(PoolAverage, SameWithKernelSmallerThanStrideShiftsWindows) {
  // k 1, s 3, in 6: SAME padding is (2 - 1) * 3 + 1 - 6 = -2, split -1 / -1, so the
  // windows start at 1 and 4 (onnxruntime and the ONNX reference agree; Conv clamps instead).
  auto out = run_op(Op::AveragePool, {x1to6()},
                    attrs({{"kernel_shape", ints({1})}, {"strides", ints({3})}, {"auto_pad", std::string("SAME_UPPER")}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {2, 5});
}

TEST(PoolAverage, MatchesOnnxRuntime3d) {
  auto out = run_op(Op::AveragePool, {pat({1, 1, 3, 3, 4}, 0)},
                    attrs({{"kernel_shape", ints({2, 2, 2})}, {"strides", ints({1, 1, 2})}}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0], {-0.203125, -0.25, 0.234375, -0.078125, -0.21875, 0, 0.21875, -0.359375});
}

TEST(PoolAverage, HalfPrecision) {
  for (DType t : {DType::f16, DType::bf16, DType::f64}) {
    auto out = run_op(Op::AveragePool, {make_tensor(t, {1, 1, 4}, {1, 2, 3, 5})}, attrs({{"kernel_shape", ints({2})}}));
    ASSERT_TRUE(out.ok()) << dtype_name(t) << ": " << out.status().to_string();
    expect_type((*out)[0], t, {1, 1, 3});
    expect_near((*out)[0], {1.5, 2.5, 4});
  }
}

// --- global pools --------------------------------------------------------------------

TEST(PoolGlobal, AverageAndMax) {
  Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 6, -1, -2, -3, -6});
  auto avg = run_op(Op::GlobalAveragePool, {x});
  ASSERT_TRUE(avg.ok()) << avg.status().to_string();
  expect_type((*avg)[0], DType::f32, {1, 2, 1, 1});
  expect_near((*avg)[0], {3, -3});
  auto mx = run_op(Op::GlobalMaxPool, {x});
  ASSERT_TRUE(mx.ok()) << mx.status().to_string();
  expect_near((*mx)[0], {6, -1});
  auto mx1d = run_op(Op::GlobalMaxPool, {make_tensor(DType::f16, {2, 1, 3}, {1, 5, 2, -4, -3, -9})});
  ASSERT_TRUE(mx1d.ok()) << mx1d.status().to_string();
  expect_type((*mx1d)[0], DType::f16, {2, 1, 1});
  expect_near((*mx1d)[0], {5, -3});
}

TEST(PoolGlobal, InfersSymbolicShape) {
  auto out = infer_op(Op::GlobalAveragePool, {{DType::f32, shape_of({"N", 2048, "H", "W"})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape.to_string(), "[N,2048,1,1]");
  expect_error(infer_op(Op::GlobalMaxPool, {{DType::f32, Shape({3})}}), "X must be N x C x D1");
  expect_error(infer_op(Op::GlobalMaxPool, {{DType::i32, Shape({1, 3, 2})}}), "X has dtype i32");
}

// --- inference and errors -------------------------------------------------------------

TEST(PoolInfer, SymbolicBatchResNetStem) {
  auto out = infer_op(Op::MaxPool, {{DType::f32, shape_of({"N", 64, 112, 112})}},
                      attrs({{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}), 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape.to_string(), "[N,64,56,56]");
  EXPECT_EQ((*out)[1].dtype, DType::i64);
  EXPECT_EQ((*out)[1].shape.to_string(), "[N,64,56,56]");
  auto unk = infer_op(Op::AveragePool, {{DType::f32, shape_of({"N", "C", "H", 7})}},
                      attrs({{"kernel_shape", ints({7, 7})}}));
  ASSERT_TRUE(unk.ok()) << unk.status().to_string();
  EXPECT_EQ((*unk)[0].shape.to_string(), "[N,C,?,1]");
  auto rank = infer_op(Op::AveragePool, {{DType::f32, Shape::unknown_rank()}}, attrs({{"kernel_shape", ints({2})}}));
  ASSERT_TRUE(rank.ok()) << rank.status().to_string();
  EXPECT_EQ((*rank)[0].shape.to_string(), "[?,?,?]");
}

TEST(PoolInfer, CeilAndValidSizes) {
  // VALID with ceil_mode is NOTSET with zero pads, as in ONNX shape inference and
  // onnxruntime: ceil((6 - 3) / 2) + 1 = 3 (the spec text's ceil((in - k + 1) / s) says 2).
  AttrMap va = attrs({{"kernel_shape", ints({3})}, {"strides", ints({2})}, {"auto_pad", std::string("VALID")}});
  auto floor_mode = infer_op(Op::MaxPool, {{DType::f32, Shape({1, 1, 6})}}, va);
  ASSERT_TRUE(floor_mode.ok()) << floor_mode.status().to_string();
  EXPECT_EQ((*floor_mode)[0].shape.to_string(), "[1,1,2]");
  va.set("ceil_mode", int64_t(1));
  auto v = infer_op(Op::MaxPool, {{DType::f32, Shape({1, 1, 6})}}, va);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ((*v)[0].shape.to_string(), "[1,1,3]");
  auto c = infer_op(Op::MaxPool, {{DType::f32, Shape({1, 1, 6})}},
                    attrs({{"kernel_shape", ints({2})}, {"strides", ints({2})}, {"ceil_mode", int64_t(1)}}));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ((*c)[0].shape.to_string(), "[1,1,3]");
  auto s = infer_op(Op::AveragePool, {{DType::f32, Shape({1, 1, 7})}},
                    attrs({{"kernel_shape", ints({3})}, {"strides", ints({3})}, {"auto_pad", std::string("SAME_UPPER")}}));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)[0].shape.to_string(), "[1,1,3]");
}

TEST(PoolInfer, RejectsBadAttributes) {
  auto mp = [](AttrMap a) { return infer_op(Op::MaxPool, {{DType::f32, Shape({1, 1, 5, 5})}}, std::move(a)); };
  expect_error(mp(attrs({{"kernel_shape", ints({3})}})), "X has shape [1,1,5,5] but kernel_shape has 1 values");
  expect_error(mp(attrs({{"kernel_shape", ints({3, 0})}})), "kernel_shape[1] = 0 must be > 0");
  expect_error(mp(attrs({{"kernel_shape", ints({3, 3})}, {"strides", ints({0, 1})}})), "strides[0] = 0 must be > 0");
  expect_error(mp(attrs({{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1})}})), "pads has 2 values, expected 4");
  expect_error(mp(attrs({{"kernel_shape", ints({3, 3})}, {"pads", ints({0, 0, -1, 0})}})), "pads[2] = -1 must be >= 0");
  expect_error(mp(attrs({{"kernel_shape", ints({3, 3})}, {"storage_order", int64_t(2)}})), "storage_order must be 0 or 1");
  expect_error(mp(attrs({{"kernel_shape", ints({3, 3})}, {"ceil_mode", int64_t(5)}})), "ceil_mode must be 0 or 1");
  expect_error(mp(attrs({{"kernel_shape", ints({6, 3})}})), "spatial axis 0: input size 5 with pads 0+0 is smaller");
  expect_error(mp(attrs({{"kernel_shape", ints({3, 3})}, {"dilations", ints({3, 1})}})), "smaller than the dilated kernel 7");
  expect_error(mp(attrs({{"kernel_shape", std::vector<int64_t>{}}})), "kernel_shape must have one value per spatial axis");
  expect_error(infer_op(Op::AveragePool, {{DType::f32, Shape({1, 1, 5})}},
                        attrs({{"kernel_shape", ints({3})}, {"count_include_pad", int64_t(3)}})),
               "count_include_pad must be 0 or 1");
  expect_error(infer_op(Op::AveragePool, {{DType::i8, Shape({1, 1, 5})}}, attrs({{"kernel_shape", ints({3})}})),
               "X has dtype i8");
  expect_error(run_op(Op::MaxPool, {f32({1, 1, 2}, {1, 2})}, attrs({{"kernel_shape", ints({3})}})),
               "node 'test' (MaxPool): spatial axis 0: input size 2");
}

// --- LpPool -------------------------------------------------------------------------

TEST(LpPool, PowersAndPadding) {
  Tensor x = f32({1, 1, 3}, {1, -2, 2});
  auto p1 = run_op(Op::LpPool, {x}, attrs({{"kernel_shape", ints({2})}, {"p", int64_t(1)}}));
  ASSERT_TRUE(p1.ok()) << p1.status().to_string();
  expect_near((*p1)[0], {3, 4});
  auto p3 = run_op(Op::LpPool, {x}, attrs({{"kernel_shape", ints({2})}, {"p", int64_t(3)}}));
  ASSERT_TRUE(p3.ok()) << p3.status().to_string();
  expect_near((*p3)[0], {std::cbrt(9.0), std::cbrt(16.0)});
  // Padding contributes zeros: windows [pad, 1], [1, -2], [-2, 2], [2, pad].
  auto padded = run_op(Op::LpPool, {x}, attrs({{"kernel_shape", ints({2})}, {"pads", ints({1, 1})}}));
  ASSERT_TRUE(padded.ok()) << padded.status().to_string();
  expect_near((*padded)[0], {1, std::sqrt(5.0), std::sqrt(8.0), 2});
  expect_error(run_op(Op::LpPool, {x}, attrs({{"kernel_shape", ints({2})}, {"p", int64_t(0)}})), "p must be >= 1");
}

}  // namespace
}  // namespace ferry
