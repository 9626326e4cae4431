#include "validate/validate_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace ferry::validate {
namespace {

using Json = nlohmann::ordered_json;

constexpr DType kTolDtypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16};

/// Rows of cells, printed with each column padded to its widest cell.
std::string render(const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], r[c].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line = indent;
    for (size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string fraction(double f, int64_t rows) {
  return std::to_string(int64_t(std::llround(f * double(rows)))) + "/" + std::to_string(rows);
}

std::vector<std::string> comparison_cells(const Comparison& c) {
  const TensorMetrics& m = c.metrics;
  std::string top1 = "-", top5 = "-";
  if (m.classifier) {
    top1 = fraction(m.classifier->top1, m.classifier->rows);
    top5 = fraction(m.classifier->top5, m.classifier->rows);
  }
  bool measured = c.got_dims == c.ref_dims && m.numel > 0;
  auto metric = [&](double v) { return measured ? format_metric(v) : std::string("-"); };
  std::string cosine = "-";
  if (measured) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", m.cosine);
    cosine = buf;
  }
  return {dtype_name(c.got_dtype),
          dims_string(c.got_dims),
          metric(m.max_abs),
          metric(m.mean_abs),
          metric(m.max_rel),
          metric(m.rmse),
          cosine,
          top1,
          top5,
          metric(m.worst_ratio),
          c.pass ? "ok" : "FAIL"};
}

const std::vector<std::string> kMetricHeader = {"dtype",  "shape", "max_abs", "mean_abs",  "max_rel", "rmse",
                                                "cosine", "top1",  "top5",    "worst/tol", "status"};

/// An output's row: the elementwise cells, and under a budget the count beyond the
/// tolerance (information), the budget terms' values and the budget's verdict.
std::vector<std::string> result_cells(const Comparison& c, const std::optional<BudgetCheck>& b, bool budget_rule) {
  std::vector<std::string> cells = comparison_cells(c);
  if (!budget_rule) return cells;
  const TensorMetrics& m = c.metrics;
  cells.pop_back();
  cells.push_back(m.numel > 0 ? std::to_string(m.out_of_tolerance) + "/" + std::to_string(m.numel) : "-");
  cells.push_back(b ? b->values() : "-");
  cells.push_back((b ? b->pass : c.pass) ? "ok" : "FAIL");
  return cells;
}

std::vector<std::string> metric_header(bool budget_rule) {
  std::vector<std::string> h = kMetricHeader;
  if (budget_rule) h.insert(h.end() - 1, {"beyond tol", "budget"});
  return h;
}

std::string tolerance_line(const ToleranceTable& t) {
  std::string s;
  for (DType d : kTolDtypes) {
    Tolerance tol = t.get(d);
    s += std::string(s.empty() ? "" : "; ") + dtype_name(d) + " atol " + format_metric(tol.atol) + " rtol " +
         format_metric(tol.rtol);
  }
  return s + "; integers and bool exact";
}

std::string describe_layer(const LayerResult& l) {
  std::string s = "node '" + l.node_name + "' (" + l.op + "), output '" + l.value_name + "'";
  if (l.match.reference != l.value_name) s += " (reference tensor '" + l.match.reference + "', by " + l.match.via + ")";
  return s;
}

Json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

Json comparison_json(const Comparison& c) {
  Json j;
  j["pass"] = c.pass;
  j["problem"] = c.problem.empty() ? Json(nullptr) : Json(c.problem);
  j["dtype"] = dtype_name(c.got_dtype);
  j["reference_dtype"] = dtype_name(c.ref_dtype);
  j["shape"] = c.got_dims;
  j["reference_shape"] = c.ref_dims;
  j["atol"] = number(c.tol.atol);
  j["rtol"] = number(c.tol.rtol);
  const TensorMetrics& m = c.metrics;
  if (c.got_dims != c.ref_dims || (m.numel == 0 && !c.pass)) {
    j["metrics"] = nullptr;
    return j;
  }
  Json mj;
  mj["numel"] = m.numel;
  mj["compared"] = m.compared;
  mj["max_abs"] = number(m.max_abs);
  mj["mean_abs"] = number(m.mean_abs);
  mj["max_rel"] = number(m.max_rel);
  mj["rmse"] = number(m.rmse);
  mj["cosine"] = number(m.cosine);
  mj["worst_ratio"] = number(m.worst_ratio);
  mj["worst_index"] = m.worst_index;
  mj["worst_value"] = number(m.worst_got);
  mj["worst_reference"] = number(m.worst_ref);
  mj["out_of_tolerance"] = m.out_of_tolerance;
  mj["nonfinite_mismatch"] = m.nonfinite_mismatch;
  mj["nan"] = m.got_nan;
  mj["inf"] = m.got_inf;
  mj["reference_nan"] = m.ref_nan;
  mj["reference_inf"] = m.ref_inf;
  if (m.classifier) {
    mj["top1_agreement"] = number(m.classifier->top1);
    mj["top5_agreement"] = number(m.classifier->top5);
    mj["rows"] = m.classifier->rows;
  } else {
    mj["top1_agreement"] = nullptr;
    mj["top5_agreement"] = nullptr;
  }
  j["metrics"] = mj;
  return j;
}

/// The comparison; judged by a budget, "pass" and "problem" are the budget's, the elementwise
/// ones move to "elementwise_pass" / "elementwise_problem", and "budget" holds the terms.
Json verdict_json(const Comparison& c, const std::optional<BudgetCheck>& b) {
  Json j = comparison_json(c);
  if (!b) {
    j["budget"] = nullptr;
    return j;
  }
  j["elementwise_pass"] = c.pass;
  j["elementwise_problem"] = c.problem.empty() ? Json(nullptr) : Json(c.problem);
  j["pass"] = b->pass;
  j["problem"] = b->problem.empty() ? Json(nullptr) : Json(b->problem);
  j["budget"] = budget_check_json(*b);
  return j;
}

Json layer_json(const LayerResult& l, size_t index) {
  Json j;
  j["index"] = index;
  j["node"] = l.node_name;
  j["op"] = l.op;
  j["provenance"] = l.provenance;
  j["tensor"] = l.value_name;
  j["reference_tensor"] = l.match.reference;
  j["matched_by"] = l.match.via;
  j.update(comparison_json(l.cmp));
  return j;
}

}  // namespace

std::string format_metric(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string format_report(const ValidationReport& r) {
  std::ostringstream out;
  out << "model      " << r.model << "\n";
  out << "subject    " << r.subject << "\n";
  out << "reference  " << r.reference_spec;
  if (!r.reference_producer.empty() && r.reference_producer != r.reference_spec)
    out << " (" << r.reference_producer << ")";
  out << "\n";
  if (r.budget) out << "verdict    " << r.budget->describe() << "\n";
  out << "tolerance  " << (r.budget ? "elementwise, for information: " : "") << "|got - ref| <= atol + rtol*|ref|: "
      << tolerance_line(r.tolerances) << "\n";
  const bool by_budget = r.budget.has_value();
  int64_t failed_samples = 0, diverged_samples = 0;
  size_t outputs_total = 0, outputs_failed = 0;
  bool budget_failed = false;
  for (const SampleResult& s : r.samples) {
    failed_samples += !s.pass;
    bool random = false;  // the seed matters only when some input is random
    for (const InputDescription& i : s.inputs) random |= i.source.rfind("from ", 0) != 0;
    out << "\nsample " << s.index;
    if (random) out << " (seed " << s.seed << ")";
    out << "\n";
    std::vector<std::vector<std::string>> in_rows;
    for (const InputDescription& i : s.inputs) in_rows.push_back({i.name, i.type, i.source});
    if (!in_rows.empty()) out << "  inputs\n" << render(in_rows, "    ");
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> header = {"output"};
    for (const std::string& h : metric_header(by_budget)) header.push_back(h);
    rows.push_back(header);
    std::vector<std::string> problems;
    for (const OutputResult& o : s.outputs) {
      ++outputs_total;
      outputs_failed += !o.pass();
      budget_failed |= o.budget && !o.budget->pass;
      std::vector<std::string> row = {o.name};
      auto cells = result_cells(o.cmp, o.budget, by_budget);
      row.insert(row.end(), cells.begin(), cells.end());
      rows.push_back(row);
      if (!o.pass()) problems.push_back("output '" + o.name + "': " + (o.budget ? o.budget->problem : o.cmp.problem));
      else if (o.budget && !o.cmp.pass)
        problems.push_back("output '" + o.name + "': " + o.cmp.problem + " (elementwise, for information)");
    }
    out << render(rows, "  ");
    for (const std::string& p : problems) out << "  " << p << "\n";
    if (s.per_layer) {
      const PerLayerResult& pl = *s.per_layer;
      out << "  per-layer: " << pl.layers.size() << " of " << pl.node_outputs
          << " node outputs compared with a reference tensor"
          << (by_budget ? " (elementwise, for information: the outputs' budget decides)" : "");
      if (const LayerResult* d = pl.first_divergence()) {
        ++diverged_samples;
        out << "\n  first divergent " << describe_layer(*d) << "\n";
        if (!d->provenance.empty()) {
          std::string prov;
          for (const std::string& p : d->provenance) prov += (prov.empty() ? "" : ", ") + p;
          out << "    source node(s): " << prov << "\n";
        }
        out << "    " << d->cmp.problem << "\n";
        std::vector<std::vector<std::string>> drows = {kMetricHeader, comparison_cells(d->cmp)};
        out << render(drows, "    ");
        const TensorMetrics& m = d->cmp.metrics;
        if (m.worst_index >= 0)
          out << "    worst element: index " << m.worst_index << ", got " << format_metric(m.worst_got)
              << ", reference " << format_metric(m.worst_ref) << "\n";
        if (pl.first_divergent > 0)
          out << "    last agreeing before it: " << describe_layer(pl.layers[size_t(pl.first_divergent - 1)]) << "\n";
      } else {
        out << "; all within tolerance\n";
      }
      for (const std::string& n : pl.notes) out << "  note: " << n << "\n";
    }
    for (const std::string& n : s.notes) out << "  note: " << n << "\n";
  }
  for (const std::string& n : r.notes) out << "note: " << n << "\n";
  out << "\n";
  const size_t n = r.samples.size();
  const std::string within = by_budget ? "within the accuracy budget " + r.budget->budget.text() : "within tolerance";
  if (r.pass()) {
    out << "PASS: " << outputs_total << " output comparison" << (outputs_total == 1 ? "" : "s") << " over " << n
        << " sample" << (n == 1 ? "" : "s") << " " << within << "\n";
  } else {
    out << "FAIL: " << failed_samples << " of " << n << " sample" << (n == 1 ? "" : "s") << " failed ("
        << outputs_failed << " of " << outputs_total << " output comparisons "
        << (by_budget ? "beyond the accuracy budget" : "out of tolerance");
    if (diverged_samples && !by_budget)
      out << "; an intermediate diverged in " << diverged_samples << " sample" << (diverged_samples == 1 ? "" : "s");
    out << ")\n";
    if (by_budget && budget_failed && !r.budget->advice(r.model).empty())
      out << "what to do: " << r.budget->advice(r.model) << "\n";
  }
  return out.str();
}

Json report_json(const ValidationReport& r, const std::string& ferry_version) {
  Json j;
  j["ferry_version"] = ferry_version;
  j["model"] = r.model;
  j["subject"] = r.subject;
  j["reference"] = {{"spec", r.reference_spec}, {"producer", r.reference_producer}};
  Json tols = Json::object();
  for (DType d : kTolDtypes)
    tols[dtype_name(d)] = {{"atol", number(r.tolerances.get(d).atol)}, {"rtol", number(r.tolerances.get(d).rtol)}};
  j["tolerances"] = tols;
  j["verdict"] = r.budget ? budget_rule_json(*r.budget, r.model) : Json({{"rule", "elementwise"}});
  j["per_layer"] = r.per_layer;
  j["pass"] = r.pass();
  j["notes"] = r.notes;
  Json samples = Json::array();
  for (const SampleResult& s : r.samples) {
    Json sj;
    sj["index"] = s.index;
    sj["seed"] = s.seed;
    sj["pass"] = s.pass;
    sj["notes"] = s.notes;
    Json inputs = Json::array();
    for (const InputDescription& i : s.inputs)
      inputs.push_back({{"name", i.name}, {"type", i.type}, {"source", i.source}});
    sj["inputs"] = inputs;
    Json outputs = Json::array();
    for (const OutputResult& o : s.outputs) {
      Json oj;
      oj["name"] = o.name;
      oj.update(verdict_json(o.cmp, o.budget));
      outputs.push_back(oj);
    }
    sj["outputs"] = outputs;
    if (s.per_layer) {
      const PerLayerResult& pl = *s.per_layer;
      Json pj;
      pj["node_outputs"] = pl.node_outputs;
      pj["compared"] = pl.layers.size();
      pj["unmatched"] = pl.unmatched;
      pj["notes"] = pl.notes;
      pj["first_divergence"] =
          pl.first_divergence() ? layer_json(*pl.first_divergence(), size_t(pl.first_divergent)) : Json(nullptr);
      Json layers = Json::array();
      for (size_t i = 0; i < pl.layers.size(); ++i) layers.push_back(layer_json(pl.layers[i], i));
      pj["layers"] = layers;
      sj["per_layer"] = pj;
    } else {
      sj["per_layer"] = nullptr;
    }
    samples.push_back(sj);
  }
  j["samples"] = samples;
  return j;
}

}  // namespace ferry::validate
