#include "repair/narrow_f64.h"

#include <cmath>
#include <sstream>

#include "ops/shape_inference.h"
#include "runtime/interpreter.h"

namespace ferry::repair {
namespace {

bool is_dtype_attr(const std::string& name) { return name == "to" || name == "dtype" || name == "output_dtype"; }

Tensor to_f32(const Tensor& t) {
  Tensor out = Tensor::empty(DType::f32, t.dims());
  for (int64_t i = 0; i < t.numel(); ++i) out.set_double(i, t.get_double(i));
  return out;
}

Status narrow_graph(Graph& g, bool top, NarrowF64Counts* c);

/// Dtype attributes that say f64, tensor attributes of f64, and the node's subgraphs.
Status narrow_attrs(Node* n, NarrowF64Counts* c) {
  const std::string f64 = dtype_name(DType::f64), f32 = dtype_name(DType::f32);
  for (const auto& [name, value] : std::map<std::string, AttrValue>(n->attrs().all())) {
    if (const auto* s = std::get_if<std::string>(&value); s && is_dtype_attr(name) && *s == f64) {
      n->attrs().set(name, f32);
      ++c->attributes;
    } else if (const auto* t = std::get_if<Tensor>(&value); t && t->dtype() == DType::f64) {
      n->attrs().set(name, to_f32(*t));
      ++c->attributes;
    } else if (const auto* sub = std::get_if<SubgraphPtr>(&value); sub && *sub) {
      FERRY_TRY(narrow_graph(**sub, false, c));
    }
  }
  return Status::Ok();
}

/// Every f64 constant replaced by its f32 rounding, under the same name.
void narrow_constants(Graph& g, NarrowF64Counts* c) {
  for (Value* v : g.values()) {
    if (!v->is_constant() || v->dtype() != DType::f64) continue;
    const std::string name = v->name();
    v->set_name(g.unique_name(name + "/f64"));
    Value* narrowed = g.add_constant(name, to_f32(*v->constant()));
    g.replace_all_uses(v, narrowed);
    ++c->constants;
  }
}

/// A top-level f64 input read through Cast(to f32) by every node that used it.
void cast_input(Graph& g, Value* x) {
  const std::vector<Use> uses = x->uses();
  AttrMap a;
  a.set("to", std::string(dtype_name(DType::f32)));
  Node* cast = g.add_node(Op::Cast, {x}, 1, a, g.unique_name(x->name() + "/narrow_f64"));
  cast->output(0)->set_name(g.unique_name(x->name() + "/f32"));
  for (const Use& u : uses) g.set_node_input(u.node, size_t(u.index), cast->output(0));
}

Status narrow_graph(Graph& g, bool top, NarrowF64Counts* c) {
  narrow_constants(g, c);
  for (Value* x : g.inputs())
    if (x->dtype() == DType::f64) {
      if (top) {
        cast_input(g, x);
        ++c->inputs;
      } else {
        x->set_type(DType::f32, x->shape());  // a subgraph's formal input: its outer value is f32 now
      }
    }
  for (Value* x : g.captures())
    if (x->dtype() == DType::f64) x->set_type(DType::f32, x->shape());
  for (Node* n : g.nodes()) FERRY_TRY(narrow_attrs(n, c));
  return Status::Ok();
}

/// The top-level f64 outputs written through Cast(to f64), under their own names.
void cast_outputs(Graph& g, const std::vector<bool>& was_f64, NarrowF64Counts* c) {
  std::vector<Value*> outs = g.outputs();
  for (size_t i = 0; i < outs.size(); ++i) {
    Value* v = outs[i];
    if (!was_f64[i] || v->dtype() == DType::f64) continue;
    const std::string name = v->name();
    v->set_name(g.unique_name(name + "/f32"));
    AttrMap a;
    a.set("to", std::string(dtype_name(DType::f64)));
    Node* cast = g.add_node(Op::Cast, {v}, 1, a, g.unique_name(name + "/widen_f64"));
    cast->output(0)->set_name(name);
    cast->output(0)->set_type(DType::f64, v->shape());
    outs[i] = cast->output(0);
    ++c->outputs;
  }
  g.set_outputs(outs);
}

std::string fmt3(double v) {
  std::ostringstream s;
  s.precision(3);
  s << v;
  return s.str();
}

}  // namespace

Result<NarrowF64Counts> narrow_f64(Graph& g) {
  NarrowF64Counts c;
  std::vector<bool> was_f64;
  for (const Value* v : g.outputs()) was_f64.push_back(v->dtype() == DType::f64);
  FERRY_TRY(narrow_graph(g, true, &c));
  if (!c.changed()) return c;
  g.remove_dead();
  const Node* failed = nullptr;
  if (Status st = infer_shapes(g, &failed); !st.ok())
    return unsupported("the graph cannot compute in f32" + (failed ? " at node '" + failed->name() + "'" : std::string()) +
                       ": " + st.message());
  cast_outputs(g, was_f64, &c);
  return c;
}

Result<RepairRecord> check_narrowing(const Graph& original, const Graph& narrowed, const NarrowF64Counts& counts,
                                     const RandomInputOptions& inputs, double rtol, double atol) {
  RepairRecord rec{"(graph)", "float64", "", "narrow_f64", {"f32"}, "", ""};
  FERRY_ASSIGN_OR_RETURN(auto feeds, make_inputs(original, {}, inputs));
  FERRY_ASSIGN_OR_RETURN(auto want, interpret(original, feeds));
  FERRY_ASSIGN_OR_RETURN(auto got, interpret(narrowed, feeds));
  double worst_abs = 0, worst_rel = 0;
  std::string first_bad;
  for (size_t o = 0; o < want.size() && o < got.size(); ++o) {
    const Tensor &a = got[o], &b = want[o];
    if (a.dims() != b.dims()) return internal_error("narrow_f64 changed the shape of output " + std::to_string(o));
    if (!is_floating(b.dtype())) continue;
    for (int64_t e = 0; e < a.numel(); ++e) {
      const double x = a.get_double(e), y = b.get_double(e), d = std::fabs(x - y);
      const bool bad = std::isnan(x) != std::isnan(y) || (!std::isnan(d) && d > atol + rtol * std::fabs(y)) ||
                       (std::isinf(x) && x != y);
      if (bad && first_bad.empty())
        first_bad = "output '" + original.outputs()[o]->name() + "' element " + std::to_string(e) + " is " + fmt3(x) +
                    " in f32, " + fmt3(y) + " in f64";
      if (!std::isnan(d) && !std::isinf(d)) {
        worst_abs = std::max(worst_abs, d);
        if (std::fabs(y) > 0) worst_rel = std::max(worst_rel, d / std::fabs(y));
      }
    }
  }
  rec.check = first_bad.empty() ? "passed" : "failed";
  rec.check_detail = (first_bad.empty() ? "" : first_bad + "; ") + "max |f32 - f64| " + fmt3(worst_abs) +
                     ", max relative " + fmt3(worst_rel) + " on seeded random inputs (tolerance " + fmt3(atol) + " + " +
                     fmt3(rtol) + " |f64|); " + std::to_string(counts.constants) + " constants, " +
                     std::to_string(counts.inputs) + " inputs, " + std::to_string(counts.outputs) + " outputs, " +
                     std::to_string(counts.attributes) + " dtype attributes narrowed";
  return rec;
}

}  // namespace ferry::repair
