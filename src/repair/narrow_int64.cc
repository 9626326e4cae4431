#include "repair/narrow_int64.h"

#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "ir/subgraph.h"
#include "ops/shape_inference.h"
#include "repair/narrow_int64_plan.h"
#include "runtime/interpreter.h"

namespace ferry::repair {
namespace {

Tensor int64_tensor_as_int32(const Tensor& t) {
  Tensor out = Tensor::empty(DType::i32, t.dims());
  for (int64_t i = 0; i < t.numel(); ++i) out.data<int32_t>()[i] = int32_t(t.get_int(i));  // proven in range
  return out;
}

/// Rewrites a graph by its Int64Plan (repair/narrow_int64_plan.h).
class Int64Narrower {
 public:
  Int64Narrower(Graph& g, const Int64Plan& plan) : g_(g), plan_(plan) {}

  Result<NarrowInt64Counts> run() {
    for (Node* n : g_.nodes())  // every read decided before anything changes
      for (size_t i = 0; i < n->num_inputs(); ++i)
        if (plan_.has(n->input(i))) reads_.push_back({n, i, plan_.reads_int32(*n, i)});
    for (const PlannedRead& r : reads_) ++(r.int32 ? int32_reads_ : int64_reads_)[r.node->input(r.index)];
    for (Value* v : g_.values())
      if (plan_.has(v)) narrow(v);
    for (const PlannedRead& r : reads_) rewire(r);
    for (auto& [original, copy] : constant_copies_) take_over_name(original, copy);
    drop_noop_casts();
    FERRY_TRY(check_types());
    if (counts_.changed()) g_.remove_dead();
    return counts_;
  }

 private:
  struct PlannedRead {
    Node* node;
    size_t index;
    bool int32;  ///< reads int32 after the rewrite
  };

  Value* add_cast(Value* x, DType to, const std::string& name) {
    AttrMap a;
    a.set("to", std::string(dtype_name(to)));
    Node* cast = g_.add_node(Op::Cast, {x}, 1, a, g_.unique_name(x->name() + "/narrow_int64"));
    cast->output(0)->set_name(g_.unique_name(name));
    cast->output(0)->set_type(to, x->shape());
    if (x->producer()) cast->provenance() = x->producer()->provenance();
    ++counts_.casts_added;
    return cast->output(0);
  }

  void narrow(Value* v) {
    if (v->is_constant()) {
      if (!int32_reads_.count(v)) return;
      int32_of_[v] = g_.add_constant(g_.unique_name(v->name() + "/int32"), int64_tensor_as_int32(*v->constant()));
      constant_copies_.push_back({v, int32_of_[v]});
      ++counts_.constants;
    } else if (plan_.native(v)) {
      narrow_computed(v);
    } else if (int32_reads_.count(v)) {  // a root: stays int64, read as int32 through a Cast
      int32_of_[v] = add_cast(v, DType::i32, v->name() + "/int32");
    }
  }

  /// v's producer computes int32; readers of int64 (and a graph output) read a Cast back.
  void narrow_computed(Value* v) {
    Node& p = *v->producer();
    if (p.op() == Op::Cast) p.attrs().set("to", std::string(dtype_name(DType::i32)));
    if (p.op() == Op::ConstantOfShape) p.attrs().set("value", int64_tensor_as_int32(p.attr_tensor("value")));
    v->set_type(DType::i32, v->shape());
    retyped_.insert(v);
    ++counts_.values;
    const bool output = g_.is_graph_output(v);
    if (!output && !int64_reads_.count(v)) return;
    const std::string name = v->name();
    if (output) v->set_name(g_.unique_name(name + "/int32"));  // the output keeps its name
    Value* wide = add_cast(v, DType::i64, output ? name : name + "/int64");
    int64_of_[v] = wide;
    std::vector<Value*> outs = g_.outputs();
    for (Value*& o : outs)
      if (o == v) o = wide;
    g_.set_outputs(outs);
  }

  void rewire(const PlannedRead& r) {
    auto& to = r.int32 ? int32_of_ : int64_of_;
    if (auto it = to.find(r.node->input(r.index)); it != to.end()) g_.set_node_input(r.node, r.index, it->second);
  }

  /// An int64 constant no longer read gives its name to its int32 copy.
  void take_over_name(Value* original, Value* copy) {
    if (!original->is_constant() || !original->uses().empty() || g_.is_graph_output(original)) return;
    const std::string name = original->name();
    original->set_name(g_.unique_name(name + "/int64"));
    copy->set_name(name);
  }

  /// A Cast the rewrite left int32 -> int32 whose output is read by name by no one (a graph output,
  /// a subgraph's capture).
  bool noop_cast(const Node& n) const {
    const Value *in = n.input(0), *out = n.output(0);
    if (n.op() != Op::Cast || in->dtype() != DType::i32 || out->dtype() != DType::i32) return false;
    if (!(retyped_.count(in) || retyped_.count(out)) || g_.is_graph_output(out)) return false;
    for (const Use& u : out->uses())
      if (has_subgraphs(*u.node)) return false;
    return true;
  }

  void drop_noop_casts() {
    for (Node* n : g_.nodes()) {
      if (!noop_cast(*n)) continue;
      Value *in = n->input(0), *out = n->output(0);
      retyped_.erase(out);
      g_.replace_all_uses(out, in);
      g_.remove_node(n);
      ++counts_.casts_removed;
    }
  }

  /// Shapes inferred again; every retyped value must come out int32.
  Status check_types() {
    if (!counts_.changed()) return Status::Ok();
    const Node* failed = nullptr;
    if (Status st = infer_shapes(g_, &failed); !st.ok())
      return internal_error("the narrowed graph does not type-check" +
                            (failed ? " at node '" + failed->name() + "'" : std::string()) + ": " + st.message());
    for (const Value* v : retyped_)
      if (v->dtype() != DType::i32)
        return internal_error("'" + v->name() + "' was narrowed to i32 but infers as " + dtype_name(v->dtype()));
    return Status::Ok();
  }

  Graph& g_;
  const Int64Plan& plan_;
  std::vector<PlannedRead> reads_;
  std::unordered_map<const Value*, int> int32_reads_, int64_reads_;
  std::unordered_map<const Value*, Value*> int32_of_, int64_of_;  ///< what int32 / int64 readers read instead
  std::vector<std::pair<Value*, Value*>> constant_copies_;  ///< (int64 original, int32 copy)
  std::unordered_set<const Value*> retyped_;
  NarrowInt64Counts counts_;
};

/// "" when `got` equals `want` element for element (NaN for NaN), else the first difference.
std::string int64_narrowing_difference(const Tensor& got, const Tensor& want, const std::string& name) {
  if (got.dtype() != want.dtype() || got.dims() != want.dims())
    return "output '" + name + "' is " + got.type_string() + ", was " + want.type_string();
  if (got.bit_equal(want)) return "";
  const bool ints = !is_floating(want.dtype());
  for (int64_t e = 0; e < got.numel(); ++e) {
    const double x = got.get_double(e), y = want.get_double(e);
    if (ints ? got.get_int(e) == want.get_int(e) : (x == y || (std::isnan(x) && std::isnan(y)))) continue;
    return "output '" + name + "' element " + std::to_string(e) + " is " +
           (ints ? std::to_string(got.get_int(e)) : std::to_string(x)) + ", was " +
           (ints ? std::to_string(want.get_int(e)) : std::to_string(y));
  }
  return "";
}

}  // namespace

Result<NarrowInt64Counts> narrow_int64(Graph& g) {
  const Int64Plan plan = plan_int64_narrowing(g);
  FERRY_ASSIGN_OR_RETURN(NarrowInt64Counts counts, Int64Narrower(g, plan).run());
  counts.proven = int64_t(plan.proven);
  return counts;
}

Result<RepairRecord> check_int64_narrowing(const Graph& original, const Graph& narrowed,
                                           const NarrowInt64Counts& counts, const RandomInputOptions& inputs) {
  RepairRecord rec{"(graph)", "int64", "", "narrow_int64", {"i32"}, "", ""};
  FERRY_ASSIGN_OR_RETURN(auto feeds, make_inputs(original, {}, inputs));
  FERRY_ASSIGN_OR_RETURN(auto want, interpret(original, feeds));
  auto got = interpret(narrowed, feeds);
  if (!got.ok()) return got.status().with_context("running the narrowed graph");
  std::string diff;
  for (size_t o = 0; o < want.size() && o < got->size() && diff.empty(); ++o)
    diff = int64_narrowing_difference((*got)[o], want[o], original.outputs()[o]->name());
  rec.check = diff.empty() ? "passed" : "failed";
  rec.check_detail = (diff.empty() ? "all " + std::to_string(want.size()) + " outputs identical" : diff) +
                     " on seeded random inputs; " + std::to_string(counts.values) + " values computed in int32, " +
                     std::to_string(counts.constants) + " constants narrowed, " + std::to_string(counts.casts_added) +
                     " casts added, " + std::to_string(counts.casts_removed) + " removed (" +
                     std::to_string(counts.proven) + " int64 values proven within int32)";
  return rec;
}

}  // namespace ferry::repair
