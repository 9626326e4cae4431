#include "repair/narrow_int64_plan.h"

#include <unordered_map>

#include "ir/subgraph.h"
#include "repair/int_ranges.h"

namespace ferry::repair {

// The ONNX schemas (opset 18) and ferry's reference kernels accept int32 in these inputs; every
// `data` op here is one int_ranges carries a range through.
Int32Read int32_read(const Node& n, size_t i) {
  switch (n.op()) {
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Mod: case Op::Min: case Op::Max:
    case Op::Neg: case Op::Abs: case Op::Concat: case Op::Range: case Op::Identity: case Op::Flatten:
    case Op::Transpose:
      return Int32Read::data;
    case Op::Squeeze: case Op::Unsqueeze: case Op::Reshape: case Op::Expand: case Op::Tile:
    case Op::ReduceMax: case Op::ReduceMin: case Op::GatherND:
      return i == 0 ? Int32Read::data : Int32Read::int64;
    case Op::Gather: case Op::GatherElements: case Op::Slice:
      return i == 0 ? Int32Read::data : Int32Read::index;
    case Op::Where: return i == 0 ? Int32Read::any : Int32Read::data;
    case Op::Equal: case Op::Less: case Op::LessOrEqual: case Op::Greater: case Op::GreaterOrEqual:
      return Int32Read::index;
    case Op::Cast: case Op::Shape: case Op::Size: return Int32Read::any;
    default: return Int32Read::int64;
  }
}

bool Int64Plan::native(const Value* v) const {
  if (!has(v) || v->is_constant() || !v->producer()) return false;
  const Node& p = *v->producer();
  if (p.op() == Op::Cast || p.op() == Op::ConstantOfShape) return true;
  if (p.num_outputs() != 1) return false;
  bool reads_data = false;
  for (size_t i = 0; i < p.num_inputs(); ++i) {
    if (int32_read(p, i) != Int32Read::data || !p.input(i)) continue;
    if (!has(p.input(i))) return false;
    reads_data = true;
  }
  return reads_data;
}

bool Int64Plan::reads_int32(const Node& n, size_t i) const {
  const Value* v = n.input(i);
  if (!has(v)) return false;
  switch (int32_read(n, i)) {
    case Int32Read::data: return native(n.output(0));
    case Int32Read::any: return native(v);  // a root or constant is read as it is
    case Int32Read::int64: return false;
    case Int32Read::index: break;
  }
  for (size_t k = 0; k < n.num_inputs(); ++k)  // the group is int32 together or not at all
    if (n.input(k) && int32_read(n, k) == Int32Read::index && !has(n.input(k))) return false;
  return true;
}

namespace {

bool read_by_subgraph_node(const Value* v) {
  for (const Use& u : v->uses())
    if (has_subgraphs(*u.node)) return true;
  return false;
}

/// Union-find over the plan's computed values.
class Int64Regions {
 public:
  const Value* find(const Value* v) {
    const Value* root = v;
    for (auto it = parent_.find(root); it != parent_.end() && it->second != root; it = parent_.find(root))
      root = it->second;
    while (v != root) {  // path compression
      const Value* next = parent_[v];
      parent_[v] = root;
      v = next;
    }
    return root;
  }
  void unite(const Value* a, const Value* b) {
    const Value *ra = find(a), *rb = find(b);
    if (ra != rb) parent_[ra] = rb;
  }

 private:
  std::unordered_map<const Value*, const Value*> parent_;
};

/// What narrowing one value costs and gains: a Cast it needs, a node it turns int32.
struct Int64RegionCost {
  int64_t casts = 0, nodes = 0;
};

bool has_read_as(const Int64Plan& p, const Value* v, bool int32) {
  for (const Use& u : v->uses())
    if (p.reads_int32(*u.node, size_t(u.index)) == int32) return true;
  return false;
}

/// Drops every region whose Casts outnumber its int32 nodes; true if any was dropped.
bool drop_costly_regions(const Graph& g, Int64Plan& p) {
  Int64Regions regions;
  for (const Value* v : p.values) {
    if (!p.native(v)) continue;
    const Node& n = *v->producer();
    for (size_t i = 0; i < n.num_inputs(); ++i) {
      const Value* in = n.input(i);
      if (int32_read(n, i) == Int32Read::data && p.has(in) && !in->is_constant()) regions.unite(in, v);
    }
  }
  std::unordered_map<const Value*, Int64RegionCost> cost;
  for (const Value* v : p.values) {
    if (v->is_constant()) continue;
    Int64RegionCost& c = cost[regions.find(v)];
    if (p.native(v)) {
      ++c.nodes;
      c.casts += g.is_graph_output(v) || has_read_as(p, v, false);
    } else {
      c.casts += has_read_as(p, v, true);
    }
  }
  std::vector<const Value*> dropped;
  for (const Value* v : p.values)
    if (!v->is_constant() && cost[regions.find(v)].casts > cost[regions.find(v)].nodes) dropped.push_back(v);
  for (const Value* v : dropped) p.values.erase(v);
  return !dropped.empty();
}

}  // namespace

Int64Plan plan_int64_narrowing(const Graph& g) {
  Int64Plan p;
  const auto ranges = int_ranges(g);
  for (const Value* v : g.values()) {
    if (v->dtype() != DType::i64) continue;
    auto r = ranges.find(v);
    if (r == ranges.end() || !r->second.fits_int32()) continue;
    ++p.proven;
    if (!v->is_graph_input() && !read_by_subgraph_node(v)) p.values.insert(v);
  }
  while (drop_costly_regions(g, p)) {
  }
  return p;
}

}  // namespace ferry::repair
