#include "runtime/random_inputs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>

#include "ir/op_attrs.h"
#include "runtime/interpreter.h"

namespace ferry {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_batch_symbol(const std::string& symbol) {
  std::string s = lower(symbol);
  return s == "n" || s == "b" || s == "bs" || s == "nb" || s.find("batch") != std::string::npos;
}

std::string dims_text(const std::vector<int64_t>& dims) { return dims.empty() ? "(scalar)" : dims_to_string(dims); }

std::string input_names(const Graph& g) {
  std::string s;
  for (const Value* v : g.inputs()) s += (s.empty() ? "'" : ", '") + v->name() + "'";
  return s.empty() ? "none" : s;
}

const Value* find_input(const Graph& g, const std::string& name) {
  for (const Value* v : g.inputs())
    if (v->name() == name) return v;
  return nullptr;
}

/// Symbol -> size, remembering which input bound it (for the conflict message).
struct Bindings {
  std::map<std::string, std::pair<int64_t, std::string>> map;

  Status bind(const Value& input, const std::vector<int64_t>& dims) {
    const Shape& s = input.shape();
    if (!s.rank_known() || size_t(s.rank()) != dims.size()) return Status::Ok();
    for (size_t i = 0; i < dims.size(); ++i) {
      if (!s[i].is_symbol()) continue;
      auto [it, fresh] = map.try_emplace(s[i].symbol(), dims[i], input.name());
      if (!fresh && it->second.first != dims[i])
        return invalid_argument("input '" + input.name() + "' sets dim " + s[i].symbol() + "=" +
                                std::to_string(dims[i]) + ", but input '" + it->second.second + "' sets " +
                                s[i].symbol() + "=" + std::to_string(it->second.first));
    }
    return Status::Ok();
  }
};

/// Checks user-chosen dims against the input's declared shape.
Status check_override(const Value& input, const std::vector<int64_t>& dims) {
  for (int64_t d : dims)
    if (d < 0 || d > kMaxDim)
      return invalid_argument("--shape " + input.name() + "=" + dims_text(dims) + ": dims must be in [0, 2^40]");
  const Shape& s = input.shape();
  if (!s.rank_known()) return Status::Ok();
  bool ok = size_t(s.rank()) == dims.size();
  for (size_t i = 0; ok && i < dims.size(); ++i) ok = !s[i].is_static() || s[i].value() == dims[i];
  if (!ok)
    return invalid_argument("--shape " + input.name() + "=" + dims_text(dims) + " contradicts the model: input '" +
                            input.name() + "' is " + input.type_string());
  return Status::Ok();
}

/// Rows of the smallest table this integer input indexes through Gather/GatherElements.
std::optional<int64_t> gather_rows(const Value& v, int depth = 0) {
  if (depth > 8) return std::nullopt;
  std::optional<int64_t> rows;
  auto take = [&](std::optional<int64_t> r) {
    if (r && (!rows || *r < *rows)) rows = r;
  };
  for (const Use& use : v.uses()) {
    const Node& n = *use.node;
    switch (n.op()) {
      case Op::Gather:
      case Op::GatherElements: {
        const Value* table = n.input(0);
        if (use.index != 1 || !table || !table->shape().rank_known()) break;
        int64_t rank = table->shape().rank(), axis = n.attrs<GatherAttrs>().axis;  // GatherElements: the same
        if (axis < -rank || axis >= rank) break;
        const Dim& d = table->shape()[size_t(axis < 0 ? axis + rank : axis)];
        if (d.is_static()) take(d.value());
        break;
      }
      case Op::Cast: case Op::Reshape: case Op::Squeeze: case Op::Unsqueeze: case Op::Flatten: case Op::Identity:
        if (use.index == 0) take(gather_rows(*n.output(0), depth + 1));
        break;
      default:
        break;
    }
  }
  return rows;
}

/// The largest value + 1 an integer dtype holds, capped at 2^62.
uint64_t dtype_limit(DType t) {
  switch (t) {
    case DType::i8: return 128;
    case DType::u8: return 256;
    case DType::i16: return 32768;
    case DType::u16: return 65536;
    case DType::i32: return uint64_t(1) << 31;
    case DType::u32: return uint64_t(1) << 32;
    default: return uint64_t(1) << 62;
  }
}

}  // namespace

NormalSampler::NormalSampler(uint64_t seed) : engine_(seed) {}

double NormalSampler::uniform_open() {
  // 53 random bits, shifted half a step off 0: (k + 0.5) / 2^53, in (0, 1).
  return (double(engine_() >> 11) + 0.5) * 0x1p-53;
}

double NormalSampler::normal() {
  // Box-Muller: r = sqrt(-2 ln u1), x = r cos(2 pi u2), y = r sin(2 pi u2).
  if (have_spare_) {
    have_spare_ = false;
    return spare_;
  }
  double r = std::sqrt(-2.0 * std::log(uniform_open()));
  double theta = 2.0 * std::numbers::pi * uniform_open();
  spare_ = r * std::sin(theta);
  have_spare_ = true;
  return r * std::cos(theta);
}

uint64_t NormalSampler::below(uint64_t n) {
  return uint64_t((static_cast<unsigned __int128>(engine_()) * n) >> 64);
}

Result<std::map<std::string, std::vector<int64_t>>> resolve_input_dims(
    const Graph& g, const std::map<std::string, Tensor>& given, const RandomInputOptions& options) {
  Bindings bindings;
  for (const auto& [name, dims] : options.shapes) {
    const Value* in = find_input(g, name);
    if (!in)
      return invalid_argument("--shape names '" + name + "', but the model has no input of that name (inputs: " +
                              input_names(g) + ")");
    FERRY_TRY(check_override(*in, dims));
    FERRY_TRY(bindings.bind(*in, dims));
  }
  for (const auto& [name, t] : given) {
    const Value* in = find_input(g, name);
    if (!in)
      return invalid_argument("input '" + name + "' is given, but the model has no input of that name (inputs: " +
                              input_names(g) + ")");
    FERRY_TRY(check_input(*in, t));
    auto it = options.shapes.find(name);
    if (it != options.shapes.end() && it->second != t.dims())
      return invalid_argument("input '" + name + "' has shape " + dims_text(t.dims()) + ", but --shape asks for " +
                              dims_text(it->second));
    FERRY_TRY(bindings.bind(*in, t.dims()));
  }

  std::map<std::string, std::vector<int64_t>> out;
  for (const Value* in : g.inputs()) {
    if (given.count(in->name())) continue;
    auto ov = options.shapes.find(in->name());
    if (ov != options.shapes.end()) {
      out[in->name()] = ov->second;
      continue;
    }
    const Shape& s = in->shape();
    if (!s.rank_known())
      return invalid_argument("input '" + in->name() + "' has unknown rank; pass its shape with --shape " +
                              in->name() + "=1x...");
    std::vector<int64_t> dims;
    std::string hint;  // the --shape template we suggest: known dims, <symbol> for the rest
    std::optional<size_t> unresolved;
    for (size_t i = 0; i < size_t(s.rank()); ++i) {
      const Dim& d = s[i];
      int64_t v = -1;
      if (d.is_static()) {
        v = d.value();
      } else if (d.is_symbol() && bindings.map.count(d.symbol())) {
        v = bindings.map.at(d.symbol()).first;
      } else if (auto r = d.is_symbol() ? g.info().dim_ranges.find(d.symbol()) : g.info().dim_ranges.end();
                 r != g.info().dim_ranges.end()) {
        v = std::max<int64_t>(1, r->second.first);  // the smallest size the source allows (torch.export: often 2)
      } else if (i == 0 || (d.is_symbol() && is_batch_symbol(d.symbol()))) {
        v = 1;
      }
      if (v < 0 && !unresolved) unresolved = i;
      dims.push_back(v);
      hint += (i ? "x" : "") + (v >= 0 ? std::to_string(v) : "<" + (d.is_symbol() ? d.symbol() : "dim" + std::to_string(i)) + ">");
    }
    if (unresolved) {
      const Dim& d = s[*unresolved];
      return invalid_argument("input '" + in->name() + "' is " + in->type_string() + ": cannot choose a size for dim " +
                              std::to_string(*unresolved) + (d.is_symbol() ? " ('" + d.symbol() + "')" : "") +
                              "; pass --shape " + in->name() + "=" + hint);
    }
    FERRY_TRY(bindings.bind(*in, dims));  // batch dims defaulted to 1 bind their symbol for later inputs
    out[in->name()] = std::move(dims);
  }
  return out;
}

Result<Tensor> random_input(const Value& input, const std::vector<int64_t>& dims, uint64_t seed,
                            RandomInputInfo* info) {
  DType dt = input.dtype();
  if (dt == DType::undefined) return invalid_model("input '" + input.name() + "' has no dtype");
  auto made = Tensor::zeros(dt, dims);
  if (!made.ok()) return made.status().with_context("input '" + input.name() + "' with shape " + dims_text(dims));
  Tensor t = std::move(made).value();
  NormalSampler rng(splitmix64(seed ^ fnv1a(input.name())));
  std::string how;
  if (lower(input.name()).find("mask") != std::string::npos || dt == DType::boolean) {
    how = dt == DType::boolean ? "random bools" : "0/1 (mask)";
    for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, double(rng.below(2)));
  } else if (is_integer(dt)) {
    uint64_t hi = 10;
    auto rows = gather_rows(input);
    if (rows && *rows > 0) {
      hi = std::min<uint64_t>(uint64_t(*rows), dtype_limit(dt));
      how = "ints in [0, " + std::to_string(hi) + ") (Gather indices)";
    } else {
      how = "ints in [0, 10)";
    }
    for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, double(rng.below(hi)));
  } else {
    how = "N(0,1)";
    for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, rng.normal());
  }
  if (info) *info = {input.name(), how};
  return t;
}

Result<std::map<std::string, Tensor>> make_inputs(const Graph& g, const std::map<std::string, Tensor>& given,
                                                  const RandomInputOptions& options,
                                                  std::vector<RandomInputInfo>* infos) {
  FERRY_ASSIGN_OR_RETURN(auto dims, resolve_input_dims(g, given, options));
  std::map<std::string, Tensor> out = given;
  for (const Value* in : g.inputs()) {
    if (given.count(in->name())) continue;
    RandomInputInfo info;
    FERRY_ASSIGN_OR_RETURN(Tensor t, random_input(*in, dims.at(in->name()), options.seed, &info));
    out[in->name()] = std::move(t);
    if (infos) infos->push_back(std::move(info));
  }
  return out;
}

}  // namespace ferry
