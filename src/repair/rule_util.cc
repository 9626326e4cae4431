#include "repair/rule_util.h"

namespace ferry::repair {
namespace {

const onnx::AttributeProto* find_attr(const onnx_import::OnnxNode& n, const std::string& name) {
  for (const auto& a : n.proto().attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

}  // namespace

std::optional<int64_t> attr_int(const onnx_import::OnnxNode& n, const std::string& name) {
  const auto* a = find_attr(n, name);
  if (!a || onnx_import::attribute_type(*a) != onnx::AttributeProto::INT) return std::nullopt;
  return a->i();
}

std::optional<double> attr_float(const onnx_import::OnnxNode& n, const std::string& name) {
  const auto* a = find_attr(n, name);
  if (!a || onnx_import::attribute_type(*a) != onnx::AttributeProto::FLOAT) return std::nullopt;
  return a->f();
}

std::optional<std::string> attr_string(const onnx_import::OnnxNode& n, const std::string& name) {
  const auto* a = find_attr(n, name);
  if (!a || onnx_import::attribute_type(*a) != onnx::AttributeProto::STRING) return std::nullopt;
  return a->s();
}

std::optional<std::vector<int64_t>> attr_ints(const onnx_import::OnnxNode& n, const std::string& name) {
  const auto* a = find_attr(n, name);
  if (!a || onnx_import::attribute_type(*a) != onnx::AttributeProto::INTS) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<std::vector<double>> attr_floats(const onnx_import::OnnxNode& n, const std::string& name) {
  const auto* a = find_attr(n, name);
  if (!a || onnx_import::attribute_type(*a) != onnx::AttributeProto::FLOATS) return std::nullopt;
  return std::vector<double>(a->floats().begin(), a->floats().end());
}

std::string first_of(std::initializer_list<std::string> reasons) {
  for (const std::string& r : reasons)
    if (!r.empty()) return r;
  return "";
}

std::string unknown_attribute(const onnx_import::OnnxNode& n, std::initializer_list<const char*> known) {
  for (const auto& a : n.proto().attribute()) {
    bool found = false;
    for (const char* k : known) found |= a.name() == k;
    if (!found) return "attribute '" + a.name() + "' is not handled";
  }
  return "";
}

std::string not_f32(const onnx_import::OnnxNode& n, std::initializer_list<size_t> which) {
  for (size_t i : which) {
    const Value* v = n.input(i);
    if (v && v->dtype() != DType::undefined && v->dtype() != DType::f32)
      return "input " + std::to_string(i) + " is " + dtype_name(v->dtype()) + " (only f32 is handled)";
  }
  return "";
}

std::string input_count(const onnx_import::OnnxNode& n, size_t lo, size_t hi) {
  for (size_t i = 0; i < lo; ++i)
    if (!n.input(i)) return "input " + std::to_string(i) + " is missing";
  for (size_t i = hi; i < n.num_inputs(); ++i)
    if (n.input(i)) return "input " + std::to_string(i) + " is given (not handled)";
  return "";
}

std::string output_unused(const onnx_import::OnnxNode& n, size_t i) {
  if (i >= n.num_outputs() || !n.output_used(i)) return "";
  return "output " + std::to_string(i) + " ('" + n.proto().output(int(i)) + "') is read (not handled)";
}

int64_t input_rank(const onnx_import::OnnxNode& n, size_t i) {
  const Value* v = n.input(i);
  return v && v->shape().rank_known() ? int64_t(v->shape().rank()) : -1;
}

Value* helper(onnx_import::OnnxNode& n, Op op, std::vector<Value*> inputs, AttrMap attrs) {
  return n.emit_helper(op, std::move(inputs), std::move(attrs))->output(0);
}

Value* cast(onnx_import::OnnxNode& n, Value* v, const char* to) {
  AttrMap a;
  a.set("to", std::string(to));
  return helper(n, Op::Cast, {v}, a);
}

Value* f32_scalar(onnx_import::OnnxNode& n, float v, const std::string& what) {
  return n.constant(Tensor::scalar<float>(v), what);
}

}  // namespace ferry::repair
