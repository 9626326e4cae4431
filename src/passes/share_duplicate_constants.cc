// passes/share_duplicate_constants.cc — one constant per distinct tensor.
//
//   c1, c2 constants with equal dtype, dims and bytes  ==>  every use of c2 reads c1
//
// Preconditions: bitwise equality (so -0.0 != 0.0 and NaNs compare by bits);
// c2 is not a graph output (its name is visible). Common-subexpression
// elimination runs after this, so nodes that differed only in which copy of a
// constant they read become equal.
#include <unordered_map>

#include "passes/passes.h"

namespace ferry {
namespace {

/// FNV-1a over dtype, dims and bytes: cheap, and collisions are settled by bit_equal.
uint64_t tensor_hash(const Tensor& t) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  uint8_t dt = uint8_t(t.dtype());
  mix(&dt, 1);
  for (int64_t d : t.dims()) mix(reinterpret_cast<const uint8_t*>(&d), sizeof d);
  if (t.raw()) mix(t.raw(), t.nbytes());
  return h;
}

}  // namespace

Status share_duplicate_constants(Graph& g, PassStats& stats) {
  PatternStats& ps = stats["share_duplicate_constants"]["duplicate_constant"];
  Rewriter rw(g, &ps);
  std::unordered_map<uint64_t, std::vector<Value*>> seen;
  for (Value* v : g.values()) {
    const Tensor* t = v->constant();
    if (!t || (v->uses().empty() && !g.is_graph_output(v))) continue;
    std::vector<Value*>& bucket = seen[tensor_hash(*t)];
    Value* first = nullptr;
    for (Value* c : bucket)
      if (c->constant()->bit_equal(*t)) first = c;
    if (!first) {
      bucket.push_back(v);
      continue;
    }
    if (!rw.can_replace(v, first)) continue;  // both are graph outputs: keep both names
    rw.replace_uses(v, first);
    ++ps.matched;
    ++ps.applied;
  }
  g.remove_dead();
  return Status::Ok();
}

}  // namespace ferry
