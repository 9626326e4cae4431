// passes/eliminate_dead.cc — what no graph output depends on.
//
//   node whose outputs reach no graph output   ==>  removed
//   constant read by no node and not an output ==>  removed
//
// Graph inputs stay even when unused: they are the model's interface.
#include "passes/passes.h"

namespace ferry {
namespace {

size_t count_constants(const Graph& g) {
  size_t n = 0;
  for (const Value* v : g.values()) n += v->is_constant();
  return n;
}

}  // namespace

Status eliminate_dead(Graph& g, PassStats& stats) {
  auto& pass = stats["eliminate_dead"];
  PatternStats& nodes = pass["dead_node"];
  PatternStats& constants = pass["unused_constant"];
  size_t constants_before = count_constants(g);
  size_t removed = g.remove_dead();
  size_t constants_removed = constants_before - count_constants(g);
  nodes.applied += int64_t(removed);
  nodes.matched += int64_t(removed);
  constants.applied += int64_t(constants_removed);
  constants.matched += int64_t(constants_removed);
  return Status::Ok();
}

}  // namespace ferry
