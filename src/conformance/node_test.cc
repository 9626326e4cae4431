#include "conformance/node_test.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "frontends/onnx/onnx_importer.h"
#include "frontends/onnx/onnx_tensor.h"
#include "passes/pipeline.h"
#include "runtime/interpreter.h"
#include "validate/metrics.h"

namespace ferry::conformance {
namespace {

namespace fs = std::filesystem;

// --- scope ---------------------------------------------------------------------

bool is_training_domain(const std::string& d) { return d == "ai.onnx.preview.training"; }
bool is_ml_domain(const std::string& d) { return d == "ai.onnx.ml"; }

bool is_sequence_or_optional_op(const std::string& op) {
  static const std::set<std::string> kOps = {
      "SequenceAt",     "SequenceConstruct", "SequenceEmpty",      "SequenceErase",     "SequenceInsert",
      "SequenceLength", "SequenceMap",       "SplitToSequence",    "ConcatFromSequence", "Optional",
      "OptionalGetElement", "OptionalHasElement"};
  return kOps.count(op) > 0;
}

bool is_random_op(const std::string& op) {
  static const std::set<std::string> kOps = {"Bernoulli",     "Multinomial",       "RandomNormal",
                                             "RandomNormalLike", "RandomUniform", "RandomUniformLike"};
  return kOps.count(op) > 0;
}

/// The 8-, 6-, 4- and 2-bit float and integer types and complex numbers
/// (TensorProto codes 14, 15 and 17 and up): storage formats ferry's IR has no dtype for.
bool is_narrow_or_complex(int32_t code) { return code == 14 || code == 15 || code >= 17; }

std::string narrow_type_reason(int32_t code) {
  return std::string(code == 14 || code == 15 ? "complex" : "8-bit float / sub-byte") + " element type " +
         onnx_import::onnx_dtype_name(code);
}

/// "" when the type is a plain tensor of a dtype in scope; otherwise what it is.
std::string non_tensor_kind(const onnx::TypeProto& t) {
  if (t.has_sequence_type()) return "sequence";
  if (t.has_map_type()) return "map";
  if (t.has_optional_type()) return "optional";
  if (t.has_sparse_tensor_type()) return "sparse tensor";
  if (t.has_tensor_type()) {
    int32_t code = t.tensor_type().elem_type();
    if (code == onnx::TensorProto::STRING) return "string";
    if (is_narrow_or_complex(code)) return narrow_type_reason(code);
  }
  return "";
}

int64_t int_attr(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return dflt;
}

std::string node_scope_reason(const onnx::NodeProto& n);

std::string graph_scope_reason(const onnx::GraphProto& g) {
  for (const auto& n : g.node())
    if (std::string r = node_scope_reason(n); !r.empty()) return r;
  return "";
}

std::string node_scope_reason(const onnx::NodeProto& n) {
  const std::string& d = n.domain();
  const std::string& op = n.op_type();
  if (is_training_domain(d)) return "training op " + op + " (domain " + d + ")";
  if (is_ml_domain(d)) return "classical-ML op " + op + " (domain ai.onnx.ml)";
  if (d == "ai.onnx.preview") return "experimental op " + op + " (domain ai.onnx.preview)";
  if (d.empty() || d == "ai.onnx") {
    if (is_sequence_or_optional_op(op)) return "sequence/optional op " + op;
    if (is_random_op(op)) return "random generator " + op + " (expected values come from numpy's generator)";
    // Dropout's third input is training_mode; the mask and the scaling then depend on an RNG.
    if (op == "Dropout" && n.input_size() >= 3 && !n.input(2).empty()) return "training-mode Dropout";
    if (op == "BatchNormalization" && (int_attr(n, "training_mode", 0) != 0 || n.output_size() > 1))
      return "training-mode BatchNormalization (running statistics outputs)";
    if (op == "ImageDecoder") return "ImageDecoder (decodes image files: needs an image codec)";
    for (const auto& a : n.attribute()) {
      if (a.has_t() && a.t().data_type() == onnx::TensorProto::STRING) return "string constant in " + op;
      if (a.has_t() && is_narrow_or_complex(a.t().data_type())) return narrow_type_reason(a.t().data_type());
      // Cast's `to`, QuantizeLinear's `output_dtype`: the type the op produces.
      if ((a.name() == "to" || a.name() == "output_dtype") && a.type() == onnx::AttributeProto::INT) {
        if (a.i() == onnx::TensorProto::STRING) return "string type (" + op + " to STRING)";
        if (is_narrow_or_complex(int32_t(a.i()))) return narrow_type_reason(int32_t(a.i()));
      }
    }
  }
  for (const auto& a : n.attribute()) {
    if (a.has_g())
      if (std::string r = graph_scope_reason(a.g()); !r.empty()) return r;
    for (const auto& sub : a.graphs())
      if (std::string r = graph_scope_reason(sub); !r.empty()) return r;
  }
  return "";
}

// --- reading a case --------------------------------------------------------------

Result<std::string> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return io_error("cannot open " + p.string());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

Result<Tensor> read_tensor_pb(const fs::path& p) {
  FERRY_ASSIGN_OR_RETURN(std::string bytes, read_file(p));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) return invalid_model(p.filename().string() + ": not a TensorProto");
  auto t = onnx_import::tensor_from_proto(proto, nullptr);
  if (!t.ok()) return t.status().with_context(p.filename().string());
  return t;
}

struct Tolerances {
  double rtol = kDefaultRtol, atol = kDefaultAtol;
};

Result<Tolerances> read_tolerances(const fs::path& dir) {
  Tolerances t;
  fs::path p = dir / "data.json";
  std::error_code ec;
  if (!fs::exists(p, ec)) return t;
  FERRY_ASSIGN_OR_RETURN(std::string text, read_file(p));
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return invalid_model("data.json is not a JSON object");
  if (j.contains("rtol") && j["rtol"].is_number()) t.rtol = j["rtol"].get<double>();
  if (j.contains("atol") && j["atol"].is_number()) t.atol = j["atol"].get<double>();
  return t;
}

std::vector<fs::path> data_sets(const fs::path& dir) {
  std::vector<fs::path> sets;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

/// Counts prefix_0.pb, prefix_1.pb, ... (stops at the first gap).
int count_files(const fs::path& dir, const std::string& prefix) {
  int n = 0;
  std::error_code ec;
  while (fs::exists(dir / (prefix + std::to_string(n) + ".pb"), ec)) ++n;
  return n;
}

std::string first_line(const std::string& s, size_t max = 400) {
  std::string l = s.substr(0, s.find('\n'));
  if (l.size() > max) l = l.substr(0, max) + "...";
  return l;
}

/// Sets outcome and reason from a failed status: kUnsupported -> unsupported, else failed.
void fail_with(CaseResult& r, const std::string& stage, const Status& st) {
  r.outcome = st.code() == StatusCode::kUnsupported ? Outcome::unsupported : Outcome::failed;
  r.reason = stage + ": " + first_line(st.to_string());
}

std::string unsupported_reasons(const ImportReport& report) {
  std::string s;
  std::set<std::string> seen;
  for (const UnsupportedOp& u : report.unsupported) {
    std::string one = (u.domain.empty() ? "" : u.domain + ":") + u.op_type + ": " + u.reason;
    if (!seen.insert(one).second) continue;
    s += (s.empty() ? "" : "; ") + one;
  }
  return first_line(s);
}

/// Compares one data set's outputs; returns false (with r.reason) on the first mismatch.
bool compare_outputs(const std::vector<Tensor>& got, const fs::path& set, const Graph& g, const Tolerances& tol,
                     CaseResult& r) {
  const int expected = count_files(set, "output_");
  const std::string where = set.filename().string() + ": ";
  if (int(got.size()) != expected) {
    r.reason = where + "the model produced " + std::to_string(got.size()) + " outputs, the suite expects " +
               std::to_string(expected);
    return false;
  }
  for (int i = 0; i < expected; ++i) {
    const std::string name = "output " + std::to_string(i) + " ('" + g.outputs()[size_t(i)]->name() + "')";
    auto ref = read_tensor_pb(set / ("output_" + std::to_string(i) + ".pb"));
    if (!ref.ok()) {
      r.reason = where + "reading expected " + name + ": " + ref.status().message();
      return false;
    }
    const Tensor& a = got[size_t(i)];
    if (a.dtype() != ref->dtype()) {
      r.reason = where + name + ": dtype " + dtype_name(a.dtype()) + ", expected " + dtype_name(ref->dtype());
      return false;
    }
    validate::Tolerance t{0, 0};
    if (is_floating(a.dtype())) {
      t = {tol.atol, tol.rtol};
      if (a.dtype() == DType::bf16) t.rtol = std::max(t.rtol, 1.0 / 64);  // two bf16 ULPs, as the suite's runner
    }
    validate::Comparison c = validate::compare_tensors(a, *ref, t);
    r.max_abs_error = std::max(r.max_abs_error, c.metrics.max_abs);
    r.worst_ratio = std::max(r.worst_ratio, c.metrics.worst_ratio);
    if (c.pass) continue;
    std::string why = c.problem;
    if (c.metrics.nonfinite_mismatch > 0 && why.empty())
      why = std::to_string(c.metrics.nonfinite_mismatch) + " NaN/Inf mismatches";
    if (why.empty()) why = "mismatch";
    const auto& m = c.metrics;
    if (m.worst_index >= 0 && m.out_of_tolerance > 0) {
      std::ostringstream s;
      s.precision(7);
      s << " (max abs error " << m.max_abs << "; worst at flat index " << m.worst_index << ": got " << m.worst_got
        << ", expected " << m.worst_ref << ")";
      why += s.str();
    }
    r.reason = where + name + ": " + why;
    return false;
  }
  return true;
}

}  // namespace

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::passed: return "passed";
    case Outcome::failed: return "failed";
    case Outcome::unsupported: return "unsupported";
    case Outcome::out_of_scope: return "out_of_scope";
  }
  return "?";
}

std::string out_of_scope_reason(const onnx::ModelProto& model) {
  const onnx::GraphProto& g = model.graph();
  for (const auto& v : g.input())
    if (std::string k = non_tensor_kind(v.type()); !k.empty()) return k + " input '" + v.name() + "'";
  for (const auto& v : g.output())
    if (std::string k = non_tensor_kind(v.type()); !k.empty()) return k + " output '" + v.name() + "'";
  for (const auto& t : g.initializer())
    if (is_narrow_or_complex(t.data_type())) return narrow_type_reason(t.data_type());
  return graph_scope_reason(g);
}

CaseResult run_node_test(const std::string& case_dir) {
  const fs::path dir(case_dir);
  CaseResult r;
  r.name = dir.filename().string();
  if (r.name.empty()) r.name = dir.parent_path().filename().string();

  const std::string model_path = (dir / "model.onnx").string();
  auto model = onnx_import::read_model_proto(model_path);
  if (!model.ok()) {
    fail_with(r, "reading model.onnx", model.status());
    r.outcome = Outcome::failed;  // a suite file ferry cannot read is never "unsupported"
    return r;
  }
  if (model->graph().node_size() == 1) {
    const auto& n = model->graph().node(0);
    r.op = (n.domain().empty() || n.domain() == "ai.onnx") ? n.op_type() : n.domain() + ":" + n.op_type();
  }
  if (std::string why = out_of_scope_reason(*model); !why.empty()) {
    r.outcome = Outcome::out_of_scope;
    r.reason = why;
    return r;
  }
  auto tol = read_tolerances(dir);
  if (!tol.ok()) {
    fail_with(r, "reading data.json", tol.status());
    return r;
  }

  ImportReport report;
  auto imported = onnx_import::import_model_proto(*model, model_path, &report, {});
  if (!imported.ok()) {
    if (!report.unsupported.empty()) {
      r.outcome = Outcome::unsupported;
      r.reason = "import: " + unsupported_reasons(report);
    } else {
      fail_with(r, "import", imported.status());
    }
    return r;
  }
  Graph& g = **imported;
  if (Status st = optimize(g, {}, nullptr); !st.ok()) {
    fail_with(r, "optimize", st);
    return r;
  }

  // Graph inputs that are initializers are constants in ferry; input_<i> files follow the model's list.
  std::set<std::string> initializers;
  for (const auto& t : model->graph().initializer()) initializers.insert(t.name());
  std::vector<std::string> input_names;
  for (const auto& v : model->graph().input()) input_names.push_back(v.name());

  const auto sets = data_sets(dir);
  if (sets.empty()) {
    r.reason = "no test_data_set_* directory";
    return r;
  }
  for (const fs::path& set : sets) {
    std::map<std::string, Tensor> feeds;
    const int n_inputs = count_files(set, "input_");
    for (int i = 0; i < n_inputs; ++i) {
      if (size_t(i) >= input_names.size()) {
        r.reason = set.filename().string() + ": input_" + std::to_string(i) + ".pb has no graph input";
        return r;
      }
      if (initializers.count(input_names[size_t(i)])) continue;
      auto t = read_tensor_pb(set / ("input_" + std::to_string(i) + ".pb"));
      if (!t.ok()) {
        fail_with(r, set.filename().string() + ": reading input " + std::to_string(i), t.status());
        return r;
      }
      feeds.emplace(input_names[size_t(i)], std::move(t).value());
    }
    auto outputs = interpret(g, feeds);
    if (!outputs.ok()) {
      fail_with(r, "run", outputs.status());
      return r;
    }
    if (!compare_outputs(*outputs, set, g, *tol, r)) {
      r.outcome = Outcome::failed;
      return r;
    }
  }
  r.outcome = Outcome::passed;
  return r;
}

}  // namespace ferry::conformance
