#include "analysis/model_stats.h"

#include <limits>

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
  int64_t k = ev.dim(a[n.attr_int("transA") ? 0 : 1]);
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
  if (!n.has_attr("equation")) return std::nullopt;
  const std::string& eq = n.attr_string("equation");
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

}  // namespace

std::optional<int64_t> estimate_node_flops(const Node& n, std::set<std::string>* assumed_one) {
  DimEval ev(assumed_one);
  switch (n.op()) {
    case Op::Conv: return conv_flops(n, ev, false);
    case Op::ConvTranspose: return conv_flops(n, ev, true);
    case Op::Gemm: return gemm_flops(n, ev);
    case Op::MatMul: return matmul_flops(n, ev);
    case Op::Einsum: return einsum_flops(n, ev);
    // Fused ops: the product (with B) plus one operation per output element for each of Z and the activation.
    case Op::FusedConv:
    case Op::FusedConvTranspose:
    case Op::FusedMatMul: {
      auto core = n.op() == Op::FusedMatMul ? matmul_flops(n, ev) : conv_flops(n, ev, n.op() == Op::FusedConvTranspose);
      int64_t per = int64_t(n.has_input(3)) + int64_t(!n.attr_string("activation").empty()) +
                    int64_t(n.op() == Op::FusedMatMul && n.has_input(2));
      auto epilogue = per_output_element(n, ev, per);
      if (!core || !epilogue) return std::nullopt;
      return add_sat(*core, *epilogue);
    }

    case Op::MaxPool:
    case Op::AveragePool: {
      if (!n.has_attr("kernel_shape")) return std::nullopt;
      int64_t window = 1;
      for (int64_t k : n.attr_ints("kernel_shape")) window = mul_sat(window, std::max<int64_t>(k, 0));
      return per_output_element(n, ev, window);
    }
    case Op::GlobalAveragePool:
    case Op::GlobalMaxPool: return per_input_element(n, ev, 1);

    case Op::BatchNormalization: return per_output_element(n, ev, 2);
    case Op::InstanceNormalization:
    case Op::LayerNormalization:
    case Op::GroupNormalization: return per_output_element(n, ev, 7);
    case Op::LRN:
      if (!n.has_attr("size")) return std::nullopt;
      return per_output_element(n, ev, add_sat(std::max<int64_t>(n.attr_int("size"), 0), 3));

    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Pow: case Op::Mod:
    case Op::PRelu: case Op::Equal: case Op::Less: case Op::LessOrEqual: case Op::Greater:
    case Op::GreaterOrEqual: case Op::And: case Op::Or: case Op::Xor: case Op::Where:
      return per_output_element(n, ev, 1);
    case Op::Min: case Op::Max: case Op::Sum:
      return per_output_element(n, ev, std::max<int64_t>(int64_t(n.num_inputs()) - 1, 0));
    case Op::Mean:  // n-1 additions and a division
      return per_output_element(n, ev, int64_t(n.num_inputs()));

    case Op::Abs: case Op::Neg: case Op::Sqrt: case Op::Reciprocal: case Op::Exp: case Op::Log:
    case Op::Erf: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Sigmoid: case Op::Relu:
    case Op::LeakyRelu: case Op::Elu: case Op::Selu: case Op::Celu: case Op::HardSigmoid:
    case Op::HardSwish: case Op::Softplus: case Op::Softsign: case Op::Gelu: case Op::Mish:
    case Op::Floor: case Op::Ceil: case Op::Round: case Op::Sign: case Op::Not: case Op::IsNaN:
    case Op::IsInf: case Op::Clip:
      return per_output_element(n, ev, 1);

    case Op::Softmax:
    case Op::LogSoftmax: return per_output_element(n, ev, 5);  // max, subtract, exp, sum, divide
    case Op::ReduceMean: case Op::ReduceSum: case Op::ReduceMax: case Op::ReduceMin: case Op::ReduceProd:
    case Op::ReduceL1: case Op::ReduceL2: case Op::ReduceSumSquare: case Op::ReduceLogSumExp:
    case Op::ArgMax: case Op::ArgMin: case Op::CumSum: case Op::TopK:
      return per_input_element(n, ev, 1);
    case Op::Resize: return per_output_element(n, ev, 1);

    // Data movement, shape computation and type conversion: no arithmetic.
    case Op::Cast: case Op::CastLike: case Op::Identity: case Op::Dropout: case Op::Reshape:
    case Op::Flatten: case Op::Transpose: case Op::Squeeze: case Op::Unsqueeze: case Op::Concat:
    case Op::Split: case Op::Slice: case Op::Gather: case Op::GatherElements: case Op::GatherND:
    case Op::ScatterND: case Op::ScatterElements: case Op::Expand: case Op::Tile: case Op::Pad:
    case Op::Shape: case Op::Size: case Op::ConstantOfShape: case Op::Range: case Op::OneHot:
    case Op::DepthToSpace: case Op::SpaceToDepth: case Op::NonZero: case Op::Trilu:
      return 0;
    default:
      return std::nullopt;  // an op without a FLOP model (e.g. a newer fused op)
  }
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
