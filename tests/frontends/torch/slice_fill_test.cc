#include "frontends/torch/slice_fill.h"

#include <gtest/gtest.h>

namespace ferry::torch_import {
namespace {

std::vector<int> mask_values(const Tensor& t) {
  std::vector<int> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get_double(i) != 0 ? 1 : 0);
  return out;
}

TEST(SliceFill, ChainOfSlicesWithNegativeBoundsAndSteps) {
  // m[-3:, ::2] of a 4x5 tensor: rows 1..3, columns 0, 2, 4.
  auto m = slice_region_mask({4, 5}, {{"m", 0, -3, INT64_MAX, 1}, {"s", 1, 0, INT64_MAX, 2}});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->dtype(), DType::boolean);
  EXPECT_EQ(mask_values(*m), (std::vector<int>{0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1}));
}

TEST(SliceFill, SlicesComposeOnTheSameDim) {
  // x[1:5][1:3:1] on one dim of 6 keeps base indices 2 and 3; bounds past the end clamp.
  auto m = slice_region_mask({6}, {{"x", 0, 1, 5, 1}, {"s", -1, 1, 100, 1}, {"t", 0, 0, 2, 1}});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(mask_values(*m), (std::vector<int>{0, 0, 1, 1, 0, 0}));
}

TEST(SliceFill, OutOfRangeDimOrStepIsRefused) {
  EXPECT_FALSE(slice_region_mask({2, 2}, {{"x", 2, 0, 1, 1}}).has_value());
  EXPECT_FALSE(slice_region_mask({2, 2}, {{"x", 0, 0, 1, 0}}).has_value());
}

TEST(SliceFill, StaticSliceReadsIntegerBoundsOnly) {
  const Json node = Json::parse(R"({"target": "torch.ops.aten.slice.Tensor", "inputs": [
      {"name": "self", "arg": {"as_tensor": {"name": "new_zeros"}}}, {"name": "dim", "arg": {"as_int": 1}},
      {"name": "start", "arg": {"as_int": -4}}, {"name": "end", "arg": {"as_none": true}}]})");
  auto s = static_slice(node);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->self, "new_zeros");
  EXPECT_EQ(s->dim, 1);
  EXPECT_EQ(s->start, -4);
  EXPECT_EQ(s->end, INT64_MAX);
  Json sym = node;
  sym["inputs"][2]["arg"] = Json::parse(R"({"as_sym_int": {"as_name": "sym_size_int"}})");
  EXPECT_FALSE(static_slice(sym).has_value());
}

}  // namespace
}  // namespace ferry::torch_import
