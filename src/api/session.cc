// api/session.cc — Session: input checks and run (include/ferry/model.h).
#include <map>

#include "api/session_impl.h"
#include "runtime/interpreter.h"

namespace ferry {
namespace {

std::string describe_inputs(const std::vector<TensorSpec>& inputs) {
  std::string list;
  for (const TensorSpec& t : inputs)
    list += (list.empty() ? "" : ", ") + ("'" + t.name + "' " + dtype_name(t.dtype) + t.shape.to_string());
  return list.empty() ? "none" : list;
}

/// "[1, 64]", or "[2, inf)" without an upper bound.
std::string range_text(const std::pair<int64_t, int64_t>& r) {
  return "[" + std::to_string(r.first) + ", " + (r.second == INT64_MAX ? "inf)" : std::to_string(r.second) + "]");
}

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

const std::vector<TensorSpec>& Session::inputs() const { return impl_->inputs; }
const std::vector<TensorSpec>& Session::outputs() const { return impl_->outputs; }
const CompileOptions& Session::options() const { return impl_->options; }
const Graph& Session::graph() const { return *impl_->graph; }
const PassStats& Session::optimizer_stats() const { return impl_->stats; }

Status Session::check_inputs(const std::map<std::string, Tensor>& inputs) const {
  const Graph& g = *impl_->graph;
  for (const auto& [name, t] : inputs) {
    bool known = false;
    for (const Value* in : g.inputs()) known |= in->name() == name;
    if (!known)
      return invalid_argument("the model has no input named '" + name + "' (inputs: " + describe_inputs(impl_->inputs) +
                              ")");
  }
  // symbol -> (value, the input that bound it)
  std::map<std::string, std::pair<int64_t, std::string>> bound;
  for (const Value* in : g.inputs()) {
    auto it = inputs.find(in->name());
    if (it == inputs.end())
      return invalid_argument("missing input '" + in->name() + "' (" + in->type_string() +
                              "); the model's inputs: " + describe_inputs(impl_->inputs));
    const Tensor& t = it->second;
    if (!t.defined() || (t.numel() > 0 && !t.raw()))
      return invalid_argument("input '" + in->name() + "' holds no data");
    FERRY_TRY(check_input(*in, t));
    const Shape& s = in->shape();
    if (!s.rank_known()) continue;
    for (size_t d = 0; d < size_t(s.rank()); ++d) {
      if (!s[d].is_symbol()) continue;
      int64_t v = t.dim(int64_t(d));
      if (auto r = impl_->dim_ranges.find(s[d].symbol());
          r != impl_->dim_ranges.end() && (v < r->second.first || v > r->second.second))
        return invalid_argument("input '" + in->name() + "' has shape " + t.shape().to_string() + ", but dim " +
                                std::to_string(d) + " ('" + s[d].symbol() + "') must lie in " + range_text(r->second) +
                                ", the range the program was exported with");
      auto [b, fresh] = bound.emplace(s[d].symbol(), std::make_pair(v, in->name()));
      if (!fresh && b->second.first != v)
        return invalid_argument("input '" + in->name() + "' has shape " + t.shape().to_string() + ", but dim " +
                                std::to_string(d) + " ('" + s[d].symbol() + "') must equal the " +
                                std::to_string(b->second.first) + " given for '" + s[d].symbol() + "' by input '" +
                                b->second.second + "'");
    }
  }
  return Status::Ok();
}

Result<std::vector<Tensor>> Session::run(const std::map<std::string, Tensor>& inputs) {
  FERRY_TRY(check_inputs(inputs));
  std::vector<Tensor> ordered;
  for (const Value* in : impl_->graph->inputs()) ordered.push_back(inputs.at(in->name()));
  std::vector<Tensor> outputs;
  FERRY_TRY(run(ordered, &outputs));
  return outputs;
}

Status Session::run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs, const RunObserver* observer) {
  if (inputs.size() != impl_->inputs.size())
    return invalid_argument("expected " + std::to_string(impl_->inputs.size()) + " inputs (" +
                            describe_inputs(impl_->inputs) + "), got " + std::to_string(inputs.size()));
  std::lock_guard<std::mutex> lock(impl_->run_mutex);
  FERRY_TRY(impl_->executor->run(inputs, outputs, observer));
  if (outputs->size() != impl_->outputs.size())
    return internal_error("backend '" + impl_->options.backend + "' returned " + std::to_string(outputs->size()) +
                          " outputs, the model has " + std::to_string(impl_->outputs.size()));
  return Status::Ok();
}

Result<PlanInfo> Session::plan(const std::vector<std::vector<int64_t>>& input_dims) {
  if (input_dims.size() != impl_->inputs.size())
    return invalid_argument("expected dims for " + std::to_string(impl_->inputs.size()) + " inputs, got " +
                            std::to_string(input_dims.size()));
  std::lock_guard<std::mutex> lock(impl_->run_mutex);
  return impl_->executor->plan(input_dims);
}

const Target& Session::target() const { return impl_->target; }
const PrecisionReport& Session::precision() const { return impl_->precision; }
std::string Session::fallback_reason() const { return impl_->executor->fallback_reason(); }

}  // namespace ferry
