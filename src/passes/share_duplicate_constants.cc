// passes/share_duplicate_constants.cc — one constant per distinct tensor.
//
//   c1, c2 constants with equal dtype, dims and bytes  ==>  every use of c2 reads c1
//
// Preconditions: bitwise equality (so -0.0 != 0.0 and NaNs compare by bits);
// c2 is not a graph output (its name is visible). Common-subexpression
// elimination runs after this, so nodes that differed only in which copy of a
// constant they read become equal.
#include <map>

#include "passes/passes.h"

namespace ferry {

Status share_duplicate_constants(Graph& g, PassStats& stats) {
  PatternStats& ps = stats["share_duplicate_constants"]["duplicate_constant"];
  Rewriter rw(g, &ps);
  // Bucket by dtype and dims, then compare bytes: distinct weights differ in
  // their first bytes, so big unique tensors cost one short memcmp each and
  // nothing is hashed.
  std::map<std::pair<DType, std::vector<int64_t>>, std::vector<Value*>> seen;
  for (Value* v : g.values()) {
    const Tensor* t = v->constant();
    if (!t || (v->uses().empty() && !g.is_graph_output(v))) continue;
    std::vector<Value*>& bucket = seen[{t->dtype(), t->dims()}];
    Value* first = nullptr;
    for (Value* c : bucket)
      if (c->constant()->bit_equal(*t)) {
        first = c;
        break;
      }
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
