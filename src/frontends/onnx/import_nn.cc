// Normalization, pooling, the softmax family and dropout, where opsets differ from
// the IR form (Conv, Gemm, MatMul, LayerNormalization, ... are DIRECT rows).
#include "frontends/onnx/import_table.h"

namespace ferry::onnx_import {
namespace {

constexpr const char* kEvalRepair = "export the model in inference mode (e.g. model.eval() in PyTorch)";

/// Softmax/LogSoftmax/Hardmax. Before opset 13 the input is coerced to 2-D
/// [d0*...*d(axis-1), d(axis)*...*d(n-1)] and normalized over the second
/// dimension (default axis 1):  y = Reshape(Softmax(Flatten(x, axis), -1), Shape(x)).
Status import_softmax_family(OnnxNode& n, Op op) {
  if (n.opset() >= 13) return import_direct(n, op);
  FERRY_TRY(n.expect_inputs(1, 1));
  Value* x = n.input(0);
  int64_t axis = n.int_or("axis", 1);
  AttrMap last;
  last.set("axis", int64_t(-1));
  // Coercing at the last axis changes nothing: normalize over that axis directly.
  bool at_last = axis == -1 || (x->shape().rank_known() && axis == x->shape().rank() - 1);
  if (at_last) {
    n.set_outputs(n.emit(op, {x}, last));
    return Status::Ok();
  }
  AttrMap flatten;
  flatten.set("axis", axis);
  Value* shape = n.shape_of(x);
  Value* flat = n.emit_helper(Op::Flatten, {x}, flatten)->output(0);
  Value* y2d = n.emit(op, {flat}, last)->output(0);
  n.set_outputs(n.emit_helper(Op::Reshape, {y2d, shape}));
  return Status::Ok();
}

}  // namespace

Status import_Softmax(OnnxNode& n) { return import_softmax_family(n, Op::Softmax); }
Status import_LogSoftmax(OnnxNode& n) { return import_softmax_family(n, Op::LogSoftmax); }

/// Attention: opset 24 adds the 7th input (nonpad_kv_seqlen), opset 25 the window
/// sizes and refuses the head attributes with 4-D inputs.
Status import_Attention(OnnxNode& n) {
  const std::string at = " at opset " + std::to_string(n.opset());
  if (n.opset() < 24 && n.num_inputs() > 6)
    return invalid_model("input 7 (nonpad_kv_seqlen) is not defined for Attention" + at + " (it appears in opset 24)");
  for (const char* attr : {"left_window_size", "right_window_size"})
    if (n.opset() < 25 && n.has(attr))
      return invalid_model(std::string("attribute '") + attr + "' is not defined for Attention" + at +
                           " (it appears in opset 25)");
  auto named = [&](int o) { return n.proto().output_size() > o && !n.proto().output(o).empty(); };
  if (n.input(6) && (named(1) || named(2)))
    return invalid_model("Attention nonpad_kv_seqlen (an external cache) cannot be used with the present_key / "
                         "present_value outputs");
  const Shape q = n.input(0) ? n.input(0)->shape() : Shape::unknown_rank();
  if (n.opset() >= 25 && q.rank_known() && q.rank() == 4 && (n.has("q_num_heads") || n.has("kv_num_heads")))
    return invalid_model("Attention" + at + " takes q_num_heads and kv_num_heads only with 3-D inputs, Q is " +
                         q.to_string());
  return import_direct(n, Op::Attention);
}

/// MeanVarianceNormalization (opsets 9, 13) is its ONNX function body:
/// Y = (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), means over `axes` (default [0, 2, 3]).
Status import_MeanVarianceNormalization(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  Value* x = n.input(0);
  Value* axes = n.const_i64(n.opt_ints("axes").value_or(std::vector<int64_t>{0, 2, 3}), "axes");
  auto op = [&](Op o, std::vector<Value*> in) { return n.emit_helper(o, std::move(in))->output(0); };
  Value* mean = op(Op::ReduceMean, {x, axes});
  Value* mean_of_squares = op(Op::ReduceMean, {op(Op::Mul, {x, x}), axes});
  Value* std = op(Op::Sqrt, {op(Op::Sub, {mean_of_squares, op(Op::Mul, {mean, mean})})});
  Value* den = op(Op::Add, {std, n.scalar_like(1e-9, x, "epsilon")});
  n.set_outputs(n.emit(Op::Div, {op(Op::Sub, {x, mean}), den}));
  return Status::Ok();
}

Status import_BatchNormalization(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(5, 5));
  AttrMap a;
  n.copy(a, "epsilon", Op::BatchNormalization);
  n.copy(a, "momentum", Op::BatchNormalization);
  // Legacy attributes (opset < 7) that some exporters keep writing; inference ignores them.
  n.ignore("is_test");
  n.ignore("consumed_inputs");
  int64_t spatial = n.int_or("spatial", 1, {.until = 9});
  if (n.int_or("training_mode", 0, {.since = 14}) != 0)
    return n.unsupported("training_mode=1 (training) is not supported", kEvalRepair);
  if (spatial == 0) {
    // Per-activation statistics; identical to spatial=1 only when every parameter is per-channel.
    for (size_t i = 1; i < 5; ++i) {
      const Tensor* t = n.constant_input(i);
      if (!t || t->rank() != 1)
        return n.unsupported("spatial=0 with per-activation (non 1-D or non-constant) parameters is not supported");
    }
  }
  for (size_t i = 1; i < n.num_outputs(); ++i)
    if (n.output_used(i))
      return n.unsupported("output " + std::to_string(i) + " ('" + n.proto().output(int(i)) +
                               "', running statistics) exists only in training mode",
                           kEvalRepair);
  n.set_output(0, n.emit(Op::BatchNormalization, n.inputs(), a)->output(0));
  return Status::Ok();
}

Status import_GroupNormalization(OnnxNode& n) {
  if (n.opset() >= 21) return import_direct(n, Op::GroupNormalization);
  // Opsets 18-20 scale and bias per group ([G]) instead of per channel. Viewing
  // x as [N, G, rest], that is InstanceNormalization with G channels:
  //   y = Reshape(InstanceNormalization(Reshape(x, [0, G, -1]), scale, bias), Shape(x))
  FERRY_TRY(n.expect_inputs(3, 3));
  std::optional<int64_t> groups = n.opt_int("num_groups");
  if (!groups) return invalid_model("required attribute 'num_groups' is missing");
  if (*groups <= 0) return invalid_model("num_groups = " + std::to_string(*groups) + " must be positive");
  for (size_t i = 1; i < 3; ++i)
    if (const Tensor* t = n.constant_input(i); t && (t->rank() != 1 || t->dim(0) != *groups))
      return invalid_model(std::string(i == 1 ? "scale" : "bias") + " is " + t->type_string() + ", expected [" +
                           std::to_string(*groups) + "] (one value per group before opset 21)");
  AttrMap a;
  n.copy(a, "epsilon", Op::InstanceNormalization);
  Value* x = n.input(0);
  Value* shape = n.shape_of(x);
  Value* grouped = n.emit_helper(Op::Reshape, {x, n.const_i64({0, *groups, -1}, "group_shape")})->output(0);
  Value* normed = n.emit(Op::InstanceNormalization, {grouped, n.input(1), n.input(2)}, a)->output(0);
  n.set_outputs(n.emit_helper(Op::Reshape, {normed, shape}));
  return Status::Ok();
}

Status import_MaxPool(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  AttrMap a;
  for (const char* name : {"auto_pad", "kernel_shape", "pads", "strides"}) n.copy(a, name, Op::MaxPool);
  n.copy(a, "storage_order", Op::MaxPool, {.since = 8});
  n.copy(a, "ceil_mode", Op::MaxPool, {.since = 10});
  n.copy(a, "dilations", Op::MaxPool, {.since = 10});
  if (!a.has("kernel_shape")) return invalid_model("required attribute 'kernel_shape' is missing");
  size_t nout = n.num_outputs() >= 2 && !n.proto().output(1).empty() ? 2 : 1;
  n.set_outputs(n.emit(Op::MaxPool, {n.input(0)}, a, nout));
  return Status::Ok();
}

Status import_AveragePool(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  AttrMap a;
  for (const char* name : {"auto_pad", "kernel_shape", "pads", "strides", "count_include_pad"})
    n.copy(a, name, Op::AveragePool);
  n.copy(a, "ceil_mode", Op::AveragePool, {.since = 10});
  n.copy(a, "dilations", Op::AveragePool, {.since = 19});
  if (!a.has("kernel_shape")) return invalid_model("required attribute 'kernel_shape' is missing");
  n.set_outputs(n.emit(Op::AveragePool, {n.input(0)}, a));
  return Status::Ok();
}

Status import_Dropout(OnnxNode& n) {
  // Inference (or training with ratio 0): Dropout is the identity and keeps every element.
  FERRY_TRY(n.expect_inputs(1, n.opset() >= 12 ? 3 : 1));
  n.ignore("ratio", {.until = 12});
  n.ignore("seed", {.since = 12});
  if (n.input(2)) {
    const Tensor* mode = n.constant_input(2);
    if (!mode) return n.unsupported("training_mode is not a constant; only inference is supported", kEvalRepair);
    if (mode->numel() != 1) return invalid_model("training_mode must be a scalar, got " + mode->type_string());
    // Training with ratio 0 (what exporters write for attention dropout with p = 0) drops
    // nothing and scales by 1/(1-0): the identity, with an all-true mask.
    const Tensor* ratio = n.constant_input(1);
    const bool ratio_zero = ratio && ratio->numel() == 1 && ratio->get_double(0) == 0.0;
    if (mode->get_int(0) != 0 && !ratio_zero)
      return n.unsupported("training_mode=true (training) with a ratio other than a constant 0 is not supported",
                           kEvalRepair);
  }
  Value* x = n.input(0);
  n.set_output(0, n.emit(Op::Identity, {x})->output(0));
  if (n.output_used(1)) {
    // mask = all true (opset >= 10: bool; before: ones of x's type).
    bool boolean = n.opset() >= 10;
    AttrMap a;
    a.set("value", boolean ? Tensor::from_vector<bool>({true}, {1}) : Tensor::from_vector<float>({1.0f}, {1}));
    Value* shape = n.shape_of(x);
    Value* mask = n.emit_helper(Op::ConstantOfShape, {shape}, a)->output(0);
    if (!boolean) mask = n.emit_helper(Op::CastLike, {mask, x})->output(0);
    n.set_output(1, mask);
  }
  return Status::Ok();
}

// Before opset 13 Hardmax coerced the input to 2-D at `axis` (default 1), as Softmax did: the
// first maximum of each flattened row (ties: the first in row-major order, as over the 2-D view).
Status import_Hardmax(OnnxNode& n) { return import_softmax_family(n, Op::Hardmax); }

Status import_LpPool(OnnxNode& n) {
  FERRY_TRY(n.expect_inputs(1, 1));
  if (n.opset() < 2) return n.unsupported("LpPool-1 (float p) is not supported");
  AttrMap a;
  for (const char* name : {"auto_pad", "kernel_shape", "pads", "strides", "p"}) n.copy(a, name, Op::LpPool);
  n.copy(a, "ceil_mode", Op::LpPool, {.since = 18});
  n.copy(a, "dilations", Op::LpPool, {.since = 18});
  if (!a.has("kernel_shape")) return invalid_model("required attribute 'kernel_shape' is missing");
  n.set_outputs(n.emit(Op::LpPool, {n.input(0)}, a));
  return Status::Ok();
}

}  // namespace ferry::onnx_import
