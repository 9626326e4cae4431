#include "planner/memory_plan.h"

#include <gtest/gtest.h>

#include <random>

namespace ferry {
namespace {

TEST(MemoryPlan, ReusesMemoryOfDeadBuffers) {
  // The header's example: a and c never live together, b overlaps both.
  std::vector<BufferLifetime> b = {{64, 0, 1}, {32, 1, 2}, {64, 2, 3}};
  MemoryPlan p = plan_memory(b, 32);
  EXPECT_TRUE(plan_is_valid(b, p));
  EXPECT_EQ(p.offsets[0], p.offsets[2]);
  EXPECT_EQ(p.peak, 96u);
  EXPECT_EQ(p.naive, 160u);
}

TEST(MemoryPlan, BestFitTakesTheSmallestGap) {
  // Live at step 5: a [0,64) and c [96,128) leave a 32-byte gap; d (32 B) goes there.
  std::vector<BufferLifetime> b = {{64, 0, 9}, {32, 0, 1}, {32, 0, 9}, {32, 5, 6}};
  MemoryPlan p = plan_memory(b, 32);
  ASSERT_TRUE(plan_is_valid(b, p));
  EXPECT_EQ(p.peak, 128u);
  EXPECT_EQ(p.offsets[3], p.offsets[1]);  // reuses the dead 32-byte buffer's place
}

TEST(MemoryPlan, RandomLifetimesNeverOverlapAndNeverExceedNaive) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BufferLifetime> b;
    int n = 1 + int(rng() % 60);
    for (int i = 0; i < n; ++i) {
      int64_t first = rng() % 40, len = rng() % 10;
      b.push_back({size_t(1 + rng() % 5000), first, first + len});
    }
    MemoryPlan p = plan_memory(b, 64);
    ASSERT_TRUE(plan_is_valid(b, p)) << "trial " << trial;
    EXPECT_LE(p.peak, p.naive);
    for (size_t off : p.offsets) EXPECT_EQ(off % 64, 0u);
    // Lower bound: at any step, the live bytes must fit.
    for (int64_t t = 0; t < 50; ++t) {
      size_t live = 0;
      for (const auto& x : b)
        if (x.first <= t && t <= x.last) live += x.bytes;
      EXPECT_GE(p.peak, live);
    }
  }
}

TEST(MemoryPlan, ValidityCheckCatchesOverlap) {
  std::vector<BufferLifetime> b = {{64, 0, 2}, {64, 1, 3}};
  MemoryPlan bad{{0, 32}, 96, 128};
  EXPECT_FALSE(plan_is_valid(b, bad));
  MemoryPlan good{{0, 64}, 128, 128};
  EXPECT_TRUE(plan_is_valid(b, good));
}

}  // namespace
}  // namespace ferry
