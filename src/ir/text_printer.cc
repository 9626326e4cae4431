// ir/text_printer.cc — Graph -> text IR (the format is described in ir/text_format.h).
#include <cstring>

#include "ir/text_format.h"
#include "ir/text_lexer.h"

namespace ferry {
namespace {

using text::format_double;
using text::format_float;
using text::name_or_quoted;
using text::quote;
using text::word_or_quoted;

std::string shape_text(const Shape& s) {
  if (!s.rank_known()) return "[*]";
  std::string out = "[";
  for (size_t i = 0; i < s.dims().size(); ++i) {
    const Dim& d = s.dims()[i];
    if (i) out += ",";
    if (d.is_static()) out += std::to_string(d.value());
    else if (d.is_symbol()) out += word_or_quoted(d.symbol());
    else out += "?";
  }
  return out + "]";
}

bool type_known(DType dtype, const Shape& s) { return dtype != DType::undefined || s.rank_known(); }

std::string type_text(DType dtype, const Shape& s) {
  if (!type_known(dtype, s)) return "?";
  return (dtype == DType::undefined ? std::string("?") : std::string(dtype_name(dtype))) + shape_text(s);
}

std::string element_text(const Tensor& t, int64_t i) {
  const uint8_t* p = t.raw() + size_t(i) * dtype_size(t.dtype());
  auto load = [p](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t.dtype()) {
    case DType::f32: return format_float(load(float{}));
    case DType::f64: return format_double(load(double{}));
    case DType::f16: return format_float(f16_to_f32(load(uint16_t{})));
    case DType::bf16: return format_float(bf16_to_f32(load(uint16_t{})));
    case DType::boolean: return load(uint8_t{}) ? "true" : "false";  // any nonzero byte is true
    case DType::u64: return std::to_string(load(uint64_t{}));
    default:
      return dispatch_dtype(t.dtype(), [&](auto tag) { return std::to_string(int64_t(load(tag))); });
  }
}

// `f32[2,2] [1, 2, 3, 4]`, `f32[1000] <1000 elements>`, or `?` for an empty Tensor.
std::string tensor_text(const Tensor& t, const PrintOptions& options) {
  if (!t.defined()) return "?";
  std::string out = t.type_string() + " ";
  if (options.max_constant_elements >= 0 && t.numel() > options.max_constant_elements)
    return out + "<" + std::to_string(t.numel()) + " elements>";
  out += "[";
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (i) out += ", ";
    out += element_text(t, i);
  }
  return out + "]";
}

template <class T, class Fn>
std::string list_text(const std::vector<T>& xs, Fn&& item) {
  std::string out = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) out += ",";
    out += item(xs[i]);
  }
  return out + "]";
}

std::string value_ref(const Value* v) { return v ? "%" + name_or_quoted(v->name()) : "_"; }

std::string attr_text(const AttrValue& v, const PrintOptions& options, const std::string& indent);
void print_body(std::string& out, const Graph& g, const PrintOptions& options, const std::string& indent);

void print_node(std::string& out, const Node& n, const PrintOptions& options, const std::string& indent) {
  out += indent;
  for (size_t i = 0; i < n.num_outputs(); ++i) out += (i ? ", " : "") + value_ref(n.output(i));
  if (n.num_outputs()) out += " = ";
  out += op_name(n.op());
  out += "(";
  for (size_t i = 0; i < n.num_inputs(); ++i) out += (i ? ", " : "") + value_ref(n.input(i));
  out += ")";
  if (!n.attrs().empty()) {
    out += " {";
    bool first = true;
    for (const auto& [name, value] : n.attrs().all()) {
      out += (first ? "" : ", ") + word_or_quoted(name) + "=" + attr_text(value, options, indent);
      first = false;
    }
    out += "}";
  }
  bool any_type = false;
  for (const Value* v : n.outputs()) any_type |= type_known(v->dtype(), v->shape());
  if (any_type) {
    out += " : ";
    for (size_t i = 0; i < n.num_outputs(); ++i)
      out += (i ? ", " : "") + type_text(n.output(i)->dtype(), n.output(i)->shape());
  }
  out += " @" + name_or_quoted(n.name());
  if (options.show_provenance && !n.provenance().empty())
    out += " <- " + list_text(n.provenance(), [](const std::string& s) { return quote(s); });
  out += "\n";
}

std::string typed_refs(const std::vector<Value*>& values) {
  std::string out = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    const Value* v = values[i];
    out += (i ? ", " : "") + value_ref(v);
    if (type_known(v->dtype(), v->shape())) out += ": " + type_text(v->dtype(), v->shape());
  }
  return out + ")";
}

/// `graph name (inputs) [captures (...)] -> (outputs) {` body `}`; the body one level deeper.
std::string graph_text(const Graph& g, const PrintOptions& options, const std::string& indent) {
  std::string out = "graph " + word_or_quoted(g.info().graph_name) + " " + typed_refs(g.inputs());
  if (!g.captures().empty()) out += " captures " + typed_refs(g.captures());
  out += " -> (";
  for (size_t i = 0; i < g.outputs().size(); ++i) out += (i ? ", " : "") + value_ref(g.outputs()[i]);
  out += ") {\n";
  print_body(out, g, options, indent + "  ");
  return out + indent + "}";
}

void print_body(std::string& out, const Graph& g, const PrintOptions& options, const std::string& indent) {
  for (const Value* v : g.values())
    if (v->is_constant()) out += indent + value_ref(v) + " = const " + tensor_text(*v->constant(), options) + "\n";
  // A cyclic graph is invalid but must still print, so fall back to insertion order.
  auto order = g.topo_order();
  for (const Node* n : order.ok() ? *order : g.nodes()) print_node(out, *n, options, indent);
}

std::string attr_text(const AttrValue& v, const PrintOptions& options, const std::string& indent) {
  if (const SubgraphPtr* g = std::get_if<SubgraphPtr>(&v)) return *g ? graph_text(**g, options, indent) : "?";
  return print_attr_value(v, options);
}

}  // namespace

std::string print_attr_value(const AttrValue& v, const PrintOptions& options) {
  switch (attr_kind(v)) {
    case AttrKind::kInt: return std::to_string(std::get<int64_t>(v));
    case AttrKind::kFloat: return format_double(std::get<double>(v));
    case AttrKind::kString: return quote(std::get<std::string>(v));
    case AttrKind::kInts:
      return list_text(std::get<std::vector<int64_t>>(v), [](int64_t x) { return std::to_string(x); });
    case AttrKind::kFloats: return list_text(std::get<std::vector<double>>(v), format_double);
    case AttrKind::kStrings:
      return list_text(std::get<std::vector<std::string>>(v), [](const std::string& s) { return quote(s); });
    case AttrKind::kTensor: return "tensor " + tensor_text(std::get<Tensor>(v), options);
    case AttrKind::kGraph: return attr_text(v, options, "");
  }
  return "?";
}

std::string print_graph(const Graph& g, const PrintOptions& options) {
  return graph_text(g, options, "") + "\n";
}

}  // namespace ferry
