// The rewrites are in ir/canonicalize_gemm.ir; provenance needs the graph itself.
#include <gtest/gtest.h>

#include "passes/passes.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

TEST(CanonicalizeGemm, ProvenanceIsTheGemm) {
  auto g = testing::parse_ir(R"(graph g (%a: f32[2,3], %b: f32[3,4]) -> (%y) {
    %y = Gemm(%a, %b) @gemm <- ["fc1"]
  })");
  PassStats stats;
  ASSERT_TRUE(canonicalize_gemm(*g, stats).ok());
  ASSERT_EQ(g->nodes().size(), 1u);
  EXPECT_EQ(g->nodes()[0]->provenance(), std::vector<std::string>{"fc1"});
}

}  // namespace
}  // namespace ferry
