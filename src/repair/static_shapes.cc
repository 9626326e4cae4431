#include "repair/static_shapes.h"

#include "ops/shape_inference.h"

namespace ferry::repair {

Result<std::vector<std::string>> bind_input_shapes(Graph& g, const std::map<std::string, std::vector<int64_t>>& dims) {
  std::map<std::string, int64_t> symbols;
  for (const auto& [name, want] : dims) {
    const Value* in = nullptr;
    for (const Value* v : g.inputs())
      if (v->name() == name) in = v;
    if (!in) return invalid_argument("--shape " + name + ": the model has no input '" + name + "'");
    const Shape& s = in->shape();
    if (s.rank_known() && size_t(s.rank()) != want.size())
      return invalid_argument("--shape " + name + ": input '" + name + "' has rank " + std::to_string(s.rank()) +
                              ", " + std::to_string(want.size()) + " dims given");
    for (size_t i = 0; s.rank_known() && i < want.size(); ++i) {
      const Dim& d = s[i];
      if (d.is_static() && d.value() != want[i])
        return invalid_argument("--shape " + name + ": dim " + std::to_string(i) + " of input '" + name + "' is " +
                                std::to_string(d.value()) + ", " + std::to_string(want[i]) + " given");
      if (!d.is_symbol()) continue;
      auto [it, fresh] = symbols.emplace(d.symbol(), want[i]);
      if (!fresh && it->second != want[i])
        return invalid_argument("--shape " + name + ": symbol " + d.symbol() + " is " + std::to_string(it->second) +
                                " by another input, " + std::to_string(want[i]) + " here");
    }
  }
  for (Value* v : g.inputs()) {
    std::vector<Dim> out;
    if (auto it = dims.find(v->name()); it != dims.end()) {
      for (int64_t d : it->second) out.emplace_back(d);
    } else if (v->shape().rank_known()) {
      for (const Dim& d : v->shape().dims())
        out.push_back(d.is_symbol() && symbols.count(d.symbol()) ? Dim(symbols.at(d.symbol())) : d);
    } else {
      continue;
    }
    v->set_shape(Shape(std::move(out)));
  }
  const Node* failed = nullptr;
  if (Status st = infer_shapes(g, &failed); !st.ok()) return st.with_context("--shape: with the dims given");
  std::vector<std::string> bound;
  for (const auto& [sym, v] : symbols) bound.push_back(sym + "=" + std::to_string(v));
  return bound;
}

}  // namespace ferry::repair
