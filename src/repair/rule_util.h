// repair/rule_util.h — what the repair rules share: reading a node's attributes
// for a precondition (without consuming them), and checks of its inputs.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "frontends/onnx/onnx_node.h"

namespace ferry::repair {

/// The attribute's value as an int / float / string / ints, when present with that type.
std::optional<int64_t> attr_int(const onnx_import::OnnxNode& n, const std::string& name);
std::optional<double> attr_float(const onnx_import::OnnxNode& n, const std::string& name);
std::optional<std::string> attr_string(const onnx_import::OnnxNode& n, const std::string& name);
std::optional<std::vector<int64_t>> attr_ints(const onnx_import::OnnxNode& n, const std::string& name);
std::optional<std::vector<double>> attr_floats(const onnx_import::OnnxNode& n, const std::string& name);

/// The first non-empty reason, or "".
std::string first_of(std::initializer_list<std::string> reasons);
/// "" when every attribute of the node is in `known`, else "attribute 'x' is not handled".
std::string unknown_attribute(const onnx_import::OnnxNode& n, std::initializer_list<const char*> known);
/// "" when inputs `which` (those present and typed; a stand-in for an unimported producer is not) are f32.
std::string not_f32(const onnx_import::OnnxNode& n, std::initializer_list<size_t> which);
/// "" when inputs lo..hi-1 are given (hi: at most that many listed), else what is missing.
std::string input_count(const onnx_import::OnnxNode& n, size_t lo, size_t hi);
/// "" when output i is not read by anything, else "output i ('name') is read: not handled".
std::string output_unused(const onnx_import::OnnxNode& n, size_t i);
/// The static rank of input i, or -1.
int64_t input_rank(const onnx_import::OnnxNode& n, size_t i);

/// Emits a helper node and returns its first output.
Value* helper(onnx_import::OnnxNode& n, Op op, std::vector<Value*> inputs, AttrMap attrs = {});
/// Cast(v) to the ferry dtype named `to` ("i64", "f32", ...).
Value* cast(onnx_import::OnnxNode& n, Value* v, const char* to);
/// An f32 scalar constant.
Value* f32_scalar(onnx_import::OnnxNode& n, float v, const std::string& what);

}  // namespace ferry::repair
