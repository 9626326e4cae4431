#include "planner/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace ferry {
namespace {

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

bool lifetimes_overlap(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers, size_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });

  struct Placed {
    size_t offset, size;
  };
  std::vector<size_t> placed;  // buffer indices already placed
  std::vector<Placed> live;    // scratch: placed buffers overlapping the current one in time
  for (size_t i : order) {
    const size_t size = round_up(std::max<size_t>(buffers[i].bytes, 1), alignment);
    plan.naive += size;
    live.clear();
    for (size_t j : placed)
      if (lifetimes_overlap(buffers[i], buffers[j]))
        live.push_back({plan.offsets[j], round_up(std::max<size_t>(buffers[j].bytes, 1), alignment)});
    std::sort(live.begin(), live.end(), [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
    // Best fit: the smallest gap between live buffers that holds `size`.
    size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (const Placed& p : live) {
      if (p.offset > cursor) {
        size_t gap = p.offset - cursor;
        if (gap >= size && gap < best_gap) best_gap = gap, best = cursor;
      }
      cursor = std::max(cursor, p.offset + p.size);
    }
    plan.offsets[i] = best != SIZE_MAX ? best : cursor;
    plan.peak = std::max(plan.peak, plan.offsets[i] + size);
    placed.push_back(i);
  }
  return plan;
}

bool plan_is_valid(const std::vector<BufferLifetime>& buffers, const MemoryPlan& plan) {
  if (plan.offsets.size() != buffers.size()) return false;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (plan.offsets[i] + buffers[i].bytes > plan.peak) return false;
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!lifetimes_overlap(buffers[i], buffers[j]) || !buffers[i].bytes || !buffers[j].bytes) continue;
      size_t a0 = plan.offsets[i], a1 = a0 + buffers[i].bytes, b0 = plan.offsets[j], b1 = b0 + buffers[j].bytes;
      if (a0 < b1 && b0 < a1) return false;
    }
  }
  return true;
}

}  // namespace ferry
