#include "analysis/model_stats.h"

#include <algorithm>
#include <limits>

#include "ir/op_attrs.h"
#include "ir/op_facts.h"

namespace ferry {
namespace {

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

/// a * b, saturating at INT64_MAX (FLOP counts of absurd shapes must not wrap).
int64_t mul_sat(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return kSaturated;
  return r;
}
int64_t add_sat(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return kSaturated;
  return r;
}

/// Evaluates dims, counting symbolic and unknown dims as 1 and remembering which.
class DimEval {
 public:
  explicit DimEval(std::set<std::string>* assumed) : assumed_(assumed) {}

  int64_t dim(const Dim& d) {
    if (d.is_static()) return d.value();
    if (assumed_) assumed_->insert(d.is_symbol() ? d.symbol() : "?");
    return 1;
  }
  /// Product of dims [from, to) of a shape of known rank.
  std::optional<int64_t> product(const Shape& s, int64_t from = 0, int64_t to = -1) {
    if (!s.rank_known()) return std::nullopt;
    if (to < 0) to = s.rank();
    int64_t n = 1;
    for (int64_t i = from; i < to; ++i) n = mul_sat(n, dim(s[size_t(i)]));
    return n;
  }
  std::optional<int64_t> numel(const Value* v) { return v ? product(v->shape()) : std::nullopt; }

 private:
  std::set<std::string>* assumed_;
};

/// Shape of input i; unknown rank when the input is omitted (graphs that skipped the verifier).
const Shape& shape_of(const Node& n, size_t i) {
  static const Shape kUnknown;
  return n.input(i) ? n.input(i)->shape() : kUnknown;
}

std::optional<int64_t> conv_flops(const Node& n, DimEval& ev, bool transposed) {
  const Shape& x = shape_of(n, 0);
  const Shape& w = shape_of(n, 1);
  const Shape& y = n.output(0)->shape();
  if (!w.rank_known() || w.rank() < 2) return std::nullopt;
  // Weights: Conv [Cout, Cin/g, k...]; ConvTranspose [Cin, Cout/g, k...].
  int64_t per_output = mul_sat(ev.dim(w[1]), *ev.product(w, 2));
  std::optional<int64_t> points;  // Conv: every output point; ConvTranspose: every input point
  if (transposed) {
    if (!x.rank_known() || x.rank() != w.rank()) return std::nullopt;
    points = ev.product(x);  // N * Cin * in spatial
  } else {
    if (!y.rank_known() || y.rank() != w.rank()) return std::nullopt;
    points = ev.product(y);  // N * Cout * out spatial
  }
  int64_t flops = mul_sat(2, mul_sat(*points, per_output));
  if (n.has_input(2)) {
    auto out = ev.numel(n.output(0));
    if (!out) return std::nullopt;
    flops = add_sat(flops, *out);
  }
  return flops;
}

std::optional<int64_t> gemm_flops(const Node& n, DimEval& ev) {
  const Shape& a = shape_of(n, 0);
  const Shape& y = n.output(0)->shape();
  if (!a.rank_known() || a.rank() != 2 || !y.rank_known() || y.rank() != 2) return std::nullopt;
  int64_t k = ev.dim(a[n.attrs<GemmAttrs>().transA ? 0 : 1]);
  int64_t mn = *ev.product(y);
  int64_t flops = mul_sat(2, mul_sat(mn, k));
  return n.has_input(2) ? add_sat(flops, mn) : flops;
}

std::optional<int64_t> matmul_flops(const Node& n, DimEval& ev) {
  const Shape& a = shape_of(n, 0);
  auto out = ev.numel(n.output(0));
  if (!a.rank_known() || a.rank() < 1 || !out) return std::nullopt;
  int64_t k = ev.dim(a[size_t(a.rank() - 1)]);
  return mul_sat(2, mul_sat(*out, k));
}

/// operands * prod(size of every index letter): the naive evaluation's cost.
std::optional<int64_t> einsum_flops(const Node& n, DimEval& ev) {
  if (!n.has_attr("equation")) return std::nullopt;  // required: only a graph the verifier did not see lacks it
  const std::string& eq = n.attrs<EinsumAttrs>().equation;
  if (eq.find("...") != std::string::npos) return std::nullopt;  // ellipsis: not modelled
  std::string lhs = eq.substr(0, eq.find("->"));
  std::map<char, int64_t> sizes;
  size_t operand = 0, axis = 0;
  for (char c : lhs) {
    if (c == ' ') continue;
    if (c == ',') {
      ++operand;
      axis = 0;
      continue;
    }
    if (operand >= n.num_inputs() || !n.input(operand)) return std::nullopt;
    const Shape& s = shape_of(n, operand);
    if (!s.rank_known() || axis >= size_t(s.rank())) return std::nullopt;
    int64_t d = ev.dim(s[axis++]);
    sizes[c] = std::max(sizes[c], d);  // a broadcast 1 meets the real size
  }
  int64_t prod = 1;
  for (const auto& [c, d] : sizes) prod = mul_sat(prod, d);
  return mul_sat(int64_t(n.num_inputs()), prod);
}

std::optional<int64_t> per_output_element(const Node& n, DimEval& ev, int64_t per) {
  auto out = ev.numel(n.output(0));
  if (!out) return std::nullopt;
  return mul_sat(*out, per);
}

std::optional<int64_t> per_input_element(const Node& n, DimEval& ev, int64_t per) {
  auto in = ev.numel(n.input(0));
  if (!in) return std::nullopt;
  return mul_sat(*in, per);
}

/// The product plus one operation per output element for each of Z, the activation
/// and (FusedMatMul) the bias.
std::optional<int64_t> fused_flops(const Node& n, DimEval& ev, std::optional<int64_t> core, bool has_bias_add) {
  const std::string& activation = n.op() == Op::FusedMatMul ? n.attrs<FusedMatMulAttrs>().activation
                                  : n.op() == Op::FusedConv ? n.attrs<FusedConvAttrs>().activation
                                                            : n.attrs<FusedConvTransposeAttrs>().activation;
  int64_t per = int64_t(n.has_input(3)) + int64_t(!activation.empty()) + int64_t(has_bias_add);
  auto epilogue = per_output_element(n, ev, per);
  if (!core || !epilogue) return std::nullopt;
  return add_sat(*core, *epilogue);
}

/// MaxPool, AveragePool, LpPool: the window's size per output element.
std::optional<int64_t> pool_window_flops(const Node& n, DimEval& ev) {
  if (!n.has_attr("kernel_shape")) return std::nullopt;  // required (see einsum_flops)
  const std::vector<int64_t>& kernel = n.op() == Op::MaxPool       ? n.attrs<MaxPoolAttrs>().kernel_shape
                                       : n.op() == Op::AveragePool ? n.attrs<AveragePoolAttrs>().kernel_shape
                                                                   : n.attrs<LpPoolAttrs>().kernel_shape;
  int64_t window = 1;
  for (int64_t k : kernel) window = mul_sat(window, std::max<int64_t>(k, 0));
  return per_output_element(n, ev, window);
}

}  // namespace

std::optional<int64_t> estimate_node_flops(const Node& n, std::set<std::string>* assumed_one) {
  DimEval ev(assumed_one);
  const FlopModel& m = op_facts(n.op()).flops;
  const int64_t inputs = int64_t(n.num_inputs());
  switch (m.cls) {
    case FlopClass::no_model: return std::nullopt;  // e.g. a newer fused op
    case FlopClass::zero: return 0;                 // data movement, shape computation, type conversion
    case FlopClass::per_out: return per_output_element(n, ev, m.per_element);
    case FlopClass::per_in: return per_input_element(n, ev, m.per_element);
    case FlopClass::conv: return conv_flops(n, ev, false);
    case FlopClass::conv_transpose: return conv_flops(n, ev, true);
    case FlopClass::gemm: return gemm_flops(n, ev);
    case FlopClass::matmul: return matmul_flops(n, ev);
    case FlopClass::einsum: return einsum_flops(n, ev);
    case FlopClass::fused_conv: return fused_flops(n, ev, conv_flops(n, ev, false), false);
    case FlopClass::fused_conv_transpose: return fused_flops(n, ev, conv_flops(n, ev, true), false);
    case FlopClass::fused_matmul: return fused_flops(n, ev, matmul_flops(n, ev), n.has_input(2));
    case FlopClass::pool_window: return pool_window_flops(n, ev);
    case FlopClass::lrn:
      if (!n.has_attr("size")) return std::nullopt;  // required (see einsum_flops)
      return per_output_element(n, ev, add_sat(std::max<int64_t>(n.attrs<LRNAttrs>().size, 0), 3));
    case FlopClass::variadic: return per_output_element(n, ev, std::max<int64_t>(inputs - 1, 0));
    case FlopClass::variadic_mean: return per_output_element(n, ev, inputs);  // n-1 additions and a division
  }
  return std::nullopt;
}

ModelStats compute_model_stats(const Graph& g) {
  ModelStats s;
  for (const Value* v : g.inputs()) s.inputs.push_back({v->name(), v->dtype(), v->shape()});
  for (const Value* v : g.outputs()) s.outputs.push_back({v->name(), v->dtype(), v->shape()});
  for (const Value* v : g.values()) {
    if (!v->is_constant()) continue;
    ++s.num_constants;
    s.parameter_count = add_sat(s.parameter_count, v->constant()->numel());
    s.parameter_bytes = add_sat(s.parameter_bytes, int64_t(v->constant()->nbytes()));
  }
  auto order = g.topo_order();
  std::vector<Node*> nodes = order.ok() ? *order : g.nodes();
  s.num_nodes = int64_t(nodes.size());
  for (const Node* n : nodes) {
    ++s.op_histogram[op_name(n->op())];
    std::set<std::string> assumed;
    auto flops = estimate_node_flops(*n, &assumed);
    s.node_flops.push_back({n, flops});
    if (!flops) {
      s.nodes_without_estimate.push_back(n->describe());
      continue;
    }
    s.assumed_one.insert(assumed.begin(), assumed.end());
    s.total_flops = add_sat(s.total_flops, *flops);
    s.flops_by_op[op_name(n->op())] = add_sat(s.flops_by_op[op_name(n->op())], *flops);
  }
  return s;
}

std::string ModelStats::flops_assumption() const {
  std::string text = "multiply-add = 2 FLOPs";
  std::string names;
  for (const std::string& d : assumed_one)
    if (d != "?") names += (names.empty() ? "" : ", ") + d;
  bool unknown = assumed_one.count("?") != 0;
  if (!names.empty() || unknown) {
    std::string what = names.empty() ? "" : "symbolic dims " + names;
    if (unknown) what += names.empty() ? "unknown dims" : " and unknown dims";
    text += "; " + what + " counted as 1 (batch = 1)";
  }
  if (!nodes_without_estimate.empty())
    text += "; " + std::to_string(nodes_without_estimate.size()) +
            " node(s) without an estimate, so the total is a lower bound";
  return text;
}

}  // namespace ferry
