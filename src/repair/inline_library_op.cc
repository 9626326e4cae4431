#include "repair/inline_library_op.h"

#include <unordered_map>

#include "ir/text_format.h"

namespace ferry::repair {
namespace {

using onnx_import::OnnxNode;

/// The node's value of `a` (or its default) as the text IR writes it; nullopt when required and absent.
std::optional<std::string> attr_text(OnnxNode& n, const OpLibraryAttr& a) {
  std::optional<AttrValue> v;
  switch (a.kind) {
    case AttrKind::kInt: if (auto x = n.opt_int(a.name)) v = *x; break;
    case AttrKind::kFloat: if (auto x = n.opt_float(a.name)) v = *x; break;
    case AttrKind::kString: if (auto x = n.opt_string(a.name)) v = *x; break;
    case AttrKind::kInts: if (auto x = n.opt_ints(a.name)) v = *x; break;
    case AttrKind::kFloats: if (auto x = n.opt_floats(a.name)) v = *x; break;
    default: break;
  }
  if (v) return print_attr_value(*v);
  return a.default_text;
}

/// Why the node's attributes, inputs and outputs do not fit the entry's graph; "" when they do.
std::string mismatch(const OpLibraryEntry& e, const OnnxNode& n, const Graph& g) {
  for (const auto& a : n.proto().attribute())
    if (!e.attr(a.name())) return "attribute '" + a.name() + "' is not declared by the op library entry";
  if (n.num_inputs() != g.inputs().size())
    return "the node has " + std::to_string(n.num_inputs()) + " input(s), the op library graph takes " +
           std::to_string(g.inputs().size());
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    if (!n.input(i)) return "input " + std::to_string(i) + " is omitted";
    const DType want = g.inputs()[i]->dtype(), got = n.input(i)->dtype();
    if (want != DType::undefined && got != DType::undefined && want != got)
      return "input " + std::to_string(i) + " is " + dtype_name(got) + ", the op library graph takes " + dtype_name(want);
  }
  if (n.num_outputs() > g.outputs().size())
    return "the node has " + std::to_string(n.num_outputs()) + " output(s), the op library graph gives " +
           std::to_string(g.outputs().size());
  return "";
}

}  // namespace

Status inline_library_op(const OpLibraryEntry& entry, OnnxNode& n) {
  std::vector<std::pair<std::string, std::string>> values;
  for (const OpLibraryAttr& a : entry.attrs) {
    auto text = attr_text(n, a);
    if (!text) return unsupported("attribute '" + a.name + "' is required by the op library entry");
    values.emplace_back(a.name, *text);
  }
  if (!n.attr_status().ok()) return n.attr_status();
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, instantiate(entry, values));
  if (std::string why = mismatch(entry, n, *g); !why.empty()) return unsupported(why);
  std::unordered_map<const Value*, Value*> map;
  for (size_t i = 0; i < g->inputs().size(); ++i) map[g->inputs()[i]] = n.input(i);
  FERRY_ASSIGN_OR_RETURN(std::vector<Node*> order, g->topo_order());
  auto mapped = [&](Value* v) -> Value* {
    if (!v) return nullptr;
    if (auto it = map.find(v); it != map.end()) return it->second;
    if (v->is_constant()) return map[v] = n.constant(*v->constant(), v->name());
    return nullptr;
  };
  for (const Node* node : order) {
    std::vector<Value*> ins;
    for (Value* v : node->inputs()) ins.push_back(mapped(v));
    Node* out = n.emit_helper(node->op(), std::move(ins), node->attrs(), node->num_outputs());
    for (size_t k = 0; k < node->num_outputs(); ++k) map[node->output(k)] = out->output(k);
  }
  for (size_t k = 0; k < n.num_outputs(); ++k) {
    Value* v = mapped(g->outputs()[k]);
    if (v->is_graph_input() || !v->producer()) v = n.emit_helper(Op::Identity, {v})->output(0);  // never rename the node's input
    n.set_output(k, v);
  }
  return Status::Ok();
}

}  // namespace ferry::repair
