#include "frontends/onnx/onnx_tensor.h"

#include <gtest/gtest.h>

#include "onnx_test_util.h"

namespace ferry::onnx_import {
namespace {

using TP = onnx::TensorProto;

TP make(int type, std::vector<int64_t> dims) {
  TP t;
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

TEST(OnnxTensor, FloatDataAndRawData) {
  TP t = make(TP::FLOAT, {2, 2});
  for (float v : {1.0f, -2.0f, 3.5f, 0.25f}) t.add_float_data(v);
  auto r = tensor_from_proto(t, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->type_string(), "f32[2,2]");
  EXPECT_EQ(r->to_double_vector(), (std::vector<double>{1.0, -2.0, 3.5, 0.25}));

  TP raw = make(TP::INT64, {3});
  int64_t vals[3] = {7, -8, 1LL << 40};
  raw.set_raw_data(std::string(reinterpret_cast<const char*>(vals), sizeof vals));
  auto r2 = tensor_from_proto(raw, nullptr);
  ASSERT_TRUE(r2.ok()) << r2.status().to_string();
  EXPECT_EQ(r2->to_int_vector(), (std::vector<int64_t>{7, -8, 1LL << 40}));
}

TEST(OnnxTensor, EveryTypedField) {
  TP i32 = make(TP::INT32, {2});
  i32.add_int32_data(-5);
  i32.add_int32_data(6);
  EXPECT_EQ(tensor_from_proto(i32, nullptr)->to_int_vector(), (std::vector<int64_t>{-5, 6}));

  TP i8 = make(TP::INT8, {2});
  i8.add_int32_data(-128);
  i8.add_int32_data(127);
  auto r8 = tensor_from_proto(i8, nullptr);
  ASSERT_TRUE(r8.ok());
  EXPECT_EQ(r8->dtype(), DType::i8);
  EXPECT_EQ(r8->to_int_vector(), (std::vector<int64_t>{-128, 127}));

  TP u16 = make(TP::UINT16, {1});
  u16.add_int32_data(65535);
  EXPECT_EQ(tensor_from_proto(u16, nullptr)->get_int(0), 65535);

  TP b = make(TP::BOOL, {3});
  for (int v : {1, 0, 1}) b.add_int32_data(v);
  auto rb = tensor_from_proto(b, nullptr);
  ASSERT_TRUE(rb.ok());
  EXPECT_EQ(rb->dtype(), DType::boolean);
  EXPECT_EQ(rb->to_int_vector(), (std::vector<int64_t>{1, 0, 1}));

  TP d = make(TP::DOUBLE, {1});
  d.add_double_data(0.1);
  EXPECT_EQ(tensor_from_proto(d, nullptr)->get_double(0), 0.1);

  TP u64 = make(TP::UINT64, {1});
  u64.add_uint64_data(~uint64_t(0));
  EXPECT_EQ(tensor_from_proto(u64, nullptr)->data<uint64_t>()[0], ~uint64_t(0));

  TP u32 = make(TP::UINT32, {1});
  u32.add_uint64_data(4000000000u);
  EXPECT_EQ(tensor_from_proto(u32, nullptr)->data<uint32_t>()[0], 4000000000u);

  TP scalar = make(TP::INT64, {});
  scalar.add_int64_data(42);
  auto rs = tensor_from_proto(scalar, nullptr);
  ASSERT_TRUE(rs.ok());
  EXPECT_EQ(rs->rank(), 0);
  EXPECT_EQ(rs->get_int(0), 42);
}

TEST(OnnxTensor, Float16AndBfloat16BitPatterns) {
  TP h = make(TP::FLOAT16, {3});
  for (int bits : {0x3C00, 0xC000, 0x3800}) h.add_int32_data(bits);  // 1, -2, 0.5
  auto r = tensor_from_proto(h, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->dtype(), DType::f16);
  EXPECT_EQ(r->to_double_vector(), (std::vector<double>{1.0, -2.0, 0.5}));

  TP hraw = make(TP::FLOAT16, {2});
  uint16_t bits[2] = {0x4200, 0x3400};  // 3, 0.25
  hraw.set_raw_data(std::string(reinterpret_cast<const char*>(bits), sizeof bits));
  EXPECT_EQ(tensor_from_proto(hraw, nullptr)->to_double_vector(), (std::vector<double>{3.0, 0.25}));

  TP bf = make(TP::BFLOAT16, {1});
  bf.add_int32_data(0x3FC0);  // 1.5
  auto rbf = tensor_from_proto(bf, nullptr);
  ASSERT_TRUE(rbf.ok());
  EXPECT_EQ(rbf->dtype(), DType::bf16);
  EXPECT_EQ(rbf->get_double(0), 1.5);
}

TEST(OnnxTensor, CountMismatchesAreRejected) {
  TP t = make(TP::FLOAT, {2, 3});
  for (int i = 0; i < 5; ++i) t.add_float_data(1.0f);
  auto r = tensor_from_proto(t, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_CONTAINS(r.status().message(), "float_data has 5 values, expected 6 for f32[2,3]");

  TP raw = make(TP::FLOAT, {4});
  raw.set_raw_data(std::string(12, '\0'));
  auto r2 = tensor_from_proto(raw, nullptr);
  ASSERT_FALSE(r2.ok());
  EXPECT_CONTAINS(r2.status().message(), "raw_data has 12 bytes, expected 16 for f32[4]");

  TP none = make(TP::INT64, {2});
  auto r3 = tensor_from_proto(none, nullptr);
  ASSERT_FALSE(r3.ok());
  EXPECT_CONTAINS(r3.status().message(), "has no data (expected 2 elements");

  TP both = make(TP::FLOAT, {1});
  both.add_float_data(1.0f);
  both.set_raw_data(std::string(4, '\0'));
  EXPECT_CONTAINS(tensor_from_proto(both, nullptr).status().message(), "both raw_data and a typed data field");

  TP range = make(TP::INT8, {1});
  range.add_int32_data(300);
  EXPECT_CONTAINS(tensor_from_proto(range, nullptr).status().message(), "int32_data[0] = 300 does not fit i8");

  TP empty = make(TP::FLOAT, {0, 5});
  auto re = tensor_from_proto(empty, nullptr);
  ASSERT_TRUE(re.ok()) << re.status().to_string();
  EXPECT_EQ(re->numel(), 0);
}

TEST(OnnxTensor, AbsurdDimsAreRejectedWithoutAllocating) {
  TP neg = make(TP::FLOAT, {2, -1});
  EXPECT_CONTAINS(tensor_from_proto(neg, nullptr).status().message(), "dims [2,-1] are negative or too large");

  TP huge = make(TP::FLOAT, {1LL << 30, 1LL << 30, 1LL << 30});
  auto r = tensor_from_proto(huge, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);

  // 32 GiB claimed with no data: the size check runs before any allocation.
  TP big = make(TP::DOUBLE, {1LL << 32});
  auto rb = tensor_from_proto(big, nullptr);
  ASSERT_FALSE(rb.ok());
  EXPECT_CONTAINS(rb.status().message(), "has no data (expected 4294967296 elements for f64[4294967296])");
  big.set_raw_data(std::string(8, '\0'));
  EXPECT_CONTAINS(tensor_from_proto(big, nullptr).status().message(), "raw_data has 8 bytes, expected 34359738368");
}

TEST(OnnxTensor, UnsupportedDataTypes) {
  auto s = tensor_from_proto(make(TP::STRING, {1}), nullptr);
  EXPECT_EQ(s.status().code(), StatusCode::kUnsupported);
  EXPECT_CONTAINS(s.status().message(), "data type STRING (8) is not supported");
  // Newer than the system schema: still named.
  auto f8 = tensor_from_proto(make(17, {1}), nullptr);
  EXPECT_CONTAINS(f8.status().message(), "data type FLOAT8E4M3FN (17) is not supported");
  auto i4 = tensor_from_proto(make(22, {1}), nullptr);
  EXPECT_CONTAINS(i4.status().message(), "data type INT4 (22) is not supported");
  auto bogus = tensor_from_proto(make(99, {1}), nullptr);
  EXPECT_EQ(bogus.status().code(), StatusCode::kInvalidModel);
  EXPECT_CONTAINS(bogus.status().message(), "unknown data type 99");
}

TEST(OnnxTensor, InitializerErrorsNameTheTensor) {
  using namespace onnx_test;
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", TP::FLOAT, {int64_t(2)});
  TP w = f32_tensor("weights", {3}, {1, 2});
  add_initializer(m, w);
  add_node(m, "Add", {"x", "weights"}, {"y"}, "add");
  add_output(m, "y");
  auto g = import_model(m);
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.status().message(), "initializer 'weights': float_data has 2 values, expected 3");
}

}  // namespace
}  // namespace ferry::onnx_import
