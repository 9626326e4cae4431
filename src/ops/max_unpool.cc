// ops/max_unpool.cc — MaxUnpool (ONNX opset 11): the partial inverse of MaxPool.
//
//   X [N, C, D1..Dr], I [N, C, D1..Dr] (int64), output_shape? [r + 2] -> Y
//
// Per spatial axis the unpooled size is (D - 1) * stride - (pad_begin +
// pad_end) + kernel; output_shape, when given, replaces it ("pads values
// are auto generated"). Y starts as zeros of that shape and Y.flat[I[e]] =
// X[e] for every element e (I holds MaxPool's flat indices; a later duplicate
// index wins). With output_shape the indices are flat indices into
// output_shape, as PyTorch's max_unpool (whose exports carry output_size
// there) and onnxruntime compute them. The ONNX reference and the node test
// test_maxunpool_export_with_output_shape instead scatter into the unpooled
// size and paste that into the top-left corner of output_shape; ferry
// follows the framework that writes these models (docs/conformance.md).
#include <cstring>

#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ferry {
namespace {

struct UnpoolGeometry {
  std::vector<int64_t> kernel, pads, strides;
};

Result<UnpoolGeometry> unpool_geometry(const NodeContext& ctx, int64_t spatial) {
  const MaxUnpoolAttrs& a = ctx.attrs<MaxUnpoolAttrs>();
  UnpoolGeometry g;
  g.kernel = a.kernel_shape;
  if (int64_t(g.kernel.size()) != spatial)
    return ctx.error("MaxUnpool kernel_shape has " + std::to_string(g.kernel.size()) + " entries for " +
                     std::to_string(spatial) + " spatial axes");
  g.pads = a.pads.value_or(std::vector<int64_t>(size_t(2 * spatial), 0));
  g.strides = a.strides.value_or(std::vector<int64_t>(size_t(spatial), 1));
  if (int64_t(g.pads.size()) != 2 * spatial) return ctx.error("MaxUnpool pads must have 2 entries per spatial axis");
  if (int64_t(g.strides.size()) != spatial) return ctx.error("MaxUnpool strides must have 1 entry per spatial axis");
  for (int64_t i = 0; i < spatial; ++i) {
    if (g.kernel[size_t(i)] < 1 || g.strides[size_t(i)] < 1)
      return ctx.error("MaxUnpool kernel_shape and strides must be >= 1");
    if (g.pads[size_t(i)] < 0 || g.pads[size_t(spatial + i)] < 0) return ctx.error("MaxUnpool pads must be >= 0");
  }
  return g;
}

/// The unpooled dim of spatial axis i for an input dim d (unknown in, unknown out).
Result<Dim> unpooled_dim(const NodeContext& ctx, const UnpoolGeometry& g, size_t i, const Dim& d) {
  if (!d.is_static()) return Dim();
  const size_t r = g.kernel.size();
  const int64_t v = (d.value() - 1) * g.strides[i] - (g.pads[i] + g.pads[r + i]) + g.kernel[i];
  if (v < 0) return ctx.error("MaxUnpool output dim " + std::to_string(i + 2) + " would be negative");
  return Dim(v);
}

Status unpool_check_types(const NodeContext& ctx, DType indices) {
  if (indices != DType::undefined && indices != DType::i64)
    return ctx.error(std::string("MaxUnpool indices must be int64, got ") + dtype_name(indices));
  return Status::Ok();
}

}  // namespace

Status infer_MaxUnpool(InferContext& ctx) {
  FERRY_TRY(unpool_check_types(ctx, ctx.input_dtype(1)));
  const Shape& x = ctx.input_shape(0);
  if (ctx.has_input(2)) {
    if (const Tensor* s = ctx.input_value(2)) {
      std::vector<Dim> dims;
      for (int64_t v : s->to_int_vector()) dims.push_back(Dim(v));
      ctx.set_output(0, ctx.input_dtype(0), Shape(dims));
    } else {
      ctx.set_output(0, ctx.input_dtype(0), x.rank_known() ? Shape(std::vector<Dim>(size_t(x.rank()))) : x);
    }
    return Status::Ok();
  }
  if (!x.rank_known()) {
    ctx.set_output(0, ctx.input_dtype(0), Shape::unknown_rank());
    return Status::Ok();
  }
  if (x.rank() < 3) return ctx.error("MaxUnpool X must be [N, C, D1...], got " + x.to_string());
  FERRY_ASSIGN_OR_RETURN(UnpoolGeometry g, unpool_geometry(ctx, x.rank() - 2));
  std::vector<Dim> dims = x.dims();
  for (size_t i = 0; i < g.kernel.size(); ++i) {
    FERRY_ASSIGN_OR_RETURN(dims[i + 2], unpooled_dim(ctx, g, i, x[i + 2]));
  }
  ctx.set_output(0, ctx.input_dtype(0), Shape(dims));
  return Status::Ok();
}

Status ref_MaxUnpool(KernelContext& ctx) {
  const Tensor &x = ctx.input(0), &idx = ctx.input(1);
  FERRY_TRY(unpool_check_types(ctx, idx.dtype()));
  if (x.rank() < 3) return ctx.error("MaxUnpool X must be [N, C, D1...], got " + x.type_string());
  if (idx.dims() != x.dims())
    return ctx.error("MaxUnpool indices " + idx.type_string() + " must have X's shape " + x.type_string());
  FERRY_ASSIGN_OR_RETURN(UnpoolGeometry g, unpool_geometry(ctx, x.rank() - 2));
  std::vector<int64_t> unpooled = x.dims();
  for (size_t i = 0; i < g.kernel.size(); ++i) {
    FERRY_ASSIGN_OR_RETURN(Dim d, unpooled_dim(ctx, g, i, Dim(x.dim(int64_t(i + 2)))));
    unpooled[i + 2] = d.value();
  }
  std::vector<int64_t> out = unpooled;
  if (ctx.has_input(2)) {
    out = ctx.input(2).to_int_vector();
    if (out.size() != unpooled.size())
      return ctx.error("MaxUnpool output_shape has " + std::to_string(out.size()) + " entries for a rank-" +
                       std::to_string(unpooled.size()) + " X");
    if (out[0] != unpooled[0] || out[1] != unpooled[1])
      return ctx.error("MaxUnpool output_shape " + ints_to_string(out) + " must keep X's batch and channels");
    for (size_t i = 2; i < out.size(); ++i)
      if (out[i] < 0) return ctx.error("MaxUnpool output_shape " + ints_to_string(out) + " has a negative dim");
  }
  FERRY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out));  // zeros
  const size_t esize = dtype_size(x.dtype());
  for (int64_t e = 0; e < x.numel(); ++e) {
    const int64_t at = idx.get_int(e);
    if (at < 0 || at >= y->numel())
      return ctx.error("MaxUnpool index " + std::to_string(at) + " at element " + std::to_string(e) +
                       " is outside the output of " + std::to_string(y->numel()) + " elements");
    std::memcpy(y->raw() + size_t(at) * esize, x.raw() + size_t(e) * esize, esize);
  }
  return Status::Ok();
}

}  // namespace ferry
