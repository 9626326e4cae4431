// RotaryEmbedding: hand-checked rotations (halves, interleaved, partial) and errors.
#include "linalg_test_util.h"

namespace ferry {
namespace {

using namespace ferry::testing;

TEST(RotaryEmbedding, HalvesAndInterleaved) {
  // cos = (0, 1), sin = (1, 0) at position 0; x = (1, 2, 3, 4).
  //   halves: x1 = (1, 2), x2 = (3, 4): (cos x1 - sin x2, sin x1 + cos x2) = (-3, 2 | 1, 4)
  //   interleaved: pairs (1, 2), (3, 4): (0*1 - 1*2, 1*1 + 0*2), (1*3 - 0, 0 + 1*4) = (-2, 1), (3, 4)
  Tensor x = f32({1, 1, 1, 4}, {1, 2, 3, 4}), cs = f32({2, 2}, {0, 1, 9, 9}), sn = f32({2, 2}, {1, 0, 9, 9});
  Tensor pos = i64({1, 1}, {0});
  auto halves = run_op(Op::RotaryEmbedding, {x, cs, sn, pos});
  ASSERT_TRUE(halves.ok()) << halves.status().to_string();
  expect_near((*halves)[0], {-3, 2, 1, 4});
  auto inter = run_op(Op::RotaryEmbedding, {x, cs, sn, pos}, attrs({{"interleaved", int64_t(1)}}));
  ASSERT_TRUE(inter.ok()) << inter.status().to_string();
  expect_near((*inter)[0], {-2, 1, 3, 4});
  // rotary_embedding_dim 2 rotates (1, 2) only: caches [max_pos, 1].
  auto part = run_op(Op::RotaryEmbedding, {x, f32({1, 1}, {0}), f32({1, 1}, {1}), pos},
                     attrs({{"rotary_embedding_dim", int64_t(2)}}));
  ASSERT_TRUE(part.ok()) << part.status().to_string();
  expect_near((*part)[0], {-2, 1, 3, 4});
}

TEST(RotaryEmbedding, Errors) {
  Tensor x3 = f32({1, 1, 4}, {1, 2, 3, 4}), c = f32({1, 1, 2}, {1, 1}), s = f32({1, 1, 2}, {0, 0});
  expect_error(run_op(Op::RotaryEmbedding, {x3, c, s}), "needs the num_heads attribute");
  expect_error(run_op(Op::RotaryEmbedding, {f32({1, 1, 1, 4}, {1, 2, 3, 4}), f32({1, 2}, {1, 1}),
                                            f32({1, 2}, {0, 0}), i64({1, 1}, {1})}),
               "position id 1 is outside the caches' [0, 1)");
  expect_error(infer_op(Op::RotaryEmbedding, {{DType::f32, shape_of({1, 2, 3, 6})}, {DType::f32, shape_of({8, 3})},
                                              {DType::f32, shape_of({8, 3})}},
                        attrs({{"rotary_embedding_dim", int64_t(3)}})),
               "must be even");
}

}  // namespace
}  // namespace ferry
