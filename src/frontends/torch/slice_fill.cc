// frontends/torch/slice_fill.cc — the region a chain of static slices selects.
#include "frontends/torch/slice_fill.h"

#include <algorithm>
#include <numeric>

namespace ferry::torch_import {
namespace {

/// The integer of an Argument ({"as_int": 3}); nullopt for anything else.
std::optional<int64_t> arg_int(const Json& arg) {
  if (arg.is_object() && arg.size() == 1 && arg.begin().key() == "as_int" && arg.begin()->is_number_integer())
    return arg.begin()->get<int64_t>();
  return std::nullopt;
}

}  // namespace

std::optional<StaticSlice> static_slice(const Json& node) {
  auto t = node.find("target");
  if (t == node.end() || !t->is_string() || t->get<std::string>() != "torch.ops.aten.slice.Tensor") return std::nullopt;
  auto ins = node.find("inputs");
  if (ins == node.end() || !ins->is_array()) return std::nullopt;
  StaticSlice s;
  for (const Json& in : *ins) {
    if (!in.is_object() || !in.contains("name") || !in["name"].is_string() || !in.contains("arg")) return std::nullopt;
    const std::string name = in["name"].get<std::string>();
    const Json& arg = in["arg"];
    if (name == "self") {
      if (!arg.is_object() || !arg.contains("as_tensor") || !arg["as_tensor"].contains("name")) return std::nullopt;
      s.self = arg["as_tensor"]["name"].get<std::string>();
      continue;
    }
    if (arg.is_object() && arg.contains("as_none")) continue;  // start / end = None: the default
    auto v = arg_int(arg);
    if (!v) return std::nullopt;  // a SymInt bound: not static
    if (name == "dim") s.dim = *v;
    else if (name == "start") s.start = *v;
    else if (name == "end") s.end = *v;
    else if (name == "step") s.step = *v;
    else return std::nullopt;
  }
  if (s.self.empty()) return std::nullopt;
  return s;
}

std::optional<Tensor> slice_region_mask(const std::vector<int64_t>& dims, const std::vector<StaticSlice>& chain) {
  const int64_t rank = int64_t(dims.size());
  // For every dim, the base indices the chain keeps (slices keep the rank).
  std::vector<std::vector<int64_t>> keep(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    keep[d].resize(size_t(dims[d]));
    std::iota(keep[d].begin(), keep[d].end(), int64_t(0));
  }
  for (const StaticSlice& s : chain) {
    const int64_t d = s.dim < 0 ? s.dim + rank : s.dim;
    if (d < 0 || d >= rank || s.step <= 0) return std::nullopt;
    std::vector<int64_t>& k = keep[size_t(d)];
    const int64_t len = int64_t(k.size());
    auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + len : i, int64_t(0), len); };
    const int64_t b = clamp(s.start), e = clamp(s.end);
    std::vector<int64_t> kept;
    for (int64_t i = b; i < e; i += s.step) kept.push_back(k[size_t(i)]);
    k = std::move(kept);
  }
  std::vector<std::vector<char>> in(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    in[d].assign(size_t(dims[d]), 0);
    for (int64_t i : keep[d]) in[d][size_t(i)] = 1;
  }
  Tensor mask = Tensor::empty(DType::boolean, dims);
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t flat = 0; flat < mask.numel(); ++flat) {
    bool on = true;
    for (size_t d = 0; d < dims.size(); ++d) on = on && in[d][size_t(idx[d])];
    mask.set_double(flat, on ? 1.0 : 0.0);
    for (int64_t d = rank - 1; d >= 0; --d) {  // row-major increment
      if (++idx[size_t(d)] < dims[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
  }
  return mask;
}

}  // namespace ferry::torch_import
