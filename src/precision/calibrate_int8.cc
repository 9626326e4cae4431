// precision/calibrate_int8.cc — see calibrate_int8.h.
#include "precision/calibrate_int8.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "precision/activation_histogram.h"

namespace ferry {
namespace {

/// Every value one int8 node's input 0 took, over the samples.
struct Observed {
  std::vector<float> values;  ///< percentile only
  ActivationHistogram hist;   ///< entropy and mse only
  float lo = 0, hi = 0;       ///< include 0
};

void observe(Observed& o, const Tensor& t, Int8Observer how) {
  if (t.dtype() != DType::f32) return;
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (!std::isfinite(p[i])) continue;
    o.lo = std::min(o.lo, p[i]);
    o.hi = std::max(o.hi, p[i]);
  }
  if (how == Int8Observer::percentile) o.values.insert(o.values.end(), p, p + t.numel());
  if (how == Int8Observer::entropy || how == Int8Observer::mse) o.hist.add(p, t.numel());
}

float percentile(std::vector<float>& v, double q) {
  const size_t k = size_t(std::llround(q * double(v.size() - 1)));
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
  return v[k];
}

ActivationQuant quant_of(Observed& o, Int8Observer how) {
  float lo = o.lo, hi = o.hi;
  if (how == Int8Observer::percentile && !o.values.empty()) {
    lo = std::min(0.0f, percentile(o.values, 1e-4));
    hi = std::max(0.0f, percentile(o.values, 1.0 - 1e-4));
  }
  if (how == Int8Observer::entropy) std::tie(lo, hi) = o.hist.entropy_range();
  if (how == Int8Observer::mse) std::tie(lo, hi) = o.hist.mse_range();
  ActivationQuant a;
  a.scale = double(hi == lo ? 1.0f : (hi - lo) / 255.0f);
  a.zero_point = int64_t(std::clamp(std::nearbyint(-double(lo) / a.scale), 0.0, 255.0));
  return a;
}

}  // namespace

Result<Int8Observer> parse_int8_observer(const std::string& name) {
  if (name == "minmax") return Int8Observer::minmax;
  if (name == "percentile") return Int8Observer::percentile;
  if (name == "entropy") return Int8Observer::entropy;
  if (name == "mse") return Int8Observer::mse;
  return invalid_argument("unknown int8 observer '" + name + "' (observers: " + int8_observer_names() + ")");
}

const char* int8_observer_name(Int8Observer o) {
  switch (o) {
    case Int8Observer::minmax: return "minmax";
    case Int8Observer::percentile: return "percentile";
    case Int8Observer::entropy: return "entropy";
    case Int8Observer::mse: return "mse";
  }
  return "?";
}

const char* int8_observer_names() { return "minmax, percentile, entropy, mse"; }

bool needs_int8_calibration(const PrecisionReport& report) {
  for (const NodePrecision& d : report.nodes)
    if (d.precision == DType::i8 && d.act_scale <= 0) return true;
  return false;
}

std::map<std::string, ActivationQuant> activation_quant(const PrecisionReport& report) {
  std::map<std::string, ActivationQuant> out;
  for (const NodePrecision& d : report.nodes)
    if (d.precision == DType::i8) out[d.node] = {d.act_scale, d.act_zero_point, d.res_scale, d.res_zero_point};
  return out;
}

Status calibrate_int8(const Graph& g, PrecisionReport& report, const std::vector<std::map<std::string, Tensor>>& samples,
                      Int8Observer how, const std::string& samples_from, const GraphRunner& runner) {
  if (samples.empty()) return invalid_argument("int8 calibration: no calibration samples");
  // The value each int8 node quantizes (its input 0), and who observes it.
  std::map<const Value*, Observed> seen;
  std::map<std::string, const Value*> input_of, residual_of;
  for (const NodePrecision& d : report.nodes) {
    const Node* n = d.precision == DType::i8 ? g.find_node(d.node) : nullptr;
    if (!n || n->num_inputs() == 0 || !n->input(0)) continue;
    input_of[d.node] = n->input(0);
    seen[n->input(0)];
    // A FusedConv's computed residual: emulate_precision.h may read it quantized.
    const Value* z = n->op() == Op::FusedConv && n->num_inputs() > 3 ? n->input(3) : nullptr;
    if (z && !z->is_constant() && z->dtype() == DType::f32) seen[residual_of[d.node] = z];
  }
  for (size_t s = 0; s < samples.size(); ++s)
    for (auto& [v, o] : seen) {  // values no node produces: graph inputs and constants
      if (v->is_graph_input() && samples[s].count(v->name())) observe(o, samples[s].at(v->name()), how);
      if (v->is_constant()) observe(o, *v->constant(), how);
    }
  const ValueSink sink = [&](const Value& v, const Tensor& t) {
    if (v.producer())  // a runner may report the inputs too: those are observed above
      if (auto it = seen.find(&v); it != seen.end()) observe(it->second, t, how);
  };
  auto out = runner ? runner(g, samples, sink) : run_on_interpreter(g, samples, sink);
  if (!out.ok()) return out.status().with_context("int8 calibration: the fp32 run");
  for (NodePrecision& d : report.nodes) {
    auto it = input_of.find(d.node);
    if (it == input_of.end()) continue;
    const ActivationQuant a = quant_of(seen[it->second], how);
    d.act_scale = a.scale;
    d.act_zero_point = a.zero_point;
    char num[64];
    std::snprintf(num, sizeof num, "scale %.4g, zero point %lld", a.scale, static_cast<long long>(a.zero_point));
    d.reason += std::string("; input 0 calibrated (") + int8_observer_name(how) + " on " + samples_from + "): " + num;
    if (auto r = residual_of.find(d.node); r != residual_of.end()) {
      const ActivationQuant z = quant_of(seen[r->second], how);
      d.res_scale = z.scale;
      d.res_zero_point = z.zero_point;
    }
  }
  return Status::Ok();
}

}  // namespace ferry
