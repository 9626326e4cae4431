#include "passes/fusion_util.h"

#include <cmath>
#include <limits>

#include "ir/op_attrs.h"

namespace ferry {

std::optional<Op> fused_op_of(Op op) {
  switch (op) {
    case Op::Conv: case Op::FusedConv: return Op::FusedConv;
    case Op::ConvTranspose: case Op::FusedConvTranspose: return Op::FusedConvTranspose;
    case Op::MatMul: case Op::FusedMatMul: return Op::FusedMatMul;
    case Op::Mul: case Op::FusedMul: return Op::FusedMul;
    default: return std::nullopt;
  }
}

bool is_conv_family(Op op) {
  return op == Op::Conv || op == Op::ConvTranspose || op == Op::FusedConv || op == Op::FusedConvTranspose;
}

std::optional<std::vector<double>> per_channel_values(const Tensor& t, int64_t rank, int64_t axis, int64_t count) {
  if (t.rank() > rank || axis < 0 || axis >= rank) return std::nullopt;
  const int64_t t_axis = axis - (rank - t.rank());  // axis in t's own dims; < 0: t does not reach it
  int64_t along = 1;
  for (int64_t i = 0; i < t.rank(); ++i) {
    if (i == t_axis) along = t.dim(i);
    else if (t.dim(i) != 1) return std::nullopt;
  }
  if (along != 1 && along != count) return std::nullopt;
  std::vector<double> v(static_cast<size_t>(count));
  for (int64_t c = 0; c < count; ++c) v[size_t(c)] = t.get_double(along == 1 ? 0 : c);
  return v;
}

std::string not_per_channel_reason(const char* op, const Tensor& t) {
  return std::string(op) + " operand is not a per-output-channel constant: shape " + t.shape().to_string();
}

bool broadcasts_into(const Shape& v, const Shape& out) {
  if (!v.rank_known() || !out.rank_known() || v.rank() > out.rank()) return false;
  const size_t off = size_t(out.rank() - v.rank());
  for (size_t i = 0; i < size_t(v.rank()); ++i) {
    const Dim &d = v[i], &o = out[off + i];
    if (d.is_static() && d.value() == 1) continue;
    if (!(d == o) || !(d.is_static() || d.is_symbol())) return false;  // out's own dim, not just unknown
  }
  return true;
}

std::string single_use_problem(const Graph& g, const Value* v, const Node& producer) {
  const std::string what = std::string(op_name(producer.op())) + " output";
  if (g.is_graph_output(v)) return what + " is a graph output";
  if (v->uses().size() != 1) return what + " has " + std::to_string(v->uses().size()) + " consumers";
  return "";
}

namespace {

/// A Clip bound: -inf / +inf when omitted; nullopt (with *why) when it is not one constant that f32 holds exactly.
std::optional<double> clip_bound(const Node& clip, size_t i, std::string* why) {
  const char* what = i == 1 ? "min" : "max";
  if (!clip.has_input(i)) return i == 1 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  const Tensor* t = clip.input(i)->constant();
  if (!t || t->numel() != 1) {
    *why = std::string("Clip ") + what + " is not a constant scalar";
    return std::nullopt;
  }
  const double v = t->get_double(0);
  // The epilogue's alpha/beta are f32 in ONNX files: only bounds f32 holds exactly fuse.
  if (!std::isnan(v) && double(float(v)) != v) {
    *why = std::string("Clip ") + what + " " + std::to_string(v) + " is not exactly representable as f32";
    return std::nullopt;
  }
  return v;
}

}  // namespace

std::optional<EpilogueActivation> epilogue_activation(const Node& n, std::string* why) {
  switch (n.op()) {
    case Op::Relu: return EpilogueActivation{Activation::kRelu};
    case Op::Sigmoid: return EpilogueActivation{Activation::kSigmoid};
    case Op::HardSwish: return EpilogueActivation{Activation::kHardSwish};
    case Op::Tanh: return EpilogueActivation{Activation::kTanh};
    case Op::LeakyRelu: return EpilogueActivation{Activation::kLeakyRelu, n.attrs<LeakyReluAttrs>().alpha};
    case Op::HardSigmoid:
      return EpilogueActivation{Activation::kHardSigmoid, n.attrs<HardSigmoidAttrs>().alpha,
                                n.attrs<HardSigmoidAttrs>().beta};
    case Op::Gelu:
      return EpilogueActivation{n.attrs<GeluAttrs>().approximate == "tanh" ? Activation::kGeluTanh : Activation::kGelu};
    case Op::Swish:
      if (n.attrs<SwishAttrs>().alpha == 1.0) return EpilogueActivation{Activation::kSiLU};
      *why = "Swish with alpha " + std::to_string(n.attrs<SwishAttrs>().alpha) + " is not SiLU (alpha 1)";
      return std::nullopt;
    case Op::Clip: {
      auto lo = clip_bound(n, 1, why);
      if (!lo) return std::nullopt;
      auto hi = clip_bound(n, 2, why);
      if (!hi) return std::nullopt;
      return EpilogueActivation{Activation::kClip, *lo, *hi};
    }
    default: return std::nullopt;
  }
}

Node* rebuild_fused(Rewriter& rw, const Node& n, std::vector<Value*> inputs, const AttrMap& set,
                    const std::vector<const Node*>& from) {
  AttrMap attrs = n.attrs();
  for (const auto& [name, value] : set.all()) attrs.set(name, value);
  while (!inputs.empty() && !inputs.back()) inputs.pop_back();  // trailing omitted inputs
  // Named after the source node it started from (conv1 -> conv1_1), not after each intermediate.
  const std::string& base = n.provenance().empty() ? n.name() : n.provenance().front();
  return rw.create(*fused_op_of(n.op()), std::move(inputs), 1, std::move(attrs), from, base);
}

}  // namespace ferry
