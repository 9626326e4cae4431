// tests/ops/op_test_util.h — run or shape-infer one op in isolation.
//
// run_op builds a one-node graph (inputs "in0", "in1", ...; node "test"),
// verifies it, infers shapes on the graph, interprets it, and checks that each
// output's dtype and (when the graph inference was static) shape agree with
// what the graph inference said. Inputs are graph inputs, not constants, so
// kernels see them only at run time; run_op_with_constants makes chosen inputs
// constants (for ops whose output shape depends on a value, like Reshape).
//
//   auto out = run_op(Op::Add, {f32({2}, {1, 2}), f32({}, {10})});
//   ASSERT_TRUE(out.ok()) << out.status().to_string();
//   expect_near((*out)[0], {11, 12});
//
// API is stable: other op test files use it. Add, do not change.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <source_location>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/verifier.h"
#include "ops/op_context.h"
#include "ops/registry.h"
#include "ops/shape_inference.h"
#include "runtime/interpreter.h"

namespace ferry::testing {

/// Name of the node that run_op / infer_op build (appears in error messages as "'test' (Op)").
inline constexpr const char* kTestNodeName = "test";

namespace detail {

inline std::string input_name(size_t i) { return "in" + std::to_string(i); }

// Adds `inputs` (undefined Tensor = omitted optional input) as graph inputs, or
// constants where as_constant[i], and one node with `num_outputs` outputs.
inline Node* build_one_node(Graph& g, Op op, const std::vector<Tensor>& inputs, const AttrMap& attrs,
                            size_t num_outputs, const std::vector<bool>& as_constant) {
  std::vector<Value*> vals;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      vals.push_back(nullptr);
    } else if (i < as_constant.size() && as_constant[i]) {
      vals.push_back(g.add_constant(input_name(i), inputs[i]));
    } else {
      vals.push_back(g.add_input(input_name(i), inputs[i].dtype(), inputs[i].shape()));
    }
  }
  // Trailing omitted inputs are dropped, as importers do.
  while (!vals.empty() && vals.back() == nullptr) vals.pop_back();
  Node* n = g.add_node(op, vals, num_outputs, attrs, kTestNodeName);
  std::vector<Value*> outs;
  for (size_t i = 0; i < num_outputs; ++i) outs.push_back(n->output(i));
  g.set_outputs(outs);
  return n;
}

}  // namespace detail

/// Runs `op` on `inputs` with the reference interpreter, inputs given as
/// constants where `as_constant[i]` is true. Undefined tensors are omitted
/// optional inputs.
inline Result<std::vector<Tensor>> run_op_with_constants(Op op, std::vector<Tensor> inputs,
                                                         std::vector<bool> as_constant, AttrMap attrs = {},
                                                         size_t num_outputs = 1) {
  Graph g;
  detail::build_one_node(g, op, inputs, attrs, num_outputs, as_constant);
  FERRY_TRY(verify(g));
  FERRY_TRY(infer_shapes(g));
  std::map<std::string, Tensor> feeds;
  for (const Value* in : g.inputs())
    for (size_t i = 0; i < inputs.size(); ++i)
      if (in->name() == detail::input_name(i)) feeds[in->name()] = inputs[i];
  FERRY_ASSIGN_OR_RETURN(std::vector<Tensor> outs, interpret(g, feeds));
  // The graph-level inference (static inputs) must agree with what ran.
  for (size_t i = 0; i < outs.size(); ++i) {
    const Value* v = g.outputs()[i];
    if (v->dtype() != outs[i].dtype())
      return internal_error("output " + std::to_string(i) + ": graph inference says " + dtype_name(v->dtype()) +
                            ", kernel produced " + dtype_name(outs[i].dtype()));
    if (v->shape().is_static() && v->shape().static_dims() != outs[i].dims())
      return internal_error("output " + std::to_string(i) + ": graph inference says " + v->shape().to_string() +
                            ", kernel produced " + outs[i].shape().to_string());
  }
  return outs;
}

/// Runs `op` on `inputs` (all graph inputs) with the reference interpreter.
/// An undefined Tensor is an omitted optional input.
inline Result<std::vector<Tensor>> run_op(Op op, std::vector<Tensor> inputs, AttrMap attrs = {},
                                          size_t num_outputs = 1) {
  return run_op_with_constants(op, std::move(inputs), {}, std::move(attrs), num_outputs);
}

/// Runs infer_<op> on the given input facts (dtype undefined = omitted input;
/// InputInfo::value = a known constant value).
inline Result<std::vector<OutputInfo>> infer_op(Op op, std::vector<InputInfo> inputs, AttrMap attrs = {},
                                                size_t num_outputs = 1) {
  Graph g;
  std::vector<Value*> vals;
  for (size_t i = 0; i < inputs.size(); ++i)
    vals.push_back(inputs[i].dtype == DType::undefined
                       ? nullptr
                       : g.add_input(detail::input_name(i), inputs[i].dtype, inputs[i].shape));
  while (!vals.empty() && vals.back() == nullptr) vals.pop_back();
  inputs.resize(vals.size());
  Node* n = g.add_node(op, vals, num_outputs, attrs, kTestNodeName);
  std::vector<OutputInfo> outs;
  FERRY_TRY(infer_node(*n, std::move(inputs), &outs));
  return outs;
}

/// A tensor of `dtype` and `dims` with elements converted from doubles
/// (f16/bf16 rounded to nearest even; integers by C++ conversion).
inline Tensor make_tensor(DType dtype, std::vector<int64_t> dims, const std::vector<double>& values) {
  Tensor t = Tensor::empty(dtype, std::move(dims));
  EXPECT_EQ(size_t(t.numel()), values.size()) << "make_tensor: value count does not match dims";
  for (int64_t i = 0; i < t.numel() && size_t(i) < values.size(); ++i) t.set_double(i, values[size_t(i)]);
  return t;
}
inline Tensor f32(std::vector<int64_t> dims, const std::vector<double>& v) { return make_tensor(DType::f32, dims, v); }
inline Tensor f64(std::vector<int64_t> dims, const std::vector<double>& v) { return make_tensor(DType::f64, dims, v); }
inline Tensor i32(std::vector<int64_t> dims, const std::vector<double>& v) { return make_tensor(DType::i32, dims, v); }
inline Tensor i64(std::vector<int64_t> dims, const std::vector<double>& v) { return make_tensor(DType::i64, dims, v); }
inline Tensor boolean(std::vector<int64_t> dims, const std::vector<double>& v) {
  return make_tensor(DType::boolean, dims, v);
}

/// Shape from a list of dims where a string is a symbol: shape_of({"N", 3}).
struct DimSpec {
  DimSpec(int64_t v) : dim(v) {}                      // NOLINT
  DimSpec(int v) : dim(int64_t(v)) {}                 // NOLINT
  DimSpec(const char* s) : dim(std::string(s) == "?" ? Dim::unknown() : Dim::symbol(s)) {}  // NOLINT
  Dim dim;
};
inline Shape shape_of(std::initializer_list<DimSpec> dims) {
  std::vector<Dim> d;
  for (const DimSpec& s : dims) d.push_back(s.dim);
  return Shape(std::move(d));
}

/// Expects t's elements (read as doubles) to equal `expected` within
/// tol * max(1, |expected|) — absolute near zero, relative for large values.
/// NaN matches NaN; infinities must match exactly.
/// Failures also name the caller's line (loc).
inline void expect_near(const Tensor& t, const std::vector<double>& expected, double tol = 1e-6,
                        std::source_location loc = std::source_location::current()) {
  ::testing::ScopedTrace trace(loc.file_name(), int(loc.line()), "expect_near called here");
  ASSERT_EQ(size_t(t.numel()), expected.size()) << "element count of " << t.type_string();
  for (size_t i = 0; i < expected.size(); ++i) {
    double got = t.get_double(int64_t(i)), want = expected[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << ": got " << got << ", want NaN";
    } else if (std::isinf(want) || std::isinf(got)) {
      EXPECT_EQ(got, want) << "element " << i;
    } else {
      EXPECT_LE(std::fabs(got - want), tol * std::max(1.0, std::fabs(want)))
          << "element " << i << ": got " << got << ", want " << want;
    }
  }
}

/// Expects dtype and dims.
inline void expect_type(const Tensor& t, DType dtype, const std::vector<int64_t>& dims,
                        std::source_location loc = std::source_location::current()) {
  ::testing::ScopedTrace trace(loc.file_name(), int(loc.line()), "expect_type called here");
  EXPECT_EQ(t.dtype(), dtype) << "got " << t.type_string();
  EXPECT_EQ(t.dims(), dims) << "got " << t.type_string();
}

/// Expects a failed status whose message contains `needle`.
inline void expect_error(const Status& st, const std::string& needle,
                         std::source_location loc = std::source_location::current()) {
  ::testing::ScopedTrace trace(loc.file_name(), int(loc.line()), "expect_error called here");
  ASSERT_FALSE(st.ok()) << "expected an error containing '" << needle << "'";
  EXPECT_NE(st.message().find(needle), std::string::npos) << st.to_string();
}
template <class T>
void expect_error(const Result<T>& r, const std::string& needle,
                  std::source_location loc = std::source_location::current()) {
  expect_error(r.status(), needle, loc);
}

// Shared test data and small builders (one definition each, so the test files can share a
// unity-build translation unit).
inline AttrMap attrs(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  AttrMap m;
  for (const auto& [k, v] : kv) m.set(k, v);
  return m;
}

/// {start, start + 1, ..., start + n - 1}.
inline std::vector<double> iota(int n, double start = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = start + i;
  return v;
}

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// A 3x3 f32 matrix 1..9.
inline Tensor m33() { return f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}); }

/// Values with repeated maxima and minima (arg-reduce and TopK tie breaking).
inline const std::vector<double> kTies = {1, 5, 5, 2, 7, 7, 0, 0, 3, 1, 4, 1};

/// A fixed 2x3x4 input for reductions, softmax and normalization.
inline const std::vector<double> kX234 = {
    0.0, 2.9906744956970215, 1.7465040683746338, -1.763298511505127, -2.250364065170288, 1.145359992980957,
    3.595629930496216, 1.6572951078414917, -1.6834794282913208, -1.3859508037567139, 2.2605011463165283,
    4.06031608581543, 1.5232609510421753, -1.4873720407485962, -0.4144984781742096, 3.316619634628296,
    4.386385917663574, 1.3740901947021484, -1.160746693611145, 0.6419172286987305, 4.287675380706787,
    4.58198356628418, 1.2401801347732544, -0.6954851150512695};

}  // namespace ferry::testing
