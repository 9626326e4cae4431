#include "validate/validator.h"

#include <stdlib.h>

#include <filesystem>
#include <set>

namespace ferry::validate {
namespace {

namespace fs = std::filesystem;

/// A fresh temporary directory, removed with everything in it when this goes away.
class ScratchDir {
 public:
  static Result<ScratchDir> create() {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string templ = (base / "ferry-validate-XXXXXX").string();
    if (!mkdtemp(templ.data())) return io_error("cannot create a temporary directory under " + base.string());
    ScratchDir d;
    d.path_ = templ;
    return d;
  }
  ScratchDir() = default;
  ScratchDir(ScratchDir&& o) noexcept : path_(std::exchange(o.path_, "")) {}
  ScratchDir& operator=(ScratchDir&&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// The inputs of sample `index` and how each was chosen.
Result<std::map<std::string, Tensor>> sample_inputs(const Graph& g, ReferenceProvider& reference,
                                                    const ValidateOptions& o, uint64_t seed,
                                                    std::vector<InputDescription>* described) {
  std::vector<std::string> names;
  for (const Value* v : g.inputs()) names.push_back(v->name());
  std::map<std::string, std::string> source;
  std::map<std::string, Tensor> given = o.given_inputs;
  for (const auto& [name, t] : given) source[name] = "from " + o.given_inputs_source;
  if (reference.has_fixed_inputs()) {
    FERRY_ASSIGN_OR_RETURN(given, reference.fixed_inputs(names));
    for (const auto& [name, t] : given) source[name] = "from " + reference.spec();
  }
  for (const auto& [name, t] : given) {
    const Value* v = g.find_value(name);
    if (!v || !v->is_graph_input()) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
      return invalid_argument("the model has no input named '" + name + "' (inputs: " + (list.empty() ? "none" : list) +
                              ")");
    }
    FERRY_TRY(check_input(*v, t));
  }
  RandomInputOptions ropts;
  ropts.seed = seed;
  ropts.shapes = o.shapes;
  std::vector<RandomInputInfo> infos;
  FERRY_ASSIGN_OR_RETURN(auto inputs, make_inputs(g, given, ropts, &infos));
  for (const RandomInputInfo& i : infos) source[i.name] = i.distribution;
  for (const Value* v : g.inputs())
    described->push_back({v->name(), inputs.at(v->name()).type_string(), source[v->name()]});
  return inputs;
}

OutputResult compare_output(const std::string& name, const Tensor& got, const GoldenSet& ref,
                            const ValidateOptions& o) {
  OutputResult r;
  r.name = name;
  if (!ref.has(name)) {
    r.cmp.got_dtype = got.dtype();
    r.cmp.got_dims = got.dims();
    r.cmp.problem = "the reference has no tensor named '" + name + "'";
    return r;
  }
  auto t = ref.get(name);
  if (!t.ok()) {
    r.cmp.problem = t.status().message();
    return r;
  }
  r.cmp = compare_tensors(got, *t, tolerance_for(o.tolerances, got.dtype(), t->dtype()));
  if (o.budget && budget_applies(r.cmp)) r.budget = check_budget(got, *t, r.cmp, o.budget->budget);
  return r;
}

}  // namespace

bool ValidationReport::pass() const {
  if (samples.empty()) return false;
  for (const SampleResult& s : samples)
    if (!s.pass) return false;
  return true;
}

Result<ValidationReport> run_validation(Subject& subject, const Graph& reference_graph, ReferenceProvider& reference,
                                        const ValidateOptions& o) {
  if (o.samples < 1) return invalid_argument("the number of samples must be at least 1");
  if (reference.has_fixed_inputs() && o.samples > 1)
    return invalid_argument(reference.spec() + " holds one set of inputs; --samples does not apply");
  ValidationReport report;
  report.model = o.model_path;
  report.reference_spec = reference.spec();
  report.subject = subject.describe();
  report.tolerances = o.tolerances;
  report.budget = o.budget;
  report.per_layer = o.per_layer;
  std::set<std::string> notes;

  for (int64_t k = 0; k < o.samples; ++k) {
    SampleResult s;
    s.index = k;
    s.seed = o.seed + uint64_t(k);
    const std::string ctx =
        o.samples > 1 ? "sample " + std::to_string(k) + " (seed " + std::to_string(s.seed) + ")" : "";
    auto with_ctx = [&](Status st) { return ctx.empty() ? st : std::move(st).with_context(ctx); };
    auto inputs = sample_inputs(reference_graph, reference, o, s.seed, &s.inputs);
    if (!inputs.ok()) return with_ctx(inputs.status());

    FERRY_ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::create());
    ReferenceRequest req{o.model_path, &reference_graph, *inputs, o.per_layer, scratch.path()};
    auto ref = reference.run(req);
    if (!ref.ok()) return with_ctx(ref.status().with_context("reference " + reference.spec()));
    if (report.reference_producer.empty()) report.reference_producer = ref->producer;
    if (!o.save_reference_dir.empty()) {
      std::string dir = o.samples > 1 ? (fs::path(o.save_reference_dir) / ("sample_" + std::to_string(k))).string()
                                      : o.save_reference_dir;
      FERRY_TRY(with_ctx(write_golden_dir(dir, *ref).with_context("saving the reference")));
    }
    // The reference must have computed from the same inputs; a bridge that
    // converted them (a dtype, a layout) would make every comparison moot.
    for (const auto& [name, t] : *inputs)
      if (ref->has(name)) {
        auto rt = ref->get(name);
        if (rt.ok() && !rt->bit_equal(t))
          s.notes.push_back("the reference's copy of input '" + name + "' differs from the values fed to ferry");
      }

    ValueTensors values;
    auto outs = subject.run(*inputs, o.per_layer ? &values : nullptr);
    if (!outs.ok()) return with_ctx(outs.status());
    const Graph& g = subject.graph();
    for (size_t i = 0; i < outs->size() && i < g.outputs().size(); ++i)
      s.outputs.push_back(compare_output(g.outputs()[i]->name(), (*outs)[i], *ref, o));
    s.pass = !s.outputs.empty();
    for (const OutputResult& r : s.outputs) s.pass &= r.pass();

    if (o.per_layer) {
      auto layers = compare_layers(g, values, *ref, o.tolerances);
      if (!layers.ok()) return with_ctx(layers.status());
      // Intermediates are compared elementwise; under an accuracy budget they only inform.
      if (!o.budget) s.pass &= layers->first_divergent < 0;
      s.per_layer = std::move(layers).value();
      if (!ref->skipped.empty())
        notes.insert("the reference could not provide " + std::to_string(ref->skipped.size()) +
                     " intermediate tensor(s) (e.g. '" + ref->skipped.front().first +
                     "': " + ref->skipped.front().second + ")");
    }
    report.samples.push_back(std::move(s));
  }
  report.notes.assign(notes.begin(), notes.end());
  return report;
}

}  // namespace ferry::validate
