// ops/fused.cc — the optimizer's fused ops: a Conv, ConvTranspose or MatMul and its epilogue.
//
//   FusedConv(X, W, B, Z)          = act(Conv(X, W, B) + Z)
//   FusedConvTranspose(X, W, B, Z) = act(ConvTranspose(X, W, B) + Z)
//   FusedMatMul(A, B, bias, Z)     = act(MatMul(A, B) + bias + Z)      bias: [N], N = last dim of the output
//   FusedMul(A, B, -, Z)           = act(A * B + Z)                    input 2 is always omitted
//
// B, bias and Z are optional. Z broadcasts to the output without changing its
// shape. act is ops/activation.h's apply_activation(activation, x, alpha, beta).
// The core runs on the Conv / ConvTranspose / MatMul shape inference and
// reference kernel (called with the first inputs of this node, whose attributes
// they read through ops/conv_util.h's window_attr_source), the epilogue in double
// on its result, rounded once.
#include "ops/activation.h"
#include "ops/conv_util.h"
#include "ops/elementwise.h"

namespace ferry {

namespace {

/// " Relu, Clip, ..., Tanh": the activation names, for error messages.
std::string activation_names() {
  std::string s;
  for (Activation a : all_activations())
    if (a != Activation::kNone) s += std::string(s.empty() ? " " : ", ") + activation_name(a);
  return s;
}

/// Where the epilogue operands sit among the node's inputs.
struct FusedLayout {
  size_t core_inputs;  ///< inputs the core op takes (Conv: X, W, B; MatMul: A, B)
  int bias = -1;       ///< FusedMatMul's bias input, else -1
  size_t z;            ///< the residual input
};
constexpr FusedLayout kConvLayout{3, -1, 3};
constexpr FusedLayout kMatMulLayout{2, 2, 3};
constexpr FusedLayout kMulLayout{2, -1, 3};

Result<Activation> read_activation(const NodeContext& ctx) {
  const std::string& name = epilogue_attrs(ctx.node()).activation;
  auto a = activation_from_name(name);
  if (!a)
    return invalid_model("unknown activation '" + name + "' (expected none or one of" + activation_names() + ")");
  return *a;
}

/// Z must broadcast to `out` without changing it: no more dims, each dim 1 or out's.
Status check_residual_shape(const Shape& z, const Shape& out) {
  if (!z.rank_known() || !out.rank_known()) return Status::Ok();
  auto bad = [&] {
    return invalid_model("Z " + z.to_string() + " must broadcast to the output " + out.to_string() +
                         " without changing its shape");
  };
  if (z.rank() > out.rank()) return bad();
  const size_t off = size_t(out.rank() - z.rank());
  for (size_t i = 0; i < size_t(z.rank()); ++i) {
    const Dim &zd = z[i], &od = out[off + i];
    if (zd.is_static() && zd.value() != 1 && od.is_static() && zd.value() != od.value()) return bad();
  }
  return Status::Ok();
}

Status infer_fused(InferContext& ctx, InferFn core, const FusedLayout& layout) {
  std::vector<InputInfo> core_inputs;
  for (size_t i = 0; i < layout.core_inputs && i < ctx.num_inputs(); ++i) core_inputs.push_back(ctx.input(i));
  InferContext inner(ctx.node(), std::move(core_inputs));
  FERRY_TRY(core(inner));
  OutputInfo out = inner.outputs()[0];
  FERRY_TRY(check_float_dtype(out.dtype, "the first input"));
  FERRY_TRY(read_activation(ctx).status());
  if (layout.bias >= 0 && ctx.has_input(size_t(layout.bias))) {
    const size_t b = size_t(layout.bias);
    FERRY_TRY(check_same_dtype(out.dtype, ctx.input_dtype(b), "bias"));
    const Shape& bs = ctx.input_shape(b);
    if (bs.rank_known() && bs.rank() != 1) return invalid_model("bias must be 1-D, got shape " + bs.to_string());
    if (out.shape.rank_known() && out.shape.rank() == 0) return invalid_model("bias needs an output of rank >= 1");
    if (bs.rank_known() && out.shape.rank_known()) {
      const Dim &nb = bs[0], &n = out.shape[size_t(out.shape.rank() - 1)];
      if (nb.is_static() && n.is_static() && nb.value() != n.value())
        return invalid_model("bias has " + nb.to_string() + " values, the output's last dim is " + n.to_string());
    }
  }
  if (ctx.has_input(layout.z)) {
    FERRY_TRY(check_same_dtype(out.dtype, ctx.input_dtype(layout.z), "Z"));
    FERRY_TRY(check_residual_shape(ctx.input_shape(layout.z), out.shape));
  }
  ctx.set_output(0, out.dtype, std::move(out.shape));
  return Status::Ok();
}

Status ref_fused(KernelContext& ctx, KernelFn core, const FusedLayout& layout) {
  FERRY_ASSIGN_OR_RETURN(Activation act, read_activation(ctx));
  std::vector<const Tensor*> core_inputs;
  for (size_t i = 0; i < layout.core_inputs; ++i) core_inputs.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
  std::vector<Tensor> core_out(1);
  KernelContext inner(ctx.node(), std::move(core_inputs), &core_out);
  FERRY_TRY(core(inner));
  Tensor& y = core_out[0];
  FERRY_TRY(check_float_dtype(y.dtype(), "the first input"));

  std::vector<double> v = to_f64(y);
  const std::vector<int64_t>& dims = y.dims();
  if (layout.bias >= 0 && ctx.has_input(size_t(layout.bias))) {
    const Tensor& bias = ctx.input(size_t(layout.bias));
    const int64_t n = dims.empty() ? 0 : dims.back();
    if (bias.dtype() != y.dtype() || bias.rank() != 1 || bias.dim(0) != n)
      return invalid_argument("bias must be " + std::string(dtype_name(y.dtype())) + "[" + std::to_string(n) +
                              "], got " + bias.type_string());
    const std::vector<double> b = to_f64(bias);
    for (size_t i = 0; i < v.size(); ++i) v[i] += b[i % size_t(n)];
  }
  if (ctx.has_input(layout.z)) {
    const Tensor& z = ctx.input(layout.z);
    FERRY_TRY(check_same_dtype(y.dtype(), z.dtype(), "Z"));
    FERRY_TRY(check_residual_shape(z.shape(), y.shape()));
    const std::vector<double> zv = to_f64(z);
    ew::for_each_broadcast(dims, {z.dims()}, [&](int64_t i, const int64_t* off) { v[size_t(i)] += zv[size_t(off[0])]; });
  }
  if (act != Activation::kNone) {
    // Float attributes are f32 in ONNX; read them as the standalone ops do (ew::as_f32).
    const EpilogueAttrs e = epilogue_attrs(ctx.node());
    const double alpha = ew::as_f32(e.alpha), beta = ew::as_f32(e.beta);
    for (double& x : v) x = apply_activation(act, x, alpha, beta);
  }
  store_f64(v, y);
  ctx.output(0) = std::move(y);
  return Status::Ok();
}

}  // namespace

Status infer_FusedConv(InferContext& ctx) { return infer_fused(ctx, infer_Conv, kConvLayout); }
Status ref_FusedConv(KernelContext& ctx) { return ref_fused(ctx, ref_Conv, kConvLayout); }

Status infer_FusedConvTranspose(InferContext& ctx) { return infer_fused(ctx, infer_ConvTranspose, kConvLayout); }
Status ref_FusedConvTranspose(KernelContext& ctx) { return ref_fused(ctx, ref_ConvTranspose, kConvLayout); }

Status infer_FusedMatMul(InferContext& ctx) { return infer_fused(ctx, infer_MatMul, kMatMulLayout); }

Status infer_FusedMul(InferContext& ctx) {
  if (ctx.has_input(2)) return invalid_model("FusedMul takes no input 2 (its layout is A, B, -, Z)");
  return infer_fused(ctx, infer_Mul, kMulLayout);
}
Status ref_FusedMul(KernelContext& ctx) {
  if (ctx.has_input(2)) return invalid_argument("FusedMul takes no input 2 (its layout is A, B, -, Z)");
  return ref_fused(ctx, ref_Mul, kMulLayout);
}
Status ref_FusedMatMul(KernelContext& ctx) { return ref_fused(ctx, ref_MatMul, kMatMulLayout); }

}  // namespace ferry
