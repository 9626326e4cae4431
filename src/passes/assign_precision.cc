// passes/assign_precision.cc — Node::precision from the mode, the target and the overrides
// (passes/assign_precision.h). Order: the mode decides every floating node, then
// --keep-fp32, then --force; each step rewrites the node's reason.
#include "passes/assign_precision.h"

#include <algorithm>
#include <set>

namespace ferry {
namespace {

bool is_floating_node(const Node& n) {
  for (const Value* o : n.outputs())
    if (o && o->dtype() == DType::f32) return true;
  return false;
}

/// How `s` runs node `n`: accelerated (only the ops and weights its steps take,
/// accelerated_for) or emulated.
PrecisionExec prec_node_exec(const PrecisionSupport& s, const Node& n) {
  if (s.exec == PrecisionExec::accelerated && !accelerated_for(s, n)) return PrecisionExec::emulated;
  return s.exec;
}

/// "Conv, MatMul with constant weights only" (the matrix products), then the other ops: ", and Attention".
std::string prec_accelerated_ops_text(const PrecisionSupport& s) {
  std::string products, others;
  const std::vector<Op>& prod = int8_ops();
  for (Op op : s.accelerated_ops) {
    std::string& list = std::find(prod.begin(), prod.end(), op) != prod.end() ? products : others;
    list += (list.empty() ? "" : ", ") + std::string(op_name(op));
  }
  if (products.empty()) return others;
  return products + " with constant weights only" + (others.empty() ? "" : ", and " + others);
}

/// s accelerates n, a grouped convolution, but not faster than fp32 (PrecisionSupport::
/// grouped_conv_declined): auto keeps it fp32; an explicit mode still runs it on its bf16 step.
bool grouped_declined(const PrecisionSupport& s, const Node& n) {
  return !s.grouped_conv_declined.empty() && is_grouped_conv(n) && accelerated_for(s, n);
}

std::string exec_reason(const PrecisionSupport& s, const Node& n) {
  const std::string d = precision_name(s.dtype);
  if (s.exec == PrecisionExec::emulated && s.dtype == DType::i8) return "emulated: " + s.why;
  const std::string rounded =
      " (outputs and weights rounded to " + d + ", fp32 compute: accuracy as on hardware, no speedup)";
  if (s.exec == PrecisionExec::emulated) return "emulated: " + s.why + rounded;
  if (s.exec == PrecisionExec::accelerated && !accelerated_for(s, n))
    return "emulated: " + d + " steps run " + prec_accelerated_ops_text(s) + rounded;
  return d + " " + precision_exec_name(s.exec) + " (" + s.why + ")";
}

/// Whether `s` is offered for n's op (PrecisionSupport::ops; empty = every op).
bool offered_for(const PrecisionSupport& s, const Node& n) {
  return s.ops.empty() || std::find(s.ops.begin(), s.ops.end(), n.op()) != s.ops.end();
}

std::string op_list(const std::vector<Op>& ops) {
  std::string s;
  for (Op op : ops) s += (s.empty() ? "" : ", ") + std::string(op_name(op));
  return s;
}

void set_decision(Node& n, NodePrecision& d, DType p, const TargetPrecisions& t, std::string reason) {
  d.precision = p;
  d.exec = p == DType::f32 ? "native" : precision_exec_name(prec_node_exec(t.of(p), n));
  d.reason = std::move(reason);
}

bool prec_int8_dequantize(const Node* p) {
  const Value* x = p && p->op() == Op::DequantizeLinear && p->num_inputs() > 0 ? p->input(0) : nullptr;
  return x && (x->dtype() == DType::u8 || x->dtype() == DType::i8);
}

/// Whether `n` is, or reads, DequantizeLinear(u8 / s8): a QDQ model's own quantization, which is
/// its semantics (the CPU runs DequantizeLinear(x_q) -> MatMul / Conv on its int8 steps).
bool prec_reads_model_qdq(const Node& n) {
  if (prec_int8_dequantize(&n)) return true;
  for (const Value* v : n.inputs())
    if (v && prec_int8_dequantize(v->producer())) return true;
  return false;
}

/// The mode's choice for one floating node.
void decide(Node& n, NodePrecision& d, const std::string& mode, const TargetPrecisions& t,
            const std::map<std::string, NodePrecision>& saved) {
  if (mode == "fp32") return set_decision(n, d, DType::f32, t, "fp32 requested");
  if (mode == "saved") {
    auto it = saved.find(n.name());
    if (it == saved.end()) return set_decision(n, d, DType::f32, t, "fp32: not in the model's saved precision decisions");
    const PrecisionSupport s = t.of(it->second.precision);
    if (it->second.precision != DType::f32 && s.exec == PrecisionExec::none)
      return set_decision(n, d, DType::f32, t, std::string("fp32: saved as ") + precision_name(s.dtype) + ", but " + s.why);
    d.sensitivity = it->second.sensitivity;
    d.act_scale = it->second.act_scale;
    d.act_zero_point = it->second.act_zero_point;
    d.res_scale = it->second.res_scale;
    d.res_zero_point = it->second.res_zero_point;
    // The saved reason names the converting host's execution; say this one's where it differs.
    std::string reason = "saved in the model: " + it->second.reason;
    if (it->second.precision != DType::f32 && s.dtype != DType::i8) {
      const std::string here = exec_reason(s, n);
      if (reason.find(here) == std::string::npos) reason += "; here " + here;
    }
    return set_decision(n, d, it->second.precision, t, std::move(reason));
  }
  // bf16 / fp16 / int8 / auto leave the model's own int8 nodes as they are: lowering them would
  // change its numbers (and in auto replace an int8 step with a slower bf16 one).
  if (prec_reads_model_qdq(n))
    return set_decision(n, d, DType::f32, t,
                        "fp32: the model's own int8 quantization (QDQ: a DequantizeLinear of u8 / s8) is kept as it "
                        "is (the CPU runs it on its int8 steps)");
  if (mode == "auto") {
    std::string why;
    // int8 is never auto's choice, even where accelerated: its scales come from calibration
    // data (auto has none but seeded random inputs) and it costs accuracy (docs/precision.md).
    for (DType p : {DType::i8, DType::bf16, DType::f16}) {
      const PrecisionSupport s = t.of(p);
      if (p != DType::i8 && accelerated_for(s, n) && offered_for(s, n) && !grouped_declined(s, n))
        return set_decision(n, d, p, t, std::string("auto: ") + exec_reason(s, n));
      const std::string never = p == DType::i8 ? ", but auto never picks int8 (it needs calibration data): "
                                                 "--precision int8" : "";
      why += std::string(why.empty() ? "" : "; ") + precision_name(p) + ": " +
             (s.exec == PrecisionExec::emulated ? s.why + " (only emulated, no faster than fp32)"
              : grouped_declined(s, n)            ? s.grouped_conv_declined
              : s.exec == PrecisionExec::accelerated ? "accelerated for " + prec_accelerated_ops_text(s) + never
                                                     : s.why);
    }
    return set_decision(n, d, DType::f32, t, "auto keeps fp32, nothing faster on this CPU: " + why);
  }
  const DType p = *parse_precision(mode);
  const PrecisionSupport s = t.of(p);
  if (s.exec == PrecisionExec::none) return set_decision(n, d, DType::f32, t, "fp32: " + mode + " requested, but " + s.why);
  if (!offered_for(s, n)) {
    // int8 covers the matrix products; the rest runs as auto would run it (the fused Attention in
    // bf16 where the target accelerates that), not fp32 (the guard measures it with the rest).
    const PrecisionSupport b = t.of(DType::bf16);
    if (p == DType::i8 && accelerated_for(b, n) && offered_for(b, n) && !grouped_declined(b, n))
      return set_decision(n, d, DType::bf16, t, "bf16: " + mode + " covers " + op_list(s.ops) + " only; " + exec_reason(b, n));
    return set_decision(n, d, DType::f32, t, "fp32: " + mode + " covers " + op_list(s.ops) + " only");
  }
  set_decision(n, d, p, t, mode + " requested; " + exec_reason(s, n));
}

using DecisionIndex = std::map<const Node*, size_t>;

NodePrecision* decision_of(std::vector<NodePrecision>& nodes, const DecisionIndex& index, const Node& n) {
  auto it = index.find(&n);
  return it == index.end() ? nullptr : &nodes[it->second];
}

Status apply_overrides(Graph& g, const TargetPrecisions& t, const PrecisionRequest& r, std::vector<NodePrecision>& nodes,
                       const DecisionIndex& index) {
  for (const std::string& name : r.keep_fp32) {
    FERRY_ASSIGN_OR_RETURN(Node * n, find_precision_node(g, name, "--keep-fp32"));
    NodePrecision* d = decision_of(nodes, index, *n);
    if (!d) return invalid_argument("--keep-fp32 " + name + ": node " + n->describe() + " has no floating output");
    set_decision(*n, *d, DType::f32, t, "fp32: --keep-fp32");
    d->pinned = true;
  }
  for (const std::string& text : r.force) {
    const size_t eq = text.rfind('=');
    if (eq == std::string::npos || eq == 0)
      return invalid_argument("--force '" + text + "' is not of the form NODE=PRECISION");
    auto p = parse_precision(text.substr(eq + 1));
    if (!p.ok()) return invalid_argument("--force " + text + ": " + p.status().message());
    FERRY_ASSIGN_OR_RETURN(Node * n, find_precision_node(g, text.substr(0, eq), "--force"));
    NodePrecision* d = decision_of(nodes, index, *n);
    if (!d) return invalid_argument("--force " + text + ": node " + n->describe() + " has no floating output");
    const PrecisionSupport s = t.of(*p);
    if (*p != DType::f32 && s.exec == PrecisionExec::none)
      return invalid_argument("--force " + text + ": target " + t.target + " cannot run " + precision_name(*p) + ": " + s.why);
    if (*p != DType::f32 && !offered_for(s, *n))
      return invalid_argument("--force " + text + ": " + precision_name(*p) + " covers " + op_list(s.ops) + " only, not " +
                              n->describe());
    set_decision(*n, *d, *p, t, std::string(precision_name(*p)) + ": --force" + (*p == DType::f32 ? "" : "; " + exec_reason(s, *n)));
    d->pinned = true;
  }
  return Status::Ok();
}

}  // namespace

Result<DType> parse_precision(const std::string& name) {
  if (name == "fp32") return DType::f32;
  if (name == "bf16") return DType::bf16;
  if (name == "fp16") return DType::f16;
  if (name == "int8") return DType::i8;
  return invalid_argument("unknown precision '" + name + "' (precisions: fp32, bf16, fp16, int8)");
}

const char* precision_modes() { return "fp32, bf16, fp16, int8, auto"; }

Result<Node*> find_precision_node(const Graph& g, const std::string& name, const std::string& option) {
  if (Node* n = g.find_node(name)) return n;
  for (Node* n : g.nodes())
    if (std::find(n->provenance().begin(), n->provenance().end(), name) != n->provenance().end()) return n;
  std::string some;
  int shown = 0;
  for (const Node* n : g.nodes())
    if (is_floating_node(*n) && shown++ < 12) some += (some.empty() ? "" : ", ") + n->name();
  return invalid_argument(option + ": no node named '" + name + "' in the optimized graph (nodes: " + some +
                          (shown > 12 ? ", ..." : "") + ")");
}

Result<PrecisionReport> assign_precision(Graph& g, const TargetPrecisions& target, const PrecisionRequest& request) {
  PrecisionReport report;
  std::map<std::string, NodePrecision> saved;
  std::string mode = request.mode;
  if (mode.empty()) {
    FERRY_ASSIGN_OR_RETURN(saved, read_precision_metadata(request.saved));
    mode = saved.empty() ? "fp32" : "saved";
  } else if (mode != "auto" && !parse_precision(mode).ok()) {
    return invalid_argument("unknown precision mode '" + mode + "' (modes: " + precision_modes() + ")");
  }
  report.mode = mode;
  FERRY_ASSIGN_OR_RETURN(std::vector<Node*> order, g.topo_order());
  DecisionIndex index;
  std::set<std::string> names;
  // Decisions are kept and saved by name: every floating node gets its own (left as they
  // are in fp32 mode, where nothing reads them).
  const bool by_name = mode != "fp32" || !request.keep_fp32.empty() || !request.force.empty();
  for (Node* n : order) {
    if (!is_floating_node(*n)) continue;
    if (by_name && (n->name().empty() || names.count(n->name())))
      n->set_name(g.unique_name(n->name().empty() ? op_name(n->op()) : n->name()));
    names.insert(n->name());
    index[n] = report.nodes.size();
    NodePrecision d;
    d.node = n->name();
    d.op = op_name(n->op());
    decide(*n, d, mode, target, saved);
    report.nodes.push_back(std::move(d));
  }
  FERRY_TRY(apply_overrides(g, target, request, report.nodes, index));
  return report;
}

std::map<std::string, DType> lowered_nodes(const PrecisionReport& report) {
  std::map<std::string, DType> out;
  for (const NodePrecision& n : report.nodes)
    if (n.precision != DType::f32) out[n.node] = n.precision;
  return out;
}

std::string PrecisionReport::summary() const {
  std::map<std::string, int64_t> count;
  for (const NodePrecision& n : nodes)
    ++count[std::string(precision_name(n.precision)) + (n.exec == "native" ? "" : " (" + n.exec + ")")];
  std::string s;
  for (const auto& [what, k] : count)
    s += (s.empty() ? "" : ", ") + what + ": " + std::to_string(k) + (k == 1 ? " node" : " nodes");
  return s.empty() ? "no floating nodes" : s;
}

}  // namespace ferry
