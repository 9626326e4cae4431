// Neural-network ATen ops: convolution, linear layers and matrix products,
// normalizations (inference), pooling, embedding, scaled dot-product attention,
// reductions. NCHW throughout, as in torch.
#include <cmath>

#include "frontends/torch/import_table.h"

namespace ferry::torch_import {
namespace {

/// pads for ONNX: [b0, b1, ..., e0, e1, ...] from torch's symmetric padding.
std::vector<int64_t> onnx_pads(const std::vector<int64_t>& p) {
  std::vector<int64_t> out = p;
  out.insert(out.end(), p.begin(), p.end());
  return out;
}

Result<size_t> spatial_rank(TorchNode& n, Value* w) {
  if (!w->shape().rank_known() || w->shape().rank() < 3) return n.unsupported("the convolution weight's rank is not known or below 3");
  return size_t(w->shape().rank() - 2);
}

Status conv_common(TorchNode& n, Value* x, Value* w, Value* b, size_t k, const std::vector<int64_t>& stride,
                   const std::vector<int64_t>& dilation, int64_t groups) {
  if (stride.size() != k || dilation.size() != k) return invalid_model("stride / dilation do not match the weight's rank");
  AttrMap a;
  a.set("strides", stride);
  a.set("dilations", dilation);
  a.set("group", groups);
  if (n.has("padding") && n.arg("padding")->contains("as_string")) {
    const std::string mode = n.string_or("padding", "valid");
    if (mode == "same") a.set("auto_pad", std::string("SAME_UPPER"));
    else if (mode == "valid") a.set("pads", std::vector<int64_t>(2 * k, 0));
    else return invalid_model("padding='" + mode + "'");
  } else {
    const std::vector<int64_t> pad = n.ints_or("padding", std::vector<int64_t>(k, 0), k);
    if (pad.size() != k) return invalid_model("padding does not match the weight's rank");
    a.set("pads", onnx_pads(pad));
  }
  FERRY_TRY(n.arg_status());
  std::vector<Value*> ins = {x, w};
  if (b) ins.push_back(b);
  n.set_output(0, n.emit1(Op::Conv, ins, a));
  return Status::Ok();
}

/// ConvTranspose: torch's weight [C_in, C_out / groups, k...] is ONNX's layout too.
Status conv_transpose_common(TorchNode& n, Value* x, Value* w, Value* b, size_t k) {
  const auto stride = n.ints_or("stride", std::vector<int64_t>(k, 1), k);
  const auto dilation = n.ints_or("dilation", std::vector<int64_t>(k, 1), k);
  const auto pad = n.ints_or("padding", std::vector<int64_t>(k, 0), k);
  const auto out_pad = n.ints_or("output_padding", std::vector<int64_t>(k, 0), k);
  FERRY_TRY(n.arg_status());
  if (stride.size() != k || dilation.size() != k || pad.size() != k || out_pad.size() != k)
    return invalid_model("stride / padding / output_padding / dilation do not match the weight's rank");
  AttrMap a;
  a.set("strides", stride);
  a.set("dilations", dilation);
  a.set("group", n.int_or("groups", 1));
  a.set("pads", onnx_pads(pad));
  a.set("output_padding", out_pad);
  std::vector<Value*> ins = {x, w};
  if (b) ins.push_back(b);
  n.set_output(0, n.emit1(Op::ConvTranspose, ins, a));
  return n.arg_status();
}

}  // namespace

Status import_conv_transpose(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("input"));
  FERRY_ASSIGN_OR_RETURN(Value* w, n.tensor("weight"));
  FERRY_ASSIGN_OR_RETURN(size_t k, spatial_rank(n, w));
  return conv_transpose_common(n, x, w, n.opt_tensor("bias"), k);
}

Status import_conv(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("input"));
  FERRY_ASSIGN_OR_RETURN(Value* w, n.tensor("weight"));
  FERRY_ASSIGN_OR_RETURN(size_t k, spatial_rank(n, w));
  const auto stride = n.ints_or("stride", std::vector<int64_t>(k, 1), k);
  const auto dilation = n.ints_or("dilation", std::vector<int64_t>(k, 1), k);
  return conv_common(n, x, w, n.opt_tensor("bias"), k, stride, dilation, n.int_or("groups", 1));
}

Status import_convolution(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("input"));
  FERRY_ASSIGN_OR_RETURN(Value* w, n.tensor("weight"));
  FERRY_ASSIGN_OR_RETURN(size_t k, spatial_rank(n, w));
  if (n.bool_or("transposed", false)) return conv_transpose_common(n, x, w, n.opt_tensor("bias"), k);
  const auto stride = n.ints_or("stride", std::vector<int64_t>(k, 1), k);
  const auto dilation = n.ints_or("dilation", std::vector<int64_t>(k, 1), k);
  return conv_common(n, x, w, n.opt_tensor("bias"), k, stride, dilation, n.int_or("groups", 1));
}

Status import_linear(TorchNode& n) {  // x W^T + b
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("input"));
  FERRY_ASSIGN_OR_RETURN(Value* w, n.tensor("weight"));
  Value* b = n.opt_tensor("bias");
  FERRY_TRY(n.arg_status());
  if (x->shape().rank_known() && x->shape().rank() == 2) {
    AttrMap a;
    a.set("transB", int64_t(1));
    std::vector<Value*> ins = {x, w};
    if (b) ins.push_back(b);
    n.set_output(0, n.emit1(Op::Gemm, ins, a));
    return Status::Ok();
  }
  AttrMap t;
  t.set("perm", std::vector<int64_t>{1, 0});
  Value* wt = n.helper1(Op::Transpose, {w}, t);
  if (!b) {
    n.set_output(0, n.emit1(Op::MatMul, {x, wt}));
    return Status::Ok();
  }
  n.set_output(0, n.emit1(Op::Add, {n.helper1(Op::MatMul, {x, wt}), b}));
  return Status::Ok();
}

Status import_addmm(TorchNode& n) {  // beta * self + alpha * mat1 @ mat2
  FERRY_ASSIGN_OR_RETURN(Value* c, n.tensor("self"));
  FERRY_ASSIGN_OR_RETURN(Value* a, n.tensor("mat1"));
  FERRY_ASSIGN_OR_RETURN(Value* b, n.tensor("mat2"));
  AttrMap at;
  at.set("alpha", n.scalar("alpha").value_or(1.0));
  at.set("beta", n.scalar("beta").value_or(1.0));
  FERRY_TRY(n.arg_status());
  n.set_output(0, n.emit1(Op::Gemm, {a, b, c}, at));
  return Status::Ok();
}

namespace {

/// Ones of the per-channel length of `like` (a running statistic), when weight / bias is None.
Result<Value*> ones_like_channels(TorchNode& n, Value* like, double v, const char* what) {
  if (!like->shape().is_static()) return n.unsupported(std::string("the ") + what + " is None and the channel count is not static");
  Tensor t = Tensor::empty(like->dtype() == DType::undefined ? DType::f32 : like->dtype(), like->shape().static_dims());
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, v);
  return n.constant(std::move(t), what);
}

Status batch_norm_common(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("input"));
  FERRY_ASSIGN_OR_RETURN(Value* mean, n.tensor("running_mean"));
  FERRY_ASSIGN_OR_RETURN(Value* var, n.tensor("running_var"));
  Value* w = n.opt_tensor("weight");
  Value* b = n.opt_tensor("bias");
  if (!w) {
    FERRY_ASSIGN_OR_RETURN(w, ones_like_channels(n, mean, 1.0, "weight"));
  }
  if (!b) {
    FERRY_ASSIGN_OR_RETURN(b, ones_like_channels(n, mean, 0.0, "bias"));
  }
  AttrMap a;
  a.set("epsilon", n.float_or("eps", 1e-5));
  FERRY_TRY(n.arg_status());
  n.set_output(0, n.emit1(Op::BatchNormalization, {x, w, b, mean, var}, a));
  return Status::Ok();
}

}  // namespace

Status import_native_batch_norm_no_training(TorchNode& n) { return batch_norm_common(n); }

Status import_batch_norm(TorchNode& n) {
  if (n.bool_or("training", false))
    return n.unsupported("batch_norm in training mode uses batch statistics", "export the model in eval mode (model.eval())");
  return batch_norm_common(n);
}

Status import_layer_norm(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("input"));
  const std::vector<int64_t> shape = n.ints_or("normalized_shape", {});
  Value* w = n.opt_tensor("weight");
  Value* b = n.opt_tensor("bias");
  FERRY_TRY(n.arg_status());
  if (shape.empty()) return invalid_model("normalized_shape is empty");
  if (!w) {
    auto t = Tensor::zeros(x->dtype() == DType::undefined ? DType::f32 : x->dtype(), shape);
    if (!t.ok()) return t.status();
    for (int64_t i = 0; i < t->numel(); ++i) t->set_double(i, 1.0);
    w = n.constant(std::move(t).value(), "weight");
  }
  AttrMap a;
  a.set("axis", -int64_t(shape.size()));
  a.set("epsilon", n.float_or("eps", 1e-5));
  std::vector<Value*> ins = {x, w};
  if (b) ins.push_back(b);
  n.set_output(0, n.emit1(Op::LayerNormalization, ins, a));
  return n.arg_status();
}

Status import_rms_norm(TorchNode& n) {  // x / sqrt(mean(x^2) + eps) * weight
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("input"));
  const std::vector<int64_t> shape = n.ints_or("normalized_shape", {});
  Value* w = n.opt_tensor("weight");
  FERRY_TRY(n.arg_status());
  if (shape.empty()) return invalid_model("normalized_shape is empty");
  // eps=None is torch.finfo(x.dtype).eps.
  const DType t = x->dtype() == DType::undefined ? DType::f32 : x->dtype();
  const double finfo_eps = t == DType::f64 ? 2.220446049250313e-16 : t == DType::f16 ? 0.0009765625
                                           : t == DType::bf16 ? 0.0078125 : 1.1920928955078125e-07;
  if (!w) {
    FERRY_ASSIGN_OR_RETURN(Tensor ones, Tensor::zeros(t, shape));
    for (int64_t i = 0; i < ones.numel(); ++i) ones.set_double(i, 1.0);
    w = n.constant(std::move(ones), "weight");
  }
  AttrMap a;
  a.set("axis", -int64_t(shape.size()));
  a.set("epsilon", n.float_or("eps", finfo_eps));
  n.set_output(0, n.emit1(Op::RMSNormalization, {x, w}, a));
  return n.arg_status();
}

namespace {

Status pool_common(TorchNode& n, Op op, bool avg) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  const std::vector<int64_t> kernel = n.ints_or("kernel_size", {}, 2);
  std::vector<int64_t> stride = n.ints_or("stride", {}, 2);
  if (stride.empty()) stride = kernel;
  const std::vector<int64_t> pad = n.ints_or("padding", {0, 0}, 2);
  AttrMap a;
  a.set("kernel_shape", kernel);
  a.set("strides", stride);
  a.set("pads", onnx_pads(pad));
  a.set("ceil_mode", int64_t(n.bool_or("ceil_mode", false)));
  if (avg) {
    a.set("count_include_pad", int64_t(n.bool_or("count_include_pad", true)));
    if (n.has("divisor_override")) return n.unsupported("avg_pool2d with divisor_override is not supported");
  } else {
    a.set("dilations", n.ints_or("dilation", {1, 1}, 2));
  }
  FERRY_TRY(n.arg_status());
  if (kernel.size() != 2 || stride.size() != 2 || pad.size() != 2) return invalid_model("pooling parameters must have 2 values");
  n.set_output(0, n.emit1(op, {x}, a));
  return Status::Ok();
}

}  // namespace

Status import_max_pool2d(TorchNode& n) { return pool_common(n, Op::MaxPool, false); }
Status import_avg_pool2d(TorchNode& n) { return pool_common(n, Op::AveragePool, true); }

Status import_adaptive_avg_pool2d(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  const std::vector<int64_t> out = n.ints_or("output_size", {}, 2);
  FERRY_TRY(n.arg_status());
  if (out.size() != 2) return invalid_model("output_size must have 2 values");
  if (out[0] == 1 && out[1] == 1) {
    n.set_output(0, n.emit1(Op::GlobalAveragePool, {x}));
    return Status::Ok();
  }
  const Shape& s = x->shape();
  if (!s.rank_known() || s.rank() != 4 || !s[2].is_static() || !s[3].is_static() || s[2].value() % out[0] ||
      s[3].value() % out[1])
    return n.unsupported("adaptive_avg_pool2d to " + std::to_string(out[0]) + "x" + std::to_string(out[1]) +
                         " needs static input sizes that the output size divides");
  const std::vector<int64_t> k = {s[2].value() / out[0], s[3].value() / out[1]};
  AttrMap a;
  a.set("kernel_shape", k);
  a.set("strides", k);
  n.set_output(0, n.emit1(Op::AveragePool, {x}, a));
  return Status::Ok();
}

Status import_embedding(TorchNode& n) {  // weight[indices]
  FERRY_ASSIGN_OR_RETURN(Value* w, n.tensor("weight"));
  FERRY_ASSIGN_OR_RETURN(Value* idx, n.tensor("indices"));
  AttrMap a;
  a.set("axis", int64_t(0));
  n.set_output(0, n.emit1(Op::Gather, {w, idx}, a));
  return n.arg_status();
}

Status import_sdpa(TorchNode& n) {
  FERRY_ASSIGN_OR_RETURN(Value* q, n.tensor("query"));
  FERRY_ASSIGN_OR_RETURN(Value* k, n.tensor("key"));
  FERRY_ASSIGN_OR_RETURN(Value* v, n.tensor("value"));
  Value* mask = n.opt_tensor("attn_mask");
  const double dropout = n.float_or("dropout_p", 0.0);
  const bool causal = n.bool_or("is_causal", false);
  const bool has_scale = n.has("scale");
  const double scale = n.float_or("scale", 0.0);
  const bool gqa = n.bool_or("enable_gqa", false);
  FERRY_TRY(n.arg_status());
  if (dropout != 0.0) return n.unsupported("attention dropout (dropout_p > 0) is random", "export in eval mode with dropout_p=0");
  for (Value* t : {q, k, v})
    if (!t->shape().rank_known() || t->shape().rank() != 4)
      return n.unsupported("scaled_dot_product_attention is imported for 4-D [batch, heads, seq, dim] inputs only");
  const Dim& hq = q->shape()[1];
  const Dim& hkv = k->shape()[1];
  if (!gqa && hq.is_static() && hkv.is_static() && hq.value() != hkv.value())
    return invalid_model("query has " + hq.to_string() + " heads and key " + hkv.to_string() + " without enable_gqa");
  if (causal && mask) return invalid_model("is_causal together with attn_mask");
  AttrMap a;
  a.set("is_causal", int64_t(causal));
  if (has_scale) a.set("scale", scale);
  std::vector<Value*> ins = {q, k, v};
  if (mask) ins.push_back(mask);
  n.set_output(0, n.emit1(Op::Attention, ins, a));
  return Status::Ok();
}

namespace {

Status reduce(TorchNode& n, Op op) {
  FERRY_ASSIGN_OR_RETURN(Value* x, n.tensor("self"));
  const std::vector<int64_t> dims = n.ints_or("dim", {});
  const bool keep = n.bool_or("keepdim", false);
  if (auto dt = n.dtype_arg("dtype")) x = n.cast(x, *dt);
  FERRY_TRY(n.arg_status());
  AttrMap a;
  a.set("keepdims", int64_t(keep));
  std::vector<Value*> ins = {x};
  if (!dims.empty()) ins.push_back(n.const_i64(dims, "axes"));
  n.set_output(0, n.emit1(op, ins, a));
  return Status::Ok();
}

}  // namespace

Status import_mean(TorchNode& n) { return reduce(n, Op::ReduceMean); }
Status import_sum(TorchNode& n) { return reduce(n, Op::ReduceSum); }

}  // namespace ferry::torch_import
