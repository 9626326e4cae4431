// fold_constants with a size limit other than the pipeline's; the other cases are
// text IR in and out, in ir/fold_constants.ir.
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "passes/passes.h"

namespace ferry {
namespace {

using testing::rewrite;
using testing::stats_of;

TEST(FoldConstantsNearMiss, OutputsOverTheSizeLimitStay) {
  PassStats stats;
  std::string out = rewrite(R"(graph g (%x: f32[1000]) -> (%y) {
    %s = const i64[1] [1000]
    %z = ConstantOfShape(%s) @zeros
    %y = Add(%x, %z) @add
  })",
                            [](Graph& g, PassStats& st) { return fold_constants(g, st, 100); }, &stats);
  EXPECT_NE(out.find("ConstantOfShape"), std::string::npos) << out;
  PatternStats s = stats_of(stats, "fold_constants", "constant_inputs");
  ASSERT_EQ(s.near_misses.size(), 1u);
  EXPECT_EQ(s.near_misses[0].reason, "cannot evaluate: output would be 4000 bytes, over the folding limit of 100");
}

}  // namespace
}  // namespace ferry
