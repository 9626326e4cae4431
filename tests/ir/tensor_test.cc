#include "ir/tensor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace ferry {
namespace {

std::string error_of(const Result<Tensor>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().to_string();
}

TEST(Tensor, ZerosIsZeroFilledAndAligned) {
  auto t = Tensor::zeros(DType::f32, {2, 3});
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->numel(), 6);
  EXPECT_EQ(t->nbytes(), 24u);
  EXPECT_EQ(t->rank(), 2);
  EXPECT_EQ(t->dim(1), 3);
  EXPECT_EQ(t->shape(), Shape({2, 3}));
  EXPECT_EQ(t->type_string(), "f32[2,3]");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw()) % 64, 0u);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(t->data<float>()[i], 0.0f);

  auto scalar = Tensor::zeros(DType::i64, {});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->numel(), 1);
  EXPECT_EQ(scalar->type_string(), "i64[]");
  auto empty = Tensor::zeros(DType::f16, {4, 0});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->numel(), 0);
  EXPECT_EQ(empty->nbytes(), 0u);
}

TEST(Tensor, ZerosRejectsAbsurdSizesWithoutAllocating) {
  EXPECT_EQ(error_of(Tensor::zeros(DType::undefined, {2})), "invalid model: tensor with undefined dtype");
  EXPECT_EQ(error_of(Tensor::zeros(DType::f32, {2, -3})),
            "invalid model: tensor dims [2,-3] are negative or too large");
  EXPECT_EQ(error_of(Tensor::zeros(DType::f32, {kMaxDim, kMaxDim})),
            "invalid model: tensor dims [1099511627776,1099511627776] are negative or too large");
  // 2^33 f32 elements = 32 GiB: within kMaxDim elements but over kMaxTensorBytes (16 GiB).
  EXPECT_EQ(error_of(Tensor::zeros(DType::f32, {int64_t(1) << 33})),
            "invalid model: tensor f32[8589934592] exceeds the size limit of 17179869184 bytes");
  EXPECT_FALSE(allocate_buffer(kMaxTensorBytes + 1).ok());
  EXPECT_NE(allocate_buffer(kMaxTensorBytes + 1).status().message().find("exceeds the limit"), std::string::npos);
}

TEST(Tensor, SizeLimitCanBeLoweredAndRestored) {
  ASSERT_EQ(tensor_size_limit(), kMaxTensorBytes);
  set_tensor_size_limit(1024);
  EXPECT_TRUE(Tensor::zeros(DType::f32, {256}).ok());
  EXPECT_EQ(error_of(Tensor::zeros(DType::f32, {257})),
            "invalid model: tensor f32[257] exceeds the size limit of 1024 bytes");
  EXPECT_FALSE(allocate_buffer(1025).ok());
  set_tensor_size_limit(kMaxTensorBytes * 2);  // clamped: never above the hard ceiling
  EXPECT_EQ(tensor_size_limit(), kMaxTensorBytes);
  set_tensor_size_limit(1024);
  set_tensor_size_limit(0);  // 0 restores the default
  EXPECT_EQ(tensor_size_limit(), kMaxTensorBytes);
}

TEST(Tensor, ViewChecksBoundsAndSharesBytes) {
  auto buf = allocate_buffer(16);
  ASSERT_TRUE(buf.ok());
  auto whole = Tensor::view(DType::f32, {4}, *buf);
  ASSERT_TRUE(whole.ok());
  auto tail = Tensor::view(DType::f32, {2}, *buf, 8);
  ASSERT_TRUE(tail.ok());
  tail->data<float>()[0] = 7.0f;
  EXPECT_EQ(whole->data<float>()[2], 7.0f);  // same bytes
  EXPECT_EQ(error_of(Tensor::view(DType::f32, {4}, *buf, 4)),
            "invalid model: tensor f32[4] needs 16 bytes but its data has 12");
  EXPECT_EQ(error_of(Tensor::view(DType::f32, {1}, *buf, 100)),
            "invalid model: tensor f32[1] needs 4 bytes but its data has 0");
  EXPECT_EQ(error_of(Tensor::view(DType::f32, {1}, nullptr)),
            "invalid model: tensor f32[1] needs 4 bytes but its data has 0");
  EXPECT_EQ(error_of(Tensor::view(DType::undefined, {1}, *buf)), "invalid model: tensor with undefined dtype");
  EXPECT_EQ(error_of(Tensor::view(DType::u8, {-1}, *buf)), "invalid model: tensor dims [-1] are negative or too large");
  // A view that ends exactly at the end of the buffer is fine; an empty one past it too.
  EXPECT_TRUE(Tensor::view(DType::u8, {1}, *buf, 15).ok());
  EXPECT_TRUE(Tensor::view(DType::u8, {0}, *buf, 16).ok());
}

TEST(Tensor, ReshapedSharesTheBuffer) {
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto r = t.reshaped({3, 2});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->type_string(), "f32[3,2]");
  EXPECT_EQ(r->raw(), t.raw());
  EXPECT_EQ(r->get_double(5), 6.0);
  EXPECT_EQ(error_of(t.reshaped({4})), "invalid model: cannot reshape f32[2,3] to [4]");
  EXPECT_EQ(error_of(t.reshaped({-2, -3})), "invalid model: cannot reshape f32[2,3] to [-2,-3]");
  EXPECT_TRUE(t.reshaped({6, 1, 1}).ok());
}

TEST(Tensor, CloneIsDeepAndBitEqual) {
  Tensor t = Tensor::from_vector<int32_t>({1, -2, 3}, {3});
  Tensor shared = t;
  Tensor copy = t.clone();
  EXPECT_TRUE(copy.bit_equal(t));
  t.data<int32_t>()[0] = 9;
  EXPECT_EQ(shared.data<int32_t>()[0], 9);  // copies share the buffer
  EXPECT_EQ(copy.data<int32_t>()[0], 1);    // clone does not
  EXPECT_FALSE(copy.bit_equal(t));
  EXPECT_FALSE(copy.bit_equal(Tensor::from_vector<int32_t>({1, -2, 3}, {3, 1})));  // dims differ
  EXPECT_FALSE(Tensor().clone().defined());
  EXPECT_TRUE(Tensor().bit_equal(Tensor()));
}

TEST(Tensor, GetConvertsEveryDtype) {
  Tensor h = Tensor::empty(DType::f16, {2});
  h.data<uint16_t>()[0] = 0x3e00;  // 1.5
  h.data<uint16_t>()[1] = 0xfc00;  // -inf
  EXPECT_EQ(h.get_double(0), 1.5);
  EXPECT_EQ(h.get_double(1), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(h.get_int(0), 1);
  EXPECT_EQ(h.get_int(1), std::numeric_limits<int64_t>::min());
  Tensor b = Tensor::empty(DType::bf16, {1});
  b.data<uint16_t>()[0] = 0xc040;  // -3
  EXPECT_EQ(b.get_double(0), -3.0);
  Tensor u = Tensor::from_vector<uint64_t>({std::numeric_limits<uint64_t>::max(), 5}, {2});
  EXPECT_EQ(u.get_int(0), std::numeric_limits<int64_t>::max());  // saturates into int64
  EXPECT_EQ(u.to_int_vector(), (std::vector<int64_t>{std::numeric_limits<int64_t>::max(), 5}));
  Tensor f = Tensor::from_vector<float>({2.9f, -2.9f, NAN, 1e30f, -1e30f}, {5});
  EXPECT_EQ(f.to_int_vector(), (std::vector<int64_t>{2, -2, 0, std::numeric_limits<int64_t>::max(),
                                                     std::numeric_limits<int64_t>::min()}));
  // Values just below 2^63 are exact in double and must not be clamped early.
  Tensor d = Tensor::from_vector<double>({9.22e18}, {1});
  EXPECT_EQ(d.get_int(0), int64_t(9.22e18));
  Tensor flags = Tensor::from_vector<bool>({true, false}, {2});
  EXPECT_EQ(flags.to_double_vector(), (std::vector<double>{1.0, 0.0}));
  EXPECT_EQ(flags.get_int(0), 1);
  Tensor i8 = Tensor::from_vector<int8_t>({-128}, {1});
  EXPECT_EQ(i8.get_double(0), -128.0);
}

TEST(Tensor, SetRoundsHalvesAndTruncatesIntegers) {
  Tensor h = Tensor::empty(DType::f16, {1});
  h.set_double(0, 0.1);
  EXPECT_EQ(h.data<uint16_t>()[0], 0x2e66);
  Tensor b = Tensor::empty(DType::bf16, {1});
  b.set_double(0, 0.1);
  EXPECT_EQ(b.data<uint16_t>()[0], 0x3dcd);
  Tensor f = Tensor::empty(DType::f32, {1});
  f.set_double(0, 0.1);
  EXPECT_EQ(f.data<float>()[0], 0.1f);
  Tensor i = Tensor::empty(DType::i32, {2});
  i.set_double(0, 2.7);
  i.set_double(1, -2.7);
  EXPECT_EQ(i.to_int_vector(), (std::vector<int64_t>{2, -2}));  // toward zero, like a C++ cast
  Tensor flags = Tensor::empty(DType::boolean, {2});
  flags.set_double(0, 0.5);
  flags.set_double(1, 0.0);
  EXPECT_EQ(flags.to_int_vector(), (std::vector<int64_t>{1, 0}));
}

// A plain cast of an out-of-range double to an integer is undefined behavior;
// set_double defines it: NaN -> 0, out of range -> the type's limit.
TEST(Tensor, SetOutOfRangeIntegersClamp) {
  Tensor i8 = Tensor::empty(DType::i8, {4});
  i8.set_double(0, 300);
  i8.set_double(1, -300);
  i8.set_double(2, NAN);
  i8.set_double(3, -INFINITY);
  EXPECT_EQ(i8.to_int_vector(), (std::vector<int64_t>{127, -128, 0, -128}));
  Tensor u8 = Tensor::empty(DType::u8, {2});
  u8.set_double(0, -5);
  u8.set_double(1, 1e9);
  EXPECT_EQ(u8.to_int_vector(), (std::vector<int64_t>{0, 255}));
  Tensor i64 = Tensor::empty(DType::i64, {2});
  i64.set_double(0, 1e30);
  i64.set_double(1, 9223372036854775808.0);  // 2^63: one past the max
  EXPECT_EQ(i64.data<int64_t>()[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(i64.data<int64_t>()[1], std::numeric_limits<int64_t>::max());
  Tensor u64 = Tensor::empty(DType::u64, {2});
  u64.set_double(0, 1e30);
  u64.set_double(1, 12345.9);
  EXPECT_EQ(u64.data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(u64.data<uint64_t>()[1], 12345u);
}

TEST(Tensor, ScalarAndFromVector) {
  Tensor s = Tensor::scalar<int64_t>(-7);
  EXPECT_EQ(s.type_string(), "i64[]");
  EXPECT_EQ(s.get_int(0), -7);
  Tensor v = Tensor::from_vector({1.5f, 2.5f});
  EXPECT_EQ(v.type_string(), "f32[2]");
  EXPECT_EQ(v.to_double_vector(), (std::vector<double>{1.5, 2.5}));
}

TEST(Tensor, MapFileChecksTheRange) {
  char path[] = "/tmp/ferry_tensor_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const float data[3] = {1.0f, 2.0f, 3.0f};
  ASSERT_EQ(write(fd, data, sizeof data), ssize_t(sizeof data));
  close(fd);
  auto buf = map_file(path, 4, 8);
  ASSERT_TRUE(buf.ok()) << buf.status().to_string();
  EXPECT_EQ((*buf)->size(), 8u);
  auto t = Tensor::view(DType::f32, {2}, *buf);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->to_double_vector(), (std::vector<double>{2.0, 3.0}));
  auto past = map_file(path, 8, 8);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("lies beyond the end of the file (12 bytes)"), std::string::npos)
      << past.status().message();
  EXPECT_FALSE(map_file(path, ~uint64_t(0), 1).ok());  // offset + length must not wrap
  auto none = map_file(path, 12, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->size(), 0u);
  std::remove(path);
  auto missing = map_file(path, 0, 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
}

}  // namespace
}  // namespace ferry
