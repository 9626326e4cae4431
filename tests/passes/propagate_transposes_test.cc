// The cases of propagate_transposes that need more than text IR in and out; the
// others are in ir/propagate_transposes.ir.
#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::count;
using testing::stats_of;

PatternStats pattern(const PassStats& stats, const std::string& name) {
  return stats_of(stats, "propagate_transposes", name);
}

TEST(PropagateTransposes, UpSamplingRepeatTakesTheTransposeThroughUnsqueezeTileAndReshape) {
  // Keras UpSampling2D (nearest) on NHWC: repeat each row twice with ExpandDims + Tile + Reshape
  // ([1,H,W,C] -> [1,H,1,W,C] -> [1,H,2,W,C] -> [1,2H,W,C]). The new axis goes into NCHW right
  // after H, so the Reshape merges (H, 2), adjacent in both layouts, and the pair cancels.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%in: f32[1,3,2,4]) -> (%y) {
    %x = Neg(%in) @neg
    %axis = const i64[1] [2]
    %reps = const i64[5] [1, 1, 2, 1, 1]
    %shape = const i64[4] [1, 4, 4, 3]
    %t = Transpose(%x) {perm=[0,2,3,1]} @t
    %u = Unsqueeze(%t, %axis) @expand
    %r = Tile(%u, %reps) @tile
    %m = Reshape(%r, %shape) @merge
    %y = Transpose(%m) {perm=[0,3,1,2]} @back
  })",
                            propagate_transposes, &stats);
  EXPECT_EQ(out,
            "graph g (%in: f32[1,3,2,4]) -> (%y) {\n"
            "  %expand/permuted = const i64[1] [3]\n"
            "  %tile/permuted = const i64[5] [1, 1, 1, 2, 1]\n"
            "  %merge/permuted = const i64[4] [1, 3, 4, 4]\n"
            "  %x = Neg(%in) : f32[1,3,2,4] @neg\n"
            "  %expand_1 = Unsqueeze(%x, %expand/permuted) : f32[1,3,2,1,4] @expand_1\n"
            "  %tile_1 = Tile(%expand_1, %tile/permuted) : f32[1,3,2,2,4] @tile_1\n"
            "  %y = Reshape(%tile_1, %merge/permuted) : f32[1,3,4,4] @merge_1\n"
            "}\n");
  EXPECT_EQ(pattern(stats, "sink_squeeze_unsqueeze").applied, 1);
  EXPECT_EQ(pattern(stats, "sink_tile").applied, 1);
  EXPECT_EQ(pattern(stats, "sink_reshape").applied, 1);
  EXPECT_EQ(pattern(stats, "cancel_pair").applied, 1);
}

TEST(PropagateTransposes, MovedPastValuesRecordTheirLayoutForValidation) {
  // relu' computes in NCHW what relu computed in NHWC: its output is Transpose(relu's) {perm=[0,3,1,2]},
  // recorded as source_perm for per-layer validation.
  auto g = testing::parse_ir(R"(graph g (%in: f32[1,3,2,2]) -> (%y) {
    %x = Neg(%in) @neg
    %t = Transpose(%x) {perm=[0,2,3,1]} @t
    %r = Relu(%t) @relu
    %y = Transpose(%r) {perm=[0,3,1,2]} @back
  })");
  PassStats stats;
  ASSERT_TRUE(propagate_transposes(*g, stats).ok());
  const Value* y = g->outputs()[0];
  ASSERT_NE(y->producer(), nullptr);
  EXPECT_EQ(y->producer()->op(), Op::Relu);
  EXPECT_EQ(y->source_perm(), (std::vector<int64_t>{0, 3, 1, 2}));
  EXPECT_TRUE(g->find_value("x")->source_perm().empty());
}

TEST(PropagateTransposes, ReshapeSplittingAnAxisKeepsASymbolicBatch) {
  // [N,H,W,C] -> [N,H,W,2,C/2] with s = [-1, ...]: the batch group keeps s's -1 (N), the split
  // group (C -> 2, C/2) moves in front of H, W; T_Q after it, Q = [0,3,4,1,2], meets its inverse.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%in: f32[N,4,2,3]) -> (%y) {
    %x = Neg(%in) @neg
    %shape = const i64[5] [-1, 2, 3, 2, 2]
    %t = Transpose(%x) {perm=[0,2,3,1]} @t
    %r = Reshape(%t, %shape) {allowzero=1} @split
    %a = Relu(%r) @relu
    %y = Transpose(%a) {perm=[0,3,4,1,2]} @back
  })",
                            propagate_transposes, &stats);
  EXPECT_EQ(count(out, "Transpose("), 0) << out;
  EXPECT_NE(out.find("%split/permuted = const i64[5] [-1, 2, 2, 2, 3]"), std::string::npos) << out;
  EXPECT_NE(out.find("Reshape(%x, %split/permuted) {allowzero=1} : f32[N,2,2,2,3]"), std::string::npos) << out;
  EXPECT_EQ(pattern(stats, "sink_reshape").applied, 1);
}

TEST(PropagateTransposes, MultiConsumerTransposeMovesWhenEveryConsumerCancelsIt) {
  // One NHWC tensor feeds two branches, each ending in the next Conv's Transpose.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%in: f32[1,2,3,3]) -> (%y, %z) {
    %x = Neg(%in) @neg
    %t = Transpose(%x) {perm=[0,2,3,1]} @t
    %a = Relu(%t) @relu
    %b = Sigmoid(%t) @sigmoid
    %c = Mul(%t, %b) @gate
    %y = Transpose(%a) {perm=[0,3,1,2]} @back1
    %z = Transpose(%c) {perm=[0,3,1,2]} @back2
  })",
                            propagate_transposes, &stats);
  EXPECT_EQ(out,
            "graph g (%in: f32[1,2,3,3]) -> (%y, %z) {\n"
            "  %x = Neg(%in) : f32[1,2,3,3] @neg\n"
            "  %y = Relu(%x) : f32[1,2,3,3] @relu_1\n"
            "  %sigmoid_1 = Sigmoid(%x) : f32[1,2,3,3] @sigmoid_1\n"
            "  %z = Mul(%x, %sigmoid_1) : f32[1,2,3,3] @gate_1\n"
            "}\n");
}

TEST(PropagateTransposes, UnitAxisTransposeIntoReshapeGoes) {
  // [N,C,1,1] -> NHWC [N,1,1,C] -> Reshape [N,C]: the Transpose only moves axes of size 1.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[2,3,1,1], %v: f32[2,3,4,1]) -> (%y, %f, %z) {
    %shape = const i64[2] [2, 3]
    %t = Transpose(%x) {perm=[0,2,3,1]} @t
    %y = Reshape(%t, %shape) @reshape
    %f = Flatten(%t) @flatten
    %big = const i64[2] [2, 12]
    %u = Transpose(%v) {perm=[0,2,3,1]} @u
    %z = Reshape(%u, %big) @flatten_nhwc
  })",
                            propagate_transposes, &stats);
  EXPECT_NE(out.find("%y = Reshape(%x, %shape)"), std::string::npos) << out;
  EXPECT_NE(out.find("%f = Flatten(%x)"), std::string::npos) << out;
  EXPECT_NE(out.find("%z = Reshape(%u, %big)"), std::string::npos) << out;
  PatternStats s = pattern(stats, "absorb_into_reshape");
  EXPECT_EQ(s.applied, 2);
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason,
            "Reshape does not commute with the permutation: the Transpose moves axes that are not known to be of size 1");
  EXPECT_EQ(s.near_misses[0].source_nodes, (std::vector<std::string>{"u", "flatten_nhwc"}));
}

TEST(PropagateTransposes, PoolingTakesOnlyPermutationsOfSpatialAxes) {
  // H and W swapped: the pool's per-axis attributes swap too. An NHWC perm cannot pass.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%in: f32[1,2,6,7], %z: f32[1,5,5,2]) -> (%y, %v) {
    %x = Neg(%in) @neg
    %t = Transpose(%x) {perm=[0,1,3,2]} @t
    %p = MaxPool(%t) {kernel_shape=[2,3], pads=[0,1,0,1], strides=[1,2]} @pool
    %g = GlobalAveragePool(%p) @gap
    %y = Transpose(%g) {perm=[0,1,3,2]} @back
    %zc = Neg(%z) @neg2
    %u = Transpose(%zc) {perm=[0,3,1,2]} @to_nchw
    %w = AveragePool(%u) {kernel_shape=[2,2]} @avg
    %v = Transpose(%w) {perm=[0,2,3,1]} @to_nhwc
  })",
                            propagate_transposes, &stats);
  EXPECT_NE(out.find("MaxPool(%x) {kernel_shape=[3,2], pads=[1,0,1,0], strides=[2,1]}"), std::string::npos) << out;
  EXPECT_NE(out.find("%y = GlobalAveragePool("), std::string::npos) << out;
  EXPECT_EQ(count(out, "Transpose("), 2) << out;
  PatternStats s = pattern(stats, "sink_pool");
  EXPECT_EQ(s.applied, 2);
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "pooling needs N and C in place: the permutation moves them");
}

TEST(PropagateTransposes, ResidualBlocksReachAFixpoint) {
  // Two NHWC residual blocks; the shortcut tensor feeds both the next conv and the Add.
  const std::string text = R"(graph g (%x: f32[1,2,3,3]) -> (%y) {
    %w = const f32[2,2,1,1] [1, -1, 0.5, 2]
    %s = const f32[2] [0.5, 2]
    %a0 = Transpose(%x) {perm=[0,2,3,1]} @a0
    %b0 = Transpose(%a0) {perm=[0,3,1,2]} @b0
    %c1 = Conv(%b0, %w) @conv1
    %d1 = Transpose(%c1) {perm=[0,2,3,1]} @d1
    %m1 = Mul(%d1, %s) @bn1
    %r1 = Add(%m1, %a0) @res1
    %e1 = Relu(%r1) @relu1
    %b1 = Transpose(%e1) {perm=[0,3,1,2]} @b1
    %c2 = Conv(%b1, %w) @conv2
    %d2 = Transpose(%c2) {perm=[0,2,3,1]} @d2
    %r2 = Add(%d2, %e1) @res2
    %y = Transpose(%r2) {perm=[0,3,1,2]} @out
  })";
  PassStats stats;
  std::string out = rewrite(text, propagate_transposes, &stats);
  EXPECT_EQ(count(out, "Transpose("), 0) << out;
  // Running again changes nothing: the first run reached the fixpoint.
  PassStats again;
  EXPECT_EQ(rewrite(out, propagate_transposes, &again), out);
  for (const auto& [name, s] : again["propagate_transposes"]) EXPECT_EQ(s.applied, 0) << name;
}

TEST(PropagateTransposes, FlattenDenseHeadTakesTheTransposeIntoItsWeights) {
  // Keras Flatten -> Dense on NHWC features: the rows of W are reordered to NCHW order.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%in: f32[2,3,2,2], %v: f32[2,2,3,1]) -> (%y, %z) {
    %x = Neg(%in) @neg
    %s = const i64[2] [0, -1]
    %w = const f32[12,2] [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]
    %w6 = const f32[6,1] [1, 2, 3, 4, 5, 6]
    %t = Transpose(%x) {perm=[0,2,3,1]} @t
    %r = Relu(%t) @relu
    %f = Reshape(%r, %s) @flatten
    %y = MatMul(%f, %w) @dense
    %u = Transpose(%v) {perm=[0,2,1,3]} @u
    %fl = Flatten(%u) @flatten2
    %z = MatMul(%fl, %w6) @dense2
  })",
                            propagate_transposes, &stats);
  EXPECT_EQ(count(out, "Transpose("), 0) << out;
  // Row (h, w, c) of W moves to row (c, h, w): c-major, so rows 0, 3, 6, 9 come first.
  EXPECT_NE(out.find("%dense/permuted = const f32[12,2] [1, 2, 7, 8, 13, 14, 19, 20, 3, 4, 9, 10, 15, 16, 21, 22, "
                     "5, 6, 11, 12, 17, 18, 23, 24]"),
            std::string::npos)
      << out;
  EXPECT_EQ(pattern(stats, "absorb_into_dense").applied, 2);
  EXPECT_EQ(pattern(stats, "sink_unary").applied, 1);
}

TEST(PropagateTransposes, GraphInputOperandGetsItsTransposeAtTheBoundary) {
  // The first block's residual Add reads the NHWC graph input itself: it gets
  // T_Pinv at the input, so the block's transposes still cancel with the next conv's.
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[1,3,3,2]) -> (%y) {
    %w = const f32[2,2,1,1] [1, -1, 0.5, 2]
    %a = Transpose(%x) {perm=[0,3,1,2]} @a
    %c1 = Conv(%a, %w) @conv1
    %d1 = Transpose(%c1) {perm=[0,2,3,1]} @d1
    %r1 = Add(%d1, %x) @res1
    %e1 = Relu(%r1) @relu1
    %b1 = Transpose(%e1) {perm=[0,3,1,2]} @b1
    %y = Conv(%b1, %w) @conv2
  })",
                            propagate_transposes, &stats);
  EXPECT_EQ(out,
            "graph g (%x: f32[1,3,3,2]) -> (%y) {\n"
            "  %w = const f32[2,2,1,1] [1, -1, 0.5, 2]\n"
            "  %a = Transpose(%x) {perm=[0,3,1,2]} : f32[1,2,3,3] @a\n"
            "  %c1 = Conv(%a, %w) : f32[1,2,3,3] @conv1\n"
            "  %x/transpose = Transpose(%x) {perm=[0,3,1,2]} : f32[1,2,3,3] @x/transpose\n"
            "  %res1_1 = Add(%c1, %x/transpose) : f32[1,2,3,3] @res1_1\n"
            "  %relu1_1 = Relu(%res1_1) : f32[1,2,3,3] @relu1_1\n"
            "  %y = Conv(%relu1_1, %w) : f32[1,2,3,3] @conv2\n"
            "}\n");
}

TEST(PropagateTransposesNearMiss, GraphInputTransposeWithNothingInExchangeStays) {
  // Moving T(c) past the Add would need T_Pinv on %x, T(c) also feeds an output,
  // and nothing downstream cancels: two Transposes instead of one.
  PassStats stats;
  rewrite(R"(graph g (%x: f32[3,2], %in: f32[2,3]) -> (%t, %y) {
    %c = Neg(%in) @neg
    %t = Transpose(%c) {perm=[1,0]} @t
    %y = Add(%t, %x) @add
  })",
          propagate_transposes, &stats);
  ASSERT_EQ(pattern(stats, "sink_elementwise").near_misses.size(), 1u);
  EXPECT_EQ(pattern(stats, "sink_elementwise").near_misses[0].reason,
            "graph input 'x' would need a Transpose of its own, and the move removes none in exchange");
}

TEST(PropagateTransposesNearMiss, OperandNeitherConstantNorTransposedStops) {
  PassStats stats;
  std::string text = R"(graph g (%x: f32[1,2,3,4], %in: f32[1,3,4,2]) -> (%y) {
    %n = Neg(%in) @neg
    %c = Neg(%x) @neg2
    %t = Transpose(%c) {perm=[0,2,3,1]} @t
    %a = Add(%t, %n) @add
    %y = Transpose(%a) {perm=[0,3,1,2]} @back
  })";
  std::string out = rewrite(text, propagate_transposes, &stats);
  EXPECT_EQ(count(out, "Transpose("), 2) << out;
  PatternStats s = pattern(stats, "sink_elementwise");
  EXPECT_EQ(s.applied, 0);
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "operand 'n' is neither a constant nor transposed the same way");
  EXPECT_EQ(s.near_misses[0].source_nodes, (std::vector<std::string>{"t", "add"}));
}

TEST(PropagateTransposesNearMiss, DifferentPermutationsAndNonConstantAxesStop) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%in: f32[2,2,2], %axes: i64[1]) -> (%y, %z) {
    %x = Neg(%in) @neg
    %a = Transpose(%x) {perm=[1,2,0]} @a
    %b = Transpose(%x) {perm=[2,0,1]} @b
    %s = Add(%a, %b) @add
    %y = Transpose(%s) {perm=[2,0,1]} @back
    %r = ReduceSum(%a, %axes) @reduce
    %z = Transpose(%r) {perm=[2,0,1]} @back2
  })",
                            propagate_transposes, &stats);
  EXPECT_EQ(pattern(stats, "sink_elementwise").near_misses.at(0).reason,
            "operands are transposed by different permutations");
  EXPECT_EQ(pattern(stats, "sink_reduce").near_misses.at(0).reason, "axes is not a constant");
}

TEST(PropagateTransposesNearMiss, ConstantOfHigherRankStops) {
  PassStats stats;
  rewrite(R"(graph g (%in: f32[2,3]) -> (%y) {
    %x = Neg(%in) @neg
    %c = const f32[2,3,2] splat(1)
    %t = Transpose(%x) {perm=[1,0]} @t
    %a = Add(%t, %c) @add
    %y = Transpose(%a) {perm=[0,2,1]} @back
  })",
          propagate_transposes, &stats);
  ASSERT_EQ(pattern(stats, "sink_elementwise").near_misses.size(), 1u);
  EXPECT_EQ(pattern(stats, "sink_elementwise").near_misses[0].reason,
            "constant 'c' has more dims than the transposed operand");
}

TEST(PropagateTransposesNearMiss, NoTransposeDownstreamMeansNoMove) {
  // Moving the Transpose past Relu would remove none: it stays where the graph put it.
  PassStats stats;
  const std::string text =
      "graph g (%in: f32[2,3]) -> (%y) {\n"
      "  %x = Neg(%in) : f32[2,3] @neg\n"
      "  %t = Transpose(%x) {perm=[1,0]} : f32[3,2] @t\n"
      "  %y = Relu(%t) : f32[3,2] @relu\n"
      "}\n";
  EXPECT_EQ(rewrite(text, propagate_transposes, &stats), text);
  ASSERT_EQ(pattern(stats, "sink_unary").near_misses.size(), 1u);
  EXPECT_EQ(pattern(stats, "sink_unary").near_misses[0].reason,
            "no Transpose downstream to cancel with: moving it past the op would not remove any");
}

TEST(PropagateTransposesNearMiss, ReshapeMergingAxesThePermutationReordersStops) {
  // NHWC [1,2,2,3] flattened to [1,4,3] (H, W merged) keeps H, W adjacent in NCHW too: it moves.
  // Merging W and C does not: in NCHW they are apart, so the Transpose stays before the Reshape.
  PassStats stats;
  const std::string text =
      "graph g (%in: f32[1,3,2,2]) -> (%y) {\n"
      "  %shape = const i64[3] [1, 2, 6]\n"
      "  %x = Neg(%in) : f32[1,3,2,2] @neg\n"
      "  %t = Transpose(%x) {perm=[0,2,3,1]} : f32[1,2,2,3] @t\n"
      "  %r = Reshape(%t, %shape) : f32[1,2,6] @merge\n"
      "  %y = Transpose(%r) {perm=[0,2,1]} : f32[1,6,2] @back\n"
      "}\n";
  EXPECT_EQ(rewrite(text, propagate_transposes, &stats), text);
  const PatternStats s = pattern(stats, "sink_reshape");
  EXPECT_EQ(s.applied, 0);
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "the Reshape merges axes the permutation reorders");
  EXPECT_EQ(s.near_misses[0].source_nodes, (std::vector<std::string>{"t", "merge"}));
}

TEST(PropagateTransposesNearMiss, CancelThatWouldRenameAnOutputStays) {
  PassStats stats;
  const std::string text =
      "graph g (%x: f32[2,3]) -> (%y) {\n"
      "  %t = Transpose(%x) {perm=[1,0]} : f32[3,2] @t\n"
      "  %y = Transpose(%t) {perm=[1,0]} : f32[2,3] @u\n"
      "}\n";
  EXPECT_EQ(rewrite(text, propagate_transposes, &stats), text);
  EXPECT_EQ(pattern(stats, "cancel_pair").near_misses.size(), 1u);
  EXPECT_EQ(pattern(stats, "merge_pair").applied, 0);
}

TEST(PropagateTransposes, NchwGraphsWithoutTransposesAreUntouched) {
  PassStats stats;
  const std::string text =
      "graph g (%x: f32[1,3,4,4]) -> (%y) {\n"
      "  %w = const f32[2,3,1,1] [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]\n"
      "  %b = const f32[2,1,1] [1, 2]\n"
      "  %c = Conv(%x, %w) : f32[1,2,4,4] @conv\n"
      "  %a = Add(%c, %b) : f32[1,2,4,4] @bias\n"
      "  %y = Relu(%a) : f32[1,2,4,4] @relu\n"
      "}\n";
  EXPECT_EQ(rewrite(text, propagate_transposes, &stats), text);
  for (const auto& [name, s] : stats["propagate_transposes"]) EXPECT_EQ(s.matched, 0) << name;
}

TEST(PropagateTransposes, TransposeOfAConstantFolds) {
  std::string out = rewrite(R"(graph g (%x: f32[3,2]) -> (%y) {
    %c = const f32[2,3] [1, 2, 3, 4, 5, 6]
    %t = Transpose(%c) {perm=[1,0]} @t
    %y = Add(%x, %t) @add
  })",
                            propagate_transposes);
  EXPECT_NE(out.find("%t = const f32[3,2] [1, 4, 2, 5, 3, 6]"), std::string::npos) << out;
}

}  // namespace
}  // namespace ferry
