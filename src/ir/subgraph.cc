#include "ir/subgraph.h"

#include "ir/op_attrs.h"

namespace ferry {

std::vector<SubgraphUse> node_subgraphs(const Node& n) {
  std::vector<SubgraphUse> out;
  size_t captures = 0;
  for (const auto& [name, value] : n.attrs().all())
    if (const SubgraphPtr* g = std::get_if<SubgraphPtr>(&value); g && *g) {
      out.push_back({name, g->get(), 0});
      captures += (*g)->captures().size();
    }
  size_t at = n.num_inputs() >= captures ? n.num_inputs() - captures : 0;
  for (SubgraphUse& u : out) {
    u.capture_begin = at;
    at += u.graph->captures().size();
  }
  return out;
}

bool has_subgraphs(const Node& n) {
  for (const auto& [name, value] : n.attrs().all())
    if (std::holds_alternative<SubgraphPtr>(value)) return true;
  return false;
}

size_t num_formal_inputs(const Node& n) {
  size_t captures = 0;
  for (const SubgraphUse& u : node_subgraphs(n)) captures += u.graph->captures().size();
  return n.num_inputs() >= captures ? n.num_inputs() - captures : 0;
}

std::vector<Value*> capture_inputs(const Node& n, const std::string& attr) {
  for (const SubgraphUse& u : node_subgraphs(n))
    if (u.attr == attr) {
      std::vector<Value*> out;
      for (size_t i = 0; i < u.graph->captures().size(); ++i) out.push_back(n.input(u.capture_begin + i));
      return out;
    }
  return {};
}

}  // namespace ferry

namespace ferry {
namespace {

std::string arity_count_text(size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

Status check_if_arity(const Node& n, size_t formal) {
  if (formal != 1) return invalid_model("If takes 1 input (the condition) before its captures, has " +
                                        std::to_string(formal));
  for (const char* b : {"then_branch", "else_branch"}) {
    const Graph& g = n.attr_graph(b);
    if (!g.inputs().empty()) return invalid_model(std::string(b) + " must have no inputs, has " + arity_count_text(g.inputs().size(), "input"));
    if (g.outputs().size() != n.num_outputs())
      return invalid_model(std::string(b) + " has " + arity_count_text(g.outputs().size(), "output") + ", the node " +
                           arity_count_text(n.num_outputs(), "output"));
  }
  return Status::Ok();
}

Status check_loop_arity(const Node& n, size_t formal) {
  const Graph& body = n.attr_graph("body");
  if (body.inputs().size() < 2)
    return invalid_model("the Loop body must take (iteration_num, cond, carried...), has " +
                         arity_count_text(body.inputs().size(), "input"));
  if (formal != body.inputs().size())
    return invalid_model("Loop has " + arity_count_text(formal, "input") + " (M, cond, carried...) but its body " +
                         arity_count_text(body.inputs().size(), "input"));
  const size_t carried = formal - 2;
  if (body.outputs().size() != n.num_outputs() + 1 || n.num_outputs() < carried)
    return invalid_model("the Loop body has " + arity_count_text(body.outputs().size(), "output") + " for " +
                         arity_count_text(carried, "carried value") + " and " + arity_count_text(n.num_outputs(), "node output") +
                         " (expected cond, carried..., scan outputs...)");
  return Status::Ok();
}

Status check_scan_arity(const Node& n, size_t formal) {
  const Graph& body = n.attr_graph("body");
  const int64_t m = n.attrs<ScanAttrs>().num_scan_inputs;
  if (m < 1 || size_t(m) > formal)
    return invalid_model("num_scan_inputs is " + std::to_string(m) + ", the node has " + arity_count_text(formal, "input"));
  if (formal != body.inputs().size())
    return invalid_model("Scan has " + arity_count_text(formal, "input") + " but its body " +
                         arity_count_text(body.inputs().size(), "input"));
  const size_t states = formal - size_t(m);
  if (body.outputs().size() != n.num_outputs() || n.num_outputs() < states)
    return invalid_model("the Scan body has " + arity_count_text(body.outputs().size(), "output") + ", the node " +
                         arity_count_text(n.num_outputs(), "output") + " for " + arity_count_text(states, "state"));
  const size_t scans = n.num_outputs() - states;
  auto check_len = [&](const char* attr, size_t want) -> Status {
    if (n.has_attr(attr) && n.attr_ints(attr).size() != want)
      return invalid_model(std::string(attr) + " has " + std::to_string(n.attr_ints(attr).size()) +
                           " values, expected " + std::to_string(want));
    return Status::Ok();
  };
  FERRY_TRY(check_len("scan_input_axes", size_t(m)));
  FERRY_TRY(check_len("scan_input_directions", size_t(m)));
  FERRY_TRY(check_len("scan_output_axes", scans));
  return check_len("scan_output_directions", scans);
}

}  // namespace

Status check_subgraph_arity(const Node& n) {
  const OpSchema& s = n.schema();
  size_t captures = 0;
  for (const AttrSpec& a : s.attrs) {
    if (a.kind != AttrKind::kGraph) continue;
    const AttrValue* v = n.attrs().find(a.name);
    const SubgraphPtr* g = v ? std::get_if<SubgraphPtr>(v) : nullptr;
    if (!g || !*g) return invalid_model("subgraph '" + a.name + "' is missing");
    captures += (*g)->captures().size();
  }
  if (n.num_inputs() < captures)
    return invalid_model("has " + arity_count_text(n.num_inputs(), "input") + ", fewer than the " +
                         arity_count_text(captures, "capture") + " of its subgraphs");
  const size_t formal = n.num_inputs() - captures;
  for (const SubgraphUse& u : node_subgraphs(n))
    for (size_t i = 0; i < u.graph->captures().size(); ++i) {
      const Value* outer = n.input(u.capture_begin + i);
      const Value* c = u.graph->captures()[i];
      if (!outer) return invalid_model("input " + std::to_string(u.capture_begin + i) + " binds capture '" +
                                       c->name() + "' of " + u.attr + " but is omitted");
      if (outer->dtype() != DType::undefined && c->dtype() != DType::undefined && outer->dtype() != c->dtype())
        return invalid_model(u.attr + " captures '" + c->name() + "' as " + dtype_name(c->dtype()) + ", but input " +
                             std::to_string(u.capture_begin + i) + " is " + dtype_name(outer->dtype()));
    }
  switch (n.op()) {
    case Op::If: return check_if_arity(n, formal);
    case Op::Loop: return check_loop_arity(n, formal);
    case Op::Scan: return check_scan_arity(n, formal);
    default: return Status::Ok();
  }
}

}  // namespace ferry
