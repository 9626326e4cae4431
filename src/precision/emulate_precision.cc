#include "precision/emulate_precision.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "ir/activation.h"
#include "ir/op_attrs.h"
#include "precision/int8_weight_grid.h"
#include "precision/round_storage.h"

namespace ferry {
namespace {

using EmulRoundedConstants = std::map<std::pair<const Value*, DType>, Value*>;

/// Input i of n, an f32 constant, replaced by its copy rounded to p (made once per constant and p).
Status emul_round_constant_input(Graph& g, Node& n, size_t i, DType p, EmulRoundedConstants& cache) {
  Value* v = n.input(i);
  Value*& r = cache[{v, p}];
  if (!r) {
    FERRY_ASSIGN_OR_RETURN(Tensor t, rounded_copy(*v->constant(), p));
    r = g.add_constant(g.unique_name(v->name() + "/" + precision_name(p)), std::move(t));
    r->set_type(v->dtype(), v->shape());
  }
  g.set_node_input(&n, i, r);
  return Status::Ok();
}

/// Rounds n's f32 constant inputs (only input 1, the weights, when `weights_only`).
Status emul_round_weights(Graph& g, Node& n, DType p, EmulRoundedConstants& cache, bool weights_only = false) {
  for (size_t i = weights_only ? 1 : 0; i < n.num_inputs() && (!weights_only || i < 2); ++i) {
    Value* v = n.input(i);
    if (!v || !v->is_constant() || v->dtype() != DType::f32) continue;
    FERRY_TRY(emul_round_constant_input(g, n, i, p, cache));
  }
  return Status::Ok();
}

Node* emul_add_cast(Graph& g, Value* in, DType to, DType out_type, const Node& n, const std::string& suffix) {
  AttrMap a;
  a.set("to", std::string(dtype_name(to)));
  Node* c = g.add_node(Op::Cast, {in}, 1, std::move(a), g.unique_name(n.name() + "/" + suffix));
  c->output(0)->set_type(out_type, in->shape());
  c->provenance() = n.provenance();
  return c;
}

void emul_round_outputs(Graph& g, Node& n, DType p, std::map<const Node*, const Node*>* owner) {
  for (Value* o : n.outputs()) {
    if (!o || o->dtype() != DType::f32 || (o->uses().empty() && !g.is_graph_output(o))) continue;
    Node* down = emul_add_cast(g, o, p, p, n, std::string("to_") + precision_name(p));
    Node* up = emul_add_cast(g, down->output(0), DType::f32, DType::f32, n, "to_fp32");
    Value* r = up->output(0);
    g.replace_all_uses(o, r);
    g.set_node_input(down, 0, o);  // replace_all_uses moved the Cast's own input too
    const std::string name = o->name();
    o->set_name(g.unique_name(name + "/unrounded"));
    r->set_name(name);
    if (owner) (*owner)[down] = (*owner)[up] = &n;
  }
}

using EmulRoundedInputs = std::map<std::pair<const Value*, DType>, Value*>;

/// An accelerated node's input `i` (0: x) through Cast(Cast(x, to=p), to=f32), one pair per
/// (x, p) shared by every accelerated reader: what the hardware step's reorder into p computes.
void emul_round_input(Graph& g, Node& n, DType p, EmulRoundedInputs& cache, std::map<const Node*, const Node*>* owner,
                      size_t i = 0) {
  Value* x = n.num_inputs() > i ? n.input(i) : nullptr;
  if (!x || x->is_constant() || x->dtype() != DType::f32) return;
  // Already rounded to p (an emulated producer's output pair): rounding again changes nothing.
  const Node* up = x->producer();
  const Node* down = up && up->op() == Op::Cast && up->input(0) ? up->input(0)->producer() : nullptr;
  if (down && down->op() == Op::Cast && up->input(0)->dtype() == p && down->input(0) &&
      down->input(0)->dtype() == DType::f32)
    return;
  Value*& r = cache[{x, p}];
  if (!r) {
    const std::string tag = i == 0 ? "x" : "in" + std::to_string(i);
    Node* down = emul_add_cast(g, x, p, p, n, tag + "_to_" + precision_name(p));
    Node* up = emul_add_cast(g, down->output(0), DType::f32, DType::f32, n, tag + "_to_fp32");
    r = up->output(0);
    if (owner) (*owner)[down] = (*owner)[up] = &n;
  }
  g.set_node_input(&n, i, r);
}

/// An accelerated Attention (the CPU's bf16 kernels, backends/cpu/native/attention_amx.cc on AMX, attention_bf16.cc on Zen 5):
/// Q, K, V and past_key / past_value rounded to p (constants once), the mask and the output
/// fp32. The kernel also rounds scale * Q (not Q) and the softmax numerators P, which a graph
/// of Attention cannot express: the guard measures this form, within a bound of what runs
/// (tests/kernels/attention_bf16_test.cc).
Status emul_round_attention(Graph& g, Node& n, DType p, EmulRoundedConstants& consts, EmulRoundedInputs& inputs,
                            std::map<const Node*, const Node*>* owner) {
  for (size_t i : {size_t(0), size_t(1), size_t(2), size_t(4), size_t(5)}) {
    Value* v = n.num_inputs() > i ? n.input(i) : nullptr;
    if (!v || v->dtype() != DType::f32) continue;
    if (!v->is_constant()) {
      emul_round_input(g, n, p, inputs, owner, i);
      continue;
    }
    FERRY_TRY(emul_round_constant_input(g, n, i, p, consts));
  }
  return Status::Ok();
}

/// The axis of W's output channels for an int8 node (-1: per tensor).
int64_t emul_weight_axis(const Node& n, const Tensor& w) {
  switch (n.op()) {
    case Op::Conv: case Op::FusedConv: return 0;
    case Op::Gemm: return n.attrs<GemmAttrs>().transB ? 0 : 1;
    default: return w.rank() >= 2 ? w.rank() - 1 : -1;  // MatMul: per column of B
  }
}

/// fq(W) per output channel: symmetric s8 on the host's grid (precision/int8_weight_grid.h),
/// s_c = max|W_c| / q_max (1 for a channel below kInt8NegligibleWeight, which becomes 0).
Tensor emul_fake_quant_weights(const Tensor& w, int64_t axis) {
  const float qmax = float(int8_weight_qmax());
  Tensor q = w.clone();  // f32, same dims (a copy would share the buffer)
  const int64_t channels = axis < 0 ? 1 : w.dim(axis);
  int64_t inner = 1;
  for (int64_t d = axis + 1; axis >= 0 && d < w.rank(); ++d) inner *= w.dim(d);
  auto channel = [&](int64_t i) { return (i / inner) % channels; };
  std::vector<float> amax(size_t(channels), 0.0f);
  const float* pw = w.data<float>();
  for (int64_t i = 0; i < w.numel(); ++i) amax[size_t(channel(i))] = std::max(amax[size_t(channel(i))], std::fabs(pw[i]));
  float* pq = q.data<float>();
  for (int64_t i = 0; i < w.numel(); ++i) {
    const float s = amax[size_t(channel(i))] >= kInt8NegligibleWeight ? amax[size_t(channel(i))] / qmax : 1.0f;
    pq[i] = std::clamp(std::nearbyint(pw[i] / s), -qmax, qmax) * s;
  }
  return q;
}

Node* emul_add_qdq_node(Graph& g, Op op, std::vector<Value*> in, DType out, const Node& n, const std::string& suffix) {
  Node* q = g.add_node(op, std::move(in), 1, {}, g.unique_name(n.name() + "/" + suffix));
  q->output(0)->set_type(out, q->input(0)->shape());
  q->provenance() = n.provenance();
  return q;
}

/// The DequantizeLinear(QuantizeLinear(x, s, z)) outputs written so far, per x, s and z: the
/// int8 readers of one value with one quantization (a LayerNorm read by the Q, K and V
/// projections) share one pair, so the CPU quantizes x once.
using EmulQdqCache = std::map<std::tuple<const Value*, double, int64_t>, Value*>;

/// n's input i -> DequantizeLinear(QuantizeLinear(input, s, z)) at `a` (u8), or the pair `cache`
/// holds for that input and quantization; the constants and nodes are named after n and `tag`
/// ("x": input 0, "z": a residual).
void emul_qdq_input(Graph& g, Node& n, size_t i, const ActivationQuant& a, const std::string& tag,
                    std::map<const Node*, const Node*>* owner, EmulQdqCache& cache) {
  Value*& shared = cache[{n.input(i), double(a.scale), int64_t(a.zero_point)}];
  if (shared) {
    g.set_node_input(&n, i, shared);
    return;
  }
  Value* scale = g.add_constant(g.unique_name(n.name() + "/" + tag + "_scale"), Tensor::scalar(float(a.scale)));
  Value* zp = g.add_constant(g.unique_name(n.name() + "/" + tag + "_zero_point"), Tensor::scalar(uint8_t(a.zero_point)));
  Node* q = emul_add_qdq_node(g, Op::QuantizeLinear, {n.input(i), scale, zp}, DType::u8, n, "quantize_" + tag);
  Node* dq = emul_add_qdq_node(g, Op::DequantizeLinear, {q->output(0), scale, zp}, DType::f32, n, "dequantize_" + tag);
  g.set_node_input(&n, i, dq->output(0));
  shared = dq->output(0);
  if (owner) (*owner)[q] = (*owner)[dq] = &n;
}

/// x -> DequantizeLinear(QuantizeLinear(x, s, z)) in front of n; W -> fq(W).
Status emul_int8(Graph& g, Node& n, const ActivationQuant& a, std::map<const Node*, const Node*>* owner,
                 EmulQdqCache& cache) {
  Value* w = n.num_inputs() > 1 ? n.input(1) : nullptr;
  if (w && w->is_constant() && w->dtype() == DType::f32) {
    const Tensor& t = *w->constant();
    Value* r = g.add_constant(g.unique_name(w->name() + "/int8"), emul_fake_quant_weights(t, emul_weight_axis(n, t)));
    r->set_type(w->dtype(), w->shape());
    g.set_node_input(&n, 1, r);
  }
  Value* x = n.input(0);
  if (!x || x->dtype() != DType::f32) return Status::Ok();
  emul_qdq_input(g, n, 0, a, "x", owner, cache);
  return Status::Ok();
}

bool emul_is_int8(const std::map<std::string, DType>& precision, const Node& n) {
  auto it = precision.find(n.name());
  return it != precision.end() && it->second == DType::i8;
}

/// Z's quantization when n is an int8 FusedConv that could read its residual Z quantized: Z is
/// input 0 of another int8 node (whose calibration is Z's) or n has Z's own calibration
/// (res_scale), Z has y's shape, and the activation is one a oneDNN post-op applies exactly.
std::optional<ActivationQuant> emul_residual_quant(const Node& n, const std::map<std::string, DType>& precision,
                                                  const std::map<std::string, ActivationQuant>& act) {
  if (n.op() != Op::FusedConv || !emul_is_int8(precision, n) || n.num_inputs() < 4 || !n.input(3)) return std::nullopt;
  const Value* z = n.input(3);
  if (z->is_constant() || z->dtype() != DType::f32 || !(z->shape() == n.output(0)->shape())) return std::nullopt;
  const auto a = activation_from_name(epilogue_attrs(n).activation);
  if (!a || (*a != Activation::kNone && *a != Activation::kRelu && *a != Activation::kClip && *a != Activation::kLeakyRelu))
    return std::nullopt;
  for (const Use& u : z->uses()) {
    if (u.index != 0 || !emul_is_int8(precision, *u.node)) continue;
    auto q = act.find(u.node->name());
    if (q != act.end() && q->second.scale > 0) return q->second;
  }
  // Read by no int8 node's input 0 (ResNet's downsample output): the node's own calibration of Z.
  auto own = act.find(n.name());
  if (own != act.end() && own->second.res_scale > 0) return ActivationQuant{own->second.res_scale, own->second.res_zero_point};
  return std::nullopt;
}

/// The int8 FusedConvs whose residual Z is read quantized, with Z's quantization (see
/// emulate_precision.h): those of emul_residual_quant whose Z an int8 node computes, no graph
/// output, that every reader quantizes then (input 0 of an int8 node, or such a residual).
std::map<const Node*, ActivationQuant> emul_quantized_residuals(const Graph& g, const std::vector<Node*>& order,
                                                               const std::map<std::string, DType>& precision,
                                                               const std::map<std::string, ActivationQuant>& act) {
  std::map<const Node*, ActivationQuant> out;
  for (const Node* n : order) {
    const std::optional<ActivationQuant> q = emul_residual_quant(*n, precision, act);
    const Value* z = q ? n->input(3) : nullptr;
    if (!z || !z->producer() || !emul_is_int8(precision, *z->producer()) || g.is_graph_output(z)) continue;
    bool all = true;
    for (const Use& u : z->uses())
      all = all && emul_is_int8(precision, *u.node) &&
            (u.index == 0 || (u.index == 3 && emul_residual_quant(*u.node, precision, act)));
    if (all) out[n] = *q;
  }
  return out;
}

/// Whether n (at precision p) is a node the target runs on p hardware (Conv / MatMul family).
bool emul_accelerated(const std::map<std::string, DType>& precision, const TargetPrecisions& target, const Node& n,
                      DType p) {
  auto it = precision.find(n.name());
  return it != precision.end() && it->second == p && accelerated_for(target.of(p), n) && n.op() != Op::Attention;
}

/// The accelerated bf16 / fp16 FusedConvs that read their residual Z rounded to p, i.e. whose
/// residual stream is stored in p (see emulate_precision.h): Z is computed by an accelerated
/// node at p, is no graph output, has y's shape, and every reader of Z is an accelerated node
/// at p reading it as input 0 or as such a residual.
std::set<const Node*> emul_rounded_residuals(const Graph& g, const std::vector<Node*>& order,
                                             const std::map<std::string, DType>& precision,
                                             const TargetPrecisions& target) {
  auto candidate = [&](const Node& n, DType p) {
    if (n.op() != Op::FusedConv || n.num_inputs() < 4 || !n.input(3) || !emul_accelerated(precision, target, n, p))
      return false;
    const Value* z = n.input(3);
    return !z->is_constant() && z->dtype() == DType::f32 && z->shape() == n.output(0)->shape() && z->producer() &&
           !g.is_graph_output(z) && emul_accelerated(precision, target, *z->producer(), p);
  };
  std::set<const Node*> out;
  for (const Node* n : order) {
    auto it = precision.find(n->name());
    if (it == precision.end() || (it->second != DType::bf16 && it->second != DType::f16)) continue;
    const DType p = it->second;
    if (!candidate(*n, p)) continue;
    bool all = true;
    for (const Use& u : n->input(3)->uses())
      all = all && emul_accelerated(precision, target, *u.node, p) &&
            (u.index == 0 || (u.index == 3 && candidate(*u.node, p)));
    if (all) out.insert(n);
  }
  return out;
}

}  // namespace

Result<int64_t> lower_emulated_precision(Graph& g, const std::map<std::string, DType>& precision,
                                         const TargetPrecisions& target, std::map<const Node*, const Node*>* owner,
                                         const std::map<std::string, ActivationQuant>* act) {
  if (precision.empty()) return int64_t(0);
  FERRY_ASSIGN_OR_RETURN(std::vector<Node*> order, g.topo_order());
  const std::map<const Node*, ActivationQuant> residuals =
      act ? emul_quantized_residuals(g, order, precision, *act) : std::map<const Node*, ActivationQuant>{};
  const std::set<const Node*> rounded_residuals = emul_rounded_residuals(g, order, precision, target);
  EmulRoundedConstants cache;
  EmulRoundedInputs inputs;
  EmulQdqCache qdq;
  int64_t lowered = 0;
  for (Node* n : order) {
    auto it = precision.find(n->name());
    if (it == precision.end()) continue;
    const DType p = it->second;
    // int8 is always written as its QDQ form: a backend with int8 steps (the CPU's) runs
    // DequantizeLinear(u8) -> n(fq W) as one int8 primitive, the others as written.
    if (p == DType::i8) {
      auto a = act ? act->find(n->name()) : decltype(act->end()){};
      if (!act || a == act->end() || a->second.scale <= 0)
        return invalid_argument("node " + n->describe() + " is at int8 but has no calibrated activation scale");
      FERRY_TRY(emul_int8(g, *n, a->second, owner, qdq).with_context("quantizing " + n->describe()));
      if (auto z = residuals.find(n); z != residuals.end()) emul_qdq_input(g, *n, 3, z->second, "z", owner, qdq);
      ++lowered;
      continue;
    }
    if (p != DType::bf16 && p != DType::f16) continue;
    if (accelerated_for(target.of(p), *n) && n->op() == Op::Attention) {
      FERRY_TRY(emul_round_attention(g, *n, p, cache, inputs, owner).with_context("rounding the inputs of " + n->describe()));
      ++lowered;
      continue;
    }
    if (accelerated_for(target.of(p), *n)) {
      // The hardware step rounds x at its reorder and W once, and writes f32.
      FERRY_TRY(emul_round_weights(g, *n, p, cache, true).with_context("rounding the weights of " + n->describe()));
      emul_round_input(g, *n, p, inputs, owner);
      if (rounded_residuals.count(n)) emul_round_input(g, *n, p, inputs, owner, 3);
      ++lowered;
      continue;
    }
    FERRY_TRY(emul_round_weights(g, *n, p, cache).with_context("rounding the weights of " + n->describe()));
    emul_round_outputs(g, *n, p, owner);
    ++lowered;
  }
  return lowered;
}

}  // namespace ferry
