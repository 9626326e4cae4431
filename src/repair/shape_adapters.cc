#include "repair/shape_adapters.h"

#include "repair/rule_util.h"

namespace ferry::repair {
namespace {

using onnx_import::ImportRow;
using onnx_import::OnnxNode;

std::string shape_of(const OnnxNode& n, size_t i) { return n.input(i)->shape().to_string(); }

// --- unbatched: y = Squeeze(op(Unsqueeze(x, 0)), 0) ------------------------------------

/// Conv, ConvTranspose: X has one axis less than W ([C, D1 ..] against [M, C/g, k1 ..]).
std::string unbatched_conv(const OnnxNode& n) {
  const int64_t x = input_rank(n, 0), w = input_rank(n, 1);
  if (x < 2 || w < 3 || x != w - 1) return "";
  return "X " + shape_of(n, 0) + " has rank " + std::to_string(x) + ", W " + shape_of(n, 1) + " rank " +
         std::to_string(w) + ": X has no batch axis";
}

/// Pooling: X has as many axes as kernel_shape plus one (channels, no batch).
std::string unbatched_pool(const OnnxNode& n) {
  const auto k = attr_ints(n, "kernel_shape");
  const int64_t x = input_rank(n, 0);
  if (!k || k->empty() || x != int64_t(k->size()) + 1) return "";
  return "X " + shape_of(n, 0) + " has rank " + std::to_string(x) + " but kernel_shape has " +
         std::to_string(k->size()) + " values: X has no batch axis";
}

/// BatchNormalization, InstanceNormalization: scale is [C]; X [C, D1 ..] reads as batched
/// [N = C, D1, ..] only when D1 != C, so the unbatched reading is taken exactly where the
/// batched one fails (X's axis 1 is not C) and axis 0 is C. A rank-1 X [C] is one sample.
std::string unbatched_norm(const OnnxNode& n) {
  const Value* x = n.input(0);
  const Value* scale = n.input(1);
  if (!x || !scale || !x->shape().rank_known() || !scale->shape().is_static() || scale->shape().rank() != 1) return "";
  const int64_t c = scale->shape()[0].value(), r = x->shape().rank();
  const bool min_rank = n.op_type() == "InstanceNormalization" ? r >= 2 : r >= 1;
  const bool c_first = r >= 1 && x->shape()[0].is_static() && x->shape()[0].value() == c;
  const bool not_c_second = r == 1 || (r >= 2 && x->shape()[1].is_static() && x->shape()[1].value() != c);
  if (!min_rank || !c_first || !not_c_second) return "";
  return "X " + shape_of(n, 0) + " has C = " + std::to_string(c) + " (scale's size) on axis 0, not axis 1: X has no batch axis";
}

std::string unbatched_why_not(const OnnxNode& n) {
  if (n.op_type() == "BatchNormalization") return output_unused(n, 1) + output_unused(n, 2);
  return "";
}

Value* axis0(OnnxNode& n) { return n.const_i64({0}, "batch_axis"); }

Status unbatched_rewrite(OnnxNode& n, const ImportRow& row) {
  n.replace_input(0, helper(n, Op::Unsqueeze, {n.input(0), axis0(n)}));
  FERRY_TRY(onnx_import::import_by_row(row, n));
  for (size_t i = 0; i < n.num_outputs(); ++i)
    n.adapt_output(i, [&](Value* y) { return helper(n, Op::Squeeze, {y, axis0(n)}); });
  return Status::Ok();
}

// --- Gemm with A of rank > 2: flatten the leading axes, reshape back ----------------------

std::string gemm_rank(const OnnxNode& n) {
  const int64_t a = input_rank(n, 0);
  if (a <= 2) return "";
  return "A " + shape_of(n, 0) + " has rank " + std::to_string(a) + " (Gemm takes 2-D A)";
}

std::string gemm_why_not(const OnnxNode& n) {
  if (attr_int(n, "transA").value_or(0) != 0) return "with transA = 1 (np.dot's reading of a transposed rank > 2 A reverses every axis)";
  if (input_rank(n, 1) != 2) return "B is not 2-D";
  const Dim& k_a = n.input(0)->shape()[size_t(input_rank(n, 0) - 1)];
  const Dim& k_b = n.input(1)->shape()[attr_int(n, "transB").value_or(0) ? 1 : 0];
  if (k_a.is_static() && k_b.is_static() && k_a.value() != k_b.value())
    return "A's last axis (" + std::to_string(k_a.value()) + ") is not B's K (" + std::to_string(k_b.value()) +
           "): not the np.dot reading (a Caffe-style flatten from axis 1 has no reference to check against)";
  // C broadcasts against the flattened [d0*..*dk, N] as it would against [d0 .. dk, N] only
  // when it has no row axis of its own.
  const Value* c = n.input(2);
  if (c && (!c->shape().rank_known() || c->shape().rank() > 2 ||
            (c->shape().rank() == 2 && !(c->shape()[0].is_static() && c->shape()[0].value() == 1))))
    return "C " + c->shape().to_string() + " has a row axis (it would broadcast against A's leading axes)";
  return "";
}

/// dims [start, end) of v as a 1-D i64 value: a constant when static, else Shape(v).
Value* dims_of(OnnxNode& n, Value* v, int64_t start, int64_t end) {
  const Shape& s = v->shape();
  if (s.rank_known()) {
    const int64_t r = int64_t(s.rank()), b = start < 0 ? start + r : start, e = end < 0 ? end + r : std::min(end, r);
    std::vector<int64_t> d;
    for (int64_t i = b; i < e && s[size_t(i)].is_static(); ++i) d.push_back(s[size_t(i)].value());
    if (int64_t(d.size()) == e - b) return n.const_i64(d, "dims");
  }
  AttrMap a;
  a.set("start", start);
  a.set("end", end);
  return helper(n, Op::Shape, {v}, a);
}

Status gemm_rewrite(OnnxNode& n, const ImportRow& row) {
  Value* a = n.input(0);
  AttrMap flat;
  flat.set("axis", int64_t(a->shape().rank() - 1));
  n.replace_input(0, helper(n, Op::Flatten, {a}, flat));
  FERRY_TRY(onnx_import::import_by_row(row, n));
  n.adapt_output(0, [&](Value* y) {
    AttrMap cat;
    cat.set("axis", int64_t(0));
    Value* dims = helper(n, Op::Concat, {dims_of(n, a, 0, -1), dims_of(n, y, 1, 2)}, cat);
    return helper(n, Op::Reshape, {y, dims});
  });
  return Status::Ok();
}

constexpr const char* kUnbatched = "Unsqueeze (batch axis), the op, Squeeze";

const ShapeAdapter kAdapters[] = {
    {"AveragePool", "unbatched", kUnbatched, unbatched_pool, unbatched_why_not, unbatched_rewrite},
    {"BatchNormalization", "unbatched", kUnbatched, unbatched_norm, unbatched_why_not, unbatched_rewrite},
    {"Conv", "unbatched", kUnbatched, unbatched_conv, unbatched_why_not, unbatched_rewrite},
    {"ConvTranspose", "unbatched", kUnbatched, unbatched_conv, unbatched_why_not, unbatched_rewrite},
    {"Gemm", "rank > 2 A", "Flatten (A's leading axes), Gemm, Reshape back", gemm_rank, gemm_why_not, gemm_rewrite},
    {"InstanceNormalization", "unbatched", kUnbatched, unbatched_norm, unbatched_why_not, unbatched_rewrite},
    {"LpPool", "unbatched", kUnbatched, unbatched_pool, unbatched_why_not, unbatched_rewrite},
    {"MaxPool", "unbatched", kUnbatched, unbatched_pool, unbatched_why_not, unbatched_rewrite},
};

}  // namespace

const ShapeAdapter* find_shape_adapter(const OnnxNode& n, std::string* mismatch) {
  if (!n.proto().domain().empty() && n.proto().domain() != "ai.onnx") return nullptr;
  for (const ShapeAdapter& a : kAdapters) {
    if (n.op_type() != a.op_type) continue;
    std::string m = a.mismatch(n);
    if (m.empty()) continue;
    *mismatch = std::move(m);
    return &a;
  }
  return nullptr;
}

std::string adapter_rule_name(const ShapeAdapter& a) {
  return std::string("shape adapter ") + a.op_type + " (" + a.form + ")";
}

}  // namespace ferry::repair
