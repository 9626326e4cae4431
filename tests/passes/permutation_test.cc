#include "passes/permutation.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

TEST(Permutation, ComposeAndInvertFollowTransposeSemantics) {
  // T_Q(T_P(x)).dims[j] = x.dims[P[Q[j]]]
  EXPECT_EQ(compose({0, 3, 1, 2}, {0, 2, 3, 1}), (Perm{0, 1, 2, 3}));
  EXPECT_EQ(compose({1, 0, 2}, {0, 2, 1}), (Perm{1, 2, 0}));
  EXPECT_EQ(invert({0, 2, 3, 1}), (Perm{0, 3, 1, 2}));
  EXPECT_TRUE(is_identity(compose({2, 0, 1}, invert({2, 0, 1}))));
  EXPECT_TRUE(is_identity({}));
  EXPECT_FALSE(is_identity({1, 0}));
}

TEST(Permutation, RemovingAndInsertingAxes) {
  // NHWC = T_[0,2,3,1](NCHW); reducing H, W (y axes 1, 2) leaves [N, C] in order: identity.
  EXPECT_EQ(perm_without_axes({0, 2, 3, 1}, {1, 2}), (Perm{0, 1}));
  // Removing N leaves [H, W, C] of [C, H, W]: perm [1, 2, 0].
  EXPECT_EQ(perm_without_axes({0, 2, 3, 1}, {0}), (Perm{1, 2, 0}));
  EXPECT_EQ(perm_with_inserted_axes({1, 2, 0}, {0}), (Perm{0, 2, 3, 1}));
  EXPECT_EQ(perm_with_inserted_axes({1, 0}, {1, 3}), (Perm{2, 1, 0, 3}));
}

TEST(Permutation, UnitAxisMovesKeepMemoryOrder) {
  EXPECT_TRUE(moves_only_unit_dims({0, 2, 3, 1}, Shape({2, 1, 1, 8})));
  EXPECT_FALSE(moves_only_unit_dims({0, 2, 3, 1}, Shape({2, 4, 4, 8})));
  EXPECT_FALSE(moves_only_unit_dims({1, 0}, Shape(std::vector<Dim>{Dim::symbol("N"), Dim(3)})));
  EXPECT_TRUE(all_unit_dims(Shape({1, 1})));
  EXPECT_FALSE(all_unit_dims(Shape::unknown_rank()));
}

TEST(Permutation, PermuteTensorMovesTheData) {
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor p = permute_tensor(t, {1, 0});
  EXPECT_EQ(p.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(p.to_double_vector(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  Tensor a = align_rank(Tensor::from_vector<float>({1, 2}, {2}), 4);
  EXPECT_EQ(a.dims(), (std::vector<int64_t>{1, 1, 1, 2}));
  EXPECT_EQ(permute_tensor(a, {0, 3, 1, 2}).dims(), (std::vector<int64_t>{1, 2, 1, 1}));
}

}  // namespace
}  // namespace ferry
