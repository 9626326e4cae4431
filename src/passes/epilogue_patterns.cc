#include "passes/epilogue_patterns.h"

#include "ir/op_attrs.h"
#include "passes/fusion_util.h"

namespace ferry {
namespace {

/// The activation a host already applies ("" for the plain ops).
std::string applied_activation(const Node& host) {
  const bool plain =
      host.op() == Op::Conv || host.op() == Op::ConvTranspose || host.op() == Op::MatMul || host.op() == Op::Mul;
  return plain ? std::string() : epilogue_attrs(host).activation;
}

bool has_unknown_dim(const Shape& s) {
  if (!s.rank_known()) return true;
  for (const Dim& d : s.dims())
    if (!d.is_static() && !d.is_symbol()) return true;
  return false;
}

std::string replace_marker(std::string text, const std::string& with) {
  return text.replace(text.find("%s"), 2, with);
}

}  // namespace

std::string fused_op_blocker(const Node& host, const Target& target) {
  const Op fused = *fused_op_of(host.op());
  if (target.executes(fused)) return "";
  return "target " + target.name + " does not execute " + op_name(fused);
}

Node* epilogue_host(const Value* v, HostFamily family) {
  Node* p = v ? v->producer() : nullptr;
  if (!p) return nullptr;
  if (family == HostFamily::kConv) return is_conv_family(p->op()) ? p : nullptr;
  if (family == HostFamily::kMul) {
    if (p->op() == Op::Mul && !constant_of(p->input(0)) && !constant_of(p->input(1))) return nullptr;
    if (p->op() != Op::Mul && p->op() != Op::FusedMul) return nullptr;
    // A scale that broadcasts into the other operand: the output keeps that operand's shape.
    if (p->op() == Op::Mul && !(p->input(0)->shape() == p->output(0)->shape()) &&
        !(p->input(1)->shape() == p->output(0)->shape()))
      return nullptr;
    return is_floating(v->dtype()) ? p : nullptr;
  }
  if (p->op() != Op::MatMul && p->op() != Op::FusedMatMul) return nullptr;
  return is_floating(v->dtype()) ? p : nullptr;  // FusedMatMul is float only
}

std::string epilogue_blocker(const Graph& g, const Node& host, const Node& user) {
  if (std::string a = applied_activation(host); !a.empty())
    return std::string(op_name(host.op())) + " already applies " + a +
           (user.op() == Op::Add ? ": an Add after the activation does not fuse (only act(x + b + z) does)"
                                 : ": a second activation does not fuse");
  return single_use_problem(g, host.output(0), host);
}

bool fuse_activation_epilogue(Rewriter& rw, Node& act, HostFamily family, const Target& target) {
  Node* host = epilogue_host(act.input(0), family);
  if (!host) return false;
  std::string why;
  auto a = epilogue_activation(act, &why);
  if (!a) return why.empty() ? false : rw.near_miss(why, {host, &act});
  if (!is_floating(act.output(0)->dtype())) return false;
  if (why = fused_op_blocker(*host, target); !why.empty()) return rw.near_miss(why, {host, &act});
  if (!target.epilogue(host->op(), a->act))
    return rw.near_miss("target " + target.name + " does not apply " + activation_name(a->act) + " in a " +
                            op_name(*fused_op_of(host->op())) + " epilogue",
                        {host, &act});
  if (why = epilogue_blocker(rw.graph(), *host, act); !why.empty()) return rw.near_miss(why, {host, &act});
  AttrMap set;
  set.set("activation", std::string(activation_name(a->act)));
  if (activation_params(a->act) > 0) {
    set.set("alpha", a->alpha);
    set.set("beta", a->beta);
  }
  Node* fused = rebuild_fused(rw, *host, host->inputs(), set, {host, &act});
  rw.replace_uses(act.output(0), fused->output(0));
  return true;
}

bool fuse_silu_epilogue(Rewriter& rw, Node& mul, HostFamily family, const Target& target) {
  for (size_t i = 0; i < 2; ++i) {
    Value* y = mul.input(i);
    Node* sig = producer_of(mul.input(1 - i), Op::Sigmoid);
    Node* host = epilogue_host(y, family);
    if (!sig || !host || sig->input(0) != y) continue;
    // y feeds the Sigmoid and the Mul, nothing else; the Sigmoid only the Mul.
    const std::string h = op_name(host->op());
    if (rw.graph().is_graph_output(y)) return rw.near_miss(h + " output is a graph output", {host, sig, &mul});
    if (y->uses().size() != 2)
      return rw.near_miss(h + " output has " + std::to_string(y->uses().size()) + " consumers (x * Sigmoid(x) needs exactly 2)",
                          {host, sig, &mul});
    if (std::string why = single_use_problem(rw.graph(), sig->output(0), *sig); !why.empty())
      return rw.near_miss(why, {host, sig, &mul});
    if (std::string a = applied_activation(*host); !a.empty())
      return rw.near_miss(h + " already applies " + a + ": a second activation does not fuse", {host, sig, &mul});
    if (std::string why = fused_op_blocker(*host, target); !why.empty()) return rw.near_miss(why, {host, sig, &mul});
    if (!target.epilogue(host->op(), Activation::kSiLU))
      return rw.near_miss("target " + target.name + " does not apply SiLU in a " + op_name(*fused_op_of(host->op())) +
                              " epilogue",
                          {host, sig, &mul});
    AttrMap set;
    set.set("activation", std::string(activation_name(Activation::kSiLU)));
    Node* fused = rebuild_fused(rw, *host, host->inputs(), set, {host, sig, &mul});
    rw.replace_uses(mul.output(0), fused->output(0));
    return true;
  }
  return false;
}

namespace {
/// Z of the output's shape, a per-column row or scalar (every dim but the last 1), or
/// [B, 1.., N] with the output's B (Target::matmul_residual_any_broadcast).
bool matmul_residual_fast_form(const Shape& z, const Shape& out) {
  if (!z.rank_known() || !out.rank_known()) return false;
  const int64_t zr = z.rank(), r = out.rank();
  if (zr == r) {
    bool same = true;
    for (int64_t i = 0; i < r; ++i) same = same && z[size_t(i)] == out[size_t(i)];
    if (same) return true;
  }
  auto one = [&](int64_t i) { return z[size_t(i)].is_static() && z[size_t(i)].value() == 1; };
  bool inner_ones = true;  // dims 1 .. zr - 2
  for (int64_t i = 1; i + 1 < zr; ++i) inner_ones = inner_ones && one(i);
  if (zr <= 1 || (inner_ones && one(0))) return true;
  return zr == r && inner_ones && z[0] == out[0];
}
}  // namespace

bool fuse_residual_epilogue(Rewriter& rw, Node& add, HostFamily family, const Target& target) {
  std::string first_why;
  const Node* first_host = nullptr;
  for (size_t i = 0; i < 2; ++i) {
    Node* host = epilogue_host(add.input(i), family);
    if (!host) continue;
    Value* z = add.input(1 - i);
    const Shape& out = host->output(0)->shape();
    std::string why = fused_op_blocker(*host, target);
    if (why.empty()) why = epilogue_blocker(rw.graph(), *host, add);
    if (why.empty() && host->has_input(3))
      why = std::string(op_name(host->op())) + " already has a residual input";
    if (why.empty() && !broadcasts_into(z->shape(), out)) {
      const std::string shapes = "residual shape " + z->shape().to_string() + " %s into the " +
                                 op_name(host->op()) + " output " + out.to_string();
      why = has_unknown_dim(z->shape()) || has_unknown_dim(out)
                ? "cannot tell whether " + replace_marker(shapes, "broadcasts") + " (unknown dims)"
                : replace_marker(shapes, "does not broadcast");
    }
    if (why.empty() && family == HostFamily::kMatMul && !target.matmul_residual_any_broadcast &&
        !matmul_residual_fast_form(z->shape(), out))
      why = "residual shape " + z->shape().to_string() + " broadcasts over the batch dims of the output " +
            out.to_string() + ": " + target.name + "'s fused matmul has no fast kernel for it";
    if (!why.empty()) {
      if (!first_host) {
        first_host = host;
        first_why = why;
      }
      continue;  // the other operand may still be a host that can take it
    }
    std::vector<Value*> inputs = host->inputs();
    inputs.resize(4, nullptr);
    inputs[3] = z;
    Node* fused = rebuild_fused(rw, *host, std::move(inputs), {}, {host, &add});
    rw.replace_uses(add.output(0), fused->output(0));
    return true;
  }
  return first_host ? rw.near_miss(first_why, {first_host, &add}) : false;
}

std::vector<Pattern> activation_patterns(HostFamily family, const Target& target) {
  std::vector<Pattern> out;
  for (Activation a : all_activations()) {
    const Op op = activation_op(a);
    if (a == Activation::kNone) continue;
    bool seen = false;  // Gelu stands for two activations
    for (const Pattern& p : out) seen |= p.root == op;
    if (seen) continue;
    out.push_back({"activation", op, [family, &target](Rewriter& rw, Node& n) {
                     return fuse_activation_epilogue(rw, n, family, target);
                   }});
  }
  out.push_back({"silu", Op::Mul, [family, &target](Rewriter& rw, Node& n) {
                   return fuse_silu_epilogue(rw, n, family, target);
                 }});
  return out;
}

}  // namespace ferry
