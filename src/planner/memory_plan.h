// planner/memory_plan.h — best-fit arena planning from buffer lifetimes.
//
// Each buffer is live over the steps [first, last] (inclusive). Two buffers
// whose lifetimes overlap get disjoint byte ranges; the plan packs them into
// one arena. Buffers are placed largest first (ties: earlier first); each goes
// into the smallest gap, among the buffers already placed that overlap it in
// time, that is big enough (best fit), else above the highest of them.
//
//   buffers  a:[0,1] 64B   b:[1,2] 32B   c:[2,3] 64B
//   plan     a@0  c@0  b@64   peak 96B  (naive sum 160B)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ferry {

struct BufferLifetime {
  size_t bytes = 0;
  int64_t first = 0;  ///< first step that writes or reads it
  int64_t last = 0;   ///< last step that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<size_t> offsets;  ///< per buffer, aligned to `alignment`
  size_t peak = 0;              ///< arena bytes
  size_t naive = 0;             ///< sum of aligned sizes (one allocation per buffer)
};

/// Plans `buffers` into one arena; every offset and size is rounded up to `alignment`.
MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers, size_t alignment = 64);

/// True when no two buffers with overlapping lifetimes overlap in bytes (for tests and debug checks).
bool plan_is_valid(const std::vector<BufferLifetime>& buffers, const MemoryPlan& plan);

}  // namespace ferry
